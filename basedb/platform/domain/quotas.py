"""What one owner's sites may hold of a shared platform, below its global limits.

The global caps (FaaS calls at once, slow-query slots, log storage) protect the machine;
a per-site share alone does not protect tenants from each other, since one user can own
many sites. So each share is counted per owner (the user who owns a site: members and
admins use the owner's share), and the number of sites one user may own is capped too.
The platform's owner (who runs the server, and can raise these) is exempt from the
site quota only.

`basedb serve` sets these from its options (`--sites-per-owner`, `--faas-per-owner`,
`--slow-queries-per-owner`, `--log-mib-per-owner`, `--log-mib`; and, for its own
stderr, `--output-kib-per-minute`); an embedded platform uses the defaults.
docs/security.md lists them.
"""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING

from basedb.core.frozen import frozen_dataclass
from basedb.protocol import ApiFailure, permission_denied

if TYPE_CHECKING:  # `basedb serve` reads the defaults at start-up: this module stays light
    from basedb.platform.domain.identity import User

MIB = 1024 * 1024
SITES_PER_OWNER = 20
# Half the global caps (16 FaaS calls, 4 slow-query slots): whoever holds their whole
# share leaves the other half to everyone else.
FAAS_PER_OWNER = 8
SLOW_QUERIES_PER_OWNER = 2
LOG_MIB_PER_OWNER = 64
LOG_MIB = 1024
OUTPUT_KIB_PER_MINUTE = 1024  # of `basedb serve`'s stderr (storage.server_output)


@frozen_dataclass
class OwnerQuotas:
    sites: int = SITES_PER_OWNER  # sites one user may own
    faas_calls: int = FAAS_PER_OWNER  # FaaS calls of one owner's sites running at once
    slow_queries: int = SLOW_QUERIES_PER_OWNER  # slow-query slots of one owner's sites
    log_bytes: int = LOG_MIB_PER_OWNER * MIB  # platform log kept for one owner's sites
    log_bytes_total: int = LOG_MIB * MIB  # platform log kept in all


def require_site_quota(conn: sqlite3.Connection, user: User, quotas: OwnerQuotas) -> None:
    """Refuse a new site when `user` already owns as many as they may."""
    if user.is_platform_owner:
        return
    owned = conn.execute("SELECT count(*) FROM sites WHERE owner_id = ?",
                         (user.user_id,)).fetchone()[0]
    if owned >= quotas.sites:
        raise site_quota_reached(user, owned, quotas.sites)


def site_quota_reached(user: User, owned: int, limit: int) -> ApiFailure:
    return permission_denied(
        f"User {user.user_id} already owns {owned} sites, this platform's limit per owner "
        f"({limit}), so no site was created",
        "delete a site you no longer need (`basedb sites delete APP_TOKEN --yes`), or ask "
        "the platform's owner to raise `basedb serve --sites-per-owner`")
