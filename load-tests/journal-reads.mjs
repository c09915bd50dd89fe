#!/usr/bin/env node
// The reads issue 45 bounds, timed against a node: each list filter of GET /api/tasks (one that
// matches and one that matches nothing), the next page of a filter, a task with its history,
// /api/queues, /api/stats and /metrics. Each read --times times in turn, one at a time, after
// --warmup rounds; prints p50, p99 and max per read as JSON. Run it against a node on an empty
// journal and on one seeded with load-tests/seed-journal.sql, in the same sitting:
//
//   node load-tests/journal-reads.mjs --url http://127.0.0.1:18181 [--times 50] [--warmup 3] [--key KEY]
//
// Talks to 127.0.0.1 only; stops by itself (at most --times of each read, each within 60 s).
import { parseArgs } from 'node:util';

const { values: o } = parseArgs({ options: {
  url: { type: 'string', default: 'http://127.0.0.1:18181' },
  times: { type: 'string', default: '50' },
  warmup: { type: 'string', default: '3' },
  key: { type: 'string' },
} });
if (!/^http:\/\/(127\.0\.0\.1|localhost)(:\d+)?$/.test(o.url)) throw new Error('only 127.0.0.1');
const times = Math.max(1, Math.min(1000, Number(o.times)));
const warmup = Math.max(0, Math.min(100, Number(o.warmup)));
const headers = o.key ? { Authorization: `Bearer ${o.key}` } : {};

async function get(path) {
  const r = await fetch(o.url + path, { headers, signal: AbortSignal.timeout(60_000) });
  const text = await r.text();
  if (r.status !== 200) throw new Error(`${path}: ${r.status} ${text.slice(0, 200)}`);
  return text;
}

// Ids to read: the newest task, and the next page's cursor of the failed ones.
const newest = JSON.parse(await get('/api/tasks?limit=1'));
const items = newest.items ?? newest.tasks ?? [];
const someId = items[0]?.id;
const failedPage = JSON.parse(await get('/api/tasks?state=failed&limit=100'));
const failedNext = failedPage.next ?? null;

const reads = {
  'state=failed': '/api/tasks?state=failed&limit=100',
  ...(failedNext ? { 'state=failed, next page': `/api/tasks?state=failed&limit=100&after=${failedNext}` } : {}),
  'state=cancelled (none)': '/api/tasks?state=cancelled&limit=100',
  'state=succeeded': '/api/tasks?state=succeeded&limit=100',
  'queue=default': '/api/tasks?queue=default&limit=100',
  'queue=nothing-here (none)': '/api/tasks?queue=nothing-here&limit=100',
  'type=type-3': '/api/tasks?type=type-3&limit=100',
  'type=nothing-here (none)': '/api/tasks?type=nothing-here&limit=100',
  'state=failed&type=nothing-here (none)': '/api/tasks?state=failed&type=nothing-here&limit=100',
  'no filter': '/api/tasks?limit=100',
  ...(someId ? { 'a task': `/api/tasks/${someId}`, 'its history': `/api/tasks/${someId}/history` } : {}),
  '/api/queues': '/api/queues',
  '/api/stats': '/api/stats',
  '/metrics': '/metrics',
};

const out = {};
for (const [name, path] of Object.entries(reads)) {
  const ms = [];
  let failed = null;
  for (let i = 0; i < warmup + times && !failed; i++) {
    const t0 = performance.now();
    try {
      await get(path);
    } catch (e) {
      failed = String(e.message ?? e);
      break;
    }
    if (i >= warmup) ms.push(performance.now() - t0);
  }
  ms.sort((a, b) => a - b);
  const at = (q) => +(ms[Math.min(ms.length - 1, Math.floor(q * ms.length))] ?? NaN).toFixed(2);
  out[name] = failed ? { failed } : { n: ms.length, p50: at(0.5), p99: at(0.99), max: +ms.at(-1).toFixed(2) };
  console.error(`${name}: ${JSON.stringify(out[name])}`);
}
console.log(JSON.stringify(out, null, 2));
