// The OpenAPI document is the contract: every route this package calls is in it, with its method,
// so that a route renamed on the server fails here and not for a user.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { URL, skip } from './helpers.js';

const ID = '01a23c5f-2dfa-7000-8ff1-4338d4dbf79a';
// Every route the client and the worker call (src/client.js, src/worker.js), as they build them.
const CALLED = [
  ['POST', '/api/tasks'], ['POST', '/api/batches'], ['POST', '/api/flows'], ['GET', `/api/tasks/${ID}`],
  ['GET', `/api/flows/${ID}`], ['GET', `/api/batches/${ID}`], ['GET', '/api/tasks'], ['POST', `/api/tasks/${ID}/cancel`],
  ['POST', `/api/tasks/${ID}/retry`], ['POST', `/api/flows/${ID}/cancel`], ['POST', `/api/flows/${ID}/retry`],
  ['POST', `/api/tasks/${ID}/signals/payment`], ['POST', '/api/events'], ['GET', '/health/live'],
  ['GET', `/api/tasks/${ID}/events`], ['GET', `/api/batches/${ID}/events`], ['GET', `/api/flows/${ID}/events`],
  ['POST', '/api/queues/node/work'], ['POST', '/api/queues/node/heartbeat'], ['POST', `/api/tasks/${ID}/complete`],
  ['POST', `/api/tasks/${ID}/steps/reserve`],
];

test('every route the package calls is in the server\'s contract', { skip }, async () => {
  const document = await (await fetch(`${URL}/openapi.json`)).json();
  const table = Object.entries(document.paths).flatMap(([template, operations]) => Object.keys(operations)
    .map((method) => [method.toUpperCase(), new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`)]));
  const missing = CALLED.filter(([m, p]) => !table.some(([tm, tp]) => tm === m && tp.test(p)));
  assert.deepEqual(missing, []);
});

test('the list above is every route the sources call', () => {
  const sources = ['../src/client.js', '../src/worker.js']
    .map((f) => readFileSync(fileURLToPath(new globalThis.URL(f, import.meta.url)), 'utf8')).join('\n');
  const literal = [...sources.matchAll(/[`'](\/(?:api|health)\/[^`'?]*)[`'?]/g)].map((m) => m[1]);
  const shapes = new Set(CALLED.map(([, p]) => p.replace(ID, 'X').replace(/\/(payment|reserve|node)(\/|$)/, '/X$2')));
  shapes.add('/api/X/X/events'); // the three kinds of stream, listed above
  const unlisted = literal.map((p) => p.replace(/\$\{[^}]+\}/g, 'X')).filter((p) => !shapes.has(p) && !p.includes('a-route'));
  assert.deepEqual([...new Set(unlisted)], []);
});
