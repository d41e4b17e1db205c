"""Options shared by commands, output helpers, and the one place errors become exit codes."""

from __future__ import annotations

import itertools
import json
import os
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from basedb.core import environment
from basedb.core.errors import EXIT_INTERNAL, EXIT_INTERRUPTED, BasedbError, Interrupted

EXIT_DECLINED = 1  # a confirmation was answered no: nothing was done

if TYPE_CHECKING:
    from basedb.client.client import Client
    from basedb.client.profiles import Profile
    from basedb.platform import LocalPlatform

F = TypeVar("F", bound=Callable[..., Any])

JSON_MODE_KEY = "basedb.json"


def _set_json_mode(ctx: click.Context, _param: click.Parameter, value: bool) -> bool:
    if value:
        ctx.meta[JSON_MODE_KEY] = True
    return value


def json_option(f: F) -> F:
    """`--json`: machine-readable output on stdout, error envelopes on stderr."""
    return click.option("--json", "as_json", is_flag=True, expose_value=True,
                        callback=_set_json_mode, is_eager=True,
                        help="Print machine-readable JSON (stable shape).")(f)


def workspace_option(f: F) -> F:
    """`-C/--workspace DIR`: where to look for base-database.jsonc (default: cwd upward)."""
    return click.option("-C", "--workspace", "workspace_dir",
                        type=click.Path(file_okay=False, path_type=Path), default=None,
                        help="Workspace directory (default: search from the current "
                             "directory upward).")(f)


def profile_option(f: F) -> F:
    return click.option("--profile", default=None, envvar=environment.PROFILE,
                        help="Profile to use (default: the workspace's, else `local`).")(f)


AS_KEY = "basedb.as"
TIMEOUT_KEY = "basedb.timeout"
VERBOSE_KEY = "basedb.verbose"
IDENTITY_KEY = "basedb.identity"  # the identity a command's requests spoke for


def _remember(key: str) -> Callable[[click.Context, click.Parameter, Any], Any]:
    def callback(ctx: click.Context, _param: click.Parameter, value: Any) -> Any:
        if value is not None and value is not False:
            ctx.meta[key] = value
        return value

    return callback


def connection_options(f: F) -> F:
    """`--profile`, `--as user|bot`, `--timeout SECONDS` and `--verbose`: which platform
    and identity a command's requests use, and how they are sent (`open_client` reads
    them)."""
    f = click.option("--verbose", is_flag=True, default=False, expose_value=False,
                     envvar=environment.DEBUG, callback=_remember(VERBOSE_KEY),
                     help="Log every request and response line to stderr, tokens redacted "
                          "($BASEDB_DEBUG).")(f)
    f = click.option("--timeout", type=click.FloatRange(min=0.1, max=3600), default=None,
                     metavar="SECONDS", expose_value=False, envvar=environment.TIMEOUT,
                     callback=_remember(TIMEOUT_KEY),
                     help="Seconds to wait for each answer ($BASEDB_TIMEOUT; default 30).")(f)
    f = click.option("--as", "identity", type=click.Choice(["user", "bot", "auto"]),
                     default=None, expose_value=False, callback=_remember(AS_KEY),
                     help="Identity to call as: user or bot (default: the profile's).")(f)
    return profile_option(f)


def _meta(key: str) -> Any:
    ctx = click.get_current_context(silent=True)
    while ctx is not None:
        if key in ctx.meta:
            return ctx.meta[key]
        ctx = ctx.parent
    return None


def check_app_token(_ctx: click.Context, param: click.Parameter, value: str | None,
                    ) -> str | None:
    """Callback of `--app-token` options: a value that cannot be an app token would only
    reach the platform as a confusing "not found"."""
    from basedb.workspace.config import APP_TOKEN_RE

    if value is not None and not APP_TOKEN_RE.fullmatch(value):
        raise click.BadParameter(
            f"{value!r} is not an app token: use the site's appToken (letters, digits, '_' "
            "and '-', e.g. Prj…) as in the workspace's base-database.jsonc.", param=param)
    return value


# Which site a site command acts on, and the client to reach it: `--app-token`, else the
# appToken of the workspace at or above `-C DIR` (or the current directory).
app_token_option = click.option(
    "--app-token", default=None, callback=check_app_token,
    help="The site (default: the appToken of the current workspace).")


def workspace_root(workspace_dir: Path | None) -> Path:
    """The workspace at or above -C DIR (or the current directory); DIR must exist.
    Finding it is the workspace layer's (`basedb.workspace.find_root`); saying that an
    option names no directory is the command line's."""
    from basedb.workspace.loader import find_root

    if workspace_dir is not None and not workspace_dir.is_dir():
        raise click.BadParameter(f"{workspace_dir} is not a directory.",
                                 param_hint="'-C' / '--workspace'")
    return find_root(workspace_dir)


def optional_workspace_root(workspace_dir: Path | None) -> Path | None:
    """`workspace_root`, or None when there is no workspace and -C named none (a -C
    DIR without one is still an error)."""
    from basedb.core.errors import WorkspaceNotFound

    try:
        return workspace_root(workspace_dir)
    except WorkspaceNotFound:
        if workspace_dir is not None:
            raise
        return None


def site_of(workspace_dir: Path | None, app_token: str | None) -> tuple[str, Path | None]:
    """(the site's appToken, the workspace root when there is one): --app-token needs no
    workspace; without it, the workspace's appToken is the site."""
    from basedb.workspace.config import workspace_app_token

    if app_token is not None:
        return app_token, optional_workspace_root(workspace_dir)
    root = workspace_root(workspace_dir)
    return workspace_app_token(root), root


def connect_to(profile: str | None, root: Path | None) -> Client:
    """A client for the profile `--profile` names, else the workspace's, else `local`."""
    from basedb.client.profiles import current_profile

    resolved, _ = current_profile(profile, root)
    return open_client(resolved)


def in_json_mode() -> bool:
    ctx = click.get_current_context(silent=True)
    while ctx is not None:
        if ctx.meta.get(JSON_MODE_KEY):
            return True
        ctx = ctx.parent
    return False


def emit_json(data: Any) -> None:
    """Write one JSON document to stdout."""
    click.echo(json.dumps(data, ensure_ascii=False, indent=2))


def echo_err(message: str) -> None:
    click.echo(message, err=True)


def stderr_is_tty() -> bool:
    return sys.stderr.isatty()


def use_colour(stream: Any) -> bool:
    """Colour for `stream`: only on a terminal, and never when NO_COLOR is set to
    anything but the empty string (no-color.org)."""
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty()) and not os.environ.get("NO_COLOR")


def stdin_is_tty() -> bool:
    return sys.stdin.isatty()


def confirm_or_stop(question: str, declined: str) -> None:
    """Ask `question` on stderr (default no). On no, or Ctrl-C or the end of input,
    print `declined` (what did not happen) and exit 1: the command did not do what it
    was asked to. Nothing was changed, so there is nothing to undo."""
    try:
        agreed = click.confirm(question, default=False, err=True)
    except click.Abort:
        click.echo("", err=True)  # the prompt's line was not ended by the user
        agreed = False
    if not agreed:
        click.echo(declined, err=True)
        raise click.exceptions.Exit(EXIT_DECLINED)


def render_error(error: BasedbError) -> str:
    # The code closes the message's first line: a message that lists findings below it
    # keeps its last line for the last finding.
    first, newline, rest = error.message.partition("\n")
    code = f" [{error.code}]" if error.code not in (None, "") else ""
    parts = [f"Error: {first}{code}{newline}{rest}"]
    if error.hint:
        parts.append(f"Hint: {error.hint}")
    if error.console_url:
        parts.append(f"Console: {error.console_url}")
    log_id = error.detail.get("log_id")
    if log_id and str(log_id) not in error.message:  # platform messages end with it
        parts.append(f"Log ID: {log_id}")
    return "\n".join(parts)


def report_error(error: BasedbError, *, as_json: bool | None = None) -> None:
    """The error on stderr: an envelope in JSON mode (or when `as_json`), else a paragraph."""
    from basedb.core.redact import redact
    from basedb.protocol.envelope import error_envelope

    if in_json_mode() if as_json is None else as_json:
        text = json.dumps(error_envelope(error, _meta(IDENTITY_KEY)), ensure_ascii=False)
    else:
        text = render_error(error)
    click.echo(redact(text), err=True)


ARGS_KEY = "basedb.args"  # ctx.meta: the command line's arguments, as the group got them


def _asks_for_json(args: list[str]) -> bool:
    """Whether a command line that failed to parse asked for JSON output."""
    return ("--json" in args or "--format=json" in args
            or any(a == "--format" and b == "json" for a, b in itertools.pairwise(args)))


def run_guarded(ctx: click.Context, call: Callable[[], Any]) -> Any:
    """Run a command, turning basedb errors into stderr messages and exit codes."""
    try:
        return call()
    except BasedbError as error:
        report_error(_for_the_command(ctx, error))
        ctx.exit(error.exit_code)
    except click.UsageError as usage:
        # In JSON mode a wrong option is reported like every other error: as an envelope
        # (the option may have failed to parse before --json was seen, hence the args).
        if not (in_json_mode() or _asks_for_json(ctx.meta.get(ARGS_KEY, []))):
            raise
        from basedb.core.errors import UsageError

        command = usage.ctx.command_path if usage.ctx is not None else "basedb"
        report_error(UsageError(usage.format_message(), code="USAGE",
                                hint=f"Run `{command} --help` for its options."), as_json=True)
        ctx.exit(usage.exit_code)
    except KeyboardInterrupt:
        # Ctrl-C ends the command as shells expect (128 + SIGINT), not as click's
        # "Aborted!" with the exit code of findings. A deploy stage says more itself.
        report_error(Interrupted("Interrupted (Ctrl-C).", code="INTERRUPTED"))
        ctx.exit(EXIT_INTERRUPTED)
    except (click.exceptions.Exit, click.ClickException, click.Abort, BrokenPipeError):
        raise
    except Exception as exc:  # a bug: say so plainly, keep the traceback for reports
        from basedb.core.errors import InternalError

        detail = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__, limit=8))
        report_error(InternalError(
            f"basedb hit an unexpected error: {type(exc).__name__}: {exc}",
            code="INTERNAL",
            hint="This is a bug in basedb; please report it with the command you ran. "
                 "Set BASEDB_DEBUG=1 to see the traceback.",
        ))
        if os.environ.get(environment.DEBUG):
            click.echo(detail, err=True)
        ctx.exit(EXIT_INTERNAL)


def _for_the_command(ctx: click.Context, error: BasedbError) -> BasedbError:
    """`error`, with a hint that names only options of the command that was run."""
    from basedb.core.errors import WORKSPACE_OPTION_HINT, WorkspaceNotFound

    if isinstance(error, WorkspaceNotFound):
        command = invoked_command(ctx)
        if command is not None and any("--workspace" in p.opts for p in command.params):
            return error.with_context(hint=WORKSPACE_OPTION_HINT)
    return error


def invoked_command(ctx: click.Context) -> click.Command | None:
    """The command the group's arguments name (`basedb deployments list …` → list)."""
    command: click.Command = ctx.command
    for arg in ctx.meta.get(ARGS_KEY, []):
        if not isinstance(command, click.Group):
            break
        if arg.startswith("-"):
            continue  # the groups' own options are flags (--version, --help)
        sub = command.get_command(ctx, arg)
        if sub is None:
            return None
        command = sub
    return command


# --------------------------------------------------------------------- the platform


def embedded_platform() -> LocalPlatform:
    """The local platform over the data dir ($BASEDB_DATA_DIR), embedded in this command.

    This is the one place that hands the platform to the client (`connect(embedded=…)`):
    the client and the pipelines above it never import the platform. Platform log entries
    (stacks, FaaS output) go to the data dir's platform.log, because this command's stderr
    carries its own messages.
    """
    from basedb.core import paths
    from basedb.platform import open_platform

    platform = open_platform(paths.data_dir())
    platform.log_to_file()
    if platform not in EMBEDDED:
        EMBEDDED.append(platform)
    return platform


EMBEDDED: list[LocalPlatform] = []
"""The platforms this command embedded: `basedb.cli.main` closes them as it exits."""


def close_embedded_platforms() -> None:
    """Close the embedded platforms (their logs flushed, their databases checkpointed)
    rather than leave them to the collector, which the command skips (basedb.cli)."""
    while EMBEDDED:
        EMBEDDED.pop().close()


def open_client(profile: Profile) -> Client:
    """A client for `profile`, with the embedded platform for the local profile, and the
    command line's --as, --timeout and --verbose (or their environment variables)."""
    from basedb.client.client import DEFAULT_TIMEOUT, connect
    from basedb.client.trace import RequestTrace

    identity = _meta(AS_KEY)
    if identity not in (None, "auto"):
        profile = profile.with_identity(identity)
    timeout = _meta(TIMEOUT_KEY)
    client = connect(profile, embedded=embedded_platform,
                     timeout=float(timeout) if timeout else DEFAULT_TIMEOUT,
                     trace=RequestTrace() if _meta(VERBOSE_KEY) else None)
    ctx = click.get_current_context(silent=True)
    if ctx is not None:
        ctx.find_root().meta[IDENTITY_KEY] = client.identity
    return client
