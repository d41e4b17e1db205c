"""Users: who am I, and (for the platform owner) creating users with their token."""

from __future__ import annotations

from typing import Any

from basedb.core.protocol import permission_denied
from basedb.platform.domain import identity
from basedb.platform.domain.bases import parse_name
from basedb.platform.web.http import Call, Endpoint
from basedb.platform.web.routes.schemas import BOOLEAN, STRING, obj


def get_me(call: Call) -> dict[str, Any]:
    user = call.caller
    return {"user_id": user.user_id, "name": user.name,
            "is_platform_owner": user.is_platform_owner}


def create_user(call: Call) -> dict[str, Any]:
    if not call.caller.is_platform_owner:
        raise permission_denied("Only the platform owner can create users",
                                "ask the platform owner (who holds owner.token) to create it")
    name = parse_name(call.body_object({"name"}).get("name"), "/name", "user")
    with call.store.write() as conn:
        user, token = identity.create_user(conn, name)
    return {"user_id": user.user_id, "name": user.name, "token": token}


USER = obj({"user_id": STRING, "name": STRING, "is_platform_owner": BOOLEAN},
           ("user_id", "name"))

ENDPOINTS = [
    Endpoint("GET", "/users/me", get_me, "The calling user.", "users", response=USER),
    Endpoint("POST", "/users", create_user, "Create a user (platform owner only).", "users",
             description="Returns the new user's bearer token once; only its hash is kept.",
             body=obj({"name": STRING}, ("name",)),
             response=obj({"user_id": STRING, "name": STRING, "token": STRING},
                          ("user_id", "name", "token"))),
]
