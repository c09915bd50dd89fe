// A rolling upgrade under load: a node of the previous release (--old, its jar) serves a journal of
// its own layout and is filled through its API (plain tasks, delayed ones, chains, durable tasks
// waiting for an event, a cancelled and a retried one); then, with submissions going on, a node of
// this release (target/taskline.jar) starts on the same journal and migrates it; both serve for a
// while, the old one stops, the durable tasks' events are sent through the new one, and every task
// accepted by either must end exactly once, every chain must succeed, nothing may answer 5xx. What
// it prints: the migration's time (the new node's start), the old node's submit latency before and
// while the new one migrated, and the checks.
//
//   node load-tests/rolling-upgrade.mjs --old=/path/to/previous/taskline.jar [--rate=100] [--seconds=8]
//
// Traffic goes to 127.0.0.1 only; a PostgreSQL of its own (the system's binaries) is made and removed.
import { Node, Postgres, ports, removeWorkDir, summary, workDir } from './cluster.mjs';

const args = Object.fromEntries(process.argv.slice(2).map((a) => a.replace(/^--/, '').split('=')));
if (!args.old) {
  console.error('usage: node load-tests/rolling-upgrade.mjs --old=<previous release jar> [--rate=100] [--seconds=8]');
  process.exit(2);
}
const rate = Number(args.rate || 100);
const seconds = Math.min(Number(args.seconds || 8), 120);
const sleep = (ms) => new Promise((ok) => setTimeout(ok, ms));

const [pgPort, oldPort, newPort] = ports(56410, 3);
const pg = new Postgres(pgPort);
const dir = workDir();
const config = { queues: { default: { slots: 8, capacity: 100000 } } };
const oldNode = new Node('old', oldPort, pg.url, config, dir);
oldNode.jar = args.old;
const newNode = new Node('new', newPort, pg.url, config, dir);

const accepted = new Map(); // id -> which node took it
const latencies = { before: [], during: [], after: [] };
let phase = 'before';
let fiveXX = 0;
const refused = {}; // phase -> status -> count (429s, and anything else not 202)
let load = true;

async function submit(node, body) {
  const started = performance.now();
  const r = await node.call('POST', '/api/tasks', body);
  if (node === oldNode) latencies[phase].push(performance.now() - started);
  if (r.status >= 500) fiveXX++;
  if (r.status !== 202) {
    refused[phase] = refused[phase] || {};
    refused[phase][r.status] = (refused[phase][r.status] || 0) + 1;
  }
  if (r.status === 202) accepted.set(r.json.id, node.name);
  return r;
}

async function steady(nodes) {
  let i = 0;
  while (load) {
    const tick = performance.now();
    const node = nodes()[i % nodes().length];
    submit(node, { type: 'sleep', payload: { ms: 5 } }).catch(() => {
      refused[phase] = refused[phase] || {};
      refused[phase].unreachable = (refused[phase].unreachable || 0) + 1;
    });
    i++;
    await sleep(Math.max(0, 1000 / rate - (performance.now() - tick)));
  }
}

async function main() {
  pg.start();
  await oldNode.start();
  // What the previous release holds when the upgrade begins.
  for (let i = 0; i < 500; i++) await submit(oldNode, { type: 'sleep', payload: { ms: 1 } });
  for (let i = 0; i < 50; i++) await submit(oldNode, { type: 'sleep', delayMs: 4000 });
  const chains = [];
  for (let i = 0; i < 20; i++) {
    const r = await oldNode.call('POST', '/api/flows', { chain: [0, 1, 2].map((k) => ({ key: `s${k}`, type: 'sleep', payload: { ms: 5 } })) });
    if (r.status !== 202) throw new Error(`flow: ${r.status} ${r.text}`);
    chains.push(r.json.flowId);
    for (const t of r.json.tasks) accepted.set(t.id, 'old');
  }
  const durable = [];
  for (let i = 0; i < 20; i++) {
    const r = await submit(oldNode, { type: 'onboarding', payload: { userId: `u${i}`, dayMs: 1000 } });
    durable.push(r.json.id);
  }
  const cancelled = (await submit(oldNode, { type: 'sleep', delayMs: 600000 })).json.id;
  await oldNode.call('POST', `/api/tasks/${cancelled}/cancel`, {});

  const nodes = [oldNode];
  const loop = steady(() => nodes);
  await sleep(2000);
  phase = 'during';
  const migrateStart = performance.now();
  await newNode.start();
  const migrateMs = performance.now() - migrateStart;
  phase = 'after';
  nodes.push(newNode);
  await sleep(seconds * 1000);
  // As a load balancer drains a node before it is stopped.
  nodes.splice(0, 1);
  await sleep(200);
  await oldNode.stop();
  await sleep(2000);
  load = false;
  await loop;

  // The durable tasks go on through the new node: their event, then their sleep.
  for (let i = 0; i < durable.length; i++) {
    await newNode.call('POST', '/api/events', { name: 'user.login', data: { userId: `u${i}` } });
  }
  const retried = (await newNode.call('POST', `/api/tasks/${cancelled}/retry`, {})).status;

  const deadline = Date.now() + 90000;
  let open = [...accepted.keys()];
  const states = {};
  while (open.length && Date.now() < deadline) {
    const still = [];
    for (const id of open) {
      const r = await newNode.call('GET', `/api/tasks/${id}`);
      if (r.status !== 200) { still.push(id); continue; }
      if (['succeeded', 'failed', 'cancelled', 'expired'].includes(r.json.state)) {
        states[r.json.state] = (states[r.json.state] || 0) + 1;
        const ends = r.json.history.filter((e) => ['succeeded', 'failed', 'cancelled', 'expired'].includes(e.to)).length;
        if (ends !== 1 && id !== cancelled) throw new Error(`${id} ended ${ends} times: ${r.text}`);
      } else {
        still.push(id);
      }
    }
    open = still;
    if (open.length) await sleep(500);
  }
  const chainStates = [];
  for (const id of chains) chainStates.push((await newNode.call('GET', `/api/flows/${id}`)).json.state);
  const layout = pg.psql('taskline', "SELECT legacy_until FROM journal_layout")[0][0];
  const result = {
    accepted: accepted.size,
    byNode: { old: [...accepted.values()].filter((n) => n === 'old').length, new: [...accepted.values()].filter((n) => n === 'new').length },
    notEnded: open.length,
    states,
    chainsSucceeded: chainStates.filter((s) => s === 'succeeded').length + ' of ' + chains.length,
    retriedAfterUpgrade: retried,
    fiveXX,
    refused,
    migrationMs: Math.round(migrateMs),
    oldNodeSubmitMs: { before: summary(latencies.before), whileMigrating: summary(latencies.during), after: summary(latencies.after) },
    legacyUntil: layout,
  };
  console.log(JSON.stringify(result, null, 2));
  if (open.length || fiveXX || chainStates.some((s) => s !== 'succeeded')) process.exitCode = 1;
}

try {
  await main();
} finally {
  load = false;
  await oldNode.stop().catch(() => {});
  await newNode.stop().catch(() => {});
  pg.remove();
  removeWorkDir(dir);
}
