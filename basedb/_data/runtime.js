// basedb page SDK: the module a page imports as
//
//   import { startBaseApp, invokeDatabaseFunction } from "@lark-base-open/base-database-app-sdk/page";
//
// (upstream's name), or as "database-runtime" (the 1.3.9 name) or "/_basedb/runtime.js".
// All three are one module: every HTML page basedb serves carries an import map that maps
// both bare names to /_basedb/runtime.js, and `basedb sdk pack` packs this file as the npm
// package @lark-base-open/base-database-app-sdk for pages that are bundled. The
// declarations of every export are in page.d.ts beside this file.
//
//   startBaseApp(async () => {
//     const data = await invokeDatabaseFunction("listTasks", { status: "Open" });
//     render(data.rows);
//   });
//
// Every call POSTs {"params": ...} to the function invoke endpoint of the site and the
// environment the page was served from (/sites/<app>/ is prod, /sites/<app>/preview/ is
// preview), on the page's own origin (each site's pages live on a host of their own,
// <app>.localhost), with the page's sign-in cookie and the X-Basedb-Page header that the
// platform requires alongside it; the platform accepts the cookie only for this site and
// only from this origin. A call resolves to the envelope's `data` when `code` is 0 and
// otherwise rejects with a BasedbError carrying code, msg and logId (the LogID).

const API_PREFIX = "/open-apis/base/v3";
const PAGE_HEADER = "X-Basedb-Page";
const NETWORK_ERROR = -1;
const READY_MESSAGE = "base-app:ready";
const ERROR_MESSAGE = "base-app:error";
// Media task states that end the task; `succeeded` is the only good one.
const TERMINAL_STATES = new Set(["succeeded", "failed", "cancelled"]);
const DEFAULT_POLL_MS = 1000;
const DEFAULT_TASK_TIMEOUT_MS = 10 * 60 * 1000;

export class BasedbError extends Error {
  constructor(code, msg, logId, data) {
    super(logId ? `${msg} (code ${code}, LogID ${logId})` : `${msg} (code ${code})`);
    this.name = "BasedbError";
    this.code = code;
    this.msg = msg;
    this.logId = logId;
    this.data = data;
  }
}

const PAGE_PATH = /^\/sites\/([^/]+)\/(?:(preview)(?:\/|$))?/;

// The site and environment of the page at `url` (default: the current page).
export function pageContext(url = globalThis.location?.href) {
  const parsed = new URL(url);
  const match = PAGE_PATH.exec(parsed.pathname);
  if (!match) {
    throw new BasedbError(
      NETWORK_ERROR,
      `This page (${parsed.pathname}) is not served under /sites/<appToken>/, so the ` +
        "runtime cannot tell which site to call",
      "",
    );
  }
  return {
    origin: parsed.origin,
    appToken: decodeURIComponent(match[1]),
    env: match[2] ? "preview" : "prod",
  };
}

function currentSiteToken() {
  const href = globalThis.location?.href;
  const match = href ? PAGE_PATH.exec(new URL(href).pathname) : null;
  return match ? decodeURIComponent(match[1]) : "";
}

// The site's token (its appToken, as /sites/<token>/ names it); "" outside a site's page.
export const siteToken = currentSiteToken();

async function send(method, path, body, accept = "application/json", signal = undefined) {
  const { origin } = pageContext();
  try {
    return await fetch(new URL(path, origin), {
      method,
      credentials: "same-origin",
      signal,
      headers: {
        Accept: accept,
        ...(body === undefined ? {} : { "Content-Type": "application/json" }),
        [PAGE_HEADER]: "1",
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (cause) {
    if (cause?.name === "AbortError") throw cause;
    throw new BasedbError(NETWORK_ERROR, `The platform could not be reached: ${cause.message}`, "");
  }
}

async function answerOf(response) {
  const headerLogId = response.headers.get("x-tt-logid") || "";
  let envelope;
  try {
    envelope = await response.json();
  } catch {
    throw new BasedbError(response.status, `The platform answered HTTP ${response.status} ` +
      "without a JSON envelope", headerLogId);
  }
  if (envelope && envelope.code === 0) {
    return envelope.data;
  }
  throw new BasedbError(
    envelope?.code ?? response.status,
    envelope?.msg || `HTTP ${response.status}`,
    envelope?.error?.log_id || headerLogId,
    envelope?.data,
  );
}

async function request(method, path, body) {
  return answerOf(await send(method, path, body));
}

function sitePath(suffix) {
  const { appToken, env } = pageContext();
  return `${API_PREFIX}/sites/${encodeURIComponent(appToken)}/${suffix}` +
    `${suffix.includes("?") ? "&" : "?"}env=${env}`;
}

function requireId(what, value) {
  if (typeof value !== "string" || value === "") {
    throw new BasedbError(NETWORK_ERROR, `${what} must be a non-empty string`, "");
  }
}

function invoke(functionId, params) {
  try {
    requireId("functionId", functionId);
  } catch (error) {
    return Promise.reject(error);
  }
  return request("POST", sitePath(`functions/${encodeURIComponent(functionId)}/invoke`),
    { params: params ?? {} });
}

// A Database Function: resolves to its `data` (e.g. {rows: [...]}).
export function invokeDatabaseFunction(functionId, params = {}) {
  return invoke(functionId, params);
}

// A Mutation: resolves to its `data` (check record_not_found and ignored_fields).
export function invokeMutation(functionId, params = {}) {
  return invoke(functionId, params);
}

// A FaaS: `input` is what the handler receives; resolves to the handler's `data`.
export function invokeFaaS(functionId, input = {}) {
  return invoke(functionId, input);
}

// An AI Function of the site, by key. A text AI Function resolves to {text, model, usage}
// once the whole answer is there; a media AI Function (image, video) starts a task and
// resolves to {taskId, status}: wait for it with waitForSiteAIMediaTask.
export function callSiteAIFunction(key, input = {}) {
  return invoke(key, input);
}

// ---------------------------------------------------------------- AI streams

// A text AI Function's answer as it is written: an async iterator of
// {type: "delta", delta} chunks, ending with one {type: "done", text, model, usage}.
// A refusal (800004011, a bad input) or a failure midway throws a BasedbError from the
// loop; `signal` (an AbortSignal) stops the stream.
export async function* invokeSiteAIFunctionStream(key, input = {}, options = {}) {
  requireId("key", key);
  const response = await send(
    "POST", sitePath(`functions/${encodeURIComponent(key)}/stream`), { params: input ?? {} },
    "text/event-stream", options.signal);
  const type = response.headers.get("content-type") || "";
  if (!type.startsWith("text/event-stream")) {
    await answerOf(response); // an envelope: the refusal
    throw new BasedbError(response.status, "The platform answered without a stream",
      response.headers.get("x-tt-logid") || "");
  }
  const logId = response.headers.get("x-tt-logid") || "";
  for await (const event of serverSentEvents(response.body)) {
    const data = JSON.parse(event.data);
    if (event.event === "delta") {
      yield { type: "delta", delta: data.delta };
    } else if (event.event === "done") {
      yield { type: "done", text: data.text, model: data.model, usage: data.usage };
      return;
    } else if (event.event === "error") {
      throw new BasedbError(data.code, data.msg, data.logId || logId);
    }
  }
  throw new BasedbError(NETWORK_ERROR, "The AI stream ended before its answer was complete",
    logId);
}

async function* serverSentEvents(body) {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  try {
    for (;;) {
      const { value, done } = await reader.read();
      buffer += decoder.decode(value ?? new Uint8Array(), { stream: !done });
      let end;
      while ((end = buffer.search(/\r?\n\r?\n/)) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end).replace(/^\r?\n\r?\n/, "");
        const event = { event: "message", data: "" };
        const data = [];
        for (const line of block.split(/\r?\n/)) {
          if (line.startsWith("event:")) event.event = line.slice(6).trim();
          else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
        }
        if (data.length) {
          event.data = data.join("\n");
          yield event;
        }
      }
      if (done) return;
    }
  } finally {
    reader.releaseLock();
  }
}

// ----------------------------------------------------------------- media tasks

// Starts a media AI Function (text to image or video): resolves to {taskId, status}.
export async function createSiteAIMediaTask(key, input = {}) {
  const started = await invoke(key, input);
  if (typeof started?.taskId !== "string") {
    throw new BasedbError(NETWORK_ERROR, `${key} answered without a taskId: it is not a ` +
      "media AI Function; call it with callSiteAIFunction or invokeSiteAIFunctionStream", "",
      started);
  }
  return started;
}

// A media task as it stands: {taskId, key, status, errCode, errMessage, logId, result};
// status is pending, running, succeeded, failed or cancelled.
export function getSiteAIMediaTask(taskId) {
  try {
    requireId("taskId", taskId);
  } catch (error) {
    return Promise.reject(error);
  }
  return request("GET", sitePath(`ai-tasks/${encodeURIComponent(taskId)}`));
}

// Polls a media task until it ends: resolves to the task when its status is succeeded,
// rejects with a BasedbError carrying errCode / errMessage (and the task as `data`) when
// it failed or was cancelled, or when `timeoutMs` passed first.
export async function waitForSiteAIMediaTask(taskId, options = {}) {
  const intervalMs = options.intervalMs ?? DEFAULT_POLL_MS;
  const deadline = Date.now() + (options.timeoutMs ?? DEFAULT_TASK_TIMEOUT_MS);
  for (;;) {
    options.signal?.throwIfAborted?.();
    const task = await getSiteAIMediaTask(taskId);
    options.onStatus?.(task);
    if (TERMINAL_STATES.has(task.status)) {
      if (task.status === "succeeded") return task;
      throw new BasedbError(task.errCode || NETWORK_ERROR,
        task.errMessage || `The media task ${taskId} ended as ${task.status}`,
        task.logId || "", task);
    }
    if (Date.now() >= deadline) {
      throw new BasedbError(NETWORK_ERROR, `The media task ${taskId} is still ${task.status} ` +
        "after the wait allowed; read it later with getSiteAIMediaTask", task.logId || "",
        task);
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

// createSiteAIMediaTask, then waitForSiteAIMediaTask.
export async function runSiteAIMediaTask(key, input = {}, options = {}) {
  const started = await createSiteAIMediaTask(key, input);
  return waitForSiteAIMediaTask(started.taskId, options);
}

// -------------------------------------------------------------------- the page

// The page's entry: runs `start` once the document is parsed, then reports ready to the
// frame that holds the page (a page may be framed by its own origin only), as
// {type: "base-app:ready", siteToken, env}; a `start` that throws reports
// {type: "base-app:error", siteToken, env, message} and rejects. Resolves to what
// `start` returned.
export async function startBaseApp(start = undefined) {
  const doc = globalThis.document;
  if (doc && doc.readyState === "loading") {
    await new Promise((resolve) => doc.addEventListener("DOMContentLoaded", resolve,
      { once: true }));
  }
  const { env } = pageContext();
  let result;
  try {
    result = typeof start === "function" ? await start({ siteToken, env }) : undefined;
  } catch (error) {
    report({ type: ERROR_MESSAGE, siteToken, env, message: String(error?.message ?? error) });
    throw error;
  }
  report({ type: READY_MESSAGE, siteToken, env });
  return result;
}

function report(message) {
  const root = globalThis.document?.documentElement;
  if (root) root.dataset.baseApp = message.type === READY_MESSAGE ? "ready" : "error";
  const view = globalThis.window;
  if (view && view.parent && view.parent !== view) {
    view.parent.postMessage(message, view.location.origin);
  }
}

// The signed-in user: {userId, name}.
export function currentUser() {
  return request("GET", "/_basedb/session");
}

// Ends the page session; the next page load shows the sign-in page.
export function signOut() {
  return request("DELETE", "/_basedb/session");
}
