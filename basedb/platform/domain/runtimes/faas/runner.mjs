// A warm FaaS worker for basedb's local platform (basedb/platform/domain/runtimes/faas/).
//
//   node runner.mjs <channel fd>
//
// One worker runs one function of one deployment, one call at a time, for as long as the
// platform keeps it. Protocol, one JSON document per line:
//   stdin (platform -> runner):
//     {"type":"load","module":"/code/index.mjs","env":{…},"egress":"/code/egress.sock"|null}
//     {"type":"call","call":n,"input":…,"context":{caller,site,env,logId,projectId}}
//     {"type":"reply","call":n,"id":k,"ok":true,"value":…}
//     {"type":"reply","call":n,"id":k,"ok":false,"error":{code,message}}
//   channel fd (runner -> platform):
//     {"type":"ready"}                      once, before any site code is loaded
//     {"type":"loaded"}                     the handler module imported
//     {"type":"record","call":n,"id":k,"op":"create","args":[…]}
//     {"type":"result","call":n,"value":…,"quiet":true|false}
//     {"type":"failure","call":n|null,"kind":"…","detail":"…","quiet":false}
//
// The channel is a file descriptor of its own, so nothing the handler prints can be
// mistaken for a message: console.* goes to stderr and stdout is only a log.
//
// Between calls the worker keeps its module state (as cloud FaaS does) and nothing
// else: each call gets a fresh ctx that stops working when the call ends, the work
// directory is emptied, and a call that leaves anything running (a timer, a socket, a
// record call it did not wait for) is reported as not quiet, so that the platform
// retires the worker instead of handing it the next call.

import { Console } from "node:console";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { createInterface } from "node:readline";
import tls from "node:tls";
import { pathToFileURL } from "node:url";

const MAX_DETAIL_CHARS = 16_000;
const MAX_MESSAGE_CHARS = 8 * 1024 * 1024;

const channelFd = Number(process.argv[2]);
const workDir = process.cwd();

// Whatever the handler logs is a log line, never a protocol message.
globalThis.console = new Console({ stdout: process.stderr, stderr: process.stderr });

function writeLine(text) {
  const bytes = Buffer.from(`${text}\n`, "utf8");
  let offset = 0;
  while (offset < bytes.length) {
    offset += fs.writeSync(channelFd, bytes, offset, bytes.length - offset);
  }
}

function send(message) {
  writeLine(JSON.stringify(message));
}

// The function's secret values (the platform's list of those worth hiding): a failure's
// detail shows them as *** before it is cut, since half a value cut at the limit would
// escape the platform's own masking.
let hiddenValues = [];

function describe(error) {
  let text = error instanceof Error ? (error.stack || String(error)) : safeString(error);
  for (const value of hiddenValues) {
    text = text.split(value).join("***");
  }
  return text.slice(0, MAX_DETAIL_CHARS);
}

function safeString(value) {
  try {
    return typeof value === "string" ? value : JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

// Resolves once everything written to `stream` so far has reached the pipe: the log of
// a call must be in the pipe before its result is on the channel.
function flushed(stream) {
  return new Promise((resolve) => {
    if (!stream.writableLength) {
      resolve();
    } else {
      stream.write("", () => resolve());
    }
  });
}

// ---------------------------------------------------------------------- egress

// Outbound HTTP(S) leaves the sandbox only through the platform's egress socket, which
// allows the hosts the function declares (`network.allow`). fetch() is Node's undici:
// its global dispatcher gets a connector that asks the platform for a tunnel (CONNECT)
// and speaks TLS itself, so certificates are checked here, end to end.
function tunnel(socketPath, host, port, callback) {
  const socket = net.connect({ path: socketPath });
  let answer = "";
  const onData = (chunk) => {
    answer += chunk.toString("latin1");
    const end = answer.indexOf("\r\n\r\n");
    if (end < 0) {
      if (answer.length > 8192) socket.destroy(new Error("egress: bad answer"));
      return;
    }
    socket.off("data", onData);
    const status = answer.slice(0, answer.indexOf("\r\n"));
    if (!/^HTTP\/1\.[01] 200 /.test(status)) {
      const reason = answer.slice(answer.indexOf("\r\n") + 2, end).trim();
      const error = new Error(`basedb egress refused ${host}:${port}: ${reason || status}`);
      error.code = "EGRESS_REFUSED";
      socket.destroy();
      callback(error);
      return;
    }
    const rest = Buffer.from(answer.slice(end + 4), "latin1");
    if (rest.length) socket.unshift(rest);
    callback(null, socket);
  };
  socket.on("data", onData);
  socket.once("error", (error) => callback(error));
  socket.once("connect", () => {
    socket.write(`CONNECT ${host}:${port} HTTP/1.1\r\nHost: ${host}:${port}\r\n\r\n`);
  });
}

function secureTunnel(socketPath, host, port, servername, alpn, callback) {
  tunnel(socketPath, host, port, (error, raw) => {
    if (error) return callback(error);
    const secure = tls.connect({ socket: raw, servername: servername || host,
                                 ALPNProtocols: alpn });
    secure.once("secureConnect", () => callback(null, secure));
    secure.once("error", (failure) => callback(failure));
  });
}

async function installEgress(socketPath) {
  await fetch("data:,").catch(() => {});  // makes Node load undici and its global agent
  const key = Symbol.for("undici.globalDispatcher.1");
  const Agent = globalThis[key]?.constructor;
  if (typeof Agent === "function") {
    globalThis[key] = new Agent({
      connect(options, callback) {
        const https = options.protocol === "https:";
        const port = Number(options.port) || (https ? 443 : 80);
        const done = (error, socket) => (error ? callback(error, null) : callback(null, socket));
        if (https) {
          secureTunnel(socketPath, options.hostname, port, options.servername, ["http/1.1"], done);
        } else {
          tunnel(socketPath, options.hostname, port, done);
        }
      },
    });
  }
  const http = (await import("node:http")).default;
  const https = (await import("node:https")).default;
  class TunnelAgent extends http.Agent {
    createConnection(options, callback) {
      tunnel(socketPath, options.host, Number(options.port) || 80, callback);
    }
  }
  class SecureTunnelAgent extends https.Agent {
    createConnection(options, callback) {
      secureTunnel(socketPath, options.host, Number(options.port) || 443, options.servername,
                   undefined, callback);
    }
  }
  http.globalAgent = new TunnelAgent({ keepAlive: false });
  https.globalAgent = new SecureTunnelAgent({ keepAlive: false });
}

// ------------------------------------------------------------------ record routes

/** A record route refused the call; nothing of that call was written. */
class RecordRouteError extends Error {
  constructor(code, message) {
    super(message);
    this.name = "RecordRouteError";
    this.code = code;
  }
}

const pending = new Map();
let nextRecordId = 0;
let activeCall = null;  // the call number being run, or null between calls

function callPlatform(call, op, args) {
  return new Promise((resolve, reject) => {
    if (call !== activeCall) {
      reject(new RecordRouteError("invalid_argument",
        "This ctx belongs to a call that has ended; use the ctx of the current call"));
      return;
    }
    const id = ++nextRecordId;
    const text = JSON.stringify({ type: "record", call, id, op, args });
    if (text.length > MAX_MESSAGE_CHARS) {
      reject(new RecordRouteError("invalid_argument",
        `The ${op} call is larger than ${MAX_MESSAGE_CHARS} characters; split it into smaller calls`));
      return;
    }
    pending.set(id, { resolve, reject, call });
    holdStdin(true);
    writeLine(text);
  });
}

function onReply(reply) {
  const waiting = pending.get(reply.id);
  if (waiting === undefined || waiting.call !== reply.call) {
    return;
  }
  pending.delete(reply.id);
  holdStdin(pending.size > 0 || activeCall === null);
  if (reply.ok) {
    waiting.resolve(reply.value);
  } else {
    const { code, message } = reply.error ?? {};
    waiting.reject(new RecordRouteError(code ?? "internal_error", message ?? "The call failed"));
  }
}

function recordRoutes(call) {
  return Object.freeze({
    create: (table, fields) => callPlatform(call, "create", [table, fields]),
    batchCreate: (table, rows) => callPlatform(call, "batchCreate", [table, rows]),
    update: (table, recordId, fields) => callPlatform(call, "update", [table, recordId, fields]),
    delete: (table, recordId) => callPlatform(call, "delete", [table, recordId]),
    list: (table, options = {}) => callPlatform(call, "list", [table, options]),
    get: (table, recordId) => callPlatform(call, "get", [table, recordId]),
  });
}

// -------------------------------------------------------------------- calls

let handler = null;
let baseline = null;  // the runner's own active resources, by type, when idle

// stdin keeps the worker alive between calls and while a call waits for a record reply;
// otherwise, during a call, only the handler's own work does: a handler whose promise
// can never settle lets the event loop drain, and `beforeExit` reports it.
function holdStdin(hold) {
  if (hold) {
    process.stdin.ref?.();
  } else {
    process.stdin.unref?.();
  }
}

function resourceCounts() {
  const counts = new Map();
  for (const name of process.getActiveResourcesInfo()) {
    counts.set(name, (counts.get(name) ?? 0) + 1);
  }
  return counts;
}

// Whether nothing of the last call is left running: no timer, socket or request beyond
// what the runner itself holds, and no record call still waiting.
function isQuiet() {
  if (pending.size > 0) return false;
  const now = resourceCounts();
  for (const [name, count] of now) {
    if (count > (baseline.get(name) ?? 0)) return false;
  }
  return true;
}

function emptyWorkDir() {
  for (const entry of fs.readdirSync(workDir)) {
    fs.rmSync(path.join(workDir, entry), { recursive: true, force: true });
  }
}

// Ends the current call with `body`, the rest of its last message as JSON text (so that
// a large result is serialized once): the log is flushed first, the work directory
// emptied, and the message says whether the call left anything running.
async function finishCall(call, body) {
  activeCall = null;
  await Promise.all([flushed(process.stdout), flushed(process.stderr)]);
  await new Promise((resolve) => setImmediate(resolve));  // let the call's callbacks run
  let quiet = isQuiet();
  try {
    emptyWorkDir();
  } catch {
    quiet = false;
  }
  let text = `{"call":${call},"quiet":${quiet},${body}}`;
  if (text.length > MAX_MESSAGE_CHARS) {
    text = JSON.stringify({ call, quiet, type: "failure", kind: "too_large",
                            detail: `the result is ${text.length} characters` });
  }
  writeLine(text);
  holdStdin(true);  // idle: wait for the next message
}

function failureBody(kind, error) {
  return `"type":"failure","kind":${JSON.stringify(kind)},"detail":${JSON.stringify(describe(error))}`;
}

async function runCall(message) {
  const { call, input, context } = message;
  if (handler === null || activeCall !== null || !Number.isSafeInteger(call)) {
    send({ type: "failure", call, kind: "protocol", detail: "no handler loaded", quiet: false });
    return;
  }
  activeCall = call;
  holdStdin(false);  // from now on only the handler's own work keeps the worker busy
  const { caller, site, env, logId, projectId } = context;
  const ctx = Object.freeze({
    caller: Object.freeze({ ...caller }),
    site: Object.freeze({ ...site }),
    env,
    logId,
    projectId,
    records: recordRoutes(call),
  });
  let result;
  try {
    result = await handler(input, ctx);
  } catch (error) {
    if (activeCall === call) await finishCall(call, failureBody("exception", error));
    return;
  }
  if (activeCall !== call) return;  // already reported (an uncaught error, a drained loop)
  let text;
  try {
    text = JSON.stringify(result) ?? "null";
  } catch (error) {
    await finishCall(call, failureBody("unserializable", error));
    return;
  }
  await finishCall(call, `"type":"result","value":${text}`);
}

async function load(message) {
  for (const [name, value] of Object.entries(message.env ?? {})) {
    process.env[name] = value;
  }
  hiddenValues = message.hide ?? [];
  let module;
  try {
    if (message.egress) {
      await installEgress(message.egress);
    }
    module = await import(pathToFileURL(message.module).href);
  } catch (error) {
    send({ type: "failure", call: null, kind: "load_error", detail: describe(error), quiet: false });
    return;
  }
  if (typeof module.default !== "function") {
    send({ type: "failure", call: null, kind: "no_default_export",
           detail: "index.mjs has no default export function", quiet: false });
    return;
  }
  handler = module.default;
  send({ type: "loaded" });
}

// An error nothing caught ends the current call (or, between calls, the worker).
function crash(error) {
  if (activeCall !== null) {
    const call = activeCall;
    activeCall = null;
    send({ type: "failure", call, kind: "exception", detail: describe(error), quiet: false });
  } else {
    try {
      fs.writeSync(2, `uncaught between calls: ${describe(error)}\n`);
    } catch {
      // the log pipe is gone: nothing more to say
    }
  }
  process.exit(70);
}
process.on("uncaughtException", crash);
process.on("unhandledRejection", crash);

// The event loop drained while a call was running: its promise can never settle. The
// worker ends; it is not fit for another call.
process.on("beforeExit", () => {
  if (activeCall !== null) {
    const call = activeCall;
    activeCall = null;
    send({ type: "failure", call, kind: "never_settled",
           detail: "the handler's promise can never settle", quiet: false });
  }
});

// Messages are handled one after another, so a call starts only once the handler is
// loaded and the previous call has finished.
let queue = Promise.resolve();
const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
lines.on("line", (line) => {
  let message;
  try {
    message = JSON.parse(line);
  } catch {
    return;
  }
  if (message.type === "reply") {
    onReply(message);
  } else if (message.type === "load") {
    queue = queue.then(() => load(message));
  } else if (message.type === "call") {
    queue = queue.then(() => runCall(message));
  }
});
lines.on("close", () => process.exit(0));

// What the runner itself holds while a call runs (stdin released), before any site code;
// stdout and stderr are made now, or the first call to print would seem to leave a pipe.
void process.stdout;
void process.stderr;
holdStdin(false);
baseline = resourceCounts();
holdStdin(true);
send({ type: "ready" });
