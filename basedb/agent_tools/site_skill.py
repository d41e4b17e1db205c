"""`basedb agent-tools skill install` and `basedb agent-tools list`: a published site's
functions for local agents (upstream agent-tools.md "安装到本地 Agent").

    result = install_site_skill(client, app_token=…, endpoint=…, profile_name=…,
                                roots=target_roots(target, directory), force=False,
                                from_site=True)

The Skill is fetched from production (`GET /sites/{app}/skill?env=prod`), checked (a
remote endpoint's answer is never trusted to name safe paths), adapted to the folder it
lands in (the frontmatter name must equal it) and to the profile it was installed with
(every `basedb api` command in it gets `--profile`, so it reaches this site from any
directory), then written atomically into each target.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from basedb.agent_tools.install import (
    Installed,
    InstallRecords,
    PlannedInstall,
    SkillOwner,
    install_everywhere,
    install_record,
    plan_install,
)
from basedb.client import endpoints
from basedb.core.errors import InputError, WorkspaceNotFound
from basedb.core.frozen import frozen_dataclass
from basedb.core.skill_spec import (
    DESCRIPTION_MAX,
    clip_text,
    frontmatter_problems,
    is_valid_name,
    render_frontmatter,
    split_frontmatter,
)
from basedb.workspace.config import APP_TOKEN_RE, workspace_app_token
from basedb.workspace.loader import find_root

if TYPE_CHECKING:
    from basedb.client.client import Client

_SITE_PATH_RE = re.compile(r"/sites/([A-Za-z0-9_-]{1,128})(?:/|\Z)")
_REFERENCE_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}\.md\Z")
MAX_DOCUMENT_CHARS = 4 * 1024 * 1024
MAX_REFERENCES = 500  # a large site has a reference file per table


def parse_site(value: str) -> str:
    """The app token named by --site: a token, or a site link (its baseAppUrl or any
    URL whose path holds /sites/<token>/)."""
    text = value.strip()
    if APP_TOKEN_RE.fullmatch(text):
        return text
    try:
        path = urlsplit(text).path if "://" in text else text
    except ValueError:  # e.g. an unclosed IPv6 bracket: not a link either
        path = ""
    match = _SITE_PATH_RE.search(path)
    if match is None:
        raise InputError(f"--site {value!r} is neither an app token nor a site link.",
                         code="SITE_INVALID",
                         hint="Pass the site's app token (e.g. Prj…) or its link, such as "
                              "http://127.0.0.1:8787/sites/<token>/.")
    return match.group(1)


def resolve_site(site: str | None, workspace_dir: Path | None) -> tuple[str, Path | None]:
    """(app token, the workspace root whose profile applies, if any): --site when
    given, else the appToken of the workspace at or above `workspace_dir` (cwd)."""
    if site is None:
        root = find_root(workspace_dir)
        return workspace_app_token(root), root
    try:
        found: Path | None = find_root(workspace_dir)
    except WorkspaceNotFound:
        if workspace_dir is not None:
            raise
        found = None
    return parse_site(site), found


@frozen_dataclass
class OpenFunctions:
    """`agent-tools list`: the functions a caller's agents can use on `env`."""

    app_token: str
    env: str
    deployment_id: str | None
    functions: tuple[dict[str, Any], ...]  # the platform's list entries, plus `access`

    def to_dict(self) -> dict[str, Any]:
        return {"appToken": self.app_token, "env": self.env,
                "deploymentId": self.deployment_id, "functions": list(self.functions)}


def list_open_functions(client: Client, app_token: str, env: str, *, query: str = "",
                        table: str = "", access: str | None = None,
                        limit: int = 20) -> OpenFunctions:
    """The functions a caller's agents can use on `env`, each with its access: all of
    them (in functionId order), or with `query` the best `limit` matches, best first;
    `table` and `access` filter (the platform's search, GET …/functions?query)."""
    params: dict[str, Any] = {"env": env}
    params.update({k: v for k, v in (("query", query), ("table", table),
                                     ("access", access)) if v})
    if query:
        params["pageSize"] = limit
    envelope = client.paginate("GET", endpoints.functions(app_token), params=params,
                               list_field="functions", max_pages=1 if query else None)
    data = envelope.get("data") or {}
    functions = []
    for item in data.get("functions") or []:
        if isinstance(item, dict):
            kind = "read" if item.get("functionType") == "database_function" else "write"
            functions.append({**item, "access": kind})
    return OpenFunctions(app_token, env, data.get("deploymentId"), tuple(functions))


# ------------------------------------------------------------------- fetching


@frozen_dataclass
class SiteSkill:
    name: str
    app_token: str
    deployment_id: str
    front: dict[str, Any]
    body: str
    references: dict[str, str]
    function_count: int
    read_function_count: int = 0  # what an agent can call to check the install


def fetch_site_skill(client: Client, app_token: str) -> SiteSkill:
    """The site's prod Skill, checked; InputError naming what is unusable."""
    data = client.request("GET", endpoints.skill(app_token), params={"env": "prod"}).get(
        "data")
    where = f"The site Skill of {app_token} from {client.base_url}"
    if not isinstance(data, dict):
        raise _unusable(where, "the answer has no data object")
    name, markdown = data.get("name"), data.get("markdown")
    if not is_valid_name(name):
        raise _unusable(where, f"its name {name!r} is not a valid skill name")
    if not isinstance(markdown, str) or len(markdown) > MAX_DOCUMENT_CHARS:
        raise _unusable(where, "its markdown is missing or too large")
    split = split_frontmatter(markdown)
    if split is None:
        raise _unusable(where, "SKILL.md has no YAML frontmatter")
    front, body = split
    references = data.get("references") or {}
    if not isinstance(references, dict) or len(references) > MAX_REFERENCES:
        raise _unusable(where, "references is not a small object of files")
    checked: dict[str, str] = {}
    for file_name, text in references.items():
        if not isinstance(file_name, str) or not _REFERENCE_NAME_RE.match(file_name) \
                or not isinstance(text, str) or len(text) > MAX_DOCUMENT_CHARS:
            raise _unusable(where, f"reference {file_name!r} is not a plain .md file name "
                            "with text")
        checked[file_name] = text
    functions = data.get("functions")
    functions = functions if isinstance(functions, list) else []
    deployment_id = data.get("deploymentId")
    return SiteSkill(name=str(name), app_token=app_token,
                     deployment_id=deployment_id if isinstance(deployment_id, str) else "",
                     front=front, body=body, references=checked,
                     function_count=len(functions),
                     read_function_count=sum(1 for f in functions if isinstance(f, dict)
                                             and f.get("access") == "read"))


def _unusable(where: str, why: str) -> InputError:
    return InputError(f"{where} cannot be installed: {why}.", code="SKILL_RESPONSE_INVALID",
                      hint="The profile's endpoint may not be a Base Database platform, or it "
                           "is newer than this basedb: upgrade basedb and try again.")


def skill_files(skill: SiteSkill, *, name: str, profile_name: str) -> dict[str, str]:
    """SKILL.md and references/ as installed under the folder `name`."""
    front = dict(skill.front)
    front["name"] = name
    description = front.get("description")
    if isinstance(description, str) and len(description) > DESCRIPTION_MAX:
        front["description"] = clip_text(description, DESCRIPTION_MAX)
    metadata = front.get("metadata")
    metadata = dict(metadata) if isinstance(metadata, dict) else {}
    metadata["profile"] = profile_name
    front["metadata"] = {str(k): str(v) for k, v in metadata.items()}
    problems = frontmatter_problems(front, directory=name)
    if problems:
        raise _unusable(f"The site Skill of {skill.app_token}", "; ".join(problems))
    # The agent may run anywhere, including inside another workspace whose profile
    # points elsewhere: name the profile on every call.
    body = skill.body.replace("basedb api ", f"basedb api --profile {profile_name} ")
    files = {"SKILL.md": render_frontmatter(front) + body}
    files.update({f"references/{file_name}": text
                  for file_name, text in skill.references.items()})
    return files


# ------------------------------------------------------------------- installing


@frozen_dataclass
class SiteSkillInstall:
    """`agent-tools skill install`: a site's production Skill, written."""

    app_token: str
    skill: SiteSkill
    installed: Installed

    def to_dict(self) -> dict[str, Any]:
        out = self.installed.to_dict()
        return {"appToken": self.app_token, "deploymentId": self.skill.deployment_id,
                "functionCount": self.skill.function_count,
                "readFunctionCount": self.skill.read_function_count,
                "installed": out["installed"], "skillCommand": out["skillCommand"],
                "notices": out["notices"]}


def install_site_skill(client: Client, *, app_token: str, endpoint: str, profile_name: str,
                       roots: list[tuple[str, Path]], force: bool, from_site: bool
                       ) -> SiteSkillInstall:
    """Fetch the site's prod Skill and install it into every root.

    `from_site`: installed by --site (a member's install), which updates its own
    recorded install in place; a project install (the workspace's site) into an
    existing directory needs `force`.
    """
    skill = fetch_site_skill(client, app_token)
    records = InstallRecords.load()
    owner = SkillOwner("site", app_token, endpoint)
    plans = [plan_install(records, target=target, root=root, name=skill.name, owner=owner,
                          force=force, replace_own=from_site)
             for target, root in roots]

    def files_for(planned: PlannedInstall) -> dict[str, str]:
        return skill_files(skill, name=planned.name, profile_name=profile_name)

    for planned in plans:
        files_for(planned)  # refuse an unusable document before anything is written
    installed = install_everywhere(
        plans, files_for, records,
        lambda planned: install_record(planned, owner, deployment_id=skill.deployment_id))
    return SiteSkillInstall(app_token, skill, installed)
