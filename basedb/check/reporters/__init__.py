"""Reporters: one `CheckResult`, rendered as text, json, github or sarif.

Each format lives in its own module with the same `render(result, *, root, color)`; this
package picks one by name and imports it only when asked.
"""

from __future__ import annotations

import importlib
from pathlib import Path

from basedb.check.result import CheckResult

FORMATS: tuple[str, ...] = ("text", "json", "github", "sarif")


def render(result: CheckResult, fmt: str, *, root: Path, color: bool = False) -> str:
    """The report of `result` in format `fmt`; `root` is the workspace directory.

    `color` adds ANSI styles to the text format and is ignored by the others.
    """
    if fmt not in FORMATS:
        raise ValueError(f"unknown report format {fmt!r}; expected one of {', '.join(FORMATS)}")
    module = importlib.import_module(f"{__name__}.{fmt}")
    text: str = module.render(result, root=Path(root), color=color)
    return text
