"""`basedb logs [LOGID] [--follow]`: read a site's platform log.

Without LOGID: the newest entries (`--tail`), then with `--follow` every new one as it
arrives, until Ctrl-C. With LOGID: every entry of that request, the id an error message
ends with (`LogID: …`). Owners and admins read every entry of the site; a member reads
only their own calls (basedb.platform.domain.logs).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import click

from basedb.cli.common import (
    app_token_option,
    connect_to,
    connection_options,
    emit_json,
    json_option,
    optional_workspace_root,
    site_of,
    workspace_option,
)

FOLLOW_WAIT_SECONDS = 20
"""How long one long poll of `--follow` waits for an entry (below the client timeout)."""
MAX_PAGE = 500


def entry_lines(entry: dict[str, Any]) -> list[str]:
    """One entry for a terminal: a `call` is one line (function, env, outcome, time), a
    `detail` its first line and the rest indented."""
    time = str(entry.get("time", ""))
    head = f"{time}  {entry.get('logId', '')}"
    if entry.get("kind") == "call":
        outcome = "ok" if entry.get("code") == 0 else f"error {entry.get('code')}"
        ms = f" {entry['ms']:g} ms" if isinstance(entry.get("ms"), (int, float)) else ""
        line = (f"{head}  call  {entry.get('functionId', '?')} [{entry.get('env', '?')}] "
                f"{outcome}{ms}")
        if entry.get("code") != 0:
            line += f": {entry.get('message', '')}"
        return [line]
    message = str(entry.get("message", "")).splitlines() or [""]
    return [f"{head}  {entry.get('level', 'info')}  {message[0]}",
            *(f"    {rest}" for rest in message[1:])]


def follow(read: Any, query: Any, *, wait: int = FOLLOW_WAIT_SECONDS,
           ) -> Iterator[dict[str, Any]]:
    """Every entry after `query.after`, as it arrives: `read(query)` is
    `SiteApi.logs` or `platform_logs`; ends only when the caller stops iterating."""
    after = query.after
    while True:
        page = read(replace(query, after=after, wait=wait, tail=None))
        yield from page.get("entries", [])
        after = str(page.get("cursor") or after or "0")


@click.command("logs")
@click.argument("log_id", required=False)
@click.option("--follow", "-f", "follow_", is_flag=True,
              help="Keep printing new entries as they arrive (Ctrl-C stops).")
@click.option("--tail", "-n", type=click.IntRange(1, MAX_PAGE), default=20, show_default=True,
              help="How many of the newest entries to show first.")
@click.option("--function", "function_id", default=None, help="Only this function's entries.")
@click.option("--env", type=click.Choice(["prod", "preview", "dev"]), default=None,
              help="Only calls in this environment.")
@click.option("--kind", type=click.Choice(["call", "detail"]), default=None,
              help="call: one line per function call; detail: handler output and failures.")
@click.option("--platform", "platform_wide", is_flag=True,
              help="The whole platform's log, not one site's (the platform owner only).")
@app_token_option
@json_option
@workspace_option
@connection_options
def logs_command(log_id: str | None, follow_: bool, tail: int, function_id: str | None,
                 env: str | None, kind: str | None, platform_wide: bool,
                 app_token: str | None, as_json: bool, workspace_dir: Path | None,
                 profile: str | None) -> None:
    """Show the site's platform log, or the entries of one LOGID.

    An error message ends with `LogID: …`; `basedb logs LOGID` shows what the platform
    logged for that request (a FaaS handler's output, the failure behind a safe
    message). Site owners and admins see every entry; a member only their own calls.
    With --json: one document ({appToken, entries, hasMore, cursor}), or with --follow
    one JSON entry per line.
    """
    from basedb.client.sites import LogQuery, SiteApi, platform_logs
    from basedb.core.errors import ConflictError, UsageError

    if log_id is not None and follow_:
        raise UsageError("LOGID and --follow do not go together: a request's entries are "
                         "all written when it answers.", code="OPTIONS_CONFLICT",
                         hint="Run `basedb logs LOGID`, or `basedb logs --follow`.")
    if platform_wide and app_token is not None:
        raise UsageError("--platform and --app-token do not go together.",
                         code="OPTIONS_CONFLICT",
                         hint="Pass --platform for every site's entries, or --app-token for "
                              "one site's.")
    token: str | None
    if platform_wide:
        token, root = None, optional_workspace_root(workspace_dir)
    else:
        token, root = site_of(workspace_dir, app_token)
    query = LogQuery(log_id=log_id, function_id=function_id, env=env, kind=kind)
    with connect_to(profile, root) as client:
        def read(q: LogQuery) -> dict[str, Any]:
            return platform_logs(client, q) if token is None else SiteApi(client, token).logs(q)

        first = read(replace(query, limit=MAX_PAGE) if log_id else replace(query, tail=tail))
        entries = list(first.get("entries", []))
        if log_id is not None and not entries:
            raise ConflictError(
                f"No entry of {_where(token)} has LogID {log_id}.", code="LOG_ID_NOT_FOUND",
                hint="Check the id (the last words of the error message); a site member "
                     "sees only their own calls, so ask the site's owner or an admin, and a "
                     "request that named no site is in `basedb logs --platform LOGID` "
                     "(the platform owner).")
        if not follow_:
            if as_json:
                emit_json({"appToken": token, **first})
            else:
                _print(entries)
                if not entries:
                    click.echo(f"No entries yet in {_where(token)}.", err=True)
            return
        for entry in entries:
            _show(entry, as_json)
        start = replace(query, after=str(first.get("cursor") or "0"))
        wait = max(1, min(FOLLOW_WAIT_SECONDS, int(client.timeout) - 5))
        try:
            for entry in follow(read, start, wait=wait):
                _show(entry, as_json)
        except KeyboardInterrupt:
            return


def _where(token: str | None) -> str:
    return "the platform log" if token is None else f"the log of site {token}"


def _print(entries: list[dict[str, Any]]) -> None:
    for entry in entries:
        for line in entry_lines(entry):
            click.echo(line)


def _show(entry: dict[str, Any], as_json: bool) -> None:
    if as_json:
        click.echo(json.dumps(entry, ensure_ascii=False))
    else:
        _print([entry])
