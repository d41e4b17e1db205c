"""What a FaaS function may reach beyond its own records: the hosts it calls and the
secrets it reads, as declared in its function.json.

    {"name": "notifySlack", …,
     "network": {"allow": ["hooks.slack.com", "*.stripe.com", "api.example.com:8443"]},
     "secrets": ["SLACK_WEBHOOK_URL", "STRIPE_API_KEY"]}

A host rule is a DNS name, or `*.` and a name for any name below it (not the name
itself), with an optional `:port` (default 443, so `host:80` for plain HTTP). IP
addresses and names that only make sense inside a network (`localhost`, `*.local`,
`*.internal`, …) are refused: the platform only ever connects to public addresses, and
it resolves the names itself. A secret is an environment variable the handler reads
from `process.env`; its value is set on the platform (`basedb secrets set NAME`),
never in the workspace.

Shared by `basedb check` (findings) and the platform (which enforces the same rules).
"""

from __future__ import annotations

import ipaddress
import re

from basedb.core.frozen import frozen_dataclass

MAX_HOST_RULES = 32
MAX_SECRETS = 32
DEFAULT_PORT = 443
_SECRET_NAME = r"[A-Z][A-Z0-9_]{0,63}"
SECRET_NAME_RE = re.compile(rf"^{_SECRET_NAME}\Z")  # \Z: "API_KEY\n" is no name
SECRET_NAME_PATTERN = f"^{_SECRET_NAME}$"  # JSON Schema's form: its $ ends the input
# Names the platform sets for the handler, or that change how Node.js itself behaves.
RESERVED_SECRETS = frozenset({"PATH", "HOME", "TMPDIR", "LANG", "TZ", "PWD", "SHELL", "USER"})
RESERVED_SECRET_PREFIXES = ("NODE_", "BASEDB_", "LD_", "UV_", "OPENSSL_", "SSL_", "NPM_")
_LABEL = r"(?!-)[a-z0-9-]{1,63}(?<!-)"
_NAME_RE = re.compile(rf"^(?:{_LABEL}\.)+[a-z][a-z0-9-]{{0,62}}(?<!-)\Z")
_PRIVATE_SUFFIXES = ("localhost", "local", "internal", "intranet", "lan", "home", "corp",
                     "private", "home.arpa", "in-addr.arpa", "ip6.arpa", "test", "invalid",
                     "example")


@frozen_dataclass
class HostRule:
    """One `network.allow` entry: a host (or `*.` and its subdomains) and a port."""

    name: str  # lower-case, without the leading "*."
    wildcard: bool
    port: int

    def matches(self, host: str, port: int) -> bool:
        host = host.lower().rstrip(".")
        if port != self.port:
            return False
        if self.wildcard:
            return host.endswith("." + self.name)
        return host == self.name

    def __str__(self) -> str:
        port = "" if self.port == DEFAULT_PORT else f":{self.port}"
        return f"{'*.' if self.wildcard else ''}{self.name}{port}"


def parse_host_rule(text: str) -> HostRule | str:
    """The rule `text` declares, or what is wrong with it (a sentence)."""
    if not isinstance(text, str) or not text.strip():
        return "a host rule must be a non-empty string such as \"api.example.com\""
    raw = text.strip()
    name, port = raw, DEFAULT_PORT
    if "://" in raw or "/" in raw:
        return f"{raw!r} is a URL; declare only the host name, such as \"api.example.com\""
    head, colon, tail = raw.rpartition(":")
    if colon and tail.isdigit() and "]" not in tail:
        name, port = head, int(tail)
        if not 1 <= port <= 65535:
            return f"{raw!r} has port {port}; a port is from 1 to 65535"
    wildcard = name.startswith("*.")
    name = (name[2:] if wildcard else name).lower().rstrip(".")
    try:
        ipaddress.ip_address(name.strip("[]"))
    except ValueError:
        pass
    else:
        return (f"{raw!r} is an IP address; declare the service's host name, which the "
                "platform resolves to public addresses only")
    if "*" in name:
        return f"{raw!r} has a * that is not a leading \"*.\"; use \"*.example.com\""
    if not _NAME_RE.match(name) or len(name) > 253:
        return (f"{raw!r} is not a host name: use letters, digits and hyphens in dot-"
                "separated labels, such as \"api.example.com\"")
    if any(name == s or name.endswith("." + s) for s in _PRIVATE_SUFFIXES):
        return (f"{raw!r} names a host of a private or reserved domain; FaaS handlers "
                "reach public hosts only")
    return HostRule(name, wildcard, port)


def host_rules(texts: tuple[str, ...]) -> tuple[HostRule, ...]:
    """The valid rules among `texts` (the platform deploys only checked declarations)."""
    return tuple(rule for text in texts if isinstance(rule := parse_host_rule(text), HostRule))


def secret_name_problem(name: object) -> str | None:
    """What is wrong with a secret's name, or None."""
    if not isinstance(name, str) or not SECRET_NAME_RE.match(name):
        return (f"{name!r} is not a secret name: use upper-case letters, digits and _, "
                "starting with a letter (at most 64), such as \"STRIPE_API_KEY\"")
    if name in RESERVED_SECRETS or name.startswith(RESERVED_SECRET_PREFIXES):
        return (f"{name!r} is reserved: the platform sets it, or it changes how Node.js "
                "runs; pick another name")
    return None
