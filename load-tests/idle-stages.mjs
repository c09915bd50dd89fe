#!/usr/bin/env node
// The idle start, stage by stage: --count single no-op tasks (`sleep {ms: 0}`) sent --spacing-ms
// apart to an idle queue, after --warmup sent the same way and not counted, then idle --idle-ms.
// Per task, from the client's clock (the same machine's as the node's): send -> 202, and send ->
// the handler's start (the `startedAt` the sleep handler writes in its result). From the node's
// histograms (`/metrics`, read before and after the measured tasks, so only they count): the
// accept (request -> 202), the insert statement (round trip and commit), and due -> handler start
// (for a task journaled claimed at admission: from its insert's stamp). Histogram figures are the
// upper bounds of Micrometer's buckets ("<=").
//
//   node load-tests/idle-stages.mjs --url http://127.0.0.1:18181 --queue slots10 [--count 500] [--warmup 2000]
//
// Talks to 127.0.0.1 only; stops by itself (--timeout-s).
import { parseArgs } from 'node:util';
import { performance } from 'node:perf_hooks';

const { values: o } = parseArgs({ options: {
  url: { type: 'string', default: 'http://127.0.0.1:18181' },
  queue: { type: 'string', default: 'slots10' },
  count: { type: 'string', default: '500' },
  warmup: { type: 'string', default: '2000' },
  'spacing-ms': { type: 'string', default: '5' },
  'idle-ms': { type: 'string', default: '2000' },
  'timeout-s': { type: 'string', default: '120' },
} });
const base = new URL(o.url);
if (base.hostname !== '127.0.0.1' && base.hostname !== 'localhost') throw new Error('127.0.0.1 only');
const count = Math.min(20_000, Number(o.count));
const warmup = Math.min(100_000, Number(o.warmup));
const spacing = Math.max(1, Math.min(1000, Number(o['spacing-ms'])));
const deadline = Date.now() + Math.min(3600, Number(o['timeout-s'])) * 1000;
setTimeout(() => { console.error('timed out'); process.exit(2); }, deadline - Date.now()).unref();

const wall = () => performance.timeOrigin + performance.now(); // ms, sub-millisecond
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
async function call(method, path, body) {
  const res = await fetch(new URL(path, base), {
    method, headers: body ? { 'content-type': 'application/json' } : {}, body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  return { status: res.status, text };
}
const task = { queue: o.queue, type: 'sleep', payload: { ms: 0 } };

// ---- the node's histograms: cumulative bucket counts by upper bound, for one series
function buckets(text, name, labels) {
  const out = new Map();
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}_bucket{`)) continue;
    const labelText = line.slice(line.indexOf('{') + 1, line.lastIndexOf('}'));
    if (!labels.every((l) => labelText.includes(l))) continue;
    const le = /le="([^"]+)"/.exec(labelText)[1];
    out.set(le === '+Inf' ? Infinity : Number(le), Number(line.slice(line.lastIndexOf(' ') + 1)));
  }
  return out;
}
function quantilesOf(before, after, qs) {
  const bounds = [...after.keys()].sort((a, b) => a - b);
  const counts = bounds.map((b) => after.get(b) - (before.get(b) ?? 0));
  const total = counts.at(-1) ?? 0;
  const res = { n: total };
  for (const q of qs) {
    const rank = Math.ceil(q * total);
    const i = counts.findIndex((c) => c >= rank);
    res[`p${q * 100}`] = total === 0 || i < 0 ? null : bounds[i] === Infinity ? 'inf' : +(bounds[i] * 1000).toFixed(2);
  }
  return res;
}
const nearest = (sorted, q) => sorted.length ? +sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)].toFixed(2) : null;
const summary = (xs) => { const s = [...xs].sort((a, b) => a - b); return { n: s.length, p50: nearest(s, 0.5), p90: nearest(s, 0.9), p99: nearest(s, 0.99), max: nearest(s, 1) }; };

async function send(record) {
  const sent = wall();
  const r = await call('POST', '/api/tasks', task);
  const accepted = wall();
  if (r.status !== 202) throw new Error(`submit answered ${r.status}: ${r.text}`);
  const id = JSON.parse(r.text).id;
  if (record) record.push({ id, sent, accepted });
}
async function probe(n, record) {
  const pending = [];
  for (let i = 0; i < n; i++) {
    pending.push(send(record));
    await sleep(spacing);
  }
  await Promise.all(pending);
}

const series = {
  accept: ['taskline_accept_latency_seconds', []],
  insert: ['taskline_journal_write_seconds', ['statement="insert_tasks"']],
  dueToStart: ['taskline_task_wait_seconds', [`queue="${o.queue}"`]],
};
await probe(warmup, null);
await sleep(Number(o['idle-ms']));
const before = (await call('GET', '/metrics')).text;
const sent = [];
await probe(count, sent);
// Every task ran: read each back for its handler's start.
const startDelays = [];
for (const s of sent) {
  for (;;) {
    const t = JSON.parse((await call('GET', `/api/tasks/${s.id}`)).text);
    if (t.state === 'succeeded') {
      const started = Date.parse(t.result.startedAt) + Number((/\.\d{3}(\d{3})/.exec(t.result.startedAt) ?? [0, '0'])[1]) / 1000;
      startDelays.push(started - s.sent);
      break;
    }
    if (['failed', 'cancelled', 'expired'].includes(t.state)) throw new Error(`task ${s.id} ${t.state}`);
    await sleep(5);
  }
}
const after = (await call('GET', '/metrics')).text;
const result = {
  queue: o.queue, count, warmup, spacingMs: spacing,
  sendToStartMs: summary(startDelays),
  sendTo202Ms: summary(sent.map((s) => s.accepted - s.sent)),
  node: Object.fromEntries(Object.entries(series).map(([k, [name, labels]]) =>
    [k, quantilesOf(buckets(before, name, labels), buckets(after, name, labels), [0.5, 0.9, 0.99])])),
};
console.log(JSON.stringify(result));
