"""`basedb demo`: the whole journey on the embedded platform, for a newcomer.

    init the example template into a new directory (site, Base, sample records)
    check → deploy preview → deploy production
    invoke a read function through the Agent OpenAPI, as an external agent would

Every step is the same core call the individual commands make; `on_step` reports each
one as it finishes, so the command can show progress.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from basedb.check.run import check_workspace
from basedb.client import endpoints
from basedb.client.sites import SiteApi
from basedb.contracts import stale_findings
from basedb.deploy.pipeline import deploy_preview, findings_error
from basedb.deploy.production import deploy_production
from basedb.deploy.provision import PlatformProvisioner
from basedb.workspace.loader import load_workspace
from basedb.workspace.scaffold import init_workspace

if TYPE_CHECKING:
    from basedb.client.client import Client

DEFAULT_DIRECTORY = "basedb-demo"
TEMPLATE = "example"
DEMO_FUNCTION = "listPeriods"
ROWS_SHOWN = 3

StepCallback = Callable[[str, str], None]  # (step, one-line summary)


def run_demo(target: Path, client: Client, *,
             on_step: StepCallback | None = None) -> dict[str, Any]:
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
    step("preview", f"deployed preview {preview['deploymentId']}")
    prod = deploy_production(root, client)
    step("production", f"promoted it to production: {prod['baseAppUrl']}")

    data = SiteApi(client, app).invoke(DEMO_FUNCTION, {}, env="prod")
    rows = data.get("rows") or []
    step("invoke", f"{DEMO_FUNCTION} answered with {len(rows)} row(s)")

    site = endpoints.functions(app)
    return {
        "ok": True, "workspace": str(root), "appToken": app,
        "previewDeploymentId": preview["deploymentId"],
        "prodDeploymentId": prod["deploymentId"], "baseAppUrl": prod["baseAppUrl"],
        "fingerprint": prod["fingerprint"],
        "invoked": {"functionId": DEMO_FUNCTION, "env": "prod",
                    "rowCount": data.get("rowCount", len(rows)), "rows": rows[:ROWS_SHOWN]},
        "next": {
            "open": ["basedb serve", "basedb auth token   # sign in to the page with it"],
            "try": [
                f"cd {shlex.quote(str(root))}",
                f"basedb api GET {site} --params '{{\"env\":\"prod\"}}'",
                f"basedb api GET {site}/listTeamLeave --params '{{\"env\":\"prod\"}}'",
                f"basedb api POST {site}/{DEMO_FUNCTION}/invoke --params "
                f"'{{\"env\":\"prod\"}}' --data '{{\"params\":{{}}}}'",
                f"basedb agent-tools skill install --site {app}",
            ],
        },
    }
