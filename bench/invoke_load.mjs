// Closed-loop HTTP load for the invoke benchmark: N keep-alive connections, each sending
// its next request as soon as the previous answer is read, for a fixed time, or for a
// fixed number of requests.
//
//   node bench/invoke_load.mjs config.json
//
// config.json: {"url", "token", "bodies": [JSON bodies, sent in turn], "concurrency",
//               "warmupSeconds", "seconds"}  (timed: the benchmark)
//          or  {"url", "paths": [paths with query strings, sent in turn], …}: GET
//               requests to a peer (Datasette), a success being any HTTP 200
//          or  {…, "warmupRequests", "requests"}  (counted: every answer to the
//               `requests` measured requests is counted, however long they take, so a
//               slow machine changes the figures, never whether they exist)
// Prints one JSON line: {"completed", "seconds", "perSecond", "p50Ms", "p99Ms",
//                        "failures", "statuses", "sampleFailure"}.
//
// Node rather than Python so that the client spends little CPU per request: the server
// shares the machine with it, and the figure is meant to be the server's.

import fs from 'node:fs';
import http from 'node:http';

const config = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const target = new URL(config.url);
const gets = Array.isArray(config.paths);
const bodies = gets ? config.paths : config.bodies.map((body) => Buffer.from(JSON.stringify(body)));
const agent = new http.Agent({keepAlive: true, maxSockets: config.concurrency});
const headers = (body) => ({
  'Authorization': `Bearer ${config.token}`,
  'Content-Type': 'application/json',
  'Content-Length': body.length,
});

function invoke(body) {
  return new Promise((resolve) => {
    const request = http.request(gets ? {
      host: target.hostname, port: target.port, path: body, method: 'GET', agent,
    } : {
      host: target.hostname, port: target.port, path: target.pathname, method: 'POST',
      agent, headers: headers(body),
    }, (response) => {
      const chunks = [];
      response.on('data', (chunk) => chunks.push(chunk));
      response.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        // A success is HTTP 200 with the envelope's code 0 (the platform writes it first).
        resolve({status: response.statusCode,
                 ok: response.statusCode === 200 && (gets || text.startsWith('{"code":0,')),
                 text});
      });
    });
    request.on('error', (error) => resolve({status: 0, ok: false, text: String(error)}));
    request.end(gets ? undefined : body);
  });
}

const counted = Number.isInteger(config.requests);
const warmupRequests = counted ? (config.warmupRequests ?? 0) : 0;
let issued = 0;
const state = {measuring: false, stopped: false};
const latencies = [];
const statuses = {};
let failures = 0;
let sampleFailure = null;

async function connection(offset) {
  let next = offset;
  while (!state.stopped) {
    let measured = false;
    if (counted) {
      if (issued >= warmupRequests + config.requests) break;
      measured = issued >= warmupRequests;
      issued += 1;
    }
    const body = bodies[next % bodies.length];
    next += config.concurrency;
    const started = process.hrtime.bigint();
    const answer = await invoke(body);
    const elapsed = Number(process.hrtime.bigint() - started) / 1e6;
    if (counted ? !measured : !state.measuring || state.stopped) continue;
    latencies.push(elapsed);
    statuses[answer.status] = (statuses[answer.status] || 0) + 1;
    if (!answer.ok) {
      failures += 1;
      sampleFailure ??= answer.text.slice(0, 300);
    }
  }
}

function percentile(sorted, share) {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.floor(share * sorted.length))];
}

const workers = Array.from({length: config.concurrency}, (_, i) => connection(i));
let seconds;
if (counted) {
  const started = process.hrtime.bigint();
  await Promise.all(workers);
  seconds = Number(process.hrtime.bigint() - started) / 1e9;
} else {
  await new Promise((done) => setTimeout(done, config.warmupSeconds * 1000));
  state.measuring = true;
  const started = process.hrtime.bigint();
  await new Promise((done) => setTimeout(done, config.seconds * 1000));
  state.stopped = true;
  seconds = Number(process.hrtime.bigint() - started) / 1e9;
  await Promise.all(workers);
}
agent.destroy();
latencies.sort((a, b) => a - b);
console.log(JSON.stringify({
  completed: latencies.length, seconds, perSecond: latencies.length / seconds,
  p50Ms: percentile(latencies, 0.5), p99Ms: percentile(latencies, 0.99),
  failures, statuses, sampleFailure,
}));
