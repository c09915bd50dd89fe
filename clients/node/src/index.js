// @taskline/client: a client to submit and follow work, and a worker to run it (Node 20+, no
// runtime dependency).
export { Taskline, BASE_VERSION } from './client.js';
export { MAX_ANSWER_BYTES, MAX_EVENT_BYTES } from './http.js';
export { Worker, Context, Permanent, Snooze } from './worker.js';
export { task, chain, group, chord } from './flows.js';
export {
  TasklineError, ConnectionFailed, AnswerTooLarge, ServerTooOld, ProblemError, BadRequest, InvalidInput, Unauthorized,
  Forbidden, NotFound, Conflict, LeaseLost, IdempotencyKeyReused, Refused, QueueFull, TenantLimit, DeadlineUnmeetable,
  Unavailable, problemError,
} from './errors.js';
