#!/usr/bin/env node
// Holds N claims waiting at once on one node, then stops the node with SIGTERM and checks that
// every claim was answered with an empty list. It starts the node itself (the jar given, on
// 127.0.0.1, a fresh data directory), so the signal goes only to a process it started.
//   node load-tests/long-polls.mjs --jar target/taskline.jar --claims 10000
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

const { values: o } = parseArgs({ options: {
  jar: { type: 'string', default: 'target/taskline.jar' },
  claims: { type: 'string', default: '10000' },
  port: { type: 'string', default: '18191' },
  'timeout-s': { type: 'string', default: '180' },
} });
const n = Number(o.claims);
const dir = mkdtempSync(join(tmpdir(), 'taskline-polls-'));
const node = spawn('java', ['-jar', o.jar], { stdio: ['ignore', 'ignore', 'inherit'], env: { ...process.env,
  TASKLINE_CONFIG: new URL('../conf/bench.json', import.meta.url).pathname, TASKLINE_DATA_DIR: join(dir, 'data'),
  TASKLINE_HTTP_PORT: o.port, TASKLINE_HTTP_HOST: '127.0.0.1' } });
const stopAll = setTimeout(() => { node.kill('SIGKILL'); console.log('timed out'); process.exit(1); },
  Number(o['timeout-s']) * 1000);
const agent = new http.Agent({ keepAlive: false, maxSockets: Infinity });
const get = (path) => new Promise((ok, fail) => http.get({ host: '127.0.0.1', port: o.port, path, agent },
  (r) => { let b = ''; r.on('data', (d) => b += d); r.on('end', () => ok(b)); }).on('error', fail));
for (;;) {
  try { if (JSON.parse(await get('/health/ready')).status === 'UP') break; } catch { /* not up yet */ }
  await new Promise((ok) => setTimeout(ok, 200));
}
const rss = async () => Number((await get('/metrics')).match(/^process_resident_memory_bytes (\S+)/m)?.[1] ?? NaN);
const before = await rss();
let answered = 0; let empty = 0; let errors = 0;
const body = JSON.stringify({ worker: 'poll', max: 1, waitMs: 60000 });
const claims = Array.from({ length: n }, () => new Promise((ok) => {
  const req = http.request({ host: '127.0.0.1', port: o.port, path: '/api/queues/remote-bench/claim', method: 'POST',
    agent, headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) } }, (r) => {
    let b = ''; r.on('data', (d) => b += d);
    r.on('end', () => { answered++; if (r.statusCode === 200 && JSON.parse(b).tasks.length === 0) empty++; else errors++; ok(); });
  });
  req.on('error', () => { errors++; ok(); });
  req.end(body);
}));
const start = Date.now();
// Every claim is parked when the node counts them all waiting (GET /api/workers shows the worker).
await new Promise((ok) => setTimeout(ok, 3000));
const waiting = await rss();
console.log(`${n} claims sent in ${((Date.now() - start) / 1000).toFixed(1)} s; RSS ${(before / 1e6).toFixed(0)} MB before, ${(waiting / 1e6).toFixed(0)} MB with them waiting`);
node.kill('SIGTERM');
await Promise.all(claims);
await new Promise((ok) => node.on('exit', ok));
clearTimeout(stopAll);
rmSync(dir, { recursive: true, force: true });
console.log(`answered ${answered} of ${n}: ${empty} with an empty list, ${errors} otherwise`);
process.exit(empty === n ? 0 : 1);
