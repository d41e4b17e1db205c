"""`basedb deploy`: a preview release, or `--production` to promote it."""

from __future__ import annotations

import gc
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from basedb.cli import common
from basedb.cli.common import (
    connection_options,
    emit_json,
    json_option,
    open_client,
    workspace_option,
    workspace_root,
)
from basedb.deploy.results import PreviewPlan, PreviewResult, ProductionPlan, ProductionResult

if TYPE_CHECKING:
    from basedb.deploy.stages import StageCallback, StageResult

DeployResult = PreviewPlan | PreviewResult | ProductionPlan | ProductionResult

HINTS_SHOWN = 20


@click.command("deploy")
@click.option("--skip-ai-functions", is_flag=True,
              help="Do not sync AI Functions this time (their agent-tools excludes are kept "
                   "only for AI Functions the site already has).")
@click.option("--dry-run", is_flag=True,
              help="Check and build site.zip, print the plan (stages, files, fingerprint) "
                   "and send nothing.")
@click.option("--production", is_flag=True,
              help="Promote the latest preview whose fingerprint equals the local files'.")
@click.option("--yes", "-y", is_flag=True, help="Confirm --production without a prompt.")
@json_option
@workspace_option
@connection_options
@click.pass_context
def deploy_command(ctx: click.Context, skip_ai_functions: bool, dry_run: bool,
                   production: bool, yes: bool, as_json: bool, workspace_dir: Path | None,
                   profile: str | None) -> None:
    """Deploy the workspace: check, build site.zip, upload the drafts and create a preview.

    \b
    basedb deploy                      preview release (prints its URL and hints)
    basedb deploy --dry-run            what would be sent; sends nothing
    basedb deploy --production --yes   promote the matching preview to production

    Without --yes on a terminal, --production names the preview it would promote and
    asks first.

    Exit status: 0 deployed, 1 check errors or a refusal (stale preview, platform error,
    or the promotion was declined), 2 bad usage, 3 auth, 4 network or server failure
    (the message says whether the failed stage took effect).
    """
    from basedb.core.errors import UsageError

    if production and skip_ai_functions:
        raise click.UsageError("--skip-ai-functions applies to previews; --production "
                               "promotes a preview as it was deployed.")
    if yes and not production:
        raise click.UsageError("--yes confirms --production; a preview needs no confirmation.")
    root = workspace_root(workspace_dir)
    ask = production and not yes and not dry_run
    if ask and not (common.stdin_is_tty() and common.stderr_is_tty()):
        raise UsageError("--production needs --yes: promoting to production changes what "
                         "every site member sees.", code="CONFIRMATION_REQUIRED",
                         hint="Run `basedb deploy --production --yes`.")

    progress = _progress_printer() if common.stderr_is_tty() else None
    # What a deploy builds (the modules it imports, the workspace and its inputs, the
    # embedded platform's answers) lives until the report is written and holds no garbage
    # cycles to speak of: the cyclic collector would only traverse it again and again (a
    # tenth of a large redeploy). As in `basedb check`, whose SQL analyses free their
    # own cycles as they go.
    collecting = gc.isenabled()
    gc.disable()
    try:
        result = _deploy(root, profile, skip_ai=skip_ai_functions, dry_run=dry_run,
                         production=production, ask=ask, progress=progress)
    finally:
        if collecting:
            gc.enable()
    _report(result, as_json)


def _deploy(root: Path, profile: str | None, *, skip_ai: bool, dry_run: bool,
            production: bool, ask: bool, progress: StageCallback | None) -> DeployResult:
    if dry_run and not production:
        from basedb.deploy.pipeline import plan_preview

        return plan_preview(root, skip_ai=skip_ai)
    from basedb.client.profiles import current_profile

    resolved, _ = current_profile(profile, root)
    with open_client(resolved) as client:
        if production:
            from basedb.deploy.production import deploy_production, plan_production

            if ask:
                _confirm_promotion(plan_production(root, client))
            result: DeployResult = (plan_production(root, client) if dry_run
                                    else deploy_production(root, client, on_stage=progress))
        else:
            from basedb.deploy.pipeline import deploy_preview

            result = deploy_preview(root, client, skip_ai=skip_ai, on_stage=progress)
    return result


def _confirm_promotion(plan: ProductionPlan) -> None:
    """Name what would be promoted, and ask (the plan found the preview, or refused)."""
    candidate = plan.candidate
    if candidate.is_prod:
        return  # promoting what production already serves changes nothing: no question
    common.confirm_or_stop(
        f"Promote preview {candidate.deployment_id} (fingerprint {plan.fingerprint[:12]}…, "
        f"built from these files) to production of {plan.app_token}? Every site member "
        "will see it.",
        f"Not promoted: production of {plan.app_token} is unchanged.")


def _progress_printer() -> StageCallback:
    from basedb.deploy.stages import STAGE_LABELS

    def show(result: StageResult) -> None:
        reason = result.detail.get("reason")
        suffix = f" ({reason})" if reason else ""
        click.echo(f"  {result.status:<8} {result.stage}: "
                   f"{STAGE_LABELS.get(result.stage, result.stage)}{suffix}", err=True)

    return show


def _report(result: DeployResult, as_json: bool) -> None:
    if as_json:
        emit_json(result.to_dict())
        return
    for line in render_text(result):
        click.echo(line)
    for notice in getattr(result, "notices", ()):
        click.echo(f"Notice: {notice}", err=True)


def render_text(result: DeployResult) -> list[str]:
    """The readable summary of a deploy result (or plan)."""
    if isinstance(result, (PreviewPlan, ProductionPlan)):
        return _render_plan(result)
    lines: list[str] = []
    production = isinstance(result, ProductionResult)
    if production:
        lines.append(f"Production now serves deployment {result.deployment_id}.")
    else:
        lines.append(f"Preview deployed: {result.deployment_id}")
    lines.append(f"  URL:          {result.base_app_url}")
    lines.append(f"  Fingerprint:  {result.fingerprint}")
    if isinstance(result, PreviewResult):
        ai_sync = result.ai_sync
        if ai_sync.synced:
            lines.append(f"  AI Functions: synced ({', '.join(ai_sync.keys or ())})")
        else:
            lines.append(f"  AI Functions: not synced ({ai_sync.reason})")
        excluded = ", ".join(result.agent_tools.exclude) or "none"
        lines.append(f"  Hidden from external agents: {excluded}")
        lines.extend(_hint_lines(result.function_hints))
    lines.append("Next:")
    if production:
        lines.append(f"  {result.installation.command}   # give local AI agents this site's "
                     "functions")
    else:
        lines.append("  basedb deploy --production --yes   # promote this preview")
    lines.append("  basedb serve   # then open the URL (sign in with `basedb auth token`)")
    members = result.members if isinstance(result, ProductionResult) else None
    if members is not None:
        lines.append("Message for site members (forward it as it is):")
        lines.extend(f"  | {line}" for line in members.message.splitlines())
    return lines


def _hint_lines(hints: Sequence[Mapping[str, Any]]) -> list[str]:
    if not hints:
        return []
    lines = [f"Function hints ({len(hints)}; they do not block deploys):"]
    for hint in hints[:HINTS_SHOWN]:
        param = f" param {hint['param']}" if hint.get("param") else ""
        lines.append(f"  - {hint.get('functionId')}{param} [{hint.get('code')}]: "
                     f"{hint.get('message')}")
    if len(hints) > HINTS_SHOWN:
        lines.append(f"  … and {len(hints) - HINTS_SHOWN} more (--json lists all)")
    return lines


def _render_plan(plan: PreviewPlan | ProductionPlan) -> list[str]:
    zipped = f" ({plan.bytes:,} bytes zipped)" if isinstance(plan, PreviewPlan) else ""
    lines = [f"Dry run ({plan.env}): nothing was sent.",
             f"  Site:         {plan.app_token}",
             f"  Fingerprint:  {plan.fingerprint}",
             f"  Files:        {plan.files}{zipped}"]
    if isinstance(plan, ProductionPlan):
        state = " (already production)" if plan.candidate.is_prod else ""
        lines.append(f"  Would promote: {plan.candidate.deployment_id}{state}")
    lines.append("Stages:")
    for stage in plan.to_dict()["stages"]:
        request = f"  {stage['request']}" if stage.get("request") else ""
        reason = f" ({stage['reason']})" if stage.get("reason") else ""
        lines.append(f"  {stage['status']:<8} {stage['stage']}{reason}{request}")
    if isinstance(plan, PreviewPlan):
        lines.extend(_hint_lines(plan.function_hints))  # what deploying would report
    return lines
