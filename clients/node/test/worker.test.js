import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Permanent, Snooze, Worker, chain, task } from '../src/index.js';
import { KEY, URL, client, kind, reasons, skip, until } from './helpers.js';

const worker = (options = {}) => new Worker({ url: URL, key: KEY, queue: 'py', concurrency: 20, pollWaitMs: 1000, ...options });

// Serves until `done` holds, then stops and waits for the worker to end.
async function serveUntil(w, done, timeoutMs = 60000) {
  const serving = w.serve();
  try {
    await until(done, 'the tasks to end', timeoutMs);
  } finally {
    w.stop();
    await serving;
  }
}

test('a batch of tasks is claimed, run and handed in', { skip }, async () => {
  const tl = client();
  const type = kind();
  const ids = [];
  for (let start = 0; start < 300; start += 100) {
    const batch = await tl.submitBatch([...Array(100).keys()].map((i) => task(type, { numbers: [start + i, start + i] }, { queue: 'py' })));
    ids.push(...batch.tasks.map((t) => t.id));
  }
  const w = worker({ concurrency: 50, exitWhenIdle: true });
  w.handle(type, async (ctx, payload) => ({ sum: payload.numbers[0] + payload.numbers[1], attempt: ctx.attempt }));
  await w.serve();
  assert.equal(w.counts.succeeded, 300);
  for (const i of [0, 150, 299]) {
    const done = await tl.get(ids[i]);
    assert.equal(done.state, 'succeeded');
    assert.deepEqual(done.result, { sum: 2 * i, attempt: 1 });
    assert.deepEqual(reasons(done), ['submitted', 'claimed', 'succeeded']);
  }
});

test('an error is retried while attempts last; Permanent fails at once; Snooze spends no attempt', { skip }, async () => {
  const tl = client();
  const type = kind();
  const flaky = await tl.submit(type, { do: 'fail' }, { queue: 'py', maxAttempts: 2 });
  const fatal = await tl.submit(type, { do: 'permanent' }, { queue: 'py', maxAttempts: 3 });
  const snoozy = await tl.submit(type, { do: 'snooze' }, { queue: 'py', maxAttempts: 1 });
  const w = worker();
  w.handle(type, async (ctx, payload) => {
    if (payload.do === 'fail') throw new Error('the model timed out');
    if (payload.do === 'permanent') throw new Permanent('the payload cannot be matched');
    if (!ctx.stepDone('snoozed')) {
      await ctx.step('snoozed', () => true);
      throw new Snooze(200);
    }
    return { attempt: ctx.attempt };
  });
  await serveUntil(w, async () => (await Promise.all([flaky, fatal, snoozy].map((t) => tl.get(t.id))))
    .every((t) => ['succeeded', 'failed'].includes(t.state)));
  const [f, p, s] = await Promise.all([flaky, fatal, snoozy].map((t) => tl.get(t.id)));
  assert.equal(f.state, 'failed'); assert.equal(f.attempt, 2);
  assert.match(JSON.stringify(f.error), /the model timed out/);
  assert.equal(p.state, 'failed'); assert.equal(p.attempt, 1);
  assert.equal(s.state, 'succeeded'); assert.deepEqual(s.result, { attempt: 1 });
  assert.ok(reasons(s).includes('snoozed'));
});

test('a task that outlives its lease is heart-beaten with its progress', { skip }, async () => {
  const tl = client();
  const type = kind();
  const submitted = await tl.submit(type, null, { queue: 'short' }); // a 1.5 s lease
  const w = worker({ queue: 'short' });
  w.handle(type, async (ctx) => {
    for (let step = 1; step <= 4; step++) {
      await new Promise((resolve) => setTimeout(resolve, 1000));
      ctx.progress(step * 25, `step ${step}`);
    }
    return { took: 4 };
  });
  const progress = [];
  const following = (async () => {
    for await (const e of tl.events(submitted.id)) if (e.event === 'progress') progress.push(e.data.percent);
  })();
  await serveUntil(w, async () => (await tl.get(submitted.id)).state === 'succeeded');
  await following;
  const done = await tl.get(submitted.id);
  assert.equal(done.attempt, 1);
  assert.deepEqual(reasons(done), ['submitted', 'claimed', 'succeeded'], 'never taken over');
  assert.ok(progress.includes(75) || progress.includes(100), String(progress));
});

test('a cancel aborts the running handler\'s signal', { skip }, async () => {
  const tl = client();
  const type = kind();
  const submitted = await tl.submit(type, null, { queue: 'short' });
  let started, seen = null;
  const running = new Promise((resolve) => { started = resolve; });
  const w = worker({ queue: 'short' });
  w.handle(type, (ctx) => new Promise((resolve, reject) => {
    started();
    ctx.signal.addEventListener('abort', () => { seen = ctx.cancelled; reject(ctx.signal.reason); });
  }));
  const serving = w.serve();
  try {
    await running;
    assert.equal(await tl.cancel(submitted.id), 'cancelling');
    assert.equal((await tl.wait(submitted.id, { timeoutMs: 30000 })).state, 'cancelled');
    assert.equal(seen, true);
  } finally {
    w.stop();
    await serving;
  }
});

test('a durable task sleeps, waits for a signal and an event; a flow child reads its parents', { skip }, async () => {
  const tl = client();
  const type = kind();
  const runs = [];
  const w = worker();
  w.handle(type, async (ctx, payload) => {
    runs.push(ctx.attempt);
    const reserved = await ctx.step('reserve', async () => ({ stock: 'held', id: ctx.stepId('reserve') }));
    await ctx.sleep('nap', 200);
    const paid = await ctx.waitForSignal('payment', { timeoutMs: 60000 });
    const shipped = await ctx.waitForEvent('shipped', 'data.order', payload.order, { timeoutMs: 60000 });
    return { reserved, paid, shipped: shipped.data };
  });
  w.handle(`${type}-child`, async (ctx) => ({ parents: ctx.parents }));
  const order = `o-${type}`;
  const submitted = await tl.submit(type, { order }, { queue: 'py' });
  const flow = await tl.flow(chain(task('sleep', { ms: 1 }, { queue: 'local', key: 'first' }), task(`${type}-child`, null, { queue: 'py' })));
  const serving = w.serve();
  let done;
  try {
    await until(async () => (await tl.get(submitted.id)).wait?.kind === 'signal', 'the signal wait');
    assert.equal((await tl.signal(submitted.id, 'payment', { paid: 12 })).name, 'payment');
    await until(async () => (await tl.get(submitted.id)).wait?.kind === 'event', 'the event wait');
    assert.equal((await tl.sendEvent('shipped', { order, carrier: 'post' }, { id: `ev-${type}` })).delivered, 1);
    done = await tl.wait(submitted.id, { timeoutMs: 30000 });
    for await (const e of tl.events(flow.flowId, { kind: 'flows' })) void e;
  } finally {
    w.stop();
    await serving;
  }
  assert.equal(done.state, 'succeeded');
  assert.deepEqual(done.result, { reserved: { stock: 'held', id: `${submitted.id}:reserve` }, paid: { paid: 12 },
    shipped: { order, carrier: 'post' } });
  assert.ok(reasons(done).includes('suspended') && reasons(done).includes('resumed'));
  assert.deepEqual([...new Set(runs)], [1], 'suspensions spend no attempt');
  assert.equal((await tl.getFlow(flow.flowId)).byKey['1'].result.parents.first.sleptMs, 1);
});

const SCRIPT = `
import { appendFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from ${JSON.stringify(fileURLToPath(new globalThis.URL('../src/index.js', import.meta.url)))};
const [url, key, type, marks, grace] = process.argv.slice(2);
const w = new Worker({ url, key, queue: 'short', concurrency: 4, graceMs: Number(grace), pollWaitMs: 1000 });
w.handle(type, async (ctx, payload) => {
  const a = await ctx.step('a', () => { appendFileSync(join(marks, 'a'), 'ran\\n'); return 'a-done'; });
  if (payload.block) {
    writeFileSync(join(marks, 'blocked-' + ctx.id), '');
    await new Promise(() => {});
  }
  return { a, attempt: ctx.attempt };
});
await w.run();
console.log('stopped', JSON.stringify(w.counts));
`;

function startScript(dir, type, grace = 30000) {
  const script = join(dir, 'worker-script.mjs');
  writeFileSync(script, SCRIPT);
  const child = spawn(process.execPath, [script, URL, KEY, type, dir, String(grace)], { stdio: ['ignore', 'pipe', 'inherit'] });
  child.output = '';
  child.stdout.on('data', (d) => { child.output += d; });
  child.ended = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  return child;
}

test('a step done is not run again after the worker process is killed', { skip }, async () => {
  const tl = client();
  const type = kind();
  const dir = mkdtempSync(join(tmpdir(), 'taskline-node-'));
  const submitted = await tl.submit(type, { block: true }, { queue: 'short' });
  const first = startScript(dir, type);
  await until(() => existsSync(join(dir, `blocked-${submitted.id}`)), 'the step to be journaled');
  first.kill('SIGKILL');
  await first.ended;
  unlinkSync(join(dir, `blocked-${submitted.id}`));
  const second = startScript(dir, type);
  try {
    await until(() => existsSync(join(dir, `blocked-${submitted.id}`)), 'the second run', 60000);
    assert.equal((await tl.get(submitted.id)).attempt, 2);
  } finally {
    second.kill('SIGKILL');
    await second.ended;
  }
  assert.equal(readFileSync(join(dir, 'a'), 'utf8').trim().split('\n').length, 1, 'the step ran once, across the kill');
  await tl.cancel(submitted.id);
});

test('SIGTERM lets running tasks end within the grace and hands the rest back', { skip }, async () => {
  const tl = client();
  const type = kind();
  const dir = mkdtempSync(join(tmpdir(), 'taskline-node-'));
  const blocked = [await tl.submit(type, { block: true }, { queue: 'short' }), await tl.submit(type, { block: true }, { queue: 'short' })];
  const proc = startScript(dir, type, 500);
  await until(() => blocked.every((b) => existsSync(join(dir, `blocked-${b.id}`))), 'both to run');
  const began = Date.now();
  proc.kill('SIGTERM');
  const ended = await proc.ended;
  assert.ok(Date.now() - began < 10000);
  assert.equal(ended.code, 0, proc.output);
  assert.match(proc.output, /"released":2/);
  for (const b of blocked) {
    const t = await tl.get(b.id);
    assert.equal(t.state, 'pending');
    assert.equal(t.attempt, 0, 'handed back, its attempt unspent');
    assert.equal(reasons(t).at(-1), 'released');
    await tl.cancel(b.id);
  }
});

test('a stalled worker\'s late result is fenced', { skip }, async () => {
  const tl = client();
  const type = kind();
  const submitted = await tl.submit(type, null, { queue: 'short' }); // a 1.5 s lease
  const stalled = worker({ queue: 'short', name: 'stalled' });
  stalled.handle(type, async () => {
    // The whole process stalls (a long GC pause, a blocked event loop) past the lease: no heartbeat
    // goes out, the node takes the lease back, and what this run returns comes too late.
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 4000);
    stalled.stop(); // hands the result in and claims nothing more
    return { by: 'stalled' };
  });
  await stalled.serve();
  const afterStall = await tl.get(submitted.id);
  assert.equal(afterStall.state, 'pending', 'the stalled run\'s result was refused');
  const healthy = worker({ queue: 'short', name: 'healthy' });
  healthy.handle(type, async (ctx) => ({ by: 'healthy', attempt: ctx.attempt }));
  await serveUntil(healthy, async () => (await tl.get(submitted.id)).state === 'succeeded');
  const done = await tl.get(submitted.id);
  assert.deepEqual(done.result, { by: 'healthy', attempt: 2 }, 'the late result was fenced, not kept');
});

test('a worker asked to exit when idle exits on an empty queue', { skip }, async () => {
  const w = worker({ exitWhenIdle: true });
  w.handle(kind(), async () => { throw new Error('no task of this type was submitted'); });
  const began = Date.now();
  await w.serve(); // both claim loops find nothing and end
  assert.ok(Date.now() - began < 10000);
});
