"""The human report: errors grouped by file, then hints grouped by function, then a summary.

    database-functions/listTasks/function.json
      12:20  ENUM_OUT_OF_DOMAIN  Enum value 'Archived' of parameter 'status' is not …
             fix: Use only option names of the bound field …

    Hints
      listTasks  database-functions/listTasks/
        function.json:5:9  param_description_short  …

    Agent tools: 5 open, 2 excluded (checkTaskQuota, debugTaskStats)
    1 error, 1 hint in 7 functions
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path, PurePosixPath

from basedb.check.reporters.locations import Position, Positions, format_position
from basedb.check.result import CheckResult
from basedb.core.findings import Finding, Hint

# ANSI styles; the core does not import click, and these are all the report needs.
_BOLD, _DIM, _RED, _GREEN, _YELLOW, _CYAN = "1", "2", "31", "32", "33", "36"
_EXCLUDED_SHOWN = 6


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
    for file, entries in _errors_by_file(result.errors, positions):
        blocks.append(_file_block(file, entries, paint))
    if result.hints:
        blocks.append(_hints_block(result.hints, positions, paint))
    blocks.append("\n".join(_footer(result, paint)))
    return "\n\n".join(blocks) + "\n"


def _errors_by_file(errors: Sequence[Finding], positions: Positions,
                    ) -> list[tuple[str, list[tuple[Position | None, Finding]]]]:
    """Files in the result's order; within a file, findings from top to bottom."""
    groups: dict[str, list[tuple[Position | None, Finding]]] = {}
    for finding in errors:
        groups.setdefault(finding.file, []).append((positions.of(finding), finding))
    for entries in groups.values():
        # Findings about the whole file (no position) come first; sort is stable.
        entries.sort(key=lambda e: (0, 0, 0) if e[0] is None else (1, e[0][0], e[0][1] or 0))
    return list(groups.items())


def _file_block(file: str, entries: list[tuple[Position | None, Finding]],
                paint: _Painter) -> str:
    rows = [(format_position(pos) or "-", f.code, f.message, f.fix) for pos, f in entries]
    loc_width = max(len(r[0]) for r in rows)
    code_width = max(len(r[1]) for r in rows)
    lines = [paint(file or "(workspace)", _BOLD)]
    for loc, code, message, fix in rows:
        lead = "  " + paint(loc.rjust(loc_width), _DIM) + "  "
        indent = " " * (2 + loc_width + 2)
        lines.append(lead + paint(code.ljust(code_width), _BOLD, _RED) + "  "
                     + _continue(message, indent + " " * (code_width + 2)))
        if fix:
            lines.append(indent + paint("fix:", _GREEN) + " " + _continue(fix, indent + "     "))
    return "\n".join(lines)


def _hints_block(hints: Sequence[Hint], positions: Positions, paint: _Painter) -> str:
    by_function: dict[str, list[Hint]] = {}
    for hint in hints:
        by_function.setdefault(hint.function_id, []).append(hint)
    lines = [paint("Hints", _BOLD, _CYAN)]
    for function_id, group in by_function.items():
        folder = _folder(group[0].file)
        lines.append("  " + paint(function_id, _BOLD) + (f"  {paint(folder, _DIM)}"
                                                         if folder else ""))
        rows = []
        for hint in group:
            where = _relative_to(hint.file, folder)
            pos = format_position(positions.of(hint))
            rows.append((f"{where}:{pos}" if where and pos else where or pos or "-",
                         hint.code, hint.message))
        loc_width = max(len(r[0]) for r in rows)
        code_width = max(len(r[1]) for r in rows)
        indent = " " * (4 + loc_width + 2 + code_width + 2)
        for loc, code, message in rows:
            lines.append("    " + paint(loc.ljust(loc_width), _DIM) + "  "
                         + paint(code.ljust(code_width), _CYAN) + "  "
                         + _continue(message, indent))
    return "\n".join(lines)


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


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" + ("" if count == 1 else "s")


def _folder(file: str) -> str:
    parent = PurePosixPath(file).parent.as_posix() if file else ""
    return "" if parent in ("", ".") else parent + "/"


def _relative_to(file: str, folder: str) -> str:
    return file[len(folder):] if folder and file.startswith(folder) else file


def _continue(text: str, indent: str) -> str:
    """Indent the continuation lines of a multi-line message under its first line."""
    return text.replace("\n", "\n" + indent)
