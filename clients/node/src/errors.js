// Typed errors. Every answer the node refuses is an RFC 9457 problem document
// (urn:taskline:problem:<name>); each name has its class here, carrying the document.
const PREFIX = 'urn:taskline:problem:';

export class TasklineError extends Error {
  constructor(message) { super(message); this.name = new.target.name; }
}

// The node could not be reached, or cut the connection before it answered.
export class ConnectionFailed extends TasklineError {}

// The node's answer passed a bound of this package (maxAnswerBytes, maxEventBytes, Node's bound on
// header size): the connection was closed without reading the rest.
export class AnswerTooLarge extends ConnectionFailed {}

// The node lacks a call this package makes: upgrade the server.
export class ServerTooOld extends TasklineError {
  constructor(call, needs, server) {
    super(`${call} needs a Taskline server of version ${needs} or later; this one is ${server ?? 'older than 0.1.0 (it tells no version)'}`);
    Object.assign(this, { call, needs, server: server ?? null });
  }
}

// The node refused the request: `problem` is the whole document, `retryAfter` seconds (429, 503).
export class ProblemError extends TasklineError {
  constructor(status, problem, retryAfter = null) {
    const type = String(problem?.type ?? '');
    const name = type.startsWith(PREFIX) ? type.slice(PREFIX.length) : type;
    super(`${status} ${name}: ${problem?.detail ?? problem?.title ?? ''}`.replace(/: $/, ''));
    Object.assign(this, { status, problem, type, problemName: name, title: problem?.title, detail: problem?.detail, retryAfter });
  }
}
export class BadRequest extends ProblemError {}
export class InvalidInput extends ProblemError {}
export class Unauthorized extends ProblemError {}
export class Forbidden extends ProblemError {}
export class NotFound extends ProblemError {}
export class Conflict extends ProblemError {}
export class LeaseLost extends Conflict {}
export class IdempotencyKeyReused extends Conflict {}
export class Refused extends ProblemError {}
export class QueueFull extends Refused {}
export class TenantLimit extends Refused {}
export class DeadlineUnmeetable extends Refused {
  get estimatedStartAt() { return this.problem.estimatedStartAt ?? null; }
  get estimatedWaitMs() { return this.problem.estimatedWaitMs ?? null; }
  get startBy() { return this.problem.startBy ?? null; }
}
export class Unavailable extends ProblemError {}

const BY_NAME = {
  'lease-lost': LeaseLost, 'idempotency-key-reused': IdempotencyKeyReused, 'queue-full': QueueFull,
  'scheduled-full': QueueFull, 'tenant-limit': TenantLimit, 'deadline-unmeetable': DeadlineUnmeetable,
};
const BY_STATUS = {
  400: BadRequest, 401: Unauthorized, 403: Forbidden, 404: NotFound, 409: Conflict, 413: InvalidInput,
  422: InvalidInput, 429: Refused, 503: Unavailable,
};

// The error for an answer: by the problem's name first, else by its status.
export function problemError(status, problem, retryAfter = null) {
  const doc = problem && typeof problem === 'object' ? problem : { title: String(problem ?? '') };
  if (retryAfter == null && typeof doc.retryAfterSeconds === 'number') retryAfter = doc.retryAfterSeconds;
  const type = String(doc.type ?? '');
  const name = type.startsWith(PREFIX) ? type.slice(PREFIX.length) : type;
  const Cls = BY_NAME[name] ?? BY_STATUS[status] ?? ProblemError;
  return new Cls(status, doc, retryAfter);
}
