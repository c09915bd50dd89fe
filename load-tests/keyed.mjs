#!/usr/bin/env node
// Keyed concurrency across nodes: submits --tasks sleep tasks of --ms over --keys concurrency keys,
// spread over the nodes given (which share one journal), waits for all to succeed, then reads every
// task's history and checks, from the journal's own timestamps, that no key ever had more tasks
// running (claimed, not yet ended) than the bound given with --bound. Prints the drain's rate, so
// that a queue with a key bound can be set beside one without (--queue). Talks to 127.0.0.1 only,
// bounded in tasks and time, stops by itself.
//
//   node load-tests/keyed.mjs --urls http://127.0.0.1:18181,http://127.0.0.1:18182 --queue keyed --bound 2
//   node load-tests/keyed.mjs --urls http://127.0.0.1:18181,http://127.0.0.1:18182 --queue unkeyed
import { parseArgs } from 'node:util';
import { call, localOnly, micros } from './local.mjs';

const { values: o } = parseArgs({ options: {
  urls: { type: 'string', default: 'http://127.0.0.1:18181,http://127.0.0.1:18182' },
  queue: { type: 'string', default: 'keyed' },
  tasks: { type: 'string', default: '1000' },
  keys: { type: 'string', default: '10' },
  ms: { type: 'string', default: '50' },
  bound: { type: 'string', default: '0' },
  'timeout-s': { type: 'string', default: '300' },
} });
const urls = o.urls.split(',');
urls.forEach(localOnly);
const total = Number(o.tasks), keys = Number(o.keys), ms = Number(o.ms), bound = Number(o.bound);
const deadline = Date.now() + Number(o['timeout-s']) * 1000;


// Batches of 50, the nodes in turn, the keys in turn within each batch.
const batches = [];
const started = performance.now();
for (let i = 0, n = 0; n < total; i++) {
  const size = Math.min(50, total - n);
  const tasks = Array.from({ length: size }, (_, j) => ({ type: 'sleep', queue: o.queue, payload: { ms, steps: 1 },
    concurrencyKey: `key-${(n + j) % keys}` }));
  const url = urls[i % urls.length];
  const r = await call(url, 'POST', '/api/batches', { tasks });
  if (r.status !== 202) {
    if (Date.now() > deadline) throw new Error('timed out submitting');
    await new Promise((ok) => setTimeout(ok, 100));
    i--;
    continue;
  }
  batches.push({ url, id: r.json.batchId, ids: r.json.tasks.map((t) => t.id) });
  n += size;
}
const submitted = performance.now();
for (const batch of batches) {
  for (;;) {
    const r = await call(batch.url, 'GET', `/api/batches/${batch.id}`);
    const counts = r.json && r.json.counts;
    if (counts && (counts.succeeded || 0) + (counts.failed || 0) + (counts.cancelled || 0) === batch.ids.length) break;
    if (Date.now() > deadline) throw new Error(`timed out waiting for batch ${batch.id}: ${r.text}`);
    await new Promise((ok) => setTimeout(ok, 20));
  }
}
const drained = performance.now();

// Every task's attempts as [claimed, ended) intervals on the journal's clock, per key.
const ids = batches.flatMap((b) => b.ids.map((id) => ({ url: b.url, id })));
const byKey = new Map();
let failed = 0, attempts = 0;
let next = 0;
await Promise.all(Array.from({ length: 8 }, async () => {
  while (next < ids.length) {
    const { url, id } = ids[next++];
    const task = (await call(url, 'GET', `/api/tasks/${id}`)).json;
    if (task.state !== 'succeeded') failed++;
    let since = null;
    for (const e of task.history) {
      if (e.to === 'running') since = micros(e.at);
      else if (e.from === 'running' && since !== null) {
        const end = micros(e.at);
        if (!byKey.has(task.concurrencyKey)) byKey.set(task.concurrencyKey, []);
        byKey.get(task.concurrencyKey).push([since, end]);
        attempts++;
        since = null;
      }
    }
  }
}));

// The most intervals of one key open at once: ends sort before starts at the same microsecond, as
// the journal's end of one attempt and another's claim may share a timestamp only in that order.
let worst = 0, worstKey = null;
for (const [key, spans] of byKey) {
  const points = spans.flatMap(([s, e]) => [[s, 1], [e, -1]]).sort((x, y) => x[0] - y[0] || x[1] - y[1]);
  let open = 0, most = 0;
  for (const [, d] of points) { open += d; most = Math.max(most, open); }
  if (most > worst) { worst = most; worstKey = key; }
}
const seconds = (drained - started) / 1000;
console.log(JSON.stringify({
  queue: o.queue, nodes: urls.length, tasks: total, keys, ms, attempts, failed,
  submitMs: Math.round(submitted - started), drainMs: Math.round(drained - started),
  tasksPerSecond: Math.round(total / seconds),
  mostRunningOfOneKey: worst, key: worstKey,
  ...(bound > 0 ? { bound, held: worst <= bound } : {}),
}));
if (failed > 0 || (bound > 0 && worst > bound)) process.exit(1);
