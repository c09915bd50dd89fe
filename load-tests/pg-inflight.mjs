#!/usr/bin/env node
// How much a node asks of PostgreSQL at once: samples pg_stat_activity every --every-ms (through one
// psql session, so a sample costs a statement, not a process) for --seconds, and reports, over the
// samples in which any of the database's client backends was busy (autovacuum left out), how many
// were busy at once and on which of the node's statements (named by the first words of their text),
// and the most seen running one statement at once (how many of a kind the node had in flight). Run it beside a drain (for
// example `node load-tests/remote-drain.mjs --mode local`) on the database the node uses:
//
//   node load-tests/pg-inflight.mjs --pg postgresql://postgres@127.0.0.1:55432/postgres --db tlr [--seconds 10] [--every-ms 5]
//
// Talks to 127.0.0.1 only; stops by itself.
import { parseArgs } from 'node:util';
import { execFileSync } from 'node:child_process';

const { values: o } = parseArgs({ options: {
  pg: { type: 'string', default: 'postgresql://postgres@127.0.0.1:5432/postgres' },
  db: { type: 'string', default: 'taskline' },
  seconds: { type: 'string', default: '10' },
  'every-ms': { type: 'string', default: '5' },
} });
if (!/^postgres(ql)?:\/\/[^@]*@(127\.0\.0\.1|localhost)[:/]/.test(o.pg)) throw new Error('only 127.0.0.1');
if (!/^\w+$/.test(o.db)) throw new Error('a plain database name');
const seconds = Math.min(600, Number(o.seconds));
const everyMs = Math.max(1, Math.min(1000, Number(o['every-ms'])));
const samples = Math.ceil((seconds * 1000) / everyMs);

// One line per busy backend per sample: the sample's number and the statement's first words.
const sample = (i) => `SELECT ${i}, regexp_replace(left(query, 60), '\\s+', ' ', 'g') FROM pg_stat_activity
  WHERE datname = '${o.db}' AND state = 'active' AND pid <> pg_backend_pid() AND backend_type = 'client backend';
SELECT pg_sleep(${everyMs / 1000});`;
const script = Array.from({ length: samples }, (_, i) => sample(i)).join('\n');
const out = execFileSync('psql', ['-X', '-q', '-A', '-t', '-F', '\t', o.pg, '-f', '-'],
  { input: script, encoding: 'utf8', maxBuffer: 1 << 28, timeout: (seconds + 60) * 1000 });

const busy = new Map(); // sample -> count
const byStatement = new Map(); // first words -> busy sightings
const together = new Map(); // sample + first words -> how many ran it at once
for (const line of out.split('\n')) {
  const [i, text] = line.split('\t');
  if (text === undefined) continue;
  busy.set(i, (busy.get(i) ?? 0) + 1);
  byStatement.set(text, (byStatement.get(text) ?? 0) + 1);
  together.set(`${i}\t${text}`, (together.get(`${i}\t${text}`) ?? 0) + 1);
}
// Per statement, the most backends seen running it in one sample: how many of a kind were in flight.
const mostAtOnce = new Map();
for (const [key, n] of together) {
  const text = key.slice(key.indexOf('\t') + 1);
  mostAtOnce.set(text, Math.max(mostAtOnce.get(text) ?? 0, n));
}
const counts = [...busy.values()].sort((a, b) => a - b);
const mean = counts.reduce((s, c) => s + c, 0) / Math.max(1, counts.length);
console.log(JSON.stringify({
  samples,
  busySamples: counts.length,
  busyShare: +(counts.length / samples).toFixed(3),
  meanBusyWhenBusy: +mean.toFixed(2),
  maxBusy: counts.at(-1) ?? 0,
  statements: Object.fromEntries([...byStatement.entries()].sort((a, b) => b[1] - a[1]).slice(0, 12)),
  mostAtOnce: Object.fromEntries([...byStatement.entries()].sort((a, b) => b[1] - a[1]).slice(0, 12)
    .map(([text]) => [text, mostAtOnce.get(text)])),
}, null, 2));
