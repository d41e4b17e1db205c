"""`basedb ai-functions sync`: the site's AI Function draft becomes exactly `ai/`.

Upstream's rule, unlike `deploy`'s: an explicit sync overwrites the whole set, whatever
the local set is, so a key the site has and `ai/` lacks is deleted, and syncing an empty
`ai/` deletes every remote AI Function, without asking. `plan_sync` says what would
change (what `--dry-run` prints, and the keys deleted); `apply_sync` writes the draft
(a full overwrite). The AI Functions reach preview and prod with the next
`basedb deploy`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from basedb.check.run import check_workspace
from basedb.client.sites import SiteApi
from basedb.core.errors import BasedbError
from basedb.core.site_zip import InputFile
from basedb.deploy import payloads
from basedb.deploy.pipeline import findings_error
from basedb.workspace.declarations import KIND_DIRS
from basedb.workspace.files import Contents
from basedb.workspace.inputs import collect_inputs
from basedb.workspace.loader import load_workspace

AI_DIR = KIND_DIRS["ai_function"]


@dataclass(slots=True)
class AiSyncPlan:
    app_token: str
    local: list[str]
    remote: list[str]
    body: dict[str, list[dict[str, Any]]] = field(repr=False)

    @property
    def added(self) -> list[str]:
        return sorted(set(self.local) - set(self.remote))

    @property
    def updated(self) -> list[str]:
        return sorted(set(self.local) & set(self.remote))

    @property
    def deleted(self) -> list[str]:
        return sorted(set(self.remote) - set(self.local))

    def to_dict(self) -> dict[str, Any]:
        return {"appToken": self.app_token, "keys": self.local, "added": self.added,
                "updated": self.updated, "deleted": self.deleted}


def local_ai_body(root: Path) -> tuple[str, list[str], dict[str, list[dict[str, Any]]]]:
    """(appToken, local keys, the PUT draft/ai-functions body) of the workspace; stops
    with the findings when an AI Function declaration is wrong. The files are read once,
    as a deploy reads them: the body is made of the documents the workspace was loaded
    from."""
    try:
        collected: list[InputFile] | BasedbError = collect_inputs(root)
    except BasedbError as error:
        collected = error
    contents = (Contents({item.path: item.data for item in collected})
                if isinstance(collected, list) else None)
    workspace = load_workspace(root, known=contents)
    result = check_workspace(workspace)
    ai_errors = [f for f in result.errors if f.file.startswith(f"{AI_DIR}/")]
    if ai_errors or workspace.config is None:
        raise findings_error(result)
    if contents is None:
        assert isinstance(collected, BasedbError)
        raise collected
    keys = payloads.ids_of_kind(workspace.ids, "ai_function")
    return workspace.config.app_token, keys, payloads.ai_body(contents, keys)


def plan_sync(root: Path, api_for: Any) -> tuple[AiSyncPlan, SiteApi]:
    """What `sync` would do: `api_for(app_token)` gives the site's SiteApi."""
    app_token, keys, body = local_ai_body(root)
    api: SiteApi = api_for(app_token)
    remote = payloads.remote_ai_keys(api.draft_ai_functions())
    return AiSyncPlan(app_token, keys, remote, body), api


def apply_sync(plan: AiSyncPlan, api: SiteApi) -> dict[str, Any]:
    """Overwrite the site's AI Function draft with the plan's body."""
    api.put_draft_ai_functions(plan.body)
    return plan.to_dict()
