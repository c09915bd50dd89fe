#!/usr/bin/env node
// Durable steps under load, against one node with a remote queue (--queue, `durable-bench`), in
// phases chosen with --phases (default all five, in this order):
//
//   sleepers  --n tasks (100,000) submitted in batches, claimed by --workers remote workers and
//             each ended suspended for an hour (`suspend: {step: "nap", sleepMs: 3600000}`):
//             through the batch complete route if the node takes `suspend` there, else one by one
//             (--concurrency at once, keep-alive). Then the node's RSS (VmRSS), CPU (utime + stime
//             of the node, and of the embedded PostgreSQL: its postmaster, which pg_ctl starts
//             outside the node's process tree, its backends, and any descendant of the node) and heap in use
//             (jvm_memory_used_bytes{area="heap"} of the metrics) over --sample-s, against the
//             same taken before the first submission (the idle baseline): ratios.
//   wake      --m tasks (1,000) claimed and held, then all suspended until one instant --lead-s (5)
//             ahead; --workers long-poll claims take them back as resumes (their `steps` hold the
//             sleep's step): lateness (claim answer - until) p50 / p99 / max, and the instant to
//             the last resume (target: all within 1 s). Then, on the idle node, --single (200)
//             tasks one after another, each sleeping --single-sleep-ms (200): lateness p50 / p99.
//   signals   --k tasks (500) suspended waiting for the signal `go`, then each sent its signal
//             (--signal-rate a second); the signal's 202 -> the worker's claim answer holding the
//             task resumed with its step done: p50 / p99.
//   steps     --t tasks (2,000) of --step-count (10) no-op steps each (POST steps/{name} x 10,
//             then complete), against 10 x --t plain tasks (claim + complete), each drained by
//             --workers workers handling their tasks one at a time: tasks/s, steps/s, and the ratio
//             of the two wall times. --steps-warmup tasks (and 10 x as many plain) first, not timed.
//   events    --rate x --seconds tasks (2,000 x 60) suspended waiting for the event `order.paid`
//             whose data.orderId is their own id; then --rate events a second for --seconds, each
//             for one of them (open model: planned send times, at most --max-in-flight answers
//             awaited; sending stops at --seconds), while --workers workers resume them: sent/s,
//             delivered/s, and the lag from an event's 202 to its task's resumed claim per
//             --window-s (10) window of send times, p50 / p99, to show whether it grows.
//
// Every phase uses task types of its own (`<prefix>-<phase>`) and claims only those, so phases and
// runs do not take each other's tasks. Waits for signals and events carry a timeout of --timeout-s,
// so none waits for ever if a run is cut short; the sleepers of the first phase stay suspended for
// their hour (or --sleep-ms) unless --cancel-sleepers. Talks to 127.0.0.1 only, bounded in tasks
// and time (--timeout-s for the whole run, then exit 2), prints one JSON line on stdout and a short
// summary on stderr. Exit 1 when a phase failed or the node answered against the protocol.
//
//   node load-tests/durable.mjs --url http://127.0.0.1:18181 --pid <node pid>
//   node load-tests/durable.mjs --phases=wake,signals --m 200 --k 100
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import http from 'node:http';
import { parseArgs } from 'node:util';
import { localOnly, micros } from './local.mjs';

const HELP = `node load-tests/durable.mjs [options]

Durable steps under load against one running node with a remote queue. Phases (--phases=a,b,...):
  sleepers  N tasks suspended for an hour; the node's RSS, CPU (its own and PostgreSQL's) and
            heap over --sample-s, against an idle baseline taken first (needs --pid for RSS/CPU)
  wake      M tasks suspended until one instant; lateness of their resumes; then single sleeps
  signals   K tasks waiting for a signal; signal 202 -> resumed claim, p50/p99
  steps     T tasks of 10 steps against 10 x T plain tasks, same --workers: rates and wall ratio
  events    R events/s for S s, each to one waiting task; sent/s, delivered/s, lag per window

Options (default):
  --url URL               the node, 127.0.0.1 only (http://127.0.0.1:8080)
  --queue Q               a remote queue (durable-bench)
  --phases LIST           sleepers,wake,signals,steps,events (all)
  --pid PID               the node's process: RSS and CPU from /proc (sleepers); without it, heap only
  --pg-pid PID            the embedded PostgreSQL's postmaster (found by the port the node is
                          connected to; pg_ctl starts it outside the node's process tree)
  --workers W             remote workers, each a claim loop (8)
  --claim-max N           most tasks per claim, 1-1000 (250)
  --wait-ms MS            a claim's long poll (1000)
  --batch N               tasks per submission (POST /api/batches), at most the node's
                          http.maxBatchSize (100)
  --submitters N          submission loops (8)
  --concurrency N         one-by-one writes in flight at once, when the batch route refuses
                          suspend (32)
  --timeout-s S           the whole run, then exit 2 (1800)
  --stall-s S             a phase with no progress for this long fails (60)
  --metrics-path P        Prometheus text (/metrics; /api/metrics is tried when it is 404)
  sleepers: --n (100000), --sleep-ms (3600000), --sample-s (30), --settle-s (5),
            --heap-every-s (5), --cancel-sleepers (off: cancel them at the end, one by one)
  wake:     --m (1000, at most the queue's slots: they are held claimed until suspended together),
            --lead-s (5), --single (200), --single-sleep-ms (200), --single-warmup (20)
  signals:  --k (500), --signal-rate (100 a second)
  steps:    --t (2000), --step-count (10), --steps-claim (10 tasks a claim), --steps-warmup (200)
  events:   --rate (2000 a second), --seconds (60), --max-in-flight (256), --drain-s (30),
            --window-s (10)
  --prefix P              task types' prefix (dur-<time>)
  --help                  this text

Prints one JSON line on stdout and a summary on stderr; exit 0, 1 (a phase failed or the node
answered against the protocol), 2 (bad options, --timeout-s).
`;

let o;
try {
  ({ values: o } = parseArgs({ options: {
    help: { type: 'boolean', default: false },
    url: { type: 'string', default: 'http://127.0.0.1:8080' },
    queue: { type: 'string', default: 'durable-bench' },
    phases: { type: 'string', default: 'sleepers,wake,signals,steps,events' },
    pid: { type: 'string' },
    'pg-pid': { type: 'string' },
    workers: { type: 'string', default: '8' },
    'claim-max': { type: 'string', default: '250' },
    'wait-ms': { type: 'string', default: '1000' },
    batch: { type: 'string', default: '100' },
    submitters: { type: 'string', default: '8' },
    concurrency: { type: 'string', default: '32' },
    'timeout-s': { type: 'string', default: '1800' },
    'stall-s': { type: 'string', default: '60' },
    'metrics-path': { type: 'string', default: '/metrics' },
    prefix: { type: 'string' },
    // sleepers
    n: { type: 'string', default: '100000' },
    'sleep-ms': { type: 'string', default: '3600000' },
    'sample-s': { type: 'string', default: '30' },
    'settle-s': { type: 'string', default: '5' },
    'heap-every-s': { type: 'string', default: '5' },
    'cancel-sleepers': { type: 'boolean', default: false },
    // wake
    m: { type: 'string', default: '1000' },
    'lead-s': { type: 'string', default: '5' },
    single: { type: 'string', default: '200' },
    'single-sleep-ms': { type: 'string', default: '200' },
    'single-warmup': { type: 'string', default: '20' },
    // signals
    k: { type: 'string', default: '500' },
    'signal-rate': { type: 'string', default: '100' },
    // steps
    t: { type: 'string', default: '2000' },
    'step-count': { type: 'string', default: '10' },
    'steps-claim': { type: 'string', default: '10' },
    'steps-warmup': { type: 'string', default: '200' },
    // events
    rate: { type: 'string', default: '2000' },
    seconds: { type: 'string', default: '60' },
    'max-in-flight': { type: 'string', default: '256' },
    'drain-s': { type: 'string', default: '30' },
    'window-s': { type: 'string', default: '10' },
  } }));
} catch (e) {
  console.error(`${e.message}\n\n${HELP}`);
  process.exit(2);
}
if (o.help) { process.stdout.write(HELP); process.exit(0); }

function bad(message) { console.error(`${message} (--help for the options)`); process.exit(2); }
let url;
try { url = localOnly(o.url); } catch (e) { bad(e.message); }
const ALL = ['sleepers', 'wake', 'signals', 'steps', 'events'];
const phases = o.phases === 'all' ? ALL : o.phases.split(',').map((s) => s.trim()).filter(Boolean);
for (const p of phases) if (!ALL.includes(p)) bad(`--phases: some of ${ALL.join(', ')} (got ${p})`);
const int = (name, min, max) => {
  const v = Number(o[name]);
  if (!Number.isInteger(v) || v < min || v > max) bad(`--${name}: an integer from ${min} to ${max}`);
  return v;
};
const Q = o.queue;
if (!/^[A-Za-z0-9._:-]{1,128}$/.test(Q)) bad('--queue: a queue name');
const W = int('workers', 1, 256), CLAIM_MAX = int('claim-max', 1, 1000), WAIT_MS = int('wait-ms', 0, 60000);
const BATCH = int('batch', 1, 10000), SUBMITTERS = int('submitters', 1, 64), CONC = int('concurrency', 1, 1024);
const TIMEOUT_S = int('timeout-s', 10, 86400), STALL_S = int('stall-s', 5, 3600);
const N = int('n', 1, 1000000), SLEEP_MS = int('sleep-ms', 1000, 7 * 86400000), SAMPLE_S = int('sample-s', 1, 600);
const SETTLE_S = int('settle-s', 0, 600), HEAP_EVERY_S = int('heap-every-s', 1, 60);
const M = int('m', 1, 100000), LEAD_S = int('lead-s', 1, 600), SINGLE = int('single', 0, 10000);
const SINGLE_SLEEP_MS = int('single-sleep-ms', 1, 60000), SINGLE_WARMUP = int('single-warmup', 0, 1000);
const K = int('k', 1, 100000), SIGNAL_RATE = int('signal-rate', 1, 100000);
const T = int('t', 1, 100000), STEP_COUNT = int('step-count', 1, 1000), STEPS_CLAIM = int('steps-claim', 1, 1000);
const STEPS_WARMUP = int('steps-warmup', 0, 100000);
const RATE = int('rate', 1, 50000), SECONDS = int('seconds', 1, 3600), MAX_IN_FLIGHT = int('max-in-flight', 1, 10000);
const DRAIN_S = int('drain-s', 0, 3600), WINDOW_S = int('window-s', 1, 3600);
if (RATE * SECONDS > 2000000) bad('--rate x --seconds: at most 2,000,000 tasks');
const pid = o.pid === undefined ? null : Number(o.pid);
if (pid !== null && !(Number.isInteger(pid) && pid > 0)) bad('--pid: a process id');
if (o['pg-pid'] !== undefined && !(Number.isInteger(Number(o['pg-pid'])) && Number(o['pg-pid']) > 0)) bad('--pg-pid: a process id');
const prefix = o.prefix ?? `dur-${Date.now().toString(36)}`;
if (!/^[A-Za-z0-9._:-]{1,80}$/.test(prefix)) bad('--prefix: letters, digits, ".", "_", ":", "-"');

const deadline = Date.now() + TIMEOUT_S * 1000;
const watchdog = setTimeout(() => {
  console.error(`timed out after ${TIMEOUT_S} s (--timeout-s)`);
  console.log(JSON.stringify({ ...out, timedOut: true }));
  process.exit(2);
}, TIMEOUT_S * 1000);

// ---- time, numbers --------------------------------------------------------------------------
const sleep = (ms) => new Promise((ok) => setTimeout(ok, Math.max(0, ms)));
/** This machine's wall clock in ms (fractional), monotonic within the run. */
const nowMs = () => performance.timeOrigin + performance.now();
const isoMs = (at) => micros(at) / 1000;
const r2 = (v) => (v === null || v === undefined || !Number.isFinite(v) ? null : Math.round(v * 100) / 100);
function pct(sorted, p) { // nearest rank, of a sorted list
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p / 100 * sorted.length) - 1))];
}
function spread(list) {
  const s = Float64Array.from(list).sort();
  return { p50: r2(pct(s, 50)), p90: r2(pct(s, 90)), p99: r2(pct(s, 99)), max: r2(pct(s, 100)), min: r2(pct(s, 0)), n: s.length };
}
const median = (list) => pct(Float64Array.from(list).sort(), 50);
const ratio = (a, b) => (a === null || b === null || !b ? null : Number((a / b).toFixed(3)));

// ---- HTTP: node:http with keep-alive; long polls on their own agent ---------------------------
const target = new URL(url);
const apiAgent = new http.Agent({ keepAlive: true, maxSockets: Math.max(64, CONC, SUBMITTERS * 2) });
const pollAgent = new http.Agent({ keepAlive: true, maxSockets: W * 2 + 8 });
const eventAgent = new http.Agent({ keepAlive: true, maxSockets: MAX_IN_FLIGHT });
const auth = process.env.TASKLINE_API_KEY ? { Authorization: `Bearer ${process.env.TASKLINE_API_KEY}` } : {};

/** One request: its status, JSON (or null), text, and `at`, when the whole answer had arrived (nowMs). */
function request(method, path, body, { agent = apiAgent, timeoutMs = 120000 } = {}) {
  return new Promise((resolve, reject) => {
    const data = body === undefined ? null : Buffer.from(JSON.stringify(body));
    const headers = { ...auth };
    if (data) { headers['Content-Type'] = 'application/json'; headers['Content-Length'] = data.length; }
    const req = http.request({ host: target.hostname, port: target.port || 80, path, method, agent, headers }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        const at = nowMs();
        const text = Buffer.concat(chunks).toString('utf8');
        let json = null;
        if (text && (text[0] === '{' || text[0] === '[')) { try { json = JSON.parse(text); } catch { /* text */ } }
        resolve({ status: res.statusCode, json, text, at });
      });
      res.on('error', reject);
    });
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`no answer in ${timeoutMs} ms: ${method} ${path}`)));
    req.on('error', reject);
    req.end(data);
  });
}
/**
 * request(), again after a 503 (the node's journal did not answer: "nothing was changed", so the
 * same write may go again), up to 20 times, 50 ms doubling to 800 ms apart; counted by path kind.
 */
const retried503 = {};
async function request503(method, path, body, opts) {
  for (let i = 0, wait = 50; ; i++, wait = Math.min(800, wait * 2)) {
    const r = await request(method, path, body, opts);
    if (r.status !== 503 || i === 20 || Date.now() > deadline) return r;
    const kind = path.replace(/[0-9a-f]{8}-[0-9a-f-]{27}/g, '{id}');
    retried503[kind] = (retried503[kind] || 0) + 1;
    await sleep(wait);
  }
}
async function ok(method, path, body, want = 200) {
  const r = await request(method, path, body);
  if (r.status !== want) throw new Error(`${method} ${path}: ${r.status} ${r.text.slice(0, 300)}`);
  return r.json;
}
/** Runs at most n of the functions given at once. */
function limiter(n) {
  let active = 0;
  const waiting = [];
  const next = () => { if (waiting.length && active < n) waiting.shift()(); };
  return (fn) => new Promise((resolve, reject) => {
    const run = () => { active++; fn().then(resolve, reject).finally(() => { active--; next(); }); };
    if (active < n) run(); else waiting.push(run);
  });
}
const oneByOne = limiter(CONC);

// What the node said that the protocol (the README's "Durable steps") says otherwise: request and answer.
// Each kind once, with the first request and answer, and how many times it was seen.
const disagreements = [];
function disagree(what, req, res) {
  const seen = disagreements.find((d) => d.what === what);
  if (seen) seen.times++;
  else if (disagreements.length < 20) disagreements.push({ what, times: 1, request: req, answer: res });
}

// ---- the node's process: RSS, CPU of it and of its PostgreSQL; heap from the metrics ----------
let clockTicks = 100;
try { clockTicks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100; } catch { /* 100 */ }
function statOf(p) { // [ppid, utime + stime, cutime + cstime] or null
  try {
    const f = readFileSync(`/proc/${p}/stat`, 'utf8').split(') ').pop().split(' ');
    return [Number(f[1]), Number(f[11]) + Number(f[12]), Number(f[13]) + Number(f[14])];
  } catch { return null; }
}
function rssKiB(p) {
  try {
    const line = readFileSync(`/proc/${p}/status`, 'utf8').split('\n').find((l) => l.startsWith('VmRSS:'));
    return line ? Number(line.split(/\s+/)[1]) : 0;
  } catch { return 0; }
}
function descendants(root) {
  const kids = new Map();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const s = statOf(name);
    if (!s) continue;
    if (!kids.has(s[0])) kids.set(s[0], []);
    kids.get(s[0]).push(Number(name));
  }
  const all = [];
  const todo = [...(kids.get(root) || [])];
  while (todo.length) { const p = todo.pop(); all.push(p); todo.push(...(kids.get(p) || [])); }
  return all;
}
/**
 * The embedded PostgreSQL's postmaster. It is started through pg_ctl, so it is not the node's
 * child (its parent is init): it is the `postgres` process, not among the node's descendants,
 * whose `-p <port>` is a port the node holds an established TCP connection to (read from
 * /proc/<pid>/fd and /proc/net/tcp{,6}). --pg-pid gives it instead. Null when none is found (a
 * PostgreSQL of one's own elsewhere: its CPU is then not counted).
 */
function findPostmaster() {
  if (o['pg-pid']) return { pid: Number(o['pg-pid']), how: '--pg-pid' };
  const inodes = new Set();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try { const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`)); if (m) inodes.add(m[1]); } catch { /* closed */ }
  }
  const remotePorts = new Set();
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text = '';
    try { text = readFileSync(file, 'utf8'); } catch { continue; }
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length > 9 && f[3] === '01' && inodes.has(f[9])) remotePorts.add(parseInt(f[2].split(':')[1], 16));
    }
  }
  const mine = new Set(descendants(pid));
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || mine.has(Number(name))) continue;
    let args;
    try { args = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0'); } catch { continue; }
    if (!/(^|\/)postgres$/.test(args[0])) continue;
    const p = args.indexOf('-p');
    const port = p >= 0 ? Number(args[p + 1]) : NaN;
    if (remotePorts.has(port)) return { pid: Number(name), how: `postmaster on port ${port}, ${args[args.indexOf('-D') + 1] ?? ''}` };
  }
  return null;
}
let postmaster = null;

/**
 * The node's CPU ticks (utime + stime of all its threads); PostgreSQL's: the postmaster's and its
 * descendants', and the node's own descendants' if any (each one's utime + stime + cutime + cstime,
 * plus the node's cutime + cstime: a process that ends in the window, an autovacuum worker, say,
 * moves its time into its parent's c-fields); RSS of the node and the sum over PostgreSQL's
 * processes (its shared buffers count in each backend that touched them, so that sum overstates).
 */
function procSample() {
  const at = nowMs();
  const self = statOf(pid);
  if (!self) throw new Error(`no process ${pid} (--pid)`);
  const kids = descendants(pid);
  if (postmaster && statOf(postmaster.pid) && !kids.includes(postmaster.pid)) kids.push(postmaster.pid, ...descendants(postmaster.pid));
  let childTicks = self[2], childRss = 0;
  for (const k of kids) {
    const s = statOf(k);
    if (s) childTicks += s[1] + s[2];
    childRss += rssKiB(k);
  }
  return { at, nodeTicks: self[1], childTicks, rssKiB: rssKiB(pid), childRssKiB: childRss, children: kids.length };
}
/** CPU ms so far of the node, its PostgreSQL and this script (null parts without --pid). */
function cpuNow() {
  const c = process.cpuUsage();
  const client = (c.user + c.system) / 1000;
  if (!pid) return { node: null, postgres: null, client };
  const p = procSample();
  return { node: p.nodeTicks * 1000 / clockTicks, postgres: p.childTicks * 1000 / clockTicks, client };
}
/** CPU ms per task of each, from a cpuNow() taken before. */
function cpuPer(before, tasks) {
  const now = cpuNow();
  const per = (k) => (now[k] === null ? null : Number(((now[k] - before[k]) / tasks).toFixed(4)));
  return { nodeMs: per('node'), postgresMs: per('postgres'), clientMs: per('client') };
}
/** CPU ticks of each of PostgreSQL's processes, with its title (`postgres: autovacuum worker`...). */
function pgProcesses() {
  const all = new Map();
  if (!postmaster) return all;
  for (const p of [postmaster.pid, ...descendants(postmaster.pid)]) {
    const st = statOf(p);
    if (!st) continue;
    let title = '';
    try { title = readFileSync(`/proc/${p}/cmdline`, 'utf8').replace(/\0+/g, ' ').trim().slice(0, 80); } catch { /* gone */ }
    // The postmaster's own, and those of its children that ended (autovacuum workers come and go).
    if (p === postmaster.pid) all.set(p, { ticks: st[1] + st[2], title: `${title.slice(0, 40)} (with its ended children)` });
    else all.set(p, { ticks: st[1], title });
  }
  return all;
}
/** The busiest of PostgreSQL's processes between two pgProcesses() readings: CPU seconds each. */
function busiest(before, after, most = 5) {
  return [...after.entries()].map(([p, a]) => ({ pid: p, title: a.title, cpuS: r2((a.ticks - (before.get(p)?.ticks ?? 0)) / clockTicks) }))
    .filter((x) => x.cpuS > 0).sort((a, b) => b.cpuS - a.cpuS).slice(0, most);
}
let metricsPath = o['metrics-path'];
async function heapBytes() {
  let r = await request('GET', metricsPath);
  if (r.status === 404 && metricsPath !== '/api/metrics') {
    const alt = await request('GET', '/api/metrics');
    if (alt.status === 200) { metricsPath = '/api/metrics'; r = alt; }
  }
  if (r.status !== 200) return null;
  let sum = 0, seen = false;
  for (const line of r.text.split('\n')) {
    const m = /^jvm_memory_used_bytes\{([^}]*)\}\s+(\S+)/.exec(line);
    if (m && /area="heap"/.test(m[1])) { sum += Number(m[2]); seen = true; }
  }
  return seen ? sum : null;
}
const MiB = (bytes) => r2(bytes / 1048576);
/** --sample-s of the node at 1 s intervals (RSS, CPU) and its heap every --heap-every-s. */
async function sampleWindow(seconds) {
  const rss = [], childRss = [], heap = [];
  const t0 = nowMs();
  const first = pid ? procSample() : null;
  const pg0 = pgProcesses();
  let last = first, nextHeap = 0;
  for (let tick = 0; ; tick++) {
    const elapsed = nowMs() - t0;
    if (elapsed >= nextHeap && elapsed < seconds * 1000) {
      const h = await heapBytes();
      if (h !== null) heap.push(h);
      nextHeap += HEAP_EVERY_S * 1000;
    }
    if (pid) { last = procSample(); rss.push(last.rssKiB * 1024); childRss.push(last.childRssKiB * 1024); }
    if (nowMs() - t0 >= seconds * 1000) break;
    await sleep(Math.min(1000 * (tick + 1) - (nowMs() - t0), seconds * 1000 - (nowMs() - t0)));
  }
  const s = { seconds: r2((nowMs() - t0) / 1000) };
  if (pid) {
    const wall = (last.at - first.at) / 1000;
    s.rssMiB = { median: MiB(median(rss)), min: MiB(Math.min(...rss)), max: MiB(Math.max(...rss)) };
    s.postgresRssMiB = { median: MiB(median(childRss)), note: 'the sum over its processes: shared buffers count in each' };
    s.cpuCores = {
      node: Number(((last.nodeTicks - first.nodeTicks) / clockTicks / wall).toFixed(4)),
      postgres: Number(((last.childTicks - first.childTicks) / clockTicks / wall).toFixed(4)),
    };
    s.cpuCores.total = Number((s.cpuCores.node + s.cpuCores.postgres).toFixed(4));
    s.postgresProcesses = last.children;
    s.postgresBusiest = busiest(pg0, pgProcesses());
  }
  s.heapMiB = heap.length
    ? { mean: MiB(heap.reduce((a, b) => a + b, 0) / heap.length), min: MiB(Math.min(...heap)), max: MiB(Math.max(...heap)), n: heap.length }
    : null;
  return s;
}

// ---- the node's API -------------------------------------------------------------------------
async function queueInfo() {
  const q = (await ok('GET', '/api/queues')).queues.find((x) => x.name === Q);
  if (!q) throw new Error(`no queue ${Q} on ${url}`);
  return q;
}
const queueView = (q) => Object.fromEntries(['waiting', 'running', 'scheduled', 'accepted', 'finished', 'unfinished', 'rejected', 'slots', 'capacity']
  .filter((k) => q[k] !== undefined).map((k) => [k, q[k]]));

/**
 * Submits n tasks (`make(i)`) in batches of --batch from --submitters loops; a 429 is retried
 * after 10 ms doubling to 160 ms. Returns their ids in order, and how long it took.
 */
async function submit(n, make, onAccepted = () => {}) {
  const ids = new Array(n);
  let next = 0, refused = 0;
  const t0 = nowMs();
  await Promise.all(Array.from({ length: Math.min(SUBMITTERS, Math.ceil(n / BATCH)) }, async () => {
    while (next < n) {
      const from = next, size = Math.min(BATCH, n - from);
      next += size;
      const tasks = Array.from({ length: size }, (_, j) => make(from + j));
      for (let backoff = 10; ; backoff = Math.min(160, backoff * 2)) {
        if (Date.now() > deadline) throw new Error('submissions: out of time (--timeout-s)');
        const r = await request('POST', '/api/batches', { tasks });
        if (r.status === 202) {
          r.json.tasks.forEach((t, j) => { ids[from + j] = t.id; });
          onAccepted(size);
          break;
        }
        if (r.status !== 429) throw new Error(`POST /api/batches: ${r.status} ${r.text.slice(0, 300)}`);
        refused++;
        await sleep(backoff);
      }
    }
  }));
  return { ids, seconds: (nowMs() - t0) / 1000, refused429: refused };
}

// How a suspend goes out: the batch complete route if the node takes it there, else one by one.
let suspendRoute = null; // null: not tried yet; 'batch'; 'single'
let batchRefusal = null;
const unknownField = (a) => a && (a.status === 400 || a.status === 422) && /suspend/i.test(JSON.stringify(a));

/** Ends the attempts given suspended; returns the answers that were 200 pending. */
async function suspendMany(items) {
  if (items.length === 0) return [];
  if (suspendRoute !== 'single') {
    const body = { tasks: items };
    const r = await request503('POST', `/api/queues/${encodeURIComponent(Q)}/complete`, body);
    if (r.status === 200 && Array.isArray(r.json?.tasks)) {
      const good = [], refusedItems = [];
      r.json.tasks.forEach((a, j) => {
        if (a.status === 200 && a.state === 'pending') good.push(a);
        else if (unknownField(a)) refusedItems.push(items[j]);
        else {
          disagree('batch complete with suspend: an item not 200 pending', { path: `/api/queues/${Q}/complete`, item: items[j] }, a);
          if (a.status === 200) throw new Error(`batch complete with suspend ended a task ${a.state}, not pending: ${JSON.stringify(a)}`);
        }
      });
      if (refusedItems.length === 0) { suspendRoute = 'batch'; return good; }
      batchRefusal = batchRefusal ?? { status: r.status, item: r.json.tasks.find(unknownField) };
      suspendRoute = 'single';
      return good.concat(await suspendOneByOne(refusedItems));
    }
    // Refused whole (an unknown field, say): one by one from now on. Several first tries may be
    // in flight at once, so a refusal after the switch is no error either.
    if ((r.status === 400 || r.status === 422) && suspendRoute !== 'batch') {
      batchRefusal = batchRefusal ?? { status: r.status, body: r.json ?? r.text.slice(0, 300) };
      suspendRoute = 'single';
    } else {
      throw new Error(`POST /api/queues/${Q}/complete with suspend: ${r.status} ${r.text.slice(0, 300)}`);
    }
  }
  return suspendOneByOne(items);
}
async function suspendOneByOne(items) {
  const answers = await Promise.all(items.map((it) => oneByOne(() =>
    request503('POST', `/api/tasks/${it.id}/complete`, { lease: it.lease, suspend: it.suspend }))));
  const good = [];
  answers.forEach((r, j) => {
    if (r.status === 200 && r.json?.state === 'pending') {
      if (r.json.suspended !== true) disagree('suspend answered without `suspended: true`', { path: `/api/tasks/${items[j].id}/complete`, suspend: items[j].suspend }, r.json);
      good.push({ ...r.json, at: r.at });
    } else {
      disagree('suspend not answered 200 pending', { path: `/api/tasks/${items[j].id}/complete`, suspend: items[j].suspend }, { status: r.status, body: r.json ?? r.text.slice(0, 300) });
      if (r.status === 200) throw new Error(`suspend ended task ${items[j].id} ${r.json?.state}, not pending`);
    }
  });
  return good;
}
/** Completes the attempts given in one batch request; returns how many were 200. */
async function completeMany(items) {
  if (items.length === 0) return 0;
  const r = await request503('POST', `/api/queues/${encodeURIComponent(Q)}/complete`, { tasks: items });
  if (r.status !== 200) throw new Error(`POST /api/queues/${Q}/complete: ${r.status} ${r.text.slice(0, 300)}`);
  let good = 0;
  for (const a of r.json.tasks) {
    if (a.status === 200) good++;
    else disagree('complete of a resumed task not 200', { path: `/api/queues/${Q}/complete` }, a);
  }
  return good;
}
/**
 * A long-poll claim. One not answered 30 s after its waitMs (a node whose journal connections are
 * all busy holds it) is given up and counted in claimsGivenUp: the node hands back what it would
 * have leased to a claim whose client went away, so the next claim may take it.
 */
let claimsGivenUp = 0;
async function claim(worker, type, max, waitMs) {
  let r;
  try {
    r = await request503('POST', `/api/queues/${encodeURIComponent(Q)}/claim`, { worker, max, waitMs, types: [type] },
      { agent: pollAgent, timeoutMs: waitMs + 30000 });
  } catch (e) {
    if (!/^no answer in/.test(e.message)) throw e;
    claimsGivenUp++;
    return { tasks: [], at: nowMs() };
  }
  if (r.status !== 200) throw new Error(`claim: ${r.status} ${r.text.slice(0, 300)}`);
  return { tasks: r.json.tasks, at: r.at };
}
const hasStep = (t, name) => t.steps !== undefined && t.steps !== null && Object.prototype.hasOwnProperty.call(t.steps, name);

/**
 * --workers claim loops for tasks of `type` until stop(): each claim's tasks go through
 * handle(task, claimAnswerAt) -> {suspend} or {result}; the suspends of one claim go out together
 * (suspendMany), the completes in one batch; then afterWrite({suspended, completed}) with the
 * answers. A loop error stops every loop and is thrown; so is --stall-s without a claimed task.
 */
async function work(label, type, { stop, handle, afterWrite = () => {}, max = CLAIM_MAX, workers = W, waitMs = WAIT_MS, otherProgress = () => 0 }) {
  let failure = null, progress = nowMs();
  const loop = async (i) => {
    try {
      while (!stop() && !failure) {
        if (Date.now() > deadline) throw new Error(`${label}: out of time (--timeout-s)`);
        if (nowMs() - Math.max(progress, otherProgress()) > STALL_S * 1000) throw new Error(`${label}: no task claimed for ${STALL_S} s (--stall-s)`);
        const { tasks, at } = await claim(`${prefix}-${label}-${i}`, type, max, waitMs);
        if (tasks.length === 0) continue;
        progress = nowMs();
        const suspends = [], completes = [];
        for (const t of tasks) {
          const a = handle(t, at);
          if (a.suspend) suspends.push({ id: t.id, lease: t.lease.token, suspend: a.suspend });
          else completes.push({ id: t.id, lease: t.lease.token, result: a.result ?? {} });
        }
        const [suspended, completed] = await Promise.all([suspendMany(suspends), completeMany(completes)]);
        afterWrite({ suspended, completed });
        progress = nowMs();
      }
    } catch (e) { failure = failure ?? e; }
  };
  await Promise.all(Array.from({ length: workers }, (_, i) => loop(i)));
  if (failure) throw failure;
}

const out = { url, queue: Q, prefix, phases, workers: W, claimMax: CLAIM_MAX, batch: BATCH };
const lines = [];

// ---- sleepers -------------------------------------------------------------------------------
async function sleepersPhase() {
  const type = `${prefix}-nap`;
  const queueBefore = queueView(await queueInfo());
  console.error(`sleepers: idle baseline, ${SAMPLE_S} s`);
  const baseline = await sampleWindow(SAMPLE_S);
  let suspended = 0, submitted = 0;
  const cpu0 = cpuNow();
  const t0 = nowMs();
  const submitting = submit(N, (i) => ({ type, queue: Q, payload: { i } }), (k) => { submitted += k; });
  let lastAnswer = t0;
  const ticker = setInterval(() => console.error(`sleepers: ${submitted} submitted, ${suspended} suspended`), 5000);
  let sub;
  try {
    [sub] = await Promise.all([submitting, work('nap', type, {
      stop: () => suspended >= N,
      handle: (t) => (hasStep(t, 'nap') ? { result: {} } : { suspend: { step: 'nap', sleepMs: SLEEP_MS } }),
      afterWrite: ({ suspended: s }) => { suspended += s.length; lastAnswer = nowMs(); },
    })]);
  } finally { clearInterval(ticker); }
  const seconds = (lastAnswer - t0) / 1000;
  const cpuPerSleeper = cpuPer(cpu0, N);
  const ids = sub.ids;
  // One of them read back: suspended, waiting for its sleep.
  const sampleTask = await ok('GET', `/api/tasks/${ids[Math.floor(ids.length / 2)]}`);
  if (sampleTask.state !== 'pending' || sampleTask.wait?.kind !== 'sleep' || sampleTask.wait?.step !== 'nap') {
    disagree('a sleeper read back is not pending with wait {kind: sleep, step: nap}', { path: `/api/tasks/${sampleTask.id}` },
      { state: sampleTask.state, wait: sampleTask.wait });
  }
  const queueAfter = queueView(await queueInfo());
  console.error(`sleepers: ${suspended} suspended in ${r2(seconds)} s; settle ${SETTLE_S} s, then ${SAMPLE_S} s of samples`);
  await sleep(SETTLE_S * 1000);
  const after = await sampleWindow(SAMPLE_S);
  const s = {
    n: N, type, sleepMs: SLEEP_MS, suspendRoute, ...(batchRefusal ? { batchRefusal } : {}),
    submitSeconds: r2(sub.seconds), submitRefused429: sub.refused429,
    suspendSeconds: r2(seconds), suspendedPerSecond: Math.round(suspended / seconds), suspended,
    cpuPerSleeper, // submit, claim and suspend, per task
    sampleTask: { id: sampleTask.id, state: sampleTask.state, wait: sampleTask.wait, steps: sampleTask.steps },
    queueBefore, queueAfter, baseline, after,
  };
  s.ratios = {
    rssMedian: ratio(after.rssMiB?.median, baseline.rssMiB?.median),
    heapMean: ratio(after.heapMiB?.mean, baseline.heapMiB?.mean),
    heapMin: ratio(after.heapMiB?.min, baseline.heapMiB?.min),
    cpuNode: ratio(after.cpuCores?.node, baseline.cpuCores?.node),
    cpuPostgres: ratio(after.cpuCores?.postgres, baseline.cpuCores?.postgres),
    cpuTotal: ratio(after.cpuCores?.total, baseline.cpuCores?.total),
  };
  s.perSleeper = {
    rssBytes: pid ? Math.round((after.rssMiB.median - baseline.rssMiB.median) * 1048576 / N) : null,
    heapBytesMean: after.heapMiB && baseline.heapMiB ? Math.round((after.heapMiB.mean - baseline.heapMiB.mean) * 1048576 / N) : null,
    heapBytesMin: after.heapMiB && baseline.heapMiB ? Math.round((after.heapMiB.min - baseline.heapMiB.min) * 1048576 / N) : null,
  };
  if (o['cancel-sleepers']) {
    const c0 = nowMs();
    let cancelled = 0;
    await Promise.all(ids.map((id) => oneByOne(async () => {
      const r = await request('POST', `/api/tasks/${id}/cancel`);
      if (r.status === 202 || r.status === 200) cancelled++;
    })));
    s.cancelled = { cancelled, seconds: r2((nowMs() - c0) / 1000) };
  }
  lines.push(`sleepers: ${suspended} suspended at ${s.suspendedPerSecond}/s (suspend via ${suspendRoute}); ` +
    (pid ? `RSS ${baseline.rssMiB.median} -> ${after.rssMiB.median} MiB (${s.ratios.rssMedian}x, ${s.perSleeper.rssBytes} B a sleeper); ` +
      `CPU node ${baseline.cpuCores.node} -> ${after.cpuCores.node} cores (${s.ratios.cpuNode}x), PostgreSQL ${baseline.cpuCores.postgres} -> ${after.cpuCores.postgres} (${s.ratios.cpuPostgres}x); ` : 'RSS, CPU: need --pid; ') +
    `heap mean ${baseline.heapMiB?.mean} -> ${after.heapMiB?.mean} MiB (${s.ratios.heapMean}x), min ${baseline.heapMiB?.min} -> ${after.heapMiB?.min} MiB`);
  return s;
}

// ---- wake -----------------------------------------------------------------------------------
/** A resumed task's history around its wake, for the slowest few: where the time went. */
async function historyNear(id, fromMs) {
  const t = await ok('GET', `/api/tasks/${id}`);
  return (t.history || []).filter((e) => e.at && isoMs(e.at) >= fromMs - 1000)
    .map((e) => ({ ...Object.fromEntries(Object.entries(e).filter(([k]) => !['result', 'payload', 'at'].includes(k))),
      msAfter: r2(isoMs(e.at) - fromMs) }));
}

async function wakePhase() {
  const type = `${prefix}-wake`;
  const q = await queueInfo();
  if (q.slots !== undefined && M > q.slots) throw new Error(`--m ${M} is more than the queue's ${q.slots} slots: they are held claimed until suspended together`);
  await submit(M, (i) => ({ type, queue: Q, payload: { i } }));
  // Every one claimed and held, so that all can be suspended until one instant together.
  const held = [];
  const holdUntil = nowMs() + 60000;
  while (held.length < M) {
    if (nowMs() > holdUntil) throw new Error(`wake: claimed ${held.length} of ${M} in 60 s`);
    const { tasks } = await claim(`${prefix}-hold`, type, Math.min(1000, M - held.length), WAIT_MS);
    held.push(...tasks);
  }
  const untilMs = Math.ceil(nowMs() + LEAD_S * 1000);
  const until = new Date(untilMs).toISOString();
  const s0 = nowMs();
  const answers = [];
  for (let i = 0; i < held.length; i += CLAIM_MAX) {
    answers.push(...await suspendMany(held.slice(i, i + CLAIM_MAX).map((t) => ({ id: t.id, lease: t.lease.token, suspend: { step: 'nap', until } }))));
  }
  const suspendedAt = nowMs();
  if (answers.length !== M) throw new Error(`wake: ${answers.length} of ${M} suspended`);
  const badUntil = answers.filter((a) => a.wait?.until && Math.abs(isoMs(a.wait.until) - untilMs) > 1);
  if (badUntil.length) disagree('suspend answer wait.until is not the until sent', { until }, badUntil[0]);
  console.error(`wake: ${M} suspended until ${until} in ${r2(suspendedAt - s0)} ms, ${r2(untilMs - suspendedAt)} ms before it`);
  const lateness = [], claimAt = new Map();
  let resumed = 0, spurious = 0, stepUntilOff = 0, lastResume = null;
  await work('wake', type, {
    stop: () => resumed >= M || nowMs() > untilMs + 120000,
    handle: (t, at) => {
      if (!hasStep(t, 'nap')) {
        spurious++;
        if (at >= untilMs) disagree('a sleeper claimed after its until, without the sleep step in `steps`', { id: t.id, until }, { steps: t.steps ?? null, attempt: t.attempt });
        return { suspend: { step: 'nap', until } };
      }
      resumed++;
      lateness.push(at - untilMs);
      claimAt.set(t.id, at);
      lastResume = Math.max(lastResume ?? at, at);
      const stepUntil = t.steps.nap?.until;
      if (!stepUntil || Math.abs(isoMs(stepUntil) - untilMs) > 1) {
        stepUntilOff++;
        if (stepUntilOff === 1) disagree('resumed sleep step result is not {until: <the until>}', { until }, t.steps);
      }
      return { result: { woke: true } };
    },
  });
  const slowest = [...claimAt.entries()].sort((a, b) => b[1] - a[1]).slice(0, 3);
  const slowHistory = [];
  for (const [id, at] of slowest) slowHistory.push({ id, latenessMs: r2(at - untilMs), history: await historyNear(id, untilMs) });
  const s = {
    m: M, until, suspendMs: r2(suspendedAt - s0), marginMs: r2(untilMs - suspendedAt), resumed, spurious,
    latenessMs: spread(lateness), instantToLastResumeMs: r2(lastResume - untilMs),
    allWithin1s: resumed === M && lastResume - untilMs <= 1000, slowest: slowHistory,
  };
  lines.push(`wake: ${resumed} of ${M} resumed; lateness p50 ${s.latenessMs.p50} ms, p99 ${s.latenessMs.p99} ms, max ${s.latenessMs.max} ms; ` +
    `instant -> last resume ${s.instantToLastResumeMs} ms (target all within 1 s: ${s.allWithin1s ? 'met' : 'NOT met'})`);
  if (SINGLE > 0) s.single = await singleSleeps();
  return s;
}

/** One task at a time: submit, claim, suspend for --single-sleep-ms, long-poll its resume. */
async function singleSleeps() {
  const type = `${prefix}-single`;
  const lateness = [], vsStep = [];
  let noWaitUntil = 0;
  for (let i = 0; i < SINGLE_WARMUP + SINGLE; i++) {
    if (Date.now() > deadline) throw new Error('single sleeps: out of time (--timeout-s)');
    const sub = await request('POST', '/api/tasks', { type, queue: Q, payload: { i } });
    if (sub.status !== 202) throw new Error(`POST /api/tasks: ${sub.status} ${sub.text.slice(0, 300)}`);
    let task = null;
    for (let tries = 0; !task && tries < 10; tries++) task = (await claim(`${prefix}-single`, type, 1, 5000)).tasks[0];
    if (!task) throw new Error('single sleeps: a task submitted was not claimed');
    const sentAt = nowMs();
    const r = await request('POST', `/api/tasks/${task.id}/complete`, { lease: task.lease.token, suspend: { step: 'nap', sleepMs: SINGLE_SLEEP_MS } });
    if (r.status !== 200 || r.json?.state !== 'pending') {
      disagree('single suspend not 200 pending', { path: `/api/tasks/${task.id}/complete`, suspend: { step: 'nap', sleepMs: SINGLE_SLEEP_MS } }, { status: r.status, body: r.json ?? r.text });
      throw new Error(`suspend: ${r.status} ${r.text.slice(0, 300)}`);
    }
    let untilMs;
    if (r.json.wait?.until) untilMs = isoMs(r.json.wait.until);
    else { noWaitUntil++; untilMs = sentAt + SINGLE_SLEEP_MS; }
    let resumedTask = null, at = null;
    const giveUp = nowMs() + SINGLE_SLEEP_MS + 30000;
    while (!resumedTask && nowMs() < giveUp) {
      const c = await claim(`${prefix}-single`, type, 1, SINGLE_SLEEP_MS + 5000);
      if (c.tasks[0]) { resumedTask = c.tasks[0]; at = c.at; }
    }
    if (!resumedTask) throw new Error(`single sleeps: task ${task.id} did not come back within ${SINGLE_SLEEP_MS + 30000} ms`);
    if (!hasStep(resumedTask, 'nap')) disagree('a resumed single sleeper came back without its step', { id: task.id }, resumedTask);
    if (i >= SINGLE_WARMUP) {
      lateness.push(at - untilMs);
      const su = resumedTask.steps?.nap?.until;
      if (su) vsStep.push(at - isoMs(su));
    }
    const c = await request('POST', `/api/tasks/${resumedTask.id}/complete`, { lease: resumedTask.lease.token, result: {} });
    if (c.status !== 200) throw new Error(`complete: ${c.status} ${c.text.slice(0, 300)}`);
  }
  const s = { count: SINGLE, warmup: SINGLE_WARMUP, sleepMs: SINGLE_SLEEP_MS, latenessMs: spread(lateness),
    latenessFromStepUntilMs: spread(vsStep), untilFrom: noWaitUntil ? `the client (${noWaitUntil} answers without wait.until)` : 'the suspend answer (wait.until)' };
  lines.push(`wake, single: ${SINGLE} sleeps of ${SINGLE_SLEEP_MS} ms one at a time: lateness p50 ${s.latenessMs.p50} ms, p99 ${s.latenessMs.p99} ms, max ${s.latenessMs.max} ms`);
  return s;
}

// ---- signals --------------------------------------------------------------------------------
async function signalsPhase() {
  const type = `${prefix}-signal`;
  const waitTimeoutMs = TIMEOUT_S * 1000;
  let suspended = 0;
  const t0 = nowMs();
  const [{ ids }] = await Promise.all([
    submit(K, (i) => ({ type, queue: Q, payload: { i } })),
    work('sig', type, {
      stop: () => suspended >= K,
      handle: () => ({ suspend: { step: 'go', signal: 'go', timeoutMs: waitTimeoutMs } }),
      afterWrite: ({ suspended: s }) => { suspended += s.length; },
    }),
  ]);
  const suspendSeconds = (nowMs() - t0) / 1000;
  const sentAt = new Float64Array(K).fill(NaN), ackAt = new Float64Array(K).fill(NaN), claimAt = new Float64Array(K).fill(NaN);
  let resumed = 0, woke = 0, notWoke = 0, badPayload = 0, timedOut = 0;
  const sendErrors = [];
  let sending = true, sendEnd = Infinity;
  const workers = work('sig', type, {
    stop: () => resumed >= K || (sending === false && nowMs() > sendEnd + 30000),
    handle: (t, at) => {
      if (!hasStep(t, 'go')) return { suspend: { step: 'go', signal: 'go', timeoutMs: waitTimeoutMs } };
      const i = t.payload.i;
      const step = t.steps.go;
      if (step?.timedOut) timedOut++;
      else if (step?.signal !== 'go' || step?.payload?.i !== i) {
        badPayload++;
        if (badPayload === 1) disagree('resumed signal step is not {signal: "go", payload: <the payload sent>, at}', { sentPayload: { i } }, step);
      }
      if (Number.isNaN(claimAt[i])) { claimAt[i] = at; resumed++; }
      return { result: { got: i } };
    },
  });
  let workersFailed = null;
  workers.catch((e) => { workersFailed = e; }); // awaited below; until then a failure must not go unhandled
  const start = nowMs();
  const sends = [];
  for (let i = 0; i < K && !workersFailed; i++) {
    const due = start + i * 1000 / SIGNAL_RATE;
    if (due > nowMs() + 1) await sleep(due - nowMs());
    sentAt[i] = nowMs();
    sends.push(request('POST', `/api/tasks/${ids[i]}/signals/go`, { payload: { i } }).then((r) => {
      if (r.status === 202) {
        ackAt[i] = r.at;
        if (r.json?.woke === true) woke++; else notWoke++;
        if (r.json?.task !== ids[i] || r.json?.name !== 'go' || !r.json?.id) disagree('signal 202 is not {id, task, name, woke}', { path: `/api/tasks/${ids[i]}/signals/go` }, r.json);
      } else if (sendErrors.length < 5) sendErrors.push(`${r.status} ${r.text.slice(0, 200)}`);
    }, (e) => { if (sendErrors.length < 5) sendErrors.push(e.message); }));
  }
  await Promise.all(sends);
  sending = false; sendEnd = nowMs();
  await workers;
  const lag = [], lagFromSend = [];
  for (let i = 0; i < K; i++) {
    if (!Number.isNaN(claimAt[i]) && !Number.isNaN(ackAt[i])) { lag.push(claimAt[i] - ackAt[i]); lagFromSend.push(claimAt[i] - sentAt[i]); }
  }
  const s = {
    k: K, suspendSeconds: r2(suspendSeconds), signalRate: SIGNAL_RATE, sendSeconds: r2((sendEnd - start) / 1000),
    accepted: K - sendErrors.length, woke, notWoke, resumed, timedOut, badPayload, ...(sendErrors.length ? { sendErrors } : {}),
    lagMs: spread(lag), lagFromSendMs: spread(lagFromSend),
  };
  lines.push(`signals: ${resumed} of ${K} resumed (${woke} woke); signal 202 -> resumed claim p50 ${s.lagMs.p50} ms, p99 ${s.lagMs.p99} ms, max ${s.lagMs.max} ms`);
  return s;
}

// ---- steps ----------------------------------------------------------------------------------
/** One drain: n tasks, each `steps` steps then a complete, by --workers loops one task at a time. */
async function stepsDrain(label, n, steps) {
  const type = `${prefix}-${label}`;
  await submit(n, (i) => ({ type, queue: Q, payload: { i } }));
  let done = 0, stepWrites = 0, notFirst = 0, failure = null;
  const cpu0 = cpuNow();
  const t0 = nowMs();
  let t1 = t0, progress = t0;
  await Promise.all(Array.from({ length: W }, async (_, w) => {
    try {
      while (done < n && !failure) {
        if (Date.now() > deadline) throw new Error(`${label}: out of time (--timeout-s)`);
        if (nowMs() - progress > STALL_S * 1000) throw new Error(`${label}: no progress for ${STALL_S} s`);
        const { tasks } = await claim(`${prefix}-${label}-${w}`, type, STEPS_CLAIM, WAIT_MS);
        for (const t of tasks) {
          for (let s = 1; s <= steps; s++) {
            const name = `s${s}`;
            const r = await request503('POST', `/api/tasks/${t.id}/steps/${name}`, { lease: t.lease.token, result: { s } });
            if (r.status !== 200) {
              disagree('step not 200', { path: `/api/tasks/${t.id}/steps/${name}`, body: { result: { s } } }, { status: r.status, body: r.json ?? r.text.slice(0, 300) });
              throw new Error(`POST /api/tasks/${t.id}/steps/${name}: ${r.status} ${r.text.slice(0, 300)}`);
            }
            if (r.json?.first !== true) notFirst++;
            stepWrites++;
          }
          const c = await request503('POST', `/api/tasks/${t.id}/complete`, { lease: t.lease.token, result: { steps } });
          if (c.status !== 200) throw new Error(`complete: ${c.status} ${c.text.slice(0, 300)}`);
          done++;
          t1 = c.at;
          progress = t1;
        }
      }
    } catch (e) { failure = failure ?? e; }
  }));
  if (failure) throw failure;
  const seconds = (t1 - t0) / 1000;
  return { tasks: n, stepsPerTask: steps, seconds: r2(seconds), tasksPerSecond: Math.round(n / seconds), cpuPerTask: cpuPer(cpu0, n),
    ...(steps ? { stepsPerSecond: Math.round(stepWrites / seconds), writesPerSecond: Math.round((stepWrites + n) / seconds), stepsNotFirst: notFirst } : {}) };
}

/** The step protocol on one task: a step's first result stays, a second write gets first: false. */
async function stepsCheck() {
  const type = `${prefix}-stepcheck`;
  const sub = await request('POST', '/api/tasks', { type, queue: Q, payload: {} });
  if (sub.status !== 202) throw new Error(`POST /api/tasks: ${sub.status}`);
  let t = null;
  for (let i = 0; !t && i < 10; i++) t = (await claim(`${prefix}-check`, type, 1, 2000)).tasks[0];
  if (!t) throw new Error('step check: the task was not claimed');
  const path = `/api/tasks/${t.id}/steps/charge`;
  const a = await request('POST', path, { lease: t.lease.token, result: { v: 1 } });
  const b = await request('POST', path, { lease: t.lease.token, result: { v: 2 } });
  const check = { first: { status: a.status, body: a.json ?? a.text }, second: { status: b.status, body: b.json ?? b.text } };
  check.ok = a.status === 200 && a.json?.first === true && a.json?.result?.v === 1 && a.json?.name === 'charge'
    && b.status === 200 && b.json?.first === false && b.json?.result?.v === 1;
  if (!check.ok) disagree('a step written twice: want 200 {first: true, result: {v: 1}}, then 200 {first: false, result: {v: 1}}', { path, results: [{ v: 1 }, { v: 2 }] }, check);
  // Suspended and resumed, the claim carries it in `steps`.
  const sus = await request('POST', `/api/tasks/${t.id}/complete`, { lease: t.lease.token, suspend: { step: 'tick', sleepMs: 1 } });
  let back = null;
  for (let i = 0; !back && i < 10; i++) back = (await claim(`${prefix}-check`, type, 1, 3000)).tasks[0];
  check.resumedSteps = back?.steps ?? null;
  check.resumedOk = sus.status === 200 && !!back && back.steps?.charge?.v === 1 && hasStep(back, 'tick');
  if (!check.resumedOk) disagree('a resumed claim: want steps {charge: {v: 1}, tick: {until}}', { suspend: { step: 'tick', sleepMs: 1 } }, { suspend: sus.json ?? sus.text, claim: back });
  if (back) await request('POST', `/api/tasks/${back.id}/complete`, { lease: back.lease.token, result: {} });
  return check;
}

async function stepsPhase() {
  const check = await stepsCheck();
  let warmup = null;
  if (STEPS_WARMUP > 0) {
    warmup = { steps: await stepsDrain('steps-warm', STEPS_WARMUP, STEP_COUNT), plain: await stepsDrain('plain-warm', STEPS_WARMUP * STEP_COUNT, 0) };
    console.error(`steps warm-up: ${warmup.steps.tasksPerSecond} tasks/s with steps, ${warmup.plain.tasksPerSecond} plain (not counted)`);
  }
  const steps = await stepsDrain('steps', T, STEP_COUNT);
  await sleep(500);
  const plain = await stepsDrain('plain', T * STEP_COUNT, 0);
  const s = { t: T, stepCount: STEP_COUNT, workers: W, claimMax: STEPS_CLAIM, check, ...(warmup ? { warmup } : {}), steps, plain,
    wallRatioStepsToPlain: ratio(steps.seconds, plain.seconds) };
  lines.push(`steps: ${T} tasks x ${STEP_COUNT} steps in ${steps.seconds} s (${steps.tasksPerSecond} tasks/s, ${steps.stepsPerSecond} steps/s) ` +
    `vs ${T * STEP_COUNT} plain tasks in ${plain.seconds} s (${plain.tasksPerSecond} tasks/s): wall ratio ${s.wallRatioStepsToPlain}; step protocol check ${check.ok && check.resumedOk ? 'ok' : 'FAILED'}`);
  return s;
}

// ---- events ---------------------------------------------------------------------------------
async function eventsPhase() {
  const type = `${prefix}-order`;
  const n = RATE * SECONDS;
  const orderId = (i) => `${prefix}-o-${i}`;
  const waitTimeoutMs = TIMEOUT_S * 1000;
  const waitFor = (i) => ({ step: 'paid', event: { name: 'order.paid', field: 'data.orderId', value: orderId(i) }, timeoutMs: waitTimeoutMs });
  let suspended = 0, submitted = 0;
  const cpu0 = cpuNow();
  const t0 = nowMs();
  const ticker = setInterval(() => console.error(`events: ${submitted} submitted, ${suspended} suspended`), 5000);
  try {
    await Promise.all([
      submit(n, (i) => ({ type, queue: Q, payload: { i } }), (k) => { submitted += k; }),
      work('ev', type, {
        stop: () => suspended >= n,
        handle: (t) => ({ suspend: waitFor(t.payload.i) }),
        afterWrite: ({ suspended: s }) => { suspended += s.length; },
      }),
    ]);
  } finally { clearInterval(ticker); }
  const suspendSeconds = (nowMs() - t0) / 1000;
  const cpuPerSuspend = cpuPer(cpu0, n);
  console.error(`events: ${n} tasks waiting for order.paid after ${r2(suspendSeconds)} s; sending ${RATE}/s for ${SECONDS} s`);
  const cpu1 = cpuNow();

  const planned = new Float64Array(n), sentAt = new Float64Array(n).fill(NaN), ackAt = new Float64Array(n).fill(NaN), claimAt = new Float64Array(n).fill(NaN);
  const delivered = {}, statuses = {}, errors = [];
  let resumed = 0, spurious = 0, timedOut = 0, wrongEvent = 0, sent = 0, inFlight = 0, heldBackMax = 0, sending = true, sendEnd = Infinity;
  let lastEventAnswer = 0; // while events are answered, resumes that are slow to come are no stall
  const start = nowMs() + 50;
  const workers = work('ev', type, {
    stop: () => resumed >= n || (!sending && (resumed >= sent || nowMs() > sendEnd + DRAIN_S * 1000)),
    otherProgress: () => lastEventAnswer,
    handle: (t, at) => {
      const i = t.payload.i;
      if (!hasStep(t, 'paid')) {
        spurious++;
        // Claimed again after its event was delivered: its `steps` should hold the wait step.
        if (!Number.isNaN(ackAt[i])) disagree('a task claimed after its event was delivered, without the wait step in `steps`', { id: t.id, orderId: orderId(i) }, { steps: t.steps ?? null, attempt: t.attempt, leaseVersion: t.lease?.version });
        return { suspend: waitFor(i) };
      }
      const step = t.steps.paid;
      if (step?.timedOut) timedOut++;
      else if (step?.event?.name !== 'order.paid' || step?.event?.data?.orderId !== orderId(i)) {
        wrongEvent++;
        if (wrongEvent === 1) disagree('resumed event step is not {event: {id, name: "order.paid", data: {orderId}}}', { orderId: orderId(i) }, step);
      }
      if (Number.isNaN(claimAt[i])) { claimAt[i] = at; resumed++; }
      return { result: { paid: true } };
    },
  });
  let workersFailed = null;
  workers.catch((e) => { workersFailed = e; }); // awaited below; until then a failure must not go unhandled
  const send = (i) => {
    inFlight++;
    sentAt[i] = nowMs();
    request('POST', '/api/events', { name: 'order.paid', data: { orderId: orderId(i) }, id: `${prefix}-evt-${i}` }, { agent: eventAgent })
      .then((r) => {
        lastEventAnswer = nowMs();
        statuses[r.status] = (statuses[r.status] || 0) + 1;
        if (r.status === 202) {
          ackAt[i] = r.at;
          const d = r.json?.delivered;
          delivered[d] = (delivered[d] || 0) + 1;
        } else if (errors.length < 5) errors.push(`${r.status} ${r.text.slice(0, 200)}`);
      }, (e) => { statuses.error = (statuses.error || 0) + 1; if (errors.length < 5) errors.push(e.message); })
      .finally(() => { inFlight--; });
  };
  // Open model: event i is due at start + i / rate; at most --max-in-flight answers awaited at once
  // (an event due while that many wait goes late; heldBackMax is the most that were behind). The
  // sending stops at --seconds whatever was sent: what was not is `notSent` (its tasks go on
  // waiting, until their timeout).
  const stopAt = start + SECONDS * 1000;
  while (sent < n && nowMs() < stopAt && Date.now() < deadline && !workersFailed) {
    const due = Math.min(n, Math.floor((nowMs() - start) * RATE / 1000) + 1);
    while (sent < due && inFlight < MAX_IN_FLIGHT) { planned[sent] = start + sent * 1000 / RATE; send(sent); sent++; }
    if (sent < due) heldBackMax = Math.max(heldBackMax, due - sent);
    await sleep(1);
  }
  const sendSeconds = (nowMs() - start) / 1000;
  while (inFlight > 0) await sleep(5);
  sending = false; sendEnd = nowMs();
  await workers;
  const end = nowMs();
  const cpuPerEvent = cpuPer(cpu1, Math.max(1, sent));
  // Per window of the actual send times (a node slower than --rate holds the sends back behind
  // --max-in-flight, so the planned times say little): events sent, lag 202 -> resumed claim, how
  // late the sends went against their plan; and the resumes claimed in each window.
  const windows = [];
  const nw = Math.ceil(Math.max(SECONDS, (end - start) / 1000) / WINDOW_S);
  for (let w = 0; w < nw; w++) windows.push({ fromS: w * WINDOW_S, sent: 0, lag: [], lateSend: [], resumedInWindow: 0 });
  const lagAll = [], lagFromSend = [];
  for (let i = 0; i < sent; i++) {
    const w = windows[Math.min(nw - 1, Math.max(0, Math.floor((sentAt[i] - start) / 1000 / WINDOW_S)))];
    w.sent++;
    w.lateSend.push(sentAt[i] - planned[i]);
    if (!Number.isNaN(claimAt[i]) && !Number.isNaN(ackAt[i])) {
      w.lag.push(claimAt[i] - ackAt[i]); lagAll.push(claimAt[i] - ackAt[i]); lagFromSend.push(claimAt[i] - sentAt[i]);
    }
  }
  for (let i = 0; i < n; i++) {
    if (Number.isNaN(claimAt[i])) continue;
    const w = Math.floor((claimAt[i] - start) / 1000 / WINDOW_S);
    if (w >= 0 && w < nw) windows[w].resumedInWindow++;
  }
  // A window's rates over its part of the sending (sent) and of the whole phase (resumed).
  const within = (w, upto) => Math.max(1e-3, Math.min(w.fromS + WINDOW_S, upto) - w.fromS);
  const perWindow = windows.filter((w) => w.sent || w.resumedInWindow).map((w) => {
    const l = spread(w.lag), late = spread(w.lateSend);
    return { fromS: w.fromS, sent: w.sent, sentPerSecond: r2(w.sent / within(w, sendSeconds)),
      resumed: w.resumedInWindow, resumedPerSecond: r2(w.resumedInWindow / within(w, (end - start) / 1000)),
      lagP50Ms: l.p50, lagP99Ms: l.p99, lagMaxMs: l.max, sendLateP99Ms: late.p99 };
  });
  let lastClaim = -Infinity;
  for (const x of claimAt) if (x > lastClaim) lastClaim = x;
  const s = {
    rate: RATE, seconds: SECONDS, tasks: n, suspendSeconds: r2(suspendSeconds), suspendedPerSecond: Math.round(n / suspendSeconds),
    cpuPerSuspend, cpuPerEvent, // submit + claim + suspend per task; event + resume + complete per event
    sent, notSent: n - sent, sendSeconds: r2(sendSeconds), sentPerSecond: r2(sent / sendSeconds), heldBackMax, statuses, deliveredCounts: delivered,
    ...(errors.length ? { errors } : {}),
    resumed, spurious, timedOut, wrongEvent, unresumed: sent - resumed,
    deliveredPerSecond: r2(resumed / ((lastClaim - start) / 1000)),
    lagMs: spread(lagAll), lagFromSendMs: spread(lagFromSend), windows: perWindow,
  };
  const first = perWindow[0], last = perWindow.filter((w) => w.sent).at(-1);
  lines.push(`events: ${sent} sent at ${s.sentPerSecond}/s (asked ${RATE}/s), ${resumed} resumed at ${s.deliveredPerSecond}/s; ` +
    `lag 202 -> resumed claim p50 ${s.lagMs.p50} ms, p99 ${s.lagMs.p99} ms; first window p50/p99 ${first?.lagP50Ms}/${first?.lagP99Ms} ms, ` +
    `last ${last?.lagP50Ms}/${last?.lagP99Ms} ms`);
  return s;
}

// ---- run ------------------------------------------------------------------------------------
let failed = false;
// Whatever escapes still prints what was measured so far.
const crash = (e) => {
  out.crash = String(e?.stack ?? e);
  out.retried503 = retried503;
  out.disagreements = disagreements;
  console.log(JSON.stringify(out));
  for (const l of lines) console.error(l);
  console.error(`crashed: ${e?.message ?? e}`);
  process.exit(1);
};
process.on('uncaughtException', crash);
process.on('unhandledRejection', crash);
try {
  if (pid) {
    procSample();
    out.pid = pid;
    postmaster = findPostmaster();
    out.postgres = postmaster ?? 'not found: its CPU is not counted (--pg-pid)';
  }
  const ready = await request('GET', '/health/ready');
  if (ready.status !== 200) throw new Error(`${url} is not ready: ${ready.status} ${ready.text.slice(0, 200)}`);
  const q = await queueInfo();
  out.queueAtStart = queueView(q);
  const run = { sleepers: sleepersPhase, wake: wakePhase, signals: signalsPhase, steps: stepsPhase, events: eventsPhase };
  for (const p of phases) {
    const p0 = nowMs();
    try {
      out[p] = await run[p]();
      out[p].phaseSeconds = r2((nowMs() - p0) / 1000);
      for (const l of lines.filter((x) => x.startsWith(p))) console.error(`  ${l}`);
    } catch (e) {
      failed = true;
      out[p] = { error: e.message, phaseSeconds: r2((nowMs() - p0) / 1000) };
      lines.push(`${p}: FAILED: ${e.message}`);
    }
    console.error(`${p}: done in ${r2((nowMs() - p0) / 1000)} s`);
  }
} catch (e) {
  failed = true;
  out.error = e.message;
  lines.push(`FAILED: ${e.message}`);
} finally {
  clearTimeout(watchdog);
}
out.suspendRoute = suspendRoute;
out.retried503 = retried503;
out.claimsGivenUp = claimsGivenUp;
if (batchRefusal) out.batchRefusal = batchRefusal;
out.metricsPath = metricsPath;
out.disagreements = disagreements;
console.log(JSON.stringify(out));
for (const l of lines) console.error(l);
if (disagreements.length) console.error(`the node disagreed with the protocol ${disagreements.length} time(s): see "disagreements"`);
apiAgent.destroy(); pollAgent.destroy(); eventAgent.destroy();
process.exit(failed || disagreements.length ? 1 : 0);
