#!/usr/bin/env node
// Deadlines under overload: offers --rate single submissions a second for --seconds to one node's
// queue --queue, each a sleep task of --ms that must start within --within ms (0: no deadline, the
// same load for comparison), more than the queue's slots can run. Waits until every accepted task
// has ended, reads each one back, and reports what became of the offered work: accepted or refused
// (and why), succeeded or expired, and for those that ran, their wait from creation to start on the
// journal's clock; "late" counts any that started after its deadline (exits 1 if one did). Talks to
// 127.0.0.1 only, bounded in tasks and time, stops by itself.
//
//   node load-tests/deadlines.mjs --url http://127.0.0.1:18181 --queue deadline --rate 400 --within 1000
//   node load-tests/deadlines.mjs --url http://127.0.0.1:18181 --queue deadline --rate 400 --within 0
import { parseArgs } from 'node:util';
import { call as callAt, localOnly, micros } from './local.mjs';

const { values: o } = parseArgs({ options: {
  url: { type: 'string', default: 'http://127.0.0.1:18181' },
  queue: { type: 'string', default: 'deadline' },
  rate: { type: 'string', default: '400' },
  seconds: { type: 'string', default: '20' },
  ms: { type: 'string', default: '50' },
  within: { type: 'string', default: '1000' },
} });
localOnly(o.url);
const rate = Number(o.rate), seconds = Number(o.seconds), ms = Number(o.ms), within = Number(o.within);
const total = rate * seconds;
const deadline = Date.now() + (seconds + 300) * 1000;

const call = (method, path, body) => callAt(o.url, method, path, body);

// Offered on a fixed schedule, not one after the other: a refusal is fast, and a closed loop would
// offer more the more it is refused.
const answers = [];
const started = performance.now();
for (let i = 0; i < total; i++) {
  const due = started + (i * 1000) / rate;
  const now = performance.now();
  if (due > now + 1) await new Promise((ok) => setTimeout(ok, due - now));
  const body = { type: 'sleep', queue: o.queue, payload: { ms, steps: 1 } };
  if (within > 0) body.startWithinMs = within;
  answers.push(call('POST', '/api/tasks', body));
}
const results = await Promise.all(answers);
const offeredFor = (performance.now() - started) / 1000;
const refused = {};
const ids = [];
for (const r of results) {
  if (r.status === 202) ids.push(r.json.id);
  else {
    const why = `${r.status} ${(r.json && r.json.type || '').split(':').pop()}`;
    refused[why] = (refused[why] || 0) + 1;
  }
}

const ended = ['succeeded', 'failed', 'cancelled', 'expired'];
const states = {};
const waits = [];
let late = 0, next = 0;
await Promise.all(Array.from({ length: 8 }, async () => {
  while (next < ids.length) {
    const id = ids[next++];
    let task;
    for (;;) {
      task = (await call('GET', `/api/tasks/${id}`)).json;
      if (ended.includes(task.state)) break;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${id}`);
      await new Promise((ok) => setTimeout(ok, 200));
    }
    states[task.state] = (states[task.state] || 0) + 1;
    if (task.startedAt) {
      waits.push((micros(task.startedAt) - micros(task.createdAt)) / 1000);
      if (task.startBy && micros(task.startedAt) > micros(task.startBy)) late++;
    }
  }
}));
waits.sort((a, b) => a - b);
const pct = (p) => waits.length ? Math.round(waits[Math.min(waits.length - 1, Math.floor(waits.length * p))]) : null;
console.log(JSON.stringify({
  queue: o.queue, offered: total, offeredPerSecond: Math.round(total / offeredFor), withinMs: within, ms,
  accepted: ids.length, refused, ended: states,
  waitMs: { p50: pct(0.5), p99: pct(0.99), max: waits.length ? Math.round(waits[waits.length - 1]) : null },
  late,
}));
if (late > 0) process.exit(1);
