"""The development draft (`basedb dev`): env=dev runs it, for owners and admins only,
and nothing of the site's draft, preview or prod changes."""

from __future__ import annotations

from typing import Any

from basedb.protocol import Code
from tests.platform.conftest import Api
from tests.platform.functions_support import (
    DATABASE_FUNCTIONS,
    FAAS,
    MUTATIONS,
    add_member,
    released_site,
    sql_function,
)


def _dev_body(**changes: Any) -> dict[str, Any]:
    return {"databaseFunctions": changes.get("databaseFunctions", DATABASE_FUNCTIONS),
            "mutations": MUTATIONS, "faas": FAAS, "aiFunctions": []}


def test_env_dev_runs_the_development_draft_and_leaves_the_releases_alone(api: Api) -> None:
    site = released_site(api)
    url = f"/sites/{site.app_token}/dev/functions"
    prod_before = site.invoke("listOpenTasks", {"status": "Open"}) \
        if any(f["functionId"] == "listOpenTasks" for f in DATABASE_FUNCTIONS) else None
    draft_before = api.ok("GET", f"/sites/{site.app_token}/draft/functions")
    deployments_before = api.ok("GET", f"/sites/{site.app_token}/deployments")
    site.invoke_fails("countTasks", {}, code=Code.SCHEMA_NOT_READY, env="dev")

    answer = api.ok("PUT", url, json=_dev_body(databaseFunctions=[
        *DATABASE_FUNCTIONS,
        sql_function("countTasks", 'SELECT COUNT(*) AS n FROM "Tasks"')]))
    assert answer["revision"] == 1
    assert answer["counts"]["database_function"] == len(DATABASE_FUNCTIONS) + 1
    assert site.invoke("countTasks", {}, env="dev")["rows"] == [{"n": 4}]
    # The releases do not have it, and nothing about them changed.
    site.invoke_fails("countTasks", {}, code=Code.FUNCTION_NOT_FOUND, env="prod")
    site.invoke_fails("countTasks", {}, code=Code.FUNCTION_NOT_FOUND, env="preview")
    assert api.ok("GET", f"/sites/{site.app_token}/draft/functions") == draft_before
    assert api.ok("GET", f"/sites/{site.app_token}/deployments") == deployments_before
    if prod_before is not None:
        assert site.invoke("listOpenTasks", {"status": "Open"}) == prod_before

    assert api.ok("GET", url) == {"revision": 1, "functionIds": sorted(
        [f["functionId"] for f in DATABASE_FUNCTIONS] + ["countTasks"]
        + [f["functionId"] for f in MUTATIONS] + [f["functionId"] for f in FAAS])}
    assert api.ok("DELETE", url) == {"discarded": True}
    site.invoke_fails("countTasks", {}, code=Code.SCHEMA_NOT_READY, env="dev")
    assert api.ok("DELETE", url) == {"discarded": False}


def test_a_draft_with_check_errors_is_refused_and_the_last_good_one_stays(api: Api) -> None:
    site = released_site(api)
    url = f"/sites/{site.app_token}/dev/functions"
    api.ok("PUT", url, json=_dev_body())
    broken = api.fail("PUT", url, code=Code.BAD_REQUEST, json=_dev_body(databaseFunctions=[
        sql_function("broken", 'SELECT "Nope" FROM "Tasks"')]))
    assert "SQL_UNKNOWN_FIELD" in broken
    assert api.ok("GET", url)["revision"] == 1


def test_members_cannot_use_or_change_the_development_draft(api: Api) -> None:
    site = released_site(api)
    url = f"/sites/{site.app_token}/dev/functions"
    api.ok("PUT", url, json=_dev_body())
    member, _ = add_member(site, "Mia")
    member.fail("PUT", url, code=Code.PERMISSION_DENIED, json=_dev_body())
    member.fail("DELETE", url, code=Code.PERMISSION_DENIED)
    first = DATABASE_FUNCTIONS[0]["functionId"]
    site.invoke_fails(first, {}, code=Code.PERMISSION_DENIED, api=member, env="dev")
    assert api.ok("GET", url)["revision"] == 1


def test_an_unknown_env_names_the_three(api: Api) -> None:
    site = released_site(api)
    msg = site.invoke_fails(DATABASE_FUNCTIONS[0]["functionId"], {}, code=Code.BAD_REQUEST,
                            env="staging")
    assert "env=dev" in msg
