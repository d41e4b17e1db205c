"""The stages of a deploy run: logged, reported, and never blindly retried.

Each stage is logged in `.base-database-cli/state/stages.jsonl` when it starts and when
it ends (ok, failed or unknown), and collected for the command's result. A stage that
writes to the platform goes through `StageRunner.write`:

    send the write ─┬─ answered            → ok
                    ├─ refused (4xx code)  → failed, outcome known: nothing changed
                    ├─ no connection       → failed, outcome known: nothing was sent
                    └─ timeout, reset, 5xx → outcome unknown: read the resource back
                         ├─ the write took effect     → ok (confirmed by reading back)
                         ├─ it did not take effect    → failed, outcome known
                         └─ the read-back failed too  → unknown

The write is never sent a second time: after an unknown outcome the user decides,
knowing what the read-back showed. Ctrl-C during a stage ends the run the same way, with
exit code 130: the stage is logged as interrupted (its outcome unknown when a write was
in flight), and the message says what earlier stages had changed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from basedb.core.errors import (
    EXIT_NETWORK,
    ApiError,
    AuthError,
    BasedbError,
    ConnectionRefused,
    Interrupted,
)
from basedb.deploy.state import LocalState, StageStatus
from basedb.protocol import FailureMessage

T = TypeVar("T")

# What each stage does, as shown in progress lines and error messages.
STAGE_LABELS = {
    "check": "check the workspace",
    "build": "collect inputs, fingerprint, build site.zip",
    "draft_functions": "upload Database Functions, Mutations and FaaS (PUT draft/functions)",
    "ai_sync": "sync AI Functions (PUT draft/ai-functions)",
    "agent_tools": "write the agent-tools policy (PUT draft/agent-tools)",
    "deployment": "create the preview deployment (POST deployments)",
    "find_preview": "find the preview with the local fingerprint (GET deployments)",
    "promote": "promote the preview to production (POST …/promote)",
    "rollback": "roll production back (POST …/rollback)",
}

StageCallback = Callable[["StageResult"], None]
# How each way a stage ends is written to the stage log (which has no "skipped").
_LOGGED_AS: dict[str, StageStatus] = {"ok": "ok", "skipped": "ok", "failed": "failed",
                                      "unknown": "unknown"}


@dataclass(slots=True)
class StageResult:
    """How one stage ended: ok, skipped, failed or unknown, with what it found."""

    stage: str
    status: str
    detail: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"stage": self.stage, "status": self.status}
        if self.detail:
            out["detail"] = dict(self.detail)
        return out


class DeployStageError(BasedbError):
    """A stage failed: names the stage, and whether its outcome is known."""

    def __init__(self, stage: str, cause: BasedbError, *, outcome_known: bool,
                 message: str, hint: str | None, stages: list[StageResult],
                 exit_code: int | None = None) -> None:
        detail: dict[str, Any] = {**cause.detail, "stage": stage,
                                  "outcomeKnown": outcome_known,
                                  "stages": [s.to_dict() for s in stages]}
        data = getattr(cause, "data", None)
        if isinstance(data, dict) and isinstance(data.get("errors"), list):
            detail["errors"] = data["errors"]  # the platform's findings (9499)
        super().__init__(message, code=cause.code, hint=hint, detail=detail)
        # Reported as its cause (exit code and type), unless the outcome makes it a
        # network failure whatever the cause was.
        self.exit_code = cause.exit_code if exit_code is None else exit_code
        self.type = cause.type
        self.console_url = cause.console_url
        self.stage = stage
        self.outcome_known = outcome_known
        self.cause = cause


_NOT_SENT_HINT = ("The request never reached the platform, so nothing changed: check that it "
                  "is running and that the profile's endpoint is right (`basedb auth "
                  "status`), then deploy again.")


def _error_detail(error: BasedbError) -> dict[str, Any]:
    return {"code": error.code, "message": error.message}


class StageRunner:
    """Runs and records the stages of one attempt."""

    def __init__(self, state: LocalState | None, attempt_id: str, *,
                 on_stage: StageCallback | None = None,
                 earlier_effects: Callable[[bool], str] | None = None) -> None:
        self.state = state
        self.attempt_id = attempt_id
        self.on_stage = on_stage
        self.results: list[StageResult] = []
        # Says, when a stage fails, what earlier stages already changed remotely; told
        # whether the failed stage's own outcome is known.
        self.earlier_effects = earlier_effects

    # ------------------------------------------------------------------ recording

    def _log(self, stage: str, status: StageStatus, detail: Mapping[str, Any] | None) -> None:
        if self.state is not None:
            self.state.stages.append(self.attempt_id, stage, status,
                                     dict(detail) if detail else None)

    def start(self, stage: str, detail: Mapping[str, Any] | None = None) -> None:
        self._log(stage, "started", detail)

    def finish(self, stage: str, status: str, detail: Mapping[str, Any] | None = None,
               ) -> StageResult:
        """Record how a stage ended. "skipped" is logged as ok with the reason."""
        logged = dict(detail or {})
        if status == "skipped":
            logged["skipped"] = True
        self._log(stage, _LOGGED_AS[status], logged)
        result = StageResult(stage, status, dict(detail or {}))
        self.results.append(result)
        if self.on_stage is not None:
            self.on_stage(result)
        return result

    def ok(self, stage: str, detail: Mapping[str, Any] | None = None) -> StageResult:
        return self.finish(stage, "ok", detail)

    def skipped(self, stage: str, reason: str, **detail: Any) -> StageResult:
        return self.finish(stage, "skipped", {"reason": reason, **detail})

    # ------------------------------------------------------------------- failures

    def fail(self, stage: str, error: BasedbError, *, hint: str | None = None) -> DeployStageError:
        """Record a stage whose failure is known to have changed nothing remotely."""
        self.finish(stage, "failed", {"outcome": "known", "error": _error_detail(error)})
        message = (f"Stage {stage!r} ({STAGE_LABELS.get(stage, stage)}) failed: "
                   f"{error.message.rstrip('.')}. Its outcome is known: this stage changed "
                   f"nothing.{self._effects()}")
        return DeployStageError(stage, error, outcome_known=True, message=message,
                                hint=_site_missing_hint(error) or hint or error.hint,
                                stages=self.results)

    def _effects(self, *, outcome_known: bool = True) -> str:
        effects = self.earlier_effects(outcome_known) if self.earlier_effects else ""
        return f" {effects}" if effects else ""

    def run(self, stage: str, call: Callable[[], T], *, hint: str | None = None) -> T:
        """Run a read (or a local step): any error fails the stage with a known outcome."""
        try:
            return call()
        except BasedbError as error:
            raise self.fail(stage, error, hint=hint) from error
        except KeyboardInterrupt:
            raise self.interrupted(stage, writing=False) from None

    def interrupted(self, stage: str, *, writing: bool) -> DeployStageError:
        """Record a stage stopped by Ctrl-C: a read changed nothing; a write in flight
        may or may not have reached the platform."""
        cause = Interrupted("Interrupted (Ctrl-C)", code="INTERRUPTED")
        outcome = "unknown" if writing else "known"
        self.finish(stage, "unknown" if writing else "failed",
                    {"outcome": outcome, "error": _error_detail(cause)})
        label = f"Stage {stage!r} ({STAGE_LABELS.get(stage, stage)})"
        if writing:
            message = (f"{label} was interrupted (Ctrl-C) while its write was in flight: "
                       "its outcome is unknown, and nothing was re-sent."
                       f"{self._effects(outcome_known=False)}")
            hint = ("Check what happened with `basedb deployments status` before deploying "
                    "again.")
        else:
            message = (f"{label} was interrupted (Ctrl-C); this stage changed nothing."
                       f"{self._effects()}")
            hint = "Run the same command again to finish the deploy."
        return DeployStageError(stage, cause, outcome_known=not writing, message=message,
                                hint=hint, stages=self.results)

    def write(self, stage: str, send: Callable[[], T], confirm: Callable[[], T | None], *,
              hint: str | None = None) -> tuple[T, bool]:
        """Send a write; on an unknown outcome, `confirm` reads it back instead of re-sending.

        `confirm` returns the result the write would have produced when the read-back
        shows it took effect, None when it shows it did not, and raises when it cannot
        tell. Returns (result, whether a read-back confirmed it).
        """
        try:
            return send(), False
        except KeyboardInterrupt:
            raise self.interrupted(stage, writing=True) from None
        except BasedbError as error:
            if isinstance(error, ConnectionRefused):
                raise self.fail(stage, error, hint=_NOT_SENT_HINT) from error
            if not error.outcome_unknown:
                raise self.fail(stage, error, hint=hint) from error
            sent_error = error
        try:
            confirmed = confirm()
        except BasedbError as read_error:
            raise self._unknown(stage, sent_error, read_error) from sent_error
        if confirmed is None:
            self.finish(stage, "failed", {"outcome": "known", "readBack": "not applied",
                                          "error": _error_detail(sent_error)})
            message = (f"Stage {stage!r} ({STAGE_LABELS.get(stage, stage)}) failed: "
                       f"{sent_error.message.rstrip('.')}. Reading back showed the write did "
                       f"not take effect, so nothing was re-sent.{self._effects()}")
            raise DeployStageError(
                stage, sent_error, outcome_known=True, message=message,
                hint="Run the same command again when the platform is healthy.",
                stages=self.results) from sent_error
        return confirmed, True

    def _unknown(self, stage: str, sent: BasedbError, read: BasedbError) -> DeployStageError:
        self.finish(stage, "unknown", {"outcome": "unknown", "error": _error_detail(sent),
                                       "readBackError": _error_detail(read)})
        message = (f"Stage {stage!r} ({STAGE_LABELS.get(stage, stage)}) has an unknown "
                   f"outcome: {sent.message.rstrip('.')}, and reading it back failed too "
                   f"({read.message.rstrip('.')}). Nothing was re-sent."
                   f"{self._effects(outcome_known=False)}")
        return DeployStageError(
            stage, sent, outcome_known=False, message=message,
            hint="Check what happened with `basedb deployments status` (and `basedb "
                 "deployments list`) before deploying again.", stages=self.results,
            exit_code=EXIT_NETWORK)


SITE_MISSING_HINT = (
    "The workspace names a site this profile's platform does not have (or one you do not "
    "belong to), e.g. a workspace cloned from git. Connect it to a site there: `basedb link "
    "--create` makes a new one from catalog.json, `basedb link --app-token Prj…` joins an "
    "existing one.")


def _site_missing_hint(error: BasedbError) -> str | None:
    """The way out when the platform answers that the workspace's site is not there."""
    if not isinstance(error, ApiError) or isinstance(error, AuthError):
        return None
    parsed = FailureMessage.parse(error.message)
    return SITE_MISSING_HINT if parsed.parameter == "/path/app_token" else None
