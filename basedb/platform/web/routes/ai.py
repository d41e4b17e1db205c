"""AI Functions called the two ways a single answer cannot carry: streamed, and as media
tasks (basedb.platform.domain.runtimes.ai_stream, ai_media).

    POST /sites/{app}/functions/{key}/stream?env   {"params": {…}} → text/event-stream
    GET  /sites/{app}/ai-tasks/{taskId}?env        → {taskId, status, errCode, …}

A media task is started by the invoke endpoint (`callSiteAIFunction`), which answers
`{taskId, status}`. Both routes take the page's sign-in session, as invoke does, so a
page's SDK reaches them; who may call what is invoke's rule.
"""

from __future__ import annotations

import time
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.responses import Response, StreamingResponse

from basedb.platform.domain.access import require_site
from basedb.platform.domain.invoke import checked_input, require_callable, resolve_target
from basedb.platform.domain.runtimes import ai_stream
from basedb.platform.web.http import MIB, Call, Endpoint
from basedb.platform.web.routes.functions import (
    _ENV,
    _INTERNAL,
    body_params,
    call_logged,
    parse_env,
    parse_flag,
)
from basedb.platform.web.routes.schemas import INTEGER, STRING, array, obj
from basedb.protocol import bad_request

EVENT_STREAM = "text/event-stream"
_STREAM_HEADERS = {"Cache-Control": "no-store", "X-Accel-Buffering": "no"}


def _ai_call(call: Call, env: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The AI Function's declaration and the checked input (blocks: a thread)."""
    function_id = call.path["function_id"]
    with call.store.read() as conn:
        target = resolve_target(conn, call.caches, call.caller, call.path["app_token"], env,
                                function_id, parse_flag(call, "includeInternal"),
                                from_page=call.from_page)
    plan = target.plan
    require_callable(plan)
    if plan.kind != "ai_function":
        raise bad_request(f"{function_id} is a {plan.kind}, and only AI Functions stream",
                          parameter=f"/functions/{function_id}",
                          fix="call it through …/invoke (invokeDatabaseFunction, "
                          "invokeMutation or invokeFaaS)")
    checked = checked_input(plan, body_params(call))
    declaration = target.deployed.snapshot.functions[function_id].declaration
    return dict(declaration), checked


async def stream(call: Call) -> Response:
    env = parse_env(call)
    with call_logged(env, call.path["function_id"], time.perf_counter()):
        declaration, checked = await run_in_threadpool(_ai_call, call, env)
        opened = await ai_stream.open_stream(declaration, checked, call.log_id)
    return StreamingResponse(opened.events(), media_type=EVENT_STREAM,
                             headers=_STREAM_HEADERS)


def get_task(call: Call) -> dict[str, Any]:
    env = parse_env(call)
    app_token = call.path["app_token"]
    with call.store.read() as conn:
        site, _ = require_site(conn, call.caller, app_token)
    return call.caches.ai_tasks.get(call.path["task_id"], app_token=site.app_token, env=env,
                                    user_id=call.caller.user_id)


_TASK = obj({
    "taskId": STRING, "key": STRING,
    "capability": {"type": "string", "enum": ["image"]},
    "status": {"type": "string", "enum": ["pending", "running", "succeeded", "failed",
                                          "cancelled"]},
    "errCode": {**INTEGER, "description": "Non-zero when the task failed."},
    "errMessage": STRING,
    "logId": {**STRING, "description": "The LogID of the call that started the task."},
    "result": {"type": ["object", "null"], "description": "{media: [{url, type}]} once the "
               "task succeeded (a data: URL for an image the endpoint sent inline); null "
               "before.", "properties": {"media": array(obj({"url": STRING, "type": STRING},
                                                             ("url", "type")))}},
    "createdAt": STRING, "updatedAt": STRING,
}, ("taskId", "key", "capability", "status", "errCode", "errMessage", "logId", "result",
    "createdAt", "updatedAt"))

ENDPOINTS = [
    Endpoint("POST", "/sites/{app_token}/functions/{function_id}/stream", stream,
             "Call a text AI Function and stream its answer.", "functions",
             description="Server-Sent Events: `delta` events ({delta}) as the model writes, "
             "then one `done` ({text, model, usage}); a failure once text flows is an "
             "`error` event ({code, msg, logId}). Refusals before that answer the envelope "
             "as invoke does: 800004011 while the platform has no AI endpoint "
             "(BASEDB_AI_BASE_URL), 800004002 for params that fail the inputSchema, 9499 "
             "for a function that is not a text AI Function. Page sessions are accepted "
             "as for invoke.",
             query=(_ENV, _INTERNAL), hosts="any",
             body=obj({"params": {"type": "object", "description": "The AI Function's "
                                  "input, as its inputSchema describes."}}),
             body_required=False, page_session=True, body_limit=4 * MIB,
             response_media_type=EVENT_STREAM, errors=(409, 502, 504)),
    Endpoint("GET", "/sites/{app_token}/ai-tasks/{task_id}", get_task,
             "A media AI task (started by invoking an image AI Function).", "functions",
             description="Poll until status is succeeded, failed or cancelled; a failed "
             "task carries errCode and errMessage. Visible to the user who started it, on "
             "the same site and env; tasks live in the platform's memory. Page sessions "
             "are accepted as for invoke.",
             query=(_ENV,), hosts="any", page_session=True, response=_TASK),
]
