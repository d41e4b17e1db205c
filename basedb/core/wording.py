"""Small helpers for the wording of messages."""

from __future__ import annotations


def plural(count: int, noun: str, many: str | None = None) -> str:
    """`count` and the noun in the right number: `1 table`, `2 tables`, `0 entries`.

    Messages never write `table(s)`: the count is known, so the word can agree with it.
    """
    return f"{count} {noun if count == 1 else many or noun + 's'}"
