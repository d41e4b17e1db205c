"""A call's secret values shown as *** wherever its output is kept.

    hide_secrets("key is sk_live_51Hx9", ["sk_live_51Hx9"])   # "key is ***"

Masking comes before any cut: output is kept up to a cap, and a cut through a secret
would leave a piece of it that no later replacement recognises.
"""

from __future__ import annotations

from collections.abc import Iterable

from basedb.core.redact import REDACTED

MIN_HIDDEN_SECRET_CHARS = 4  # shorter values would blank out ordinary words


def hidden(secret_values: Iterable[str]) -> tuple[str, ...]:
    """The values worth hiding, longest first (so a value inside another goes too)."""
    return tuple(sorted((value for value in secret_values
                         if len(value) >= MIN_HIDDEN_SECRET_CHARS), key=len, reverse=True))


def hide_secrets(text: str, secret_values: Iterable[str]) -> str:
    """`text` with every secret value the call was given replaced by ***."""
    for value in hidden(secret_values):
        text = text.replace(value, REDACTED)
    return text


def longest_bytes(secret_values: Iterable[str]) -> int:
    """How many bytes of output a cut must keep beyond its cap so that a secret which
    starts before the cap is seen whole, masked, and only then cut."""
    return max((len(value.encode("utf-8")) for value in hidden(secret_values)), default=0)
