"""Users: who am I, and (for the platform owner) creating users with their token.

`GET /users/me` and `POST /users` are the local platform's own; Lark's "who am I" is
`GET /open-apis/authen/v1/user_info` (lark-cli `internal/auth/paths.go`), served here too
so that the platform stands in for Lark.
"""

from __future__ import annotations

from typing import Any

from basedb.platform.domain import identity
from basedb.platform.domain.bases import parse_name
from basedb.platform.web.http import Call, Endpoint
from basedb.platform.web.routes.schemas import BOOLEAN, NAME, STRING, obj
from basedb.protocol import ApiFailure, Code, permission_denied


def get_me(call: Call) -> dict[str, Any]:
    return call.caller.to_dict()


def user_info(call: Call) -> dict[str, Any]:
    """Lark's user_info: the fields lark-cli reads (`open_id`, `name`) and their kin."""
    user = call.caller
    if user.is_bot:
        raise ApiFailure(Code.TOKEN_INVALID, "Invalid access token: user_info needs a user "
                         "access token, not a tenant access token. Executed: no. Retry: "
                         "retry after fixing.", status=401)
    return user.lark_user_info()


def create_user(call: Call) -> dict[str, Any]:
    if not call.caller.is_platform_owner:
        raise permission_denied("Only the platform owner can create users",
                                "ask the platform owner (who holds owner.token) to create it")
    name = parse_name(call.body_object({"name"}).get("name"), "/name", "user")
    with call.store.write() as conn:
        return identity.create_user(conn, name).to_dict()


USER = obj({"user_id": STRING, "name": STRING, "is_platform_owner": BOOLEAN},
           ("user_id", "name"))

ENDPOINTS = [
    Endpoint("GET", "/users/me", get_me, "The calling user.", "users", response=USER),
    Endpoint("GET", "/open-apis/authen/v1/user_info", user_info,
             "The calling user, as Lark's user_info answers.", "lark", absolute=True,
             description="Stands in for Lark: a user access token (or any platform user "
             "token) is answered with its user; lark-cli reads `open_id` and `name`.",
             response=obj({"open_id": STRING, "union_id": STRING, "user_id": STRING,
                           "name": STRING, "en_name": STRING, "tenant_key": STRING},
                          ("open_id", "name"))),
    Endpoint("POST", "/users", create_user, "Create a user (platform owner only).", "users",
             description="Returns the new user's bearer token once; only its hash is kept.",
             body=obj({"name": NAME}, ("name",)),
             response=obj({"user_id": STRING, "name": STRING, "token": STRING},
                          ("user_id", "name", "token")),
             errors=(403,)),
]
