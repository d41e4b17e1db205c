"""`basedb pull`: restore a workspace from a site's latest deployment.

    GET deployments                         the prod or the latest preview deployment
    GET deployments/:id/artifact            its site.zip, verified against the fingerprint
                                            (read_site_zip: unsafe or escaping entries are
                                            refused before anything is written)
    GET catalog                             catalog.json from the live catalog
    GET draft/ai-functions                  ai/<key>/function.json from the remote drafts
                                            (none when AI Functions are not enabled)

The restored files are the artifact's, with catalog.json and ai/ replaced by the live
versions; base-database.jsonc gets the live bound table ids merged in. A file whose live
version means the same as the archived one keeps the archived bytes, so pulling an
unchanged site gives back exactly the deployed fingerprint. Everything is then written
by one `safe_extract`, which refuses to overwrite local changes without `force`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from basedb.client.sites import SiteApi
from basedb.core import site_zip
from basedb.core.errors import ApiError, ConflictError, InputError
from basedb.core.site_zip import build_site_zip, read_site_zip
from basedb.deploy.artifact import safe_extract
from basedb.deploy.catalog_sync import canonical_catalog, catalog_text, merge_binding, same_catalog
from basedb.deploy.payloads import AI_LIST
from basedb.deploy.results import PullResult
from basedb.protocol import Code
from basedb.protocol.deployments import DeploymentSummary
from basedb.workspace import files
from basedb.workspace.catalog import CATALOG_FILE
from basedb.workspace.config import CONFIG_FILE
from basedb.workspace.jsonc_edit import JsoncEditError, set_string
from basedb.workspace.model import KIND_DIRS
from basedb.workspace.scaffold import GITIGNORE_TEXT

if TYPE_CHECKING:
    from basedb.client.client import Client
    from basedb.deploy.artifact import ExtractReport

AI_DIR = KIND_DIRS["ai_function"]
GITIGNORE_FILE = ".gitignore"


def choose_deployment(api: SiteApi, env: str) -> DeploymentSummary:
    """The deployment summary pull restores: prod, or the latest preview."""
    listing = api.deployments()
    wanted = (listing.prod_deployment_id if env == "prod"
              else listing.preview_deployment_id)
    found = next((d for d in listing.deployments if d.deployment_id == wanted), None)
    if found is None:
        if env == "prod":
            raise ConflictError(f"Site {api.app_token} has no production deployment to pull.",
                                code="PULL_NO_DEPLOYMENT",
                                hint="Pull the latest preview with `--env preview`, or "
                                     "promote one first.")
        raise ConflictError(f"Site {api.app_token} has no deployment to pull yet.",
                            code="PULL_NO_DEPLOYMENT",
                            hint="Deploy the site first (`basedb deploy`), or create a new "
                                 "workspace with `basedb init`.")
    return found


def _archive_files(zip_bytes: bytes, fingerprint: str) -> dict[str, bytes]:
    """The verified files of an artifact (unsafe archives raise before anything is kept)."""
    return dict(read_site_zip(zip_bytes, expected_fingerprint=fingerprint).contents)


def _remote_ai(api: SiteApi) -> dict[str, Any] | None:
    """Remote AI drafts by key, or None when AI Functions are not enabled."""
    try:
        data = api.draft_ai_functions()
    except ApiError as error:
        if error.code == Code.AI_FUNCTION_NOT_ENABLED:
            return None
        raise
    items = data.get(AI_LIST)
    return {item["key"]: item.get("declaration") for item in items or []
            if isinstance(item, dict) and isinstance(item.get("key"), str)}


def _same_json(data: bytes | None, doc: Any) -> bool:
    if data is None:
        return False
    try:
        return bool(json.loads(data.decode("utf-8")) == doc)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return False


def restored_files(archive: dict[str, bytes], catalog: dict[str, Any],
                   ai_drafts: dict[str, Any] | None, app_token: str) -> dict[str, bytes]:
    """The files pull writes: the archive's, with the live catalog, AI drafts and binding."""
    result = dict(archive)
    if not same_catalog(archive.get(CATALOG_FILE), catalog):
        result[CATALOG_FILE] = catalog_text(catalog).encode("utf-8")
    # Remote AI drafts are the truth for ai/: archived AI files are replaced by them, or
    # dropped when the account has none (or AI Functions are not enabled).
    for path in [p for p in result if p.startswith(AI_DIR + "/")]:
        del result[path]
    for key, declaration in sorted((ai_drafts or {}).items()):
        path = f"{AI_DIR}/{key}/function.json"
        old = archive.get(path)
        result[path] = old if old is not None and _same_json(old, declaration) else (
            json.dumps(declaration, ensure_ascii=False, indent=2) + "\n").encode("utf-8")
    config = result.get(CONFIG_FILE)
    if config is not None:
        merged = _merged_config(config, catalog, app_token)
        if merged is not None:
            result[CONFIG_FILE] = merged
    return result


def _merged_config(config: bytes, catalog: dict[str, Any], app_token: str) -> bytes | None:
    """The archived base-database.jsonc with the live binding (and the site's appToken),
    or None when it needs no change or cannot be edited (check reports a broken one)."""
    try:
        text = files.decode_text(config, label=CONFIG_FILE)
        merged, _ = merge_binding(text, catalog)
        doc = files.parse_jsonc(merged, label=CONFIG_FILE)
        if isinstance(doc, dict) and doc.get("appToken") != app_token:
            merged = set_string(merged, ("appToken",), app_token)
    except (files.FileProblem, InputError, JsoncEditError):
        return None
    if merged == text:
        return None
    bom = b"\xef\xbb\xbf" if config.startswith(b"\xef\xbb\xbf") else b""
    return bom + merged.encode("utf-8")


def pull_site(client: Client, *, app_token: str, target: Path, env: str = "preview",
              force: bool = False) -> PullResult:
    """Restore the site `app_token` into `target` (a new directory or its workspace)."""
    api = SiteApi(client, app_token)
    deployment = choose_deployment(api, env)
    deployed = deployment.fingerprint
    archive = _archive_files(api.artifact(deployment.deployment_id), deployed)
    catalog = canonical_catalog(api.catalog())
    ai_drafts = _remote_ai(api)
    contents = restored_files(archive, catalog, ai_drafts, app_token)

    inputs = [site_zip.InputFile.of(path, data) for path, data in sorted(contents.items())]
    fingerprint = site_zip.fingerprint(inputs)
    fresh = not target.exists() or (target.is_dir() and not any(target.iterdir()))
    report: ExtractReport = safe_extract(build_site_zip(inputs, fingerprint), target, force=force)
    if fresh and not (report.target / GITIGNORE_FILE).exists():
        (report.target / GITIGNORE_FILE).write_text(GITIGNORE_TEXT, encoding="utf-8")
    return PullResult(
        app_token=app_token, env=env, deployment_id=deployment.deployment_id,
        target=str(report.target), fingerprint=fingerprint, deployed_fingerprint=deployed,
        created=tuple(report.created), overwritten=tuple(report.overwritten),
        unchanged=tuple(report.unchanged),
        ai_keys=None if ai_drafts is None else tuple(ai_drafts))
