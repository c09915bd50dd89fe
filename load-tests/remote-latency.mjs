#!/usr/bin/env node
// Submit-to-claim latency on an idle remote queue: one worker waits in a long poll, single tasks
// are submitted one at a time, and each is timed from just before its POST to the moment the
// waiting claim answers with it (both on this process's clock). Prints p50 and p99 in ms.
// Talks to 127.0.0.1 only; bounded by --count and --timeout-s.
import { parseArgs } from 'node:util';

const { values: o } = parseArgs({ options: {
  url: { type: 'string', default: 'http://127.0.0.1:18181' },
  queue: { type: 'string', default: 'remote-bench' },
  count: { type: 'string', default: '500' },
  warmup: { type: 'string', default: '200' },
  'timeout-s': { type: 'string', default: '120' },
} });
if (!/^http:\/\/(127\.0\.0\.1|localhost)(:\d+)?$/.test(o.url)) throw new Error('only 127.0.0.1');
const deadline = Date.now() + Number(o['timeout-s']) * 1000;
const post = async (path, body) => (await fetch(o.url + path, { method: 'POST',
  headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) })).json();

const samples = [];
const total = Number(o.count) + Number(o.warmup);
for (let i = 0; i < total && Date.now() < deadline; i++) {
  const claim = post(`/api/queues/${o.queue}/claim`, { worker: 'latency', max: 1, waitMs: 10000 });
  // Let the claim reach the node and wait there before the task is sent.
  await new Promise((ok) => setTimeout(ok, 5));
  const sent = process.hrtime.bigint();
  await post('/api/tasks', { type: 'sum', queue: o.queue, payload: { numbers: [1] } });
  const answer = await claim;
  const got = process.hrtime.bigint();
  const task = answer.tasks[0];
  if (!task) continue;
  if (i >= Number(o.warmup)) samples.push(Number(got - sent) / 1e6);
  await post(`/api/tasks/${task.id}/complete`, { lease: task.lease.token, result: {} });
}
samples.sort((a, b) => a - b);
const at = (q) => samples[Math.min(samples.length - 1, Math.floor(q * samples.length))].toFixed(2);
console.log(JSON.stringify({ measured: samples.length, p50: Number(at(0.5)), p99: Number(at(0.99)), max: Number(samples.at(-1).toFixed(2)) }));
