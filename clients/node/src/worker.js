// The worker: runs a remote queue's tasks in this process.
//
//   const worker = new Worker({ url: 'http://127.0.0.1:8080', queue: 'node', concurrency: 50 });
//   worker.handle('onboarding', async (ctx, payload) => { ... });
//   await worker.run();
//
// It speaks the node's fast protocol: one `work` call a batch hands in what ended and claims the
// next tasks, on kept-alive connections. A task is heart-beaten only once it outlives a third of
// its lease (with its latest progress, coalesced). A cancel, or a lease lost to a takeover, aborts
// `ctx.signal` (`ctx.cancelled` says so). SIGTERM stops claiming, lets running tasks finish within
// `graceMs` and hands the rest back unspent.
import { hostname } from 'node:os';
import { ConnectionFailed, ProblemError, ServerTooOld, problemError } from './errors.js';
import { BASE_VERSION, versionBelow } from './client.js';
import { MAX_ANSWER_BYTES, baseUrl, checkHeaders, fetchError, q, readText } from './http.js';

const MAX_BATCH = 1000; // the node's bound on one claim
const AHEAD_HORIZON_MS = 50; // work held ready beyond the slots (see Worker.#ahead)
const HAND_IN_BYTES = 512 * 1024; // results a call hands in, at most (the node's default body limit is 1 MiB)
const ITEM_BYTES = 300; // an item's id, lease token and the like
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// Throw to fail the task for good: a retry would not mend it.
export class Permanent extends Error {}

// Throw to run the task again after `ms`, without spending an attempt.
export class Snooze extends Error {
  constructor(ms) { super(`snoozed for ${ms} ms`); this.ms = ms; }
}

// Ends a run at a sleep or a wait that has not happened yet. Not an Error, and kept on the context
// too, so that a handler's catch cannot swallow it.
class Suspend { constructor(body) { this.body = body; } }

class LeaseGone { constructor(where) { this.where = where; } }

export class Context {
  #worker; #halt = null; #abort = new AbortController();
  constructor(worker, task) {
    this.#worker = worker;
    this.id = task.id;
    this.type = task.type;
    this.payload = task.payload;
    this.attempt = task.attempt ?? 1;
    this.maxAttempts = task.maxAttempts ?? 1;
    this.parents = task.parents ?? {};
    this.parentStates = task.parentStates ?? {};
    // Parents too heavy to come inline: {count, bytes, url}; GET url?after=&limit= reads them in pages.
    this.parentsRef = task.parentsRef ?? null;
    this.steps = { ...(task.steps ?? {}) };
    this.compensating = task.compensating === true;
    this.lease = task.lease.token;
    this.cancelRequested = false;
    this.leaseLost = false;
    this.pendingProgress = null;
  }

  // Aborted once someone asks to cancel the task or its lease is lost: pass it to fetch and the like.
  get signal() { return this.#abort.signal; }

  get cancelled() { return this.cancelRequested || this.leaseLost; }

  get halt() { return this.#halt; }

  interrupt(reason) { this.#abort.abort(reason); }

  // Coalesced: the latest goes with the next heartbeat, within a quarter second.
  progress(percent, message) {
    this.pendingProgress = { percent: Math.trunc(percent), ...(message === undefined ? {} : { message }) };
    this.#worker.pokeHeartbeat();
  }

  // The same on every run of the step: hand it to outside services as an idempotency key.
  stepId(name) { return `${this.id}:${name}`; }

  stepDone(name) { return Object.hasOwn(this.steps, name); }

  // Runs fn once for this task, whatever the number of runs: its result is journaled, and a later
  // run gets the journaled result back without running fn.
  async step(name, fn) {
    if (this.#halt) throw this.#halt;
    if (Object.hasOwn(this.steps, name)) return this.steps[name];
    const result = await fn();
    const answer = await this.#worker.writeStep(this, name, result === undefined ? null : result);
    if (answer === null) {
      this.leaseLost = true;
      this.#halt = new LeaseGone(name);
      this.#abort.abort(this.#halt);
      throw this.#halt;
    }
    this.steps[name] = answer.result; // the first result journaled wins, even if not ours
    return answer.result;
  }

  // Ends this run; the task runs again after ms, holding no slot meanwhile.
  async sleep(name, ms) { this.#wait(name, { sleepMs: Math.round(ms) }); }

  async sleepUntil(name, when) {
    this.#wait(name, { until: (when instanceof Date ? when : new Date(when)).toISOString() });
  }

  // The signal's payload ({} if it had none), or null when the wait timed out.
  async waitForSignal(name, { timeoutMs, step } = {}) {
    const done = this.#wait(step ?? name, { signal: name, timeoutMs });
    return done == null || done.timedOut ? null : done.payload ?? {};
  }

  // The event ({ id, name, data }), or null when the wait timed out.
  async waitForEvent(name, field, value, { timeoutMs, step } = {}) {
    const done = this.#wait(step ?? name, { event: { name, field, value }, timeoutMs });
    return done == null || done.timedOut ? null : done.event;
  }

  #wait(step, what) {
    if (this.#halt) throw this.#halt;
    if (Object.hasOwn(this.steps, step)) return this.steps[step]; // the node completed it at the claim
    if (this.compensating) return null; // undoing waits for nothing
    const body = { step };
    for (const [k, v] of Object.entries(what)) if (v !== undefined && v !== null) body[k] = v;
    this.#halt = new Suspend(body);
    throw this.#halt;
  }
}

function leaseSeconds(task) {
  return (Date.parse(task.lease.expiresAt) - Date.now()) / 1000;
}

function describe(e) {
  const text = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
  return text.slice(0, 10000);
}

export class Worker {
  #handlers = new Map();
  #held = new Map(); // claimed and not ended: ready or running
  #ready = [];
  #active = 0;
  #pace = null; // ms a handler takes, averaged
  #done = []; // [complete or fail, the item, its size in bytes (about)]
  #idle = false; // with exitWhenIdle: a claim found nothing and nothing is held
  #finished = false; // the last hand-in is done: the flusher sends nothing more
  #handing = Promise.resolve(); // the flusher's hand-in out, if any
  #stopping = false;
  #inFlight = 0; // work calls out
  #asked = 0; // tasks they asked for
  #polls = new Set(); // the AbortControllers of claims that wait
  #wake = { freed: [], flush: [], beat: [] };
  #pending = new Set();
  #headers;

  constructor({ url = 'http://127.0.0.1:8080', key, queue, concurrency = 10, name, batch = MAX_BATCH, pollWaitMs = 20000,
    graceMs = 30000, exitWhenIdle = false, maxAnswerBytes = MAX_ANSWER_BYTES } = {}) {
    if (!queue) throw new TypeError('queue is required');
    q(queue);
    if (!(concurrency >= 1)) throw new TypeError('concurrency must be at least 1');
    this.url = baseUrl(url);
    Object.assign(this, { queue, concurrency, graceMs, pollWaitMs, exitWhenIdle, maxAnswerBytes });
    this.name = name ?? `${hostname()}-${process.pid}`;
    this.batch = Math.max(1, Math.min(batch, MAX_BATCH));
    this.#headers = { 'Content-Type': 'application/json', Accept: 'application/json', 'User-Agent': 'taskline-node-worker' };
    if (key) this.#headers.Authorization = `Bearer ${key}`;
    checkHeaders(this.#headers); // a key HTTP cannot carry: TypeError here, not at the first call
    this.counts = { succeeded: 0, failed: 0, suspended: 0, snoozed: 0, cancelled: 0, lost: 0, released: 0 };
    this.calls = 0;
  }

  // Registers an async function (ctx, payload) for tasks of `type`.
  handle(type, fn) {
    this.#handlers.set(type, fn);
    return this;
  }

  // Runs until SIGTERM or SIGINT (then stops as stop() does), or, with exitWhenIdle, until a
  // claim finds nothing.
  async run() {
    const onSignal = () => this.stop();
    process.once('SIGTERM', onSignal);
    process.once('SIGINT', onSignal);
    try {
      await this.serve();
    } finally {
      process.off('SIGTERM', onSignal);
      process.off('SIGINT', onSignal);
    }
  }

  // Stops claiming; running tasks get graceMs to end, the rest are handed back unspent.
  stop() {
    this.#stopping = true;
    for (const poll of this.#polls) poll.abort(); // a long poll carries nothing: closing it hands back what it held
    this.#signal('freed'); this.#signal('flush'); this.#signal('beat');
  }

  pokeHeartbeat() { this.#signal('beat'); }

  // Wake-ups are kept until taken (an event set, not a pulse): a signal sent while its loops are
  // busy elsewhere wakes their next wait at once, so no result is left behind a long poll. Every
  // loop waiting on a name wakes (the two claim loops share 'freed').
  #signal(which) {
    const waiting = this.#wake[which];
    this.#wake[which] = [];
    if (waiting.length) for (const wake of waiting) wake();
    else this.#pending.add(which);
  }

  #until(which, ms) {
    if (this.#pending.delete(which)) return Promise.resolve(true);
    return new Promise((resolve) => {
      let timer = null;
      const wake = () => { if (timer) clearTimeout(timer); resolve(true); };
      if (ms !== undefined) {
        timer = setTimeout(() => { this.#wake[which] = this.#wake[which].filter((w) => w !== wake); resolve(false); }, ms);
      }
      this.#wake[which].push(wake);
    });
  }

  async serve() {
    if (this.#handlers.size === 0) throw new TypeError('no handler registered');
    const live = await this.#request('GET', '/health/live');
    const version = live.status === 200 ? live.json?.version ?? null : null;
    if (versionBelow(version, BASE_VERSION)) throw new ServerTooOld('Worker', BASE_VERSION, version);
    let helpersDone = false;
    const helpers = [this.#flusher(() => helpersDone), this.#heartbeats(() => helpersDone)];
    try {
      // Two claim loops: while one call is out (the node writing its results, claiming the next),
      // the other can be too; one at a time, the round trips bounded the pace. One that fails
      // stops the other.
      const loops = [this.#claims(), this.#claims()].map((p) => p.catch((e) => { this.stop(); throw e; }));
      const ended = await Promise.allSettled(loops);
      const failed = ended.find((r) => r.status === 'rejected');
      if (failed) throw failed.reason;
    } finally {
      await this.#finish();
      helpersDone = true;
      this.#signal('flush'); this.#signal('beat');
      await Promise.allSettled(helpers);
    }
  }

  async #request(method, path, body, { timeoutMs = 30000, signal } = {}) {
    const signals = [AbortSignal.timeout(timeoutMs), ...(signal ? [signal] : [])];
    try {
      const answer = await fetch(this.url + path, { method, headers: this.#headers,
        body: body === undefined ? undefined : JSON.stringify(body), signal: AbortSignal.any(signals) });
      const text = await readText(answer, this.maxAnswerBytes);
      let json = null;
      try { json = text ? JSON.parse(text) : null; } catch { json = { title: text.slice(0, 200) }; }
      return { status: answer.status, headers: answer.headers, json };
    } catch (e) {
      throw fetchError(`${method} ${path}`, e);
    }
  }

  async #postOk(path, body, options) {
    const r = await this.#request('POST', path, body, options);
    if (r.status !== 200) {
      const after = r.headers.get('retry-after');
      throw problemError(r.status, r.json, after && /^\d+$/.test(after) ? Number(after) : null);
    }
    return r.json;
  }

  // How many tasks to hold ready beyond the slots: what the handlers get through in 50 ms at their
  // measured pace (none for slow handlers, none before one has ended).
  #ahead() {
    if (this.#pace === null) return 0;
    return Math.min(2 * this.batch, Math.floor(this.concurrency * AHEAD_HORIZON_MS / Math.max(this.#pace, 0.001)));
  }

  #room() { return this.concurrency + this.#ahead() - this.#held.size - this.#asked; }

  async #claims() {
    const path = `/api/queues/${q(this.queue)}/work`;
    const types = [...this.#handlers.keys()].sort();
    let failures = 0;
    while (!this.#stopping && !this.#idle) {
      let room = this.#room();
      if (room <= 0) {
        await this.#until('freed');
        continue;
      }
      if (this.#held.size && room < Math.max(1, Math.floor(this.concurrency / 4))) {
        await this.#until('freed', 5); // little room: let more free up, so one call takes more
        room = this.#room();
        if (room <= 0) continue;
      }
      const [complete, fail, taken] = this.#takeDone();
      const carrying = complete.length + fail.length > 0;
      // A call that carries results does not wait: cutting it short (a stop) could lose them.
      let waitMs = carrying ? 0 : this.pollWaitMs;
      if (this.exitWhenIdle) waitMs = Math.min(waitMs, 1000);
      const body = { worker: this.name, max: Math.max(1, Math.min(room, this.batch)), types, waitMs };
      if (complete.length) body.complete = complete;
      if (fail.length) body.fail = fail;
      const poll = carrying ? null : new AbortController();
      if (poll) this.#polls.add(poll);
      this.#inFlight++;
      this.#asked += body.max;
      let answer;
      try {
        answer = await this.#postOk(path, body, { timeoutMs: waitMs + 30000, signal: poll?.signal });
        failures = 0;
      } catch (e) {
        this.#giveBack(taken);
        if (this.#stopping) break;
        if (e instanceof ConnectionFailed || (e instanceof ProblemError && (e.status === 429 || e.status === 503))) {
          failures++;
          await sleep(e.retryAfter ? Math.min(e.retryAfter * 1000, 5000) : Math.min(100 * 2 ** failures, 5000));
          continue;
        }
        throw e;
      } finally {
        if (poll) this.#polls.delete(poll);
        this.#inFlight--;
        this.#asked -= body.max;
        this.#signal('freed'); // the room it asked for is the other loop's again
      }
      this.calls++;
      this.#answered(answer);
      for (const task of answer.tasks ?? []) this.#hold(task);
      this.#startReady();
      if (!(answer.tasks ?? []).length && !carrying && this.exitWhenIdle && this.#held.size === 0) {
        this.#idle = true;
        this.#signal('freed');
        return;
      }
    }
  }

  // What ended, to hand in: at most a call's worth, MAX_BATCH items and HAND_IN_BYTES of results;
  // and the entries taken, to give back.
  #takeDone() {
    let n = 0, size = 0;
    while (n < this.#done.length && n < MAX_BATCH && (n === 0 || size + this.#done[n][2] <= HAND_IN_BYTES)) size += this.#done[n++][2];
    const taken = this.#done.splice(0, n);
    return [taken.filter(([k]) => k === 'complete').map(([, i]) => i), taken.filter(([k]) => k === 'fail').map(([, i]) => i), taken];
  }

  #giveBack(taken) {
    this.#done.unshift(...taken);
  }

  #answered(answer) {
    for (const item of [...(answer.completed ?? []), ...(answer.failed ?? [])]) {
      if (item.status !== 200 && process.env.TASKLINE_DEBUG) console.error(`task ${item.id}: ${item.status} ${item.detail ?? item.type}`);
    }
  }

  #hold(task) {
    const ctx = new Context(this, task);
    const third = Math.max(0.5, leaseSeconds(task) / 3) * 1000;
    const run = { ctx, started: false, dropped: false, released: false, third, renewAt: Date.now() + third, promise: null };
    this.#held.set(ctx.id, run);
    this.#ready.push(run);
  }

  #startReady() {
    while (this.#active < this.concurrency && this.#ready.length && !this.#stopping) {
      const run = this.#ready.shift();
      if (run.dropped) continue;
      this.#active++;
      run.started = true;
      run.promise = this.#run(run);
    }
  }

  async #run(run) {
    const { ctx } = run;
    const item = { id: ctx.id, lease: ctx.lease };
    let ended = null;
    const began = performance.now();
    try {
      const result = await this.#handlers.get(ctx.type)(ctx, ctx.payload);
      if (ctx.halt) throw ctx.halt; // a suspend the handler caught: the run still ends there
      if (ctx.cancelled) throw ctx.signal.reason ?? new Error('cancelled');
      const value = result === undefined ? null : result;
      const size = JSON.stringify(value).length + ITEM_BYTES; // here, lest a bad one spoil the whole call
      ended = ['complete', { ...item, result: value }, size];
      this.counts.succeeded++;
    } catch (caught) {
      const e = ctx.halt ?? caught;
      if (run.released) {
        // handed back at the end of the grace: another worker has it now
      } else if (e instanceof Suspend) {
        await this.#suspend(ctx, e.body);
      } else if (ctx.leaseLost || e instanceof LeaseGone) {
        this.counts.lost++;
      } else if (ctx.cancelRequested) { // a cancel wins over any end a remote worker writes: cancelled
        ended = ['fail', { ...item, error: 'cancelled while running', retry: false }, ITEM_BYTES];
        this.counts.cancelled++;
      } else if (e instanceof Snooze) {
        ended = ['fail', { ...item, snoozeMs: Math.max(0, Math.round(e.ms)) }, ITEM_BYTES];
        this.counts.snoozed++;
      } else {
        const error = describe(e);
        ended = ['fail', { ...item, error, retry: !(e instanceof Permanent) }, ITEM_BYTES + error.length];
        this.counts.failed++;
      }
    } finally {
      const took = performance.now() - began;
      this.#pace = this.#pace === null ? took : 0.9 * this.#pace + 0.1 * took;
      if (!run.released) {
        this.#held.delete(ctx.id);
        this.#active--;
        if (ended) { this.#done.push(ended); this.#signal('flush'); }
        this.#startReady();
        this.#signal('freed');
      }
    }
  }

  async #suspend(ctx, body) {
    try {
      await this.#postOk(`/api/tasks/${q(ctx.id)}/complete`, { lease: ctx.lease, suspend: body });
      this.counts.suspended++;
    } catch (e) {
      if (process.env.TASKLINE_DEBUG) console.error(`task ${ctx.id}: suspend not written: ${e.message}`);
    }
  }

  // A step journaled: { name, result, first }, or null when the lease was lost.
  async writeStep(ctx, name, result) {
    const r = await this.#request('POST', `/api/tasks/${q(ctx.id)}/steps/${q(name)}`, { lease: ctx.lease, result });
    if (r.status === 409) return null;
    if (r.status !== 200) throw problemError(r.status, r.json);
    return r.json;
  }

  // Hands in what ended while a claim loop's call is out, or while no call can go out (no room until
  // the tasks held ready drain): nothing renews the lease of a task that has ended, so it must not wait.
  async #flusher(over) {
    const path = `/api/queues/${q(this.queue)}/work`;
    while (!over()) {
      await this.#until('flush');
      if (over() || this.#finished) return;
      if (!this.#inFlight && this.#room() > 0 && !this.#stopping) continue; // the claim loops' next call carries them
      await sleep(2); // let the tasks ending together go in one call
      let failed = false;
      this.#handing = (async () => {
        if (this.#finished) return;
        const [complete, fail, taken] = this.#takeDone();
        if (!complete.length && !fail.length) return;
        try {
          this.#answered(await this.#postOk(path, { worker: this.name, max: 0, complete, fail }));
        } catch {
          this.#giveBack(taken);
          failed = true;
        }
      })();
      await this.#handing;
      if (failed) {
        await sleep(500);
        this.#signal('flush');
      }
    }
  }

  async #heartbeats(over) {
    const path = `/api/queues/${q(this.queue)}/heartbeat`;
    while (!over()) {
      const now = Date.now();
      const due = [...this.#held.values()].filter((r) => r.renewAt <= now || r.ctx.pendingProgress);
      if (due.length) {
        const tasks = due.map((r) => {
          const item = { id: r.ctx.id, lease: r.ctx.lease };
          if (r.ctx.pendingProgress) { item.progress = r.ctx.pendingProgress; r.ctx.pendingProgress = null; }
          return item;
        });
        try {
          const answer = await this.#postOk(path, { tasks });
          this.#beaten(due, answer.tasks ?? []);
        } catch (e) {
          if (process.env.TASKLINE_DEBUG) console.error(`heartbeat: ${e.message}`);
        }
      }
      let nearest = now + 1000;
      for (const r of this.#held.values()) nearest = Math.min(nearest, r.renewAt);
      if (await this.#until('beat', Math.max(250, Math.min(1000, nearest - Date.now())))) await sleep(250);
    }
  }

  #beaten(runs, items) {
    const byId = new Map(runs.map((r) => [r.ctx.id, r]));
    for (const item of items) {
      const r = byId.get(item.id);
      if (!r || this.#held.get(item.id) !== r) continue; // ended, or claimed again since
      if (item.status === 200) {
        r.renewAt = Date.now() + r.third;
        if (item.cancelRequested && !r.ctx.cancelRequested) {
          r.ctx.cancelRequested = true;
          this.#interrupt(r, 'cancelled');
        }
      } else if (item.status === 409) {
        r.ctx.leaseLost = true;
        this.#interrupt(r, 'lease lost');
      }
    }
  }

  #interrupt(r, why) {
    r.ctx.interrupt(new Error(why));
    if (r.started) return; // the handler sees ctx.signal; its end is reported as it settles
    r.dropped = true;
    this.#held.delete(r.ctx.id);
    if (r.ctx.cancelRequested && !r.ctx.leaseLost) {
      this.#done.push(['fail', { id: r.ctx.id, lease: r.ctx.lease, error: 'cancelled before it started', retry: false }, ITEM_BYTES]);
      this.#signal('flush');
    }
    this.#signal('freed');
  }

  // Tasks held ready are handed back at once; running ones get graceMs, then are handed back too;
  // everything is handed in.
  async #finish() {
    for (const r of this.#ready.splice(0)) {
      if (r.dropped) continue;
      this.#held.delete(r.ctx.id);
      this.#done.push(['fail', { id: r.ctx.id, lease: r.ctx.lease, release: true }, ITEM_BYTES]);
      this.counts.released++;
    }
    const running = [...this.#held.values()].filter((r) => r.started);
    if (running.length) {
      let timer;
      await Promise.race([Promise.allSettled(running.map((r) => r.promise)),
        new Promise((resolve) => { timer = setTimeout(resolve, this.graceMs); })]);
      clearTimeout(timer);
      for (const r of [...this.#held.values()].filter((x) => x.started)) {
        r.released = true;
        r.ctx.interrupt(new Error('the worker is stopping'));
        this.#held.delete(r.ctx.id);
        this.#done.push(['fail', { id: r.ctx.id, lease: r.ctx.lease, release: true }, ITEM_BYTES]);
        this.counts.released++;
      }
    }
    await this.#handing; // the flusher's hand-in out, which gives back on failure
    this.#finished = true;
    const path = `/api/queues/${q(this.queue)}/work`;
    for (let failures = 0; this.#done.length && failures < 5;) {
      const [complete, fail, taken] = this.#takeDone();
      try {
        this.#answered(await this.#postOk(path, { worker: this.name, max: 0, complete, fail }));
      } catch {
        this.#giveBack(taken);
        failures++;
        await sleep(500);
      }
    }
  }
}
