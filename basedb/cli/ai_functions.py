"""`basedb ai-functions list|get|sync|invoke`: the site's AI Functions.

`list` and `get` read the site's AI Function draft (what the next deploy ships);
`sync` overwrites that draft with `ai/` at once, deleting the remote keys `ai/` lacks
(upstream's rule; `--dry-run` previews it); `invoke` calls a deployed AI Function
(preview by default).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from basedb.cli.common import (
    app_token_option,
    connect_to,
    connection_options,
    emit_json,
    json_option,
    site_of,
    workspace_option,
    workspace_root,
)
from basedb.cli.groups import HelpfulGroup


@click.group("ai-functions", cls=HelpfulGroup)
def ai_functions_group() -> None:
    """List, show, sync and invoke the site's AI Functions."""


def _remote(api: Any) -> list[dict[str, Any]]:
    from basedb.deploy.pipeline import ai_call

    data = ai_call(api.draft_ai_functions)
    items = data.get("aiFunctions")
    return sorted((i for i in items if isinstance(i, dict) and isinstance(i.get("key"), str)),
                  key=lambda i: str(i["key"])) if isinstance(items, list) else []


@ai_functions_group.command("list")
@app_token_option
@json_option
@workspace_option
@connection_options
def list_command(app_token: str | None, as_json: bool, workspace_dir: Path | None,
                 profile: str | None) -> None:
    """The site's AI Functions (its draft: what the next deploy ships)."""
    from basedb.client.sites import SiteApi

    token, root = site_of(workspace_dir, app_token)
    with connect_to(profile, root) as client:
        found = _remote(SiteApi(client, token))
    if as_json:
        emit_json({"appToken": token, "aiFunctions": found, "total": len(found)})
        return
    if not found:
        click.echo(f"Site {token} has no AI Functions (`basedb ai-functions sync` sends "
                   "ai/).", err=True)
        return
    width = max(len(str(i["key"])) for i in found)
    for item in found:
        declaration = item.get("declaration") or {}
        capability = declaration.get("capability", "") if isinstance(declaration, dict) else ""
        name = declaration.get("name", "") if isinstance(declaration, dict) else ""
        click.echo(f"{str(item['key']).ljust(width)}  {capability:<6}  {name}".rstrip())


@ai_functions_group.command("get")
@click.argument("key")
@app_token_option
@json_option
@workspace_option
@connection_options
def get_command(key: str, app_token: str | None, as_json: bool, workspace_dir: Path | None,
                profile: str | None) -> None:
    """One AI Function of the site's draft: its declaration (function.json)."""
    from basedb.client.sites import SiteApi
    from basedb.core.errors import ConflictError

    token, root = site_of(workspace_dir, app_token)
    with connect_to(profile, root) as client:
        found = _remote(SiteApi(client, token))
    item = next((i for i in found if i["key"] == key), None)
    if item is None:
        keys = ", ".join(str(i["key"]) for i in found) or "none"
        raise ConflictError(f"Site {token} has no AI Function {key!r} (it has: {keys}).",
                            code="AI_FUNCTION_NOT_FOUND",
                            hint="Run `basedb ai-functions list`; `basedb ai-functions sync` "
                                 "sends the AI Functions of ai/.")
    if as_json:
        emit_json({"appToken": token, "key": key, "declaration": item.get("declaration")})
        return
    click.echo(json.dumps(item.get("declaration"), ensure_ascii=False, indent=2))


@ai_functions_group.command("sync")
@click.option("--dry-run", is_flag=True,
              help="Print what would be added, updated and deleted; send nothing.")
@click.option("--yes", "-y", is_flag=True, hidden=True,
              help="Accepted for scripts written for earlier versions; sync never asks.")
@json_option
@workspace_option
@connection_options
def sync_command(dry_run: bool, yes: bool, as_json: bool, workspace_dir: Path | None,
                 profile: str | None) -> None:
    """Overwrite the site's AI Functions with exactly those of ai/, at once.

    A full overwrite, as upstream: a remote AI Function that ai/ lacks is deleted without
    asking, and syncing an empty ai/ deletes them all; the keys deleted are printed.
    --dry-run shows what a sync would do first. `basedb deploy` never deletes them: it
    refuses instead. The next deploy ships the synced set to preview.
    """
    from basedb.client.sites import SiteApi
    from basedb.core.wording import plural
    from basedb.deploy.ai_functions import apply_sync, plan_sync
    from basedb.deploy.pipeline import ai_call

    root = workspace_root(workspace_dir)
    with connect_to(profile, root) as client:
        plan, api = ai_call(lambda: plan_sync(root, lambda token: SiteApi(client, token)))
        result = plan.to_dict() if dry_run else ai_call(lambda: apply_sync(plan, api))
    if as_json:
        emit_json({**result, "dryRun": dry_run})
        return
    if dry_run:
        click.echo(f"Dry run: a sync would leave site {plan.app_token}'s draft with "
                   f"{plural(len(plan.local), 'AI Function')}; nothing was sent.")
    else:
        click.echo(f"Synced {plural(len(plan.local), 'AI Function')} to site "
                   f"{plan.app_token}'s draft.")
    would = "would be " if dry_run else ""
    for label, keys in (("added", plan.added), ("updated", plan.updated)):
        if keys:
            click.echo(f"  {would}{label}: {', '.join(keys)}")
    if plan.deleted:
        click.echo(f"  {would}deleted (ai/ lacks them): {', '.join(plan.deleted)}")
    if not dry_run:
        click.echo("They reach preview with the next `basedb deploy`.")


@ai_functions_group.command("invoke")
@click.argument("key")
@click.option("--params", "params_text", default="{}", show_default=True,
              help="The call's params as a JSON object, or @FILE.")
@click.option("--env", type=click.Choice(["preview", "prod"]), default="preview",
              show_default=True, help="Which release to call.")
@app_token_option
@workspace_option
@connection_options
def invoke_command(key: str, params_text: str, env: str, app_token: str | None,
                   workspace_dir: Path | None, profile: str | None) -> None:
    """Call the AI Function KEY of the site's preview (or prod) and print its data as JSON.

    On failure the error ends with a LogID: `basedb logs LOGID` shows the details.
    """
    from basedb.client import endpoints

    token, root = site_of(workspace_dir, app_token)
    params = _params(params_text)
    with connect_to(profile, root) as client:
        envelope = client.request("POST", endpoints.invoke(token, key),
                                  params={"env": env},
                                  json={"params": params})
    data = envelope.get("data")
    emit_json(data)


def _params(text: str) -> dict[str, Any]:
    from basedb.core.errors import InputError

    label = "--params"
    if text.startswith("@"):
        path = Path(text[1:])
        label = f"--params {text}"
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise InputError(f"{label}: cannot read {path}: {exc.strerror}.",
                             code="INPUT_INVALID", hint="Pass a readable JSON file.") from None
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise InputError(f"{label} is not JSON: {exc}.", code="INPUT_INVALID",
                         hint='Pass an object, e.g. --params \'{"text": "hello"}\'.') from None
    if not isinstance(value, dict):
        raise InputError(f"{label} must be a JSON object, not {type(value).__name__}.",
                         code="INPUT_INVALID",
                         hint='Pass an object, e.g. --params \'{"text": "hello"}\'.')
    return value
