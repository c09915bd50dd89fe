"""The clients: `Taskline` (blocking) and `AsyncTaskline` (asyncio), one API.

    with Taskline("http://127.0.0.1:8080") as tl:
        t = tl.submit("qualification-match", payload, queue="matching")
        print(tl.wait(t.id, timeout=60).result)
"""
from __future__ import annotations

import asyncio
import functools
import json
import re
import time
from typing import Any, AsyncIterator, Iterator

from . import _calls
from ._calls import Call, SseParser
from ._http import MAX_ANSWER_BYTES, MAX_EVENT_BYTES, AsyncTransport, Endpoint, Response, SyncTransport, check_headers
from .errors import ConnectionFailed, ProblemError, ServerTooOld, answer_error
from .models import Event, Task

USER_AGENT = "taskline-python"
_SECONDS = re.compile(r"[0-9]{1,9}(\.[0-9]{1,9})?")  # ASCII: str.isdigit takes '²', which float() refuses


class _Common:
    """What both clients share: headers, retry policy, answers to errors."""

    def __init__(self, url: str, *, key: str | None = None, tenant: str | None = None, timeout: float = 30.0,
                 write_retries: int = 0, read_retries: int = 3, max_retry_wait: float = 30.0,
                 max_answer_bytes: int = MAX_ANSWER_BYTES, max_event_bytes: int = MAX_EVENT_BYTES):
        self.endpoint = Endpoint(url)
        self.timeout = timeout
        self.write_retries, self.read_retries, self.max_retry_wait = write_retries, read_retries, max_retry_wait
        self.max_answer_bytes, self.max_event_bytes = max_answer_bytes, max_event_bytes
        self.headers = {"Accept": "application/json", "User-Agent": USER_AGENT}
        if key:
            self.headers["Authorization"] = f"Bearer {key}"
        if tenant:
            self.headers["Taskline-Tenant"] = tenant
        check_headers(self.headers)  # a key or tenant HTTP cannot carry: ValueError here, not at a call
        self._server_version: str | None | bool = False  # False: not asked yet

    def _headers(self, call: Call) -> dict:
        headers = dict(self.headers)
        if call.body is not None:
            headers["Content-Type"] = "application/json"
        headers.update(call.headers or {})
        return headers

    def _retries(self, call: Call) -> int:
        return self.write_retries if call.write else self.read_retries

    def _wait_before_retry(self, r: Response, attempt: int) -> float | None:
        """Seconds to wait before trying again, or None: not an answer to try again."""
        if r.status not in (429, 503):
            return None
        after = r.headers.get("retry-after")
        seconds = float(after) if after and _SECONDS.fullmatch(after) else min(2.0 ** attempt, 10.0)
        return min(seconds, self.max_retry_wait)

    @staticmethod
    def _error(r: Response) -> ProblemError:
        return answer_error(r.status, r.body, r.headers.get("retry-after"))

    def _resume_after(self, head: Response, failures: int) -> float:
        """A stream's connection refused: 429 and 503 (a node restarting, streams all taken) are
        waited out by their Retry-After and resumed; anything else is raised."""
        wait = self._wait_before_retry(head, failures)
        if wait is None:
            raise self._error(head)
        return wait

    @staticmethod
    def _reconnect_delay(parser: SseParser, failures: int) -> float:
        return min((parser.retry_ms or 2000) / 1000, 2.0) if failures > 2 else 0.05

    def _too_old(self, call: Call, r: Response) -> ServerTooOld | None:
        problem = self._error(r).problem
        if not _calls.route_missing(r.status, problem):
            return None
        return ServerTooOld(call.name, call.since, None)  # the caller fills in the server's version


def _sync(builder):
    @functools.wraps(builder)
    def method(self, *args, **kwargs):
        return self._perform(builder(*args, **kwargs))
    return method


def _async(builder):
    @functools.wraps(builder)
    async def method(self, *args, **kwargs):
        return await self._perform(builder(*args, **kwargs))
    return method


class Taskline(_Common):
    """A blocking client on one kept-alive connection (its calls go one after another)."""

    def __init__(self, url: str = "http://127.0.0.1:8080", **options):
        super().__init__(url, **options)
        self._transport = SyncTransport(self.endpoint, self.timeout, self.max_answer_bytes, self.max_event_bytes)

    submit = _sync(_calls.submit)
    submit_batch = _sync(_calls.submit_batch)
    flow = _sync(_calls.flow)
    get = _sync(_calls.get)
    get_flow = _sync(_calls.get_flow)
    get_batch = _sync(_calls.get_batch)
    list_tasks = _sync(_calls.list_tasks)
    cancel = _sync(_calls.cancel)
    retry = _sync(_calls.retry)
    cancel_flow = _sync(_calls.cancel_flow)
    retry_flow = _sync(_calls.retry_flow)
    signal = _sync(_calls.signal)
    send_event = _sync(_calls.send_event)

    def server_version(self) -> str | None:
        """The node's version (None for a node too old to tell)."""
        if self._server_version is False:
            self._server_version = self._perform(_calls.live())
        return self._server_version

    def _perform(self, call: Call) -> Any:
        body = _calls.encode(call)
        for attempt in range(self._retries(call) + 1):
            try:
                r = self._transport.request(call.method, call.path, body, self._headers(call))
            except OSError as e:
                raise ConnectionFailed(f"{call.name}: {e}") from e
            if 200 <= r.status < 300:
                return call.read(r)
            wait = self._wait_before_retry(r, attempt)
            if wait is None or attempt == self._retries(call):
                break
            time.sleep(wait)
        old = self._too_old(call, r)
        if old:
            old.server = self.server_version()
            raise old
        raise self._error(r)

    def events(self, ident: str, *, kind: str = "tasks", last_event_id: str | None = None) -> Iterator[Event]:
        """A task's (or a batch's or flow's: `kind`) events as they happen, to its `end`. A dropped
        connection is resumed with `Last-Event-ID`: nothing is missed and nothing comes twice."""
        return self._events(ident, kind, last_event_id, None)

    def _events(self, ident: str, kind: str, last_event_id: str | None, deadline: float | None) -> Iterator[Event]:
        parser = SseParser(self.max_event_bytes)
        parser.last_id = last_event_id
        path, failures = _calls.stream_path(kind, ident), 0
        while True:
            _check(deadline, ident)
            parser.reset()
            headers = dict(self.headers, Accept="text/event-stream")
            if parser.last_id is not None:
                headers["Last-Event-ID"] = parser.last_id
            silence = None if deadline is None else max(0.05, min(45.0, deadline - time.monotonic()))
            wait = None
            try:
                head, lines = self._transport.stream(path, headers, silence)
                if head.status != 200:
                    wait = self._resume_after(head, failures)
                else:
                    try:
                        for line in lines:
                            _check(deadline, ident)
                            for done in parser.feed(line):
                                event = _event(done)
                                if event.id is not None:
                                    failures = 0  # the stream moved on: a new drop starts a new count
                                yield event
                                if event.event == "end":
                                    return
                    finally:
                        lines.close()  # its connection, now, not when the generator is collected
            except OSError:
                pass
            # Dropped, or closed before its end: resumed, unless it keeps dropping with no progress.
            failures += 1
            if failures > self.read_retries + 5:
                raise ConnectionFailed(f"events of {ident}: the stream keeps dropping")
            _check(deadline, ident)
            time.sleep(wait if wait is not None else self._reconnect_delay(parser, failures))

    def wait(self, task_id: str, timeout: float | None = None) -> Task:
        """The task once it has finished (succeeded, failed, cancelled or expired), followed over its
        event stream. Raises TimeoutError when it has not finished within `timeout` seconds."""
        deadline = None if timeout is None else time.monotonic() + timeout
        for event in self._events(task_id, "tasks", None, deadline):
            if event.event == "end":  # not a terminal state seen: a retried task's history has one
                break
        return self.get(task_id)

    def close(self):
        self._transport.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class AsyncTaskline(_Common):
    """The asyncio client: concurrent calls each take a kept-alive connection of a small pool."""

    def __init__(self, url: str = "http://127.0.0.1:8080", **options):
        super().__init__(url, **options)
        self._transport = AsyncTransport(self.endpoint, self.timeout, max_answer=self.max_answer_bytes,
                                         max_event=self.max_event_bytes)

    submit = _async(_calls.submit)
    submit_batch = _async(_calls.submit_batch)
    flow = _async(_calls.flow)
    get = _async(_calls.get)
    get_flow = _async(_calls.get_flow)
    get_batch = _async(_calls.get_batch)
    list_tasks = _async(_calls.list_tasks)
    cancel = _async(_calls.cancel)
    retry = _async(_calls.retry)
    cancel_flow = _async(_calls.cancel_flow)
    retry_flow = _async(_calls.retry_flow)
    signal = _async(_calls.signal)
    send_event = _async(_calls.send_event)

    async def server_version(self) -> str | None:
        if self._server_version is False:
            self._server_version = await self._perform(_calls.live())
        return self._server_version

    async def _perform(self, call: Call) -> Any:
        body = _calls.encode(call)
        for attempt in range(self._retries(call) + 1):
            try:
                r = await self._transport.request(call.method, call.path, body, self._headers(call))
            except (OSError, asyncio.TimeoutError) as e:
                raise ConnectionFailed(f"{call.name}: {e!r}") from e
            if 200 <= r.status < 300:
                return call.read(r)
            wait = self._wait_before_retry(r, attempt)
            if wait is None or attempt == self._retries(call):
                break
            await asyncio.sleep(wait)
        old = self._too_old(call, r)
        if old:
            old.server = await self.server_version()
            raise old
        raise self._error(r)

    async def events(self, ident: str, *, kind: str = "tasks",
                     last_event_id: str | None = None) -> AsyncIterator[Event]:
        """As `Taskline.events`, an async iterator."""
        parser = SseParser(self.max_event_bytes)
        parser.last_id = last_event_id
        path, failures = _calls.stream_path(kind, ident), 0
        while True:
            parser.reset()
            headers = dict(self.headers, Accept="text/event-stream")
            if parser.last_id is not None:
                headers["Last-Event-ID"] = parser.last_id
            wait = None
            try:
                head, lines = await self._transport.stream(path, headers)
                if head.status != 200:
                    wait = self._resume_after(head, failures)
                else:
                    try:
                        async for line in lines:
                            for done in parser.feed(line):
                                event = _event(done)
                                if event.id is not None:
                                    failures = 0  # as in Taskline.events
                                yield event
                                if event.event == "end":
                                    return
                    finally:
                        await lines.aclose()  # its connection, now, not when the generator is collected
            except (OSError, asyncio.IncompleteReadError, asyncio.TimeoutError):
                pass
            failures += 1
            if failures > self.read_retries + 5:
                raise ConnectionFailed(f"events of {ident}: the stream keeps dropping")
            await asyncio.sleep(wait if wait is not None else self._reconnect_delay(parser, failures))

    async def wait(self, task_id: str, timeout: float | None = None) -> Task:
        """As `Taskline.wait`."""
        async def follow():
            async for event in self.events(task_id):
                if event.event == "end":
                    return
        try:
            await asyncio.wait_for(follow(), timeout)
        except asyncio.TimeoutError:
            raise TimeoutError(f"task {task_id} did not finish within {timeout} s") from None
        return await self.get(task_id)

    async def close(self):
        await self._transport.close()

    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc):
        await self.close()


def _event(parsed: tuple[str, str, str | None]) -> Event:
    name, text, ident = parsed
    try:
        data = json.loads(text) if text else None
    except ValueError:
        data = text
    return Event(name, data, ident)


def _check(deadline: float | None, task_id: str):
    if deadline is not None and time.monotonic() > deadline:
        raise TimeoutError(f"task {task_id} did not finish in time")
