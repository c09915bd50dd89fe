#!/usr/bin/env node
// A rate limit across nodes: submits enough sleep tasks of --ms to keep queue --queue (its limit
// --limit tasks per --per-ms, shared by the nodes given, which share one journal) busy for
// --seconds, spread over the nodes, waits for all to succeed, then reads every task's start from the
// journal (its history's claim) and reports the starts per window: per whole window from the
// first start, and the most in any window (sliding, to the microsecond). Exits 1 when a window
// holds more than the limit. Talks to 127.0.0.1 only, bounded in tasks and time, stops by itself.
//
//   node load-tests/rate.mjs --urls http://127.0.0.1:18181,http://127.0.0.1:18182 --queue rated --limit 100
import { parseArgs } from 'node:util';
import { call, localOnly, micros } from './local.mjs';

const { values: o } = parseArgs({ options: {
  urls: { type: 'string', default: 'http://127.0.0.1:18181,http://127.0.0.1:18182' },
  queue: { type: 'string', default: 'rated' },
  limit: { type: 'string', default: '100' },
  'per-ms': { type: 'string', default: '1000' },
  seconds: { type: 'string', default: '60' },
  ms: { type: 'string', default: '10' },
} });
const urls = o.urls.split(',');
urls.forEach(localOnly);
const limit = Number(o.limit), perMs = Number(o['per-ms']), seconds = Number(o.seconds), ms = Number(o.ms);
const windows = Math.round(seconds * 1000 / perMs);
// A few windows' more than the run needs, so that the backlog never runs dry within it.
const total = limit * (windows + 2);
const deadline = Date.now() + (seconds + 120) * 1000;


const batches = [];
for (let i = 0, n = 0; n < total; i++) {
  const size = Math.min(100, total - n);
  const tasks = Array.from({ length: size }, () => ({ type: 'sleep', queue: o.queue, payload: { ms, steps: 1 } }));
  const url = urls[i % urls.length];
  const r = await call(url, 'POST', '/api/batches', { tasks });
  if (r.status !== 202) throw new Error(`submit: ${r.status} ${r.text}`);
  batches.push({ url, id: r.json.batchId, ids: r.json.tasks.map((t) => t.id) });
  n += size;
}
for (const batch of batches) {
  for (;;) {
    const r = await call(batch.url, 'GET', `/api/batches/${batch.id}`);
    const counts = r.json && r.json.counts;
    if (counts && (counts.succeeded || 0) + (counts.failed || 0) + (counts.cancelled || 0) === batch.ids.length) break;
    if (Date.now() > deadline) throw new Error(`timed out waiting for batch ${batch.id}: ${r.text}`);
    await new Promise((ok) => setTimeout(ok, 200));
  }
}

const ids = batches.flatMap((b) => b.ids.map((id) => ({ url: b.url, id })));
const starts = [];
const byNode = new Map();
let failed = 0, next = 0;
await Promise.all(Array.from({ length: 8 }, async () => {
  while (next < ids.length) {
    const { url, id } = ids[next++];
    const task = (await call(url, 'GET', `/api/tasks/${id}`)).json;
    if (task.state !== 'succeeded') failed++;
    for (const e of task.history) {
      if (e.to === 'running') {
        starts.push(micros(e.at));
        const node = (e.workerId || '').split('/')[0];
        byNode.set(node, (byNode.get(node) || 0) + 1);
      }
    }
  }
}));
starts.sort((a, b) => a - b);
const per = perMs * 1000;
// Starts in each whole window from the first, over the run's --seconds.
const counts = new Array(windows).fill(0);
for (const s of starts) {
  const w = Math.floor((s - starts[0]) / per);
  if (w < windows) counts[w]++;
}
// The most starts in any window [s, s + per) that opens at a start.
let most = 0;
for (let i = 0, j = 0; i < starts.length; i++) {
  while (j < starts.length && starts[j] < starts[i] + per) j++;
  most = Math.max(most, j - i);
}
const sorted = [...counts].sort((a, b) => a - b);
const within = counts.filter((c) => Math.abs(c - limit) <= limit * 0.05).length;
console.log(JSON.stringify({
  queue: o.queue, nodes: urls.length, limit, perMs, tasks: total, failed,
  startsPerNode: Object.fromEntries(byNode),
  windows, perWindow: { min: sorted[0], median: sorted[Math.floor(windows / 2)], max: sorted[windows - 1] },
  windowsWithin5Percent: within, mostInAnyWindow: most, counts,
  meanPerSecond: Math.round(counts.reduce((a, b) => a + b, 0) / (windows * perMs / 1000) * 10) / 10,
}));
if (failed > 0 || most > limit) process.exit(1);
