#!/usr/bin/env node
// A failover under load, several times over. Each switch builds a primary and a synchronous standby
// of its own (the system's PostgreSQL binaries: initdb, pg_basebackup, synchronous_standby_names;
// 127.0.0.1 only, removed at the end), starts two nodes from target/taskline.jar on a URL that names
// both (target_session_attrs=read-write), and has --clients clients submit single tasks (a sleep of
// 5 ms) to the two in turn, each waiting for its answer (and 50 ms after a 503, as Retry-After asks).
// After --before-s it SIGKILLs the primary (postmaster, then its backends, as its machine would
// die), promotes the standby --promote-after-ms later (pg_ctl promote), loads for --after-s more,
// then waits for every accepted task to end and checks, on the promoted server:
//
//   lost: tasks answered 202 that are not in the journal (must be 0)
//   every accepted task succeeded, with one end journaled, at its first attempt (claimed twice: 0)
//   answers other than 202 and 503 (must be none), and 503s without Retry-After (none)
//
// and reports, per switch and as medians: answers per second through the switch (a line per
// second), the time from the promotion to the first 202 (time to first accepted write), the
// outage seen by the clients (last 202 before the kill to first 202 after). Exit code 1 when a
// check fails. Talks to 127.0.0.1 only; bounded in time.
//
//   node load-tests/failover.mjs [--switches 3] [--before-s 10] [--after-s 15] [--clients 8]
//                                [--promote-after-ms 1000] [--port 18341] [--pg-port 55480] [--json FILE]
import { parseArgs } from 'node:util';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync, appendFileSync } from 'node:fs';
import path from 'node:path';
import { Node, Postgres, pgRun, workDir, removeWorkDir, percentile } from './cluster.mjs';

const { values: o } = parseArgs({ options: {
  switches: { type: 'string', default: '3' },
  'before-s': { type: 'string', default: '10' },
  'after-s': { type: 'string', default: '15' },
  clients: { type: 'string', default: '8' },
  'promote-after-ms': { type: 'string', default: '1000' },
  port: { type: 'string', default: '18341' },
  'pg-port': { type: 'string', default: '55480' },
  json: { type: 'string' },
} });
const switches = Math.min(20, Number(o.switches));
const beforeMs = Math.min(300, Number(o['before-s'])) * 1000;
const afterMs = Math.min(600, Number(o['after-s'])) * 1000;
const clients = Math.min(64, Number(o.clients));
const promoteAfterMs = Math.min(30000, Number(o['promote-after-ms']));
const sleep = (ms) => new Promise((ok) => setTimeout(ok, ms));
const median = (xs) => percentile([...xs].sort((a, b) => a - b), 50);

/** The standby: a base backup of the primary, streaming from it, named in its synchronous_standby_names. */
function standbyOf(primary, port) {
  const standby = new Postgres(port);
  pgRun('pg_basebackup', ['-h', '127.0.0.1', '-p', String(primary.port), '-U', 'postgres', '-D', standby.data,
    '--checkpoint=fast', '-R', '--no-sync'], { stdio: 'ignore' });
  appendFileSync(path.join(standby.data, 'postgresql.auto.conf'),
    `\nprimary_conninfo = 'host=127.0.0.1 port=${primary.port} user=postgres application_name=standby'\n`
    + "synchronous_standby_names = ''\n");
  standby.start();
  primary.psql('postgres', "ALTER SYSTEM SET synchronous_standby_names = 'standby'");
  primary.psql('postgres', 'SELECT pg_reload_conf()');
  // A commit returns only once the standby has it: from here on, the pair is synchronous.
  primary.psql('taskline', 'CREATE TABLE IF NOT EXISTS failover_probe (x int); INSERT INTO failover_probe VALUES (1)');
  return standby;
}

/** SIGKILL the postmaster first (nothing restarts the backends), then every backend it leaves. */
function killHard(pg) {
  const pid = Number(readFileSync(path.join(pg.data, 'postmaster.pid'), 'utf8').split('\n')[0]);
  const children = execFileSync('pgrep', ['-P', String(pid)], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] })
    .split('\n').filter(Boolean).map(Number);
  process.kill(pid, 'SIGKILL');
  for (const child of children) {
    try { process.kill(child, 'SIGKILL'); } catch { /* gone with it */ }
  }
}

async function oneSwitch(n, dir) {
  const pgPort = Number(o['pg-port']) + 2 * n;
  const primary = new Postgres(pgPort);
  primary.start();
  const standby = standbyOf(primary, pgPort + 1);
  const url = `postgresql://postgres@127.0.0.1:${pgPort},127.0.0.1:${pgPort + 1}/taskline?target_session_attrs=read-write`;
  const config = { queues: { default: { slots: 16, capacity: 100000 } } };
  const nodes = [0, 1].map((i) => new Node(`s${n}-node${i}`, Number(o.port) + 2 * n + i, url, config, dir));
  try {
    for (const node of nodes) {
      try {
        await node.start();
      } catch (e) {
        // The work directory goes at the end: say now what the node said.
        const log = path.join(dir, `${node.name}.log`);
        console.error(`${node.name} did not start: ${e.message}\n${existsSync(log) ? readFileSync(log, 'utf8').split('\n').slice(-30).join('\n') : ''}`);
        throw e;
      }
    }
    const accepted = [];
    const answers = []; // [ms since start, status]
    const odd = [];
    let noRetryAfter = 0;
    let stop = false;
    let turn = 0;
    const t0 = Date.now();
    const client = async () => {
      while (!stop) {
        const node = nodes[turn++ % nodes.length];
        let status;
        try {
          const r = await node.call('POST', '/api/tasks', { type: 'sleep', payload: { ms: 5 } });
          status = r.status;
          if (status === 202) accepted.push(r.json.id);
          if (status !== 202 && status !== 503) odd.push(`${status} ${r.text.slice(0, 200)}`);
          if (status === 503 && r.retryAfter == null) noRetryAfter++;
        } catch (e) {
          status = -1;
          odd.push(`no answer: ${e.message}`);
        }
        answers.push([Date.now() - t0, status]);
        if (status !== 202) await sleep(50);
      }
    };
    const running = Array.from({ length: clients }, client);
    await sleep(beforeMs);
    const killedAt = Date.now() - t0;
    killHard(primary);
    await sleep(promoteAfterMs);
    const promotedAt = Date.now() - t0;
    pgRun('pg_ctl', ['-D', standby.data, '-w', '-t', '60', 'promote'], { stdio: 'ignore' });
    await sleep(afterMs);
    stop = true;
    await Promise.all(running);

    // Every accepted task on the promoted server, ended; waited for, bounded. The ids go in on stdin
    // (COPY): as a literal they would pass the length of an argument.
    const check = () => execFileSync('psql', ['-X', '-q', '-A', '-t', '-F', '\t', '-v', 'ON_ERROR_STOP=1',
      '-h', '127.0.0.1', '-p', String(standby.port), '-U', 'postgres', '-d', 'taskline', '-f', '-'], {
      encoding: 'utf8', timeout: 120000,
      input: `CREATE TEMP TABLE accepted (id uuid);\nCOPY accepted FROM STDIN;\n${accepted.join('\n')}\n\\.\n`
        + `SELECT count(*), count(*) FILTER (WHERE t.state = 'succeeded'), count(*) FILTER (WHERE t.attempt > 1),
             (SELECT count(*) FROM task_events e JOIN accepted a ON a.id = e.task_id WHERE e.to_state = 'succeeded')
           FROM tasks t JOIN accepted a ON a.id = t.id;\n`,
    }).trim().split('\t').map(Number);
    let row;
    const deadline = Date.now() + 120000;
    for (;;) {
      row = check();
      if (row[1] === accepted.length || Date.now() > deadline) break;
      await sleep(500);
    }
    const [found, succeeded, claimedTwice, ends] = row;
    const firstAfter = answers.find(([at, s]) => s === 202 && at > promotedAt);
    const lastBefore = [...answers].reverse().find(([at, s]) => s === 202 && at <= killedAt);
    const perSecond = new Map();
    for (const [at, s] of answers) {
      const second = Math.floor(at / 1000);
      const counts = perSecond.get(second) ?? {};
      counts[s] = (counts[s] ?? 0) + 1;
      perSecond.set(second, counts);
    }
    return {
      switch: n + 1,
      accepted: accepted.length,
      lost: accepted.length - found,
      succeeded,
      endsJournaled: ends,
      claimedTwice,
      answers: answers.reduce((m, [, s]) => ({ ...m, [s]: (m[s] ?? 0) + 1 }), {}),
      odd: odd.slice(0, 5),
      noRetryAfter,
      killedAtMs: killedAt,
      promotedAtMs: promotedAt,
      firstWriteAfterPromotionMs: firstAfter ? firstAfter[0] - promotedAt : null,
      clientOutageMs: firstAfter && lastBefore ? firstAfter[0] - lastBefore[0] : null,
      perSecond: [...perSecond.entries()].map(([s, c]) => ({ second: s, ...c })),
    };
  } finally {
    for (const node of nodes) await node.kill();
    standby.remove();
    primary.remove();
  }
}

const dir = workDir();
const results = [];
let failed = false;
try {
  if (!existsSync('target/taskline.jar')) throw new Error('run from the repository root after mvn package');
  for (let n = 0; n < switches; n++) {
    const r = await oneSwitch(n, dir);
    results.push(r);
    const ok = r.lost === 0 && r.succeeded === r.accepted && r.endsJournaled === r.accepted && r.claimedTwice === 0
      && r.odd.length === 0 && r.noRetryAfter === 0 && r.firstWriteAfterPromotionMs !== null;
    failed ||= !ok;
    console.log(`switch ${r.switch}: ${ok ? 'ok' : 'FAILED'}; accepted ${r.accepted}, lost ${r.lost}, succeeded ${r.succeeded},`
      + ` ends ${r.endsJournaled}, claimed twice ${r.claimedTwice}; answers ${JSON.stringify(r.answers)};`
      + ` first 202 ${r.firstWriteAfterPromotionMs} ms after the promotion, clients without a 202 for ${r.clientOutageMs} ms`
      + (r.odd.length ? `; odd answers: ${r.odd.join(' | ')}` : ''));
    console.log('  second  ' + r.perSecond.map((p) => `${p.second}:${p[202] ?? 0}/${p[503] ?? 0}`).join(' ')
      + `   (202/503 per second; killed at ${(r.killedAtMs / 1000).toFixed(1)} s, promoted at ${(r.promotedAtMs / 1000).toFixed(1)} s)`);
  }
  const firsts = results.map((r) => r.firstWriteAfterPromotionMs).filter((x) => x !== null);
  const outages = results.map((r) => r.clientOutageMs).filter((x) => x !== null);
  console.log(`median over ${results.length} switches: first accepted write ${median(firsts)} ms after the promotion`
    + ` (range ${Math.min(...firsts)}-${Math.max(...firsts)}), clients without a 202 ${median(outages)} ms;`
    + ` lost ${results.reduce((s, r) => s + r.lost, 0)} of ${results.reduce((s, r) => s + r.accepted, 0)} accepted`);
  if (o.json) writeFileSync(o.json, JSON.stringify({ switches: results }, null, 2));
} finally {
  removeWorkDir(dir);
}
process.exit(failed ? 1 : 0);
