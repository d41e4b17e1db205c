"""A site builder's day with the CLI alone: the blank template → tables and fields →
bind → a Database Function → check → `basedb dev` (an edit to the function answered
through the dev server, nothing deployed) → deploy → production → the call in
`basedb logs`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.cli.deploy_support import api_data, ok_json
from tests.dev_support import EventStream, dev_session


def write_json(path: Path, doc: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, ensure_ascii=False, indent=2), encoding="utf-8")


def write_function(site: Path, version: str) -> None:
    write_json(site / "database-functions" / "orderCount" / "function.json", {
        "name": "orderCount",
        "description": "按状态统计订单数与金额合计。用于回答某状态的订单有多少",
        "meta": {"params": [{"name": "status", "kind": "TEXT", "enum": ["待付款", "已完成"],
                             "description": "订单状态，按用户的问题选择"}]}})
    (site / "database-functions" / "orderCount" / "main.sql").write_text(
        f"SELECT '{version}' AS version, count(*) AS orders, "
        'coalesce(sum("金额"), 0) AS total\nFROM "订单" WHERE "状态" = $1\n',
        encoding="utf-8")


def test_a_site_built_checked_developed_and_released_from_the_cli(tmp_path: Path) -> None:
    site = tmp_path / "orders"
    created = ok_json("init", str(site), "--template", "blank", "--name", "订单看板",
                      "--description", "团队的订单看板")
    app = created["appToken"]
    c = ("-C", str(site))

    # The schema, from the command line.
    ok_json("table", "create", "订单", "--field", "客户:text", "--field", "金额:number", *c)
    ok_json("field", "create", "订单", "状态", "--type", "select", "--option", "待付款",
            "--option", "已完成", *c)
    fields = ok_json("field", "list", "订单", *c)
    assert {f["name"] for f in fields["fields"]} >= {"客户", "金额", "状态"}
    ok_json("bind", "订单", *c)
    catalog = json.loads((site / "catalog.json").read_text(encoding="utf-8"))
    assert "订单" in {table["name"] for table in catalog["tables"]}

    # A function over it, checked.
    write_function(site, "v1")
    report = ok_json("check", *c)
    assert report["ok"] is True, report

    # The dev loop: an edit to the function is what the page's calls run, at once.
    with dev_session(site) as dev:
        first = dev.invoke("orderCount", {"status": "待付款"})
        assert first.status_code == 200, first.text
        assert first.json()["data"]["rows"][0]["version"] == "v1"
        stream = EventStream(dev.runner.port)
        try:
            stream.next()  # hello
            write_function(site, "v2")  # saved: the watcher re-checks and syncs
            while stream.next()[0] != "reload":
                pass
        finally:
            stream.close()
        edited = dev.invoke("orderCount", {"status": "待付款"})
        assert edited.json()["data"]["rows"][0]["version"] == "v2", edited.text
    assert ok_json("deployments", "list", *c)["deployments"] == []  # nothing deployed

    # Release it, and find the call in the log.
    ok_json("deploy", *c)
    ok_json("deploy", "--production", "--yes", *c)
    rows = api_data(site, "POST", f"/sites/{app}/functions/orderCount/invoke",
                    {"params": {"status": "已完成"}}, params={"env": "prod"})["rows"]
    assert rows == [{"version": "v2", "orders": 0, "total": 0}]
    calls = [entry for entry in ok_json("logs", *c)["entries"]
             if entry["kind"] == "call" and entry.get("env") == "prod"]
    assert calls and calls[-1]["functionId"] == "orderCount" and calls[-1]["code"] == 0
    one = ok_json("logs", calls[-1]["logId"], *c)
    assert [entry["logId"] for entry in one["entries"]] == [calls[-1]["logId"]]
