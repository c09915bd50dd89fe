#!/usr/bin/env node
// A Taskline worker in Node.js, built-ins only (fetch): claim tasks of a remote queue, report
// progress with the heartbeat, complete or fail each. Runs `sum` tasks: {"numbers": [...]}.
// Completions go back in batches, one request for all the tasks of a claim.
import { parseArgs } from 'node:util';

const { values: opts } = parseArgs({
  options: {
    url: { type: 'string', default: 'http://127.0.0.1:8080' },
    queue: { type: 'string', default: 'node' },
    worker: { type: 'string', default: 'node-1' },
    max: { type: 'string', default: '100' },
    'exit-when-idle': { type: 'boolean', default: false },
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
for (;;) {
  const claim = await call(`/api/queues/${opts.queue}/claim`, { worker: opts.worker, max: Number(opts.max), waitMs });
  if (claim.status !== 200) throw new Error(`claim refused: ${claim.status} ${JSON.stringify(claim.body)}`);
  if (claim.body.tasks.length === 0 && opts['exit-when-idle']) break;
  const done = [];
  for (const task of claim.body.tasks) {
    const lease = task.lease.token;
    try {
      done.push({ id: task.id, lease, result: run(task) });
    } catch (e) {
      const failed = await call(`/api/tasks/${task.id}/fail`, { lease, error: e.message, retry: false });
      console.log(task.id, failed.status, failed.body.state);
    }
  }
  if (done.length > 0) {
    const answer = await call(`/api/queues/${opts.queue}/complete`, { tasks: done });
    for (const item of answer.body.tasks) console.log(item.id, item.status, item.state ?? item.type);
  }
}
