"""FaaS runtime: real handlers in Node.js against a real platform store.

Every test here runs `node`; they are skipped only when no Node.js 20+ is installed
(the tests of what happens without Node run everywhere).
"""

from __future__ import annotations

import json
import os
import sqlite3
import stat
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from basedb.core import node
from basedb.core.node import node_version
from basedb.platform import LocalPlatform
from basedb.platform.domain import identity, records, sites
from basedb.platform.domain.runtimes.faas import (
    DEFAULT_TIMEOUT_MS,
    MAX_TIMEOUT_MS,
    FaasFunction,
    FaasRuntime,
    effective_timeout_ms,
)
from basedb.platform.storage import platform_log
from basedb.protocol import MAX_MSG_CHARS, ApiFailure, Code
from tests.platform.conftest import Api, make_table

needs_node = pytest.mark.skipif(
    node_version() is None or int((node_version() or "0").split(".")[0]) < 20,
    reason="Node.js 20+ is not installed")

LOG_ID = "20990101000000ABCDEF0123456789AB"


@dataclass
class FaasSite:
    """A site with bound tables, and a member who invokes its FaaS functions."""

    platform: LocalPlatform
    api: Api
    app_token: str
    base: str
    tasks_id: str
    member: identity.User

    @property
    def runtime(self) -> FaasRuntime:
        runtime: FaasRuntime = self.platform.app.state.context.faas
        return runtime

    def function(self, source: str, *, timeout_ms: int = 10_000,
                 function_id: str = "handler", deployment_id: str = "dplTest") -> FaasFunction:
        return FaasFunction(scope=str(self.platform.store.path), app_token=self.app_token,
                            deployment_id=deployment_id, function_id=function_id,
                            source=source, timeout_ms=timeout_ms)

    def run(self, source: str, input: Any = None, *, timeout_ms: int = 10_000,
            caller: identity.User | None = None, function_id: str = "handler",
            deployment_id: str = "dplTest", log_id: str = "") -> Any:
        with self.platform.store.read() as conn:
            site = sites.get_site(conn, self.app_token)
            assert site is not None
            catalog = sites.site_catalog(conn, site)
        function = self.function(source, timeout_ms=timeout_ms, function_id=function_id,
                                 deployment_id=deployment_id)
        return self.runtime.run(store=self.platform.store, site=site, catalog=catalog,
                                caller=caller or self.member, function=function, input=input,
                                log_id=log_id or LOG_ID, env="prod")

    def fail(self, source: str, code: int, input: Any = None, **kwargs: Any) -> ApiFailure:
        with pytest.raises(ApiFailure) as caught:
            self.run(source, input, **kwargs)
        failure = caught.value
        assert failure.code == code, failure.msg
        assert 0 < len(failure.msg) <= MAX_MSG_CHARS
        assert failure.msg.endswith(f"LogID: {LOG_ID}"), failure.msg
        return failure

    def records(self) -> list[dict[str, Any]]:
        page = self.api.ok("GET", f"/bases/{self.base}/tables/{self.tasks_id}/records")
        return [dict(zip(page["fields"], row, strict=True)) | {"record_id": rid}
                for rid, row in zip(page["record_id_list"], page["data"], strict=True)]


@pytest.fixture
def site(platform: LocalPlatform, api: Api, base: str) -> FaasSite:
    people = make_table(api, base, "People", [{"name": "Name", "type": "text"}])
    tasks = make_table(api, base, "Tasks", [
        {"name": "Title", "type": "text"},
        {"name": "Status", "type": "select", "options": [{"name": "Open"}, {"name": "Done"}]},
        {"name": "Points", "type": "number"},
        {"name": "Owner", "type": "link", "link_table": people["id"]},
        {"name": "Created by", "type": "created_by"},
    ])
    app_token = api.ok("POST", "/sites/create", json={"title": "Tasks site"})["appToken"]
    api.ok("POST", f"/sites/{app_token}/bind_base",
           json={"baseToken": base, "tableIds": [tasks["id"], people["id"]]})
    member = api.ok("POST", "/users", json={"name": "Mia"})
    api.ok("POST", f"/sites/{app_token}/members", json={"userId": member["user_id"]})
    return FaasSite(platform, api, app_token, base, tasks["id"],
                    identity.User(member["user_id"], "Mia"))


# --------------------------------------------------------------------- results


@needs_node
def test_code_zero_returns_data_and_ctx_describes_the_call(site: FaasSite) -> None:
    data = site.run("""
        export default async function (input, ctx) {
          return {code: 0, msg: "ok", data: {echo: input, caller: ctx.caller, site: ctx.site,
                                              env: ctx.env, logId: ctx.logId,
                                              projectId: ctx.projectId}};
        }""", {"n": 3, "text": "中文"})
    # projectId is upstream's name for the app token: a handler written for it runs as is
    assert data == {"echo": {"n": 3, "text": "中文"},
                    "caller": {"userId": site.member.user_id, "name": "Mia"},
                    "site": {"appToken": site.app_token, "timezone": "UTC"}, "env": "prod",
                    "logId": LOG_ID, "projectId": site.app_token}


@needs_node
def test_code_zero_without_data_is_null(site: FaasSite) -> None:
    assert site.run("export default async () => ({code: 0})") is None


@needs_node
def test_non_zero_code_is_a_business_error_with_the_authors_message(site: FaasSite) -> None:
    failure = site.fail("""
        export default async () => ({code: 40001,
          msg: "结束日期早于开始日期. Parameter: /params/end "
          + "(received \\"2027-01-10\\"). Executed: no. Retry: retry after fixing.",
          data: {parameter: "/params/end"}});""", Code.FUNCTION_BUSINESS_ERROR)
    assert failure.msg == ('结束日期早于开始日期. Parameter: /params/end (received "2027-01-10"). '
                           "Executed: no. Retry: retry after fixing. Business code: 40001. "
                           f"LogID: {LOG_ID}")
    assert failure.data == {"error": {"upstream_code": 40001}}


@needs_node
def test_long_author_message_is_clipped_and_keeps_the_suffix(site: FaasSite) -> None:
    failure = site.fail('export default async () => ({code: -7, msg: "x".repeat(5000)})',
                        Code.FUNCTION_BUSINESS_ERROR)
    author, _, suffix = failure.msg.partition(" Business code:")
    assert len(author) <= 400 and author.endswith("…")
    assert suffix == f" -7. LogID: {LOG_ID}"
    missing = site.fail("export default async () => ({code: 3})", Code.FUNCTION_BUSINESS_ERROR)
    assert missing.msg.startswith("The function reported an error without a message.")


@needs_node
@pytest.mark.parametrize("returned", [
    "42", "undefined", "null", '{code: "0"}', "{code: 1.5}", "{code: true}", "{msg: 'no code'}",
    "[0]",
])
def test_invalid_return_values_fail_safely(site: FaasSite, returned: str) -> None:
    failure = site.fail(f"export default async () => ({returned})", Code.EXECUTION_FAILED)
    assert "returned an invalid result" in failure.msg
    assert "Executed: no record was written" in failure.msg


@needs_node
def test_thrown_error_is_a_safe_message_and_the_stack_goes_to_the_log(
        site: FaasSite, capsys: pytest.CaptureFixture[str]) -> None:
    failure = site.fail("""
        export default async () => { throw new Error("db password is hunter2"); }""",
                        Code.EXECUTION_FAILED, function_id="explode")
    assert failure.msg.startswith('FaaS function "explode" threw an uncaught error.')
    assert "hunter2" not in failure.msg and "index.mjs" not in failure.msg
    assert failure.status == 500
    log = capsys.readouterr().err
    assert f"log_id {LOG_ID}" in log and "hunter2" in log and "index.mjs" in log


@needs_node
def test_returned_code_500_is_a_safe_message_and_the_authors_text_goes_to_the_log(
        site: FaasSite, capsys: pytest.CaptureFixture[str]) -> None:
    failure = site.fail("""
        export default async () => ({code: 500, msg: "SQLITE_ERROR near SELECT * FROM "
          + "t_x WHERE pw='hunter2'\\n    at query (/srv/db.js:12:5)"});""",
                        Code.EXECUTION_FAILED, function_id="forward")
    assert failure.msg == ('FaaS function "forward" reported an internal error (code 500). '
                           "Fix: the site's developer should read the function's log with "
                           f"`basedb logs {LOG_ID}` in the site's workspace. Executed: no record "
                           f"was written. Retry: retry after publishing. LogID: {LOG_ID}")
    assert failure.status == 500 and failure.data == {"error": {"upstream_code": 500}}
    log = capsys.readouterr().err
    assert f"log_id {LOG_ID}" in log and "hunter2" in log and "/srv/db.js" in log


@needs_node
def test_returned_code_500_after_a_write_says_the_write_was_kept(site: FaasSite) -> None:
    failure = site.fail("""
        export default async (input, ctx) => {
          await ctx.records.create("Tasks", {Title: "half done"});
          return {code: 500, msg: "downstream failed"};
        }""", Code.EXECUTION_FAILED)
    assert "Executed: partly: 1 record write call completed" in failure.msg
    assert "downstream failed" not in failure.msg
    assert [r["Title"] for r in site.records()] == ["half done"]


@needs_node
@pytest.mark.parametrize("source", [
    "export default syntax error",
    "export const notDefault = () => ({code: 0});",
    "export default async () => { setTimeout(() => { throw new Error('later') }, 0);"
    " return new Promise(() => {}); }",
])
def test_unloadable_and_crashing_handlers_fail_safely(site: FaasSite, source: str) -> None:
    failure = site.fail(source, Code.EXECUTION_FAILED)
    assert "later" not in failure.msg and "SyntaxError" not in failure.msg


@needs_node
def test_unserializable_result_fails_safely(site: FaasSite) -> None:
    failure = site.fail("export default async () => ({code: 0, data: 10n})", Code.EXECUTION_FAILED)
    assert "cannot be sent as JSON" in failure.msg


@needs_node
def test_a_promise_that_never_settles_ends_without_waiting_for_the_timeout(
        site: FaasSite) -> None:
    failure = site.fail("export default () => new Promise(() => {})", Code.EXECUTION_FAILED,
                        timeout_ms=20_000)
    # Not the timeout's message: the runner saw the event loop drain and ended at once.
    assert "ended without returning a result" in failure.msg
    assert "did not finish within" not in failure.msg


# ---------------------------------------------------------------------- limits


@needs_node
def test_infinite_loop_is_stopped_at_the_timeout(site: FaasSite) -> None:
    failure = site.fail("export default async () => { for (;;) {} }", Code.EXECUTION_FAILED,
                        timeout_ms=400)
    assert "did not finish within 400 ms and was stopped" in failure.msg
    assert "Retry: retry later" in failure.msg and failure.status == 504


@needs_node
def test_timeout_stops_a_handler_waiting_on_timers(site: FaasSite) -> None:
    failure = site.fail("""
        export default async () => { await new Promise(r => setTimeout(r, 60000));
                                     return {code: 0}; }""", Code.EXECUTION_FAILED, timeout_ms=300)
    assert "did not finish within 300 ms" in failure.msg


@needs_node
def test_memory_hog_is_killed(site: FaasSite) -> None:
    failure = site.fail("""
        export default async () => {
          const hoard = [];
          for (;;) hoard.push(new Array(100000).fill(Math.random()));
        }""", Code.EXECUTION_FAILED, timeout_ms=60_000)  # the limit that stops it: memory
    assert "ran out of memory" in failure.msg


@needs_node
def test_off_heap_memory_is_bounded_too(site: FaasSite) -> None:
    failure = site.fail("""
        export default async () => {
          const hoard = [];
          for (let i = 0; i < 64; i++) hoard.push(Buffer.alloc(256 * 1024 * 1024, 1));
          return {code: 0, data: hoard.length};
        }""", Code.EXECUTION_FAILED, timeout_ms=60_000)
    assert "ran out of memory" in failure.msg


@needs_node
def test_huge_result_is_refused(site: FaasSite) -> None:
    failure = site.fail('export default async () => ({code: 0, data: "x".repeat(9 * 2**20)})',
                        Code.EXECUTION_FAILED)
    assert "larger than 8 MB" in failure.msg


@needs_node
def test_result_just_under_the_cap_comes_through(site: FaasSite) -> None:
    data = site.run('export default async () => ({code: 0, data: "y".repeat(4 * 2**20)})')
    assert data == "y" * (4 * 2**20)


@needs_node
def test_console_noise_does_not_break_the_channel(
        site: FaasSite, capsys: pytest.CaptureFixture[str]) -> None:
    data = site.run("""
        export default async (input, ctx) => {
          console.log('{"type":"result","value":{"code":0,"data":"forged"}}');
          console.error("to stderr");
          process.stdout.write('{"type":"failure","kind":"exception"}\\n');
          process.stdout.write("no newline at the end");
          const created = await ctx.records.create("Tasks", {Title: "after noise"});
          console.info("created", created.record_id);
          return {code: 0, data: created.fields.Title};
        }""")
    assert data == "after noise"
    log = capsys.readouterr().err
    assert "to stderr" in log and "no newline at the end" in log and "forged" in log


@needs_node
def test_log_output_is_capped(site: FaasSite, tmp_path: Path) -> None:
    # Read whole from a log file: serve's stderr prints an entry's start only.
    with platform_log.logging_to(tmp_path / "platform.log"):
        data = site.run("""
            export default async () => {
              for (let i = 0; i < 20000; i++) console.log("line " + i + " " + "z".repeat(50));
              return {code: 0, data: "done"};
            }""")
    assert data == "done"
    log = (tmp_path / "platform.log").read_text(encoding="utf-8")
    assert "bytes of output dropped" in log and "line 0 " in log and "line 19999 " in log
    # Every line carries the log id; what the handler printed is capped.
    printed = [line.split(" | ", 1)[1] for line in log.splitlines() if " | " in line]
    # (beside the sandbox's description first, and the call's summary when it ends)
    summary = f'basedb faas: function "handler" (log_id {LOG_ID}) ended: '
    assert all(line.startswith((f"basedb faas: {LOG_ID} ", summary))
               for line in log.splitlines()[1:])
    assert sum(len(line) + 1 for line in printed) < 100_000


def test_timeout_defaults_and_cap() -> None:
    assert effective_timeout_ms(None) == DEFAULT_TIMEOUT_MS == 10_000
    assert effective_timeout_ms(0) == DEFAULT_TIMEOUT_MS
    assert effective_timeout_ms(2_500) == 2_500
    # Deployed before the maximum came down from 300 s: capped when it runs.
    assert effective_timeout_ms(300_000) == MAX_TIMEOUT_MS == 120_000


# -------------------------------------------------------------------- sandbox


@needs_node
def test_environment_is_scrubbed(site: FaasSite, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BASEDB_DATA_DIR", str(site.platform.data_dir))
    monkeypatch.setenv("SECRET_API_TOKEN", "bdb_sEcReTvAlUe")
    monkeypatch.setenv("NODE_OPTIONS", "--require /nonexistent.js")
    env = site.run("export default async () => ({code: 0, data: process.env})")
    assert set(env) <= {"PATH", "HOME", "TMPDIR", "LANG", "TZ", "PWD"}
    dumped = json.dumps(env)
    assert "bdb_" not in dumped and str(site.platform.data_dir) not in dumped
    assert env["HOME"] != os.environ.get("HOME")


@needs_node
def test_handler_cannot_read_the_data_dir_or_spawn_processes(site: FaasSite) -> None:
    token_file = str(site.platform.owner_token_file)
    outcome = site.run("""
        import fs from "node:fs";
        export default async (input) => {
          const tried = {};
          for (const [name, attempt] of Object.entries({
            token: () => fs.readFileSync(input.tokenFile, "utf8"),
            listing: () => fs.readdirSync(input.dataDir),
            write: () => fs.writeFileSync(input.dataDir + "/planted", "x"),
            child: async () => (await import("node:child_process")).execSync("id"),
          })) {
            try { await attempt(); tried[name] = "allowed"; } catch (e) { tried[name] = e.code; }
          }
          fs.writeFileSync("scratch.txt", "own directory is fine");
          tried.scratch = fs.readFileSync("scratch.txt", "utf8");
          return {code: 0, data: tried};
        }""", {"tokenFile": token_file, "dataDir": str(site.platform.data_dir)})
    assert outcome == {"token": "ERR_ACCESS_DENIED", "listing": "ERR_ACCESS_DENIED",
                       "write": "ERR_ACCESS_DENIED", "child": "ERR_ACCESS_DENIED",
                       "scratch": "own directory is fine"}
    assert not (site.platform.data_dir / "planted").exists()


@needs_node
def test_work_directory_is_emptied_between_calls_and_removed_with_the_worker(
        site: FaasSite) -> None:
    source = """
        import fs from "node:fs";
        export default async (input) => {
          const before = fs.readdirSync(".");
          fs.writeFileSync("scratch-" + input.n, "x".repeat(1000));
          return {code: 0, data: {before, cwd: process.cwd()}};
        }"""
    first = site.run(source, {"n": 1})
    second = site.run(source, {"n": 2})
    assert first["before"] == second["before"] == []  # the same warm worker, emptied
    [worker] = site.runtime.idle_workers(str(site.platform.store.path))
    directory = worker.paths.root
    assert directory.is_dir()
    site.runtime.forget(str(site.platform.store.path))
    assert not directory.exists()


# -------------------------------------------------------------------- ctx.records


@needs_node
def test_record_routes_round_trip(site: FaasSite) -> None:
    data = site.run("""
        export default async (input, ctx) => {
          const r = ctx.records;
          const created = await r.create("Tasks", {Title: "Write", Status: "Open", Points: 2});
          const updated = await r.update("Tasks", created.record_id, {Status: "Done"});
          const fetched = await r.get(input.tasksId, created.record_id);
          const batch = await r.batchCreate("Tasks", [{Title: "A"}, {Title: "B", Points: 5}]);
          const page = await r.list("Tasks", {offset: 1, limit: 2});
          const removed = await r.delete("Tasks", batch.record_id_list[0]);
          return {code: 0, data: {created, updated, fetched, batch, page, removed}};
        }""", {"tasksId": site.tasks_id})
    created, updated = data["created"], data["updated"]
    assert created["fields"]["Title"] == "Write" and created["fields"]["Status"] == "Open"
    assert created["fields"]["Created by"] == [{"id": site.member.user_id}]
    assert updated["fields"]["Status"] == "Done" and updated["fields"]["Points"] == 2
    assert data["fetched"] == updated
    assert len(data["batch"]["record_id_list"]) == 3 - 1 == 2
    page = data["page"]
    assert page["total"] == 3 and page["has_more"] is False
    assert page["record_id_list"] == data["batch"]["record_id_list"]
    assert data["removed"] == {"record_id": data["batch"]["record_id_list"][0], "deleted": True}
    stored = site.records()
    assert [(r["Title"], r["Status"], r["Points"]) for r in stored] == [
        ("Write", "Done", 2), ("B", None, 5)]
    assert all(r["Created by"] == [{"id": site.member.user_id}] for r in stored)


@needs_node
def test_refused_record_calls_reject_and_the_handler_can_catch_them(site: FaasSite) -> None:
    data = site.run("""
        export default async (input, ctx) => {
          const r = ctx.records;
          const caught = {};
          const attempts = {
            badOption: () => r.create("Tasks", {Title: "x", Status: "Opne"}),
            badNumber: () => r.create("Tasks", {Points: "three"}),
            unknownField: () => r.create("Tasks", {Titel: "x"}),
            readOnly: () => r.create("Tasks", {"Created by": [{id: "ou_x"}]}),
            badLink: () => r.create("Tasks", {Owner: [{id: "recMissing"}]}),
            unknownTable: () => r.create("Taks", {Title: "x"}),
            missingRecord: () => r.update("Tasks", "recNotThere", {Title: "x"}),
            missingGet: () => r.get("Tasks", "recNotThere"),
            missingDelete: () => r.delete("Tasks", "recNotThere"),
            notObject: () => r.create("Tasks", "Title=x"),
            tooMany: () => r.batchCreate("Tasks", Array.from({length: 201}, () => ({}))),
            badLimit: () => r.list("Tasks", {limit: 1000}),
            badRow: () => r.batchCreate("Tasks", [{Title: "ok"}, {Status: "nope"}]),
          };
          for (const [name, attempt] of Object.entries(attempts)) {
            try { await attempt(); caught[name] = "resolved"; }
            catch (e) { caught[name] = {code: e.code, message: e.message,
                                        isError: e instanceof Error}; }
          }
          return {code: 0, data: caught};
        }""")
    codes = {name: value["code"] for name, value in data.items()}
    assert codes == {
        "badOption": "invalid_value", "badNumber": "invalid_value",
        "unknownField": "field_not_found", "readOnly": "invalid_value",
        "badLink": "invalid_value", "unknownTable": "table_not_found",
        "missingRecord": "record_not_found", "missingGet": "record_not_found",
        "missingDelete": "record_not_found", "notObject": "invalid_argument",
        "tooMany": "invalid_argument", "badLimit": "invalid_argument",
        "badRow": "invalid_value",
    }
    assert all(value["isError"] for value in data.values())
    messages = {name: value["message"] for name, value in data.items()}
    assert "Parameter: /fields/Status" in messages["badOption"]
    assert "Candidates: Open" in messages["badOption"]
    assert "Executed: no" in messages["badOption"]
    assert "Candidates: Tasks" in messages["unknownTable"]
    assert "Parameter: /rows/1/Status" in messages["badRow"]
    assert site.records() == []  # nothing refused was written, not even the valid row


@needs_node
@pytest.mark.parametrize(("raised", "code"), [
    (sqlite3.OperationalError("database is locked"), "busy"),
    (KeyError("a platform bug"), "internal_error"),
])
def test_platform_failures_in_a_record_call_reject_that_call(
        site: FaasSite, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        raised: Exception, code: str) -> None:
    def broken(*args: Any, **kwargs: Any) -> None:
        raise raised

    monkeypatch.setattr(records, "insert_records", broken)
    data = site.run("""
        export default async (input, ctx) => {
          try { await ctx.records.create("Tasks", {Title: "x"}); return {code: 0}; }
          catch (e) { return {code: 0, data: {code: e.code, message: e.message}}; }
        }""")
    assert data["code"] == code and "Retry: retry later" in data["message"]
    assert "a platform bug" not in data["message"]
    assert ("a platform bug" in capsys.readouterr().err) is (code == "internal_error")
    assert site.records() == []


def test_run_faas_refuses_to_join_an_open_transaction(site: FaasSite) -> None:
    with site.platform.store.read(), pytest.raises(RuntimeError, match="outside a store"):
        site.run("export default async () => ({code: 0})")


@needs_node
def test_writes_before_a_crash_are_kept_and_reported(site: FaasSite) -> None:
    failure = site.fail("""
        export default async (input, ctx) => {
          await ctx.records.create("Tasks", {Title: "first"});
          await ctx.records.create("Tasks", {Title: "second"});
          throw new Error("boom");
        }""", Code.EXECUTION_FAILED)
    assert "Executed: partly: 2 record write calls completed" in failure.msg
    assert "Retry: do not retry before checking" in failure.msg
    assert [r["Title"] for r in site.records()] == ["first", "second"]


@needs_node
def test_unbound_tables_are_out_of_reach(site: FaasSite, api: Api) -> None:
    hidden = make_table(api, site.base, "Salaries", [{"name": "Amount", "type": "number"}])
    data = site.run("""
        export default async (input, ctx) => {
          try { await ctx.records.list(input.hidden); return {code: 0, data: "listed"}; }
          catch (e) { return {code: 0, data: e.code}; }
        }""", {"hidden": hidden["id"]})
    assert data == "table_not_found"


@needs_node
def test_four_concurrent_runs(site: FaasSite) -> None:
    source = """
        export default async (input, ctx) => {
          const created = await ctx.records.create("Tasks", {Title: input.title});
          await new Promise(r => setTimeout(r, 50));
          const again = await ctx.records.get("Tasks", created.record_id);
          return {code: 0, data: again.fields.Title};
        }"""
    titles = [f"task {n}" for n in range(4)]
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(lambda title: site.run(source, {"title": title}), titles))
    assert results == titles
    assert sorted(r["Title"] for r in site.records()) == titles


# -------------------------------------------------------------- without Node.js


def test_missing_node_is_a_clear_execution_failure(
        site: FaasSite, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("BASEDB_NODE", str(tmp_path / "no-such-node"))
    assert node_version() is None
    failure = site.fail("export default async () => ({code: 0})", Code.EXECUTION_FAILED)
    assert failure.msg.startswith("Node.js 20+ is required to run FaaS functions. Fix:")
    assert "Executed: no" in failure.msg


def test_old_node_is_refused(site: FaasSite, monkeypatch: pytest.MonkeyPatch,
                             tmp_path: Path) -> None:
    fake = tmp_path / "node18"
    fake.write_text("#!/bin/sh\necho v18.19.0\n")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("BASEDB_NODE", str(fake))
    node.version_of.cache_clear()
    assert node_version() == "18.19.0"
    failure = site.fail("export default async () => ({code: 0})", Code.EXECUTION_FAILED)
    assert "(found Node.js 18.19.0)" in failure.msg
