#!/usr/bin/env node
// PostgreSQL's CPU per task, for the scale-on-paper figures of the README's operations section.
// Starts its own PostgreSQL (the system's binaries, a temporary directory, 127.0.0.1 only) and one
// node from target/taskline.jar on conf/bench.json, and for each kind drains --tasks tasks after a
// warm-up, reading the CPU (utime + stime) of PostgreSQL's processes (the postmaster and all its
// children: backends, WAL writer, checkpointer) and of the node before and after:
//
//   plain    `sleep {ms: 0}` tasks of the local queue `bench` (remote-drain.mjs --mode local)
//   remote   `sum` tasks of the remote queue `remote-bench`, 8 workers in the script (--mode remote)
//   child    chains of 10 `sleep {ms: 0}` tasks (POST /api/flows), per child task
//   step     remote tasks that journal 10 durable steps each before they complete (--steps 10):
//            per step, the remote task's cost taken off
//
//   node load-tests/pg-cost.mjs [--tasks 20000] [--rounds 3] [--port 18341] [--pg-port 55480]
//
// Talks to 127.0.0.1 only; stops by itself.
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Node, Postgres, workDir, removeWorkDir } from './cluster.mjs';

const { values: o } = parseArgs({ options: {
  tasks: { type: 'string', default: '20000' },
  rounds: { type: 'string', default: '3' },
  port: { type: 'string', default: '18341' },
  'pg-port': { type: 'string', default: '55480' },
} });
const tasks = Number(o.tasks), rounds = Number(o.rounds);
if (!(tasks >= 1000 && tasks <= 200000)) throw new Error('--tasks: 1000 to 200000');
const ticks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

function cpuMs(pid) {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const rest = f.slice(f.lastIndexOf(')') + 2).split(' ');
    return (Number(rest[11]) + Number(rest[12])) * 1000 / ticks;
  } catch {
    return 0;
  }
}
function children(ppid) {
  const out = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const f = readFileSync(`/proc/${d}/stat`, 'utf8');
      if (Number(f.slice(f.lastIndexOf(')') + 2).split(' ')[1]) === ppid) out.push(Number(d));
    } catch { /* gone */ }
  }
  return out;
}
/** CPU of PostgreSQL: the postmaster and its children (backends come and go: those that went are in its cutime). */
function pgCpuMs(pg) {
  const pid = Number(readFileSync(path.join(pg.data, 'postmaster.pid'), 'utf8').split('\n')[0]);
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const rest = f.slice(f.lastIndexOf(')') + 2).split(' ');
  const own = (Number(rest[11]) + Number(rest[12]) + Number(rest[13]) + Number(rest[14])) * 1000 / ticks;
  return own + children(pid).reduce((sum, c) => sum + cpuMs(c), 0);
}

const pg = new Postgres(Number(o['pg-port']));
const dir = workDir();
const config = JSON.parse(readFileSync('conf/bench.json', 'utf8'));
const node = new Node('cost', Number(o.port), pg.url, config, dir);
const wal = () => Number(pg.psql('taskline', "SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')")[0][0]);
const run = (args) => JSON.parse(execFileSync('node', ['load-tests/remote-drain.mjs', '--url', node.url, ...args],
  { encoding: 'utf8', timeout: 300000 }).trim().split('\n').pop());

async function chains(n) {
  const flows = Math.ceil(n / 10);
  let sent = 0;
  const chain = Array.from({ length: 10 }, (_, k) => ({ key: `s${k}`, type: 'sleep', queue: 'bench', payload: { ms: 0 } }));
  const before = Number(pg.psql('taskline', "SELECT count(*) FROM tasks WHERE state = 'succeeded'")[0][0]);
  const submitter = async () => {
    while (sent < flows) {
      sent++;
      const r = await node.call('POST', '/api/flows', { chain });
      if (r.status !== 202) throw new Error(`flow: ${r.status} ${r.text}`);
    }
  };
  await Promise.all(Array.from({ length: 8 }, submitter));
  const want = before + flows * 10;
  const deadline = Date.now() + 300000;
  while (Number(pg.psql('taskline', "SELECT count(*) FROM tasks WHERE state = 'succeeded'")[0][0]) < want) {
    if (Date.now() > deadline) throw new Error('chains did not finish');
    await new Promise((ok) => setTimeout(ok, 200));
  }
  return flows * 10;
}

const kinds = {
  plain: async () => run(['--mode', 'local', '--tasks', String(tasks)]).tasks,
  remote: async () => run(['--mode', 'remote', '--workers', '8', '--tasks', String(tasks)]).tasks,
  child: async () => chains(tasks),
  step: async () => run(['--mode', 'remote', '--workers', '8', '--steps', '10', '--max', '100', '--tasks', String(tasks / 10)]).tasks,
};
const results = {};
try {
  pg.start();
  await node.start();
  for (const kind of Object.keys(kinds)) {
    await kinds[kind](); // warm-up
    const per = [];
    for (let r = 0; r < rounds; r++) {
      const wal0 = wal(), pg0 = pgCpuMs(pg), node0 = cpuMs(node.process.pid), t0 = Date.now();
      const n = await kinds[kind]();
      const seconds = (Date.now() - t0) / 1000;
      per.push({ pgMs: (pgCpuMs(pg) - pg0) / n, nodeMs: (cpuMs(node.process.pid) - node0) / n, perSecond: n / seconds,
        walBytes: (wal() - wal0) / n });
    }
    const med = (k) => per.map((x) => x[k]).sort((a, b) => a - b)[Math.floor(per.length / 2)];
    results[kind] = { pgMsPerTask: Number(med('pgMs').toFixed(4)), nodeMsPerTask: Number(med('nodeMs').toFixed(4)),
      tasksPerSecond: Math.round(med('perSecond')), walBytesPerTask: Math.round(med('walBytes')), rounds: per.length };
    console.error(`${kind}: ${JSON.stringify(results[kind])}`);
  }
  // A step: the stepped task's cost less the plain remote task's, over its 10 steps.
  results.step.pgMsPerStep = Number(((results.step.pgMsPerTask - results.remote.pgMsPerTask) / 10).toFixed(4));
  results.step.nodeMsPerStep = Number(((results.step.nodeMsPerTask - results.remote.nodeMsPerTask) / 10).toFixed(4));
  results.step.walBytesPerStep = Math.round((results.step.walBytesPerTask - results.remote.walBytesPerTask) / 10);
  console.log(JSON.stringify({ tasks, rounds, cores: (await import('node:os')).cpus().length, results }, null, 1));
} finally {
  await node.stop();
  pg.remove();
  removeWorkDir(dir);
}
