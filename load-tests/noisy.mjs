#!/usr/bin/env node
// Noisy neighbour: one tenant floods a queue with --flood tasks (batches of 100, as fast as they are
// accepted; a 429 waits out its Retry-After), while another submits one task a second for
// --seconds. For each of the quiet tenant's tasks, the wait from submission to its start, read from
// the journal (its `running` transition against its creation). Run it against a queue with
// fairTenants on and one with it off to see the difference. Talks to 127.0.0.1 only, bounded in
// tasks and time, stops by itself.
//
//   node load-tests/noisy.mjs --url http://127.0.0.1:18181 --queue fair
//   node load-tests/noisy.mjs --url http://127.0.0.1:18181 --queue fifo
import { parseArgs } from 'node:util';
import { call as callAt, localOnly } from './local.mjs';

const { values: o } = parseArgs({ options: {
  url: { type: 'string', default: 'http://127.0.0.1:18181' },
  queue: { type: 'string', default: 'fair' },
  flood: { type: 'string', default: '50000' },
  seconds: { type: 'string', default: '20' },
  ms: { type: 'string', default: '10' },
  'timeout-s': { type: 'string', default: '300' },
} });
localOnly(o.url);
const flood = Number(o.flood), seconds = Number(o.seconds), ms = Number(o.ms);
const deadline = Date.now() + Number(o['timeout-s']) * 1000;
const run = Math.random().toString(16).slice(2, 8);
const tenants = { flood: `flood-${run}`, quiet: `quiet-${run}` };

const call = (method, path, body, tenant) => callAt(o.url, method, path, body,
  tenant ? { 'Taskline-Tenant': tenant } : {});

const task = () => ({ type: 'sleep', queue: o.queue, payload: { ms, steps: 1 } });
let flooded = 0, refused = 0;
const floodIds = [];
async function flooder() {
  while (flooded < flood && Date.now() < deadline) {
    const n = Math.min(100, flood - flooded);
    const r = await call('POST', '/api/batches', { tasks: Array.from({ length: n }, task) }, tenants.flood);
    if (r.status === 202) {
      flooded += n;
      floodIds.push(r.json.tasks[r.json.tasks.length - 1].id);
    } else if (r.status === 429) {
      refused++;
      await new Promise((ok) => setTimeout(ok, 1000 * Number(r.headers.get('retry-after') || 1)));
    } else {
      throw new Error(`flood: ${r.status}`);
    }
  }
}

const quietIds = [];
async function quiet() {
  // The first one after the flood has a backlog to sit behind.
  while (flooded < Math.min(flood, 5000) && Date.now() < deadline) await new Promise((ok) => setTimeout(ok, 50));
  for (let i = 0; i < seconds && Date.now() < deadline; i++) {
    const t0 = Date.now();
    const r = await call('POST', '/api/tasks', task(), tenants.quiet);
    if (r.status === 202) quietIds.push(r.json.id);
    await new Promise((ok) => setTimeout(ok, Math.max(0, 1000 - (Date.now() - t0))));
  }
}

const started = Date.now();
await Promise.all([flooder(), quiet()]);
const backlog = (await call('GET', '/api/queues')).json.queues.find((q) => q.name === o.queue);

async function startWaitMs(id) {
  for (;;) {
    const t = (await call('GET', `/api/tasks/${id}`)).json;
    const claimed = (t.history || []).find((e) => e.to === 'running');
    if (claimed) return Date.parse(claimed.at) - Date.parse(t.createdAt);
    if (Date.now() > deadline) return null;
    await new Promise((ok) => setTimeout(ok, 200));
  }
}
const waits = [];
for (const id of quietIds) waits.push(await startWaitMs(id));
// The flood's last batch done: the drain's end.
for (const id of floodIds.slice(-1)) await startWaitMs(id);
const done = waits.filter((w) => w !== null).sort((a, b) => a - b);
const at = (p) => done.length ? done[Math.min(done.length - 1, Math.ceil(p * done.length) - 1)] : null;
console.log(JSON.stringify({
  queue: o.queue, flood: flooded, floodRefused429: refused, quietTasks: quietIds.length,
  quietStarted: done.length, quietWaitMs: { p50: at(0.5), p99: at(0.99), max: done[done.length - 1] ?? null },
  waitingWhenQuietEnded: backlog && backlog.waiting, seconds: Math.round((Date.now() - started) / 1000),
}));
