"""`basedb demo`: the whole journey on the embedded platform, for a newcomer.

    init the example template into a new directory (site, Base, sample records)
    check → deploy preview → deploy production
    invoke a read function through the Agent OpenAPI, as an external agent would

Every step is the same core call the individual commands make; `on_step` reports each
one as it finishes, so the command can show progress.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from basedb.check.run import check_workspace
from basedb.client import endpoints
from basedb.client.sites import SiteApi
from basedb.contracts import stale_findings
from basedb.core.frozen import frozen_dataclass
from basedb.core.wording import plural
from basedb.deploy.pipeline import deploy_preview, findings_error
from basedb.deploy.production import deploy_production
from basedb.deploy.provision import PlatformProvisioner
from basedb.deploy.results import PreviewResult, ProductionResult
from basedb.workspace.loader import load_workspace
from basedb.workspace.scaffold import init_workspace

if TYPE_CHECKING:
    from basedb.client.client import Client

DEFAULT_DIRECTORY = "basedb-demo"
# How many numbered defaults (basedb-demo-2, -3, …) are tried before giving up.
MAX_DEFAULT_DIRECTORIES = 100
TEMPLATE = "example"
DEMO_FUNCTION = "listPeriods"
ROWS_SHOWN = 3

StepCallback = Callable[[str, str], None]  # (step, one-line summary)


def default_demo_directory(parent: Path) -> Path:
    """Where `basedb demo` without a directory goes: `basedb-demo` under `parent`, or
    `basedb-demo-2`, `-3`, … when earlier runs left theirs, so that running the demo
    again starts afresh instead of failing (a named directory must still be new or
    empty). After MAX_DEFAULT_DIRECTORIES the first is returned, and its check refuses it."""
    first = parent / DEFAULT_DIRECTORY
    for n in range(1, MAX_DEFAULT_DIRECTORIES + 1):
        candidate = first if n == 1 else parent / f"{DEFAULT_DIRECTORY}-{n}"
        if not candidate.exists() and not candidate.is_symlink():
            return candidate
        if candidate.is_dir() and not candidate.is_symlink() and not any(candidate.iterdir()):
            return candidate
    return first


@frozen_dataclass
class DemoResult:
    """What `basedb demo` made, what it called, and what to try next."""

    workspace: Path
    app_token: str
    preview: PreviewResult
    prod: ProductionResult
    function_id: str
    row_count: int
    rows: Sequence[Mapping[str, Any]]  # the first few

    @property
    def next_open(self) -> list[str]:
        return ["basedb serve", "basedb auth token   # sign in to the page with it"]

    @property
    def next_try(self) -> list[str]:
        site = endpoints.functions(self.app_token)
        return [
            f"cd {shlex.quote(str(self.workspace))}",
            f"basedb api GET {site} --params '{{\"env\":\"prod\"}}'",
            f"basedb api GET {site}/listTeamLeave --params '{{\"env\":\"prod\"}}'",
            f"basedb api POST {site}/{self.function_id}/invoke --params "
            f"'{{\"env\":\"prod\"}}' --data '{{\"params\":{{}}}}'",
            f"basedb agent-tools skill install --site {self.app_token}",
        ]

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": True, "workspace": str(self.workspace), "appToken": self.app_token,
            "previewDeploymentId": self.preview.deployment_id,
            "prodDeploymentId": self.prod.deployment_id,
            "baseAppUrl": self.prod.base_app_url, "fingerprint": self.prod.fingerprint,
            "invoked": {"functionId": self.function_id, "env": "prod",
                        "rowCount": self.row_count, "rows": [dict(r) for r in self.rows]},
            "next": {"open": self.next_open, "try": self.next_try},
        }


def run_demo(target: Path, client: Client, *,
             on_step: StepCallback | None = None) -> DemoResult:
    def step(name: str, summary: str) -> None:
        if on_step is not None:
            on_step(name, summary)

    created = init_workspace(target, TEMPLATE, provisioner=PlatformProvisioner(client))
    root, app = created.workspace, created.app_token
    step("init", f"created site {app} ({created.title}) with a Base of sample records in "
                 f"{root}")

    checked = check_workspace(load_workspace(root), contracts=stale_findings)
    if not checked.ok:
        raise findings_error(checked)
    counts = ", ".join(f"{n} {kind}" for kind, n in checked.counts.items())
    step("check", f"no errors ({counts})")

    preview = deploy_preview(root, client)
    step("preview", f"deployed preview {preview.deployment_id}")
    prod = deploy_production(root, client)
    step("production", f"promoted it to production: {prod.base_app_url}")

    data = SiteApi(client, app).invoke(DEMO_FUNCTION, {}, env="prod")
    rows = data.get("rows") or []
    step("invoke", f"{DEMO_FUNCTION} answered with {plural(len(rows), 'row')}")

    return DemoResult(workspace=root, app_token=app, preview=preview, prod=prod,
                      function_id=DEMO_FUNCTION, row_count=data.get("rowCount", len(rows)),
                      rows=rows[:ROWS_SHOWN])
