// Durable steps for a Taskline remote worker in Node.js (18+), built-ins only.
//
// A handler may run several times for one task: a retry, a takeover after a crash, a resume after
// a sleep or a wait. So it is written as named steps whose results the server journals: on every
// run the steps already done return their journaled result at once and only the rest run. Sleeps
// and waits end the run *suspended* (no slot held, no attempt spent); the server hands the task out
// again when the time comes or the signal or event arrives. The code between steps is replayed on
// every run, so it must be deterministic: anything that reads the clock or the world goes in a step.

// Thrown at a sleep or wait that has not happened yet; the runner turns it into a complete with
// `suspend`. Not an Error, so a handler's `catch (e) { if (e instanceof Error) ... }` lets it pass.
class Suspend { constructor(body) { this.body = body; } }
// The lease was taken over (we stalled past it): someone else runs the task now, write nothing.
class LeaseLost { constructor(where) { this.where = where; } }

// fetch (undici) keeps its connections alive and reuses them: the long-poll claims, the step writes
// and the completions of a worker share a few sockets, so no step pays a TCP handshake. The body is
// always read to its end, or the socket could not go back to the pool.
async function post(url, key, path, body) {
  const headers = { 'Content-Type': 'application/json', ...(key ? { Authorization: `Bearer ${key}` } : {}) };
  const answer = await fetch(url + path, { method: 'POST', headers, body: JSON.stringify(body) });
  const text = await answer.text();
  return { status: answer.status, body: text ? JSON.parse(text) : {} };
}

class Context {
  #post; #lease; #steps; #halt = null; // #halt: the Suspend or LeaseLost this run ended with
  constructor(post, task) {
    this.taskId = task.id;
    this.payload = task.payload;
    this.attempt = task.attempt;
    this.cancelled = task.compensating === true; // a compensating cancel: undo, then return
    this.cancelRequested = false; // a plain cancel asked for while this run goes on
    this.#post = (path, body) => post(`/api/tasks/${task.id}${path}`, { lease: this.#lease, ...body });
    this.#lease = task.lease.token;
    this.#steps = { ...(task.steps ?? {}) }; // the journal as of this run's claim
  }

  // The same on every run of the step: the idempotency key to hand outside services, since a step
  // that dies between its effect and its journal write runs again.
  stepId(name) { return `${this.taskId}:${name}`; }

  async step(name, fn) {
    this.halted();
    if (Object.hasOwn(this.#steps, name)) return this.#steps[name];
    const result = (await fn()) ?? null; // undefined is no JSON: journaled as null
    this.halted();
    const answer = await this.#post(`/steps/${encodeURIComponent(name)}`, { result });
    if (answer.status === 409) throw (this.#halt = new LeaseLost(name));
    if (answer.status !== 200) throw new Error(`step ${name}: ${answer.status} ${JSON.stringify(answer.body)}`);
    // The first result journaled wins (a run we lost the race to may have written it): return that.
    return (this.#steps[name] = answer.body.result);
  }

  async sleep(name, ms) { this.#wait(name, { sleepMs: ms }); }
  async sleepUntil(name, date) { this.#wait(name, { until: new Date(date).toISOString() }); }

  // The signal's payload ({} if it had none), or null when the wait timed out.
  async waitForSignal(name, { timeoutMs, step = name } = {}) {
    const done = this.#wait(step, { signal: name, timeoutMs });
    return done == null || done.timedOut ? null : done.payload ?? {};
  }

  // The event ({id, name, data}) whose `field` (a dotted path, "data.…") equals `value`, or null
  // when the wait timed out.
  async waitForEvent(name, field, value, { timeoutMs, step = name } = {}) {
    const done = this.#wait(step, { event: { name, field, value }, timeoutMs });
    return done == null || done.timedOut ? null : done.event;
  }

  // Every wait is a step the server completes (at a claim): journaled → its result; not yet → end
  // the run suspended. The server keeps the first deadline journaled for a step, so a sleep reached
  // again after a crash does not start over.
  #wait(step, what) {
    this.halted();
    if (Object.hasOwn(this.#steps, step)) return this.#steps[step];
    if (this.cancelled) return null; // undoing must not wait for anything
    throw (this.#halt = new Suspend({ step, ...what })); // JSON drops an undefined timeoutMs
  }

  // Progress for the task's event streams; it renews the lease too (as the runner's own beat does).
  async progress(percent, message) { return this.beat({ percent, message }); }

  async beat(progress) {
    const answer = await this.#post('/heartbeat', progress ? { progress } : {});
    if (answer.status === 409) throw (this.#halt ??= new LeaseLost('heartbeat'));
    if (answer.status === 200) this.cancelRequested ||= answer.body.cancelRequested === true;
  }

  // Throws again what ended this run, so a handler that caught a Suspend or a LeaseLost by mistake
  // neither runs further steps nor completes the task.
  halted() { if (this.#halt) throw this.#halt; }
}

// One run of one task, ended by exactly one write: complete (a result or a suspend) or fail. Never
// rejects: a run that cannot reach the server leaves its lease to lapse, and the task runs again.
async function attempt(post, task, handler) {
  const ctx = new Context(post, task);
  const left = Date.parse(task.lease.expiresAt) - Date.now(); // beat three times a lease
  const timer = setInterval(() => ctx.beat().catch(() => {}), left > 3000 ? Math.min(left / 3, 10000) : 1000);
  const path = `/api/tasks/${task.id}`;
  try {
    let body;
    try {
      const result = (await handler(ctx)) ?? null;
      ctx.halted();
      body = { result };
    } catch (e) {
      try { ctx.halted(); } catch (halt) { e = halt; } // what ended the run wins over what followed
      if (e instanceof LeaseLost) return; // quietly: the task is someone else's now
      if (!(e instanceof Suspend)) {
        // Retried while attempts last (the steps done stay done); a handler sets e.retry = false
        // for an error a retry will not mend.
        const failed = await post(path + '/fail', { lease: task.lease.token, error: String(e?.message ?? e), retry: e?.retry !== false });
        if (failed.status !== 409) console.log(task.id, failed.status, failed.body.state ?? failed.body.type, String(e?.message ?? e));
        return;
      }
      body = { suspend: e.body };
    }
    clearInterval(timer); // no beat may race the complete
    const done = await post(path + '/complete', { lease: task.lease.token, ...body });
    if (done.status === 409) return; // lost just before the end: the new holder completes it
    console.log(task.id, done.status, done.body.state ?? done.body.type, ...(body.suspend ? [`at ${body.suspend.step}`] : []));
  } catch (e) {
    console.error(task.id, 'unreachable:', e.message);
  } finally {
    clearInterval(timer);
  }
}

// Claims tasks of a remote queue (a long poll) and runs up to `max` at once: a run mostly waits on
// the network, so one process keeps many going. With exitWhenIdle, stops after a claim that found
// nothing while nothing ran (a suspended task is not ours to wait for).
export async function run({ url = 'http://127.0.0.1:8080', queue = 'node', handlers, worker = 'node-1', max = 8, exitWhenIdle = false, key }) {
  const call = (path, body) => post(url, key, path, body);
  const running = new Set();
  for (;;) {
    if (running.size >= max) { await Promise.race(running); continue; }
    let claim;
    try {
      claim = await call(`/api/queues/${queue}/claim`, {
        worker, max: max - running.size, waitMs: exitWhenIdle ? 1000 : 20000, types: Object.keys(handlers) });
    } catch (e) { // the server restarting: try again shortly
      console.error('claim:', e.message);
      await new Promise((wake) => setTimeout(wake, 1000));
      continue;
    }
    if (claim.status !== 200) throw new Error(`claim refused: ${claim.status} ${JSON.stringify(claim.body)}`);
    if (claim.body.tasks.length === 0 && running.size === 0 && exitWhenIdle) break;
    for (const task of claim.body.tasks) {
      const one = attempt(call, task, handlers[task.type]).finally(() => running.delete(one));
      running.add(one);
    }
  }
}
