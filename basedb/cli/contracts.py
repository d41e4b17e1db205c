"""`basedb contracts generate`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from basedb.cli.common import echo_err, emit_json, json_option, workspace_option
from basedb.cli.groups import HelpfulGroup

LANG_CHOICES = ("ts", "python")
# Load problems that mean a declaration is broken (config, catalog and agent-tools problems
# do not change the contracts).
_DECLARATION_CODES = frozenset({"DECLARATION_INVALID", "FUNCTION_ID_INVALID",
                                "FUNCTION_ID_DUPLICATE"})


@click.group("contracts", cls=HelpfulGroup)
def contracts_group() -> None:
    """Generate typed contracts from the function declarations."""


@contracts_group.command("generate")
@workspace_option
@click.option("--lang", type=click.Choice(LANG_CHOICES), default=None,
              help="Language to generate: ts (src/generated/function-inputs.ts) or python "
                   "(src/generated/function_inputs.py). Default: ts, plus every other "
                   "language whose file already exists.")
@click.option("--check", "check_only", is_flag=True,
              help="Write nothing; print a diff and exit 1 when a file is stale or missing. "
                   "Without --lang, checks the generated files that exist (ts if none).")
@json_option
@click.pass_context
def generate_command(ctx: click.Context, workspace_dir: Path | None, lang: str | None,
                     check_only: bool, as_json: bool) -> None:
    """Write the typed inputs of the site's functions for Page code.

    TypeScript by default: DatabaseFunctionParameterOptions, MutationParameterOptions,
    DatabaseFunctionInputMap (SQL and FaaS) and MutationInputMap. The output is
    byte-identical for the same declarations. Declarations with errors that make their
    input type unknowable are left out (and named on stderr); run `basedb check` for the
    full report.

    Exit status: 0 when written or up to date, 1 with --check when a file is stale or
    missing, 2 when there is no workspace or a file is in the way.
    """
    from basedb import contracts
    from basedb.workspace import find_root, load_workspace

    ws = load_workspace(find_root(workspace_dir))
    if lang is not None:
        langs = [lang]
    elif check_only:
        langs = contracts.existing_langs(ws) or ["ts"]
    else:
        langs = ["ts", *(x for x in contracts.existing_langs(ws) if x != "ts")]

    statuses: list[contracts.FileStatus] = []
    skipped: tuple[contracts.SkippedDeclaration, ...] = ()
    for current in langs:
        generated = contracts.generate(ws, lang=current)
        skipped = generated.skipped
        if check_only:
            statuses.append(contracts.compare(ws, current, generated=generated))
        else:
            statuses.append(contracts.write(ws, current, generated=generated))

    _warn_about_errors(ws, skipped)
    if as_json:
        emit_json(_json_report(statuses, skipped))
    else:
        _print_report(statuses)
    failed = check_only and any(s.status in ("stale", "missing") for s in statuses)
    ctx.exit(1 if failed else 0)


def _json_report(statuses: list[Any], skipped: tuple[Any, ...]) -> dict[str, Any]:
    files = []
    for s in statuses:
        entry: dict[str, Any] = {"path": s.path, "status": s.status}
        if s.diff:
            entry["diff"] = s.diff
        files.append(entry)
    return {"files": files, "skipped": [
        {"functionId": s.function_id, "file": s.file, "reason": s.reason} for s in skipped]}


def _print_report(statuses: list[Any]) -> None:
    for s in statuses:
        if s.status == "stale":
            click.echo(s.diff, nl=not s.diff.endswith("\n"))
            echo_err(f"{s.path} is stale: it does not match the declarations. "
                     "Run `basedb contracts generate` to update it.")
        elif s.status == "missing":
            echo_err(f"{s.path} does not exist. Run `basedb contracts generate` to create it.")
        elif s.status == "unchanged":
            click.echo(f"unchanged {s.path} (up to date)")
        else:
            click.echo(f"written   {s.path}")


def _warn_about_errors(ws: Any, skipped: tuple[Any, ...]) -> None:
    """Say on stderr which declarations the contracts had to leave out, and why."""
    left_out: dict[str, str] = {s.function_id: s.reason for s in skipped}
    others = 0
    for finding in ws.load_findings:
        if finding.code not in _DECLARATION_CODES or finding.file.startswith("ai/"):
            continue
        if finding.function_id and finding.function_id not in ws.declarations:
            left_out.setdefault(finding.function_id, finding.message)
        else:
            others += 1
    if not left_out and not others:
        return
    echo_err("Warning: the workspace has blocking declaration errors (run `basedb check` "
             "for details); the contracts were generated from the valid declarations.")
    for function_id in sorted(left_out):
        echo_err(f"  left out {function_id}: {left_out[function_id]}")
