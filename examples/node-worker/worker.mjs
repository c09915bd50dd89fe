#!/usr/bin/env node
// A Taskline worker in Node.js, built-ins only (fetch, which keeps its connection alive). Runs
// `sum` tasks: {"numbers": [...]}. One round trip a batch: `POST /api/queues/{q}/work` hands in
// the last batch's results (completions and failures) and claims the next. Its tasks end well
// within their lease, so they are never heart-beaten (see ../python-worker/worker.py for a batch
// that may outlive a third of its lease).
import { parseArgs } from 'node:util';

const { values: opts } = parseArgs({
  options: {
    url: { type: 'string', default: 'http://127.0.0.1:8080' },
    queue: { type: 'string', default: 'node' },
    worker: { type: 'string', default: 'node-1' },
    max: { type: 'string', default: '250' }, // most tasks a batch claims: fewer for slow tasks
    'exit-when-idle': { type: 'boolean', default: false },
    verbose: { type: 'boolean', default: false }, // print every task, not only those that did not succeed
  },
});

async function call(path, body) {
  const answer = await fetch(opts.url + path, {
    method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body),
  });
  return { status: answer.status, body: await answer.json() };
}

function run(task) {
  const { numbers } = task.payload;
  if (!Array.isArray(numbers) || !numbers.every((n) => typeof n === 'number')) {
    throw new Error('payload.numbers must be a list of numbers');
  }
  return { sum: numbers.reduce((a, b) => a + b, 0), count: numbers.length };
}

const waitMs = opts['exit-when-idle'] ? 1000 : 20000;
let complete = [];
let fail = [];
for (;;) {
  const work = await call(`/api/queues/${opts.queue}/work`,
    { worker: opts.worker, max: Number(opts.max), waitMs, complete, fail });
  if (work.status !== 200) throw new Error(`work refused: ${work.status} ${JSON.stringify(work.body)}`);
  for (const item of [...work.body.completed, ...work.body.failed]) {
    if (opts.verbose || item.state !== 'succeeded') console.log(item.id, item.status, item.state ?? item.type);
  }
  complete = [];
  fail = [];
  if (work.body.tasks.length === 0 && opts['exit-when-idle']) break;
  for (const task of work.body.tasks) {
    const lease = task.lease.token;
    try {
      complete.push({ id: task.id, lease, result: run(task) });
    } catch (e) {
      fail.push({ id: task.id, lease, error: e.message, retry: false });
    }
  }
}
