"""Which addresses the egress proxy may connect to: global unicast only.

    is_global_unicast("93.184.216.34")      # True
    is_global_unicast("::7f00:1")           # False: IPv4-compatible loopback
    is_global_unicast("64:ff9b::808:808")   # True: NAT64 of a public address

The decision is written out here rather than taken from `ipaddress.is_global`, whose
answer differs between Python releases and misses the deprecated IPv6 forms that still
route on some hosts (IPv4-compatible `::a.b.c.d`, SIIT `::ffff:0:a.b.c.d`, site-local
`fec0::/10`) and the local-use NAT64 prefix `64:ff9b:1::/48`.

The tables follow IANA's IPv4 and IPv6 Special-Purpose Address Registries: an address
takes the "Globally Reachable" answer of the most specific block holding it. Blocks the
registry marks N/A are the ones that carry an IPv4 address inside (6to4, Teredo); they
pass only when every IPv4 address inside is itself global. Outside the registries an
IPv4 address passes unless it is multicast, and an IPv6 address passes only inside the
global unicast space `2000::/3`.
"""

from __future__ import annotations

import ipaddress
from typing import Literal

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
Reach = Literal["global", "local", "embedded"]


def _table(rows: tuple[tuple[str, Reach], ...]) -> tuple[tuple[Network, Reach], ...]:
    """Most specific block first, so the first block holding an address decides."""
    parsed = [(ipaddress.ip_network(block), reach) for block, reach in rows]
    return tuple(sorted(parsed, key=lambda row: -row[0].prefixlen))


_IPV4 = _table((
    ("0.0.0.0/8", "local"), ("0.0.0.0/32", "local"), ("10.0.0.0/8", "local"),
    ("100.64.0.0/10", "local"), ("127.0.0.0/8", "local"), ("169.254.0.0/16", "local"),
    ("172.16.0.0/12", "local"), ("192.0.0.0/24", "local"), ("192.0.0.0/29", "local"),
    ("192.0.0.8/32", "local"), ("192.0.0.9/32", "global"), ("192.0.0.10/32", "global"),
    ("192.0.0.170/32", "local"), ("192.0.0.171/32", "local"), ("192.0.2.0/24", "local"),
    ("192.31.196.0/24", "global"), ("192.52.193.0/24", "global"),
    ("192.88.99.0/24", "local"),  # deprecated 6to4 relay anycast
    ("192.168.0.0/16", "local"), ("192.175.48.0/24", "global"), ("198.18.0.0/15", "local"),
    ("198.51.100.0/24", "local"), ("203.0.113.0/24", "local"),
    ("224.0.0.0/4", "local"),  # multicast: not a unicast destination
    ("240.0.0.0/4", "local"), ("255.255.255.255/32", "local"),
))

_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
_IPV6 = _table((
    ("::1/128", "local"), ("::/128", "local"), ("::ffff:0:0/96", "local"),
    ("64:ff9b::/96", "embedded"), ("64:ff9b:1::/48", "local"), ("100::/64", "local"),
    ("100:0:0:1::/64", "local"), ("2001::/23", "local"), ("2001::/32", "embedded"),
    ("2001:1::1/128", "global"), ("2001:1::2/128", "global"), ("2001:1::3/128", "global"),
    ("2001:2::/48", "local"), ("2001:3::/32", "global"), ("2001:4:112::/48", "global"),
    ("2001:10::/28", "local"), ("2001:20::/28", "global"), ("2001:30::/28", "global"),
    ("2001:db8::/32", "local"), ("2002::/16", "embedded"), ("2620:4f:8000::/48", "global"),
    ("3fff::/20", "local"), ("5f00::/16", "local"), ("fc00::/7", "local"),
    ("fe80::/10", "local"),
))
_GLOBAL_UNICAST = ipaddress.IPv6Network("2000::/3")


def is_global_unicast(address: str) -> bool:
    """Whether connecting to `address` (a literal, maybe with a `%zone`) leaves this
    machine's networks for the public Internet."""
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv4Address):
        return _reach(ip, _IPV4) in ("global", None)
    reach = _reach(ip, _IPV6)
    if reach == "embedded":
        inside = _embedded(ip)
        return bool(inside) and all(_reach(v4, _IPV4) in ("global", None) for v4 in inside)
    if reach is None:
        return ip in _GLOBAL_UNICAST
    return reach == "global"


def _reach(ip: ipaddress.IPv4Address | ipaddress.IPv6Address,
           table: tuple[tuple[Network, Reach], ...]) -> Reach | None:
    for network, reach in table:
        if ip in network:
            return reach
    return None


def _embedded(ip: ipaddress.IPv6Address) -> tuple[ipaddress.IPv4Address, ...]:
    """The IPv4 addresses a NAT64, 6to4 or Teredo address carries."""
    if ip in _NAT64:
        return (ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF),)
    if ip.sixtofour is not None:
        return (ip.sixtofour,)
    if ip.teredo is not None:
        return ip.teredo  # (server, client)
    return ()
