"""`basedb check`."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from basedb.cli.common import JSON_MODE_KEY, workspace_option, workspace_root

if TYPE_CHECKING:
    from collections.abc import Iterable

    from basedb.check.result import CheckResult
    from basedb.core.errors import WorkspaceNotFound
    from basedb.protocol.findings import Finding
    from basedb.workspace.model import Workspace

# The formats of basedb.check.reporters, repeated so that --help needs no import.
FORMATS = ("text", "json", "github", "sarif")


@click.command("check")
@workspace_option
@click.option("--format", "fmt", type=click.Choice(FORMATS), default=None,
              help="Output format (default: text).")
@click.option("--json", "as_json", is_flag=True, help="Same as --format json.")
@click.option("--skip-ai-functions", is_flag=True,
              help="Leave AI Functions out of this run, as `deploy --skip-ai-functions` does.")
@click.option("--output", "-o", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write the report to a file instead of stdout (useful for SARIF).")
@click.option("--no-cache", is_flag=True,
              help="Analyse every main.sql afresh instead of reusing the results of unchanged "
                   "queries kept in .base-database-cli/cache/ (the findings are the same).")
@click.pass_context
def check_command(ctx: click.Context, workspace_dir: Path | None, fmt: str | None,
                  as_json: bool, skip_ai_functions: bool, output: Path | None,
                  no_cache: bool) -> None:
    """Validate the workspace: declarations, SQL, Mutations, FaaS schemas, agent-tools.json.

    Exit status: 0 when there are no errors (hints allowed), 1 with errors, 2 when there
    is no workspace or the usage is wrong.
    """
    if as_json and fmt not in (None, "json"):
        raise click.UsageError(f"--json conflicts with --format {fmt}; use one of them.")
    fmt = "json" if as_json else (fmt or "text")
    if fmt == "json":
        ctx.meta[JSON_MODE_KEY] = True
    from basedb.core.errors import WorkspaceNotFound

    try:
        root = workspace_root(workspace_dir)
    except WorkspaceNotFound as missing:
        start = workspace_dir if workspace_dir is not None else Path.cwd()
        _report_missing_workspace(ctx, missing, fmt, start, output)
        return

    from basedb.check.run import check_directory

    result = check_directory(root, skip_ai=skip_ai_functions, contracts=_stale_contracts,
                             cache=not no_cache)
    _write_report(result, fmt, root, output)
    if fmt in ("text", "sarif"):
        # JSON and GitHub reports carry the notices themselves; the others say them here.
        for notice in result.notices:
            click.echo(f"Notice: {notice}", err=True)
    ctx.exit(0 if result.ok else 1)


def _stale_contracts(ws: Workspace) -> Iterable[Finding]:
    # The contracts package (renderers for two languages) loads only for a workspace that
    # has generated files to compare, which most small checks do not.
    from basedb.contracts import stale_findings

    return stale_findings(ws)


def _write_report(result: CheckResult, fmt: str, root: Path, output: Path | None) -> None:
    from basedb.check.reporters import render
    from basedb.cli.common import use_colour

    color = output is None and fmt == "text" and use_colour(sys.stdout)
    text = render(result, fmt, root=root, color=color)
    if output is None:
        click.echo(text, nl=not text.endswith("\n"), color=color)
        return
    try:
        output.write_text(text, encoding="utf-8")
    except OSError as exc:
        from basedb.core.errors import InputError

        raise InputError(
            f"Cannot write the report to {output}: {exc.strerror or exc}.",
            code="OUTPUT_NOT_WRITABLE",
            hint="Pass --output a path in an existing, writable directory.",
        ) from None


def _report_missing_workspace(ctx: click.Context, missing: WorkspaceNotFound, fmt: str,
                              start: Path, output: Path | None) -> None:
    """Exit 2; structured formats still get a well-formed report naming the problem."""
    from basedb.cli.common import report_error
    from basedb.core.errors import WORKSPACE_OPTION_HINT

    missing = missing.with_context(hint=WORKSPACE_OPTION_HINT)  # check takes -C
    report_error(missing)  # the readable paragraph (or JSON envelope) on stderr
    if fmt != "text":
        from basedb.check.result import CheckResult
        from basedb.protocol.findings import Finding
        from basedb.workspace.config import CONFIG_FILE
        from basedb.workspace.model import FUNCTION_KINDS

        finding = Finding("WORKSPACE_NOT_FOUND", missing.message, CONFIG_FILE, "",
                          fix=missing.hint)
        result = CheckResult(errors=[finding], hints=[], tools=[], exclude=[],
                             counts={kind: 0 for kind in FUNCTION_KINDS})
        _write_report(result, fmt, start, output)
    ctx.exit(missing.exit_code)
