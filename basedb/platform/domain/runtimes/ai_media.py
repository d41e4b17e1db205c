"""Media AI Functions (text to image) as tasks: a call starts one and answers at once
with `{taskId, status}`; the page polls `GET /sites/{app}/ai-tasks/{taskId}` until
`data.status` is `succeeded`, `failed` or `cancelled` (upstream agent-tools.md: a task
query is read for `data.status` and `errCode` / `errMessage`).

An `image` AI Function becomes one `POST {base}/images/generations` of the configured
OpenAI-compatible endpoint (`basedb.platform.domain.runtimes.ai`), run in a thread of its
own: `{model, prompt, n: 1}`, where the prompt is the function's prompt with `{{name}}`
filled from the input (and the input as JSON after it when the prompt names none of it).
Each image of the answer becomes `{url, type: "image"}`: its URL, or a `data:` URL for
`b64_json`. The endpoint's own words go to the platform log only; the task reports a
fixed message with the LogID of the call that started it.

Tasks live in the platform's memory (`MediaTasks`, one per platform app): at most
`RUNNING_MAX` run at once and `SITE_RUNNING_MAX` per site (more answer 99991400, retry
later), an image kept inline (`b64_json`) is at most `MAX_INLINE_IMAGE_BYTES`, and the
newest `TASKS_KEPT` tasks are kept; a restarted platform has none. A task is visible to
the user who started it, on the site and environment it was started in, and to no one
else. It carries the LogID of the call that started it, which the platform log files
the endpoint's answers under.
"""

from __future__ import annotations

import base64
import json
import threading
import time
import uuid
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from basedb.platform.domain.runtimes import ai
from basedb.protocol import ApiFailure, Code

RUNNING_MAX = 4
SITE_RUNNING_MAX = 2
TASKS_KEPT = 1000
MAX_INLINE_IMAGE_BYTES = 8 * 1024 * 1024
TERMINAL = frozenset({"succeeded", "failed", "cancelled"})


@dataclass(slots=True)
class MediaTask:
    """One media task; mutated only under its store's lock."""

    task_id: str
    key: str
    capability: str
    app_token: str
    env: str
    user_id: str
    log_id: str
    status: str = "pending"
    err_code: int = 0
    err_message: str = ""
    media: list[dict[str, str]] = field(default_factory=list)
    created_at: float = field(default_factory=time.time)
    updated_at: float = field(default_factory=time.time)

    def to_dict(self) -> dict[str, Any]:
        return {
            "taskId": self.task_id, "key": self.key, "capability": self.capability,
            "status": self.status, "errCode": self.err_code, "errMessage": self.err_message,
            "logId": self.log_id,
            "result": {"media": list(self.media)} if self.status == "succeeded" else None,
            "createdAt": _iso(self.created_at), "updatedAt": _iso(self.updated_at),
        }


class MediaTasks:
    """The media tasks of one platform, newest last."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._tasks: OrderedDict[str, MediaTask] = OrderedDict()

    def start(self, *, declaration: dict[str, Any], input: Any, key: str, app_token: str,
              env: str, user_id: str, log_id: str) -> dict[str, Any]:
        """Start a task for an `image` AI Function; `{taskId, status}`."""
        endpoint = ai.require_endpoint()
        capability = str(declaration.get("capability"))
        task = MediaTask(task_id="tsk" + uuid.uuid4().hex, key=key, capability=capability,
                         app_token=app_token, env=env, user_id=user_id, log_id=log_id)
        with self._lock:
            running = [t for t in self._tasks.values() if t.status not in TERMINAL]
            of_site = sum(1 for t in running if t.app_token == app_token)
            if len(running) >= RUNNING_MAX or of_site >= SITE_RUNNING_MAX:
                limit = (f"{SITE_RUNNING_MAX} media AI tasks of site {app_token}"
                         if of_site >= SITE_RUNNING_MAX else f"{RUNNING_MAX} media AI tasks")
                raise ApiFailure(Code.RATE_LIMITED, (
                    f"The platform already runs {limit}. Fix: wait for one of them to end. "
                    "Executed: no. Retry: retry later."), status=429)
            self._tasks[task.task_id] = task
            while len(self._tasks) > TASKS_KEPT:
                self._tasks.popitem(last=False)
        prompt = _image_prompt(declaration.get("prompt"), input)
        thread = threading.Thread(target=self._run, args=(task, endpoint, prompt),
                                  name=f"basedb-ai-task-{task.task_id}", daemon=True)
        thread.start()
        return {"taskId": task.task_id, "status": task.status}

    def get(self, task_id: str, *, app_token: str, env: str, user_id: str) -> dict[str, Any]:
        with self._lock:
            task = self._tasks.get(task_id)
            if task is None or (task.app_token, task.env, task.user_id) != (
                    app_token, env, user_id):
                raise ApiFailure(Code.FUNCTION_NOT_FOUND, (
                    f"No media AI task {task_id} of yours on site {app_token} ({env}). "
                    "Fix: send the taskId that starting the task answered, with the same "
                    "env; tasks do not outlive a restart of the platform. Executed: no. "
                    "Retry: do not retry."), status=404)
            return task.to_dict()

    def _run(self, task: MediaTask, endpoint: ai.AIEndpoint, prompt: str) -> None:
        self._update(task, status="running")
        body = {"model": endpoint.image_model, "prompt": prompt, "n": 1}
        try:
            answer = ai.post_json(endpoint, endpoint.images_url, body, task.log_id)
            media = _images(answer, task.log_id)
        except ApiFailure as failure:
            self._update(task, status="failed", err_code=int(failure.code),
                         err_message=failure.msg)
            return
        except Exception as exc:  # a thread has no caller to raise to: the task says it
            ai.log(task.log_id, f"media task {task.task_id} failed: {type(exc).__name__}")
            self._update(task, status="failed", err_code=int(Code.EXECUTION_FAILED),
                         err_message=f"The media task failed. LogID: {task.log_id}")
            return
        self._update(task, status="succeeded", media=media)

    def _update(self, task: MediaTask, **changes: Any) -> None:
        with self._lock:
            for name, value in changes.items():
                setattr(task, name, value)
            task.updated_at = time.time()


def _image_prompt(prompt: Any, input: Any) -> str:
    template = prompt if isinstance(prompt, str) else ""
    filled = ai.fill_prompt(template, input)
    if ai.names_placeholders(template) or not input:
        return filled
    return f"{filled}\n\n{json.dumps(input, ensure_ascii=False)}"


def _images(answer: Any, log_id: str) -> list[dict[str, str]]:
    items = answer.get("data") if isinstance(answer, dict) else None
    media: list[dict[str, str]] = []
    for item in items if isinstance(items, list) else []:
        if isinstance(item, dict) and isinstance(item.get("url"), str):
            media.append({"url": item["url"], "type": "image"})
        elif isinstance(item, dict) and isinstance(item.get("b64_json"), str):
            if len(item["b64_json"]) > MAX_INLINE_IMAGE_BYTES:
                raise ai.failed(f"The AI endpoint's image is over {MAX_INLINE_IMAGE_BYTES} "
                                "bytes inline", "ask the endpoint for a URL "
                                "(response_format) or a smaller size", "retry after fixing",
                                log_id, status=502)
            try:
                base64.b64decode(item["b64_json"], validate=True)
            except ValueError:
                continue
            media.append({"url": "data:image/png;base64," + item["b64_json"],
                          "type": "image"})
    if not media:
        ai.log(log_id, f"unexpected images answer: {json.dumps(answer)[:2000]}")
        raise ai.failed("The AI endpoint's answer has no data[].url or data[].b64_json",
                        f"point ${ai.BASE_URL_ENV} at an OpenAI-compatible images API",
                        "retry after fixing", log_id, status=502)
    return media


def _iso(at: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(at))
