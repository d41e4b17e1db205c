"""Attacks on the FaaS egress proxy's address check: a declared host whose name resolves
to an address inside this machine's networks, written in any of the forms that reach it.

The tables below are IANA's IPv4 and IPv6 Special-Purpose Address Registries as
published (block, name, "Globally Reachable"). The test walks every entry: an address
takes the answer of the most specific entry holding it; N/A entries (6to4, Teredo)
carry IPv4 addresses and pass only when those do."""

from __future__ import annotations

import asyncio
import ipaddress
from pathlib import Path

import pytest

from basedb.platform.domain.runtimes.faas.egress import EgressProxy, is_public
from basedb.workspace.faas_access import HostRule, parse_host_rule

IPV4_REGISTRY = (
    ("0.0.0.0/8", "This network", "False"),
    ("0.0.0.0/32", "This host on this network", "False"),
    ("10.0.0.0/8", "Private-Use", "False"),
    ("100.64.0.0/10", "Shared Address Space", "False"),
    ("127.0.0.0/8", "Loopback", "False"),
    ("169.254.0.0/16", "Link Local", "False"),
    ("172.16.0.0/12", "Private-Use", "False"),
    ("192.0.0.0/24", "IETF Protocol Assignments", "False"),
    ("192.0.0.0/29", "IPv4 Service Continuity Prefix", "False"),
    ("192.0.0.8/32", "IPv4 dummy address", "False"),
    ("192.0.0.9/32", "Port Control Protocol Anycast", "True"),
    ("192.0.0.10/32", "Traversal Using Relays around NAT Anycast", "True"),
    ("192.0.0.170/32", "NAT64/DNS64 Discovery", "False"),
    ("192.0.0.171/32", "NAT64/DNS64 Discovery", "False"),
    ("192.0.2.0/24", "Documentation (TEST-NET-1)", "False"),
    ("192.31.196.0/24", "AS112-v4", "True"),
    ("192.52.193.0/24", "AMT", "True"),
    ("192.88.99.0/24", "Deprecated (6to4 Relay Anycast)", "N/A"),
    ("192.168.0.0/16", "Private-Use", "False"),
    ("192.175.48.0/24", "Direct Delegation AS112 Service", "True"),
    ("198.18.0.0/15", "Benchmarking", "False"),
    ("198.51.100.0/24", "Documentation (TEST-NET-2)", "False"),
    ("203.0.113.0/24", "Documentation (TEST-NET-3)", "False"),
    ("240.0.0.0/4", "Reserved", "False"),
    ("255.255.255.255/32", "Limited Broadcast", "False"),
)

IPV6_REGISTRY = (
    ("::1/128", "Loopback Address", "False"),
    ("::/128", "Unspecified Address", "False"),
    ("::ffff:0:0/96", "IPv4-mapped Address", "False"),
    ("64:ff9b::/96", "IPv4-IPv6 Translat.", "True"),
    ("64:ff9b:1::/48", "IPv4-IPv6 Translat.", "False"),
    ("100::/64", "Discard-Only Address Block", "False"),
    ("100:0:0:1::/64", "Dummy IPv6 Prefix", "False"),
    ("2001::/23", "IETF Protocol Assignments", "False"),
    ("2001::/32", "TEREDO", "N/A"),
    ("2001:1::1/128", "Port Control Protocol Anycast", "True"),
    ("2001:1::2/128", "Traversal Using Relays around NAT Anycast", "True"),
    ("2001:1::3/128", "DNS-SD Service Registration Protocol Anycast", "True"),
    ("2001:2::/48", "Benchmarking", "False"),
    ("2001:3::/32", "AMT", "True"),
    ("2001:4:112::/48", "AS112-v6", "True"),
    ("2001:10::/28", "Deprecated (previously ORCHID)", "False"),
    ("2001:20::/28", "ORCHIDv2", "True"),
    ("2001:30::/28", "Drone Remote ID Protocol Entity Tags (DETs) Prefix", "True"),
    ("2001:db8::/32", "Documentation", "False"),
    ("2002::/16", "6to4", "N/A"),
    ("2620:4f:8000::/48", "Direct Delegation AS112 Service", "True"),
    ("3fff::/20", "Documentation", "False"),
    ("5f00::/16", "Segment Routing (SRv6) SIDs", "False"),
    ("fc00::/7", "Unique-Local", "False"),
    ("fe80::/10", "Link-Local Unicast", "False"),
)

PUBLIC_V4 = ipaddress.IPv4Address("8.8.8.8")


def _samples(block: str) -> list[ipaddress.IPv4Address | ipaddress.IPv6Address]:
    """The first, second, middle and last address of a block."""
    network = ipaddress.ip_network(block)
    first, size = int(network.network_address), network.num_addresses
    offsets = sorted({0, min(1, size - 1), size // 2, size - 1})
    return [type(network.network_address)(first + offset) for offset in offsets]


def _registry_answer(ip: ipaddress.IPv4Address | ipaddress.IPv6Address,
                     registry: tuple[tuple[str, str, str], ...]) -> str | None:
    """The most specific entry's "Globally Reachable" answer, None outside the registry."""
    holding = [(ipaddress.ip_network(block), answer) for block, _, answer in registry
               if ip in ipaddress.ip_network(block)]
    if not holding:
        return None
    return max(holding, key=lambda row: row[0].prefixlen)[1]


def _v4_expected(ip: ipaddress.IPv4Address) -> bool:
    answer = _registry_answer(ip, IPV4_REGISTRY)
    return answer == "True" or (answer is None and not ip.is_multicast)


def _v6_expected(ip: ipaddress.IPv6Address) -> bool:
    answer = _registry_answer(ip, IPV6_REGISTRY)
    if ip in ipaddress.ip_network("64:ff9b::/96"):
        return _v4_expected(ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF))
    if answer == "N/A":
        inside = (ip.sixtofour,) if ip.sixtofour else ip.teredo or ()
        return bool(inside) and all(_v4_expected(v4) for v4 in inside if v4 is not None)
    if answer is None:
        return ip in ipaddress.ip_network("2000::/3")
    return answer == "True"


V4_SAMPLES = [(str(ip), block, name) for block, name, _ in IPV4_REGISTRY
              for ip in _samples(block)]
V6_SAMPLES = [(str(ip), block, name) for block, name, _ in IPV6_REGISTRY
              for ip in _samples(block)]


@pytest.mark.parametrize(("address", "block", "name"), V4_SAMPLES)
def test_every_ipv4_registry_entry_decides_by_globally_reachable(
        address: str, block: str, name: str) -> None:
    expected = _v4_expected(ipaddress.IPv4Address(address))
    assert is_public(address) is expected, f"{address} in {block} ({name})"


@pytest.mark.parametrize(("address", "block", "name"), V6_SAMPLES)
def test_every_ipv6_registry_entry_decides_by_globally_reachable(
        address: str, block: str, name: str) -> None:
    expected = _v6_expected(ipaddress.IPv6Address(address))
    assert is_public(address) is expected, f"{address} in {block} ({name})"


def _embeddings(v4: ipaddress.IPv4Address) -> dict[str, tuple[ipaddress.IPv6Address, bool]]:
    """`v4` written inside each IPv6 form that carries an IPv4 address, with whether
    that form may ever pass (when `v4` is global)."""
    value = int(v4)
    teredo_server = int(ipaddress.IPv6Address("2001::")) | (int(PUBLIC_V4) << 64)
    return {
        "IPv4-compatible ::a.b.c.d": (ipaddress.IPv6Address(value), False),
        "IPv4-mapped ::ffff:a.b.c.d": (ipaddress.IPv6Address((0xFFFF << 32) | value), False),
        "SIIT ::ffff:0:a.b.c.d": (ipaddress.IPv6Address((0xFFFF << 48) | value), False),
        "NAT64 64:ff9b::/96": (ipaddress.IPv6Address(
            int(ipaddress.IPv6Address("64:ff9b::")) | value), True),
        "local-use NAT64 64:ff9b:1::/48": (ipaddress.IPv6Address(
            int(ipaddress.IPv6Address("64:ff9b:1::")) | value), False),
        "6to4 2002::/16": (ipaddress.IPv6Address(
            int(ipaddress.IPv6Address("2002::")) | (value << 80)), True),
        "Teredo client 2001::/32": (ipaddress.IPv6Address(
            teredo_server | (value ^ 0xFFFFFFFF)), True),
        "Teredo server 2001::/32": (ipaddress.IPv6Address(
            int(ipaddress.IPv6Address("2001::")) | (value << 64)
            | (int(PUBLIC_V4) ^ 0xFFFFFFFF)), True),
    }


EMBEDDED = [(form, str(address), str(v4), passes and _v4_expected(v4))
            for v4 in [PUBLIC_V4, *(ip for block, _, _ in IPV4_REGISTRY
                                    for ip in _samples(block))]
            for form, (address, passes) in _embeddings(v4).items()]


@pytest.mark.parametrize(("form", "address", "v4", "expected"), EMBEDDED)
def test_an_ipv4_address_inside_an_ipv6_form_is_judged_as_itself(
        form: str, address: str, v4: str, expected: bool) -> None:
    assert is_public(address) is expected, f"{v4} as {form}: {address}"


@pytest.mark.parametrize(("address", "expected"), [
    ("::7f00:1", False), ("::ffff:0:7f00:1", False), ("64:ff9b:1::a00:1", False),
    ("fec0::1", False), ("feff:ffff::1", False), ("ff02::1", False), ("ff0e::1", False),
    ("224.0.0.1", False), ("239.255.255.250", False), ("fe80::1%eth0", False),
    ("not an address", False), ("1.1.1.1", True), ("2606:4700:4700::1111", True),
    ("64:ff9b::808:808", True), ("2002:808:808::1", True),
])
def test_forms_outside_the_registries(address: str, expected: bool) -> None:
    assert is_public(address) is expected


@pytest.mark.parametrize("address", ["::7f00:1", "::ffff:0:7f00:1", "64:ff9b:1::7f00:1",
                                     "fec0::1"])
def test_the_proxy_refuses_a_declared_host_that_resolves_to_an_internal_form(
        tmp_path: Path, address: str) -> None:
    """The reported attack end to end: the declared host resolves to the address; the
    proxy's CONNECT answer is a refusal, and nothing is dialled."""
    dialled: list[str] = []

    async def resolver(host: str, port: int) -> list[str]:
        dialled.append(host)
        return [address]

    proxy = EgressProxy(resolver=resolver)
    grant = proxy.grant(tmp_path / "egress.sock", (_rule("api.example.com"),),
                        owner=None)
    try:
        head = asyncio.run(_connect(tmp_path / "egress.sock", "api.example.com:443"))
    finally:
        grant.close()
        proxy.close()
    assert dialled == ["api.example.com"]
    assert head.startswith(b"HTTP/1.1 403"), head
    assert b"not public" in head


async def _connect(path: Path, target: str) -> bytes:
    reader, writer = await asyncio.open_unix_connection(str(path))
    writer.write(f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n".encode())
    await writer.drain()
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
    writer.close()
    return head


def _rule(text: str) -> HostRule:
    rule = parse_host_rule(text)
    assert isinstance(rule, HostRule), rule
    return rule
