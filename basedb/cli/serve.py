"""`basedb serve`: the local platform over HTTP."""

from __future__ import annotations

import ipaddress
import socket
from pathlib import Path
from typing import TYPE_CHECKING

import click

from basedb.cli.common import echo_err
from basedb.core.environment import PUBLIC_URL
from basedb.core.errors import UsageError
from basedb.platform.domain.quotas import (
    FAAS_PER_OWNER,
    LOG_MIB,
    LOG_MIB_PER_OWNER,
    MIB,
    OUTPUT_KIB_PER_MINUTE,
    SITES_PER_OWNER,
    SLOW_QUERIES_PER_OWNER,
    OwnerQuotas,
)

if TYPE_CHECKING:
    from basedb.platform import LocalPlatform
    from basedb.platform.web.origins import PublicUrl


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def bind_socket(host: str, port: int) -> socket.socket:
    """A listening socket, bound before start-up so that the port it reports is real
    (`--port 0` picks a free one) and early connections wait in the backlog."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # proto must say TCP: asyncio sets TCP_NODELAY only on sockets that do, and without it
    # Nagle's algorithm meets delayed ACKs and every keep-alive response waits ~40 ms.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(2048)
    except OSError as exc:
        sock.close()
        raise UsageError(f"Cannot listen on {host}:{port}: {exc.strerror or exc}.",
                         code="SERVE_BIND",
                         hint="Pick another --port (0 chooses a free one), or stop the "
                              "process using it.") from exc
    return sock


def site_lines(platform: LocalPlatform, base: PublicUrl) -> list[str]:
    """Each site's production and preview URLs (on its page origin), printed on stdout."""
    from basedb.platform.web.origins import page_url

    with platform.store.read() as conn:
        rows = conn.execute("SELECT app_token, title FROM sites "
                            "ORDER BY created_at, app_token").fetchall()
    index = base.origin()
    if not rows:
        return [f"sites: none yet; {index}/ lists them once `basedb init` creates one"]
    lines = [f"sites ({index}/ lists those you may open, given a token):"]
    for app_token, title in rows:
        lines.append(f"  {title} ({app_token})")
        lines.append(f"    prod:    {page_url(app_token, 'prod', base=base)}")
        lines.append(f"    preview: {page_url(app_token, 'preview', base=base)}")
    return lines


@click.command("serve")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on (loopback only unless --allow-remote).")
@click.option("--port", default=8787, show_default=True, type=click.IntRange(0, 65535),
              help="Port to listen on; 0 picks a free port.")
@click.option("--data", "data_dir", type=click.Path(file_okay=False, path_type=Path),
              default=None, help="Platform data dir (default: $BASEDB_DATA_DIR, else the "
                                 "user data dir).")
@click.option("--allow-remote", is_flag=True,
              help="Allow a non-loopback --host (exposes the platform to the network).")
@click.option("--forwarded-allow-ips", "forwarded_allow_ips", metavar="IPS", default=None,
              help="Trust X-Forwarded-For/-Proto from these proxies (comma-separated "
                   "addresses or networks, * for any); ignored by default.")
@click.option("--sites-per-owner", default=SITES_PER_OWNER, show_default=True,
              type=click.IntRange(1, 100_000),
              help="Sites one user may own (the platform's owner: any number).")
@click.option("--faas-per-owner", default=FAAS_PER_OWNER, show_default=True,
              type=click.IntRange(1, 1024),
              help="FaaS calls of one owner's sites running at once (of 16 in all); more "
                   "answer 503, retry later.")
@click.option("--slow-queries-per-owner", default=SLOW_QUERIES_PER_OWNER, show_default=True,
              type=click.IntRange(1, 64),
              help="Slow Database Function queries (over 0.25 s) of one owner's sites at "
                   "once (of 4 in all); more answer 429, retry later.")
@click.option("--log-mib-per-owner", default=LOG_MIB_PER_OWNER, show_default=True,
              type=click.IntRange(1, 1_048_576),
              help="Platform log kept for all the sites of one owner (basedb logs); the "
                   "oldest entries go first.")
@click.option("--log-mib", default=LOG_MIB, show_default=True, type=click.IntRange(1, 1_048_576),
              help="Platform log kept in all.")
@click.option("--output-kib-per-minute", default=OUTPUT_KIB_PER_MINUTE, show_default=True,
              type=click.IntRange(1, 1_048_576),
              help="What this command prints on stderr (access and platform log); past "
                   "it, lines are counted, not printed.")
def serve_command(host: str, port: int, data_dir: Path | None, allow_remote: bool,
                  forwarded_allow_ips: str | None, sites_per_owner: int, faas_per_owner: int,
                  slow_queries_per_owner: int, log_mib_per_owner: int, log_mib: int,
                  output_kib_per_minute: int) -> None:
    """Run the local platform's Open API over HTTP, with one JSON access-log line per
    request on stderr. Every API call needs a bearer token; the owner's token is in the
    data dir (`basedb auth token` prints it). One user's sites share one owner's
    quota of the platform's capacity (docs/security.md)."""
    if not is_loopback(host) and not allow_remote:
        raise UsageError(
            f"Refusing to listen on {host}: the local platform speaks plain HTTP and its "
            "owner token grants full access, so it listens on this machine only.",
            code="SERVE_REMOTE_HOST",
            hint="Use --host 127.0.0.1, or pass --allow-remote if you really mean to expose "
                 "it to your network.")
    from basedb.platform import open_platform
    from basedb.platform.domain.runtimes.sql import QUERY_POOL
    from basedb.platform.domain.warmup import warm
    from basedb.platform.storage import server_output
    from basedb.platform.web import origins, serving
    from basedb.platform.web.app import build_app

    platform = open_platform(data_dir)
    quotas = OwnerQuotas(sites=sites_per_owner, faas_calls=faas_per_owner,
                         slow_queries=slow_queries_per_owner,
                         log_bytes=log_mib_per_owner * MIB, log_bytes_total=log_mib * MIB)
    server_output.STDERR.configure(bytes_per_minute=output_kib_per_minute * 1024)
    app = build_app(platform.store, data_dir=platform.data_dir, access_log=True,
                    quotas=quotas)
    # Before the socket is served: the first call finds its plan built, sqlglot and
    # jsonschema loaded and a query worker waiting, like every later call.
    warm(platform.store, app.state.context.caches, query_pool=QUERY_POOL)
    sock = bind_socket(host, port)
    bound_port = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    served = f"http://{shown}:{bound_port}"
    # Public URLs by one rule: $BASEDB_PUBLIC_URL when set, else where this server is.
    base = origins.serving_url(served)
    # What FaaS handlers run inside here (and what is not enforced), before any runs;
    # spare workers start now so that the first call does not wait for Node.js. Done
    # before the banner, so that once it says "listening" only the event loop's start
    # stands between a request and its answer.
    sandbox = app.state.context.faas.start()
    sites_shown = site_lines(platform, base)
    server = serving.server(app, forwarded_allow_ips=forwarded_allow_ips)
    serving.preload(server)
    echo_err(f"basedb platform listening on {served}")
    if base.origin() != served:
        echo_err(f"public URL: {base.origin()} (${PUBLIC_URL})")
    echo_err(f"data dir: {platform.data_dir}")
    echo_err(f"owner token: in {platform.owner_token_file} (`basedb auth token` prints it)")
    echo_err(sandbox)
    echo_err("Press Ctrl+C to stop.")
    # The URLs are the command's data: stdout, where a script reads them (the lines
    # above are the server's status, on stderr).
    click.echo(f"platform: {base.origin()}")
    for line in sites_shown:
        click.echo(line)
    try:
        serving.run(server, sock)
    except KeyboardInterrupt:
        # uvicorn has already shut down gracefully and re-raises Ctrl+C; stopping the
        # server is what the user asked for, not an error.
        pass
    finally:
        sock.close()
        # The requests' platform log is saved in batches: what is waiting is saved
        # while the store is still open.
        app.state.context.log_writer.flush()
        platform.close()
    echo_err("basedb platform stopped")
