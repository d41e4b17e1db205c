"""The embedded platform as the client sees it: an ASGI app and its owner token.

The client never imports the platform (it sits below the platform's users, and the
platform is a server in its own right). The command line opens the platform and hands a
factory in (`basedb.cli.common.open_client`); tests may hand in
`basedb.platform.open_platform`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from basedb.core.errors import InternalError

if TYPE_CHECKING:
    from basedb.client.transport import ASGIApp


class EmbeddedPlatform(Protocol):
    """What the client needs of an in-process platform (`basedb.platform.LocalPlatform`)."""

    @property
    def app(self) -> ASGIApp: ...

    @property
    def owner_token(self) -> str: ...


EmbeddedFactory = Callable[[], EmbeddedPlatform]
"""Opens the embedded platform (called only when a local-profile request is made)."""


def embedded_platform(embedded: EmbeddedFactory | None) -> EmbeddedPlatform:
    """The embedded platform from `embedded`; an InternalError when none was handed in."""
    if embedded is None:
        raise InternalError("The local profile needs the embedded platform, and none was "
                            "provided to the client.", code="EMBEDDED_PLATFORM_MISSING",
                            hint="Pass embedded=basedb.platform.open_platform to connect().")
    return embedded()
