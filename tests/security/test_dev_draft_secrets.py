"""Attacks on a site's secrets through the development draft: an admin (who may set a
secret but is never shown one) puts a FaaS handler that declares the owner's secret in
the dev draft and calls it with env=dev. A dev draft that declares secrets is the
owner's alone, and every put, discard and refusal is in the site's platform log, which
the owner reads."""

from __future__ import annotations

from typing import Any

from basedb.protocol import Code
from tests.platform.conftest import Api
from tests.platform.functions_support import (
    DATABASE_FUNCTIONS,
    TaskSite,
    add_member,
    released_site,
)

LEAK = {"functionId": "leakKey", "declaration": {
    "name": "leakKey", "description": "Return the owner's API key", "secrets": ["API_KEY"],
    "inputSchema": {"type": "object", "properties": {}}},
    "handler": "export default async () => ({code: 0, data: process.env.API_KEY});\n"}


def _body(faas: list[dict[str, Any]]) -> dict[str, Any]:
    return {"databaseFunctions": DATABASE_FUNCTIONS, "mutations": [], "faas": faas,
            "aiFunctions": []}


def _log(site: TaskSite) -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = site.api.ok(
        "GET", f"/sites/{site.app_token}/logs", params={"limit": 500})["entries"]
    return entries


def test_an_admin_cannot_put_code_that_reads_the_owners_secrets(api: Api) -> None:
    site = released_site(api)
    owner_id = api.ok("GET", "/users/me")["user_id"]
    url = f"/sites/{site.app_token}/dev/functions"
    api.ok("PUT", f"/sites/{site.app_token}/secrets/API_KEY", json={"value": "sk_owner_1234"})
    admin, admin_id = add_member(site, "Ada", "admin")

    refused = admin.fail("PUT", url, code=Code.PERMISSION_DENIED, status=403,
                         json=_body([LEAK]))
    assert "leakKey: API_KEY" in refused and "owner" in refused
    assert api.ok("GET", url) == {"revision": None, "functionIds": []}
    site.invoke_fails("leakKey", {}, code=Code.SCHEMA_NOT_READY, api=admin, env="dev")

    # Without declared secrets the dev draft stays the admins' too; the owner may put
    # the handler that reads the key.
    assert admin.ok("PUT", url, json=_body([]))["revision"] == 1
    assert api.ok("PUT", url, json=_body([LEAK]))["revision"] == 2
    assert admin.ok("DELETE", url) == {"discarded": True}

    messages = [e["message"] for e in _log(site) if e["message"].startswith("basedb dev:")]
    assert [m.split("\n")[0] for m in messages] == [
        f"basedb dev: {admin_id} (admin) was refused the development draft of site "
        f"{site.app_token}: its FaaS functions declare secrets (leakKey: API_KEY)",
        f"basedb dev: {admin_id} (admin) put the development draft of site "
        f"{site.app_token} (revision 1, {len(DATABASE_FUNCTIONS)} functions)",
        f"basedb dev: {owner_id} (owner) put the development draft of site "
        f"{site.app_token} (revision 2, {len(DATABASE_FUNCTIONS) + 1} functions)",
        f"basedb dev: {admin_id} (admin) discarded the development draft of site "
        f"{site.app_token}"]
    assert "faas leakKey (code sha256 " in messages[2] and "secrets API_KEY" in messages[2]
    assert "sk_owner_1234" not in "\n".join(messages)


def test_env_dev_calls_are_in_the_log_with_their_caller(api: Api) -> None:
    site = released_site(api)
    admin, admin_id = add_member(site, "Ada", "admin")
    admin.ok("PUT", f"/sites/{site.app_token}/dev/functions", json=_body([]))
    site.invoke("listTasks", {"status": "Open"}, api=admin, env="dev")
    calls = [e for e in _log(site) if e["kind"] == "call" and e["env"] == "dev"]
    assert [(e["functionId"], e["userId"]) for e in calls] == [("listTasks", admin_id)]
