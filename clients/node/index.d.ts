// Types of @taskline/client.

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export interface TaskOptions {
  key?: string;
  queue?: string;
  priority?: number;
  delayMs?: number;
  runAt?: Date | string;
  maxAttempts?: number;
  timeoutMs?: number;
  concurrencyKey?: string;
  startWithinMs?: number;
  startBy?: Date | string;
  dependsOn?: string[];
  join?: 'all' | 'settled' | 'any';
}

export interface TaskSpec extends TaskOptions { type: string; payload?: Json }
export type Graph = { chain: Array<TaskSpec | Graph> } | { group: Array<TaskSpec | Graph> }
  | { chord: { group: Array<TaskSpec | Graph>; then: TaskSpec | Graph } };

export function task(type: string, payload?: Json, options?: TaskOptions): TaskSpec;
export function chain(...steps: Array<TaskSpec | Graph>): Graph;
export function group(...members: Array<TaskSpec | Graph>): Graph;
export function chord(members: Graph | Array<TaskSpec | Graph>, then: TaskSpec | Graph): Graph;

export interface Transition {
  eventId: number; from: string | null; to: string; reason: string; at: string;
  attempt: number; leaseVersion: number; workerId?: string;
}

export interface Task {
  id: string; queue: string; type: string;
  state: 'pending' | 'running' | 'succeeded' | 'failed' | 'cancelled' | 'expired' | 'blocked';
  priority: number; attempt: number; maxAttempts: number; payload: Json; result: Json; error: Json;
  progress: { percent: number | null; message: string | null };
  createdAt: string; startedAt: string | null; finishedAt: string | null;
  history: Transition[]; steps: Array<{ name: string; result: Json; at: string; attempt: number }>;
  wait: { kind: string; name?: string } | null;
  [field: string]: unknown;
}

export interface Submitted { id: string; state: string; queue: string; type: string; runAt: string; startBy?: string; replayed: boolean }
export interface BatchSubmitted { batchId: string; tasks: Submitted[]; replayed: boolean }
export interface FlowSubmitted {
  flowId: string; state: string; tasks: Array<{ key: string; id: string; state: string }>;
  ids: Record<string, string>; replayed: boolean;
}
export interface Flow {
  id: string; name: string | null; state: string; counts: Record<string, number>;
  tasks: Array<{ key: string; id: string; state: string; result?: Json; error?: Json; [field: string]: unknown }>;
  byKey: Record<string, { key: string; id: string; state: string; result?: Json; error?: Json; [field: string]: unknown }>;
}
export interface StreamEvent { event: string; data: any; id: string | null }

export interface ClientOptions {
  url?: string; key?: string; tenant?: string; timeoutMs?: number;
  writeRetries?: number; readRetries?: number; maxRetryWaitMs?: number;
  /** The most read of an answer's body (64 MiB); past it, AnswerTooLarge. */
  maxAnswerBytes?: number;
  /** The most read of a stream's line or event (16 MiB); past it, AnswerTooLarge. */
  maxEventBytes?: number;
}

export class Taskline {
  constructor(options?: ClientOptions);
  submit(type: string, payload?: Json, options?: TaskOptions & { idempotencyKey?: string }): Promise<Submitted>;
  submitBatch(tasks: TaskSpec[], options?: { idempotencyKey?: string }): Promise<BatchSubmitted>;
  flow(graph: Graph | TaskSpec[], options?: { name?: string; idempotencyKey?: string }): Promise<FlowSubmitted>;
  get(id: string): Promise<Task>;
  getFlow(id: string): Promise<Flow>;
  getBatch(id: string): Promise<{ id: string; counts: Record<string, number>; tasks: Task[] }>;
  listTasks(filter?: { state?: string; queue?: string; type?: string; limit?: number; after?: string }): Promise<{ tasks: Task[]; next: string | null }>;
  wait(id: string, options?: { timeoutMs?: number }): Promise<Task>;
  events(id: string, options?: { kind?: 'tasks' | 'batches' | 'flows'; lastEventId?: string; signal?: AbortSignal }): AsyncGenerator<StreamEvent>;
  cancel(id: string, options?: { compensate?: boolean }): Promise<string>;
  retry(id: string): Promise<string>;
  cancelFlow(id: string): Promise<{ flowId: string; cancelled: number; cancelling: number }>;
  retryFlow(id: string): Promise<{ flowId: string; retried: string[] }>;
  signal(id: string, name: string, payload?: Json, options?: { idempotencyKey?: string }): Promise<{ id: string; task: string; name: string; woke: boolean }>;
  sendEvent(name: string, data?: Json, options?: { id?: string }): Promise<{ id: string; name: string; delivered: number; started: unknown[] }>;
  serverVersion(): Promise<string | null>;
}

export interface WorkerOptions {
  url?: string; key?: string; queue: string; concurrency?: number; name?: string; batch?: number;
  pollWaitMs?: number; graceMs?: number; exitWhenIdle?: boolean; maxAnswerBytes?: number;
}

export class Context {
  readonly id: string; readonly type: string; readonly payload: any; readonly attempt: number;
  readonly maxAttempts: number; readonly parents: Record<string, Json>; readonly parentStates: Record<string, string>;
  readonly steps: Record<string, Json>; readonly compensating: boolean;
  cancelRequested: boolean; leaseLost: boolean;
  readonly signal: AbortSignal;
  readonly cancelled: boolean;
  progress(percent: number, message?: string): void;
  stepId(name: string): string;
  stepDone(name: string): boolean;
  step<T extends Json>(name: string, fn: () => T | Promise<T>): Promise<T>;
  sleep(name: string, ms: number): Promise<void>;
  sleepUntil(name: string, when: Date | string): Promise<void>;
  waitForSignal(name: string, options?: { timeoutMs?: number; step?: string }): Promise<Json | null>;
  waitForEvent(name: string, field: string, value: Json, options?: { timeoutMs?: number; step?: string }): Promise<{ id: string; name: string; data: any } | null>;
}

export class Worker {
  constructor(options: WorkerOptions);
  readonly counts: Record<'succeeded' | 'failed' | 'suspended' | 'snoozed' | 'cancelled' | 'lost' | 'released', number>;
  handle(type: string, fn: (ctx: Context, payload: any) => Promise<Json | void> | Json | void): this;
  run(): Promise<void>;
  serve(): Promise<void>;
  stop(): void;
}

export class Permanent extends Error {}
export class Snooze extends Error { constructor(ms: number); readonly ms: number }

export class TasklineError extends Error {}
export class ConnectionFailed extends TasklineError {}
export class AnswerTooLarge extends ConnectionFailed {}
export class ServerTooOld extends TasklineError { readonly call: string; readonly needs: string; readonly server: string | null }
export class ProblemError extends TasklineError {
  readonly status: number; readonly problem: Record<string, any>; readonly type: string; readonly problemName: string;
  readonly title?: string; readonly detail?: string; readonly retryAfter: number | null;
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
  readonly estimatedStartAt: string | null; readonly estimatedWaitMs: number | null; readonly startBy: string | null;
}
export class Unavailable extends ProblemError {}
export function problemError(status: number, problem: unknown, retryAfter?: number | null): ProblemError;
export const BASE_VERSION: string;
export const MAX_ANSWER_BYTES: number;
export const MAX_EVENT_BYTES: number;
