"""`basedb dev` end to end over HTTP: an edit to the page and an edit to a function are
seen through the live-reload channel and the page's calls, with nothing deployed."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from basedb.dev.changes import Changes
from tests.cli.deploy_support import init_site, local_client
from tests.dev_support import Dev, EventStream, dev_session


@pytest.fixture
def dev(tmp_path: Path) -> Dev:
    root = init_site(tmp_path / "site")
    with dev_session(root) as running:
        yield running


def _save(path: Path, text: str) -> None:
    path.write_text(text, encoding="utf-8")


def _next_event(stream: EventStream, wanted: str) -> object:
    while True:
        name, data = stream.next()
        if name == wanted:
            return data


def test_a_page_edit_reloads_the_page_and_is_served_from_disk(dev: Dev) -> None:
    stream = EventStream(dev.runner.port)
    try:
        name, hello = stream.next()
        assert name == "hello" and hello["errors"] == 0
        page = dev.session.root / "src" / "index.html"
        _save(page, page.read_text(encoding="utf-8").replace("</body>",
                                                               "<p id=edited>v2</p></body>"))
        assert "src/index.html" in _next_event(stream, "reload")["paths"]
    finally:
        stream.close()
    with dev.http() as http:
        served = http.get(dev.page_url)
    assert "<p id=edited>v2</p>" in served.text
    assert '/_basedb/dev/client.js' in served.text  # the live-reload script is injected


def test_a_function_edit_reaches_the_page_calls_without_a_deploy(dev: Dev) -> None:
    before = dev.invoke("listMembers", {})
    assert before.json()["code"] == 0
    assert "email" in before.json()["data"]["rows"][0]
    stream = EventStream(dev.runner.port)
    try:
        stream.next()  # hello
        sql = dev.session.root / "database-functions" / "listMembers" / "main.sql"
        text = sql.read_text(encoding="utf-8")
        assert '"email"' in text or "email" in text
        _save(sql, _without_email(text))
        _next_event(stream, "reload")
    finally:
        stream.close()
    after = dev.invoke("listMembers", {})
    assert after.json()["code"] == 0, after.json()
    assert "email" not in after.json()["data"]["rows"][0]
    assert any("re-checked listMembers" in line for line in dev.lines)
    assert any(line.startswith("call listMembers: ok") and "LogID" in line
               for line in dev.lines)
    # Nothing was deployed: no preview, no prod, and the site's draft is empty.
    with local_client() as client:
        site = dev.session.site.app_token
        assert client.request("GET", f"/sites/{site}/deployments")["data"]["deployments"] == []
        draft = client.request("GET", f"/sites/{site}/draft/functions")["data"]
        assert draft["databaseFunctions"] == []


def test_check_errors_are_printed_and_keep_the_last_good_draft(dev: Dev) -> None:
    stream = EventStream(dev.runner.port)
    try:
        stream.next()
        sql = dev.session.root / "database-functions" / "listMembers" / "main.sql"
        _save(sql, 'SELECT "no_such_field" FROM "成员"\n')
        status = _next_event(stream, "status")
    finally:
        stream.close()
    assert status["errors"] >= 1 and "listMembers" in status["message"]
    line = dev.wait_for_line("SQL_UNKNOWN")
    assert line.startswith("database-functions/listMembers/main.sql:")
    assert any("not updated" in line for line in dev.lines)
    assert dev.invoke("listMembers", {}).json()["code"] == 0  # still the last good one


def test_a_failing_faas_call_is_logged_with_its_log_id(dev: Dev) -> None:
    answer = dev.invoke("managePeriod", {"action": "close", "periodId": "recMissing"})
    envelope = answer.json()
    assert envelope["code"] != 0
    line = dev.wait_for_line("call managePeriod: error")
    assert answer.headers["x-tt-logid"] and answer.headers["x-tt-logid"] in line


def test_ctrl_c_discards_the_development_draft(tmp_path: Path) -> None:
    root = init_site(tmp_path / "site")
    with dev_session(root) as running:
        app = running.session.site.app_token
        with local_client() as client:
            assert client.request("GET", f"/sites/{app}/dev/functions")["data"]["revision"] == 1
    with local_client() as client:
        assert client.request("GET", f"/sites/{app}/dev/functions")["data"]["revision"] is None


def test_only_the_changed_function_is_read_again(tmp_path: Path) -> None:
    root = init_site(tmp_path / "site")
    with dev_session(root) as running:
        # Applied by hand (no file is written, so the watcher has nothing to add).
        started = time.monotonic()
        result = running.session.apply(Changes(functions={"listPeriods"},
                                               paths=["database-functions/listPeriods"]))
        assert result.synced and result.reloaded
        assert running.session._checker._loader.reread == ["listPeriods"]
        assert time.monotonic() - started < 30


def _without_email(sql: str) -> str:
    lines = [line for line in sql.splitlines() if "email" not in line]
    joined = "\n".join(lines)
    return joined.replace(",\nFROM", "\nFROM").replace(", \nFROM", "\nFROM") + "\n"


def test_a_new_faas_is_callable_and_its_output_streams_to_the_terminal(dev: Dev) -> None:
    stream = EventStream(dev.runner.port)
    try:
        stream.next()
        folder = dev.session.root / "faas" / "shout"
        folder.mkdir()
        (folder / "index.mjs").write_text(
            'export default async function (input, ctx) {\n'
            '  console.log("shouting", input.word);\n'
            '  return {code: 7, msg: "too loud"};\n}\n', encoding="utf-8")
        (folder / "function.json").write_text(json.dumps({
            "name": "Shout", "description": "Logs a word, then refuses it (a test).",
            "inputSchema": {"type": "object", "properties": {
                "word": {"type": "string", "description": "The word to shout."}}}}),
            encoding="utf-8")
        _next_event(stream, "reload")
    finally:
        stream.close()
    answer = dev.invoke("shout", {"word": "hey"})
    assert answer.json()["code"] == 800004003
    log_id = answer.headers["x-tt-logid"]
    line = dev.wait_for_line("call shout: error 800004003")
    assert log_id in line and "too loud" in line
    output = dev.wait_for_line("shouting hey")
    assert output.startswith("  | ")
