"""`basedb secrets`: values go in through stdin or another variable, never the command
line, and never come back out."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.deploy_support import error_json, init_site, ok_json, run


@pytest.fixture
def site(tmp_path: Path) -> str:
    return str(init_site(tmp_path / "site"))


def test_set_from_stdin_list_and_unset(site: str) -> None:
    done = run("secrets", "set", "STRIPE_API_KEY", "-C", site, input="sk_live_abcdef\n")
    assert done.exit_code == 0, done.output
    assert "process.env.STRIPE_API_KEY" in done.stdout and "sk_live_abcdef" not in done.output
    listed = run("secrets", "list", "-C", site)
    assert listed.exit_code == 0 and listed.stdout.startswith("STRIPE_API_KEY  set ")
    assert "sk_live" not in listed.output
    assert ok_json("secrets", "unset", "STRIPE_API_KEY", "-C", site)["deleted"] is True
    assert "has no secrets" in run("secrets", "list", "-C", site).stdout


def test_a_value_without_a_newline_and_the_json_answer(site: str) -> None:
    done = run("secrets", "set", "API_TOKEN", "-C", site, "--json", input="tok-123456")
    assert done.exit_code == 0, done.output
    data = json.loads(done.stdout)
    assert data["name"] == "API_TOKEN" and "tok-123456" not in done.output


def test_a_missing_value_is_a_usage_error(site: str) -> None:
    failed = run("secrets", "set", "API_KEY", "-C", site, "--json", input="")
    assert failed.exit_code == 2 and error_json(failed)["code"] == "SECRET_VALUE_MISSING"
    assert "printf %s" in error_json(failed)["hint"]


def test_a_reserved_name_is_refused_by_the_platform(site: str) -> None:
    failed = run("secrets", "set", "NODE_OPTIONS", "-C", site, "--json",
                 input="--require /tmp/x.js")
    assert failed.exit_code == 1
    assert "reserved" in error_json(failed)["message"]
