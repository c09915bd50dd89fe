#!/usr/bin/env node
// Two tenants under load: each submits batches with its own key while it lists its tasks, reads
// the other's ids and follows its own batches, and no answer may show it the other's tasks.
// Needs a node with keys and an admin key in TASKLINE_API_KEY (it issues the two tenant keys
// through /api/keys and revokes them at the end). Talks to 127.0.0.1 only, stops by itself.
//
//   TASKLINE_API_KEY=tl_… node load-tests/tenants.mjs --tasks 5000
import { parseArgs } from 'node:util';
import { randomBytes } from 'node:crypto';

const { values: o } = parseArgs({ options: {
  url: { type: 'string', default: 'http://127.0.0.1:18181' },
  tasks: { type: 'string', default: '5000' },
  'timeout-s': { type: 'string', default: '120' },
} });
if (!/^http:\/\/(127\.0\.0\.1|localhost)(:\d+)?$/.test(o.url)) throw new Error('only 127.0.0.1');
const admin = process.env.TASKLINE_API_KEY;
if (!admin) throw new Error('TASKLINE_API_KEY must hold an admin key');
const perTenant = Number(o.tasks);
const deadline = Date.now() + Number(o['timeout-s']) * 1000;

async function call(key, method, path, body) {
  const headers = { Authorization: `Bearer ${key}` };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const r = await fetch(o.url + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await r.text();
  return { status: r.status, json: text && text[0] === '{' ? JSON.parse(text) : null, text };
}

const run = randomBytes(4).toString('hex');
const tenants = [];
for (const name of ['a', 'b']) {
  const issued = await call(admin, 'POST', '/api/keys', { id: `tenants-${name}-${run}`, tenant: `t-${name}-${run}`,
    scopes: ['submit', 'read'] });
  if (issued.status !== 201) throw new Error(`issue a key: ${issued.status} ${issued.text}`);
  tenants.push({ name: issued.json.tenant, id: issued.json.id, key: issued.json.secret, ids: new Set(), batches: [],
    submitted: 0, lists: 0, listed: 0, crossReads: 0, streams: 0 });
}
const [a, b] = tenants;
const foreign = [];

async function submitter(t) {
  while (t.submitted < perTenant && Date.now() < deadline) {
    const n = Math.min(50, perTenant - t.submitted);
    t.submitted += n;
    const r = await call(t.key, 'POST', '/api/batches',
      { tasks: Array.from({ length: n }, () => ({ type: 'sleep', payload: { ms: 0 } })) });
    if (r.status !== 202) { t.submitted -= n; await new Promise((ok) => setTimeout(ok, 50)); continue; }
    for (const task of r.json.tasks) t.ids.add(task.id);
    t.batches.push({ id: r.json.batchId, eventsUrl: r.json.eventsUrl });
  }
}

async function watcher(t, other) {
  while ((a.submitted < perTenant || b.submitted < perTenant) && Date.now() < deadline) {
    const page = await call(t.key, 'GET', '/api/tasks?limit=100');
    t.lists++;
    for (const task of page.json.tasks) {
      t.listed++;
      if (task.tenant !== t.name || other.ids.has(task.id)) foreign.push(`${t.name} listed ${task.id} of ${task.tenant}`);
    }
    const theirs = [...other.ids].slice(-1)[0];
    if (theirs) {
      const read = await call(t.key, 'GET', `/api/tasks/${theirs}`);
      t.crossReads++;
      if (read.status !== 404) foreign.push(`${t.name} read ${theirs}: ${read.status}`);
    }
    const mine = t.batches[t.batches.length - 1];
    if (mine) {
      // The eventsUrl's token opens its own batch's stream, without a key.
      const stream = await fetch(o.url + mine.eventsUrl, { signal: AbortSignal.timeout(5000) }).catch((e) => e);
      if (stream instanceof Error || stream.status !== 200) foreign.push(`${t.name} own stream: ${stream.status || stream}`);
      else { t.streams++; await stream.body.cancel(); }
      const theirBatch = other.batches[other.batches.length - 1];
      if (theirBatch) {
        const peek = await call(t.key, 'GET', `/api/batches/${theirBatch.id}/events`);
        if (peek.status !== 404) foreign.push(`${t.name} opened ${theirBatch.id}'s stream: ${peek.status}`);
      }
    }
  }
}

const started = Date.now();
await Promise.all([submitter(a), submitter(a), submitter(b), submitter(b), watcher(a, b), watcher(b, a)]);
const stats = {};
for (const t of tenants) stats[t.name] = (await call(t.key, 'GET', '/api/stats')).json.accepted;
for (const t of tenants) await call(admin, 'DELETE', `/api/keys/${t.id}`);
const summary = { seconds: Number(((Date.now() - started) / 1000).toFixed(1)),
  tenants: tenants.map((t) => ({ tenant: t.name, submitted: t.ids.size, acceptedInStats: stats[t.name], lists: t.lists,
    tasksListed: t.listed, crossReads: t.crossReads, ownStreams: t.streams })), foreign: foreign.slice(0, 10) };
console.log(JSON.stringify(summary));
const countsRight = tenants.every((t) => stats[t.name] === t.ids.size);
process.exit(foreign.length === 0 && countsRight ? 0 : 1);
