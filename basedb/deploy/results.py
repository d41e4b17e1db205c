"""What the deploy pipelines return: typed results, each with the one `to_dict()` that
makes its `--json` shape (docs/json.md; tests/cli/test_json_shapes.py keeps them fixed).

    PreviewPlan, PreviewResult          `basedb deploy [--dry-run]`
    ProductionPlan, ProductionResult    `basedb deploy --production [--dry-run]`
    RollbackResult                      `basedb deployments rollback`
    PullResult                          `basedb pull`

The command line reads their attributes; nothing digs through nested dicts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import field
from typing import Any, Literal

from basedb.client import endpoints
from basedb.core.frozen import frozen_dataclass
from basedb.deploy.stages import StageResult

SKILL_INSTALL = "basedb agent-tools skill install"
# What members run: upstream's command name, which basedb also installs, so the message
# works for a member who has either.
MEMBER_SKILL_INSTALL = "base-database-cli agent-tools skill install"
MEMBER_FUNCTIONS_SHOWN = 5


def _notices(notices: Sequence[str]) -> dict[str, Any]:
    return {"notices": list(notices)} if notices else {}


@frozen_dataclass
class SkillInstallation:
    """Whether local agents can install the site Skill now, and how (upstream
    agent-tools.md 安装到本地 Agent: nextAction.externalAgent.installation)."""

    available: bool
    command: str
    reason: str | None = None

    @classmethod
    def after(cls, app_token: str, env: str, *, skill_error: str | None = None,
              ) -> SkillInstallation:
        """After deploying `env`: available when production's Skill could be read
        (`skill_error` says why not); a preview never installs."""
        if env != "prod":
            return cls(False, SKILL_INSTALL,
                       "The site Skill is installed from production; promote this preview "
                       "with `basedb deploy --production --yes`.")
        if skill_error is not None:
            return cls(False, f"{SKILL_INSTALL} --site {app_token}",
                       f"The production Skill could not be read: {skill_error}")
        return cls(True, f"{SKILL_INSTALL} --site {app_token}")

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"available": self.available, "command": self.command}
        if self.reason is not None:
            out["reason"] = self.reason
        return out

    def next_action(self, members: MemberHandoff | None = None) -> dict[str, Any]:
        agent: dict[str, Any] = {"installation": self.to_dict()}
        if members is not None:
            agent["members"] = members.to_dict()
        return {"externalAgent": agent}


@frozen_dataclass
class MemberHandoff:
    """The member-facing message after a production deploy (upstream release.md 交付结果,
    agent-tools.md 安装到本地 Agent): where the site is, and, when it has functions open
    to agents, the one command a member runs in any directory to give their own local
    agent the site's functions, under their own sign-in and access. The developer
    forwards `message` as it is; nobody has to assemble or rewrite it."""

    command: str
    message: str
    functions: tuple[str, ...]  # the functions open to agents, as "functionId (read)"

    @classmethod
    def for_site(cls, app_token: str, title: str, url: str | None,
                 functions: Sequence[Mapping[str, Any]]) -> MemberHandoff:
        command = f"{MEMBER_SKILL_INSTALL} --site {app_token}"
        shown = tuple(f"{f.get('functionId')} ({f.get('access', 'read')})"
                      for f in functions if isinstance(f, Mapping))
        name = title or app_token
        lines = [f"{name} is published: {url}" if url else f"{name} is published."]
        if shown:
            listing = ", ".join(shown[:MEMBER_FUNCTIONS_SHOWN]) + (
                f" and {len(shown) - MEMBER_FUNCTIONS_SHOWN} more"
                if len(shown) > MEMBER_FUNCTIONS_SHOWN else "")
            lines += [
                "You can also use it from your own AI agent (Codex by default), without "
                "opening the page. In any directory, run:",
                f"  {command}",
                "The agent then works with your own sign-in and sees only what you may see "
                f"in the site. It can use: {listing}. Run the same command again after the "
                "site is updated; add --target claude, agents or all for other agents.",
            ]
        return cls(command=command, message="\n".join(lines), functions=shown)

    def to_dict(self) -> dict[str, Any]:
        return {"command": self.command, "message": self.message,
                "functions": list(self.functions)}


@frozen_dataclass
class AiSync:
    """What happened to AI Functions: skipped (with the reason), planned or synced."""

    status: Literal["skipped", "planned", "synced"]
    reason: str | None = None
    keys: tuple[str, ...] | None = None

    @property
    def synced(self) -> bool:
        return self.status == "synced"

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"status": self.status}
        if self.reason is not None:
            out["reason"] = self.reason
        if self.keys is not None:
            out["keys"] = list(self.keys)
        return out


@frozen_dataclass
class AgentToolsPolicy:
    """The agent-tools policy a deploy wrote: the excluded ids, and those it could not
    name (`omitted`: AI ids the site does not have while AI sync was skipped)."""

    exclude: tuple[str, ...]
    omitted: tuple[str, ...] = ()
    status: str | None = None  # "unsupported_by_platform" when nothing could be written
    note: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"exclude": list(self.exclude)}
        if self.status is not None:
            out["status"] = self.status
        if self.note is not None:
            out["note"] = self.note
        if self.omitted:
            out["omitted"] = list(self.omitted)
        return out


@frozen_dataclass
class PreviewPlan:
    """`deploy --dry-run`: what a preview deploy would send."""

    app_token: str
    fingerprint: str
    files: int
    bytes: int
    function_hints: Sequence[Mapping[str, Any]]
    ai_sync: AiSync
    exclude: tuple[str, ...]
    stages: Sequence[Mapping[str, Any]]
    notices: Sequence[str] = ()
    env: str = field(default="preview", init=False)

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": True, "dryRun": True, "env": self.env, "appToken": self.app_token,
            "fingerprint": self.fingerprint, "files": self.files, "bytes": self.bytes,
            "functionHints": [dict(h) for h in self.function_hints],
            "aiSync": self.ai_sync.to_dict(), "agentTools": {"exclude": list(self.exclude)},
            "stages": [dict(s) for s in self.stages], "notices": list(self.notices),
        }


@frozen_dataclass
class PreviewResult:
    """`deploy`: the preview deployment made."""

    app_token: str
    deployment_id: str
    fingerprint: str
    base_app_url: str | None
    function_hints: Sequence[Mapping[str, Any]]
    ai_sync: AiSync
    agent_tools: AgentToolsPolicy
    stages: Sequence[StageResult]
    installation: SkillInstallation
    notices: Sequence[str] = ()
    env: str = field(default="preview", init=False)

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": True, "env": self.env, "appToken": self.app_token,
            "deploymentId": self.deployment_id, "fingerprint": self.fingerprint,
            "baseAppUrl": self.base_app_url,
            "functionHints": [dict(h) for h in self.function_hints],
            "aiSync": self.ai_sync.to_dict(), "agentTools": self.agent_tools.to_dict(),
            "stages": [s.to_dict() for s in self.stages], **_notices(self.notices),
            "nextAction": self.installation.next_action(),
        }


@frozen_dataclass
class PreviewCandidate:
    """The deployment `deploy --production` promotes, and where that was learned."""

    deployment_id: str
    is_prod: bool
    source: Literal["platform", "local state"]

    def to_dict(self) -> dict[str, Any]:
        return {"deploymentId": self.deployment_id, "isProd": self.is_prod,
                "source": self.source}


@frozen_dataclass
class ProductionPlan:
    """`deploy --production --dry-run`: the preview that would be promoted."""

    app_token: str
    fingerprint: str
    files: int
    candidate: PreviewCandidate
    env: str = field(default="prod", init=False)

    def to_dict(self) -> dict[str, Any]:
        deployment_id = self.candidate.deployment_id
        return {
            "ok": True, "dryRun": True, "env": self.env, "appToken": self.app_token,
            "fingerprint": self.fingerprint, "files": self.files,
            "deploymentId": deployment_id, "alreadyProd": self.candidate.is_prod,
            "stages": [{"stage": "promote", "status": "planned",
                        "request": "POST " + endpoints.promote(self.app_token,
                                                               deployment_id)}],
        }


@frozen_dataclass
class ProductionResult:
    """`deploy --production`: production now serves `deployment_id`."""

    app_token: str
    deployment_id: str
    fingerprint: str
    base_app_url: str | None
    stages: Sequence[StageResult]
    installation: SkillInstallation
    notices: Sequence[str] = ()
    members: MemberHandoff | None = None  # None when the production Skill was unreadable
    env: str = field(default="prod", init=False)

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": True, "env": self.env, "appToken": self.app_token,
            "deploymentId": self.deployment_id, "fingerprint": self.fingerprint,
            "baseAppUrl": self.base_app_url, "stages": [s.to_dict() for s in self.stages],
            **_notices(self.notices),
            "nextAction": self.installation.next_action(self.members),
        }


@frozen_dataclass
class RollbackResult:
    """`deployments rollback`: production serves an earlier deployment again."""

    app_token: str
    deployment_id: str
    base_app_url: str | None
    stages: Sequence[StageResult]
    notices: Sequence[str] = ()
    env: str = field(default="prod", init=False)

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": True, "env": self.env, "appToken": self.app_token,
            "deploymentId": self.deployment_id, "baseAppUrl": self.base_app_url,
            "stages": [s.to_dict() for s in self.stages], **_notices(self.notices),
        }


@frozen_dataclass
class PullResult:
    """`pull`: the files written into `target` from a deployment."""

    app_token: str
    env: str
    deployment_id: str
    target: str
    fingerprint: str  # of the restored files
    deployed_fingerprint: str
    created: tuple[str, ...]
    overwritten: tuple[str, ...]
    unchanged: tuple[str, ...]
    ai_keys: tuple[str, ...] | None  # None: AI Functions are not enabled on the account

    @property
    def same_as_deployment(self) -> bool:
        return self.fingerprint == self.deployed_fingerprint

    def to_dict(self) -> dict[str, Any]:
        ai = ({"status": "not_enabled", "keys": []} if self.ai_keys is None
              else {"status": "restored", "keys": sorted(self.ai_keys)})
        return {
            "ok": True, "appToken": self.app_token, "env": self.env,
            "deploymentId": self.deployment_id, "target": self.target,
            "fingerprint": self.fingerprint, "deployedFingerprint": self.deployed_fingerprint,
            "sameAsDeployment": self.same_as_deployment, "created": list(self.created),
            "overwritten": list(self.overwritten), "unchanged": list(self.unchanged),
            "ai": ai,
        }
