"""What a request's `Authorization` header carries, and how it is renewed.

A `Credentials` object hands the client a token just before each request (fetching or
refreshing it when needed) and is told when the platform rejected one, so that a fresh
token can be tried once. Implementations:

    StaticToken                    a basedb platform token (local and endpoint profiles)
    lark.tenant.TenantCredentials  a bot: app id + secret -> tenant access token
    lark.oauth.UserCredentials     a user: stored OAuth tokens, refreshed under a lock
"""

from __future__ import annotations

from typing import Protocol


class Credentials(Protocol):
    identity: str
    """`user` or `bot`: who the token speaks for (the error envelope's `identity`)."""

    def token(self) -> str | None:
        """The token to send now; raises an AuthError when there is none to be had."""
        ...

    def renew(self, rejected: str) -> bool:
        """The platform rejected `rejected`: forget it; True when another may be had."""
        ...


class StaticToken:
    """One fixed token; nothing to renew."""

    def __init__(self, token: str | None, *, identity: str = "user") -> None:
        self._token = token
        self.identity = identity

    def __repr__(self) -> str:
        return f"StaticToken(identity={self.identity!r})"

    def token(self) -> str | None:
        return self._token

    def renew(self, rejected: str) -> bool:
        return False
