"""A dev session: the first check and sync, then one round per batch of saved files,
the page's calls, and the shutdown.

    session = DevSession(root=root, site=SiteApi(client, app_token), out=print)
    session.start()                         # full check (as `basedb check` prints it), sync
    session.apply(classify(root, paths))    # a save: re-check what changed, sync, reload
    session.invoke("listTasks", {"params": {}})   # a page's call, logged
    session.close()                          # discard the development draft

Every round ends with one event on the live-reload channel: `reload` when the page or
the functions it calls changed (after the development draft holds the new functions),
`status` when check found errors (the page shows them and keeps its last good state).
Only the development draft is written: the site's draft, preview and prod never change.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote

from basedb.check.reporters.text import render
from basedb.client import endpoints
from basedb.client.sites import LogQuery, SiteApi
from basedb.core.errors import BasedbError
from basedb.core.frozen import frozen_dataclass
from basedb.dev.changes import Changes
from basedb.dev.checker import CheckRun, IncrementalChecker, report_lines
from basedb.dev.drafts import DevDraftBody
from basedb.dev.events import Broadcaster
from basedb.dev.server import CallAnswer

LogDetails = Callable[[str], list[str]]
"""The platform log entries of one call (by LogID), for the terminal."""
DETAILS_SHOWN = 20


def platform_log_details(site: SiteApi) -> LogDetails:
    """What the platform logged about a call beyond its answer (FaaS output, failures),
    read from the site's platform log (GET /sites/APP/logs?logId=…&kind=detail)."""
    def details(log_id: str) -> list[str]:
        data = site.logs(LogQuery(log_id=log_id, kind="detail", limit=DETAILS_SHOWN))
        entries = data.get("entries")
        if not isinstance(entries, list):
            return []
        return [str(entry.get("message", "")) for entry in entries
                if isinstance(entry, dict) and entry.get("message")]

    return details


@frozen_dataclass
class Round:
    """What one batch of saved files led to."""

    changes: Changes | None
    errors: int
    synced: bool
    reloaded: bool
    seconds: float


class DevSession:
    def __init__(self, *, root: Path, site: SiteApi, out: Callable[[str], None],
                 skip_ai: bool = False, color: bool = False,
                 log_details: LogDetails | None = None) -> None:
        self.root = root
        self.site = site
        self.out = out
        self.color = color
        self.events = Broadcaster()
        self.session_id = uuid.uuid4().hex
        self.log_details = log_details
        self._checker = IncrementalChecker(root, skip_ai=skip_ai)
        self._body = DevDraftBody(root)
        self._client_lock = threading.Lock()  # one request at a time on the client
        self._status: dict[str, Any] = {"errors": 0, "message": ""}
        self._viewer: dict[str, Any] | None = None
        self.revision: int | None = None
        self.rounds: list[Round] = []

    # ------------------------------------------------------------------ rounds

    def start(self) -> Round:
        """Check everything (printed as `basedb check` prints it) and send the draft."""
        started = time.perf_counter()
        run = self._checker.run(None)
        self.out(render(run.result, root=self.root, color=self.color).rstrip("\n"))
        synced = self._sync(run, None) if run.result.ok else False
        if not run.result.ok:
            self.out("dev draft: not sent; fix the errors above and save.")
        self._set_status(run)
        done = Round(None, len(run.result.errors), synced, False,
                     time.perf_counter() - started)
        self.rounds.append(done)
        return done

    def apply(self, changes: Changes) -> Round:
        """One batch of saved files: re-check what changed, sync, tell the page."""
        started = time.perf_counter()
        if not changes:
            return Round(changes, int(self._status["errors"]), False, False, 0.0)
        synced = False
        errors = int(self._status["errors"])
        if changes.needs_sync:
            run = self._checker.run(changes)
            label = sorted(changes.functions) + (["workspace files"] if changes.workspace
                                                 else [])
            for line in report_lines(run, self.root, color=self.color, label=label):
                self.out(line)
            errors = len(run.result.errors)
            self._set_status(run)
            if run.result.ok:
                synced = self._sync(run, None if changes.workspace else changes.functions)
            else:
                self.out("dev draft: not updated; the page keeps calling the last good "
                         "version.")
        elif changes.page:
            self.out("page: " + ", ".join(p for p in changes.paths if p.startswith("src/")))
        reload = (changes.page and errors == 0) or synced
        if reload:
            self.events.publish("reload", {"paths": changes.paths})
        else:
            self.events.publish("status", dict(self._status))
        done = Round(changes, errors, synced, reload, time.perf_counter() - started)
        self.rounds.append(done)
        return done

    def _sync(self, run: CheckRun, changed: set[str] | None) -> bool:
        try:
            body = self._body.build(run.workspace, changed)
            with self._client_lock:
                data = self.site.put_dev_functions(body)
        except BasedbError as error:
            self.out(f"dev draft: not updated: {error.message}")
            if error.hint:
                self.out(f"  fix: {error.hint}")
            return False
        revision = data.get("revision")
        self.revision = revision if isinstance(revision, int) else None
        counts = data.get("counts")
        total = sum(v for v in counts.values() if isinstance(v, int)) \
            if isinstance(counts, dict) else 0
        self.out(f"dev draft: {total} function{'s' if total != 1 else ''} sent"
                 + (f" (revision {self.revision})" if self.revision is not None else ""))
        return True

    def _set_status(self, run: CheckRun) -> None:
        count = len(run.result.errors)
        message = ""
        if count:
            first = run.result.errors[0]
            message = (f"basedb dev: {count} check error{'s' if count != 1 else ''}; the "
                       f"first: {first.file}: {first.code} {first.message}")
        self._status = {"errors": count, "message": message}

    def status(self) -> dict[str, Any]:
        return dict(self._status)

    # ------------------------------------------------------------------ calls

    def invoke(self, function_id: str, document: Any) -> CallAnswer:
        """A page's call, made on the development draft as the developer, and logged."""
        started = time.perf_counter()
        path = endpoints.invoke(self.site.app_token, function_id)
        with self._client_lock:
            request, response = self.site.client.exchange(
                "POST", path, params={"env": "dev", "includeInternal": "true"},
                json=document if document is not None else {})
        del request
        ms = (time.perf_counter() - started) * 1000
        log_id = response.headers.get("x-tt-logid", "")
        answer = CallAnswer(status=response.status_code, body=response.content, log_id=log_id,
                            content_type=response.headers.get("content-type",
                                                              "application/json"))
        self._log_call(function_id, answer, ms)
        return answer

    def forward(self, method: str, suffix: str, document: Any) -> CallAnswer:
        """The page SDK's other calls (an AI stream, a media task) on the development
        draft as the developer. A stream comes back whole: the in-process client reads an
        answer to its end before returning it."""
        path = f"/sites/{self.site.app_token}/{suffix}"
        params = {"env": "dev", "includeInternal": "true"}
        if method == "GET":
            params = {"env": "dev"}
        with self._client_lock:
            request, response = self.site.client.exchange(
                method, _quoted(path), params=params,
                json=document if method == "POST" else None)
        del request
        return CallAnswer(status=response.status_code, body=response.content,
                          log_id=response.headers.get("x-tt-logid", ""),
                          content_type=response.headers.get("content-type",
                                                            "application/json"))

    def _log_call(self, function_id: str, answer: CallAnswer, ms: float) -> None:
        try:
            envelope = json.loads(answer.body)
        except ValueError:
            envelope = None
        code = envelope.get("code") if isinstance(envelope, dict) else None
        if code == 0:
            line = f"call {function_id}: ok ({ms:.0f} ms)"
        else:
            msg = envelope.get("msg") if isinstance(envelope, dict) else None
            line = (f"call {function_id}: error {code if code is not None else answer.status}"
                    f" ({ms:.0f} ms): {msg or f'HTTP {answer.status}'}")
        if answer.log_id:
            line += f" LogID {answer.log_id}"
        self.out(line)
        if self.log_details is not None and answer.log_id:
            try:
                with self._client_lock:
                    details = self.log_details(answer.log_id)
            except BasedbError:
                details = []
            for entry in details:
                self.out("  | " + entry.replace("\n", "\n  | "))

    def viewer(self) -> dict[str, Any]:
        if self._viewer is None:
            with self._client_lock:
                user_id = self.site.client.current_user_id()
            self._viewer = {"userId": user_id or "", "name": user_id or "developer"}
        return self._viewer

    # -------------------------------------------------------------- shutdown

    def close(self) -> None:
        """Discard the development draft (preview and prod were never touched)."""
        self.events.close()
        try:
            with self._client_lock:
                self.site.discard_dev_functions()
        except BasedbError:
            pass  # a platform that restarted has none left: nothing to discard


def _quoted(path: str) -> str:
    return quote(path, safe="/")
