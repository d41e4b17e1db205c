"""A site's `timezone` governs every datetime its functions read, write, compare and
show, whatever zone the machine running the platform is in.

The platform here runs with TZ=America/New_York while the site and its Base are in
Asia/Shanghai (UTC+8, no daylight saving): any place that still used the host's zone
would be 13 hours off.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from basedb.core.node import node_version
from tests.platform.conftest import Api, make_table
from tests.platform.functions_support import TaskSite, deploy, param, sql_function

ZONE = "Asia/Shanghai"
SHANGHAI = ZoneInfo(ZONE)
HOST_ZONE = "America/New_York"


@pytest.fixture(autouse=True)
def host_in_new_york(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("TZ", HOST_ZONE)
    time.tzset()
    assert time.strftime("%Z") in ("EST", "EDT")
    yield
    monkeypatch.undo()
    time.tzset()


@dataclass
class ZonedSite:
    site: TaskSite
    base: str
    events: str  # table id

    def invoke(self, function_id: str, params: Any = None) -> Any:
        return self.site.invoke(function_id, params)

    def record(self, record_id: str) -> dict[str, Any]:
        found: dict[str, Any] = self.site.api.ok(
            "GET", f"/bases/{self.base}/tables/{self.events}/records/{record_id}")
        return found["fields"]


FUNCTIONS = [
    sql_function("eventsFrom", 'SELECT record_id AS id, "Title", "At" FROM "Events" '
                 'WHERE "At" >= $1 ORDER BY "At"',
                 [param("from", "DATETIME", "Earliest time, ISO 8601 or site time")]),
    sql_function("eventsOn", 'SELECT "Title" FROM "Events" WHERE "At"::date = $1 '
                 'ORDER BY 1', [param("day", "DATE", "The day, site time")]),
    sql_function("clock", 'SELECT now() AS now, CURRENT_DATE AS today, LOCALTIMESTAMP AS '
                 'local, extract(hour FROM now()) AS hour, now()::text AS text, '
                 'count(*) AS n FROM "Events"'),
    sql_function("stamps", 'SELECT "Title", "Created", "At" < "Created" AS past FROM '
                 '"Events" ORDER BY "Title"'),
]
MUTATIONS = [{"functionId": "addEvent", "declaration": {
    "name": "addEvent", "description": "Add an event at a time",
    "spec": {"table": "Events", "action": "create",
             "params": [param("title", "TEXT", "Title of the event"),
                        param("at", "DATETIME", "When it happens (ISO 8601 or site time)")],
             "set": {"Title": "$title", "At": "$at"}}}}]
FAAS = [{"functionId": "addEventAt", "declaration": {
    "name": "addEventAt", "description": "Add an event at milliseconds since 1970",
    "inputSchema": {"type": "object", "properties": {
        "ms": {"type": "integer", "description": "Milliseconds since 1970"}},
        "required": ["ms"], "additionalProperties": False}},
    "handler": "export default async function (input, ctx) {\n"
               "  const made = await ctx.records.create('Events', "
               "{Title: 'from faas', At: input.ms});\n"
               "  return {code: 0, msg: 'ok', data: {id: made.record_id, "
               "zone: ctx.site.timezone}};\n}\n"}]


def zoned_site(api: Api, *, site_zone: str = ZONE, base_zone: str = ZONE) -> ZonedSite:
    base = api.ok("POST", "/bases", json={"name": "Calendar", "timezone": base_zone})
    assert base["timezone"] == base_zone
    events = make_table(api, base["base_token"], "Events", [
        {"name": "Title", "type": "text"}, {"name": "At", "type": "datetime"},
        {"name": "Created", "type": "created_at"}])
    app = api.ok("POST", "/sites/create", json={"title": "Calendar"})["appToken"]
    api.ok("POST", f"/sites/{app}/bind_base",
           json={"baseToken": base["base_token"], "tableIds": [events["id"]]})
    site = TaskSite(api=api, app_token=app, base_token=base["base_token"],
                    tasks_table=events["id"], projects_table="")
    api.ok("PUT", f"/sites/{app}/draft/functions", json={
        "databaseFunctions": FUNCTIONS, "mutations": MUTATIONS, "faas": FAAS,
        "timezone": site_zone})
    deploy(site)
    return ZonedSite(site=site, base=base["base_token"], events=events["id"])


def shanghai_now() -> datetime:
    return datetime.now(UTC).astimezone(SHANGHAI).replace(tzinfo=None)


def close_to_now(text: str) -> bool:
    return abs(datetime.fromisoformat(text) - shanghai_now()) < timedelta(minutes=2)


def test_datetime_params_are_stored_filtered_and_returned_in_the_site_zone(api: Api) -> None:
    zoned = zoned_site(api)
    # 01:00 UTC is 09:00 in Shanghai (in New York it would be 20:00 the day before).
    added = zoned.invoke("addEvent", {"title": "standup", "at": "2025-01-31T01:00:00Z"})
    [record_id] = added["recordIds"]
    assert zoned.record(record_id)["At"] == "2025-01-31 09:00:00"
    zoned.invoke("addEvent", {"title": "lunch", "at": "2025-01-31 12:00:00"})  # site time
    rows = zoned.invoke("eventsFrom", {"from": "2025-01-31T00:30:00Z"})["rows"]
    assert [(r["Title"], r["At"]) for r in rows] == [("standup", "2025-01-31 09:00:00"),
                                                      ("lunch", "2025-01-31 12:00:00")]
    rows = zoned.invoke("eventsFrom", {"from": "2025-01-31T09:30:00+08:00"})["rows"]
    assert [r["Title"] for r in rows] == ["lunch"]
    assert [r["Title"] for r in zoned.invoke("eventsOn", {"day": "2025-01-31"})["rows"]] == [
        "lunch", "standup"]


def test_now_and_current_date_are_the_site_zones(api: Api) -> None:
    zoned = zoned_site(api)
    [row] = zoned.invoke("clock")["rows"]
    assert close_to_now(row["now"]) and close_to_now(row["local"])
    assert row["today"] == shanghai_now().date().isoformat() or close_to_now(
        row["today"] + " 00:00:00")
    assert row["hour"] == datetime.fromisoformat(row["now"]).hour
    assert row["text"].startswith(row["now"]) and row["text"].endswith("+08")


def test_created_times_and_milliseconds_are_written_in_the_site_zone(api: Api) -> None:
    zoned = zoned_site(api)
    [record_id] = zoned.invoke("addEvent", {"title": "now", "at": "2025-01-31 09:00:00"})[
        "recordIds"]
    assert close_to_now(zoned.record(record_id)["Created"])
    [row] = zoned.invoke("stamps")["rows"]
    assert close_to_now(row["Created"]) and row["past"] is True


def test_the_base_api_writes_in_the_bases_zone(api: Api) -> None:
    zoned = zoned_site(api)
    # 2025-01-31T01:00:00Z in milliseconds.
    ms = int(datetime(2025, 1, 31, 1, 0, tzinfo=UTC).timestamp() * 1000)
    created = api.ok("POST", f"/bases/{zoned.base}/tables/{zoned.events}/records",
                     json={"Title": "by api", "At": ms})
    assert created["fields"]["At"] == "2025-01-31 09:00:00"
    assert close_to_now(created["fields"]["Created"])
    batch = api.ok("POST", f"/bases/{zoned.base}/tables/{zoned.events}/records/batch_create",
                   json={"fields": ["Title", "At"], "rows": [["batch", ms]]})
    [batch_id] = batch["record_id_list"]
    assert zoned.record(batch_id)["At"] == "2025-01-31 09:00:00"
    utc = api.ok("POST", "/bases", json={"name": "Elsewhere"})
    assert utc["timezone"] == "UTC"


@pytest.mark.skipif(node_version() is None, reason="Node.js is not installed")
def test_faas_record_writes_use_the_site_zone(api: Api) -> None:
    zoned = zoned_site(api)
    ms = int(datetime(2025, 1, 31, 1, 0, tzinfo=UTC).timestamp() * 1000)
    data = zoned.invoke("addEventAt", {"ms": ms})
    assert data["zone"] == ZONE
    assert zoned.record(data["id"])["At"] == "2025-01-31 09:00:00"


def test_prod_keeps_the_zone_it_was_deployed_with(api: Api) -> None:
    zoned = zoned_site(api)
    app = zoned.site.app_token
    listing = api.ok("GET", f"/sites/{app}/deployments")["deployments"]
    assert [d["timezone"] for d in listing] == [ZONE]
    # A new draft in another zone changes nothing until it is deployed and promoted.
    draft = api.ok("GET", f"/sites/{app}/draft/functions")
    draft.pop("draftRevision")
    api.ok("PUT", f"/sites/{app}/draft/functions", json={**draft, "timezone": "UTC"})
    [row] = zoned.invoke("clock")["rows"]
    assert row["text"].endswith("+08")
    deploy(zoned.site)
    [row] = zoned.invoke("clock")["rows"]
    assert row["text"].endswith("+00")
    assert close_to_now((datetime.fromisoformat(row["now"]) + timedelta(hours=8)).isoformat(
        sep=" "))


def test_the_host_zone_is_really_new_york() -> None:
    # Guards the fixture: a naive local time is New York's here, not Shanghai's.
    assert os.environ["TZ"] == HOST_ZONE
    offset = datetime.now().astimezone().utcoffset()
    assert offset is not None and offset <= timedelta(hours=-4)
