#!/usr/bin/env node
// Flows under load, in three phases (--phase chord|chain|many|all, default all), all of no-op
// tasks (`sleep {ms: 0}`) on --queue (bench of conf/bench.json):
//
//   chord  --runs pairs, alternating in order, of (a) a chord of --n members into one `then` and
//          (b) a plain drain of --n tasks submitted as one batch (--plain-batch 100: in batches of
//          100 by 8 submitters, as remote-drain.mjs --mode local does). Per run: the members' drain and the plain one in
//          tasks/s, their ratio, and the fan-in (the last member's finish to the `then`'s handler
//          start); median and p99 over the runs. --warmup-runs pairs first, not counted.
//   chain  --chains chains of --m steps (after --warmup-chains not counted); the hand-off from each
//          step's finish to the next one's handler start: p50, p99, max over a chain's steps, and
//          the median of the chains' p50s and p99s.
//   many   --flows flows of --members members + 1 `then` each, sent at --rate flows/s (default: the
//          queue's plain drain rate, measured in a warm-up of --warmup-tasks, divided by the tasks
//          of a flow) for at most --duration-s, then waited for; flows accepted, refused (429),
//          ended, blocked tasks left over, and with --pid the server's RSS every second.
//
// With --pid (the server's process) each phase also reports the server's CPU time per task.
// Talks to 127.0.0.1 only, bounded in tasks and time (--timeout-s for the whole, then exit 2).
// Prints one JSON line on stdout and a short human summary on stderr.
//
// Clocks. Every time here is this machine's clock, read in three places:
//   - the script's wall clock (performance.timeOrigin + performance.now(), µs): when a drain was
//     submitted (its first POST was sent);
//   - the journal's times (a task's finishedAt and startedAt, a flow's createdAt and finishedAt,
//     history `at`), µs, stamped by the node for the statement that wrote them;
//   - the `sleep` handler's result.startedAt, the node's wall clock when the handler began, µs.
// Drains: script wall clock (submission) -> journal finishedAt (last task). Fan-in and hand-off:
// journal finishedAt (the parent) -> handler result.startedAt (the child), both on the node, with
// the child's journal startedAt (its claim) beside it to split the wait. Flow durations (many):
// journal createdAt -> finishedAt of the flow.
//
//   node load-tests/flows.mjs --phase chord --n 10000 --runs 20 --pid <server pid>
//   node load-tests/flows.mjs --phase chain --m 1000 --pid <server pid>
//   node load-tests/flows.mjs --phase many --flows 10000 --pid <server pid>
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { call, localOnly, micros } from './local.mjs';

const { values: o } = parseArgs({ options: {
  url: { type: 'string', default: 'http://127.0.0.1:18181' },
  phase: { type: 'string', default: 'all' },
  queue: { type: 'string', default: 'bench' },
  // chord
  n: { type: 'string', default: '10000' },
  'plain-batch': { type: 'string' },
  runs: { type: 'string', default: '20' },
  'warmup-runs': { type: 'string', default: '1' },
  // chain
  m: { type: 'string', default: '1000' },
  chains: { type: 'string', default: '3' },
  'warmup-chains': { type: 'string', default: '1' },
  // many
  flows: { type: 'string', default: '10000' },
  members: { type: 'string', default: '5' },
  rate: { type: 'string' },
  'warmup-tasks': { type: 'string', default: '6000' },
  'duration-s': { type: 'string', default: '120' },
  'max-in-flight': { type: 'string', default: '256' },
  // all
  reads: { type: 'string', default: '8' },
  pid: { type: 'string' },
  'timeout-s': { type: 'string', default: '1800' },
} });
const url = localOnly(o.url);
const phases = o.phase === 'all' ? ['chord', 'chain', 'many'] : o.phase.split(',');
for (const p of phases) if (!['chord', 'chain', 'many'].includes(p)) throw new Error(`--phase: chord, chain, many or all (got ${p})`);
const int = (name, min, max) => {
  const v = Number(o[name]);
  if (!Number.isInteger(v) || v < min || v > max) throw new Error(`--${name}: an integer from ${min} to ${max}`);
  return v;
};
const N = int('n', 1, 100000), RUNS = int('runs', 1, 200), WARMUP_RUNS = int('warmup-runs', 0, 20);
const M = int('m', 2, 100000), CHAINS = int('chains', 1, 50), WARMUP_CHAINS = int('warmup-chains', 0, 20);
const F = int('flows', 1, 1000000), MEMBERS = int('members', 1, 1000), WARMUP_TASKS = int('warmup-tasks', 100, 1000000);
const DURATION_S = int('duration-s', 1, 3600), MAX_IN_FLIGHT = int('max-in-flight', 1, 10000), READS = int('reads', 1, 64);
const TIMEOUT_S = int('timeout-s', 10, 86400);
const givenRate = o.rate === undefined ? null : Number(o.rate);
if (givenRate !== null && !(givenRate > 0 && givenRate <= 100000)) throw new Error('--rate: flows/s, above 0, at most 100000');
const pid = o.pid ? Number(o.pid) : null;
const deadline = Date.now() + TIMEOUT_S * 1000;
const watchdog = setTimeout(() => { console.error(`timed out after ${TIMEOUT_S} s (--timeout-s)`); process.exit(2); }, TIMEOUT_S * 1000);

const sleep = (ms) => new Promise((ok) => setTimeout(ok, ms));
const nowUs = () => Math.round((performance.timeOrigin + performance.now()) * 1000);
const noop = { type: 'sleep', queue: o.queue, payload: { ms: 0 } };
const r2 = (v) => (v === null || v === undefined ? null : Math.round(v * 100) / 100);
function pct(list, p) { // nearest rank
  if (list.length === 0) return null;
  const sorted = [...list].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p / 100 * sorted.length) - 1))];
}
const spread = (list) => ({ p50: r2(pct(list, 50)), p99: r2(pct(list, 99)), max: r2(pct(list, 100)), min: r2(pct(list, 0)), n: list.length });
const median = (list) => pct(list, 50);

// The server's CPU time (utime + stime, /proc/<pid>/stat) in ms, and its resident memory in MiB.
let clockTicks = 100;
try { clockTicks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100; } catch { /* 100 */ }
function cpuMs(p = pid) {
  if (!p) return 0;
  const fields = readFileSync(`/proc/${p}/stat`, 'utf8').split(') ').pop().split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 1000 / clockTicks;
}
function rssMiB(p = pid) {
  const line = readFileSync(`/proc/${p}/status`, 'utf8').split('\n').find((l) => l.startsWith('VmRSS:'));
  return Math.round(Number(line.split(/\s+/)[1]) / 1024 * 10) / 10;
}

async function ok(method, path, body, want = 200) {
  const r = await call(url, method, path, body);
  if (r.status !== want) throw new Error(`${method} ${path}: ${r.status} ${r.text.slice(0, 300)}`);
  return r.json;
}
async function finished() {
  const q = (await ok('GET', '/api/queues')).queues.find((x) => x.name === o.queue);
  if (!q) throw new Error(`no queue ${o.queue} on ${url}`);
  return q.finished;
}
/** Waits (polling every 20 ms, as remote-drain.mjs) until the queue has finished `target` tasks. */
async function waitFinished(target, what) {
  for (;;) {
    const f = await finished();
    if (f >= target) return;
    if (Date.now() > deadline) throw new Error(`${what}: timed out with ${target - f} tasks not finished`);
    await sleep(20);
  }
}
/** Runs fn over items, `width` at a time. */
async function each(items, width, fn) {
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, async () => {
    while (next < items.length) { const i = next++; await fn(items[i], i); }
  }));
}
/** The uuid just above `id`, for a page of /api/tasks that starts at `id` itself (after is exclusive). */
function above(id) {
  const hex = (BigInt(`0x${id.replace(/-/g, '')}`) + 1n).toString(16).padStart(32, '0');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
/**
 * The tasks `ids` as the journal has them (finishedAt, startedAt, result). A flow's tasks are
 * made in one statement with ids in a block, so they are read as pages of /api/tasks (newest
 * first, 1,000 a page) from just above the highest; any the pages miss are read one by one.
 */
async function readTasks(ids) {
  const want = new Set(ids), got = new Map();
  const sorted = [...ids].sort();
  let after = above(sorted[sorted.length - 1]);
  let pages = 0;
  while (got.size < want.size && pages < Math.ceil(ids.length / 1000) + 5) {
    const page = await ok('GET', `/api/tasks?queue=${encodeURIComponent(o.queue)}&limit=1000&after=${after}`);
    pages++;
    for (const t of page.tasks) if (want.has(t.id)) got.set(t.id, t);
    if (!page.next || page.tasks.length === 0 || page.tasks[page.tasks.length - 1].id < sorted[0]) break;
    after = page.next;
  }
  const missing = ids.filter((id) => !got.has(id));
  await each(missing, READS, async (id) => { got.set(id, await ok('GET', `/api/tasks/${id}`)); });
  return { tasks: got, pages, oneByOne: missing.length };
}

const out = { url, queue: o.queue, phases };
const lines = [];
if (pid) { cpuMs(); rssMiB(); out.pid = pid; } // readable before anything is sent
const ready = await call(url, 'GET', '/health/ready');
if (ready.status !== 200) throw new Error(`${url} is not ready: ${ready.status} ${ready.text}`);

/**
 * N no-op tasks in batches of --plain-batch (default: one batch of N, all or nothing as a flow is:
 * the issue's "plain batch of 10,000") from 8 submitters; tasks/s from the first POST to the last
 * finish. `--plain-batch 100` gives the drain of many small batches, which starts running the
 * first tasks before the last are journaled.
 */
async function plainDrain(n) {
  const per = Math.min(n, Number(o['plain-batch'] ?? n));
  const before = await finished();
  const cpu0 = cpuMs();
  const batches = [];
  let submitted = 0, refused = 0;
  const t0 = nowUs();
  await Promise.all(Array.from({ length: 8 }, async () => {
    while (submitted < n && Date.now() < deadline) {
      const size = Math.min(per, n - submitted);
      submitted += size;
      const r = await call(url, 'POST', '/api/batches', { tasks: Array.from({ length: size }, () => noop) });
      if (r.status === 202) batches.push(r.json.batchId ?? r.json.id);
      else { submitted -= size; refused++; if (r.status !== 429) throw new Error(`batch: ${r.status} ${r.text.slice(0, 300)}`); await sleep(50); }
    }
  }));
  await waitFinished(before + n, 'plain drain');
  const cpu = cpuMs() - cpu0;
  let last = 0, first = Infinity, done = 0;
  const states = {};
  await each(batches, READS, async (id) => {
    const b = await ok('GET', `/api/batches/${id}`);
    for (const t of b.tasks) {
      states[t.state] = (states[t.state] || 0) + 1;
      if (t.finishedAt) { done++; last = Math.max(last, micros(t.finishedAt)); }
      if (t.startedAt) first = Math.min(first, micros(t.startedAt));
    }
  });
  const seconds = (last - t0) / 1e6;
  return { tasks: n, seconds: r2(seconds), tasksPerSecond: Math.round(n / seconds),
    runningTasksPerSecond: Math.round(n / ((last - first) / 1e6)), refusedBatches: refused,
    states, ...(pid ? { serverCpuMsPerTask: Number((cpu / n).toFixed(4)) } : {}) };
}

/** A chord of n no-op members into a no-op `then`: the members' drain, then the fan-in. */
async function chord(n) {
  const before = await finished();
  const cpu0 = cpuMs();
  const body = { name: 'bench-chord', chord: { group: Array.from({ length: n }, () => noop), then: noop } };
  const t0 = nowUs();
  const r = await call(url, 'POST', '/api/flows', body);
  const acceptMs = (nowUs() - t0) / 1000;
  if (r.status !== 202) throw new Error(`chord of ${n}: ${r.status} ${r.text.slice(0, 300)}`);
  const then = r.json.tasks.find((t) => t.key === 'then');
  const members = r.json.tasks.filter((t) => t.key !== 'then').map((t) => t.id);
  await waitFinished(before + n + 1, `chord ${r.json.flowId}`);
  const cpu = cpuMs() - cpu0;
  const flow = await ok('GET', `/api/flows/${r.json.flowId}`);
  if (flow.state !== 'succeeded') throw new Error(`chord ${r.json.flowId} ended ${flow.state}: ${JSON.stringify(flow.counts)}`);
  const { tasks, pages, oneByOne } = await readTasks(members);
  let last = 0, first = Infinity, lastRan = 0;
  for (const id of members) {
    last = Math.max(last, micros(tasks.get(id).finishedAt));
    first = Math.min(first, micros(tasks.get(id).startedAt));
    const ran = tasks.get(id).result?.startedAt;
    if (ran) lastRan = Math.max(lastRan, micros(ran));
  }
  const t = await ok('GET', `/api/tasks/${then.id}`);
  const unblocked = t.history.find((e) => e.reason === 'unblocked');
  const seconds = (last - t0) / 1e6;
  return {
    flowId: r.json.flowId, tasks: n, acceptMs: r2(acceptMs), seconds: r2(seconds), tasksPerSecond: Math.round(n / seconds),
    // the first member's claim (journal startedAt) -> the last member's finish: the drain alone
    runningTasksPerSecond: Math.round(n / ((last - first) / 1e6)),
    // journal finishedAt of the last member -> the then's handler start (node wall clock)
    fanInMs: r2((micros(t.result.startedAt) - last) / 1000),
    // ... -> the then's claim (journal startedAt), and the then's unblocking (history) beside it
    fanInClaimMs: r2((micros(t.startedAt) - last) / 1000),
    unblockedMinusLastFinishMs: unblocked ? r2((micros(unblocked.at) - last) / 1000) : null,
    // The last member's handler (a no-op: its start is its end) -> the then's handler start. The
    // journal's finishedAt is stamped as the end's statement goes out: a group that waits for a lock
    // another statement holds (ends of one flow meet on its row) counts the wait after the stamp,
    // one that waits for a statement to land counts it before. This counts both.
    fanInFromHandlerMs: lastRan ? r2((micros(t.result.startedAt) - lastRan) / 1000) : null,
    reads: { pages, oneByOne },
    ...(pid ? { serverCpuMsPerTask: Number((cpu / (n + 1)).toFixed(4)) } : {}),
  };
}

async function chordPhase() {
  const pair = async (i) => {
    const chordFirst = i % 2 === 0;
    const a = chordFirst ? await chord(N) : await plainDrain(N);
    await sleep(500);
    const b = chordFirst ? await plainDrain(N) : await chord(N);
    await sleep(500);
    const [c, p] = chordFirst ? [a, b] : [b, a];
    return { first: chordFirst ? 'chord' : 'plain', chord: c, plain: p, ratio: r2(c.tasksPerSecond / p.tasksPerSecond),
      runningRatio: r2(c.runningTasksPerSecond / p.runningTasksPerSecond) };
  };
  for (let i = 0; i < WARMUP_RUNS; i++) {
    const w = await pair(i);
    console.error(`chord warm-up ${i + 1}/${WARMUP_RUNS}: chord ${w.chord.tasksPerSecond}/s, plain ${w.plain.tasksPerSecond}/s, fan-in ${w.chord.fanInMs} ms (not counted)`);
  }
  const runs = [];
  for (let i = 0; i < RUNS; i++) {
    const p = await pair(i);
    runs.push(p);
    console.error(`chord run ${i + 1}/${RUNS} (${p.first} first): chord ${p.chord.tasksPerSecond}/s, plain ${p.plain.tasksPerSecond}/s (${p.ratio}x; from the first start ${p.chord.runningTasksPerSecond}/s vs ${p.plain.runningTasksPerSecond}/s, ${p.runningRatio}x), fan-in ${p.chord.fanInMs} ms (claim ${p.chord.fanInClaimMs} ms; from the last member's handler ${p.chord.fanInFromHandlerMs} ms)`);
  }
  const fanIn = runs.map((x) => x.chord.fanInMs);
  const chordTps = runs.map((x) => x.chord.tasksPerSecond), plainTps = runs.map((x) => x.plain.tasksPerSecond);
  const ratios = runs.map((x) => x.ratio);
  const s = {
    n: N, runs: RUNS, warmupRuns: WARMUP_RUNS,
    perRun: runs.map((x) => ({ first: x.first, chordTps: x.chord.tasksPerSecond, plainTps: x.plain.tasksPerSecond, ratio: x.ratio,
      fanInMs: x.chord.fanInMs, fanInClaimMs: x.chord.fanInClaimMs, fanInFromHandlerMs: x.chord.fanInFromHandlerMs, unblockedMinusLastFinishMs: x.chord.unblockedMinusLastFinishMs,
      chordRunningTps: x.chord.runningTasksPerSecond, plainRunningTps: x.plain.runningTasksPerSecond, runningRatio: x.runningRatio,
      chordAcceptMs: x.chord.acceptMs, chordSeconds: x.chord.seconds, plainSeconds: x.plain.seconds,
      ...(pid ? { chordCpuMsPerTask: x.chord.serverCpuMsPerTask, plainCpuMsPerTask: x.plain.serverCpuMsPerTask } : {}) })),
    fanInMs: spread(fanIn),
    fanInClaimMs: spread(runs.map((x) => x.chord.fanInClaimMs)),
    fanInFromHandlerMs: spread(runs.map((x) => x.chord.fanInFromHandlerMs ?? NaN).filter((x) => !Number.isNaN(x))),
    chordTasksPerSecond: { median: median(chordTps), min: Math.min(...chordTps), max: Math.max(...chordTps) },
    plainTasksPerSecond: { median: median(plainTps), min: Math.min(...plainTps), max: Math.max(...plainTps) },
    ratioOfMedians: r2(median(chordTps) / median(plainTps)),
    ratioPerRun: { median: median(ratios), min: Math.min(...ratios), max: Math.max(...ratios) },
    // The same from each drain's first start (the submission left out: a flow journals its
    // edges and keys beside its tasks, which a batch has not).
    runningRatioOfMedians: r2(median(runs.map((x) => x.chord.runningTasksPerSecond))
      / median(runs.map((x) => x.plain.runningTasksPerSecond))),
    ...(pid ? { serverCpuMsPerTask: { chordMedian: median(runs.map((x) => x.chord.serverCpuMsPerTask)),
      plainMedian: median(runs.map((x) => x.plain.serverCpuMsPerTask)) } } : {}),
  };
  s.targets = { fanInP99AtMost50Ms: s.fanInMs.p99 <= 50, drainRatioAtLeast0_9: s.ratioOfMedians >= 0.9 };
  lines.push(`chord of ${N}, ${RUNS} runs: fan-in p50 ${s.fanInMs.p50} ms, p99 ${s.fanInMs.p99} ms (target <= 50: ${s.targets.fanInP99AtMost50Ms ? 'met' : 'NOT met'}); ` +
    `members ${s.chordTasksPerSecond.median}/s vs plain ${s.plainTasksPerSecond.median}/s = ${s.ratioOfMedians}x (target >= 0.9: ${s.targets.drainRatioAtLeast0_9 ? 'met' : 'NOT met'}); ` +
    `from the first start ${s.runningRatioOfMedians}x`);
  return s;
}

async function chainOnce() {
  const before = await finished();
  const cpu0 = cpuMs();
  const t0 = nowUs();
  const r = await call(url, 'POST', '/api/flows', { name: 'bench-chain', chain: Array.from({ length: M }, () => noop) });
  if (r.status !== 202) throw new Error(`chain of ${M}: ${r.status} ${r.text.slice(0, 300)}`);
  const steps = [...r.json.tasks].sort((a, b) => Number(a.key) - Number(b.key)).map((t) => t.id);
  await waitFinished(before + M, `chain ${r.json.flowId}`);
  const cpu = cpuMs() - cpu0;
  const flow = await ok('GET', `/api/flows/${r.json.flowId}`);
  if (flow.state !== 'succeeded') throw new Error(`chain ${r.json.flowId} ended ${flow.state}: ${JSON.stringify(flow.counts)}`);
  const { tasks, pages, oneByOne } = await readTasks(steps);
  const handoff = [], toClaim = [], claimToHandler = [];
  for (let k = 0; k + 1 < steps.length; k++) {
    const a = tasks.get(steps[k]), b = tasks.get(steps[k + 1]);
    const fin = micros(a.finishedAt);
    handoff.push((micros(b.result.startedAt) - fin) / 1000);
    toClaim.push((micros(b.startedAt) - fin) / 1000);
    claimToHandler.push((micros(b.result.startedAt) - micros(b.startedAt)) / 1000);
  }
  const lastFinish = micros(tasks.get(steps[steps.length - 1]).finishedAt);
  const s = {
    m: M, flowId: r.json.flowId, seconds: r2((lastFinish - t0) / 1e6),
    handoffMs: spread(handoff), finishToClaimMs: spread(toClaim), claimToHandlerMs: spread(claimToHandler),
    slowest: handoff.map((v, k) => ({ step: k + 1, ms: r2(v) })).sort((a, b) => b.ms - a.ms).slice(0, 5),
    reads: { pages, oneByOne },
    ...(pid ? { serverCpuMsPerTask: Number((cpu / M).toFixed(4)) } : {}),
  };
  return s;
}

/**
 * --warmup-chains chains first, not counted (a fresh server's first chain runs its hand-off path
 * before the JIT compiled it), then --chains chains: each one's hand-off spread, and the median
 * of their p50s and of their p99s against the targets.
 */
async function chainPhase() {
  for (let i = 0; i < WARMUP_CHAINS; i++) {
    const w = await chainOnce();
    console.error(`chain warm-up ${i + 1}/${WARMUP_CHAINS}: hand-off p50 ${w.handoffMs.p50} ms, p99 ${w.handoffMs.p99} ms (not counted)`);
    await sleep(500);
  }
  const chains = [];
  for (let i = 0; i < CHAINS; i++) {
    const c = await chainOnce();
    chains.push(c);
    console.error(`chain ${i + 1}/${CHAINS}: hand-off p50 ${c.handoffMs.p50} ms, p99 ${c.handoffMs.p99} ms, max ${c.handoffMs.max} ms; ` +
      `finish -> claim p50 ${c.finishToClaimMs.p50} ms, claim -> handler p50 ${c.claimToHandlerMs.p50} ms`);
    await sleep(500);
  }
  const s = {
    m: M, chains: CHAINS, warmupChains: WARMUP_CHAINS, perChain: chains,
    handoffP50Ms: r2(median(chains.map((c) => c.handoffMs.p50))),
    handoffP99Ms: r2(median(chains.map((c) => c.handoffMs.p99))),
  };
  s.targets = { p50AtMost3Ms: s.handoffP50Ms <= 3, p99AtMost15Ms: s.handoffP99Ms <= 15 };
  lines.push(`chain of ${M}, ${CHAINS} chains: hand-off p50 ${s.handoffP50Ms} ms, p99 ${s.handoffP99Ms} ms (medians over the chains; ` +
    `targets 3 / 15: ${s.targets.p50AtMost3Ms && s.targets.p99AtMost15Ms ? 'met' : 'NOT met'})`);
  return s;
}

async function manyPhase() {
  const perFlow = MEMBERS + 1;
  let rate = givenRate, warmup = null;
  if (rate === null) {
    warmup = await plainDrain(WARMUP_TASKS);
    rate = Math.max(1, Math.round(warmup.tasksPerSecond / perFlow));
    await sleep(500);
  }
  const name = `bench-many-${Date.now().toString(36)}`;
  const body = JSON.stringify({ name, chord: { group: Array.from({ length: MEMBERS }, () => noop), then: noop } });
  const rss = [];
  const sample = () => { if (pid) rss.push(rssMiB()); };
  sample();
  const sampler = setInterval(sample, 1000);
  const before = await finished();
  const cpu0 = cpuMs();
  const statuses = {}, errors = [], answerMs = [];
  let sent = 0, inFlight = 0, accepted = 0, refused = 0, heldBack = 0;
  const start = performance.now(), stopAt = start + DURATION_S * 1000;
  const sends = [];
  const send = async () => {
    inFlight++;
    const a = performance.now();
    try {
      const r = await fetch(`${url}/api/flows`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body });
      const text = await r.text();
      answerMs.push(performance.now() - a);
      statuses[r.status] = (statuses[r.status] || 0) + 1;
      if (r.status === 202) accepted++;
      else if (r.status === 429) refused++;
      else if (errors.length < 5) errors.push(`${r.status} ${text.slice(0, 200)}`);
    } catch (e) {
      statuses.error = (statuses.error || 0) + 1;
      if (errors.length < 5) errors.push(e.message);
    } finally { inFlight--; }
  };
  // Open model: flow i is due at start + i / rate; at most --max-in-flight answers awaited at once
  // (a flow due while that many wait is sent late, and counted in heldBack).
  while (sent < F && performance.now() < stopAt && Date.now() < deadline) {
    const due = Math.min(F, Math.floor((performance.now() - start) / 1000 * rate) + 1);
    while (sent < due && inFlight < MAX_IN_FLIGHT) { sends.push(send()); sent++; }
    if (sent < due) heldBack = Math.max(heldBack, due - sent);
    await sleep(2);
  }
  const sendSeconds = (performance.now() - start) / 1000;
  await Promise.all(sends);
  // Every flow accepted ends: none of this run's left running (polled every 250 ms).
  let running = null;
  for (;;) {
    const page = await ok('GET', `/api/flows?state=running&name=${encodeURIComponent(name)}&limit=1`);
    running = page.flows.length;
    if (running === 0 || Date.now() > deadline) break;
    await sleep(250);
  }
  const endedSeconds = (performance.now() - start) / 1000;
  const cpu = cpuMs() - cpu0;
  const ran = (await finished()) - before;
  clearInterval(sampler);
  sample();
  // This run's flows, page by page: their states and durations (journal createdAt -> finishedAt).
  const states = {}, durations = [];
  let listed = 0, after = null;
  for (;;) {
    const page = await ok('GET', `/api/flows?name=${encodeURIComponent(name)}&limit=1000${after ? `&after=${after}` : ''}`);
    for (const f of page.flows) {
      listed++;
      states[f.state] = (states[f.state] || 0) + 1;
      if (f.finishedAt) durations.push((micros(f.finishedAt) - micros(f.createdAt)) / 1000);
    }
    if (!page.next || Date.now() > deadline) break;
    after = page.next;
  }
  const blocked = await call(url, 'GET', '/api/tasks?state=blocked&limit=1000');
  const blockedLeft = blocked.status === 200 ? blocked.json.tasks.length : null;
  const s = {
    flows: F, tasksPerFlow: perFlow, rate, rateSource: givenRate === null ? 'plain warm-up' : '--rate',
    ...(warmup ? { warmup: { tasks: warmup.tasks, tasksPerSecond: warmup.tasksPerSecond } } : {}),
    sent, sendSeconds: r2(sendSeconds), sentPerSecond: r2(sent / sendSeconds), heldBackMax: heldBack,
    accepted, refused429: refused, statuses, ...(errors.length ? { errors } : {}),
    answerMs: spread(answerMs),
    endedSeconds: r2(endedSeconds), runningLeft: running, listed, states,
    allEnded: running === 0 && listed === accepted && (states.succeeded || 0) + (states.failed || 0) + (states.cancelled || 0) === accepted,
    flowMs: spread(durations), tasksRan: ran,
    blockedLeft: blocked.status === 200 ? blockedLeft : `GET /api/tasks?state=blocked: ${blocked.status} ${blocked.text.slice(0, 200)}`,
    ...(pid ? { serverCpuMsPerTask: Number((cpu / Math.max(1, ran)).toFixed(4)),
      rssMiB: { first: rss[0], max: Math.max(...rss), last: rss[rss.length - 1], samples: rss } } : { rssMiB: 'needs --pid' }),
  };
  lines.push(`many: ${sent} flows of ${perFlow} sent at ${rate}/s (${s.sentPerSecond}/s achieved): ${accepted} accepted, ${refused} refused (429), ` +
    `${Object.entries(states).map(([k, v]) => `${v} ${k}`).join(', ') || 'none listed'}, ${running} running left, blocked tasks left: ${s.blockedLeft}` +
    (pid ? `; RSS ${s.rssMiB.first} -> max ${s.rssMiB.max} -> ${s.rssMiB.last} MiB` : ''));
  return s;
}

try {
  for (const p of phases) {
    if (p === 'chord') out.chord = await chordPhase();
    if (p === 'chain') out.chain = await chainPhase();
    if (p === 'many') out.many = await manyPhase();
  }
} finally {
  clearTimeout(watchdog);
}
console.log(JSON.stringify(out));
for (const l of lines) console.error(l);
if (pid) for (const p of phases) if (out[p]?.serverCpuMsPerTask !== undefined) console.error(`${p}: server CPU per task ${JSON.stringify(out[p].serverCpuMsPerTask)} ms`);
