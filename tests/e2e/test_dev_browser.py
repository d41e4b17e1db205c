"""`basedb dev` in headless Chromium: the page served from disk reloads by itself after
an edit to the page and after an edit to a function, and its calls (through the page
runtime) reach the edited function, with nothing deployed.

Needs Chromium (Debian: apt-get install chromium; .ci/run installs it) and Playwright's
Python package (a test dependency) as the driver; skips, saying which is missing."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.cli.deploy_support import init_site
from tests.dev_support import Dev, dev_session
from tests.processes import CHROMIUM, NO_CHROMIUM

playwright_api = pytest.importorskip(
    "playwright.sync_api", reason="Playwright's Python package is not installed "
    "(pip install -e '.[test]')")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason=NO_CHROMIUM)
WAIT_MS = 30_000

FIRST_MEMBER = """async () => {
  const runtime = await import("/_basedb/runtime.js");
  const data = await runtime.invokeDatabaseFunction("listMembers", {});
  return data.rows[0];
}"""


@pytest.fixture
def browser_page(tmp_path: Path) -> Iterator[tuple[Dev, Any]]:
    root = init_site(tmp_path / "site")
    with dev_session(root) as dev, playwright_api.sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=CHROMIUM, headless=True)
        try:
            page = browser.new_page()
            page.set_default_timeout(WAIT_MS)
            yield dev, page
        finally:
            browser.close()


def test_page_and_function_edits_show_up_without_a_deploy(
        browser_page: tuple[Dev, Any]) -> None:
    dev, page = browser_page
    page.goto(dev.page_url)
    page.wait_for_function("() => document.readyState === 'complete'")
    assert "email" in page.evaluate(FIRST_MEMBER)

    # A page edit: the open tab reloads by itself and shows it.
    html = dev.session.root / "src" / "index.html"
    html.write_text(html.read_text(encoding="utf-8").replace(
        "</body>", '<p id="dev-edit">edited on disk</p></body>'), encoding="utf-8")
    page.wait_for_selector("#dev-edit")

    # A function edit: after the reload, the page's call runs the edited query.
    page.evaluate("() => { window.beforeFunctionEdit = true; }")
    sql = dev.session.root / "database-functions" / "listMembers" / "main.sql"
    text = sql.read_text(encoding="utf-8")
    lines = [line for line in text.splitlines() if "email" not in line]
    sql.write_text("\n".join(lines).replace(",\nFROM", "\nFROM") + "\n", encoding="utf-8")
    page.wait_for_function("() => window.beforeFunctionEdit === undefined")  # reloaded
    member = page.evaluate(FIRST_MEMBER)
    assert "email" not in member and "name" in member
    assert any(line.startswith("call listMembers: ok") for line in dev.lines)
