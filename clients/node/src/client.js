// The client: every call of the node's API that a back end makes, as promises.
//
//   const tl = new Taskline({ url: 'http://127.0.0.1:8080' });
//   const t = await tl.submit('qualification-match', payload, { queue: 'matching' });
//   console.log((await tl.wait(t.id, { timeoutMs: 60000 })).result);
import { AnswerTooLarge, ConnectionFailed, ProblemError, ServerTooOld, problemError } from './errors.js';
import { task } from './flows.js';
import {
  MAX_ANSWER_BYTES, MAX_EVENT_BYTES, baseUrl, checkHeaders, fetchError, headerValueOk, q, readText,
} from './http.js';

// The server version that has every call of this package; a call added later names its own.
export const BASE_VERSION = '0.1.0';
const STREAM_SILENCE_MS = 45000;

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

export function versionTuple(version) {
  if (!version) return [];
  const out = [];
  for (const part of String(version).split('-')[0].split('.')) {
    if (!/^\d+$/.test(part)) break;
    out.push(Number(part));
  }
  return out;
}

export function versionBelow(version, needs) {
  const a = versionTuple(version), b = versionTuple(needs);
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const x = a[i] ?? -1, y = b[i] ?? 0;
    if (x !== y) return x < y;
  }
  return false;
}

function routeMissing(status, problem) {
  return status === 405 || (status === 404 && String(problem?.detail ?? '').startsWith('no resource at'));
}

function retryAfterSeconds(headers) {
  const value = headers.get('retry-after');
  return value && /^\d+(\.\d+)?$/.test(value) ? Number(value) : null;
}

export class Taskline {
  // The key lives here only, in a private field: util.inspect, console.log and JSON.stringify of a
  // client do not show it.
  #headers;

  // url: the node; key: a Bearer key where the node wants one; tenant: for a key that sees every
  // tenant; writeRetries (0: a full queue is the caller's to see) and readRetries (3): how often a
  // 429 or 503 is tried again, after its Retry-After (at most maxRetryWaitMs); maxAnswerBytes and
  // maxEventBytes: the most read of an answer, and of an event of a stream (AnswerTooLarge past it).
  constructor({ url = 'http://127.0.0.1:8080', key, tenant, timeoutMs = 30000, writeRetries = 0, readRetries = 3,
    maxRetryWaitMs = 30000, maxAnswerBytes = MAX_ANSWER_BYTES, maxEventBytes = MAX_EVENT_BYTES } = {}) {
    this.url = baseUrl(url);
    this.timeoutMs = timeoutMs;
    Object.assign(this, { writeRetries, readRetries, maxRetryWaitMs, maxAnswerBytes, maxEventBytes });
    this.#headers = { Accept: 'application/json', 'User-Agent': 'taskline-node' };
    if (key) this.#headers.Authorization = `Bearer ${key}`;
    if (tenant) this.#headers['Taskline-Tenant'] = tenant;
    checkHeaders(this.#headers); // a key or tenant HTTP cannot carry: TypeError here, not at a call
    this.tenant = tenant ?? null;
    this.version = undefined;
  }

  // One call: { name, method, path, body?, headers?, write, since? } -> { status, headers, json }.
  async call(spec) {
    const { name, method = 'GET', path, body, write = method !== 'GET', since = BASE_VERSION } = spec;
    const headers = checkHeaders({ ...this.#headers, ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}),
      ...(spec.headers ?? {}) });
    const retries = write ? this.writeRetries : this.readRetries;
    for (let attempt = 0; ; attempt++) {
      let answer, text;
      try {
        answer = await fetch(this.url + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body),
          signal: AbortSignal.timeout(this.timeoutMs) });
        text = await readText(answer, this.maxAnswerBytes);
      } catch (e) {
        throw fetchError(name, e);
      }
      let json = null;
      try { json = text ? JSON.parse(text) : null; } catch { json = { title: text.slice(0, 200) }; }
      if (answer.ok) return { status: answer.status, headers: answer.headers, json };
      if ((answer.status === 429 || answer.status === 503) && attempt < retries) {
        const after = retryAfterSeconds(answer.headers) ?? Math.min(2 ** attempt, 10);
        await sleep(Math.min(after * 1000, this.maxRetryWaitMs));
        continue;
      }
      if (routeMissing(answer.status, json)) throw new ServerTooOld(name, since, await this.serverVersion());
      throw problemError(answer.status, json, retryAfterSeconds(answer.headers));
    }
  }

  // The node's version (null for a node too old to tell).
  async serverVersion() {
    if (this.version === undefined) {
      const { json } = await this.call({ name: 'serverVersion', path: '/health/live' });
      this.version = json?.version ?? null;
    }
    return this.version;
  }

  static #idempotency(key) { return key ? { 'Idempotency-Key': key } : {}; }

  static #replayed(r) { return r.headers.get('idempotent-replayed') === 'true'; }

  // A task -> { id, state, queue, type, runAt, startBy?, replayed }. Options as the node names
  // them: queue, priority, delayMs or runAt, maxAttempts, timeoutMs, concurrencyKey, startWithinMs
  // or startBy; and idempotencyKey.
  async submit(type, payload, { idempotencyKey, ...options } = {}) {
    const r = await this.call({ name: 'submit', method: 'POST', path: '/api/tasks', body: task(type, payload, options),
      headers: Taskline.#idempotency(idempotencyKey) });
    return { ...r.json, replayed: Taskline.#replayed(r) };
  }

  // All or nothing -> { batchId, tasks, replayed }.
  async submitBatch(tasks, { idempotencyKey } = {}) {
    const r = await this.call({ name: 'submitBatch', method: 'POST', path: '/api/batches', body: { tasks },
      headers: Taskline.#idempotency(idempotencyKey) });
    return { ...r.json, replayed: Taskline.#replayed(r) };
  }

  // chain/group/chord, or an array of task(..., { key, dependsOn, join }) -> { flowId, state, ids, tasks, replayed }.
  async flow(graph, { name, idempotencyKey } = {}) {
    const body = Array.isArray(graph) ? { tasks: graph } : { ...graph };
    if (name !== undefined) body.name = name;
    const r = await this.call({ name: 'flow', method: 'POST', path: '/api/flows', body,
      headers: Taskline.#idempotency(idempotencyKey) });
    const ids = Object.fromEntries((r.json.tasks ?? []).map((t) => [t.key, t.id]));
    return { ...r.json, ids, replayed: Taskline.#replayed(r) };
  }

  async get(id) { return (await this.call({ name: 'get', path: `/api/tasks/${q(id)}` })).json; }

  // A flow, its tasks by key in `byKey`.
  async getFlow(id) {
    const flow = (await this.call({ name: 'getFlow', path: `/api/flows/${q(id)}` })).json;
    return { ...flow, byKey: Object.fromEntries((flow.tasks ?? []).map((t) => [t.key, t])) };
  }

  async getBatch(id) { return (await this.call({ name: 'getBatch', path: `/api/batches/${q(id)}` })).json; }

  async listTasks(filter = {}) {
    const query = new URLSearchParams(Object.entries(filter).filter(([, v]) => v !== undefined && v !== null));
    const path = '/api/tasks' + (query.size ? `?${query}` : '');
    return (await this.call({ name: 'listTasks', path })).json;
  }

  // The state the task is in now: cancelled, or cancelling / compensating for one that runs.
  async cancel(id, { compensate = false } = {}) {
    return (await this.call({ name: 'cancel', method: 'POST', path: `/api/tasks/${q(id)}/cancel`,
      body: compensate ? { compensate: true } : {} })).json.state;
  }

  async retry(id) {
    return (await this.call({ name: 'retry', method: 'POST', path: `/api/tasks/${q(id)}/retry`, body: {} })).json.state;
  }

  async cancelFlow(id) {
    return (await this.call({ name: 'cancelFlow', method: 'POST', path: `/api/flows/${q(id)}/cancel`, body: {} })).json;
  }

  async retryFlow(id) {
    return (await this.call({ name: 'retryFlow', method: 'POST', path: `/api/flows/${q(id)}/retry`, body: {} })).json;
  }

  // To the task's wait of that name (kept until one takes it) -> { id, task, name, woke }.
  async signal(id, name, payload, { idempotencyKey } = {}) {
    return (await this.call({ name: 'signal', method: 'POST', path: `/api/tasks/${q(id)}/signals/${q(name)}`,
      body: payload === undefined ? {} : { payload }, headers: Taskline.#idempotency(idempotencyKey) })).json;
  }

  // To the tasks waiting for it, and a task per trigger -> { id, name, delivered, started }.
  async sendEvent(name, data, { id } = {}) {
    const body = { name, ...(data === undefined ? {} : { data }), ...(id === undefined ? {} : { id }) };
    return (await this.call({ name: 'sendEvent', method: 'POST', path: '/api/events', body })).json;
  }

  // A task's (or a batch's or flow's: kind) events as they happen, to its `end`: { event, data, id }.
  // A dropped connection is resumed with Last-Event-ID: nothing is missed, nothing comes twice.
  async *events(id, { kind = 'tasks', lastEventId = null, signal } = {}) {
    if (!['tasks', 'batches', 'flows'].includes(kind)) throw new TypeError('kind must be tasks, batches or flows');
    const path = `/api/${kind}/${q(id)}/events`;
    let last = lastEventId, failures = 0, retryMs = 2000;
    for (;;) {
      const headers = { ...this.#headers, Accept: 'text/event-stream', ...(last !== null ? { 'Last-Event-ID': last } : {}) };
      // A connection silent for STREAM_SILENCE_MS (the node sends a comment every 15 s) is half-open: dropped.
      const silence = new AbortController();
      let timer = setTimeout(() => silence.abort(), STREAM_SILENCE_MS);
      const quiet = () => { clearTimeout(timer); timer = setTimeout(() => silence.abort(), STREAM_SILENCE_MS); };
      let answer = null, wait = null;
      try {
        answer = await fetch(this.url + path, { headers, signal: signal ? AbortSignal.any([signal, silence.signal]) : silence.signal });
        if (!answer.ok) {
          const text = await readText(answer, this.maxAnswerBytes);
          let json = null;
          try { json = text ? JSON.parse(text) : null; } catch { /* not JSON */ }
          if (answer.status !== 429 && answer.status !== 503) throw problemError(answer.status, json, retryAfterSeconds(answer.headers));
          wait = Math.min((retryAfterSeconds(answer.headers) ?? 2) * 1000, this.maxRetryWaitMs); // a node restarting
        } else {
          let event = 'message', data = [], eventId = null, buffer = '', size = 0;
          const decoder = new TextDecoder();
          const tooLarge = (what) => new AnswerTooLarge(`${what} of the stream passed maxEventBytes (${this.maxEventBytes}): cut`);
          for await (const chunk of answer.body) {
            quiet();
            buffer += decoder.decode(chunk, { stream: true });
            let newline;
            const lines = [];
            while ((newline = buffer.indexOf('\n')) >= 0) {
              // A lone CR ends a line too (the WHATWG rules), so that no field carries one.
              lines.push(...buffer.slice(0, newline).replace(/\r$/, '').split('\r'));
              buffer = buffer.slice(newline + 1);
            }
            if (buffer.length > this.maxEventBytes) throw tooLarge('a line');
            for (const line of lines) {
              if (line === '') {
                if (data.length || event !== 'message') {
                  const text = data.join('\n');
                  let parsed = text;
                  try { parsed = text ? JSON.parse(text) : null; } catch { /* as text */ }
                  if (eventId !== null) {
                    last = eventId;
                    failures = 0; // the stream moved on: a new drop starts a new count
                  }
                  yield { event, data: parsed, id: eventId };
                  if (event === 'end') return;
                }
                event = 'message'; data = []; eventId = null; size = 0;
              } else if (!line.startsWith(':')) {
                size += line.length;
                if (size > this.maxEventBytes) throw tooLarge('an event');
                const colon = line.indexOf(':');
                const field = colon < 0 ? line : line.slice(0, colon);
                let value = colon < 0 ? '' : line.slice(colon + 1);
                if (value.startsWith(' ')) value = value.slice(1);
                if (field === 'event') event = value;
                else if (field === 'data') data.push(value);
                // Sent back as Last-Event-ID: one a header cannot carry is ignored (the WHATWG rules
                // ignore one with NUL), lest a reconnection fail or send what the node slipped in.
                else if (field === 'id') eventId = headerValueOk(value) ? value : eventId;
                else if (field === 'retry' && /^\d+$/.test(value)) retryMs = Number(value);
              }
            }
          }
          // An event the connection cut short is dropped here: it comes again, by its id.
        }
      } catch (e) {
        if (signal?.aborted || e instanceof ProblemError || e instanceof AnswerTooLarge) throw e;
      } finally {
        clearTimeout(timer);
        silence.abort(); // whatever ended the stream here, its connection is closed now
      }
      failures++;
      if (failures > this.readRetries + 5) throw new ConnectionFailed(`events of ${id}: the stream keeps dropping`);
      await sleep(wait ?? (failures > 2 ? Math.min(retryMs, 2000) : 50));
    }
  }

  // The task once it has finished (succeeded, failed, cancelled or expired), followed over its
  // event stream; a TimeoutError past timeoutMs.
  async wait(id, { timeoutMs } = {}) {
    const controller = new AbortController();
    const timer = timeoutMs === undefined ? null : setTimeout(() => controller.abort(), timeoutMs);
    try {
      for await (const e of this.events(id, { signal: controller.signal })) {
        if (e.event === 'end') break; // not a terminal state seen: a retried task's history has one
      }
    } catch (e) {
      if (controller.signal.aborted) {
        const timeout = new Error(`task ${id} did not finish within ${timeoutMs} ms`);
        timeout.name = 'TimeoutError';
        throw timeout;
      }
      throw e;
    } finally {
      if (timer) clearTimeout(timer);
    }
    return this.get(id);
  }
}
