"""A generated workspace (`python -m bench.generate`) deployed to production on the
embedded platform, for measuring what agents read: the site Skill, MCP tools/list and
the function search.

    app_token = provision_site(client, root)   # tables, a site bound to them
    # then `basedb deploy -C root` and `basedb deploy -C root --production --yes`

`provision_site` creates the tables of the workspace's catalog.json on the platform
(same names, field types and options), a site bound to them, and rewrites the
workspace's catalog.json, binding and appToken to match, so that a deploy of the
workspace goes to that site.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from basedb.client.client import Client

CONFIG_FILE = "base-database.jsonc"
# Computed fields the local platform cannot create; no generated function reads them.
UNSUPPORTED = frozenset({"formula", "lookup"})
_COMMENT_RE = re.compile(r"^\s*//.*$", re.MULTILINE)


def provision_site(client: Client, root: Path, *, title: str = "Operations hub") -> str:
    """Create the workspace's tables and a site bound to them; returns its app token."""
    catalog = json.loads((root / "catalog.json").read_text(encoding="utf-8"))
    base = client.request("POST", "/bases", json={"name": title})["data"]["base_token"]
    # Links name tables by id: create every table first, then its links to the new ids.
    made = {table["tableId"]: client.request("POST", f"/bases/{base}/tables", json={
        "name": table["name"], "fields": [_field_body(f) for f in table["fields"]
                                          if "linkTable" not in f
                                          and f["type"] not in UNSUPPORTED]})["data"]["id"]
        for table in catalog["tables"]}
    for table in catalog["tables"]:
        for field in table["fields"]:
            if "linkTable" in field:
                client.request("POST", f"/bases/{base}/tables/{made[table['tableId']]}/fields",
                               json={**_field_body(field),
                                     "link_table": made[field["linkTable"]]})
    table_ids = list(made.values())
    app = client.request("POST", "/sites/create", json={"title": title})["data"]["appToken"]
    client.request("POST", f"/sites/{app}/bind_base",
                   json={"baseToken": base, "tableIds": table_ids})
    live = client.request("GET", f"/sites/{app}/catalog")["data"]
    (root / "catalog.json").write_text(json.dumps(live, ensure_ascii=False, indent=2) + "\n",
                                       encoding="utf-8")
    path = root / CONFIG_FILE
    config = json.loads(_COMMENT_RE.sub("", path.read_text(encoding="utf-8")))
    config["binding"] = {"baseToken": base, "tableIds": table_ids}
    config["appToken"] = app
    path.write_text(json.dumps(config, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    return str(app)


def _field_body(field: dict[str, Any]) -> dict[str, Any]:
    body = {"name": field["name"], "type": field["type"]}
    for key in ("multiple", "options"):
        if key in field:
            body[key] = field[key]
    return body
