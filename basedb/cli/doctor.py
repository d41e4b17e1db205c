"""`basedb doctor`."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from basedb.cli import common
from basedb.cli.common import (
    connection_options,
    emit_json,
    json_option,
    open_client,
    workspace_option,
)

if TYPE_CHECKING:
    from basedb.deploy.doctor import Check, DoctorReport

_MARKS = {"ok": "ok  ", "warn": "warn", "fail": "FAIL"}
_STYLES = {"ok": ("green", False), "warn": ("yellow", False), "fail": ("red", True)}


def check_faas_sandbox() -> Check:
    """What the local platform's FaaS sandbox enforces on this machine."""
    import sys

    from basedb.deploy.doctor import Check
    from basedb.platform.domain.runtimes.faas import FaasLimits
    from basedb.platform.domain.runtimes.faas.sandbox import Sandbox

    sandbox = Sandbox.detect(FaasLimits.from_env())
    detail = sandbox.describe().removeprefix("basedb faas: ")
    if sandbox.isolated:
        return Check("faas sandbox", "ok", detail)
    if sandbox.kind == "none":
        return Check("faas sandbox", "warn", detail, "See the node check.")
    fix = ("apt-get install bubblewrap (or your distribution's bubblewrap package), and "
           "allow unprivileged user namespaces" if sys.platform == "linux" else
           "Run the platform on Linux with bubblewrap when handlers are not your own code.")
    return Check("faas sandbox", "warn", detail, fix)


@click.command("doctor")
@json_option
@workspace_option
@connection_options
@click.pass_context
def doctor_command(ctx: click.Context, as_json: bool, workspace_dir: Path | None,
                   profile: str | None) -> None:
    """Diagnose the installation, profile, login, workspace and catalog freshness.

    Checks Python, basedb, sqlglotc, Node.js (for FaaS), which profile applies and
    whether its token works (GET /users/me), the workspace, and catalog.json against the
    live catalog. Exit status: 0 when no check failed (warnings allowed), 1 otherwise.
    """
    from basedb.deploy.doctor import run_doctor

    if workspace_dir is not None and not workspace_dir.is_dir():
        raise click.BadParameter(f"{workspace_dir} is not a directory.",
                                 param_hint="'-C' / '--workspace'")
    result = run_doctor(profile, workspace_dir, open_client=open_client,
                        machine_checks=(check_faas_sandbox,))
    if as_json:
        emit_json(result.to_dict())
    else:
        colour = common.use_colour(sys.stdout)
        for line in doctor_lines(result):
            click.echo(line, color=colour)
    ctx.exit(0 if result.ok else 1)


def doctor_lines(result: DoctorReport) -> list[str]:
    """One line per check, its fix below it, and a summary; styled (click strips the
    styles where colour is off)."""
    lines = []
    for check in result.checks:
        colour, bold = _STYLES[check.status]
        mark = click.style(f"[{_MARKS[check.status]}]", fg=colour, bold=bold)
        lines.append(f"{mark} {click.style(check.name, bold=True)}: {check.detail}")
        if check.fix and check.status != "ok":
            lines.append(f"       {click.style('fix:', fg='green')} {check.fix}")
    warnings = result.warnings
    if not result.ok:
        lines.append(click.style("Some checks failed; apply the fixes above and run "
                                 "`basedb doctor` again.", fg="red", bold=True))
    elif warnings:
        said = "1 warning above says" if warnings == 1 else f"{warnings} warnings above say"
        lines.append(click.style(f"No check failed; {said} what would work better.",
                                 fg="yellow", bold=True))
    else:
        lines.append(click.style("All checks passed.", fg="green", bold=True))
    return lines
