#!/usr/bin/env node
// Three nodes on one journal under faults. Starts its own PostgreSQL (the system's binaries, in a
// temporary directory, 127.0.0.1 only) and three nodes from target/taskline.jar; for --seconds
// (default 300) submits --rate tasks a second (a sleep of 0-200 ms) to the three in turn, a flow
// (a chain of three) every second, and keeps a schedule ticking every second; kills (SIGKILL) a
// random node every --kill-every-s (20) and starts it again 5 s later; restarts PostgreSQL itself
// once, in the middle (fast mode: every connection cut). Some tasks are followed by event streams
// on a random node, which move to another node (resuming with Last-Event-ID) when theirs dies.
// Then it waits for everything accepted to end and checks against the journal:
//
//   every accepted task ended exactly once (one terminal event, succeeded), and no lease version of
//   any task was claimed twice (two nodes holding one attempt)
//   every flow child left `blocked` once and ended once
//   every schedule tick made at most one task (and how many ticks were missed while it ran)
//   every followed stream received every one of its task's events, in order, none twice
//
// and prints the figures: accepted, refused (by status), takeovers (lapsed leases put back),
// time to take over (a kill to the re-claim of the tasks it held), stream lag (journal time to
// arrival). Exit code 1 when a check fails. Talks to 127.0.0.1 only, bounded in time.
//
//   node load-tests/kill-loop.mjs [--seconds 300] [--rate 40] [--kill-every-s 20] [--port 18311] [--pg-port 55470]
import { parseArgs } from 'node:util';
import { Node, Postgres, readEvents, summary, workDir, removeWorkDir } from './cluster.mjs';
import { micros } from './local.mjs';

const { values: o } = parseArgs({ options: {
  seconds: { type: 'string', default: '300' },
  rate: { type: 'string', default: '40' },
  'kill-every-s': { type: 'string', default: '20' },
  'follow-every': { type: 'string', default: '20' },
  port: { type: 'string', default: '18311' },
  'pg-port': { type: 'string', default: '55470' },
  'drain-s': { type: 'string', default: '180' },
} });
const seconds = Number(o.seconds), rate = Number(o.rate), killEvery = Number(o['kill-every-s']) * 1000;
if (!(seconds >= 10 && seconds <= 1800)) throw new Error('--seconds: 10 to 1800');
if (!(rate >= 1 && rate <= 500)) throw new Error('--rate: 1 to 500');
const sleep = (ms) => new Promise((ok) => setTimeout(ok, ms));

const config = {
  queues: { default: { slots: 8, leaseMs: 3000, heartbeatMs: 1000, maxAttempts: 10, backoffBaseMs: 100 } },
  recovery: { intervalMs: 500 },
  cluster: { heartbeatMs: 1000 },
  shutdown: { graceMs: 2000 },
};
const pg = new Postgres(Number(o['pg-port']));
const dir = workDir();
const nodes = [0, 1, 2].map((i) => new Node(`n${i}`, Number(o.port) + i, pg.url, config, dir));
const live = () => nodes.filter((n) => n.process && n.process.exitCode === null && n.ready);
const accepted = new Set(), refused = {}, flowChildren = new Set(), kills = [], streams = [];
let pgRestartAt = null;
const restarts = [];

async function start(node) {
  node.ready = false;
  await node.start();
  node.ready = true;
}

function pick() {
  const up = live();
  return up.length ? up[Math.floor(Math.random() * up.length)] : null;
}

async function submitLoop(until) {
  let i = 0;
  const every = 1000 / rate;
  const t0 = Date.now();
  while (Date.now() < until) {
    const node = nodes[i % 3];
    i++;
    const due = t0 + i * every;
    if (due > Date.now()) await sleep(due - Date.now());
    if (!node.ready) { refused.down = (refused.down || 0) + 1; continue; }
    // Every --follow-every'th task runs 2 to 5 s and is followed by a stream: long enough that a
    // kill finds some streams open on the node it kills.
    const followed = i % Number(o['follow-every']) === 0;
    const ms = followed ? 2000 + Math.floor(Math.random() * 3000) : Math.floor(Math.random() * 200);
    node.call('POST', '/api/tasks', { type: 'sleep', payload: { ms } })
      .then((r) => {
        if (r.status === 202) {
          accepted.add(r.json.id);
          if (followed) follow(r.json.id);
        } else refused[r.status] = (refused[r.status] || 0) + 1;
      })
      .catch(() => { refused.error = (refused.error || 0) + 1; });
  }
}

async function flowLoop(until) {
  for (let i = 0; Date.now() < until; i++) {
    await sleep(1000);
    const node = pick();
    if (!node) continue;
    const chain = ['a', 'b', 'c'].map((key) => ({ key, type: 'sleep', payload: { ms: 20 } }));
    node.call('POST', '/api/flows', { name: `kill-loop-${i}`, chain })
      .then((r) => {
        if (r.status === 202) r.json.tasks.forEach((t) => { accepted.add(t.id); flowChildren.add(t.id); });
        else refused[`flow ${r.status}`] = (refused[`flow ${r.status}`] || 0) + 1;
      })
      .catch(() => { refused['flow error'] = (refused['flow error'] || 0) + 1; });
  }
}

/** Follows a task's events on a random live node; moves to another when the stream breaks. */
async function follow(id) {
  // Lag is counted for events journaled after the stream opened; those before it are replayed.
  const s = { id, ids: [], lags: [], moves: 0, openedAt: Date.now() };
  streams.push(s);
  let last = 0; // from the journal's start: every event of the task, to compare with the journal
  for (let attempt = 0; attempt < 50; attempt++) {
    const node = pick();
    if (!node) { await sleep(200); continue; }
    try {
      const response = await fetch(`${node.url}/api/tasks/${id}/events`,
        { headers: { 'Last-Event-ID': String(last) } });
      if (response.status !== 200) { await sleep(200); continue; }
      let ended = false;
      await readEvents(response, ({ event, id: eid, data, receivedAt }) => {
        if (eid !== undefined && event === 'state') {
          s.ids.push(Number(eid));
          last = Number(eid);
          const d = JSON.parse(data);
          if (micros(d.at) / 1000 >= s.openedAt) s.lags.push(receivedAt - micros(d.at) / 1000);
        }
        ended = event === 'end';
        return ended;
      });
      if (ended) { s.ended = true; return; }
    } catch { /* its node died: move */ }
    s.moves++;
    await sleep(100);
  }
}

async function killLoop(until) {
  while (Date.now() + killEvery < until) {
    await sleep(killEvery);
    const node = nodes[Math.floor(Math.random() * 3)];
    if (!node.ready) continue;
    node.ready = false;
    await node.kill();
    kills.push({ node: node.id, at: Date.now() });
    console.error(`killed ${node.name} (${node.id})`);
    restarts.push(sleep(5000).then(() => start(node))
      .then(() => console.error(`restarted ${node.name} as ${node.id}`))
      .catch((e) => console.error(`restart of ${node.name} failed: ${e.message}`)));
  }
}

async function pgRestart(at) {
  await sleep(at - Date.now());
  pgRestartAt = Date.now();
  console.error('restarting PostgreSQL');
  pg.stop('fast');
  await sleep(2000);
  pg.start();
  console.error(`PostgreSQL back after ${Date.now() - pgRestartAt} ms`);
}

const q = (sql) => pg.psql('taskline', sql);
let failed = false;
function check(ok, what) {
  console.error(`${ok ? 'ok  ' : 'FAIL'} ${what}`);
  if (!ok) failed = true;
}

try {
  pg.start();
  for (const n of nodes) await start(n);
  const schedule = await nodes[0].call('POST', '/api/schedules',
    { name: 'kill-loop-tick', every: 'PT1S', task: { type: 'sleep', payload: { ms: 0 } } });
  if (schedule.status !== 201) throw new Error(`schedule: ${schedule.status} ${schedule.text}`);
  const t0 = Date.now(), until = t0 + seconds * 1000;
  await Promise.all([submitLoop(until), flowLoop(until), killLoop(until), pgRestart(t0 + seconds * 500)]);
  await (pick() || nodes[0]).call('DELETE', '/api/schedules/kill-loop-tick');
  // Every node up again before the drain (the restarts under way first, so that no node is started
  // twice): the tasks a killed node held come back through lapsed leases.
  await Promise.allSettled(restarts);
  for (const n of nodes) if (!n.ready && (!n.process || n.process.exitCode !== null)) await start(n).catch(() => {});
  const ids = [...accepted];
  const drainUntil = Date.now() + Number(o['drain-s']) * 1000;
  let open = Infinity;
  while (Date.now() < drainUntil) {
    open = Number(q(`SELECT count(*) FROM tasks WHERE state NOT IN ('succeeded','failed','cancelled','expired')`)[0][0]);
    if (open === 0) break;
    await sleep(1000);
  }
  await sleep(3000); // streams read their last events
  const inList = (xs) => `ARRAY[${xs.map((x) => `'${x}'`).join(',')}]::uuid[]`;
  const chunks = [];
  for (let i = 0; i < ids.length; i += 2000) chunks.push(ids.slice(i, i + 2000));
  let notSucceeded = 0, endsNot1 = 0, missing = 0;
  for (const c of chunks) {
    const rows = q(`SELECT t.id, t.state, (SELECT count(*) FROM task_events e WHERE e.task_id = t.id
        AND e.to_state IN ('succeeded','failed','cancelled','expired')) FROM tasks t WHERE t.id = ANY (${inList(c)})`);
    missing += c.length - rows.length;
    for (const [, state, ends] of rows) {
      if (state !== 'succeeded') notSucceeded++;
      if (Number(ends) !== 1) endsNot1++;
    }
  }
  check(open === 0, `everything accepted ended (${open} still open)`);
  check(missing === 0 && endsNot1 === 0 && notSucceeded === 0,
    `every accepted task (${ids.length}) ended exactly once, succeeded (missing ${missing}, ends != 1: ${endsNot1}, not succeeded ${notSucceeded})`);
  // Fencing: no lease version of a task was claimed twice (two nodes running one attempt at once).
  const doubleClaims = Number(q(`SELECT count(*) FROM (SELECT task_id, lease_version FROM task_events
      WHERE reason = 'claimed' GROUP BY task_id, lease_version HAVING count(*) > 1) x`)[0][0]);
  check(doubleClaims === 0, `no lease version was claimed twice (${doubleClaims} were)`);
  const children = [...flowChildren];
  const unblockedTwice = children.length ? Number(q(`SELECT count(*) FROM (SELECT task_id FROM task_events
      WHERE task_id = ANY (${inList(children)}) AND reason = 'unblocked' GROUP BY task_id HAVING count(*) > 1) x`)[0][0]) : 0;
  check(unblockedTwice === 0, `every flow child (${children.length}) left blocked once (${unblockedTwice} more than once)`);
  const ticks = q(`SELECT count(*), count(DISTINCT scheduled_for), min(scheduled_for), max(scheduled_for) FROM tasks WHERE schedule IS NOT NULL`)[0];
  const tickSpan = ticks[2] ? Math.round((Date.parse(ticks[3]) - Date.parse(ticks[2])) / 1000) + 1 : 0;
  check(ticks[0] === ticks[1], `every schedule tick made one task (${ticks[0]} tasks, ${ticks[1]} ticks; ${tickSpan - Number(ticks[1])} of ${tickSpan} seconds without a tick)`);
  let streamMiss = 0;
  for (const s of streams) {
    const journal = q(`SELECT event_id FROM task_events WHERE task_id = '${s.id}' ORDER BY event_id`).map((r) => Number(r[0]));
    if (JSON.stringify(journal) !== JSON.stringify(s.ids)) streamMiss++;
  }
  check(streamMiss === 0, `every followed stream (${streams.length}, ${streams.reduce((n, s) => n + s.moves, 0)} moves) saw its task's events exactly, in order (${streamMiss} did not)`);
  const takeovers = Number(q(`SELECT count(*) FROM task_events WHERE reason = 'lease_expired'`)[0][0]);
  const takeoverMs = [];
  for (const k of kills) {
    const rows = q(`SELECT extract(epoch FROM min(c.at)) * 1000 FROM task_events e JOIN task_events c ON c.task_id = e.task_id
        AND c.reason = 'claimed' AND c.event_id > e.event_id
      WHERE e.reason = 'lease_expired' AND e.detail->>'previousWorker' LIKE '${k.node}/%' GROUP BY e.task_id`);
    for (const [at] of rows) takeoverMs.push(Number(at) - k.at);
  }
  console.log(JSON.stringify({
    seconds, rate, accepted: ids.length, flowChildren: children.length, refused, kills: kills.length,
    pgRestart: pgRestartAt !== null, takeovers, takeoverMs: summary(takeoverMs),
    streams: streams.length, streamLagMs: summary(streams.flatMap((s) => s.lags)),
    starts: nodes.map((n) => n.starts), failed,
  }, null, 1));
} finally {
  await Promise.all(nodes.map((n) => n.kill()));
  pg.remove();
  removeWorkDir(dir);
}
process.exit(failed ? 1 : 0);
