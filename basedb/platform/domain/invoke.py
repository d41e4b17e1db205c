"""Resolve a site's deployed function for a caller, check its input, and run it.

    deployed = resolve_deployment(conn, caches, caller, app_token, env, include_internal)
    target = resolve_target(conn, caches, caller, app_token, env, function_id, …)
    call = InvokeCall(store, caches, caller, app_token, function_id, params, env, …)
    data = finish(call)                              # blocks: in a worker thread
    answer = start_on_loop(call, params_chars)       # data, or Pending: answer.finish()

On the event loop, a Database Function's cheap statement runs within the loop's budget
(`sql_inline`), and so does a Mutation's write when the write lock is free at that
moment (`Store.write_now`: nothing waits for a lock, the statements stop after
`LOOP_WRITE_BUDGET_S` of CPU time); anything else, or an attempt that gives up, is finished in a
worker thread, which waits for the lock as long as any write does.

Who sees what: prod is open to every member of the site, preview and the development
draft of `basedb dev` (env=dev, `basedb.platform.domain.dev_drafts`) to its owner and
admins (members are refused with 99991672 and told to use prod). Functions listed in
the deployment's agent-tools `exclude` are hidden from agents and refused as unknown
(800004001) unless an owner or admin passes includeInternal=true; a member passing it
simply does not see them (an owner or admin calling without it is told how to debug
it). The exclude list is not access control and does not restrict the page entry
(upstream agent-tools.md): a deployed page, calling through its sign-in session,
reaches every function of its deployment. Every refusal happens before anything runs
and says so in upstream's message template (`errors.unexecuted_message`).
"""

from __future__ import annotations

import json
import math
import re
import sqlite3
import time
from collections.abc import Callable, Mapping
from datetime import datetime
from functools import partial
from typing import Any

from basedb.core.frozen import frozen_dataclass
from basedb.core.memo import NotBuilt, memos_only
from basedb.platform.domain import identity, site_secrets, sites
from basedb.platform.domain.access import require_site
from basedb.platform.domain.bounded_schema import TooComplex, step_budget
from basedb.platform.domain.caches import DomainCaches
from basedb.platform.domain.dev_drafts import DEV_ENV
from basedb.platform.domain.function_plans import FunctionPlan, function_plan
from basedb.platform.domain.invoke_errors import parameter_failure
from basedb.platform.domain.quotas import OwnerQuotas
from basedb.platform.domain.resolved import data_version
from basedb.platform.domain.revision import LiveCatalog, live_catalog
from basedb.platform.domain.runtimes import sql as sql_runtime
from basedb.platform.domain.runtimes import sql_inline
from basedb.platform.domain.runtimes.ai import MEDIA_CAPABILITIES, run_ai
from basedb.platform.domain.runtimes.faas import FaasFunction, FaasRuntime
from basedb.platform.domain.runtimes.mutation import run_mutation
from basedb.platform.domain.snapshots import ENVIRONMENTS, Snapshot, load_snapshot
from basedb.platform.storage.cells import closest
from basedb.platform.storage.ids import DATETIME_FORMAT
from basedb.platform.storage.read_only import read_only_pool
from basedb.platform.storage.store import Store, WriteBusy, WriteOutOfTime
from basedb.protocol import (
    CALLABLE_STATUSES,
    ApiFailure,
    Code,
    permission_denied,
    quote,
    unexecuted_message,
)
from basedb.protocol.findings import pointer
from basedb.sql.pgvalues import zone_info
from basedb.workspace.model import FaaS

MAX_SQL_INT = 2**63 - 1
# Where functions can be called: the two releases, and the development draft.
INVOKE_ENVIRONMENTS = (*ENVIRONMENTS, DEV_ENV)
_DATETIME_RE = re.compile(r"^(\d{4}-\d{2}-\d{2})(?:[ T](\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?"
                          r"(Z|[+-]\d{2}:?\d{2})?)?\Z")


# ------------------------------------------------------------------------ resolving


@frozen_dataclass
class Deployed:
    """The deployment an environment of a site runs, as one caller may see it."""

    site: sites.SiteRow
    role: str
    env: str
    snapshot: Snapshot
    visible: tuple[str, ...]  # function ids the caller may see, sorted

    def is_internal(self, function_id: str) -> bool:
        return function_id in self.snapshot.exclude


def resolve_deployment(conn: sqlite3.Connection, caches: DomainCaches, caller: identity.User,
                       app_token: str, env: str, include_internal: bool, *,
                       from_page: bool = False) -> Deployed:
    site, role = require_site(conn, caller, app_token)
    if env in ("preview", DEV_ENV) and role not in sites.MANAGER_ROLES:
        what = "preview" if env == "preview" else "development draft"
        raise permission_denied(
            f"The {what} of site {app_token} is open to its owner and admins; user "
            f"{caller.user_id} is a member",
            "call env=prod, or ask the site's owner for the admin role")
    if env == DEV_ENV:
        dev_draft = caches.dev.get(site.app_token)
        snapshot = dev_draft.snapshot if dev_draft is not None else None
        if snapshot is None:
            raise no_dev_draft(app_token)
    else:
        snapshot = load_snapshot(conn, site.app_token, env, caches.snapshots)
        if snapshot is None:
            raise no_deployment(app_token, env, publisher=role in sites.MANAGER_ROLES)
    show_internal = from_page or (include_internal and role in sites.MANAGER_ROLES)
    visible = snapshot.all_ids if show_internal else snapshot.published_ids
    return Deployed(site=site, role=role, env=env, snapshot=snapshot, visible=visible)


def no_deployment(app_token: str, env: str, *, publisher: bool) -> ApiFailure:
    """Nothing is deployed for `env`; a `publisher` (owner or admin) is told how to
    publish, a member (and the agent acting for one) whom to ask."""
    reason = f"Site {app_token} has no {env} deployment yet"
    if not publisher:
        fix = "ask the site's owner or an admin to publish it to production"
    elif env == "prod":
        fix = ("deploy a preview (`basedb deploy`), check it, then promote it "
               "(`basedb deploy --production --yes`)")
    else:
        fix = "deploy one with `basedb deploy`"
    return ApiFailure(Code.SCHEMA_NOT_READY, f"{reason}. Fix: {fix}. Executed: no. "
                      "Retry: retry after publishing.", status=409)


def no_dev_draft(app_token: str) -> ApiFailure:
    """env=dev while no `basedb dev` session has sent the site's functions."""
    return ApiFailure(Code.SCHEMA_NOT_READY, f"Site {app_token} has no development draft. "
                      "Fix: run `basedb dev` in the site's workspace (it sends the draft and "
                      "keeps it current), or call env=preview or env=prod. Executed: no. "
                      "Retry: retry after starting `basedb dev`.", status=409)


@frozen_dataclass
class Target:
    deployed: Deployed
    function_id: str
    live: LiveCatalog
    plan: FunctionPlan


def resolve_target(conn: sqlite3.Connection, caches: DomainCaches, caller: identity.User,
                   app_token: str, env: str, function_id: str, include_internal: bool, *,
                   from_page: bool = False) -> Target:
    deployed = resolve_deployment(conn, caches, caller, app_token, env, include_internal,
                                  from_page=from_page)
    if function_id not in deployed.visible:
        if deployed.role in sites.MANAGER_ROLES and deployed.is_internal(function_id):
            raise _excluded(function_id, app_token, env)
        raise ApiFailure(Code.FUNCTION_NOT_FOUND, unexecuted_message(
            f"Function {quote(function_id)} is not published in the {env} deployment of site "
            f"{app_token}", parameter="/path/function_id", received=function_id,
            fix=f"use a functionId from GET /sites/{app_token}/functions?env={env}",
            candidates=closest(function_id, deployed.visible)), status=404)
    live = live_catalog(conn, deployed.site, caches.catalogs)
    plan = function_plan(deployed.snapshot, function_id, live, caches.plans)
    return Target(deployed=deployed, function_id=function_id, live=live, plan=plan)


def _excluded(function_id: str, app_token: str, env: str) -> ApiFailure:
    """What an owner or admin hears of a function agent-tools.json excludes (a member is
    told it does not exist): how to reach it while debugging."""
    query = json.dumps({"env": env, "includeInternal": True}, separators=(",", ":"))
    return ApiFailure(Code.FUNCTION_NOT_FOUND, unexecuted_message(
        f"Function {quote(function_id)} is excluded from agents by agent-tools.json in the "
        f"{env} deployment of site {app_token}", parameter="/path/function_id",
        received=function_id, fix="to debug it as the site's owner or an admin, add "
        f"includeInternal=true to the query, e.g. --params '{query}'; agents and members "
        "cannot call it"), status=404)


def require_callable(plan: FunctionPlan) -> None:
    """Refuse a function whose schema is not ready (missing still runs, unvalidated)."""
    if plan.status in CALLABLE_STATUSES:
        return
    raise ApiFailure(Code.SCHEMA_NOT_READY, f"Function {quote(plan.function_id)} cannot be called: "
                     f"its schemaStatus is {plan.status}. Fix: {plan.status_hint} "
                     "Executed: no. Retry: retry after publishing.", status=409)


# -------------------------------------------------------------------------- input


# How many keyword evaluations validating one call's params may take (jsonschema's; the
# compiled closures of `fast_schema` count none): a few hundred milliseconds of a worker
# thread. On the event loop, far fewer: past LOOP_VALIDATION_STEPS the call is validated
# again in a worker thread.
VALIDATION_STEPS = 100_000
LOOP_VALIDATION_STEPS = 2_000


class OffTheLoop(Exception):
    """What is left of the call must be done in a worker thread, not on the event loop."""


def checked_input(plan: FunctionPlan, params: dict[str, Any], *,
                  on_loop: bool = False) -> dict[str, Any]:
    """`params` validated against the function's inputSchema (as they are, for a
    function whose schema is missing), within VALIDATION_STEPS.

    On the event loop (`on_loop`), only a schema whose check is linear in the params
    (`FastValidator.linear`) is checked, and an invalid call explained within
    LOOP_VALIDATION_STEPS; anything else raises OffTheLoop."""
    _check_values(params)
    validator = plan.validator
    if validator is None:
        return params
    steps = LOOP_VALIDATION_STEPS if on_loop else VALIDATION_STEPS
    try:
        if validator.linear:
            if validator.is_valid(params):  # the closures: linear, no steps to count
                return params
        elif on_loop:
            raise OffTheLoop
        with step_budget(steps):
            if not validator.linear and validator.is_valid(params):
                return params
            failure = parameter_failure(validator.iter_errors(params), plan)
    except (TooComplex, RecursionError):
        if on_loop:
            raise OffTheLoop from None
        raise _too_complex(plan) from None
    if failure is not None:
        raise failure
    return params


def _too_complex(plan: FunctionPlan) -> ApiFailure:
    return ApiFailure(Code.PARAMETER_INVALID, unexecuted_message(
        f"The params are too complex to validate against the inputSchema of "
        f"{quote(plan.function_id)}: checking them took more than the platform's "
        f"{VALIDATION_STEPS:,} steps", parameter="/params",
        fix="send fewer or less deeply nested values; if ordinary input hits this, ask "
        "the function's author to simplify the inputSchema (anyOf or oneOf over a "
        "recursive $ref)"))


def _check_values(params: Any) -> None:
    """Values that JSON allows Python to parse but nothing downstream can store: unpaired
    surrogates in text, NaN and infinities."""
    stack: list[tuple[Any, tuple[Any, ...]]] = [(params, ())]
    while stack:
        value, path = stack.pop()
        problem = None
        if isinstance(value, str):
            if not _is_encodable(value):
                problem = ("contains an unpaired UTF-16 surrogate (not valid Unicode text)",
                           "send valid Unicode text")
        elif isinstance(value, float) and not math.isfinite(value):
            problem = ("is not a finite number", "send a JSON number (NaN and Infinity are "
                       "not JSON)")
        elif isinstance(value, dict):
            for key, item in value.items():
                if not _is_encodable(key):
                    problem = ("has a key with an unpaired UTF-16 surrogate",
                               "send valid Unicode text")
                    break
                stack.append((item, (*path, key)))
        elif isinstance(value, list):
            stack.extend((item, (*path, i)) for i, item in enumerate(value))
        if problem is not None:
            shown = str(value).encode("utf-8", "backslashreplace").decode("utf-8")
            raise ApiFailure(Code.PARAMETER_INVALID, unexecuted_message(
                f"The value {problem[0]}", parameter=pointer("params", *map(str, path)),
                received=shown, fix=problem[1]))


def _is_encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def param_values(plan: FunctionPlan, params: Mapping[str, Any],
                 zone: str = "UTC") -> dict[str, Any]:
    """Validated params of a Database Function or Mutation, normalised for running:
    integers within SQLite's range, DATE as 'YYYY-MM-DD', DATETIME as the cell format
    'YYYY-MM-DD HH:mm:ss' in the site's time zone `zone` (an ISO time with an offset or
    `Z` is converted to it; one without is already site time)."""
    values: dict[str, Any] = {}
    for spec in plan.specs:
        value = params.get(spec.name)
        if value is None:
            values[spec.name] = None
        elif spec.is_array:
            values[spec.name] = [_scalar(spec.kind, v, (spec.name, str(i)), zone)
                                 for i, v in enumerate(value)]
        else:
            values[spec.name] = _scalar(spec.kind, value, (spec.name,), zone)
    return values


def _scalar(kind: str, value: Any, at: tuple[str, ...], zone: str) -> Any:
    """One normalised value; `at` is its path below `params` (for the error's pointer,
    made only when there is one)."""
    if kind == "INT" and isinstance(value, float):
        value = int(value)  # the schema lets 3.0 through as an integer
    if kind in ("INT", "NUMBER") and isinstance(value, int) and abs(value) > MAX_SQL_INT:
        raise _invalid("The number is outside the range of a 64-bit integer", at, value,
                       f"send a number between {-MAX_SQL_INT} and {MAX_SQL_INT}")
    if kind == "DATE":
        try:
            datetime.strptime(value, "%Y-%m-%d")
        except ValueError:
            raise _invalid("The value is not a real calendar date", at, value,
                           "send a date YYYY-MM-DD that exists, e.g. 2025-02-28") from None
        return value
    if kind == "DATETIME":
        return _datetime_text(value, at, zone)
    return value


def _datetime_text(value: str, at: tuple[str, ...], zone: str) -> str:
    match = _DATETIME_RE.match(value)
    fix = 'send "YYYY-MM-DD HH:mm:ss" (site time), or ISO 8601 such as 2025-01-31T09:00:00Z'
    if match is None:
        raise _invalid("The value is not a date and time", at, value, fix)
    day, hour, minute, second, written_offset = match.groups()
    try:
        moment = datetime.strptime(f"{day} {hour or '00'}:{minute or '00'}:{second or '00'}",
                                   DATETIME_FORMAT)
        if written_offset:
            offset = "+00:00" if written_offset == "Z" else written_offset
            if ":" not in offset:
                offset = f"{offset[:3]}:{offset[3:]}"
            aware = datetime.fromisoformat(moment.isoformat() + offset)
            moment = aware.astimezone(zone_info(zone)).replace(tzinfo=None)
    except (ValueError, OverflowError):
        raise _invalid("The value is not a real date and time", at, value, fix) from None
    return moment.strftime(DATETIME_FORMAT)


def _invalid(reason: str, at: tuple[str, ...], value: Any, fix: str) -> ApiFailure:
    return ApiFailure(Code.PARAMETER_INVALID, unexecuted_message(reason,
                                                            parameter=pointer("params", *at),
                                                            received=value, fix=fix))


# ------------------------------------------------------------------------- invoking


@frozen_dataclass
class InvokeCall:
    """One call of a site's function: who calls what, with which params."""

    store: Store
    caches: DomainCaches
    caller: identity.User
    app_token: str
    function_id: str
    params: dict[str, Any]
    env: str
    include_internal: bool
    from_page: bool
    log_id: str
    faas: FaasRuntime
    quotas: OwnerQuotas = OwnerQuotas()


@frozen_dataclass
class Pending:
    """A call whose rest may block (a worker's statement, a write, a FaaS or AI call, or
    building what the memos do not hold yet): `finish()` runs it, in a worker thread."""

    finish: Callable[[], Any]


# The largest params (as JSON text) validated on the event loop; larger ones are checked
# in a thread, where a long validation holds up no one else. On the loop only schemas
# whose check is linear in the params are checked (`checked_input`).
LOOP_PARAMS_CHARS = 16 * 1024
# How much CPU time a Mutation's statements may take on the event loop before the write
# is rolled back and done in a worker thread instead (one record takes a fraction of it);
# waits for the disk are bounded by the inline statements' wall-clock budget.
LOOP_WRITE_BUDGET_S = 0.002


def finish(call: InvokeCall) -> Any:
    """The call's invoke data, running whatever it takes (blocks)."""
    answer = _start(call, on_loop=False)
    return answer.finish() if isinstance(answer, Pending) else answer


def start_on_loop(call: InvokeCall, params_chars: int) -> Any:
    """The call's invoke data when the server's event loop can answer it at once: from
    what the memos hold, small params (`params_chars` long as JSON), and a Database
    Function statement that finishes within the loop's budget (`sql_inline`) or a
    Mutation whose write can be had without waiting (`_mutation_on_loop`); else a
    Pending with the rest, refusals included. Raises what `finish` raises."""
    if params_chars > LOOP_PARAMS_CHARS:
        return Pending(partial(finish, call))
    try:
        with memos_only():
            return _start(call, on_loop=True)
    except (NotBuilt, OffTheLoop):
        return Pending(partial(finish, call))


def _start(call: InvokeCall, *, on_loop: bool, retried: bool = False) -> Any:
    """Resolve and check the call, and answer it when the loop can (a cheap statement, or
    a Mutation's write while the write lock is free); a Pending for anything else."""
    # Resolution and validation share one read snapshot, and so does a cheap Database
    # Function statement; any other runs in a worker, which checks that the catalog is
    # still the one it was compiled for (else the call is resolved again, once).
    with read_only_pool(call.store).transaction() as conn:
        target = _resolved_target(conn, call)
        plan = target.plan
        require_callable(plan)
        checked = checked_input(plan, call.params, on_loop=on_loop)
        if plan.compiled is None:
            answer = None
        else:
            zone = target.deployed.snapshot.timezone
            values = list(param_values(plan, checked, zone).values())
            answer = sql_runtime.run_cheap(conn, plan.compiled, values,
                                           user_id=call.caller.user_id,
                                           site=target.deployed.site.app_token,
                                           on_loop=on_loop)
    if plan.compiled is None:
        # A Mutation, FaaS or AI function. A Mutation's write is tried on the loop once
        # the read snapshot has ended (the write takes its own, newer one).
        if on_loop and plan.kind == "mutation":
            written = _mutation_on_loop(call, target, checked)
            if written is not None:
                return written
        return Pending(partial(_run_other, call, target, checked))
    if answer is not None:
        return answer
    if on_loop:
        return Pending(partial(finish, call))
    return Pending(partial(_run_in_worker, call, target, values, retried=retried))


def _resolved_target(conn: sqlite3.Connection, call: InvokeCall) -> Target:
    """`resolve_target` for the call, from what the same connection resolved while the
    database has not changed since (`basedb.platform.domain.resolved`); starts the read
    snapshot. A development draft lives in memory, outside what the version covers: it
    is resolved every time."""
    version = data_version(conn)
    key = (call.caller, call.app_token, call.env, call.function_id, call.include_internal,
           call.from_page)
    memo = call.caches.targets
    found: Target | None = memo.get(conn, version, key) if call.env != DEV_ENV else None
    if found is None:
        found = resolve_target(conn, call.caches, call.caller, call.app_token, call.env,
                               call.function_id, call.include_internal,
                               from_page=call.from_page)
        if call.env != DEV_ENV:
            memo.put(conn, version, key, found)
    return found


def _run_in_worker(call: InvokeCall, target: Target, values: list[Any], *,
                   retried: bool) -> Any:
    compiled = target.plan.compiled
    assert compiled is not None
    try:
        site = target.deployed.site
        return sql_runtime.run_query(call.store.path, compiled, values,
                                     catalog_revision=target.live.revision,
                                     user_id=call.caller.user_id, function_id=call.function_id,
                                     log_id=call.log_id, site=site.app_token,
                                     owner=site.owner_id, slow_per_owner=call.quotas.slow_queries)
    except sql_runtime.StaleCatalog:
        if retried:
            raise ApiFailure(Code.PLATFORM_BUSY, "The site's tables changed while the "
                             "call was being run; nothing was changed. Executed: no. "
                             "Retry: retry later.", status=503) from None
    answer = _start(call, on_loop=False, retried=True)
    return answer.finish() if isinstance(answer, Pending) else answer


def _run_other(call: InvokeCall, target: Target, checked: dict[str, Any]) -> Any:
    """A Mutation, FaaS or AI function."""
    plan = target.plan
    if plan.kind == "mutation":
        return _run_mutation(call.store, call.caches, call.caller, target, checked)
    if plan.kind == "faas":
        return _run_faas(call.store, call.faas, call.caller, target, checked,
                         log_id=call.log_id, env=call.env, owner_limit=call.quotas.faas_calls)
    item = target.deployed.snapshot.functions[call.function_id]
    if item.declaration.get("capability") in MEDIA_CAPABILITIES:
        return call.caches.ai_tasks.start(
            declaration=dict(item.declaration), input=checked, key=call.function_id,
            app_token=target.deployed.site.app_token, env=call.env,
            user_id=call.caller.user_id, log_id=call.log_id)
    return run_ai(declaration=item.declaration, input=checked, log_id=call.log_id)


def _run_faas(store: Store, faas: FaasRuntime, caller: identity.User, target: Target,
              checked: dict[str, Any], *, log_id: str, env: str, owner_limit: int) -> Any:
    declaration = target.plan.declaration
    assert isinstance(declaration, FaaS)
    site = target.deployed.site
    snapshot = target.deployed.snapshot
    function = FaasFunction(
        scope=str(store.path), app_token=site.app_token, deployment_id=snapshot.deployment_id,
        function_id=target.function_id, source=snapshot.functions[target.function_id].handler
        or "", timeout_ms=declaration.timeout_ms, network=declaration.network_allow,
        secrets=declaration.secrets)
    values: dict[str, str] = {}
    if function.secrets:
        with store.read() as conn:
            values = site_secrets.values_for(conn, site.app_token, function.secrets,
                                             function_id=target.function_id, log_id=log_id)
    return faas.run(store=store, site=site, catalog=target.live.catalog, caller=caller,
                    function=function, input=checked, log_id=log_id, env=env,
                    secret_values=values, timezone=snapshot.timezone, owner_limit=owner_limit)


def _run_mutation(store: Store, caches: DomainCaches, caller: identity.User, target: Target,
                  params: dict[str, Any]) -> Any:
    with store.write() as conn:
        return _write_mutation(conn, caches, caller, target, params)


def _mutation_on_loop(call: InvokeCall, target: Target,
                      params: dict[str, Any]) -> dict[str, Any] | None:
    """The Mutation's result, written on the event loop when the write lock is free now
    and the statements finish within LOOP_WRITE_BUDGET_S of CPU time; None (nothing
    written) when it must be written in a worker thread instead. A write that ran out of
    time is not tried on the loop again for a while, and its time counts against the
    loop's share (`sql_inline.may_try_on_loop`)."""
    snapshot = target.deployed.snapshot
    key = f"mutation {snapshot.deployment_id} {target.function_id}"
    if not sql_inline.may_try_on_loop(key):
        return None
    started = time.perf_counter()
    try:
        with call.store.write_now(LOOP_WRITE_BUDGET_S, sql_inline.BUDGET_S) as conn:
            return _write_mutation(conn, call.caches, call.caller, target, params,
                                   on_loop=True)
    except (WriteBusy, OffTheLoop):
        return None
    except WriteOutOfTime:
        sql_inline.gave_up_on_loop(key, time.perf_counter() - started)
        return None


def _write_mutation(conn: sqlite3.Connection, caches: DomainCaches, caller: identity.User,
                    target: Target, params: dict[str, Any], *,
                    on_loop: bool = False) -> dict[str, Any]:
    """Apply the Mutation inside the caller's write transaction on `conn`."""
    live = live_catalog(conn, target.deployed.site, caches.catalogs)
    plan = target.plan
    if live.revision != target.live.revision:
        # The tables changed since the call was resolved: judge it again on what the
        # write will really touch.
        plan = function_plan(target.deployed.snapshot, target.function_id, live,
                             caches.plans)
        require_callable(plan)
        params = checked_input(plan, params, on_loop=on_loop)
    assert plan.mutation is not None
    zone = target.deployed.snapshot.timezone
    return run_mutation(conn, plan.mutation, param_values(plan, params, zone),
                        caller_id=caller.user_id, zone=zone)
