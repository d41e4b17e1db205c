"""What a FaaS function may reach beyond its records: the hosts it declares (through the
egress proxy) and the secrets the site set on the platform."""

from __future__ import annotations

import http.server
import json
import secrets
import shutil
import ssl
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from basedb.platform import LocalPlatform
from basedb.platform.domain import identity, sites
from basedb.platform.domain.runtimes.faas import FaasFunction, FaasLimits, FaasRuntime
from basedb.platform.domain.runtimes.faas.egress import EgressProxy, is_public
from basedb.platform.domain.runtimes.faas.sandbox import Sandbox
from basedb.platform.domain.runtimes.faas.workdirs import runtime_root
from basedb.protocol import Code
from tests.platform.conftest import Api, assert_error_shape
from tests.platform.release_support import deploy, functions_body, task_site
from tests.platform.test_faas_runtime import needs_node

LOG_ID = "20990101000000ABCDEF0123456789CD"


def bubblewrap() -> bool:
    return Sandbox.detect(FaasLimits()).isolated


needs_sandbox = pytest.mark.skipif(
    not shutil.which("node") or not bubblewrap(),
    reason="egress is enforced in the bubblewrap sandbox (apt-get install bubblewrap)")


# ------------------------------------------------------------------ addresses


@pytest.mark.parametrize("address", [
    "127.0.0.1", "10.1.2.3", "172.16.0.1", "192.168.1.1", "169.254.169.254", "100.64.0.1",
    "0.0.0.0", "224.0.0.1", "255.255.255.255", "::1", "::", "fe80::1", "fc00::1",
    "::ffff:127.0.0.1", "64:ff9b::a00:1", "2002:7f00:1::", "2001:db8::1", "not an ip"])
def test_private_and_special_addresses_are_not_public(address: str) -> None:
    assert not is_public(address)


@pytest.mark.parametrize("address", ["93.184.216.34", "1.1.1.1", "2606:4700:4700::1111"])
def test_public_addresses(address: str) -> None:
    assert is_public(address)


# ------------------------------------------------------------------- egress


class _Hello(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = json.dumps({"path": self.path, "host": self.headers.get("Host")}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def upstream() -> Iterator[int]:
    """A plain HTTP server on loopback standing in for a public API."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Hello)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


@pytest.fixture
def tls_upstream(tmp_path: Path) -> Iterator[int]:
    """An HTTPS server with a self-signed certificate (which no handler should trust)."""
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("openssl is not installed")
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run([openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout",
                    str(key), "-out", str(cert), "-days", "1", "-subj",
                    "/CN=api.example.com"], check=True, capture_output=True)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Hello)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


@pytest.fixture
def runtime() -> Iterator[FaasRuntime]:
    """A runtime whose egress resolver sends api.example.com to loopback and treats only
    that address as public: the real resolver and rules for every other name."""
    async def resolver(host: str, port: int) -> list[str]:
        return {"api.example.com": ["127.0.0.1"], "rebind.example.com": ["93.184.216.34",
                                                                         "10.0.0.7"]}[host]

    proxy = EgressProxy(resolver=resolver, permit=lambda a: a == "127.0.0.1" or is_public(a))
    root = runtime_root() / f"test-{secrets.token_hex(4)}"
    found = FaasRuntime(FaasLimits(spares=0), egress=proxy, root=root)
    yield found
    found.close()
    root.rmdir()


def run(platform: LocalPlatform, api: Api, runtime: FaasRuntime, source: str, *,
        network: tuple[str, ...] = (), secrets: dict[str, str] | None = None,
        declared: tuple[str, ...] = (), input: Any = None) -> Any:
    app = task_site(api).app_token
    with platform.store.read() as conn:
        site = sites.get_site(conn, app)
        assert site is not None
        catalog = sites.site_catalog(conn, site)
    function = FaasFunction(scope=str(platform.store.path), app_token=app,
                            deployment_id="dplAccess", function_id="caller", source=source,
                            network=network, secrets=declared)
    me = identity.User(api.ok("GET", "/users/me")["user_id"], "Owner")
    return runtime.run(store=platform.store, site=site, catalog=catalog, caller=me,
                       function=function, input=input, log_id=LOG_ID, env="prod",
                       secret_values=secrets or {})


FETCH = """
export default async (input) => {
  const out = {};
  for (const url of input.urls) {
    try {
      const response = await fetch(url);
      out[url] = {status: response.status, body: await response.json()};
    } catch (e) {
      out[url] = {error: String(e.cause?.code ?? e.cause?.message ?? e.message)};
    }
  }
  return {code: 0, data: out};
}"""


@needs_sandbox
def test_declared_hosts_are_reached_and_nothing_else(
        platform: LocalPlatform, api: Api, runtime: FaasRuntime, upstream: int,
        capsys: pytest.CaptureFixture[str]) -> None:
    allowed = f"http://api.example.com:{upstream}/v1/items?x=1"
    urls = [allowed, f"http://other.example.com:{upstream}/", f"http://127.0.0.1:{upstream}/",
            f"http://api.example.com:{upstream + 1}/", f"http://rebind.example.com:{upstream}/"]
    data = run(platform, api, runtime, FETCH, input={"urls": urls},
               network=(f"api.example.com:{upstream}", f"rebind.example.com:{upstream}"))
    assert data[allowed] == {"status": 200, "body": {"path": "/v1/items?x=1",
                                                     "host": f"api.example.com:{upstream}"}}
    for url in urls[1:]:
        assert "error" in data[url], (url, data[url])
    assert "EGRESS_REFUSED" in data[urls[1]]["error"] or "refused" in data[urls[1]]["error"]
    log = capsys.readouterr().err
    assert f"log_id {LOG_ID}" in log and "not in network.allow" in log
    assert "resolves to a non-public address (10.0.0.7)" in log


@needs_sandbox
def test_tls_is_verified_inside_the_worker(platform: LocalPlatform, api: Api,
                                           runtime: FaasRuntime, tls_upstream: int) -> None:
    url = f"https://api.example.com:{tls_upstream}/"
    data = run(platform, api, runtime, FETCH, input={"urls": [url]},
               network=(f"api.example.com:{tls_upstream}",))
    # The tunnel reached the server and the handshake ran in the worker, which refused a
    # certificate nobody signed.
    assert "SELF_SIGNED" in data[url]["error"] or "CERT" in data[url]["error"], data


@needs_sandbox
def test_without_a_declaration_there_is_no_network_at_all(
        platform: LocalPlatform, api: Api, runtime: FaasRuntime, upstream: int) -> None:
    data = run(platform, api, runtime, FETCH, input={"urls": [
        f"http://api.example.com:{upstream}/", f"http://127.0.0.1:{upstream}/"]})
    assert all("error" in result for result in data.values()), data


@needs_node
def test_secrets_become_environment_variables_and_stay_out_of_the_log(
        platform: LocalPlatform, api: Api, runtime: FaasRuntime,
        capsys: pytest.CaptureFixture[str]) -> None:
    data = run(platform, api, runtime, """
        export default async () => {
          console.log("key is " + process.env.STRIPE_API_KEY);
          return {code: 0, data: {key: process.env.STRIPE_API_KEY,
                                  other: process.env.OTHER_SECRET ?? null}};
        }""", secrets={"STRIPE_API_KEY": "sk_test_51Hx9"}, declared=("STRIPE_API_KEY",))
    assert data == {"key": "sk_test_51Hx9", "other": None}
    log = capsys.readouterr().err
    assert "key is ***" in log and "sk_test_51Hx9" not in log


# ------------------------------------------------------------- secrets routes


SECRET_HANDLER = """
export default async () => ({code: 0, data: {key: process.env.API_KEY ?? null,
                                             unset: process.env.UNDECLARED ?? null}});
"""


def _declare(api: Api, app: str, secrets: list[str]) -> None:
    faas = [{"functionId": "useKey", "handler": SECRET_HANDLER, "declaration": {
        "name": "useKey", "description": "Return the key it was given (a test)",
        "secrets": secrets, "inputSchema": {"type": "object", "properties": {}}}}]
    api.ok("PUT", f"/sites/{app}/draft/functions",
           json=functions_body(database_functions=[], mutations=[], faas=faas))
    deployment = deploy(api, app)["deploymentId"]
    api.ok("POST", f"/sites/{app}/deployments/{deployment}/promote")


def test_secrets_are_set_listed_and_deleted_by_name_only(api: Api) -> None:
    app = task_site(api).app_token
    assert api.ok("GET", f"/sites/{app}/secrets") == {"secrets": []}
    put = api.ok("PUT", f"/sites/{app}/secrets/API_KEY", json={"value": "s3cr3t-value"})
    assert put["name"] == "API_KEY" and "value" not in put
    listing = api.ok("GET", f"/sites/{app}/secrets")
    assert [s["name"] for s in listing["secrets"]] == ["API_KEY"]
    assert "s3cr3t-value" not in json.dumps(listing)
    assert api.ok("DELETE", f"/sites/{app}/secrets/API_KEY") == {"name": "API_KEY",
                                                                 "deleted": True}
    api.fail("DELETE", f"/sites/{app}/secrets/API_KEY", code=Code.BAD_REQUEST, status=404)


@pytest.mark.parametrize(("name", "body"), [
    ("lower_case", {"value": "x"}), ("NODE_OPTIONS", {"value": "--require /x"}),
    ("PATH", {"value": "/tmp"}), ("API_KEY", {"value": ""}), ("API_KEY", {"value": 5}),
    ("API_KEY", {"value": "a\u0000b"}), ("API_KEY", {"value": "x" * 40_000}),
    ("API_KEY", {"value": "x", "extra": 1})])
def test_bad_secrets_are_refused(api: Api, name: str, body: dict[str, Any]) -> None:
    app = task_site(api).app_token
    api.fail("PUT", f"/sites/{app}/secrets/{name}", code=Code.BAD_REQUEST, json=body)


def test_members_cannot_read_or_set_secrets(api: Api) -> None:
    app = task_site(api).app_token
    member = api.ok("POST", "/users", json={"name": "Mia"})
    api.ok("POST", f"/sites/{app}/members", json={"userId": member["user_id"]})
    as_member = api.as_user(member["token"])
    as_member.fail("GET", f"/sites/{app}/secrets", code=Code.PERMISSION_DENIED)
    as_member.fail("PUT", f"/sites/{app}/secrets/API_KEY", code=Code.PERMISSION_DENIED,
                   json={"value": "mine"})


@needs_node
def test_a_function_reads_only_the_secrets_it_declares(api: Api) -> None:
    app = task_site(api).app_token
    api.ok("PUT", f"/sites/{app}/secrets/API_KEY", json={"value": "k-123456"})
    api.ok("PUT", f"/sites/{app}/secrets/UNDECLARED", json={"value": "never-seen"})
    _declare(api, app, ["API_KEY"])
    data = api.ok("POST", f"/sites/{app}/functions/useKey/invoke", json={"params": {}})
    assert data == {"key": "k-123456", "unset": None}
    api.ok("PUT", f"/sites/{app}/secrets/API_KEY", json={"value": "k-rotated"})
    data = api.ok("POST", f"/sites/{app}/functions/useKey/invoke", json={"params": {}})
    assert data["key"] == "k-rotated"  # a new value never meets a worker of the old one


@needs_node
def test_a_declared_secret_that_is_not_set_refuses_the_call(api: Api) -> None:
    app = task_site(api).app_token
    _declare(api, app, ["API_KEY"])
    response = api.call("POST", f"/sites/{app}/functions/useKey/invoke", json={"params": {}})
    assert_error_shape(response)
    body = response.json()
    assert body["code"] == Code.EXECUTION_FAILED
    assert "declares the secret \"API_KEY\", which site" in body["msg"]
    assert "basedb secrets set API_KEY" in body["msg"] and "Executed: no" in body["msg"]
