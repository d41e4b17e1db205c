"""Wording helpers for findings: close-match suggestions, bounded lists, short values."""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterable
from typing import Any


def close_matches(value: str, candidates: Iterable[str], *, n: int = 3,
                  cutoff: float = 0.6) -> list[str]:
    """The candidates most like `value`, best first; case differences count as close."""
    pool = sorted(set(candidates))
    folded = {c.casefold(): c for c in pool}
    exact_but_case = folded.get(value.casefold())
    found = difflib.get_close_matches(value, pool, n=n, cutoff=cutoff)
    if exact_but_case is not None and exact_but_case not in found:
        found = [exact_but_case, *found][:n]
    return found


def did_you_mean(value: str, candidates: Iterable[str]) -> str:
    """' Did you mean 'x'?' (with a leading space), or '' when nothing is close."""
    found = close_matches(value, candidates, n=1)
    return f" Did you mean {found[0]!r}?" if found else ""


def bounded_list(names: Iterable[str], *, limit: int = 30, keep_order: bool = False) -> str:
    """Names joined by commas (sorted unless `keep_order`); past `limit`, the first ones
    and '… and N more'."""
    ordered = list(names) if keep_order else sorted(names)
    if not ordered:
        return "none"
    shown = ", ".join(ordered[:limit])
    rest = len(ordered) - limit
    return f"{shown} … and {rest} more" if rest > 0 else shown


def show_json(value: Any, *, limit: int = 64) -> str:
    """A value as JSON for a message, cut to `limit` characters."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def clip(text: str, *, limit: int = 240) -> str:
    """Cut a message part (e.g. a library's error text quoting a large value)."""
    return text if len(text) <= limit else text[: limit - 1] + "…"
