"""The site Skill (upstream agent-tools.md "安装到本地 Agent"):

    GET /sites/{app}/skill?env=prod

Rendered from the production deployment for any member of the site. Only prod: a
preview is never installable. Functions that agent-tools.json excludes never appear,
whoever asks (there is no includeInternal here).
"""

from __future__ import annotations

from typing import Any

from basedb.platform.domain.function_plans import function_plan
from basedb.platform.domain.invoke import resolve_deployment
from basedb.platform.domain.revision import live_catalog
from basedb.platform.domain.site_skill import render_site_skill, skill_function
from basedb.platform.web.http import Call, Endpoint, QueryParam
from basedb.platform.web.routes.schemas import STRING, Schema, array, obj
from basedb.protocol import SchemaStatus, bad_request


def get_skill(call: Call) -> dict[str, Any]:
    env = call.query.get("env", "prod")
    if env != "prod":
        raise bad_request("The site Skill is only installable from production",
                          parameter="?env", received=env,
                          fix="send env=prod; to install a preview's functions, promote it "
                          "first (`basedb deploy --production --yes`)", candidates=["prod"])
    app_token = call.path["app_token"]
    with call.store.read() as conn:
        deployed = resolve_deployment(conn, call.caches, call.caller, app_token, "prod",
                                      include_internal=False)
        live = live_catalog(conn, deployed.site, call.caches.catalogs)
        plans = [function_plan(deployed.snapshot, function_id, live, call.caches.plans)
                 for function_id in deployed.visible]
    return render_site_skill(title=deployed.site.title, app_token=deployed.site.app_token,
                             deployment_id=deployed.snapshot.deployment_id,
                             functions=[skill_function(plan) for plan in plans]).to_dict()


# --------------------------------------------------------------------- documentation

_FUNCTION: Schema = obj({
    "functionId": STRING, "name": STRING, "description": STRING,
    "functionType": {"type": "string", "enum": ["database_function", "mutation", "faas",
                                                "ai_function"]},
    "access": {"type": "string", "enum": ["read", "write"],
               "description": "read: a Database Function; write: anything that may change "
               "data or run code or a model (confirm with the user before calling)."},
    "schemaStatus": {"type": "string", "enum": [status.value for status in SchemaStatus]},
    "statusHint": {"type": ["string", "null"]},
    "table": {"type": ["string", "null"], "description": "The table it works on; null "
              "when none is known."},
    "action": {"type": "string", "enum": ["create", "update", "delete"],
               "description": "Mutations only: what the write does to records."},
}, ("functionId", "name", "description", "functionType", "access", "schemaStatus"))

ENDPOINTS = [
    Endpoint("GET", "/sites/{app_token}/skill", get_skill,
             "The site's Agent Skill, rendered from production.", "functions",
             description="SKILL.md (Agent Skills format: name, description, metadata) and "
             "references/functions.md listing the functions open to agents, read or write, "
             "with the protocol for calling them and how to search; never parameter schemas "
             "(describe a function before each call). A site of more than 60 functions gets "
             "an index by table in SKILL.md instead (reads and writes per table) and a "
             "reference file per table, references/table-<name>.md (other.md for functions "
             "of no known table). env=preview is refused with 9499; a site with no "
             "prod deployment answers 800004004.",
             query=(QueryParam("env", {"type": "string", "enum": ["prod"], "default": "prod"},
                               "Always prod: the Skill is installable from production only."),),
             response=obj({
                 "name": {**STRING, "description": "The skill name: 1-64 of [a-z0-9-]."},
                 "description": {**STRING, "maxLength": 1024},
                 "title": STRING, "appToken": STRING,
                 "env": {"type": "string", "enum": ["prod"]},
                 "deploymentId": STRING,
                 "functions": array(_FUNCTION),
                 "markdown": {**STRING, "description": "SKILL.md."},
                 "references": {"type": "object", "additionalProperties": STRING,
                                "description": "Files of references/ by name."},
             }, ("name", "description", "title", "appToken", "env", "deploymentId",
                 "functions", "markdown", "references")),
             errors=(409,)),
]
