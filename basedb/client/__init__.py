"""The Open API client: profiles, the envelope and its errors, the in-process transport.

    from basedb.client import connect, resolve_profile
    from basedb.platform import open_platform
    with connect(resolve_profile(None, None), embedded=open_platform) as client:
        client.request("GET", "/users/me")

Submodules import httpx; this package itself stays light so that importing
`basedb.client.profiles` costs nothing at start-up.

May import: basedb.workspace, basedb.core. The embedded platform is handed in as a
factory (`connect(profile, embedded=…)`), never imported.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from basedb.client.client import Client, api_path, connect
    from basedb.client.profiles import Profile, resolve_profile
    from basedb.client.transport import InProcessTransport

__all__ = ["Client", "InProcessTransport", "Profile", "api_path", "connect", "resolve_profile"]

_HOMES = {
    "Client": "basedb.client.client",
    "api_path": "basedb.client.client",
    "connect": "basedb.client.client",
    "Profile": "basedb.client.profiles",
    "resolve_profile": "basedb.client.profiles",
    "InProcessTransport": "basedb.client.transport",
}


def __getattr__(name: str) -> Any:
    if name in _HOMES:
        return getattr(importlib.import_module(_HOMES[name]), name)
    raise AttributeError(f"module 'basedb.client' has no attribute {name!r}")
