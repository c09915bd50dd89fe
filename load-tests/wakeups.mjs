#!/usr/bin/env node
// Two nodes on one journal: how soon each learns of what the other did. Starts its own PostgreSQL
// (the system's binaries, in a temporary directory, 127.0.0.1 only) and two nodes from
// target/taskline.jar, measures, stops them and removes everything. Five measures, each over
// --events events (default 500), reported as median, p90, p99 and max in ms:
//
//   handover  a task submitted to node A while A's one slot (queue `one`) is busy, node B's idle:
//             from its `submitted` event to its `claimed` one (journal times), and where it ran
//   key       a task of key k submitted to B while A runs k's one allowed task (queue `keyed`,
//             keyConcurrency 1): from the end of A's task to the claim of B's
//   pause     A pauses (or resumes) queue `default`: from A's answer to B's GET /api/queues showing it
//   stream    a stream on B follows a task that runs on A: from each state event's journal time to
//             its arrival on B's stream (running and succeeded; the task is delayed 150 ms so that
//             the stream is open before it starts)
//   revoke    A revokes a key: from A's answer until B refuses the key (401)
//
//   node load-tests/wakeups.mjs [--events 500] [--only handover,key,...] [--pg-port 55460] [--port 18301]
//
// Talks to 127.0.0.1 only, bounded in events and time (each measure stops after --max-s seconds).
import { createHash, randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { Node, Postgres, readEvents, summary, workDir, removeWorkDir } from './cluster.mjs';
import { micros } from './local.mjs';

const { values: o } = parseArgs({ options: {
  events: { type: 'string', default: '500' },
  only: { type: 'string', default: 'handover,key,pause,stream,revoke' },
  'pg-port': { type: 'string', default: '55460' },
  port: { type: 'string', default: '18301' },
  'max-s': { type: 'string', default: '240' },
} });
const events = Number(o.events);
if (!(events >= 1 && events <= 5000)) throw new Error('--events: 1 to 5000');
const only = new Set(o.only.split(','));
const maxMs = Number(o['max-s']) * 1000;
const sleep = (ms) => new Promise((ok) => setTimeout(ok, ms));

const admin = `tl_${randomBytes(24).toString('hex')}`;
const config = {
  queues: {
    default: { slots: 4 },
    one: { slots: 1, claimAhead: 0 },
    keyed: { slots: 4, keyConcurrency: 1 },
  },
  // Every poll that finds a key refused counts as a failed authentication: the measure makes thousands.
  auth: { keys: [{ id: 'ops', hash: `sha256:${createHash('sha256').update(admin).digest('hex')}`, scopes: ['admin'] }],
    maxFailuresPerMinute: 1000000 },
  worker: { progressIntervalMs: 0 },
};
const auth = { Authorization: `Bearer ${admin}` };

const pg = new Postgres(Number(o['pg-port']));
const dir = workDir();
const a = new Node('a', Number(o.port), pg.url, config, dir, {}, auth);
const b = new Node('b', Number(o.port) + 1, pg.url, config, dir, {}, auth);
const results = {};

async function task(node, id) {
  return (await node.call('GET', `/api/tasks/${id}`)).json;
}

async function until(what, fn, timeoutMs = 30000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await sleep(1);
  }
}

const eventAt = (t, reason) => {
  const e = (t.history || []).find((h) => h.reason === reason);
  return e ? micros(e.at) : null;
};
const claimedBy = (t) => ((t.history || []).find((h) => h.reason === 'claimed') || {}).workerId || '';

async function handover() {
  const hold = await a.call('POST', '/api/tasks', { type: 'sleep', queue: 'one', payload: { ms: 600000 } });
  await until('the holding task runs on a', async () => (await task(a, hold.json.id)).state === 'running');
  const lat = [], lat202 = [];
  let onB = 0;
  const stop = Date.now() + maxMs;
  for (let i = 0; i < events && Date.now() < stop; i++) {
    const r = await a.call('POST', '/api/tasks', { type: 'sleep', queue: 'one', payload: { ms: 0 } });
    const done = await until('a handed-over task ends', async () => {
      const t = await task(a, r.json.id);
      return t.state === 'succeeded' ? t : null;
    });
    lat.push((eventAt(done, 'claimed') - eventAt(done, 'submitted')) / 1000);
    lat202.push(eventAt(done, 'claimed') / 1000 - r.at);
    if (claimedBy(done).startsWith(`${b.id}/`)) onB++;
  }
  await a.call('POST', `/api/tasks/${hold.json.id}/cancel`, {});
  return { fromSubmitted: summary(lat), from202: summary(lat202), ranOnB: onB, of: lat.length };
}

async function key() {
  const lat = [];
  let skipped = 0;
  const stop = Date.now() + maxMs;
  for (let i = 0; i < events && Date.now() < stop; i++) {
    const k = `k${i % 8}`;
    const first = await a.call('POST', '/api/tasks', { type: 'sleep', queue: 'keyed', concurrencyKey: k, payload: { ms: 40 } });
    await until('a runs the key\'s task', async () => (await task(a, first.json.id)).state === 'running');
    const second = await b.call('POST', '/api/tasks', { type: 'sleep', queue: 'keyed', concurrencyKey: k, payload: { ms: 0 } });
    const [t1, t2] = await until('both end', async () => {
      const x = await task(a, first.json.id), y = await task(b, second.json.id);
      return x.state === 'succeeded' && y.state === 'succeeded' ? [x, y] : null;
    });
    const freed = eventAt(t1, 'succeeded');
    if (eventAt(t2, 'submitted') >= freed) {
      skipped++; // submitted after the key freed: no wait to measure
      continue;
    }
    lat.push((eventAt(t2, 'claimed') - freed) / 1000);
  }
  return { fromFreed: summary(lat), skipped };
}

async function pause() {
  const paused = async (node) => ((await node.call('GET', '/api/queues')).json.queues.find((q) => q.name === 'default') || {}).paused;
  const pauses = [], resumes = [];
  const stop = Date.now() + maxMs;
  for (let i = 0; i < events && Date.now() < stop; i++) {
    const want = i % 2 === 0;
    const r = await a.call('POST', `/api/queues/default/${want ? 'pause' : 'resume'}`, {});
    if (r.status !== 200) throw new Error(`pause: ${r.status} ${r.text}`);
    await until('b follows', async () => (await paused(b)) === want);
    (want ? pauses : resumes).push(Date.now() - r.at);
  }
  if (await paused(a)) await a.call('POST', '/api/queues/default/resume', {});
  return { pause: summary(pauses), resume: summary(resumes), all: summary([...pauses, ...resumes]) };
}

async function followOne(lags) {
  const r = await a.call('POST', '/api/tasks', { type: 'sleep', payload: { ms: 5 }, delayMs: 150 });
  const ctrl = new AbortController();
  const response = await fetch(`${b.url}/api/tasks/${r.json.id}/events`, { headers: auth, signal: ctrl.signal });
  try {
    await readEvents(response, ({ event, data, receivedAt }) => {
      if (event === 'state' && data) {
        const d = JSON.parse(data);
        if (d.to === 'running' || d.to === 'succeeded') lags.push(receivedAt - micros(d.at) / 1000);
      }
      return event === 'end';
    });
  } finally {
    ctrl.abort();
  }
}

async function stream() {
  const lags = [];
  const stop = Date.now() + maxMs;
  const tasks = Math.ceil(events / 2);
  let next = 0;
  const lane = async () => {
    while (next < tasks && Date.now() < stop) {
      next++;
      await followOne(lags);
    }
  };
  await Promise.all(Array.from({ length: 4 }, lane));
  return { lag: summary(lags) };
}

async function revoke() {
  const lat = [];
  const stop = Date.now() + maxMs;
  for (let i = 0; i < events && Date.now() < stop; i++) {
    const issued = await a.call('POST', '/api/keys', { id: `lt-${Date.now().toString(36)}-${i}`, scopes: ['read'] });
    if (issued.status !== 201) throw new Error(`issue: ${issued.status} ${issued.text}`);
    const key = { Authorization: `Bearer ${issued.json.secret}` };
    await until('b knows the key', async () => (await b.call('GET', '/api/stats', undefined, key)).status === 200);
    const r = await a.call('DELETE', `/api/keys/${issued.json.id}`);
    if (r.status >= 300) throw new Error(`revoke: ${r.status} ${r.text}`);
    await until('b refuses the key', async () => (await b.call('GET', '/api/stats', undefined, key)).status === 401);
    lat.push(Date.now() - r.at);
  }
  return { refusedOnB: summary(lat) };
}

try {
  pg.start();
  await a.start();
  await b.start();
  const measures = { handover, key, pause, stream, revoke };
  for (const name of Object.keys(measures)) {
    if (!only.has(name)) continue;
    const t0 = Date.now();
    results[name] = await measures[name]();
    results[name].seconds = Math.round((Date.now() - t0) / 100) / 10;
    console.error(`${name}: ${JSON.stringify(results[name])}`);
  }
  console.log(JSON.stringify({ events, nodes: [a.id, b.id], results }, null, 1));
} finally {
  await Promise.all([a.stop(), b.stop()]);
  pg.remove();
  removeWorkDir(dir);
}
