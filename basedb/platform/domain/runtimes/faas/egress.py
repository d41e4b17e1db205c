"""The only way out of a sandboxed FaaS worker: an HTTP CONNECT proxy on a Unix socket
in the worker's code directory, opened only for functions that declare hosts.

    proxy = EgressProxy()
    grant = proxy.grant(socket_path, rules, owner=uid)   # one per bound worker
    grant.log_id = "…"                                   # the call it works for
    grant.close()

The runner asks for `CONNECT host:port`; the proxy answers 200 and relays bytes only
when a declared rule matches, the platform's resolver gives the name public addresses
(every answer: one private address refuses the name, so DNS rebinding gains nothing),
and the connection to one of them succeeds. TLS runs inside the worker, end to end. The
worker never resolves a name itself (its network namespace has none), so nothing it
asks for reaches DNS unless the function declared it. Refusals are logged with the
call's log id and come back to the handler as a failed fetch.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

from basedb.platform.domain.runtimes.faas.addresses import is_global_unicast
from basedb.platform.domain.runtimes.faas.logs import write_note
from basedb.platform.storage import platform_log
from basedb.workspace.faas_access import HostRule

HEADER_LIMIT = 8192
CONNECT_TIMEOUT_S = 10.0
MAX_TUNNELS = 16  # open at once, per worker

Resolver = Callable[[str, int], Awaitable[list[str]]]
_Opened = tuple[asyncio.StreamReader, asyncio.StreamWriter] | None


def is_public(address: str) -> bool:
    """Whether connecting to `address` leaves this machine's networks: global unicast
    only (the rules and their sources are in the addresses module)."""
    return is_global_unicast(address)


async def system_resolver(host: str, port: int) -> list[str]:
    loop = asyncio.get_running_loop()
    answers = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in answers))


@dataclass(slots=True)
class EgressGrant:
    """One worker's socket and rules."""

    path: Path
    rules: tuple[HostRule, ...]
    log_id: str | None = None
    log_file: Path | None = None  # where the call's platform log goes
    tunnels: int = 0
    server: asyncio.AbstractServer | None = None
    closer: Callable[[EgressGrant], None] = field(default=lambda grant: None)

    def close(self) -> None:
        self.closer(self)

    def note(self, text: str) -> None:
        with platform_log.logging_to(self.log_file):
            write_note(self.log_id, f"egress: {text}")


class EgressProxy:
    """An event loop on a thread of its own, serving every grant's socket."""

    def __init__(self, resolver: Resolver = system_resolver,
                 permit: Callable[[str], bool] = is_public) -> None:
        self.resolver = resolver
        self.permit = permit
        self._loop: asyncio.AbstractEventLoop | None = None
        self._lock = threading.Lock()

    def _running_loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                threading.Thread(target=loop.run_forever, name="basedb-faas-egress",
                                 daemon=True).start()
                self._loop = loop
            return self._loop

    def grant(self, path: Path, rules: tuple[HostRule, ...], *, owner: int | None) -> EgressGrant:
        """Listen on `path` for a worker whose function declares `rules`."""
        grant = EgressGrant(path, rules, closer=self._close)
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            listener.bind(str(path))
            os.chmod(path, 0o600)
            if owner is not None:
                os.chown(path, owner, owner)
            listener.listen(MAX_TUNNELS)
            listener.setblocking(False)
        except OSError:
            listener.close()
            raise
        loop = self._running_loop()

        async def serve() -> asyncio.AbstractServer:
            return await asyncio.start_unix_server(
                lambda reader, writer: self._tunnel(grant, reader, writer), sock=listener)

        grant.server = asyncio.run_coroutine_threadsafe(serve(), loop).result()
        return grant

    def _close(self, grant: EgressGrant) -> None:
        server, grant.server = grant.server, None
        if server is not None and self._loop is not None:
            self._loop.call_soon_threadsafe(server.close)
        with contextlib.suppress(OSError):
            grant.path.unlink()

    def close(self) -> None:
        with self._lock:
            loop, self._loop = self._loop, None
        if loop is not None:
            loop.call_soon_threadsafe(loop.stop)

    # ------------------------------------------------------------------- tunnels

    async def _tunnel(self, grant: EgressGrant, reader: asyncio.StreamReader,
                      writer: asyncio.StreamWriter) -> None:
        grant.tunnels += 1
        upstream: asyncio.StreamWriter | None = None
        try:
            target = await self._open(grant, reader, writer)
            if target is not None:
                upstream_reader, upstream = target
                await asyncio.gather(_relay(reader, upstream), _relay(upstream_reader, writer))
        except (TimeoutError, OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError,
                ValueError):
            pass
        finally:
            grant.tunnels -= 1
            writer.close()
            if upstream is not None:
                upstream.close()

    async def _open(self, grant: EgressGrant, reader: asyncio.StreamReader,
                    writer: asyncio.StreamWriter) -> _Opened:
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), CONNECT_TIMEOUT_S)
        if len(head) > HEADER_LIMIT:
            return await _refused(writer, "400 Bad Request", "request too large")
        method, _, rest = head.split(b"\r\n", 1)[0].decode("latin-1").partition(" ")
        target = rest.split(" ", 1)[0]
        host, _, port_text = target.rpartition(":")
        host = host.strip("[]").lower()
        if method != "CONNECT" or not host or not port_text.isdigit():
            return await _refused(writer, "400 Bad Request", "only CONNECT host:port")
        port = int(port_text)
        if grant.tunnels > MAX_TUNNELS:
            return await _refused(writer, "429 Too Many Requests",
                                 f"at most {MAX_TUNNELS} connections at once")
        if not any(rule.matches(host, port) for rule in grant.rules):
            grant.note(f"refused {host}:{port}: not in network.allow "
                       f"({', '.join(map(str, grant.rules))})")
            return await _refused(writer, "403 Forbidden",
                                 f"{host}:{port} is not in this function's network.allow")
        try:
            addresses = await asyncio.wait_for(self.resolver(host, port), CONNECT_TIMEOUT_S)
        except (TimeoutError, OSError):
            grant.note(f"refused {host}:{port}: the name does not resolve")
            return await _refused(writer, "502 Bad Gateway", f"{host} does not resolve")
        private = [address for address in addresses if not self.permit(address)]
        if private or not addresses:
            grant.note(f"refused {host}:{port}: it resolves to a non-public address "
                       f"({', '.join(private) or 'none'})")
            return await _refused(writer, "403 Forbidden",
                                 f"{host} resolves to an address that is not public")
        for address in addresses:
            try:
                upstream = await asyncio.wait_for(asyncio.open_connection(address, port),
                                                  CONNECT_TIMEOUT_S)
            except (TimeoutError, OSError):
                continue
            writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
            await writer.drain()
            return upstream
        grant.note(f"could not connect to {host}:{port}")
        return await _refused(writer, "502 Bad Gateway", f"cannot connect to {host}:{port}")


async def _refused(writer: asyncio.StreamWriter, status: str, reason: str) -> _Opened:
    """Answer the CONNECT with a refusal (the tunnel then closes): no upstream."""
    writer.write(f"HTTP/1.1 {status}\r\nX-Basedb-Reason: {reason}\r\n\r\n".encode("latin-1",
                                                                                  "replace"))
    with contextlib.suppress(OSError):
        await writer.drain()
    return None


async def _relay(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
    try:
        while chunk := await source.read(65536):
            sink.write(chunk)
            await sink.drain()
    finally:
        with contextlib.suppress(OSError):
            if sink.can_write_eof():
                sink.write_eof()
