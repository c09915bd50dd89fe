"""The asyncio worker: runs a remote queue's tasks in this process.

    worker = Worker("http://127.0.0.1:8080", queue="python", concurrency=50)

    @worker.handler("qualification-match")
    async def match(ctx, payload):
        ctx.progress(50, "scoring")
        return score(payload)

    worker.run()

It speaks the node's fast protocol: one `work` call a batch hands in what ended and claims the next
tasks, on kept-alive connections. A task is heart-beaten only once it outlives a third of its lease
(with its latest progress, coalesced). A cancel, or a lease lost to a takeover, cancels the handler
(`asyncio.CancelledError`; `ctx.cancelled` says it for code that runs in a thread). SIGTERM stops
claiming, lets running tasks finish within `grace` seconds and hands the rest back unspent."""
from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import inspect
import json
import logging
import os
import re
import signal
import socket
import time
from datetime import datetime, timezone
from typing import Any, Awaitable, Callable

from . import _calls
from ._http import MAX_ANSWER_BYTES, AsyncTransport, Endpoint, Response, check_headers
from .errors import ConnectionFailed, ProblemError, ServerTooOld, answer_error
from .flows import instant, millis

log = logging.getLogger("taskline.worker")

# The server version whose protocol this worker speaks (snooze and release on fail among it).
NEEDS_SERVER = "0.1.0"
MAX_BATCH = 1000  # the node's bound on one claim
CLAIMERS = 2  # claim loops (see Worker.serve)
HAND_IN_BYTES = 512 * 1024  # results a call hands in, at most (the node's default body limit is 1 MiB)
ITEM_BYTES = 300  # an item's id, lease token and the like; an error is bounded at 10,000 characters
AHEAD_HORIZON = 0.05  # seconds of work held ready beyond the slots (see Worker._ahead)


class Permanent(Exception):
    """Raise to fail the task for good: a retry would not mend it."""


class Snooze(Exception):
    """Raise to run the task again after `seconds`, without spending an attempt."""

    def __init__(self, seconds: float):
        super().__init__(f"snoozed for {seconds} s")
        self.seconds = seconds


class _Suspend(BaseException):
    """Unwinds a handler at a sleep or wait that has not happened yet (a BaseException, so that a
    handler's `except Exception` does not swallow it); the attempt ends suspended."""

    def __init__(self, body: dict):
        super().__init__(body["step"])
        self.body = body


class Context:
    """What a handler sees of its task. Methods that talk to the node are coroutines; a sync
    handler (`def`) gets a `SyncContext` with the same methods, blocking."""

    def __init__(self, worker: "Worker", task: dict):
        self._worker = worker
        self.id: str = task["id"]
        self.type: str = task["type"]
        self.payload: Any = task.get("payload")
        self.attempt: int = task.get("attempt", 1)
        self.max_attempts: int = task.get("maxAttempts", 1)
        self.parents: dict[str, Any] = task.get("parents") or {}
        self.parent_states: dict[str, str] = task.get("parentStates") or {}
        # Parents too heavy to come inline: {count, bytes, url}; GET url?after=&limit= reads them in pages.
        self.parents_ref: dict[str, Any] | None = task.get("parentsRef")
        self.steps: dict[str, Any] = dict(task.get("steps") or {})
        self.compensating: bool = bool(task.get("compensating"))
        self.lease: str = task["lease"]["token"]
        self.cancel_requested = False
        self.lease_lost = False
        self.handed_back = False
        self._progress: dict | None = None

    @property
    def cancelled(self) -> bool:
        """True once someone asked to cancel the task, its lease was lost, or the worker stopping
        handed it back (past the grace): stop, nothing more is kept. A handler in a thread cannot be
        interrupted; it should look at this between its steps."""
        return self.cancel_requested or self.lease_lost or self.handed_back

    def progress(self, percent: int, message: str | None = None) -> None:
        """Reports progress; coalesced (the latest goes with the next heartbeat, within a quarter second)."""
        self._progress = {"percent": int(percent), **({"message": message} if message is not None else {})}
        self._worker._poke_heartbeat()

    def step_id(self, name: str) -> str:
        """The same on every run of the step: hand it to outside services as an idempotency key."""
        return f"{self.id}:{name}"

    def step_done(self, name: str) -> bool:
        return name in self.steps

    async def step(self, name: str, fn: Callable[[], Any]) -> Any:
        """Runs `fn` (sync or async) once for this task, whatever the number of runs: its result is
        journaled, and a later run gets the journaled result back without running it."""
        if name in self.steps:
            return self.steps[name]
        result = fn()
        if inspect.isawaitable(result):
            result = await result
        return await self._record(name, result)

    async def _record(self, name: str, result: Any) -> Any:
        answer = await self._worker._step(self, name, result)
        self.steps[name] = answer["result"]  # the first result journaled wins, even if not ours
        return answer["result"]

    async def sleep(self, name: str, seconds: float) -> None:
        """Ends this run; the task runs again after `seconds`, holding no slot meanwhile."""
        self._sleep(name, seconds)

    async def sleep_until(self, name: str, when: datetime) -> None:
        self._sleep_until(name, when)

    async def wait_for_signal(self, name: str, timeout: float | None = None, step: str | None = None) -> Any:
        """The signal's payload ({} if it had none), or None when the wait timed out."""
        return self._wait_for_signal(name, timeout, step)

    async def wait_for_event(self, name: str, field: str, value: Any, timeout: float | None = None,
                             step: str | None = None) -> Any:
        """The event ({"id", "name", "data"}), or None when the wait timed out."""
        return self._wait_for_event(name, field, value, timeout, step)

    # Waits need no round trip: done, the node handed their outcome in `steps` at the claim; not
    # done, they end the run. So the blocking context shares these.

    def _sleep(self, name, seconds):
        self._wait(name, {"sleepMs": millis(seconds, "seconds")})

    def _sleep_until(self, name, when):
        self._wait(name, {"until": instant(when, "when")})

    def _wait_for_signal(self, name, timeout, step):
        done = self._wait(step or name, {"signal": name, "timeoutMs": millis(timeout, "timeout")})
        return None if done is None or done.get("timedOut") else done.get("payload") or {}

    def _wait_for_event(self, name, field, value, timeout, step):
        event = {"name": name, "field": field, "value": value}
        done = self._wait(step or name, {"event": event, "timeoutMs": millis(timeout, "timeout")})
        return None if done is None or done.get("timedOut") else done.get("event")

    def _wait(self, step: str, what: dict):
        if step in self.steps:  # the node completed the wait when it claimed this run
            return self.steps[step]
        if self.compensating:  # undoing waits for nothing
            return None
        raise _Suspend({"step": step, **{k: v for k, v in what.items() if v is not None}})


class SyncContext:
    """A `Context` for a handler that runs in a thread: the same methods, blocking."""

    def __init__(self, ctx: Context, loop: asyncio.AbstractEventLoop):
        self._ctx, self._loop = ctx, loop

    def __getattr__(self, name):
        return getattr(self._ctx, name)

    def progress(self, percent: int, message: str | None = None) -> None:
        self._loop.call_soon_threadsafe(self._ctx.progress, percent, message)

    def step(self, name, fn):
        if name in self._ctx.steps:
            return self._ctx.steps[name]
        result = fn()  # here, in the handler's thread
        return asyncio.run_coroutine_threadsafe(self._ctx._record(name, result), self._loop).result()

    def sleep(self, name, seconds):
        self._ctx._sleep(name, seconds)

    def sleep_until(self, name, when):
        self._ctx._sleep_until(name, when)

    def wait_for_signal(self, name, timeout=None, step=None):
        return self._ctx._wait_for_signal(name, timeout, step)

    def wait_for_event(self, name, field, value, timeout=None, step=None):
        return self._ctx._wait_for_event(name, field, value, timeout, step)


class _Run:
    """A claimed task: held ready until a slot frees (`task` None), then running."""
    __slots__ = ("ctx", "task", "renew_at", "third", "dropped", "begun")

    def __init__(self, ctx: Context, third: float):
        self.ctx, self.task, self.third = ctx, None, third
        self.renew_at = time.monotonic() + third
        self.dropped = False  # cancelled or lost while held ready: never started
        self.begun = False  # its coroutine has begun (a task cancelled before that never runs its finally)


def _lease_seconds(task: dict) -> float:
    """How long the claim's lease is good for (Java writes up to 9 fractional digits, Python reads 6)."""
    text = re.sub(r"(\.\d{6})\d+", r"\1", task["lease"]["expiresAt"]).replace("Z", "+00:00")
    return (datetime.fromisoformat(text) - datetime.now(timezone.utc)).total_seconds()


class Worker:
    def __init__(self, url: str = "http://127.0.0.1:8080", *, queue: str, key: str | None = None,
                 concurrency: int = 10, name: str | None = None, batch: int = MAX_BATCH, poll_wait: float = 20.0,
                 grace: float = 30.0, threads: int | None = None, exit_when_idle: bool = False,
                 max_answer_bytes: int = MAX_ANSWER_BYTES):
        if concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        _calls.quote(queue)  # a queue no path can name: ValueError here
        self.queue, self.concurrency, self.grace = queue, concurrency, grace
        self.name = name or f"{socket.gethostname()}-{os.getpid()}"
        self.batch = max(1, min(batch, MAX_BATCH))
        self.poll_wait = poll_wait
        self.exit_when_idle = exit_when_idle
        self._endpoint = Endpoint(url)
        self._headers = {"Content-Type": "application/json", "Accept": "application/json",
                         "User-Agent": "taskline-python-worker"}
        if key:
            self._headers["Authorization"] = f"Bearer {key}"
        check_headers(self._headers)  # a key HTTP cannot carry: ValueError here, not at the first call
        self.max_answer_bytes = max_answer_bytes
        self._handlers: dict[str, Callable] = {}
        self._threads = threads
        self._held: dict[str, _Run] = {}  # claimed and not ended: ready or running
        self._ready: collections.deque[_Run] = collections.deque()
        self._active = 0  # running handlers
        self._pace = None  # seconds a handler takes, averaged (None: none ended yet)
        self._done: list[tuple[str, dict, int]] = []  # (complete or fail, the item, its size in bytes, about)
        self._stopping = False
        self._asked = self._in_flight = 0  # tasks asked for, and work calls, now out
        self._idle = False  # with exit_when_idle: a claim found nothing and nothing is held
        self._finished = False  # the last hand-in is done: the flusher sends nothing more
        self._handing_in = None
        self._polling: set[asyncio.Task] = set()  # claim loops in a long poll (carrying nothing)
        self._loop: asyncio.AbstractEventLoop | None = None
        self.calls = self.claimed = 0
        self.counts = {"succeeded": 0, "failed": 0, "suspended": 0, "snoozed": 0, "cancelled": 0, "lost": 0,
                       "released": 0}

    # --- handlers ---

    def handler(self, type: str):
        """Registers the decorated function (async, or plain to run in a thread) for tasks of `type`."""
        def register(fn):
            self.handle(type, fn)
            return fn
        return register

    def handle(self, type: str, fn: Callable[..., Any | Awaitable[Any]]) -> "Worker":
        self._handlers[type] = fn
        return self

    # --- running ---

    def run(self) -> None:
        """Runs until SIGTERM or SIGINT (then stops as `stop` does), or, with `exit_when_idle`, until
        a claim finds nothing."""
        asyncio.run(self._main_with_signals())

    async def _main_with_signals(self):
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            try:
                loop.add_signal_handler(sig, self.stop)
            except (NotImplementedError, RuntimeError):  # not the main thread, or no signals here
                pass
        await self.serve()

    def stop(self) -> None:
        """Stops claiming; running tasks get `grace` seconds to end, the rest are handed back unspent."""
        self._stopping = True
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._wake_all)

    async def serve(self) -> None:
        if not self._handlers:
            raise ValueError("no handler registered")
        self._loop = asyncio.get_running_loop()
        self._freed, self._to_flush, self._beat = asyncio.Event(), asyncio.Event(), asyncio.Event()
        self._handing_in = asyncio.Lock()  # one hand-in at a time beside the claims: the flusher's or the last
        self._http = AsyncTransport(self._endpoint, timeout=self.poll_wait + 30, max_idle=8,
                                    max_answer=self.max_answer_bytes)
        self._pool = concurrent.futures.ThreadPoolExecutor(self._threads or min(32, self.concurrency),
                                                           thread_name_prefix="taskline-handler")
        helpers: list[asyncio.Task] = []
        try:
            await self._check_server()
            helpers = [asyncio.create_task(self._flusher()), asyncio.create_task(self._heartbeats())]
            # Two claim loops: while one call is out (the node writing its results, claiming the
            # next), the other can be too; one at a time, the round trips bounded the pace.
            claims = [asyncio.create_task(self._claims()) for _ in range(CLAIMERS)]
            try:
                for claim in asyncio.as_completed(claims):
                    try:
                        await claim
                    except asyncio.CancelledError:
                        if not self._stopping:
                            raise
            except BaseException:
                self.stop()  # one loop failed: the other claims no more either
                raise
            finally:
                for claim in claims:
                    claim.cancel()
                await asyncio.gather(*claims, return_exceptions=True)
                await self._finish()
        finally:
            for h in helpers:
                h.cancel()
            await asyncio.gather(*helpers, return_exceptions=True)
            self._pool.shutdown(wait=False, cancel_futures=True)
            await self._http.close()

    async def _check_server(self):
        r = await self._request("GET", "/health/live", None)
        version = (r.json() or {}).get("version") if r.status == 200 else None
        if _calls.version_tuple(version) < _calls.version_tuple(NEEDS_SERVER):
            raise ServerTooOld("Worker", NEEDS_SERVER, version)

    def _wake_all(self):
        self._freed.set()
        self._to_flush.set()
        self._beat.set()
        for claim in list(self._polling):
            claim.cancel()  # a long poll carries nothing: closing it hands back what it held

    def _poke_heartbeat(self):
        self._beat.set()

    async def _request(self, method: str, path: str, body: Any, timeout: float | None = None) -> Response:
        data = None if body is None else json.dumps(body, separators=(",", ":")).encode()
        try:
            return await self._http.request(method, path, data, self._headers, timeout)
        except (OSError, asyncio.TimeoutError, asyncio.IncompleteReadError) as e:
            raise ConnectionFailed(f"{method} {path}: {e!r}") from e

    async def _post_ok(self, path: str, body: Any, timeout: float | None = None) -> Any:
        r = await self._request("POST", path, body, timeout)
        if r.status != 200:
            raise _problem(r)
        return r.json()

    # --- the claim loop ---

    def _ahead(self) -> int:
        """How many tasks to hold ready beyond the slots: what the handlers get through in 50 ms at
        their measured pace (none for slow handlers, whose leases would run while they wait; none
        before a handler has ended), so that the next batch is claimed while this one runs."""
        if self._pace is None:
            return 0
        return min(2 * self.batch, int(self.concurrency * AHEAD_HORIZON / max(self._pace, 1e-6)))

    def _room(self) -> int:
        return self.concurrency + self._ahead() - len(self._held) - self._asked

    async def _claims(self):
        path = f"/api/queues/{_calls.quote(self.queue)}/work"
        types = sorted(self._handlers)
        failures = 0
        while not self._stopping and not self._idle:
            room = self._room()
            if room <= 0:
                await self._freed.wait()
                self._freed.clear()
                continue
            if self._held and room < max(1, self.concurrency // 4):
                # Little room: let more free up, so that one call hands in and claims more.
                try:
                    await asyncio.wait_for(self._freed.wait(), 0.005)
                except asyncio.TimeoutError:
                    pass
                self._freed.clear()
                room = self._room()
                if room <= 0:
                    continue
            complete, fail, taken = self._take_done()
            carrying = bool(complete or fail)
            # A call that carries results does not wait: cutting it short (a stop) could lose them.
            wait_ms = 0 if carrying else int(self.poll_wait * 1000)
            if self.exit_when_idle:
                wait_ms = min(wait_ms, 1000)
            body = {"worker": self.name, "max": max(1, min(room, self.batch)), "types": types, "waitMs": wait_ms}
            if complete:
                body["complete"] = complete
            if fail:
                body["fail"] = fail
            self._asked += body["max"]
            self._in_flight += 1
            if not carrying:
                self._polling.add(asyncio.current_task())
            try:
                answer = await self._post_ok(path, body, timeout=wait_ms / 1000 + 30)
                failures = 0
            except ConnectionFailed as e:
                self._give_back(taken)
                failures += 1
                log.warning("work call failed (%s); again in %.1f s", e, min(2 ** failures * 0.1, 5))
                await asyncio.sleep(min(2 ** failures * 0.1, 5))
                continue
            except ProblemError as e:
                if e.status in (429, 503):
                    self._give_back(taken)
                    await asyncio.sleep(min(e.retry_after or 1.0, 5.0))
                    continue
                raise
            except BaseException:
                self._give_back(taken)
                raise
            finally:
                self._asked -= body["max"]
                self._in_flight -= 1
                self._polling.discard(asyncio.current_task())
                self._freed.set()  # the room it asked for is the other loop's again
            self._answered(answer)
            tasks = answer.get("tasks") or []
            self.calls += 1
            self.claimed += len(tasks)
            for task in tasks:
                self._hold(task)
            self._start_ready()
            if not tasks and not carrying and self.exit_when_idle and not self._held:
                self._idle = True
                self._freed.set()
                return

    def _take_done(self) -> tuple[list, list, list]:
        """What ended, to hand in: at most a call's worth, MAX_BATCH items and HAND_IN_BYTES of
        results (the node's body limit is 1 MiB by default); and the entries taken, to give back."""
        n, size = 0, 0
        while n < len(self._done) and n < MAX_BATCH and (n == 0 or size + self._done[n][2] <= HAND_IN_BYTES):
            size += self._done[n][2]
            n += 1
        taken, self._done = self._done[:n], self._done[n:]
        complete = [item for kind, item, _ in taken if kind == "complete"]
        fail = [item for kind, item, _ in taken if kind == "fail"]
        return complete, fail, taken

    def _give_back(self, taken: list):
        self._done[:0] = taken

    def _answered(self, answer: dict):
        for item in (answer.get("completed") or []) + (answer.get("failed") or []):
            if item.get("status") != 200:
                log.info("task %s: %s %s", item.get("id"), item.get("status"), item.get("detail") or item.get("type"))

    # --- running a task ---

    def _hold(self, task: dict):
        ctx = Context(self, task)
        run = _Run(ctx, max(0.5, _lease_seconds(task) / 3))
        self._held[ctx.id] = run
        self._ready.append(run)

    def _start_ready(self):
        while self._active < self.concurrency and self._ready and not self._stopping:
            run = self._ready.popleft()
            if run.dropped:
                continue
            self._active += 1
            run.task = asyncio.create_task(self._run(run, run.ctx.type))

    async def _run(self, run: _Run, type: str):
        ctx = run.ctx
        item = {"id": ctx.id, "lease": ctx.lease}
        ended: tuple[str, dict] | None = None
        began = time.monotonic()
        run.begun = True
        try:
            if ctx.cancelled:  # cancelled or lost between its start and now: the handler is not run
                raise asyncio.CancelledError()
            fn = self._handlers[type]
            if inspect.iscoroutinefunction(fn):
                result = await fn(ctx, ctx.payload)
            else:
                result = await self._loop.run_in_executor(self._pool, fn, SyncContext(ctx, self._loop), ctx.payload)
            try:
                size = len(json.dumps(result)) + ITEM_BYTES
            except (TypeError, ValueError) as e:  # here, lest it spoil the whole batch's call
                raise Permanent(f"the handler's result is not JSON: {e}") from e
            ended = ("complete", {**item, "result": result}, size)
            self.counts["succeeded"] += 1
        except _Suspend as s:
            await self._suspend(ctx, s.body)
        except Snooze as s:
            ended = ("fail", {**item, "snoozeMs": millis(s.seconds, "snooze")}, ITEM_BYTES)
            self.counts["snoozed"] += 1
        except asyncio.CancelledError:
            if ctx.lease_lost:
                self.counts["lost"] += 1
            elif ctx.cancel_requested:  # a cancel wins over any end a remote worker writes: cancelled
                ended = ("fail", {**item, "error": "cancelled while running", "retry": False}, ITEM_BYTES)
                self.counts["cancelled"] += 1
            else:  # stopping past the grace: another worker takes it, the attempt unspent
                ended = ("fail", {**item, "release": True}, ITEM_BYTES)
                self.counts["released"] += 1
        except Exception as e:  # noqa: BLE001 - any error of a handler fails its attempt
            retry = not isinstance(e, Permanent)
            error = _describe(e)
            ended = ("fail", {**item, "error": error, "retry": retry}, ITEM_BYTES + len(error))
            self.counts["failed"] += 1
            log.debug("task %s failed", ctx.id, exc_info=True)
        finally:
            took = time.monotonic() - began
            self._pace = took if self._pace is None else 0.9 * self._pace + 0.1 * took
            self._held.pop(ctx.id, None)
            self._active -= 1
            if ended is not None:
                self._done.append(ended)
                self._to_flush.set()
            self._start_ready()
            self._freed.set()

    async def _suspend(self, ctx: Context, body: dict):
        try:
            await self._post_ok(f"/api/tasks/{_calls.quote(ctx.id)}/complete", {"lease": ctx.lease, "suspend": body})
            self.counts["suspended"] += 1
        except (ProblemError, ConnectionFailed) as e:  # lost meanwhile, or unreachable: the lease lapses
            log.info("task %s: suspend not written: %s", ctx.id, e)

    async def _step(self, ctx: Context, name: str, result: Any) -> dict:
        path = f"/api/tasks/{_calls.quote(ctx.id)}/steps/{_calls.quote(name)}"
        r = await self._request("POST", path, {"lease": ctx.lease, "result": result})
        if r.status == 409:
            ctx.lease_lost = True
            raise asyncio.CancelledError(f"lease lost at step {name}")
        if r.status != 200:
            raise _problem(r)
        return r.json()

    # --- handing in what ended while a claim waits ---

    async def _flusher(self):
        path = f"/api/queues/{_calls.quote(self.queue)}/work"
        while True:
            await self._to_flush.wait()
            self._to_flush.clear()
            # No call out and room for one: the claim loops' next call carries them. Otherwise (a
            # call out, or no room until the tasks held ready drain) they go now: nothing renews
            # the lease of a task that has ended, so they must not wait.
            if not self._in_flight and self._room() > 0 and not self._stopping:
                continue
            await asyncio.sleep(0.002)  # let the tasks ending together go in one call
            async with self._handing_in:
                if self._finished:
                    return
                complete, fail, taken = self._take_done()
                if not (complete or fail):
                    continue
                try:
                    answer = await self._post_ok(path, {"worker": self.name, "max": 0, "complete": complete,
                                                        "fail": fail})
                    self._answered(answer)
                except (ConnectionFailed, ProblemError) as e:
                    log.warning("handing in %d results failed (%s); kept for the next call", len(complete) + len(fail),
                                e)
                    self._give_back(taken)
                    self._to_flush.set()
            if self._to_flush.is_set():
                await asyncio.sleep(0.5)

    # --- heartbeats ---

    async def _heartbeats(self):
        path = f"/api/queues/{_calls.quote(self.queue)}/heartbeat"
        while True:
            now = time.monotonic()
            due = [r for r in list(self._held.values()) if r.renew_at <= now or r.ctx._progress is not None]
            if due:
                items = []
                for r in due:
                    item = {"id": r.ctx.id, "lease": r.ctx.lease}
                    if r.ctx._progress is not None:
                        item["progress"], r.ctx._progress = r.ctx._progress, None
                    items.append(item)
                try:
                    answer = await self._post_ok(path, {"tasks": items})
                    self._beaten(due, answer.get("tasks") or [])
                except (ConnectionFailed, ProblemError) as e:
                    log.warning("heartbeat failed: %s", e)
            nearest = min((r.renew_at for r in self._held.values()), default=now + 1.0)
            try:
                await asyncio.wait_for(self._beat.wait(), max(0.25, min(1.0, nearest - time.monotonic())))
                await asyncio.sleep(0.25)  # coalesce progress reported in quick succession
            except asyncio.TimeoutError:
                pass
            self._beat.clear()

    def _beaten(self, runs: list[_Run], items: list[dict]):
        by_id = {r.ctx.id: r for r in runs}
        for item in items:
            r = by_id.get(item.get("id"))
            if r is None or self._held.get(r.ctx.id) is not r:  # ended, or claimed again since
                continue
            if item.get("status") == 200:
                r.renew_at = time.monotonic() + r.third
                if item.get("cancelRequested") and not r.ctx.cancel_requested:
                    r.ctx.cancel_requested = True
                    self._interrupt(r)
            elif item.get("status") == 409:
                r.ctx.lease_lost = True
                self._interrupt(r)

    def _interrupt(self, r: _Run):
        """Cancels a running handler; a task still held ready is dropped (ended cancelled if asked)."""
        if r.task is not None:
            if r.begun:  # else its coroutine sees ctx.cancelled as it begins
                r.task.cancel()
            return
        r.dropped = True
        self._held.pop(r.ctx.id, None)
        if r.ctx.cancel_requested and not r.ctx.lease_lost:
            self._done.append(("fail", {"id": r.ctx.id, "lease": r.ctx.lease, "error": "cancelled before it started",
                                        "retry": False}, ITEM_BYTES))
            self._to_flush.set()
        self._freed.set()

    # --- stopping ---

    async def _finish(self):
        """Tasks held ready are handed back at once; running ones get `grace` seconds, then are
        cancelled and handed back too; everything is handed in."""
        while self._ready:
            r = self._ready.popleft()
            if not r.dropped:
                self._held.pop(r.ctx.id, None)
                self._done.append(("fail", {"id": r.ctx.id, "lease": r.ctx.lease, "release": True}, ITEM_BYTES))
                self.counts["released"] += 1
        running = [r.task for r in self._held.values() if r.task is not None]
        if running:
            log.info("stopping: %d tasks running, %.0f s to end", len(running), self.grace)
            done, still = await asyncio.wait(running, timeout=self.grace)
            for r in list(self._held.values()):
                if r.task in still:
                    r.ctx.handed_back = True
            for t in still:
                t.cancel()
            await asyncio.gather(*still, return_exceptions=True)
        path = f"/api/queues/{_calls.quote(self.queue)}/work"
        async with self._handing_in:  # after a hand-in the flusher has out, which gives back on failure
            failures = 0
            while self._done and failures < 5:
                complete, fail, taken = self._take_done()
                try:
                    self._answered(await self._post_ok(path, {"worker": self.name, "max": 0, "complete": complete,
                                                              "fail": fail}))
                except (ConnectionFailed, ProblemError) as e:
                    self._give_back(taken)
                    failures += 1
                    log.warning("handing in at stop failed (%s)", e)
                    await asyncio.sleep(0.5)
            self._finished = True


def _describe(e: BaseException) -> str:
    text = f"{type(e).__name__}: {e}"
    return text[:10_000]


def _problem(r: Response) -> ProblemError:
    return answer_error(r.status, r.body, r.headers.get("retry-after"))
