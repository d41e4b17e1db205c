"""`basedb init --app-token`: a new workspace for a site that already exists.

Upstream restores a remote project "by source: `pull` or `init`". basedb does both from
the same place: a site that has a deployment is restored from it, exactly as `pull`
restores it into a new directory (source, live catalog.json, remote AI drafts); a site
that was created but never deployed has no source to restore, so the workspace is the
blank template bound to the site's live catalog, ready for its first functions.

Either way the directory must be new or empty, as for every `init`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from basedb.client.sites import SiteApi
from basedb.core.errors import ConflictError
from basedb.core.frozen import frozen_dataclass
from basedb.deploy.catalog_sync import canonical_catalog
from basedb.deploy.pull import pull_site
from basedb.workspace.scaffold import ensure_empty_target, write_workspace_files

if TYPE_CHECKING:
    from basedb.client.client import Client

NEVER_DEPLOYED_TEMPLATE = "blank"


@frozen_dataclass
class RestoreResult:
    """The workspace `init --app-token` wrote, and where its files came from."""

    workspace: Path
    app_token: str
    base_token: str
    template: str | None  # the template of a never-deployed site's workspace; else None
    files: tuple[str, ...]  # workspace-relative, sorted
    deployment_id: str | None  # the deployment restored; None when there was none
    env: str | None
    fingerprint: str | None

    def to_dict(self) -> dict[str, Any]:
        """`basedb init --app-token --json`: init's keys, and `restoredFrom`."""
        restored = None if self.deployment_id is None else {
            "deploymentId": self.deployment_id, "env": self.env,
            "fingerprint": self.fingerprint}
        return {"workspace": str(self.workspace), "appToken": self.app_token,
                "baseToken": self.base_token, "template": self.template,
                "files": list(self.files), "restoredFrom": restored}


def restore_workspace(client: Client, *, app_token: str, target: Path) -> RestoreResult:
    """Write the workspace of the existing site `app_token` into `target` (new or empty)."""
    ensure_empty_target(target)
    try:
        pulled = pull_site(client, app_token=app_token, target=target, env="preview")
    except ConflictError as error:
        if error.code != "PULL_NO_DEPLOYMENT":
            raise
    else:
        workspace = Path(pulled.target)
        files = sorted({*pulled.created, *pulled.overwritten, *pulled.unchanged,
                        *_extra_files(workspace, pulled.created)})
        catalog = canonical_catalog(SiteApi(client, app_token).catalog())
        return RestoreResult(workspace=workspace, app_token=app_token,
                             base_token=str(catalog["baseToken"]), template=None,
                             files=tuple(files), deployment_id=pulled.deployment_id,
                             env=pulled.env, fingerprint=pulled.fingerprint)
    api = SiteApi(client, app_token)
    site = api.site()
    catalog = canonical_catalog(api.catalog())
    written = write_workspace_files(
        target, NEVER_DEPLOYED_TEMPLATE, title=str(site.get("title") or app_token),
        app_token=app_token, base_token=str(catalog["baseToken"]),
        table_ids=[t["tableId"] for t in catalog["tables"]], catalog=catalog)
    workspace = target.resolve()
    return RestoreResult(workspace=workspace, app_token=app_token,
                         base_token=str(catalog["baseToken"]),
                         template=NEVER_DEPLOYED_TEMPLATE,
                         files=tuple(sorted(p.resolve().relative_to(workspace).as_posix()
                                            for p in written)),
                         deployment_id=None, env=None, fingerprint=None)


def _extra_files(workspace: Path, created: tuple[str, ...]) -> list[str]:
    """Files pull adds beside the archive's (the .gitignore of a fresh workspace)."""
    return [".gitignore"] if ".gitignore" not in created and (
        workspace / ".gitignore").is_file() else []
