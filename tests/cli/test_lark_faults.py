"""What a stand-in cannot produce on demand, injected on the way to the real platform:
a scope error in the middle of a deploy, a burst of rate limits, for a Feishu bot
profile made only of LARK_APP_ID / LARK_APP_SECRET (the CI set-up)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import respx

from basedb.platform import open_platform
from basedb.platform.domain import lark_auth
from tests.cli.deploy_support import ENDPOINT, Faults, run


@pytest.fixture
def ci(monkeypatch: pytest.MonkeyPatch) -> Iterator[Faults]:
    """The embedded platform behind ENDPOINT as the bot's "Feishu", through Faults."""
    with open_platform().store.write() as conn:
        app = lark_auth.register_app(conn, "CI")
    app_id, secret = app.app_id, app.app_secret
    for name, value in {"LARK_APP_ID": app_id, "LARK_APP_SECRET": secret,
                        "BASEDB_LARK_OPEN_URL": ENDPOINT, "BASEDB_LARK_ACCOUNTS_URL": ENDPOINT,
                        "BASEDB_PROFILE": "ci"}.items():
        monkeypatch.setenv(name, value)
    faults = Faults()
    with respx.mock(base_url=ENDPOINT, assert_all_called=False) as router:
        router.route().mock(side_effect=faults.handle)
        yield faults


def deploy(site: Path, *args: str) -> tuple[int, dict]:  # type: ignore[type-arg]
    result = run("deploy", "-C", str(site), "--json", *args)
    document = json.loads(result.stdout if result.exit_code == 0
                          else result.stderr.strip().splitlines()[-1])
    return result.exit_code, document


def test_a_scope_error_mid_deploy_names_the_scope_and_the_console(ci: Faults,
                                                                  tmp_path: Path) -> None:
    created = run("init", str(tmp_path / "site"), "--template", "blank", "--json")
    assert created.exit_code == 0, created.stderr
    ci.answer("PUT", "/draft/functions", httpx.Response(400, json={
        "code": 99991672, "msg": "Access denied. One of the following scopes is required: "
        "[base:app:update]", "error": {"log_id": "LOGSCOPE", "permission_violations": [
            {"type": "action_privilege_required", "subject": "base:app:update"}]}}))
    code, document = deploy(tmp_path / "site")
    assert code == 1
    error = document["error"]
    assert document["identity"] == "bot" and error["type"] == "permission"
    assert error["code"] == 99991672 and "base:app:update" in error["hint"]
    assert error["console_url"].startswith(f"{ENDPOINT}/page/scope-apply?clientID=cli_")
    assert error["detail"]["stage"] == "draft_functions" and error["detail"]["outcomeKnown"]
    assert ci.count("GET", "/draft/functions") == 0, "a refusal ran nothing: no read-back"


def test_a_burst_of_rate_limits_is_waited_out(ci: Faults, tmp_path: Path,
                                              pauses: list[float]) -> None:
    assert run("init", str(tmp_path / "site"), "--template", "blank").exit_code == 0
    ci.add("POST", "/deployments", "code 99991400 429", times=3)
    code, document = deploy(tmp_path / "site")
    assert code == 0, document
    assert ci.count("POST", "/deployments") == 4 and len(pauses) >= 3
    assert ci.count("POST", "/tenant_access_token/internal") == 1, "the token was cached"
