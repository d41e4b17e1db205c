"""`basedb api METHOD PATH` and `basedb lark-cli -- ARGS…`.

`api` follows lark-cli's conventions: the raw envelope on stdout on success; on failure
lark-cli's error envelope on stderr and the exit code of the error class.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from basedb.cli.common import (
    JSON_MODE_KEY,
    connection_options,
    emit_json,
    open_client,
    profile_option,
    workspace_option,
)
from basedb.client.api import DEFAULT_PAGE_LIMIT


class LarkCliUsage(click.Command):
    """A command whose command-line errors read as lark-cli's (cobra's): one `Error: …`
    line on stderr and exit 1, where click would print its usage text and exit 2."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        try:
            return super().parse_args(ctx, args)
        except click.NoSuchOption as error:
            _usage_error(ctx, f"unknown flag: {error.option_name}")
        except click.UsageError as error:
            _usage_error(ctx, error.format_message())
        return []


def _usage_error(ctx: click.Context, message: str) -> None:
    click.echo(f"Error: {message}", err=True)
    ctx.exit(1)


@click.command("api", cls=LarkCliUsage)
@click.argument("method")
@click.argument("path")
@click.option("--params", metavar="JSON|-", default=None,
              help="Query parameters as a JSON object, e.g. '{\"env\":\"prod\"}'; - for "
                   "stdin.")
@click.option("--data", metavar="JSON|@FILE|-", default=None,
              help="Request body: inline JSON, @file to read a UTF-8 file, - for stdin.")
@click.option("--page-all", is_flag=True, help="Follow pages and print one merged envelope.")
@click.option("--page-limit", type=click.IntRange(min=0), default=DEFAULT_PAGE_LIMIT,
              show_default=True, help="Most pages --page-all fetches (0: up to 1000).")
@click.option("--page-size", type=click.IntRange(min=0), default=0, metavar="N",
              help="Sent as the page_size query parameter (0: the API's default).")
@click.option("--page-delay", type=click.IntRange(min=0), default=200, show_default=True,
              metavar="MS", help="Milliseconds to wait between pages with --page-all.")
@click.option("--format", "fmt", default="json", metavar="FORMAT",
              help="Output: json (default), ndjson, table or csv (the answer's items).")
@click.option("-q", "--jq", "jq_expression", default=None, metavar="EXPR",
              help="Filter the JSON answer with a jq expression.")
@click.option("--file", "upload", default=None, metavar="[FIELD=]PATH",
              help="Upload a file as multipart/form-data (field `file` by default; - reads "
                   "stdin); --data then holds the other form fields.")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Save the response body to this file (binary answers are saved anyway).")
@click.option("--dry-run", is_flag=True,
              help="Print the request that would be sent (token redacted) and send nothing.")
@click.option("--json", "as_json", is_flag=True, hidden=True,
              help="Accepted for lark-cli compatibility; output is always JSON.")
@connection_options
@workspace_option
@click.pass_context
def api_command(ctx: click.Context, method: str, path: str, params: str | None,
                data: str | None, page_all: bool, page_limit: int, page_size: int,
                page_delay: int, fmt: str, jq_expression: str | None, upload: str | None,
                output: Path | None, dry_run: bool, as_json: bool, profile: str | None,
                workspace_dir: Path | None) -> None:
    """Call any Open API endpoint, printing what `lark-cli api` prints.

    PATH may omit the /open-apis/base/v3 prefix. In a workspace, {app} in PATH is its
    appToken and {base} its bound Base (base-database.jsonc), as `gh api` fills {owner}.
    The answer goes to stdout as lark-cli prints it; a failure goes to stderr as
    lark-cli's error envelope (with `identity`). Examples:

    \b
      basedb api GET /sites/{app}/functions --params '{"env":"prod"}'
      basedb api POST /sites/{app}/functions/FN/invoke --data @body.json --as user
      basedb api GET /bases/{base}/tables/T/records --page-all

    Exit status: 0 ok, 1 API error, 2 bad usage or input, 3 auth, 4 network or server.
    """
    ctx.meta[JSON_MODE_KEY] = True  # errors as lark-cli envelopes, like lark-cli api
    from basedb.cli.placeholders import expand_path
    from basedb.client import api_format
    from basedb.client.api import build_call, describe_call, execute_call
    from basedb.client.api_output import from_exception
    from basedb.client.profiles import current_profile
    from basedb.core.errors import BasedbError, UsageError

    identity: str | None = None
    if fmt not in api_format.FORMATS:
        click.echo(f'warning: unknown format "{fmt}", falling back to json', err=True)
        fmt = "json"
    try:
        program = None
        if jq_expression:
            if output is not None:
                raise UsageError("--jq and --output are mutually exclusive",
                                 code="JQ_INVALID", hint="Filter with --jq, or save with -o.")
            if fmt != "json":
                raise UsageError(f"--jq and --format {fmt} are mutually exclusive",
                                 code="JQ_INVALID", hint="Leave --format out with --jq.")
            program = api_format.check_jq(jq_expression)
        path = expand_path(path, workspace_dir)
        call = build_call(method, path, params=params, data=data,
                          stdin=sys.stdin.buffer, page_all=page_all,
                          page_limit=page_limit, page_size=page_size,
                          page_delay_ms=page_delay, file=upload,
                          output=output is not None)
        resolved, _ = current_profile(profile, workspace_dir)
        if dry_run:
            emit_json(describe_call(call, resolved))
            return
        with open_client(resolved) as client:
            identity = client.identity
            outcome = execute_call(call, client, output=output)
        text = outcome.stdout
        if outcome.error is None and outcome.answer is not None and output is None:
            if program is not None:
                text = api_format.jq_text(program, outcome.answer)
            elif fmt != "json":
                text = api_format.formatted(outcome.answer, fmt)
    except BasedbError as error:
        _fail(ctx, from_exception(error), identity)
        return
    if text:
        click.echo(text, nl=False)
    for notice in outcome.notices:
        click.echo(notice, err=True)
    if outcome.error is not None:
        _fail(ctx, outcome.error, identity)


def _fail(ctx: click.Context, error: Any, identity: str | None) -> None:
    """lark-cli's error envelope on stderr (tokens redacted), and its exit code."""
    from basedb.core.redact import redact

    click.echo(redact(error.envelope_text(identity)), err=True, nl=False)
    ctx.exit(error.exit_code)


@click.command("lark-cli", context_settings={"ignore_unknown_options": True,
                                             "allow_interspersed_args": False})
@profile_option
@workspace_option
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
@click.pass_context
def lark_cli_command(ctx: click.Context, profile: str | None, workspace_dir: Path | None,
                     args: tuple[str, ...]) -> None:
    """Run lark-cli with the workspace's profile: `basedb lark-cli -- api GET PATH …`.

    For a profile that signs in through lark-cli, lark-cli runs with that profile's
    `--profile` (and, for `api`, its `--as`) passed explicitly. Every other profile is
    one lark-cli cannot use — the embedded local platform, a basedb server, a native
    Feishu/Lark sign-in — so `api …` runs as `basedb api` with it, and a line on stderr
    says so; other lark-cli commands are refused rather than sent to another account.
    """
    from basedb.client.lark.larkcli import find_lark_cli, not_installed
    from basedb.client.profiles import current_profile
    from basedb.core.errors import UsageError

    if not args:
        raise UsageError("Nothing to run: pass lark-cli arguments after --.",
                         code="ARGS_MISSING",
                         hint="For example: basedb lark-cli -- api GET /sites/APP/catalog")
    resolved, _ = current_profile(profile, workspace_dir)
    lark = resolved.lark
    if lark is not None and lark.via == "lark-cli":
        executable = find_lark_cli()
        if executable is None:
            raise not_installed()
        command = list(args)
        if command[0] == "api" and "--as" not in command:
            command += ["--as", lark.identity]
        if lark.lark_profile and "--profile" not in command:
            command = ["--profile", lark.lark_profile, *command]
        _run_lark_cli(ctx, executable, command)
        return
    what = {"local": "the embedded local platform", "endpoint": "a basedb platform",
            "lark": "a native Feishu/Lark sign-in"}[resolved.kind]
    if args[0] != "api":
        raise UsageError(
            f"Profile {resolved.name!r} is {what}, which lark-cli cannot use, so "
            f"`lark-cli {args[0]}` is not run.",
            code="NOT_A_LARK_CLI_PROFILE",
            hint="basedb runs only `api …` for such a profile (as `basedb api`). For other "
                 "lark-cli commands sign in with `basedb auth login --lark-cli --profile "
                 "NAME` and use that profile.")
    click.echo(f"basedb lark-cli: profile {resolved.name!r} is {what}; running `basedb api` "
               "instead of lark-cli.", err=True)
    rest = list(args[1:])
    if profile and "--profile" not in rest:
        rest += ["--profile", profile]
    if workspace_dir is not None and not {"-C", "--workspace"} & set(rest):
        rest += ["-C", str(workspace_dir)]
    with api_command.make_context("basedb lark-cli -- api", rest, parent=ctx) as sub_ctx:
        api_command.invoke(sub_ctx)


def _run_lark_cli(ctx: click.Context, executable: str, args: list[str]) -> None:
    import subprocess

    try:
        completed = subprocess.run([executable, *args], check=False)
    except OSError as exc:
        from basedb.core.errors import UsageError

        raise UsageError(f"Could not run {executable}: {exc.strerror or exc}.",
                         code="LARK_CLI_FAILED",
                         hint="Check that lark-cli is installed and executable.") from None
    ctx.exit(completed.returncode)
