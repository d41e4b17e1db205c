"""The schema commands as a stranger runs them: a site member or an outsider, with their
own token, against the Base and site of someone else. Every change is refused (exit 1,
the platform's answer), the schema and the binding stay as they were, and nothing in the
owner's workspace files changes."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import respx

from basedb.client.profiles import Profile, save_profile
from tests.cli.deploy_support import ENDPOINT, forward, init_site, platform_data, run

STRANGERS = ("member", "outsider")


@pytest.fixture
def owned(tmp_path: Path) -> Iterator[Path]:
    """The owner's blank site, and a profile per stranger at ENDPOINT (the same platform,
    over respx)."""
    site = init_site(tmp_path / "site", "blank")
    app = _config(site)["appToken"]
    for name in STRANGERS:
        user = platform_data("POST", "/users", {"name": name})
        save_profile(Profile(name, ENDPOINT, user["token"]))
        if name == "member":
            platform_data("POST", f"/sites/{app}/members", {"userId": user["user_id"],
                                                            "role": "member"})
    with respx.mock(base_url=ENDPOINT, assert_all_called=False) as router:
        router.route().mock(side_effect=forward)
        yield site


def _config(site: Path) -> dict[str, object]:
    import json5

    doc: dict[str, object] = json5.loads((site / "base-database.jsonc").read_text("utf-8"))
    return doc


def _snapshot(site: Path) -> tuple[object, ...]:
    config = _config(site)
    binding = config["binding"]
    assert isinstance(binding, dict)
    base, app = binding["baseToken"], config["appToken"]
    tables = platform_data("GET", f"/bases/{base}/tables")["tables"]
    fields = [platform_data("GET", f"/bases/{base}/tables/{t['id']}/fields")["fields"]
              for t in tables]
    site_binding = platform_data("GET", f"/sites/{app}")["binding"]
    files = tuple((site / name).read_bytes() for name in ("base-database.jsonc",
                                                           "catalog.json"))
    return tables, fields, site_binding, files


@pytest.mark.parametrize("stranger", STRANGERS)
def test_a_stranger_cannot_change_the_owners_schema_or_binding(owned: Path,
                                                               stranger: str) -> None:
    site = str(owned)
    base = _config(owned)["binding"]["baseToken"]  # type: ignore[index]
    table = _config(owned)["binding"]["tableIds"][0]  # type: ignore[index]
    before = _snapshot(owned)
    attempts = [
        ["table", "create", "偷偷建表", "--base-token", str(base)],
        ["table", "delete", str(table), "--yes", "--base-token", str(base)],
        ["field", "create", str(table), "x", "--type", "text", "--base-token", str(base)],
        ["field", "update", str(table), "名称", "--name", "y", "--base-token", str(base)],
        ["field", "delete", str(table), "名称", "--yes", "--base-token", str(base)],
        ["table", "list", "--base-token", str(base)],
        ["bind", str(table), "-C", site],
        ["unbind", str(table), "--yes", "-C", site],
    ]
    for args in attempts:
        result = run(*args, "--profile", stranger, "--json")
        assert result.exit_code == 1, (args, result.stderr)
        assert "Traceback" not in result.stderr
    assert _snapshot(owned) == before


def test_an_outsider_cannot_link_to_the_site(owned: Path, tmp_path: Path) -> None:
    app = str(_config(owned)["appToken"])
    before = _snapshot(owned)
    result = run("link", "--app-token", app, "-C", str(owned), "--profile", "outsider")
    assert result.exit_code == 1 and app in result.stderr
    assert _snapshot(owned) == before


def test_a_member_links_read_only_and_cannot_deploy(owned: Path) -> None:
    """A member may see the site (and so link a workspace to it) but not change it."""
    app = str(_config(owned)["appToken"])
    linked = run("link", "--app-token", app, "-C", str(owned), "--profile", "member")
    assert linked.exit_code == 0, linked.stderr
    deployed = run("deploy", "-C", str(owned), "--profile", "member")
    assert deployed.exit_code == 1
