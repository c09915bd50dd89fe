#!/usr/bin/env node
// Drains N no-op tasks through a queue and reports tasks/s, for comparing workers over HTTP with
// the node's own: `--mode local` submits `sleep {ms: 0}` to a local queue; `--mode remote` submits
// `sum` tasks to a remote queue and runs W workers in this process, each handing in its last batch
// and claiming up to --max (250) in one work call (the example Node worker's loop); `--mode push` submits
// `sum` tasks to a push queue whose target this script serves (a no-op answering 200 JSON on
// --target-port). Submissions go in batches of 100 from 8 submitters; the clock runs from the
// first submission to the last finish. With --pid (the server's), it also reports the server's
// CPU time per task over the run. Talks to 127.0.0.1 only, stops by itself (after --timeout-s at
// the latest).
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { parseArgs } from 'node:util';

const { values: o } = parseArgs({ options: {
  url: { type: 'string', default: 'http://127.0.0.1:18181' },
  mode: { type: 'string', default: 'remote' },
  queue: { type: 'string' },
  tasks: { type: 'string', default: '20000' },
  workers: { type: 'string', default: '4' },
  'timeout-s': { type: 'string', default: '120' },
  'target-port': { type: 'string', default: '18199' },
  pid: { type: 'string' },
  calls: { type: 'string', default: 'work' },
  max: { type: 'string', default: '250' },
  steps: { type: 'string', default: '0' },
} });
if (!/^http:\/\/(127\.0\.0\.1|localhost)(:\d+)?$/.test(o.url)) throw new Error('only 127.0.0.1');
const remote = o.mode === 'remote';
const push = o.mode === 'push';
const queue = o.queue ?? (remote ? 'remote-bench' : push ? 'push-bench' : 'bench');
const total = Number(o.tasks);
const deadline = Date.now() + Number(o['timeout-s']) * 1000;

async function post(path, body) {
  const r = await fetch(o.url + path, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  return { status: r.status, body: await r.json() };
}
async function finished() {
  const r = await fetch(`${o.url}/api/queues`);
  return (await r.json()).queues.find((q) => q.name === queue).finished;
}

// utime + stime of a process, in clock ticks (100 a second on Linux).
function cpuTicks(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

let target;
if (push) {
  target = createServer((req, res) => {
    req.resume();
    req.on('end', () => { res.writeHead(200, { 'Content-Type': 'application/json' }); res.end('{"ok":true}'); });
  });
  await new Promise((ok) => target.listen(Number(o['target-port']), '127.0.0.1', ok));
}

const before = await finished();
const cpuBefore = o.pid ? cpuTicks(o.pid) : 0;
const task = remote || push ? { type: 'sum', queue, payload: { numbers: [1, 2] } } : { type: 'sleep', queue, payload: { ms: 0 } };
let submitted = 0;
const start = process.hrtime.bigint();
async function submitter() {
  while (submitted < total && Date.now() < deadline) {
    const n = Math.min(100, total - submitted);
    submitted += n;
    const r = await post('/api/batches', { tasks: Array.from({ length: n }, () => task) });
    if (r.status !== 202) { submitted -= n; await new Promise((ok) => setTimeout(ok, 50)); }
  }
}
let done = 0;
let stopped = false;
// The example workers' loop: one round trip hands in what was done and takes the next tasks
// (`--calls split` uses a claim and a batch complete instead, two round trips, as before).
async function worker(i) {
  let complete = [];
  while (!stopped && done < total && Date.now() < deadline) {
    const want = { worker: `bench-${i}`, max: Number(o.max), waitMs: 1000 };
    let tasks;
    if (o.calls === 'split') {
      if (complete.length) {
        const answer = await post(`/api/queues/${queue}/complete`, { tasks: complete });
        done += answer.body.tasks.filter((x) => x.status === 200).length;
      }
      const claim = await post(`/api/queues/${queue}/claim`, want);
      if (claim.status !== 200) throw new Error(`claim: ${claim.status} ${JSON.stringify(claim.body)}`);
      tasks = claim.body.tasks;
    } else {
      const work = await post(`/api/queues/${queue}/work`, { ...want, complete });
      if (work.status !== 200) throw new Error(`work: ${work.status} ${JSON.stringify(work.body)}`);
      done += work.body.completed.filter((x) => x.status === 200).length;
      tasks = work.body.tasks;
    }
    // --steps N: each task journals N durable steps before it completes (a step a round trip).
    for (let k = 0; k < Number(o.steps); k++) {
      await Promise.all(tasks.map((t) => post(`/api/tasks/${t.id}/steps/s${k}`, { lease: t.lease.token, result: { k } })));
    }
    complete = tasks.map((t) => ({ id: t.id, lease: t.lease.token,
      result: { sum: t.payload.numbers.reduce((a, b) => a + b, 0) } }));
  }
}
const jobs = Array.from({ length: 8 }, submitter);
if (remote) for (let i = 0; i < Number(o.workers); i++) jobs.push(worker(i));
// The clock stops when the node has journaled the last finish, not when the workers have heard so
// (a worker's last answer may wait out its claim's long poll).
while ((await finished()) - before < total && Date.now() < deadline) await new Promise((ok) => setTimeout(ok, 20));
const seconds = Number(process.hrtime.bigint() - start) / 1e9;
stopped = true;
await Promise.all(jobs);
const count = (await finished()) - before;
const cpu = o.pid ? { serverCpuMsPerTask: Number(((cpuTicks(o.pid) - cpuBefore) * 10 / count).toFixed(3)) } : {};
console.log(JSON.stringify({ mode: o.mode, queue, tasks: count, seconds: Number(seconds.toFixed(2)),
  tasksPerSecond: Math.round(count / seconds), workers: remote ? Number(o.workers) : 0, ...cpu }));
if (target) target.close();
target?.closeAllConnections();
