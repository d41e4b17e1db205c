"""`basedb catalog pull`: catalog.json from the live catalog; newly bound table ids
merged into binding.tableIds with every other byte of base-database.jsonc kept."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.deploy_support import (
    app_token_of,
    error_json,
    ok_json,
    platform_data,
    run,
)


def bind_new_table(site: Path, name: str) -> str:
    base = json.loads((site / "catalog.json").read_text(encoding="utf-8"))["baseToken"]
    table = platform_data("POST", f"/bases/{base}/tables",
                     {"name": name, "fields": [{"name": "日期", "type": "datetime"}]})
    platform_data("POST", f"/sites/{app_token_of(site)}/bind_base",
             {"baseToken": base, "tableIds": [table["id"]]})
    return str(table["id"])


def test_an_unchanged_catalog_changes_no_byte(site: Path) -> None:
    config = (site / "base-database.jsonc").read_bytes()
    catalog = (site / "catalog.json").read_bytes()
    result = ok_json("catalog", "pull", "-C", str(site))
    assert result["catalog"]["changed"] is False and result["binding"]["changed"] is False
    assert result["binding"]["added"] == []
    assert (site / "base-database.jsonc").read_bytes() == config
    assert (site / "catalog.json").read_bytes() == catalog
    text = run("catalog", "pull", "-C", str(site))
    assert "catalog.json already up to date: 3 tables" in text.stdout


def test_a_newly_bound_table_joins_catalog_and_binding(site: Path) -> None:
    before = (site / "base-database.jsonc").read_text(encoding="utf-8")
    old_ids = json.loads((site / "catalog.json").read_text("utf-8"))["tables"]
    new_id = bind_new_table(site, "值班")
    result = ok_json("catalog", "pull", "-C", str(site))
    assert result["catalog"]["changed"] is True
    assert result["catalog"]["tablesAdded"] == ["值班"]
    assert result["binding"]["added"] == [new_id]
    assert result["binding"]["tableIds"] == [t["tableId"] for t in old_ids] + [new_id]

    after = (site / "base-database.jsonc").read_text(encoding="utf-8")
    last_old = f'"{old_ids[-1]["tableId"]}"'
    assert after == before.replace(last_old, f'{last_old}, "{new_id}"'), (
        "only the id was added; comments and layout are untouched")
    catalog = json.loads((site / "catalog.json").read_text(encoding="utf-8"))
    assert catalog == platform_data("GET", f"/sites/{app_token_of(site)}/catalog")
    assert ok_json("check", "-C", str(site))["ok"] is True


def test_a_hand_written_multi_line_crlf_config_keeps_its_style(site: Path) -> None:
    config = site / "base-database.jsonc"
    ids = json.loads((site / "catalog.json").read_text("utf-8"))
    table_ids = [t["tableId"] for t in ids["tables"]]
    handwritten = (
        "// my site\r\n{\r\n  \"appToken\": \"" + app_token_of(site) + "\", // the site\r\n"
        "  \"title\": \"团队休假报备\",\r\n  \"binding\": {\r\n"
        "    \"baseToken\": \"" + ids["baseToken"] + "\",\r\n    \"tableIds\": [\r\n"
        + "".join(f"      \"{t}\", /* {i} */\r\n" for i, t in enumerate(table_ids))
        + "    ],\r\n  },\r\n}\r\n")
    config.write_bytes(handwritten.encode("utf-8"))
    new_id = bind_new_table(site, "值班")
    ok_json("catalog", "pull", "-C", str(site))
    assert config.read_bytes().decode("utf-8") == handwritten.replace(
        "    ],\r\n", f"      \"{new_id}\",\r\n    ],\r\n")


def test_a_changed_field_rewrites_the_catalog(site: Path) -> None:
    catalog = json.loads((site / "catalog.json").read_text(encoding="utf-8"))
    members = catalog["tables"][0]
    department = next(f for f in members["fields"] if f["name"] == "部门")
    platform_data("PUT", f"/bases/{catalog['baseToken']}/tables/{members['tableId']}/fields/"
                    f"{department['fieldId']}",
             {"options": [{"name": o["name"]} for o in department["options"]]
              + [{"name": "财务部"}]})
    result = ok_json("catalog", "pull", "-C", str(site))
    assert result["catalog"]["changed"] is True and result["catalog"]["tablesAdded"] == []
    pulled = json.loads((site / "catalog.json").read_text(encoding="utf-8"))
    options = next(f for f in pulled["tables"][0]["fields"] if f["name"] == "部门")["options"]
    assert {"name": "财务部"} in options


def test_a_missing_binding_is_created(site: Path) -> None:
    config = site / "base-database.jsonc"
    config.write_text('{"appToken": "' + app_token_of(site) + '", "title": "t"}\n',
                      encoding="utf-8")
    result = ok_json("catalog", "pull", "-C", str(site))
    catalog = json.loads((site / "catalog.json").read_text(encoding="utf-8"))
    assert result["binding"]["tableIds"] == [t["tableId"] for t in catalog["tables"]]
    doc = json.loads(config.read_text(encoding="utf-8"))
    assert doc["binding"] == {"tableIds": result["binding"]["tableIds"],
                              "baseToken": catalog["baseToken"]}


def test_a_binding_that_is_not_an_object_is_named(site: Path) -> None:
    config = site / "base-database.jsonc"
    config.write_text('{"appToken": "' + app_token_of(site) + '", "binding": []}\n',
                      encoding="utf-8")
    result = run("catalog", "pull", "-C", str(site), "--json")
    assert result.exit_code == 2
    error = error_json(result)
    assert error["code"] == "WORKSPACE_CONFIG_INVALID"
    assert "base-database.jsonc" in error["message"] and "binding" in error["message"]


def test_a_different_base_token_is_warned_about(site: Path) -> None:
    config = site / "base-database.jsonc"
    text = config.read_text(encoding="utf-8")
    base = json.loads((site / "catalog.json").read_text("utf-8"))["baseToken"]
    config.write_text(text.replace(base, "basSomethingElse1"), encoding="utf-8")
    result = run("catalog", "pull", "-C", str(site))
    assert result.exit_code == 0, result.stderr
    assert "Warning: binding.baseToken is basSomethingElse1" in result.stderr


def test_an_unknown_site_is_an_api_error(site: Path) -> None:
    config = site / "base-database.jsonc"
    config.write_text('{"appToken": "PrjNoSuchSite0001"}', encoding="utf-8")
    result = run("catalog", "pull", "-C", str(site), "--json")
    assert result.exit_code == 1
    assert "PrjNoSuchSite0001" in error_json(result)["message"]


def test_a_table_id_that_is_not_a_string_is_named_at_its_entry(site: Path) -> None:
    config = site / "base-database.jsonc"
    text = config.read_text(encoding="utf-8")
    config.write_text(text.replace('"tableIds": [', '"tableIds": [42, ', 1), encoding="utf-8")
    # catalog pull only merges ids into the array, so it must not be what check prescribes
    assert ok_json("catalog", "pull", "-C", str(site))["binding"]["changed"] is False
    result = run("check", "-C", str(site), "--json")
    assert result.exit_code == 1
    [error] = json.loads(result.stdout)["errors"]
    assert (error["code"], error["pointer"]) == ("WORKSPACE_CONFIG_INVALID",
                                                 "/binding/tableIds/0")
    assert error["message"] == "/binding/tableIds/0 is a number, not a table id string."
    assert "catalog pull" not in error["fix"] and "string" in error["fix"]
