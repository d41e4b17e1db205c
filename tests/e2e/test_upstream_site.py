"""An upstream-style site runs unchanged in headless Chromium: its page imports the SDK
by upstream's name and starts through `startBaseApp` inside a host frame, and calls a
Database Function, a Mutation, a FaaS handler that reads `projectId`, and AI Functions
aggregate, streamed and as a media task (against an OpenAI-compatible server on
loopback, tests/ai_stub.py). The same files run under `basedb dev`, then on a preview
and in production on `basedb serve`, where the browser signs in as a member does: the
page origin sends it to the platform's form, and back with a site-scoped session.

Needs Chromium and Playwright's Python package, as tests/e2e/test_dev_browser.py."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.ai_stub import IMAGE_URL, MODEL, PIECES, OpenAIStub
from tests.cli.deploy_support import app_token_of, init_site, run
from tests.dev_support import dev_session
from tests.processes import CHROMIUM, NO_CHROMIUM, interrupt

playwright_api = pytest.importorskip(
    "playwright.sync_api", reason="Playwright's Python package is not installed "
    "(pip install -e '.[test]')")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason=NO_CHROMIUM)
WAIT_MS = 60_000

# ------------------------------------------------------------------ the site

INDEX_HTML = """<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Upstream-style page</title>
  <script type="module" src="./main.js"></script>
</head>
<body><pre id="result"></pre></body>
</html>
"""

# The page frame's host, as upstream's builder holds a page: it waits for the ready report.
HOST_HTML = """<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Host</title>
  <script>
    addEventListener("message", (event) => {
      if (event.origin === location.origin) window.readyReport = event.data;
    });
  </script>
</head>
<body><iframe id="app" src="./index.html" title="app"></iframe></body>
</html>
"""

MAIN_JS = """import {
  startBaseApp, invokeDatabaseFunction, invokeMutation, invokeFaaS, callSiteAIFunction,
  invokeSiteAIFunctionStream, runSiteAIMediaTask, siteToken,
} from "@lark-base-open/base-database-app-sdk/page";
import * as legacy from "database-runtime";

startBaseApp(async ({ env }) => {
  const result = { env, siteToken, oneModule: legacy.startBaseApp === startBaseApp };
  const periods = await invokeDatabaseFunction("listPeriods", {});
  result.periods = periods.rows.length;
  result.mutation = await invokeMutation("registerMember", {
    name: "Ann", department: "研发部", email: null });
  result.faas = await invokeFaaS("whoAmI", {});
  result.ai = await callSiteAIFunction("answerQuestion", { topic: "leave" });
  const deltas = [];
  let done = null;
  for await (const chunk of invokeSiteAIFunctionStream("answerQuestion", { topic: "leave" })) {
    if (chunk.type === "delta") deltas.push(chunk.delta);
    else done = chunk;
  }
  result.stream = { deltas, done };
  result.media = await runSiteAIMediaTask("drawCover", { title: "Spring" }, { intervalMs: 50 });
  try {
    await invokeDatabaseFunction("listTeamLeave", { periodId: 42, offset: 0 });
  } catch (error) {
    result.refused = { name: error.name, code: error.code, msg: error.msg, logId: error.logId };
  }
  document.getElementById("result").textContent = JSON.stringify(result);
});
"""

WHO_AM_I = {
    "name": "whoAmI",
    "description": "Says which site and environment the handler runs for (read-only)",
    "inputSchema": {"type": "object", "properties": {}, "additionalProperties": False},
}
WHO_AM_I_HANDLER = """export default async function (input, ctx) {
  return { code: 0, msg: "ok", data: { projectId: ctx.projectId, env: ctx.env } };
}
"""
ANSWER = {
    "name": "answerQuestion", "capability": "text",
    "description": "Answers a member's question about leave planning in a few sentences",
    "prompt": "Answer briefly about {{topic}}.",
    "inputSchema": {"type": "object", "properties": {
        "topic": {"type": "string", "description": "What the member asks about"}},
        "required": ["topic"]},
}
DRAW = {
    "name": "drawCover", "capability": "image",
    "description": "Draws a cover image for a leave period's announcement",
    "prompt": "A calm illustration for the {{title}} leave period",
    "inputSchema": {"type": "object", "properties": {
        "title": {"type": "string", "description": "The period's title"}},
        "required": ["title"]},
}


def write_upstream_site(root: Path) -> None:
    """The example site with an upstream-style page and the functions it calls."""
    (root / "src" / "index.html").write_text(INDEX_HTML, encoding="utf-8")
    (root / "src" / "host.html").write_text(HOST_HTML, encoding="utf-8")
    (root / "src" / "main.js").write_text(MAIN_JS, encoding="utf-8")
    faas = root / "faas" / "whoAmI"
    faas.mkdir(parents=True)
    (faas / "function.json").write_text(json.dumps(WHO_AM_I), encoding="utf-8")
    (faas / "index.mjs").write_text(WHO_AM_I_HANDLER, encoding="utf-8")
    for key, declaration in (("answerQuestion", ANSWER), ("drawCover", DRAW)):
        (root / "ai" / key).mkdir(parents=True)
        (root / "ai" / key / "function.json").write_text(json.dumps(declaration),
                                                         encoding="utf-8")


# ---------------------------------------------------------------- the checks


def check_result(page: Any, app_token: str, faas_env: str) -> None:
    """What the page reported, read once its host frame has the ready report."""
    page.wait_for_function("() => window.readyReport !== undefined")
    report = page.evaluate("() => window.readyReport")
    frame = page.frame_locator("#app")
    result = json.loads(frame.locator("#result").text_content(timeout=WAIT_MS))
    assert report == {"type": "base-app:ready", "siteToken": app_token, "env": result["env"]}
    assert result["siteToken"] == app_token and result["oneModule"] is True
    assert result["periods"] >= 1
    assert len(result["mutation"]["recordIds"]) == 1
    assert result["faas"] == {"projectId": app_token, "env": faas_env}
    assert result["ai"] == {"text": "".join(PIECES), "model": MODEL,
                            "usage": {"total_tokens": 9}}
    assert result["stream"]["deltas"] == list(PIECES)
    assert result["stream"]["done"]["text"] == "".join(PIECES)
    assert result["media"]["status"] == "succeeded"
    assert result["media"]["result"] == {"media": [{"url": IMAGE_URL, "type": "image"}]}
    refused = result["refused"]
    assert refused["name"] == "BasedbError" and refused["code"] in (9499, 800004002)
    assert "/params/periodId" in refused["msg"] and refused["logId"]


@pytest.fixture
def stub(monkeypatch: pytest.MonkeyPatch) -> Iterator[OpenAIStub]:
    with OpenAIStub(hold=False) as running:
        monkeypatch.setenv("BASEDB_AI_BASE_URL", running.base_url)
        monkeypatch.setenv("BASEDB_AI_MODEL", MODEL)
        monkeypatch.delenv("BASEDB_AI_API_KEY", raising=False)
        yield running


@contextmanager
def chromium_page(storage: dict[str, Any] | None = None) -> Iterator[Any]:
    """A page of a fresh headless Chromium (with cookies from `storage`). Playwright
    runs an event loop on this thread while it is open, so the embedded platform's
    client (the CLI, `basedb dev`) is opened and closed outside it."""
    with playwright_api.sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=CHROMIUM, headless=True)
        try:
            page = browser.new_context(storage_state=storage).new_page()
            page.set_default_timeout(WAIT_MS)
            yield page
        finally:
            browser.close()


@contextmanager
def serving(data: Path) -> Iterator[str]:
    """`basedb serve` on a free port over `data` (with this process's environment, the
    AI endpoint included); its URL."""
    process = subprocess.Popen(
        [sys.executable, "-m", "basedb", "serve", "--port", "0", "--data", str(data)],
        stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        assert process.stderr is not None
        first = process.stderr.readline()
        match = re.fullmatch(r"basedb platform listening on (http://127\.0\.0\.1:\d+)\n", first)
        assert match, first + (process.stderr.read() if process.poll() is not None else "")
        yield match.group(1)
    finally:
        interrupt(process)


def sign_in_and_open(page: Any, url: str, token: str) -> None:
    """Open a page as a member who has no session yet: the page origin sends the browser
    to the platform's form, which sends it back signed in, to the page asked for."""
    page.goto(url)
    page.wait_for_selector("#token")
    assert "/_basedb/sign-in" in page.url and ".localhost" not in page.url.split("/")[2]
    page.fill("#token", token)
    page.click("button[type=submit]")
    page.wait_for_url(url)


WITHOUT_AI = """async () => {
  const sdk = await import("@lark-base-open/base-database-app-sdk/page");
  const calls = [
    () => sdk.callSiteAIFunction("answerQuestion", { topic: "x" }),
    async () => {
      for await (const chunk of sdk.invokeSiteAIFunctionStream("answerQuestion",
                                                               { topic: "x" })) {}
    },
    () => sdk.runSiteAIMediaTask("drawCover", { title: "x" }),
  ];
  const refusals = [];
  for (const call of calls) {
    try {
      await call();
      refusals.push(null);
    } catch (error) {
      refusals.push([error.code, error.msg.includes("Fix:"), Boolean(error.logId)]);
    }
  }
  return refusals;
}"""


@pytest.mark.slow  # Chromium through dev, a preview and production (about 10 s)
def test_an_upstream_site_runs_unchanged_under_dev_preview_and_production(
        tmp_path: Path, isolated_dirs: dict[str, Path], stub: OpenAIStub,
        monkeypatch: pytest.MonkeyPatch) -> None:
    root = init_site(tmp_path / "site")
    write_upstream_site(root)
    app_token = app_token_of(root)
    checked = run("check", "-C", str(root))
    assert checked.exit_code == 0, checked.stdout + checked.stderr

    # basedb dev: the page from disk, calls on the development draft.
    with dev_session(root) as dev, chromium_page() as page:
        page.goto(dev.page_url + "host.html")
        check_result(page, app_token, "dev")
        # Without an AI endpoint, each way of calling AI is refused with its Fix.
        monkeypatch.delenv("BASEDB_AI_BASE_URL")
        assert page.evaluate(WITHOUT_AI) == [[800004011, True, True]] * 3
        monkeypatch.setenv("BASEDB_AI_BASE_URL", stub.base_url)

    # A preview, then production, on basedb serve.
    deployed = run("deploy", "-C", str(root), "--json")
    assert deployed.exit_code == 0, deployed.stderr
    with serving(isolated_dirs["data"]) as url:
        token = (isolated_dirs["data"] / "owner.token").read_text().strip()
        origin = url.replace("127.0.0.1", f"{app_token.lower()}.localhost")
        with chromium_page() as page:
            sign_in_and_open(page, f"{origin}/sites/{app_token}/preview/host.html", token)
            check_result(page, app_token, "preview")
            session = page.context.storage_state()

        promoted = run("deploy", "-C", str(root), "--production", "--yes", "--json")
        assert promoted.exit_code == 0, promoted.stderr
        with chromium_page(session) as page:  # the session the sign-in gave
            page.goto(f"{origin}/sites/{app_token}/host.html")
            check_result(page, app_token, "prod")
    assert any(path == "/v1/chat/completions" and body.get("stream")
               for path, body in stub.requests)
