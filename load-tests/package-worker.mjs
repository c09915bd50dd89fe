#!/usr/bin/env node
// The Node package's worker for remote-drain.mjs: runs `sum` tasks of a remote queue with one
// process and --concurrency slots, until SIGTERM or SIGINT (or, with --exit-when-idle, until a claim
// finds nothing). Start it before `node load-tests/remote-drain.mjs --mode remote --workers 0`.
import { parseArgs } from 'node:util';
import { Permanent, Worker } from '../clients/node/src/index.js';

const { values: o } = parseArgs({ options: {
  url: { type: 'string', default: 'http://127.0.0.1:18181' },
  queue: { type: 'string', default: 'remote-bench' },
  concurrency: { type: 'string', default: '50' },
  'exit-when-idle': { type: 'boolean', default: false },
} });
if (!/^http:\/\/(127\.0\.0\.1|localhost)(:\d+)?$/.test(o.url)) throw new Error('only 127.0.0.1');
const worker = new Worker({ url: o.url, queue: o.queue, concurrency: Number(o.concurrency), name: 'package-worker-node',
  exitWhenIdle: o['exit-when-idle'] });
worker.handle('sum', async (ctx, payload) => {
  if (!Array.isArray(payload?.numbers)) throw new Permanent('payload.numbers must be a list of numbers');
  return { sum: payload.numbers.reduce((a, b) => a + b, 0), count: payload.numbers.length };
});
await worker.run();
