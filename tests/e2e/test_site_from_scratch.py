"""A site built from nothing with `basedb api`, as a developer or coding agent does it:

init the blank template → create a Base table with fields and records through the Base
API → bind it to the site → `basedb catalog pull` → declare a Database Function and a
Mutation over the new table → check → deploy preview and production → invoke both.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.cli.deploy_support import api_data, ok_json


def write_json(path: Path, doc: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, ensure_ascii=False, indent=2), encoding="utf-8")


def test_build_a_site_from_scratch_through_the_api(tmp_path: Path) -> None:
    site = tmp_path / "orders"
    created = ok_json("init", str(site), "--template", "blank", "--title", "订单看板")
    app, base = created["appToken"], created["baseToken"]

    table = api_data(site, "POST", f"/bases/{base}/tables", {
        "name": "订单",
        "fields": [
            {"name": "客户", "type": "text"},
            {"name": "金额", "type": "number"},
            {"name": "状态", "type": "select", "options": [{"name": "待付款"},
                                                          {"name": "已完成"}]},
        ]})
    rows = [["甲公司", 120, "已完成"], ["乙公司", 80, "待付款"], ["甲公司", 30, "待付款"]]
    api_data(site, "POST", f"/bases/{base}/tables/{table['id']}/records/batch_create",
        {"fields": ["客户", "金额", "状态"], "rows": rows})
    api_data(site, "POST", f"/sites/{app}/bind_base",
        {"baseToken": base, "tableIds": [table["id"]]})

    pulled = ok_json("catalog", "pull", "-C", str(site))
    assert table["id"] in json.dumps(pulled)
    config = (site / "base-database.jsonc").read_text(encoding="utf-8")
    assert table["id"] in config and config.lstrip().startswith("//"), \
        "table id merged, comments kept"

    write_json(site / "database-functions" / "ordersByStatus" / "function.json", {
        "name": "ordersByStatus",
        "description": "按状态列出订单及金额，金额从高到低。用于查看待付款或已完成的订单；"
                       "改状态时改用 completeOrder",
        "meta": {"params": [{"name": "status", "kind": "TEXT", "enum": ["待付款", "已完成"],
                             "description": "订单状态，按用户的问题选择"}]}})
    (site / "database-functions" / "ordersByStatus" / "main.sql").write_text(
        'SELECT record_id AS order_id, "客户" AS customer, "金额" AS amount\n'
        'FROM "订单" WHERE "状态" = $1 ORDER BY "金额" DESC\n', encoding="utf-8")
    write_json(site / "mutations" / "completeOrder" / "function.json", {
        "name": "completeOrder",
        "description": "把一个待付款订单标记为已完成（写入）。查看订单改用 ordersByStatus",
        "spec": {"table": "订单", "action": "update", "recordId": "$orderId",
                 "precondition": {"状态": "待付款"}, "set": {"状态": "已完成"},
                 "params": [{"name": "orderId", "kind": "RECORD_ID",
                             "description": "订单记录 ID；先调用 ordersByStatus，从 "
                                            "rows[].order_id 选择"}]}})

    report = ok_json("check", "-C", str(site))
    assert report["ok"] is True and report["functionHints"] == [], report
    ok_json("deploy", "-C", str(site))
    ok_json("deploy", "-C", str(site), "--production", "--yes")

    invoke = f"/sites/{app}/functions/{{}}/invoke"
    pending = api_data(site, "POST", invoke.format("ordersByStatus"),
                  {"params": {"status": "待付款"}}, params={"env": "prod"})["rows"]
    assert [(r["customer"], r["amount"]) for r in pending] == [("乙公司", 80), ("甲公司", 30)]
    done = api_data(site, "POST", invoke.format("completeOrder"),
               {"params": {"orderId": pending[0]["order_id"]}}, params={"env": "prod"})
    assert done["recordIds"] == [pending[0]["order_id"]]
    again = api_data(site, "POST", invoke.format("completeOrder"),
                {"params": {"orderId": pending[0]["order_id"]}}, params={"env": "prod"})
    assert again["recordIds"] == [] and again["precondition_failed"] == [pending[0]["order_id"]]
    pending = api_data(site, "POST", invoke.format("ordersByStatus"),
                  {"params": {"status": "待付款"}}, params={"env": "prod"})["rows"]
    assert [r["customer"] for r in pending] == ["甲公司"]
