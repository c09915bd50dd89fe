#!/usr/bin/env node
// Schedules across nodes: makes --schedules schedules `every: PT1S` (a sleep task of 0 ms each, to
// --queue) through the first node, lets the nodes given (which share one journal) fire them for
// --seconds, deletes them, and reads from the journal what they made: tasks per schedule and tick
// (a duplicate is a tick with more than one task; a missed tick is a whole second between a
// schedule's first and last fired tick with no task), the ticks skipped and why, which node decided
// each tick, any task for a tick after its schedule's delete, and the delay from each tick to its
// task's start (over every tick, and over the steady window's alone). With --pids (the nodes' processes, in the order of --urls) it also reports each
// node's CPU over the steady window, raw and less an idle baseline of the same length measured
// first (or given with --baseline), per wall second and per 1,000 schedules; and each node's
// taskline_schedule_ticks_total (fired, skipped, lost). Exits 1 on a duplicate or a task after a
// delete. Talks to 127.0.0.1 only, bounded in schedules and time, stops by itself and deletes its
// schedules on the way out whatever happened.
//
// The journal is read with psql (--pg, or TASKLINE_PG_URL): a tick's decision (schedule_ticks) is
// not served over HTTP beyond a schedule's last ten, and goes with its schedule when that is
// deleted, so the ticks are read just before the deletes and the tasks (which stay) after them.
//
//   node load-tests/schedules.mjs --urls http://127.0.0.1:18181,http://127.0.0.1:18182 \
//     --schedules 200 --seconds 60 --pids 1234,1235 --pg postgres://user:pass@127.0.0.1:5432/db
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { call, localOnly } from './local.mjs';

const { values: o } = parseArgs({ options: {
  urls: { type: 'string', default: 'http://127.0.0.1:18181,http://127.0.0.1:18182' },
  schedules: { type: 'string', default: '200' },
  seconds: { type: 'string', default: '60' },
  queue: { type: 'string', default: 'default' },
  pids: { type: 'string' },
  pg: { type: 'string', default: process.env.TASKLINE_PG_URL },
  // CPU seconds per wall second of each node at rest, comma-separated in the order of --urls;
  // without it an idle baseline of --baseline-seconds (default --seconds; 0: none) is measured.
  baseline: { type: 'string' },
  'baseline-seconds': { type: 'string' },
  // After the last schedule is made, before the steady window: every node has read them all.
  'settle-s': { type: 'string', default: '3' },
  // After the last delete, before the tasks are read: time for a tick that should not be.
  'after-s': { type: 'string', default: '3' },
  'drain-timeout-s': { type: 'string', default: '60' },
  prefix: { type: 'string' },
} });
const urls = o.urls.split(',');
urls.forEach(localOnly);
const n = Number(o.schedules), seconds = Number(o.seconds), settle = Number(o['settle-s']);
if (!(n >= 1 && n <= 5000)) throw new Error('--schedules: 1 to 5000');
if (!(seconds >= 1 && seconds <= 600)) throw new Error('--seconds: 1 to 600');
const pids = o.pids ? o.pids.split(',').map(Number) : [];
if (pids.length && pids.length !== urls.length) throw new Error('--pids: one per url, in the same order');
const baselineGiven = o.baseline ? o.baseline.split(',').map(Number) : null;
if (baselineGiven && baselineGiven.length !== urls.length) throw new Error('--baseline: one per url');
const baselineSeconds = o['baseline-seconds'] === undefined ? seconds : Number(o['baseline-seconds']);
if (!(baselineSeconds >= 0 && baselineSeconds <= 600)) throw new Error('--baseline-seconds: 0 to 600');
const prefix = o.prefix ?? `lt-${Date.now().toString(36)}`;
if (!/^[a-z0-9-]{1,40}$/.test(prefix)) throw new Error('--prefix: lower-case letters, digits and dashes');
const names = Array.from({ length: n }, (_, i) => `${prefix}-${String(i).padStart(4, '0')}`);
const sleep = (ms) => new Promise((ok) => setTimeout(ok, ms));

// The journal, through psql, on this machine only.
if (!o.pg) throw new Error('--pg postgres://user:pass@127.0.0.1:5432/db (or TASKLINE_PG_URL) is needed to read the journal');
const pgUrl = new URL(o.pg);
if (!/^postgres(ql)?:$/.test(pgUrl.protocol) || !['127.0.0.1', 'localhost'].includes(pgUrl.hostname)) {
  throw new Error('--pg: a postgres:// URL on 127.0.0.1 only');
}
const pgEnv = { ...process.env, PGHOST: pgUrl.hostname, PGPORT: pgUrl.port || '5432',
  PGUSER: decodeURIComponent(pgUrl.username), PGPASSWORD: decodeURIComponent(pgUrl.password),
  PGDATABASE: decodeURIComponent(pgUrl.pathname.slice(1)), PGCONNECT_TIMEOUT: '5' };
/** Rows of one query, as arrays of strings (tab-separated, no header). */
function sql(text) {
  const out = execFileSync('psql', ['-X', '-q', '-A', '-t', '-F', '\t', '-v', 'ON_ERROR_STOP=1', '-c', text],
    { env: pgEnv, encoding: 'utf8', maxBuffer: 1 << 28, timeout: 60000 });
  return out.split('\n').filter((line) => line.length > 0).map((line) => line.split('\t'));
}
const like = `'${prefix}-%'`; // the prefix is [a-z0-9-]: nothing to escape

// CPU time of a process: utime + stime from /proc/<pid>/stat, in seconds.
let clockTicks = 100;
try { clockTicks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100; } catch { /* 100 */ }
function cpuSeconds(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ').pop().split(' ');
  return (Number(fields[11]) + Number(fields[12])) / clockTicks;
}
const cpuNow = () => ({ at: performance.now(), cpu: pids.map(cpuSeconds) });
const perSecond = (a, b) => a.cpu.map((c, i) => (b.cpu[i] - c) / ((b.at - a.at) / 1000));

// taskline_schedule_ticks_total of this run's schedules on each node, summed by outcome.
async function tickMetrics() {
  return Promise.all(urls.map(async (url) => {
    const r = await call(url, 'GET', '/metrics');
    if (r.status !== 200) throw new Error(`${url}/metrics: ${r.status}`);
    const sums = { fired: 0, skipped: 0, lost: 0 };
    for (const line of r.text.split('\n')) {
      const m = line.match(/^taskline_schedule_ticks_total\{([^}]*)\}\s+(\S+)/);
      if (!m) continue;
      const labels = Object.fromEntries([...m[1].matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((x) => [x[1], x[2]]));
      if (labels.schedule && labels.schedule.startsWith(`${prefix}-`)) sums[labels.outcome] = (sums[labels.outcome] || 0) + Number(m[2]);
    }
    return sums;
  }));
}
const minus = (a, b) => Object.fromEntries(Object.keys(a).map((k) => [k, a[k] - (b[k] || 0)]));

/** Runs fn over items, `width` at a time. */
async function each(items, width, fn) {
  let next = 0;
  await Promise.all(Array.from({ length: width }, async () => {
    while (next < items.length) { const i = next++; await fn(items[i], i); }
  }));
}

// Whatever happens from here on, the schedules this run made are deleted before it exits.
const made = new Set();
const deletedAt = new Map(); // name -> ms since the epoch when its 204 came
async function deleteAll() {
  await each([...made], 4, async (name) => {
    const r = await call(urls[0], 'DELETE', `/api/schedules/${name}`);
    if (r.status !== 204 && r.status !== 404) throw new Error(`delete ${name}: ${r.status} ${r.text}`);
    deletedAt.set(name, Date.now());
    made.delete(name);
  });
}
async function cleanUp(why) {
  if (made.size === 0) return;
  console.error(`${why}: deleting the ${made.size} schedules made`);
  try { await deleteAll(); } catch (e) { console.error(`could not delete them all: ${e.message}`); }
}
process.on('SIGINT', async () => { await cleanUp('interrupted'); process.exit(130); });
process.on('SIGTERM', async () => { await cleanUp('terminated'); process.exit(143); });
const budgetS = baselineSeconds + settle + seconds + Number(o['after-s']) + Number(o['drain-timeout-s']) + 120;
const stopAll = setTimeout(async () => { await cleanUp('timed out'); process.exit(2); }, budgetS * 1000);

try {
  await main();
} catch (e) {
  await cleanUp(`failed: ${e.message}`);
  throw e;
} finally {
  clearTimeout(stopAll);
}

async function main() {
  for (const url of urls) {
    const r = await call(url, 'GET', '/health/ready');
    if (r.status !== 200) throw new Error(`${url} is not ready: ${r.status} ${r.text}`);
  }
  pids.forEach(cpuSeconds); // every pid readable before anything is made
  for (const pid of pids) {
    const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
    if (!/java/.test(cmd)) console.error(`pid ${pid} does not look like a node: ${cmd.slice(0, 80)}`);
  }
  const before = (await call(urls[0], 'GET', '/api/schedules')).json.schedules;
  if (before.some((s) => s.name.startsWith(`${prefix}-`))) throw new Error(`schedules named ${prefix}-* exist already`);

  // 1. The idle baseline, before any schedule of this run exists.
  let baseline = baselineGiven, baselineMeasured = null;
  if (!baseline && pids.length && baselineSeconds > 0) {
    const a = cpuNow();
    await sleep(baselineSeconds * 1000);
    baseline = perSecond(a, cpuNow());
    baselineMeasured = baselineSeconds;
  }

  // 2. The schedules, through the first node.
  const task = { type: 'sleep', payload: { ms: 0 }, queue: o.queue };
  const creating = Date.now();
  await each(names, 4, async (name) => {
    const r = await call(urls[0], 'POST', '/api/schedules', { name, every: 'PT1S', task });
    if (r.status !== 201) throw new Error(`create ${name}: ${r.status} ${r.text}`);
    made.add(name);
  });
  const created = Date.now();

  // 3. The steady window: every node has read every schedule, and each tick is one of all of them.
  // It opens and closes half-way between two ticks, so that it holds exactly --seconds of them.
  await sleep(settle * 1000);
  const window0 = (Math.floor(Date.now() / 1000) + 1) * 1000 + 500, window1 = window0 + seconds * 1000;
  await sleep(window0 - Date.now());
  const cpu0 = cpuNow(), metrics0 = await tickMetrics();
  await sleep(window1 - Date.now());
  const cpu1 = cpuNow(), metrics1 = await tickMetrics();

  // 4. The ticks as decided (they go with their schedules), then the deletes.
  const ticks = sql(`SELECT s.name, (extract(epoch FROM s.created_at) * 1e6)::bigint,
                            (extract(epoch FROM t.tick_at) * 1e6)::bigint, t.outcome, coalesce(t.reason, ''),
                            t.ticks, coalesce(t.decided_by, ''), coalesce(t.task_id::text, '')
                       FROM schedules s LEFT JOIN schedule_ticks t ON t.schedule_id = s.id
                      WHERE s.name LIKE ${like}`);
  const deleting0 = Date.now();
  await deleteAll();
  const lastDelete = Math.max(...deletedAt.values());
  const metrics2 = await tickMetrics();

  // 5. Time for a tick that should not come, then every task of the run ended (or the timeout).
  await sleep(Number(o['after-s']) * 1000);
  const drainBy = Date.now() + Number(o['drain-timeout-s']) * 1000;
  let open;
  for (;;) {
    open = Number(sql(`SELECT count(*) FROM tasks WHERE schedule LIKE ${like} AND state IN ('pending', 'running')`)[0][0]);
    if (open === 0 || Date.now() > drainBy) break;
    await sleep(500);
  }
  const tasks = sql(`SELECT schedule, (extract(epoch FROM scheduled_for) * 1e6)::bigint,
                            coalesce((extract(epoch FROM started_at) * 1e6)::bigint, -1),
                            (extract(epoch FROM created_at) * 1e6)::bigint, state, id
                       FROM tasks WHERE schedule LIKE ${like}`);
  const stillThere = Number(sql(`SELECT count(*) FROM schedules WHERE name LIKE ${like}`)[0][0]);

  // 6. What the journal says.
  const bySchedule = new Map(names.map((name) => [name, new Map()])); // name -> tick us -> count
  const states = {};
  const startDelays = [], createDelays = [], windowStartDelays = [];
  const taskIds = new Set();
  let afterDelete = 0, afterLastDelete = 0, inWindow = 0, notStarted = 0, offGrid = 0;
  const afterDeleteSamples = [];
  for (const [name, tick, started, createdUs, state, id] of tasks) {
    const at = Number(tick);
    const perTick = bySchedule.get(name) ?? new Map();
    bySchedule.set(name, perTick);
    perTick.set(at, (perTick.get(at) || 0) + 1);
    states[state] = (states[state] || 0) + 1;
    taskIds.add(id);
    if (at % 1e6 !== 0) offGrid++;
    if (at > (deletedAt.get(name) ?? lastDelete) * 1000) {
      afterDelete++;
      if (afterDeleteSamples.length < 5) afterDeleteSamples.push({ schedule: name, scheduledFor: new Date(at / 1000).toISOString(), id });
    }
    if (at > lastDelete * 1000) afterLastDelete++;
    if (at > window0 * 1000 && at <= window1 * 1000) inWindow++;
    createDelays.push((Number(createdUs) - at) / 1000);
    if (Number(started) < 0) notStarted++;
    else {
      startDelays.push((Number(started) - at) / 1000);
      if (at > window0 * 1000 && at <= window1 * 1000) windowStartDelays.push((Number(started) - at) / 1000);
    }
  }
  const windowTicks = Math.floor(window1 / 1000) - Math.floor(window0 / 1000);

  const createdAtOf = new Map();
  const skippedByReason = {}, firedBy = {};
  let firedRows = 0, firedWithoutTask = 0;
  const ticksSeen = new Map(); // name -> set of tick us fired, as decided
  for (const [name, createdUs, tick, outcome, reason, count, by, taskId] of ticks) {
    createdAtOf.set(name, Number(createdUs));
    if (!tick) continue; // a schedule with no tick decided yet
    if (outcome === 'skipped') skippedByReason[reason] = (skippedByReason[reason] || 0) + Number(count);
    else {
      firedRows++;
      firedBy[by] = (firedBy[by] || 0) + 1;
      if (!taskIds.has(taskId)) firedWithoutTask++;
      if (!ticksSeen.has(name)) ticksSeen.set(name, new Set());
      ticksSeen.get(name).add(Number(tick));
    }
  }

  // Per schedule: the ticks between its first and last task, duplicates, missed (interior), and the
  // ticks owed at the edges (from its creation to its first task; from its last task to a second
  // before its delete was sent) that made no task.
  let duplicates = 0, duplicateTicks = 0, missed = 0, edgeStart = 0, edgeEnd = 0, decidedAfterRead = 0;
  const firedPerSchedule = [], anomalies = [];
  for (const [name, perTick] of bySchedule) {
    const at = [...perTick.keys()].sort((a, b) => a - b);
    let dups = 0, gaps = 0;
    for (const c of perTick.values()) if (c > 1) { dups += c - 1; duplicateTicks++; }
    if (at.length > 0) {
      for (let t = at[0]; t <= at[at.length - 1]; t += 1e6) if (!perTick.has(t)) gaps++;
      const createdUs = createdAtOf.get(name);
      if (createdUs !== undefined) edgeStart += Math.max(0, (at[0] - (Math.floor(createdUs / 1e6) + 1) * 1e6) / 1e6);
      edgeEnd += Math.max(0, Math.floor((deleting0 - 1000) / 1000) - at[at.length - 1] / 1e6);
      const seen = ticksSeen.get(name) ?? new Set();
      for (const t of at) if (!seen.has(t)) decidedAfterRead++;
    }
    duplicates += dups;
    missed += gaps;
    firedPerSchedule.push(perTick.size);
    if ((dups > 0 || gaps > 0 || at.length === 0) && anomalies.length < 10) {
      anomalies.push({ schedule: name, ticks: perTick.size, duplicates: dups, missed: gaps,
        first: at.length ? new Date(at[0] / 1000).toISOString() : null,
        last: at.length ? new Date(at[at.length - 1] / 1000).toISOString() : null });
    }
  }
  firedPerSchedule.sort((a, b) => a - b);

  const ms = (v) => Math.round(v * 100) / 100;
  const pct = (list, p) => {
    if (list.length === 0) return null;
    const sorted = [...list].sort((a, b) => a - b);
    return ms(sorted[Math.min(sorted.length - 1, Math.ceil(p / 100 * sorted.length) - 1)]);
  };
  const spread = (list) => ({ p50: pct(list, 50), p99: pct(list, 99), max: pct(list, 100), min: pct(list, 0.0001), n: list.length });

  const round = (v) => Math.round(v * 10000) / 10000;
  let cpu = null;
  if (pids.length) {
    const raw = perSecond(cpu0, cpu1);
    cpu = {
      windowSeconds: ms((cpu1.at - cpu0.at) / 1000),
      baseline: baseline ? { source: baselineMeasured ? `measured idle, ${baselineMeasured} s` : 'given',
        cpuSecondsPerSecond: baseline.map(round) } : null,
      nodes: urls.map((url, i) => ({
        url, pid: pids[i],
        cpuSecondsPerSecond: round(raw[i]),
        per1000Schedules: round(raw[i] / (n / 1000)),
        ...(baseline ? { lessBaseline: round(raw[i] - baseline[i]), lessBaselinePer1000Schedules: round((raw[i] - baseline[i]) / (n / 1000)) } : {}),
      })),
    };
  }

  const summary = {
    schedules: n, nodes: urls.length, queue: o.queue, prefix, seconds,
    createMs: created - creating, deleteMs: lastDelete - deleting0,
    window: { from: new Date(window0).toISOString(), to: new Date(window1).toISOString(), ticks: windowTicks,
      expectedTasks: windowTicks * n, tasks: inWindow },
    lastDelete: new Date(lastDelete).toISOString(),
    tasks: tasks.length, states, notStarted, openAtEnd: open,
    duplicates, duplicateTicks, missed,
    ownedAtEdgesWithoutTask: { afterCreate: edgeStart, beforeDelete: edgeEnd },
    tasksAfterDelete: afterDelete, tasksAfterLastDelete: afterLastDelete,
    ...(afterDelete ? { tasksAfterDeleteSamples: afterDeleteSamples } : {}),
    ticksOffTheSecond: offGrid,
    ticksPerSchedule: { min: firedPerSchedule[0], median: firedPerSchedule[Math.floor(firedPerSchedule.length / 2)],
      max: firedPerSchedule[firedPerSchedule.length - 1] },
    journalTicks: { firedRows, firedWithoutTask, skippedByReason, decidedBy: firedBy,
      // tasks of ticks decided between that read and their schedule's delete: their decider is not known
      decidedAfterRead },
    tickToStartMs: spread(startDelays),
    tickToStartMsInWindow: spread(windowStartDelays),
    tickToCreateMs: spread(createDelays),
    metrics: urls.map((url, i) => ({ url, window: minus(metrics1[i], metrics0[i]), run: metrics2[i] })),
    cpu,
    schedulesLeft: stillThere,
    ...(anomalies.length ? { anomalies } : {}),
  };
  console.log(JSON.stringify(summary));
  if (duplicates > 0 || afterDelete > 0) process.exitCode = 1;
}
