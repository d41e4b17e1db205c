"""`basedb api METHOD PATH` and `basedb lark-cli -- ARGS…`.

`api` follows lark-cli's conventions: the raw envelope on stdout on success; on failure
lark-cli's error envelope on stderr and the exit code of the error class.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from basedb.cli.common import (
    JSON_MODE_KEY,
    emit_json,
    open_client,
    profile_option,
    workspace_option,
)
from basedb.client.api import DEFAULT_PAGE_LIMIT


@click.command("api")
@click.argument("method")
@click.argument("path")
@click.option("--params", metavar="JSON", default=None,
              help="Query parameters as a JSON object, e.g. '{\"env\":\"prod\"}'.")
@click.option("--data", metavar="JSON|@FILE|-", default=None,
              help="Request body: inline JSON, @file to read a UTF-8 file, - for stdin.")
@click.option("--as", "identity", type=click.Choice(["user", "bot", "auto"]), default="auto",
              show_default=True,
              help="Identity to call as (lark-cli compatible; a basedb profile has one token, "
                   "so every choice sends it).")
@click.option("--page-all", is_flag=True, help="Follow pages and print one merged envelope.")
@click.option("--page-limit", type=click.IntRange(min=0), default=DEFAULT_PAGE_LIMIT,
              show_default=True, help="Most pages --page-all fetches (0: up to 1000).")
@click.option("--dry-run", is_flag=True,
              help="Print the request that would be sent (token redacted) and send nothing.")
@click.option("--json", "as_json", is_flag=True, hidden=True,
              help="Accepted for lark-cli compatibility; output is always JSON.")
@profile_option
@workspace_option
@click.pass_context
def api_command(ctx: click.Context, method: str, path: str, params: str | None,
                data: str | None, identity: str, page_all: bool, page_limit: int,
                dry_run: bool, as_json: bool, profile: str | None,
                workspace_dir: Path | None) -> None:
    """Call any Open API endpoint, as `lark-cli api` does.

    PATH may omit the /open-apis/base/v3 prefix. In a workspace, {app} in PATH is its
    appToken and {base} its bound Base (base-database.jsonc), as `gh api` fills {owner}.
    Examples:

    \b
      basedb api GET /sites/{app}/functions --params '{"env":"prod"}'
      basedb api POST /sites/{app}/functions/FN/invoke --data @body.json
      basedb api GET /bases/{base}/tables/T/records --page-all

    Exit status: 0 ok, 1 API error, 2 bad usage or input, 3 auth, 4 network or server.
    """
    ctx.meta[JSON_MODE_KEY] = True  # errors as lark-cli envelopes, like lark-cli api
    from basedb.cli.placeholders import expand_path
    from basedb.client.api import build_call, describe_call, execute_call, more_pages_remain

    path = expand_path(path, workspace_dir)
    call = build_call(method, path, params=params, data=data,
                      stdin=sys.stdin.buffer, page_all=page_all,
                      page_limit=page_limit)
    from basedb.client.profiles import current_profile

    resolved, _ = current_profile(profile, workspace_dir)
    if dry_run:
        emit_json(describe_call(call, resolved))
        return

    with open_client(resolved) as client:
        envelope = execute_call(call, client)
    emit_json(envelope)
    if page_all and more_pages_remain(envelope):
        click.echo("Notice: more pages remain after the page limit; the merged result is "
                   "partial. Raise --page-limit (0 fetches up to 1000 pages).", err=True)


@click.command("lark-cli", context_settings={"ignore_unknown_options": True,
                                             "allow_interspersed_args": False})
@profile_option
@workspace_option
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
@click.pass_context
def lark_cli_command(ctx: click.Context, profile: str | None, workspace_dir: Path | None,
                     args: tuple[str, ...]) -> None:
    """Run lark-cli with the workspace's profile: `basedb lark-cli -- api GET PATH …`.

    When a `lark-cli` executable is on PATH it runs with LARKSUITE_CLI_PROFILE and
    BASEDB_PROFILE set to the profile. Without one, and whenever the profile is the
    embedded local platform (which lark-cli cannot reach), `api …` runs as `basedb api`.
    """
    import shutil

    from basedb.core.errors import UsageError

    if not args:
        raise UsageError("Nothing to run: pass lark-cli arguments after --.",
                         code="ARGS_MISSING",
                         hint="For example: basedb lark-cli -- api GET /sites/APP/catalog")
    from basedb.client.profiles import current_profile

    resolved, _ = current_profile(profile, workspace_dir)
    executable = shutil.which("lark-cli")
    if args[0] != "api" or (executable is not None and not resolved.embedded):
        if executable is None:
            raise UsageError(
                f"lark-cli is not installed (no `lark-cli` on PATH), so `{args[0]}` cannot run.",
                code="LARK_CLI_NOT_FOUND",
                hint="basedb stands in only for `lark-cli api …` (e.g. `basedb lark-cli -- api "
                     "GET /sites/APP/catalog`). Install lark-cli and put it on PATH for "
                     "other commands.")
        _run_lark_cli(ctx, executable, list(args), None if resolved.embedded else resolved.name)
        return
    # `api …` with no lark-cli, or against the embedded platform lark-cli cannot reach.
    rest = list(args[1:])
    if profile and "--profile" not in rest:
        rest += ["--profile", profile]
    if workspace_dir is not None and not {"-C", "--workspace"} & set(rest):
        rest += ["-C", str(workspace_dir)]
    with api_command.make_context("basedb lark-cli -- api", rest, parent=ctx) as sub_ctx:
        api_command.invoke(sub_ctx)


def _run_lark_cli(ctx: click.Context, executable: str, args: list[str],
                  profile_name: str | None) -> None:
    import os
    import subprocess

    env = dict(os.environ)
    if profile_name is not None:
        env["LARKSUITE_CLI_PROFILE"] = profile_name
        env["BASEDB_PROFILE"] = profile_name
    try:
        completed = subprocess.run([executable, *args], env=env, check=False)
    except OSError as exc:
        from basedb.core.errors import UsageError

        raise UsageError(f"Could not run {executable}: {exc.strerror or exc}.",
                         code="LARK_CLI_FAILED",
                         hint="Check that lark-cli is installed and executable.") from None
    ctx.exit(completed.returncode)
