// basedb page runtime, served at /_basedb/runtime.js.
//
// Pages call the site's published functions as the signed-in user:
//
//   import { invokeDatabaseFunction } from "/_basedb/runtime.js";
//   const data = await invokeDatabaseFunction("listTasks", { status: "Open" });
//
// Every call POSTs {"params": ...} to the function invoke endpoint of the site and the
// environment the page was served from (/sites/<app>/ is prod, /sites/<app>/preview/ is
// preview), on the page's own origin (each site's pages live on a host of their own,
// <app>.localhost), with the page's sign-in cookie and the X-Basedb-Page header that the
// platform requires alongside it; the platform accepts the cookie only for this site and
// only from this origin. A call resolves to the envelope's `data` when `code` is 0 and
// otherwise rejects with a BasedbError carrying code, msg and logId.

const API_PREFIX = "/open-apis/base/v3";
const PAGE_HEADER = "X-Basedb-Page";
const NETWORK_ERROR = -1;

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

// The site and environment of the page at `url` (default: the current page).
export function pageContext(url = globalThis.location?.href) {
  const parsed = new URL(url);
  const match = /^\/sites\/([^/]+)\/(?:(preview)(?:\/|$))?/.exec(parsed.pathname);
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

async function request(method, path, body) {
  const { origin } = pageContext();
  let response;
  try {
    response = await fetch(new URL(path, origin), {
      method,
      credentials: "same-origin",
      headers: {
        Accept: "application/json",
        ...(body === undefined ? {} : { "Content-Type": "application/json" }),
        [PAGE_HEADER]: "1",
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (cause) {
    throw new BasedbError(NETWORK_ERROR, `The platform could not be reached: ${cause.message}`, "");
  }
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

function invoke(functionId, params) {
  if (typeof functionId !== "string" || functionId === "") {
    return Promise.reject(new BasedbError(NETWORK_ERROR, "functionId must be a non-empty string", ""));
  }
  const { appToken, env } = pageContext();
  const path = `${API_PREFIX}/sites/${encodeURIComponent(appToken)}/functions/` +
    `${encodeURIComponent(functionId)}/invoke?env=${env}`;
  return request("POST", path, { params: params ?? {} });
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

// An AI Function of the site, by key.
export function callSiteAIFunction(key, input = {}) {
  return invoke(key, input);
}

// The signed-in user: {userId, name}.
export function currentUser() {
  return request("GET", "/_basedb/session");
}

// Ends the page session; the next page load shows the sign-in page.
export function signOut() {
  return request("DELETE", "/_basedb/session");
}
