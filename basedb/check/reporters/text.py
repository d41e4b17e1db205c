"""The human report: one line per finding, `path:line:col: CODE message`, as compilers and
ruff print them (terminals and editors turn that into a link), then a summary.

    base-database.jsonc:4:15: WORKSPACE_CONFIG_INVALID /timezone 'Mars/Olympus' is not …
      fix: Use a zone such as "UTC".
    database-functions/listTasks/function.json:3:18: function_description_short The …

    Agent tools: 5 open, 2 excluded (checkTaskQuota, debugTaskStats)
    1 error, 1 hint in 7 functions

Errors (UPPER_CASE codes) come first, by file and position; hints (lower_case codes)
follow, by function. A finding about a directory or the whole workspace is anchored to a
file in it (see `locations.Anchor`).
"""

from __future__ import annotations

from pathlib import Path

from basedb.check.reporters.locations import Anchor, Positions
from basedb.check.result import CheckResult
from basedb.protocol.findings import Finding, Hint

# ANSI styles; the core does not import click, and these are all the report needs.
_BOLD, _DIM, _RED, _GREEN, _YELLOW, _CYAN = "1", "2", "31", "32", "33", "36"
_EXCLUDED_SHOWN = 6
_INDENT = "  "


class _Painter:
    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    def __call__(self, text: str, *styles: str) -> str:
        if not self.enabled or not text:
            return text
        return f"\x1b[{';'.join(styles)}m{text}\x1b[0m"


def render(result: CheckResult, *, root: Path, color: bool = False) -> str:
    paint = _Painter(color)
    positions = Positions(root)
    blocks: list[str] = []
    if result.errors:
        blocks.append("\n".join(finding_lines(result.errors, positions, paint)))
    if result.hints:
        blocks.append("\n".join(finding_lines(result.hints, positions, paint)))
    blocks.append("\n".join(_footer(result, paint)))
    return "\n\n".join(blocks) + "\n"


def finding_lines(items: list[Finding] | list[Hint], positions: Positions,
                  paint: _Painter | None = None) -> list[str]:
    """`path:line:col: CODE message` for each item (its fix on the next line), errors in
    file and position order, hints in the order given."""
    paint = paint or _Painter(False)
    anchored = [(positions.anchor(item), item) for item in items]
    if all(isinstance(item, Finding) for _, item in anchored):
        anchored.sort(key=lambda pair: (pair[0].file, pair[0].line, pair[0].column))
    lines: list[str] = []
    for anchor, item in anchored:
        lines.append(finding_line(item, anchor, paint))
        if isinstance(item, Finding) and item.fix:
            lines.append(_INDENT + paint("fix:", _GREEN) + " " + _continue(item.fix))
    return lines


def _footer(result: CheckResult, paint: _Painter) -> list[str]:
    lines = []
    if result.tools or result.exclude:
        excluded = ""
        if result.exclude:
            names = ", ".join(result.exclude[:_EXCLUDED_SHOWN])
            more = len(result.exclude) - _EXCLUDED_SHOWN
            excluded = f" ({names}{f', and {more} more' if more > 0 else ''})"
        lines.append(f"Agent tools: {len(result.tools)} open, "
                     f"{len(result.exclude)} excluded{excluded}")
    functions = _plural(sum(result.counts.values()), "function")
    errors, hints = len(result.errors), len(result.hints)
    if errors:
        summary = paint(f"{_plural(errors, 'error')}, {_plural(hints, 'hint')} in {functions}",
                        _BOLD, _RED)
    elif hints:
        summary = paint(f"No errors, {_plural(hints, 'hint')} in {functions}", _BOLD, _YELLOW)
    else:
        summary = paint(f"No problems found in {functions}", _BOLD, _GREEN)
    lines.append(summary)
    return lines


def finding_line(item: Finding | Hint, anchor: Anchor, paint: _Painter | None = None) -> str:
    """`path:line:col: CODE message`: one finding, as terminals and editors link it."""
    paint = paint or _Painter(False)
    is_error = isinstance(item, Finding)
    code = paint(item.code, _BOLD, _RED) if is_error else paint(item.code, _CYAN)
    return f"{paint(str(anchor), _BOLD)}: {code} {_continue(item.message)}"


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" + ("" if count == 1 else "s")


def _continue(text: str) -> str:
    """Indent the continuation lines of a multi-line message."""
    return text.replace("\n", "\n" + _INDENT)
