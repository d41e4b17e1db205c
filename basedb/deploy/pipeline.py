"""`basedb deploy`: the preview pipeline (and its dry run).

    check          abort on errors (FindingsError listing them); nothing is sent
    build          collect inputs → fingerprint → deterministic site.zip
    draft_functions GET draft/hashes, then PUT draft/functions (full overwrite of SQL,
                   Mutations, FaaS; a function the platform holds is named by its
                   content hash, and sent in full if the platform asks for it)
    ai_sync        empty ai/: skipped (no_local_ai_functions); --skip-ai-functions:
                   skipped (skip_ai_functions); otherwise the remote keys are read
                   before draft_functions writes anything, and a key missing locally
                   is refused there (800004021); here the full set is PUT
    agent_tools    PUT draft/agent-tools; when AI sync was skipped, AI ids the local file
                   excludes are kept only if the remote has them (upstream agent-tools.md)
    deployment     POST deployments (multipart: site.zip + fingerprint; site.zip is left
                   out when the site has a deployment of this fingerprint, and sent if
                   the platform asks for it)

Writes go through `StageRunner.write`, so a timeout or 5xx is answered by reading the
draft or the deployment list back, never by sending again. Each write after the first,
and the deployment, carries the draft revision the previous write answered, so that
another deploy of the same site at the same time (whose writes would mix with these) is
refused by the platform (800004020) instead of deployed: the deployment is built from
exactly the drafts this run uploaded. Promotion to production is in
`basedb.deploy.production`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from basedb.check.reporters.locations import Positions
from basedb.check.reporters.text import finding_line
from basedb.check.run import check_workspace
from basedb.client import endpoints
from basedb.client.sites import SiteApi, draft_revision
from basedb.core.errors import (
    ApiError,
    BasedbError,
    ConflictError,
    FindingsError,
    InternalError,
    NetworkError,
)
from basedb.core.site_zip import build_site_zip
from basedb.core.site_zip import fingerprint as fingerprint_of
from basedb.core.wording import plural
from basedb.deploy import payloads
from basedb.deploy.results import (
    AgentToolsPolicy,
    AiSync,
    PreviewPlan,
    PreviewResult,
    SkillInstallation,
)
from basedb.deploy.stages import StageCallback, StageRunner
from basedb.deploy.state import DeploymentRecord, LocalState, new_attempt_id
from basedb.protocol import Code
from basedb.protocol.deployments import DeploymentCreated
from basedb.workspace.files import Contents
from basedb.workspace.inputs import collect_inputs
from basedb.workspace.loader import load_workspace

if TYPE_CHECKING:
    from basedb.check.result import CheckResult
    from basedb.client.client import Client
    from basedb.core.site_zip import InputFile
    from basedb.protocol.findings import Finding
    from basedb.workspace.model import Workspace

T = TypeVar("T")

FINDINGS_LISTED = 10
CONCURRENT_DEPLOY = "another deploy of this site ran at the same time; run deploy again"
AI_NOT_ENABLED_HINT = (
    "AI Functions are not enabled for this account (800004011). This is not a permission "
    "problem, so `basedb auth login` will not help. Deploy everything else with `basedb "
    "deploy --skip-ai-functions`, and report that AI Functions were not synced.")


@dataclass(slots=True)
class DraftChain:
    """The draft revision this run's last write left (None: the platform has none), and
    what the platform held when the run began (GET draft/hashes; empty when it cannot
    say)."""

    revision: int | None = None
    held: dict[str, Any] = field(default_factory=dict)

    @property
    def fingerprints(self) -> list[str]:
        found = self.held.get("fingerprints")
        return [f for f in found if isinstance(f, str)] if isinstance(found, list) else []

    def follow(self, answer: dict[str, Any] | None) -> None:
        self.revision = draft_revision(answer) if answer is not None else None


def explained_conflicts(send: Callable[[], T]) -> T:
    """Run a draft write or the deployment, telling a refused draft revision for what it
    is: another deploy of the site wrote its drafts meanwhile."""
    try:
        return send()
    except ApiError as error:
        if error.code == Code.DEPLOYMENT_CONFLICT:
            raise ConflictError(
                f"The site's drafts changed while this deploy was uploading them: "
                f"{CONCURRENT_DEPLOY}", code=Code.DEPLOYMENT_CONFLICT,
                hint="Run `basedb deploy` again: it uploads the whole draft anew and "
                     "deploys exactly that.", detail={"platform": error.message}) from error
        raise


@dataclass(slots=True)
class Prepared:
    """A checked workspace and its artifact: everything a deployment sends."""

    workspace: Workspace
    app_token: str
    check: CheckResult
    inputs: list[InputFile]
    fingerprint: str
    size: int  # of site.zip
    built: bytes | None = None  # site.zip, when this run built it

    @property
    def site_zip(self) -> bytes:
        """site.zip, built on first use when the size came from the local cache (a cached
        copy is never what is sent: it could have been damaged since)."""
        if self.built is None:
            self.built = build_site_zip(self.inputs, self.fingerprint)
        return self.built

    @property
    def contents(self) -> Contents:
        """The input files as the workspace was loaded from them (decoded and parsed
        once): what the request bodies are made of."""
        contents = self.workspace.contents
        if contents is None:  # prepare loads from the inputs whenever it has them
            raise InternalError("The workspace was not loaded from the deployment's inputs.",
                                code="INPUTS_NOT_LOADED")
        return contents

    @property
    def ai_keys(self) -> list[str]:
        return payloads.ids_of_kind(self.workspace.ids, "ai_function")

    @property
    def timezone(self) -> str:
        """The site's time zone (base-database.jsonc; UTC when it names none)."""
        config = self.workspace.config
        return (config.timezone if config is not None else None) or "UTC"

    @property
    def local_exclude(self) -> list[str]:
        config = self.workspace.agent_tools
        return list(config.exclude) if config.present else []


def prepare(root: Path, runner: StageRunner, *, skip_ai: bool,
            dry_run: bool = False, cache: LocalState | None = None) -> Prepared:
    """Run the check and build stages (a dry run writes nothing, not even check's cache).

    The input files are read once: the workspace is loaded from the bytes that are
    fingerprinted and shipped. A problem with the inputs as a whole (a symlink leaving
    the workspace, too many files) is the build stage's failure, reported after check's
    findings as before; the workspace is then loaded from disk. site.zip is
    deterministic, so when `cache` holds it for this fingerprint (from an earlier deploy
    of the same files) its size is taken from there and it is built only if it must be
    sent."""
    runner.start("check")
    try:
        collected: list[InputFile] | BasedbError = collect_inputs(root)
    except BasedbError as error:
        collected = error
    known = (Contents({item.path: item.data for item in collected})
             if isinstance(collected, list) else None)
    workspace = load_workspace(root, skip_ai=skip_ai, known=known)
    # The files as a whole were collected above; when that failed, check reports why
    # among its findings (as `basedb check` does), before anything is sent.
    result = check_workspace(workspace, skip_ai=skip_ai, contracts=stale_contracts,
                             cache=not dry_run, inputs=isinstance(collected, BasedbError))
    if not result.ok or workspace.config is None:
        runner.finish("check", "failed", {"errors": len(result.errors)})
        raise findings_error(result)
    runner.ok("check", {"hints": len(result.hints), "functions": dict(result.counts)})

    runner.start("build")
    inputs = runner.run("build", lambda: _collected(collected))
    fingerprint = fingerprint_of(inputs)
    size = cache.cached_artifact_size(fingerprint) if cache is not None else None
    built = None
    if size is None:
        built = runner.run("build", lambda: build_site_zip(inputs, fingerprint))
        size = len(built)
    runner.ok("build", {"files": len(inputs), "bytes": size, "fingerprint": fingerprint})
    return Prepared(workspace=workspace, app_token=workspace.config.app_token, check=result,
                    inputs=inputs, fingerprint=fingerprint, size=size, built=built)


def stale_contracts(workspace: Workspace) -> list[Finding]:
    """`basedb.contracts.stale_findings`, which check calls only for a workspace with
    generated contract files."""
    # Lazy: the contract generators load only for a workspace that has generated files.
    from basedb.contracts import stale_findings  # noqa: PLC0415

    return list(stale_findings(workspace))


def _collected(collected: list[InputFile] | BasedbError) -> list[InputFile]:
    if isinstance(collected, BasedbError):
        raise collected
    return collected


def findings_error(result: CheckResult) -> FindingsError:
    """The error `deploy` stops with when check finds errors: it lists them."""
    positions = Positions(Path(result.root))
    lines = [f"  {finding_line(finding, positions.anchor(finding))}"
             for finding in result.errors[:FINDINGS_LISTED]]
    more = len(result.errors) - FINDINGS_LISTED
    if more > 0:
        lines.append(f"  … and {more} more (run `basedb check` for all of them)")
    count = len(result.errors)
    return FindingsError(
        f"check found {count} error{'s' if count != 1 else ''}; nothing was deployed:\n"
        + "\n".join(lines),
        result=result,
        hint="Fix the errors (each names its file and the fix), then deploy again; "
             "`basedb check` shows the full report.",
        detail={"stage": "check", "outcomeKnown": True,
                "errors": [f.to_dict() for f in result.errors]})


# --------------------------------------------------------------------------- dry run


def plan_preview(root: Path, *, skip_ai: bool) -> PreviewPlan:
    """Check and build, then describe what a deploy would send; send nothing."""
    runner = StageRunner(None, new_attempt_id())
    prepared = prepare(root, runner, skip_ai=skip_ai, dry_run=True)
    app = prepared.app_token
    body = payloads.functions_body(prepared.contents, prepared.workspace.ids,
                                   prepared.timezone)
    if skip_ai:
        ai_sync = AiSync("skipped", reason="skip_ai_functions")
    elif not prepared.ai_keys:
        ai_sync = AiSync("skipped", reason="no_local_ai_functions")
    else:
        ai_sync = AiSync("planned", keys=tuple(prepared.ai_keys))
    planned = [
        {"stage": "draft_functions", "status": "planned",
         "request": f"PUT {endpoints.draft_functions(app)}",
         "counts": payloads.function_counts(body)},
        {"stage": "ai_sync", **ai_sync.to_dict(),
         **({"request": f"GET, PUT {endpoints.draft_ai_functions(app)}"}
            if ai_sync.status == "planned" else {})},
        {"stage": "agent_tools", "status": "planned",
         "request": f"PUT {endpoints.draft_agent_tools(app)}",
         "exclude": prepared.check.exclude},
        {"stage": "deployment", "status": "planned",
         "request": f"POST {endpoints.deployments(app)}", "bytes": prepared.size},
    ]
    return PreviewPlan(
        app_token=app, fingerprint=prepared.fingerprint, files=len(prepared.inputs),
        bytes=prepared.size,
        function_hints=[h.to_dict() for h in prepared.check.hints], ai_sync=ai_sync,
        exclude=tuple(prepared.check.exclude),
        stages=[r.to_dict() for r in runner.results] + planned,
        notices=tuple(prepared.check.notices))


# --------------------------------------------------------------------------- preview


def deploy_preview(root: Path, client: Client, *, skip_ai: bool = False,
                   on_stage: StageCallback | None = None) -> PreviewResult:
    """Deploy the workspace at `root` as a new preview."""
    state = LocalState(root)
    done: list[str] = []
    runner = StageRunner(state, new_attempt_id(), on_stage=on_stage,
                         earlier_effects=lambda known: _effects(done, known))
    prepared = prepare(root, runner, skip_ai=skip_ai, cache=state)
    api = SiteApi(client, prepared.app_token)

    # Upstream checks the remote AI keys before anything is written: a deploy refused
    # for an AI Function that ai/ lacks leaves every draft as it was.
    remote_ai = _remote_ai_before_writes(api, runner, prepared, skip_ai=skip_ai)
    chain = DraftChain()
    _sync_functions(api, runner, prepared, chain, state)
    done.append("draft_functions")
    ai_sync = _sync_ai(api, runner, prepared, chain, remote_ai, skip_ai=skip_ai)
    if ai_sync.synced:
        done.append("ai_sync")
    agent_tools = _sync_agent_tools(api, runner, prepared, chain, ai_synced=ai_sync.synced)
    done.append("agent_tools")
    deployment = _create_deployment(api, runner, prepared, chain)

    notices = list(prepared.check.notices)
    recorded = record_locally(state, DeploymentRecord.from_api(
        deployment, app_token=prepared.app_token), site_zip=prepared.built)
    if recorded is not None:
        notices.append(recorded)
    return PreviewResult(
        app_token=prepared.app_token, deployment_id=deployment.deployment_id,
        fingerprint=prepared.fingerprint, base_app_url=deployment.base_app_url,
        function_hints=deployment.function_hints, ai_sync=ai_sync,
        agent_tools=agent_tools, stages=tuple(runner.results),
        installation=SkillInstallation.after(prepared.app_token, "preview"),
        notices=tuple(notices))


def record_locally(state: LocalState, record: DeploymentRecord, *,
                   site_zip: bytes | None = None) -> str | None:
    """Record a deployment (and cache its site.zip) in the workspace's state; the notice to
    show when that fails. The platform has the deployment either way, so a local record
    that cannot be written never turns a deployment into a failure."""
    try:
        state.deployments.record(record)
        if site_zip is not None:
            state.save_artifact(record.fingerprint, site_zip)
    except BasedbError as error:
        return (f"{record.deployment_id} was deployed, but the local record was not written: "
                f"{error.message} {error.hint or ''}").strip()
    return None


def _effects(done: list[str], outcome_known: bool) -> str:
    """What a failed preview deploy had already changed on the platform."""
    if not done:
        return "No earlier stage had changed anything on the platform."
    changed = f"Earlier stages changed the site's drafts ({', '.join(done)})"
    if not outcome_known:  # the failed stage may itself have created the deployment
        return f"{changed}; production is as it was."
    return (f"{changed}, but no new deployment was created: previews and production are as "
            "they were.")


def _confirmed(detail: dict[str, Any], confirmed: bool) -> dict[str, Any]:
    return {**detail, "confirmedByReadBack": True} if confirmed else detail


def _sync_functions(api: SiteApi, runner: StageRunner, prepared: Prepared,
                    chain: DraftChain, state: LocalState) -> None:
    """PUT draft/functions, naming by content hash every function the platform holds as
    the local files have it: those functions' files are not parsed at all when their
    hashes are remembered (`LocalState.load_content_hashes`, keyed by the files' SHA-256)."""
    inputs, contents = prepared.inputs, prepared.contents
    ids, timezone = prepared.workspace.ids, prepared.timezone
    counts = {kind: len(payloads.ids_of_kind(ids, kind)) for kind in payloads.CODE_LISTS.values()}
    runner.start("draft_functions", {"counts": counts})
    chain.held = runner.run("draft_functions", lambda: _held_content(api))
    remembered = state.load_content_hashes()
    local, memo = runner.run("draft_functions",
                             lambda: payloads.content_hashes(inputs, contents, ids, remembered))
    if memo != remembered:
        state.save_content_hashes(memo)
    by_reference = runner.run("draft_functions", lambda: payloads.functions_body(
        contents, ids, timezone, referenced_hash=payloads.held_alike(chain.held, local)))
    in_full: list[dict[str, Any]] = []

    def full() -> dict[str, Any]:
        if not in_full:
            in_full.append(runner.run("draft_functions", lambda: payloads.functions_body(
                contents, ids, timezone)))
        return in_full[0]

    def confirm() -> dict[str, Any] | None:
        stored = api.draft_functions()
        return stored if payloads.same_functions(full(), stored) else None

    def send() -> dict[str, Any]:
        # The first write replaces every function whatever the drafts were: no revision.
        if not payloads.referenced(by_reference):
            return api.put_draft_functions(by_reference)  # everything in full
        try:
            return api.put_draft_functions(by_reference)
        except ApiError as error:
            if not payloads.resend_asked(error):
                raise
            return api.put_draft_functions(full())  # refused, so nothing changed: send all

    answer, confirmed = runner.write("draft_functions", send, confirm)
    chain.follow(answer)
    runner.ok("draft_functions", _confirmed({"counts": counts}, confirmed))


def _held_content(api: SiteApi) -> dict[str, Any]:
    """What the platform holds for the site; empty from a platform without GET
    draft/hashes (everything is then sent in full)."""
    try:
        return api.draft_hashes()
    except BasedbError as error:
        if _unsupported(error):
            return {}
        raise


def ai_call(call: Callable[[], Any]) -> Any:
    """`call()`, with the hint of what to do when AI Functions are not enabled."""
    try:
        return call()
    except ApiError as error:
        if error.code == Code.AI_FUNCTION_NOT_ENABLED:
            raise error.with_context(hint=AI_NOT_ENABLED_HINT) from error
        raise


def _remote_ai_before_writes(api: SiteApi, runner: StageRunner, prepared: Prepared, *,
                             skip_ai: bool) -> list[str] | None:
    """The site's AI Function keys when this deploy syncs AI Functions (None when it does
    not: --skip-ai-functions or an empty ai/). Refuses (800004021), before any write,
    when the site has one that ai/ lacks: deploying would delete it."""
    local = prepared.ai_keys
    if skip_ai or not local:
        return None
    # Read under the ai_sync stage (a failure is its failure); the stage starts, in the
    # local log, when its write comes.
    remote: list[str] = runner.run("ai_sync", lambda: payloads.remote_ai_keys(
        ai_call(api.draft_ai_functions)))
    missing = sorted(set(remote) - set(local))
    if missing:
        shown = ", ".join(missing)
        raise runner.fail("ai_sync", ConflictError(
            f"The site has {plural(len(missing), 'AI Function')} that ai/ lacks: {shown}. "
            "Deploying would delete them, so nothing was written or deployed",
            code=Code.AI_FUNCTION_MISSING_LOCALLY,
            detail={"missing": missing}),
            hint="Restore them with `basedb pull` (it writes the remote AI drafts into ai/), "
                 "or deploy with --skip-ai-functions to leave AI Functions untouched. To "
                 "delete them on purpose, run `basedb ai-functions sync`.")
    return remote


def _sync_ai(api: SiteApi, runner: StageRunner, prepared: Prepared, chain: DraftChain,
             remote: list[str] | None, *, skip_ai: bool) -> AiSync:
    """Write ai/ as the site's AI Function draft, once `_remote_ai_before_writes` has
    allowed it (`remote`: None when this deploy does not sync them)."""
    if remote is None:
        reason = "skip_ai_functions" if skip_ai else "no_local_ai_functions"
        runner.skipped("ai_sync", reason)
        return AiSync("skipped", reason=reason)
    local = prepared.ai_keys
    runner.start("ai_sync", {"keys": local})
    body = runner.run("ai_sync", lambda: payloads.ai_body(prepared.contents, local))

    def confirm() -> dict[str, Any] | None:
        stored = api.draft_ai_functions()
        return stored if payloads.same_ai_functions(body, stored) else None

    answer, confirmed = runner.write("ai_sync", lambda: explained_conflicts(lambda: ai_call(
        lambda: api.put_draft_ai_functions(body, revision=chain.revision))), confirm)
    chain.follow(answer)
    runner.ok("ai_sync", _confirmed({"keys": local}, confirmed))
    return AiSync("synced", keys=tuple(local))


def _remote_ai_keys_when_skipped(api: SiteApi) -> list[str]:
    """The site's AI Function keys. An account without AI Functions (800004011) has none:
    `--skip-ai-functions` is how upstream says to deploy there, so this is an answer,
    not a failure to stop on."""
    try:
        data = api.draft_ai_functions()
    except ApiError as error:
        if error.code == Code.AI_FUNCTION_NOT_ENABLED:
            return []
        raise
    return payloads.remote_ai_keys(data)


def _unsupported(error: BasedbError) -> bool:
    """A platform that answers the route with a bare 404/405 does not have it at all."""
    return isinstance(error, NetworkError) and error.detail.get("http_status") in (404, 405)


def _sync_agent_tools(api: SiteApi, runner: StageRunner, prepared: Prepared,
                      chain: DraftChain, *, ai_synced: bool) -> AgentToolsPolicy:
    local = prepared.local_exclude
    ai_ids = set(prepared.ai_keys)
    omitted: list[str] = []
    runner.start("agent_tools", {"localExclude": local})
    if ai_synced or not ai_ids.intersection(local):
        exclude = local
    else:
        # AI was not synced: keep excluding the AI ids the remote has, so the policy
        # write (a full replacement) does not re-open them; the others cannot be named.
        remote = set(runner.run("agent_tools", lambda: _remote_ai_keys_when_skipped(api)))
        exclude = [x for x in local if x not in ai_ids or x in remote]
        omitted = [x for x in local if x in ai_ids and x not in remote]
    present = prepared.workspace.agent_tools.present

    def send() -> dict[str, Any] | None:
        try:
            return explained_conflicts(
                lambda: api.put_draft_agent_tools(exclude, revision=chain.revision))
        except BasedbError as error:
            if not present and not exclude and _unsupported(error):
                return None
            raise

    def confirm() -> dict[str, Any] | None:
        stored = api.draft_agent_tools()
        return stored if sorted(stored.get("exclude") or []) == sorted(exclude) else None

    answer, confirmed = runner.write("agent_tools", send, confirm)
    if answer is not None:
        chain.follow(answer)
    if answer is None:
        runner.skipped("agent_tools", "unsupported_by_platform")
        return AgentToolsPolicy(
            exclude=(), status="unsupported_by_platform",
            note="The platform has no agent-tools endpoint; its policy was left as it was "
                 "(agent-tools.json is absent).")
    policy = AgentToolsPolicy(exclude=tuple(exclude), omitted=tuple(omitted))
    runner.ok("agent_tools", _confirmed(policy.to_dict(), confirmed))
    return policy


def _create_deployment(api: SiteApi, runner: StageRunner, prepared: Prepared,
                       chain: DraftChain) -> DeploymentCreated:
    fingerprint = prepared.fingerprint
    runner.start("deployment", {"fingerprint": fingerprint, "bytes": prepared.size})
    try:  # what exists before, so a read-back can tell a deployment of this attempt
        known: set[str] | None = {d.deployment_id for d in api.deployments().deployments}
    except BasedbError:
        known = None

    def confirm() -> DeploymentCreated | None:
        if known is None:
            raise NetworkError("The deployments that existed before could not be listed, "
                               "so a new one cannot be told apart.", code="READ_BACK_UNSURE")
        new = [d for d in api.deployments().deployments
               if d.deployment_id not in known and d.fingerprint == fingerprint]
        if not new:
            return None
        found = api.deployment(new[0].deployment_id)
        # What POST deployments would have answered (its preview URL: the newest is the
        # latest preview).
        return DeploymentCreated(
            deployment_id=found.deployment_id, env="preview", status=found.status,
            fingerprint=fingerprint, draft_revision=found.draft_revision,
            base_app_url=found.base_app_url or "", function_hints=found.function_hints,
            created_at=found.created_at, timezone=found.timezone)

    def send() -> DeploymentCreated:
        if fingerprint in chain.fingerprints:  # the platform has this site.zip already
            try:
                return api.create_deployment(None, fingerprint, revision=chain.revision)
            except ApiError as error:
                if not payloads.resend_asked(error):
                    raise
        return api.create_deployment(prepared.site_zip, fingerprint, revision=chain.revision)

    data, confirmed = runner.write(
        "deployment", lambda: explained_conflicts(send), confirm)
    runner.ok("deployment", _confirmed({"deploymentId": data.deployment_id}, confirmed))
    return data
