import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createServer, connect } from 'node:net';
import { test } from 'node:test';
import {
  Conflict, DeadlineUnmeetable, Forbidden, IdempotencyKeyReused, InvalidInput, NotFound, QueueFull, ServerTooOld,
  Taskline, Unauthorized, chain, chord, group, problemError, task,
} from '../src/index.js';
import { KEY, READ_KEY, URL, client, reasons, skip, until } from './helpers.js';

test('a task is submitted and waited for over its stream', { skip }, async () => {
  const tl = client();
  const submitted = await tl.submit('sleep', { ms: 20 }, { queue: 'local', maxAttempts: 2, priority: 3 });
  assert.equal(submitted.queue, 'local');
  assert.equal(submitted.replayed, false);
  const done = await tl.wait(submitted.id, { timeoutMs: 30000 });
  assert.equal(done.state, 'succeeded');
  assert.equal(done.result.sleptMs, 20);
  assert.deepEqual(reasons(done), ['submitted', 'claimed', 'succeeded']);
  assert.match(await tl.serverVersion(), /^\d+\.\d+\.\d+/);
});

test('an idempotency key answers a repeat as the first time and refuses another body', { skip }, async () => {
  const tl = client();
  const key = `order-${randomUUID()}`;
  const first = await tl.submit('sleep', { ms: 1 }, { queue: 'local', idempotencyKey: key });
  const again = await tl.submit('sleep', { ms: 1 }, { queue: 'local', idempotencyKey: key });
  assert.equal(again.id, first.id);
  assert.equal(again.replayed, true);
  await assert.rejects(tl.submit('sleep', { ms: 2 }, { queue: 'local', idempotencyKey: key }), IdempotencyKeyReused);
});

test('a delayed task is cancelled, then retried, and runs', { skip }, async () => {
  const tl = client();
  const submitted = await tl.submit('sleep', { ms: 1 }, { queue: 'local', delayMs: 3_600_000 });
  assert.equal(await tl.cancel(submitted.id), 'cancelled');
  await assert.rejects(tl.cancel(submitted.id), Conflict);
  assert.equal(await tl.retry(submitted.id), 'pending');
  assert.equal((await tl.wait(submitted.id, { timeoutMs: 30000 })).state, 'succeeded');
});

test('a batch is all or nothing', { skip }, async () => {
  const tl = client();
  const batch = await tl.submitBatch([0, 1, 2].map((ms) => task('sleep', { ms }, { queue: 'local' })));
  for (const t of batch.tasks) await tl.wait(t.id, { timeoutMs: 30000 });
  assert.equal((await tl.getBatch(batch.batchId)).counts.succeeded, 3);
  await assert.rejects(tl.submitBatch([task('sleep', {}, { queue: 'local' }), task('', {}, { queue: 'local' })]),
    (e) => e instanceof InvalidInput && /type/.test(e.detail));
});

test('a chord ranks what its group found; a chain runs in order', { skip }, async () => {
  const tl = client();
  const members = group(...[30, 10, 20].map((ms) => task('sleep', { ms }, { queue: 'local' })));
  const flow = await tl.flow(chord(members, task('rank', { by: 'sleptMs' }, { queue: 'local' })), { name: 'rank-three' });
  assert.deepEqual(Object.keys(flow.ids).sort(), ['0', '1', '2', 'then']);
  for await (const e of tl.events(flow.flowId, { kind: 'flows' })) void e;
  const done = await tl.getFlow(flow.flowId);
  assert.equal(done.state, 'succeeded');
  assert.deepEqual(done.byKey.then.result.ranking.map((r) => r.key), ['0', '2', '1']);
  const chained = await tl.flow(chain(task('sleep', { ms: 1 }, { queue: 'local' }), task('sleep', { ms: 1 }, { queue: 'local' })));
  for await (const e of tl.events(chained.flowId, { kind: 'flows' })) void e;
  assert.equal((await tl.getFlow(chained.flowId)).state, 'succeeded');
});

// Forwards to the node and cuts each of its first connections after the bytes `cuts` gives for it.
async function cuttingProxy(port, cuts) {
  let connections = 0;
  const server = createServer((client) => {
    const cut = connections < cuts.length ? cuts[connections] : null;
    connections++;
    const upstream = connect(port, '127.0.0.1');
    client.pipe(upstream);
    let passed = 0;
    upstream.on('data', (data) => {
      if (cut !== null && passed + data.length >= cut) {
        client.end(data.subarray(0, cut - passed));
        upstream.destroy();
        return;
      }
      passed += data.length;
      client.write(data);
    });
    upstream.on('end', () => client.end());
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${server.address().port}`, connections: () => connections,
    close: () => server.close() };
}

test('a dropped stream is resumed with Last-Event-ID, missing nothing and repeating nothing', { skip }, async () => {
  const tl = client();
  const flow = await tl.flow(chain(...[1, 2, 3, 4, 5, 6].map(() => task('sleep', { ms: 1 }, { queue: 'local' }))));
  const whole = [];
  for await (const e of tl.events(flow.flowId, { kind: 'flows' })) whole.push(e);
  const size = whole.reduce((n, e) => n + JSON.stringify(e.data).length + 40, 0);
  const proxy = await cuttingProxy(Number(new globalThis.URL(URL).port), [Math.floor(size / 3), Math.floor(size / 2)]);
  try {
    const cut = new Taskline({ url: proxy.url, key: KEY });
    const resumed = [];
    for await (const e of cut.events(flow.flowId, { kind: 'flows' })) resumed.push(e);
    assert.equal(proxy.connections(), 3, 'cut twice and resumed');
    const ids = resumed.filter((e) => e.id !== null).map((e) => e.id);
    assert.equal(new Set(ids).size, ids.length, 'no event twice');
    assert.deepEqual(ids, whole.filter((e) => e.id !== null).map((e) => e.id), 'none missed, in order');
    assert.equal(resumed.at(-1).event, 'end');
  } finally {
    proxy.close();
  }
});

test('refusals are typed errors carrying the problem', { skip }, async () => {
  const tl = client();
  await assert.rejects(tl.get(randomUUID()), (e) => e instanceof NotFound && e.status === 404 && /not-found$/.test(e.problem.type));
  await assert.rejects(tl.submit('sleep', { ms: 1 }, { queue: 'nowhere-such' }), InvalidInput);
  const reader = new Taskline({ url: URL, key: READ_KEY });
  assert.ok((await reader.listTasks({ limit: 1 })).tasks);
  await assert.rejects(reader.submit('sleep', { ms: 1 }, { queue: 'local' }), Forbidden);
  await assert.rejects(new Taskline({ url: URL, key: 'tl_not-a-key' }).get(randomUUID()), Unauthorized);
  await assert.rejects(tl.call({ name: 'futureCall', path: '/api/a-route-of-a-later-version', since: '99.0.0' }),
    (e) => e instanceof ServerTooOld && /99\.0\.0/.test(e.message) && e.server !== null);
});

test('a full queue is QueueFull with its Retry-After, retried only when asked', { skip }, async () => {
  const tl = client();
  for (;;) { // what an earlier run against this node may have left
    const left = [];
    for (const state of ['running', 'pending']) left.push(...(await tl.listTasks({ queue: 'tiny', state, limit: 100 })).tasks);
    if (!left.length) break;
    for (const t of left) {
      if (t.state === 'pending') await tl.cancel(t.id).catch(() => {});
      await tl.wait(t.id, { timeoutMs: 60000 });
    }
  }
  const blocker = await tl.submit('sleep', { ms: 5000 }, { queue: 'tiny' });
  await until(async () => (await tl.get(blocker.id)).state === 'running', 'the blocker to run');
  const waiting = await tl.submit('sleep', { ms: 1 }, { queue: 'tiny' });
  try {
    await assert.rejects(tl.submit('sleep', { ms: 1 }, { queue: 'tiny' }), (e) => e instanceof QueueFull && e.retryAfter !== null);
    const rejected = async () => (await tl.call({ name: 'queues', path: '/api/queues' })).json.queues.find((x) => x.name === 'tiny').rejected;
    const before = await rejected();
    const patient = new Taskline({ url: URL, key: KEY, writeRetries: 2, maxRetryWaitMs: 10 });
    await assert.rejects(patient.submit('sleep', { ms: 1 }, { queue: 'tiny' }), QueueFull);
    assert.equal(await rejected(), before + 3, 'tried three times, as asked');
  } finally {
    await tl.cancel(waiting.id);
    await tl.wait(blocker.id, { timeoutMs: 30000 });
  }
});

test('problem documents map to their classes', () => {
  const e = problemError(429, { type: 'urn:taskline:problem:deadline-unmeetable', estimatedWaitMs: 5017, retryAfterSeconds: 5 });
  assert.ok(e instanceof DeadlineUnmeetable);
  assert.equal(e.estimatedWaitMs, 5017);
  assert.equal(e.retryAfter, 5);
  assert.ok(problemError(409, { type: 'urn:taskline:problem:already-finished' }) instanceof Conflict);
  assert.equal(problemError(418, {}).constructor.name, 'ProblemError');
});

test('wait gives up at its timeout though the stream stays open', { skip }, async () => {
  const tl = client();
  const delayed = await tl.submit('sleep', { ms: 1 }, { queue: 'local', delayMs: 3_600_000 });
  const began = Date.now();
  await assert.rejects(tl.wait(delayed.id, { timeoutMs: 500 }), (e) => e.name === 'TimeoutError');
  assert.ok(Date.now() - began < 5000);
  await tl.cancel(delayed.id);
});
