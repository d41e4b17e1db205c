// Runs one FaaS handler for basedb's local platform (basedb/platform/domain/runtimes/faas/__init__.py).
//
//   node runner.mjs <handler.mjs> <channel fd>
//
// Protocol, one JSON document per line:
//   stdin (platform -> runner):  {"type":"start","input":…,"context":{caller,site,env,logId}}
//                                {"type":"reply","id":n,"ok":true,"value":…}
//                                {"type":"reply","id":n,"ok":false,"error":{code,message}}
//   channel fd (runner -> platform):
//                                {"type":"call","id":n,"op":"create","args":[…]}
//                                {"type":"result","value":<what the handler returned>}
//                                {"type":"failure","kind":"…","detail":"…"}
//
// The channel is a file descriptor of its own, so nothing the handler prints can be
// mistaken for a message: console.* goes to stderr and stdout is only a log.

import { Console } from "node:console";
import { writeSync } from "node:fs";
import { createInterface } from "node:readline";
import { pathToFileURL } from "node:url";

const MAX_DETAIL_CHARS = 16_000;
const MAX_RESULT_CHARS = 8 * 1024 * 1024;

const [handlerPath, channelArg] = process.argv.slice(2);
const channelFd = Number(channelArg);

// Whatever the handler logs is a log line, never a protocol message.
globalThis.console = new Console({ stdout: process.stderr, stderr: process.stderr });

function writeLine(text) {
  const bytes = Buffer.from(`${text}\n`, "utf8");
  let offset = 0;
  while (offset < bytes.length) {
    offset += writeSync(channelFd, bytes, offset, bytes.length - offset);
  }
}

function describe(error) {
  const text = error instanceof Error ? (error.stack || String(error)) : safeString(error);
  return text.slice(0, MAX_DETAIL_CHARS);
}

function safeString(value) {
  try {
    return typeof value === "string" ? value : JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

let finished = false;

// Resolves once everything written to `stream` so far has reached the pipe: writes to
// a full pipe are queued, and process.exit() would drop them.
function flushed(stream) {
  return new Promise((resolve) => {
    if (!stream.writableLength) {
      resolve();
    } else {
      stream.write("", () => resolve());
    }
  });
}

// The last message of a run; the process ends right after it, its log flushed first.
async function finish(text) {
  if (finished) {
    return;
  }
  finished = true;
  await Promise.all([flushed(process.stdout), flushed(process.stderr)]);
  writeLine(text);
  process.exit(0);
}

function fail(kind, error) {
  finish(JSON.stringify({ type: "failure", kind, detail: describe(error) }));
}

process.on("uncaughtException", (error) => fail("exception", error));
process.on("unhandledRejection", (error) => fail("exception", error));

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
let nextCallId = 0;

// stdin keeps the process alive only while a record call waits for its reply, so a
// handler whose promise can never settle ends the process instead of hanging.
function holdStdin(hold) {
  if (hold) {
    process.stdin.ref?.();
  } else {
    process.stdin.unref?.();
  }
}

function callPlatform(op, args) {
  return new Promise((resolve, reject) => {
    const id = ++nextCallId;
    const message = { type: "call", id, op, args };
    const text = JSON.stringify(message);
    if (text.length > MAX_RESULT_CHARS) {
      reject(new RecordRouteError("invalid_argument",
        `The ${op} call is larger than ${MAX_RESULT_CHARS} characters; split it into smaller calls`));
      return;
    }
    pending.set(id, { resolve, reject });
    holdStdin(true);
    writeLine(text);
  });
}

function onReply(reply) {
  const waiting = pending.get(reply.id);
  if (waiting === undefined) {
    return;
  }
  pending.delete(reply.id);
  if (pending.size === 0) {
    holdStdin(false);
  }
  if (reply.ok) {
    waiting.resolve(reply.value);
  } else {
    const { code, message } = reply.error ?? {};
    waiting.reject(new RecordRouteError(code ?? "internal_error", message ?? "The call failed"));
  }
}

function recordRoutes() {
  return Object.freeze({
    create: (table, fields) => callPlatform("create", [table, fields]),
    batchCreate: (table, rows) => callPlatform("batchCreate", [table, rows]),
    update: (table, recordId, fields) => callPlatform("update", [table, recordId, fields]),
    delete: (table, recordId) => callPlatform("delete", [table, recordId]),
    list: (table, options = {}) => callPlatform("list", [table, options]),
    get: (table, recordId) => callPlatform("get", [table, recordId]),
  });
}

// ------------------------------------------------------------------------- main

async function run(start) {
  let module;
  try {
    module = await import(pathToFileURL(handlerPath).href);
  } catch (error) {
    fail("load_error", error);
    return;
  }
  if (typeof module.default !== "function") {
    fail("no_default_export", "index.mjs has no default export function");
    return;
  }
  const { caller, site, env, logId } = start.context;
  const ctx = Object.freeze({
    caller: Object.freeze({ ...caller }),
    site: Object.freeze({ ...site }),
    env,
    logId,
    records: recordRoutes(),
  });
  let result;
  try {
    result = await module.default(start.input, ctx);
  } catch (error) {
    fail("exception", error);
    return;
  }
  let text;
  try {
    text = JSON.stringify({ type: "result", value: result });
  } catch (error) {
    fail("unserializable", error);
    return;
  }
  if (text.length > MAX_RESULT_CHARS) {
    fail("too_large", `the result is ${text.length} characters`);
    return;
  }
  finish(text);
}

const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
let started = false;
lines.on("line", (line) => {
  let message;
  try {
    message = JSON.parse(line);
  } catch {
    return;
  }
  if (!started && message.type === "start") {
    started = true;
    holdStdin(false);
    run(message);
  } else if (message.type === "reply") {
    onReply(message);
  }
});
