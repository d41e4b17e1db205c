"""Site secrets: the values FaaS handlers read as environment variables (names only ever
come back; see basedb.platform.domain.site_secrets)."""

from __future__ import annotations

from typing import Any

from basedb.platform.domain import site_secrets
from basedb.platform.web.http import Call, Endpoint
from basedb.platform.web.routes.schemas import STRING, array, obj


def list_secrets(call: Call) -> dict[str, Any]:
    with call.store.read() as conn:
        return site_secrets.listing(conn, call.caller, call.path["app_token"]).to_dict()


def put_secret(call: Call) -> dict[str, Any]:
    body = call.body_object({"value"})
    with call.store.write() as conn:
        return site_secrets.put(conn, call.caller, call.path["app_token"],
                                call.path["secret_name"], body.get("value")).to_dict()


def delete_secret(call: Call) -> dict[str, Any]:
    with call.store.write() as conn:
        return site_secrets.delete(conn, call.caller, call.path["app_token"],
                                   call.path["secret_name"]).to_dict()


_SECRETS = "/sites/{app_token}/secrets"
_ITEM = obj({"name": STRING, "updatedAt": STRING, "updatedBy": STRING},
            ("name", "updatedAt", "updatedBy"))
_ABOUT = ("A FaaS function reads the secrets its function.json declares (`secrets`) as "
          "environment variables. Owners and admins only; values are never returned.")

ENDPOINTS = [
    Endpoint("GET", _SECRETS, list_secrets, "The names of the site's secrets.", "secrets",
             description=_ABOUT, response=obj({"secrets": array(_ITEM)}, ("secrets",))),
    Endpoint("PUT", _SECRETS + "/{secret_name}", put_secret, "Set a secret.", "secrets",
             description=_ABOUT + " A value is 1 to "
             f"{site_secrets.MAX_VALUE_BYTES} bytes of UTF-8 without NUL characters; a site "
             f"has at most {site_secrets.MAX_SECRETS_PER_SITE} secrets (400 otherwise).",
             body=obj({"value": {"type": "string", "minLength": 1,
                                 "maxLength": site_secrets.MAX_VALUE_BYTES,
                                 "pattern": r"^[^\x00]*$"}}, ("value",)),
             response=_ITEM),
    Endpoint("DELETE", _SECRETS + "/{secret_name}", delete_secret, "Delete a secret.", "secrets",
             description=_ABOUT, body_required=False, errors=(400,),
             response=obj({"name": STRING, "deleted": {"type": "boolean"}},
                          ("name", "deleted"))),
]
