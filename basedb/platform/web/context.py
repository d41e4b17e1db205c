"""`AppContext`: what every handler of one platform app may use (the store, the data
dir, the app's caches, the platform log's writer, the FaaS runtime, the owners' quotas).
The gate, the request layer and the routes all take it; it depends on none of them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from basedb.platform.domain.caches import DomainCaches
from basedb.platform.domain.quotas import OwnerQuotas
from basedb.platform.domain.runtimes.faas import FaasRuntime, shared_runtime
from basedb.platform.storage import platform_log
from basedb.platform.storage.store import Store
from basedb.platform.web.pages import SITES_KEPT, SiteFilesMemo


@dataclass(slots=True)
class AppContext:
    """What every handler may use; shared by all requests of one app. Mutable only so
    that an embedded platform can send its log to a file (`LocalPlatform.log_to_file`)."""

    store: Store
    data_dir: Path
    # What this app keeps in memory, derived from rows that never change under its keys.
    caches: DomainCaches = field(default_factory=DomainCaches)
    site_files: SiteFilesMemo = field(default_factory=lambda: SiteFilesMemo(SITES_KEPT))
    # Where the platform log goes (basedb.platform.storage.platform_log); None: stderr.
    log_file: Path | None = None
    # FaaS workers, caps and sandbox: by default the process's, shared by its apps.
    faas: FaasRuntime = field(default_factory=shared_runtime)
    # What one owner's sites may hold of the platform (basedb serve's options).
    quotas: OwnerQuotas = field(default_factory=OwnerQuotas)
    # Saves the requests' platform log entries off the request path.
    log_writer: platform_log.LogWriter = field(init=False)

    def __post_init__(self) -> None:
        self.log_writer = platform_log.LogWriter(
            self.store.write, caps=platform_log.LogCaps(self.quotas.log_bytes,
                                                        self.quotas.log_bytes_total))
