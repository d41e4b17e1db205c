"""GitHub Actions workflow commands: one annotation per error (`::error`) and hint (`::notice`).

Paths are relative to the repository checkout, so that annotations land on the pull
request's files even when the workspace lives in a subdirectory.
"""

from __future__ import annotations

from pathlib import Path

from basedb.check.reporters.locations import Positions, repository_path, repository_prefix
from basedb.check.result import CheckResult


def escape_data(text: str) -> str:
    """Escape a command's message, as the Actions runner decodes it."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """Escape a property value: like data, plus the `:` and `,` that delimit properties."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def command(name: str, message: str, **properties: str | int | None) -> str:
    props = ",".join(f"{key}={escape_property(str(value))}"
                     for key, value in properties.items() if value not in (None, ""))
    return f"::{name}{' ' + props if props else ''}::{escape_data(message)}"


def render(result: CheckResult, *, root: Path, color: bool = False) -> str:
    positions = Positions(root)
    prefix = repository_prefix(root)
    lines: list[str] = []
    for finding in result.errors:
        pos = positions.of(finding)
        message = finding.message + (f"\nFix: {finding.fix}" if finding.fix else "")
        lines.append(command(
            "error", message,
            file=repository_path(prefix, finding.file) if finding.file else None,
            line=pos[0] if pos else None, col=pos[1] if pos else None,
            title=finding.code))
    for hint in result.hints:
        pos = positions.of(hint)
        lines.append(command(
            "notice", hint.message,
            file=repository_path(prefix, hint.file) if hint.file else None,
            line=pos[0] if pos else None, col=pos[1] if pos else None,
            title=hint.code))
    lines.extend(command("notice", notice, title="basedb check") for notice in result.notices)
    errors, hints = len(result.errors), len(result.hints)
    functions = sum(result.counts.values())
    lines.append(f"basedb check: {errors} error{'s' * (errors != 1)}, "
                 f"{hints} hint{'s' * (hints != 1)} in {functions} "
                 f"function{'s' * (functions != 1)}")
    return "\n".join(lines) + "\n"
