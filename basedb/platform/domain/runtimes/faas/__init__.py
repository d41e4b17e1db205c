"""FaaS runtime: run a site's `index.mjs` handlers in sandboxed, warm Node.js workers.

    runtime = shared_runtime()
    data = runtime.run(store=…, site=…, catalog=…, caller=user,
                       function=FaasFunction(scope=…, app_token=…, deployment_id=…,
                                             function_id="managePeriod", source=…,
                                             timeout_ms=10_000),
                       input={…}, log_id=…, env="prod", secret_values={…})

A worker is `node runner.mjs` in a sandbox (`sandbox`: bubblewrap namespaces, its own
user when the platform is root, cgroup memory and task caps, rlimits; or a plain process
where the machine offers no sandbox, said in the log at start). It imports one
function's handler once and then runs its calls one at a time (`worker`), `ctx.records`
calls travelling over a pipe of their own and executed here by `records.RecordRoutes`
with the caller as the actor. Warm workers are kept per deployed function, spares for
first calls, and the number of calls at once is capped per site and per process
(`pool`). What a handler prints is captured, capped, escaped and written to the platform
log under the call's log id (`logs`), never shown to the caller; how a call ended
becomes its data or an 800004003/800004005 error (`outcome`). A function reaches the
network only through the hosts it declares (`egress`), with secrets the site sets on
the platform. `limits` lists every limit and the variables that change them; the docs
page docs/faas-sandbox.md says what each platform enforces.
"""

from __future__ import annotations

from basedb.platform.domain.runtimes.faas.limits import (
    DEFAULT_TIMEOUT_MS,
    MAX_TIMEOUT_MS,
    FaasLimits,
    effective_timeout_ms,
)
from basedb.platform.domain.runtimes.faas.pool import (
    NODE_REQUIRED,
    FaasFunction,
    FaasRuntime,
    shared_runtime,
)

__all__ = [
    "DEFAULT_TIMEOUT_MS",
    "MAX_TIMEOUT_MS",
    "NODE_REQUIRED",
    "FaasFunction",
    "FaasLimits",
    "FaasRuntime",
    "effective_timeout_ms",
    "shared_runtime",
]
