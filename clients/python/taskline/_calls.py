"""Every client call as data: its request and how its answer is read. The blocking and the asyncio
clients send the same `Call`s, so the two cannot drift apart."""
from __future__ import annotations

import json
import urllib.parse
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Callable

from . import flows
from ._http import _CONTROL, MAX_EVENT_BYTES, Response
from .errors import AnswerTooLarge
from .models import BatchSubmitted, EventSent, Flow, FlowSubmitted, SignalSent, Submitted, Task

# The server version that has every call of this package. A call added later names its own.
BASE_VERSION = "0.1.0"


@dataclass
class Call:
    name: str                   # for messages: "submit", "get", ...
    method: str
    path: str
    body: Any = None            # JSON, or None for no body
    headers: dict | None = None
    read: Callable[[Response], Any] = lambda r: r.json()
    write: bool = True          # retried on 429/503 only up to the caller's write limit (off by default)
    since: str = BASE_VERSION


def quote(segment: str) -> str:
    """A path segment from an id or a name: percent-encoded, and never empty, '.' or '..', which the
    node's router would resolve into another route (it decodes %2E before it does)."""
    text = str(segment)
    if text in ("", ".", ".."):
        raise ValueError(f"{text!r} cannot be a path segment (an id or a name)")
    return urllib.parse.quote(text, safe="")


def _replayed(r: Response) -> bool:
    return r.headers.get("idempotent-replayed", "").lower() == "true"


def _idempotency(key: str | None) -> dict:
    return {"Idempotency-Key": key} if key else {}


def submit(type: str, payload: Any = None, *, queue: str | None = None, priority: int | None = None,
           delay: float | timedelta | None = None, run_at: datetime | str | None = None,
           max_attempts: int | None = None, timeout: float | timedelta | None = None,
           idempotency_key: str | None = None, concurrency_key: str | None = None,
           start_within: float | timedelta | None = None, start_by: datetime | str | None = None) -> Call:
    body = flows.task(type, payload, queue=queue, priority=priority, delay=delay, run_at=run_at,
                      max_attempts=max_attempts, timeout=timeout, concurrency_key=concurrency_key,
                      start_within=start_within, start_by=start_by)
    return Call("submit", "POST", "/api/tasks", body, _idempotency(idempotency_key),
                lambda r: Submitted.of(r.json(), _replayed(r)))


def submit_batch(tasks: list[dict], *, idempotency_key: str | None = None) -> Call:
    """`tasks` as made by `taskline.task(...)`; all are accepted or none."""
    return Call("submit_batch", "POST", "/api/batches", {"tasks": list(tasks)}, _idempotency(idempotency_key),
                lambda r: BatchSubmitted.of(r.json(), _replayed(r)))


def flow(graph: dict | list, *, name: str | None = None, idempotency_key: str | None = None) -> Call:
    """`graph`: a `chain`/`group`/`chord` shorthand, or a list of `task(..., key=, depends_on=)`."""
    body = {"tasks": list(graph)} if isinstance(graph, list) else dict(graph)
    if name is not None:
        body["name"] = name
    return Call("flow", "POST", "/api/flows", body, _idempotency(idempotency_key),
                lambda r: FlowSubmitted.of(r.json(), _replayed(r)))


def get(task_id: str) -> Call:
    return Call("get", "GET", f"/api/tasks/{quote(task_id)}", read=lambda r: Task.of(r.json()), write=False)


def get_flow(flow_id: str) -> Call:
    return Call("get_flow", "GET", f"/api/flows/{quote(flow_id)}", read=lambda r: Flow.of(r.json()), write=False)


def get_batch(batch_id: str) -> Call:
    return Call("get_batch", "GET", f"/api/batches/{quote(batch_id)}", write=False)


def list_tasks(*, state: str | None = None, queue: str | None = None, type: str | None = None,
               limit: int | None = None, after: str | None = None) -> Call:
    query = {k: v for k, v in {"state": state, "queue": queue, "type": type, "limit": limit, "after": after}.items()
             if v is not None}
    path = "/api/tasks" + ("?" + urllib.parse.urlencode(query) if query else "")
    return Call("list_tasks", "GET", path, write=False)


def cancel(task_id: str, *, compensate: bool = False) -> Call:
    """The state the task is in now: cancelled, or cancelling/compensating for one that runs."""
    return Call("cancel", "POST", f"/api/tasks/{quote(task_id)}/cancel", {"compensate": True} if compensate else {},
                read=lambda r: r.json()["state"])


def retry(task_id: str) -> Call:
    return Call("retry", "POST", f"/api/tasks/{quote(task_id)}/retry", {}, read=lambda r: r.json().get("state"))


def cancel_flow(flow_id: str) -> Call:
    return Call("cancel_flow", "POST", f"/api/flows/{quote(flow_id)}/cancel", {})


def retry_flow(flow_id: str) -> Call:
    return Call("retry_flow", "POST", f"/api/flows/{quote(flow_id)}/retry", {})


def signal(task_id: str, name: str, payload: Any = None, *, idempotency_key: str | None = None) -> Call:
    body = {} if payload is None else {"payload": payload}
    return Call("signal", "POST", f"/api/tasks/{quote(task_id)}/signals/{quote(name)}", body,
                _idempotency(idempotency_key), lambda r: SignalSent.of(r.json()))


def send_event(name: str, data: Any = None, *, id: str | None = None) -> Call:
    body = {"name": name, **({} if data is None else {"data": data}), **({} if id is None else {"id": id})}
    return Call("send_event", "POST", "/api/events", body, read=lambda r: EventSent.of(r.json()))


def live() -> Call:
    return Call("server_version", "GET", "/health/live", write=False, read=lambda r: (r.json() or {}).get("version"))


def encode(call: Call) -> bytes | None:
    return None if call.body is None else json.dumps(call.body, separators=(",", ":")).encode()


def version_tuple(version: str | None) -> tuple[int, ...]:
    """"0.1.0-SNAPSHOT" -> (0, 1, 0); None (a server that tells none) -> ()."""
    if not version:
        return ()
    numbers = []
    for part in version.split("-", 1)[0].split("."):
        if not part.isdigit():
            break
        numbers.append(int(part))
    return tuple(numbers)


def route_missing(status: int, problem: Any) -> bool:
    """A 404 or 405 of the router itself (no such route), not of a task or queue that is not there."""
    if status == 405:
        return True
    return status == 404 and isinstance(problem, dict) and str(problem.get("detail", "")).startswith("no resource at")


def stream_path(kind: str, ident: str) -> str:
    if kind not in ("tasks", "batches", "flows"):
        raise ValueError("kind must be tasks, batches or flows")
    return f"/api/{kind}/{quote(ident)}/events"


class SseParser:
    """Server-Sent Events, line by line (the WHATWG rules this node's streams need), an event at
    most `max_event` bytes."""

    def __init__(self, max_event: int = MAX_EVENT_BYTES):
        self.event, self.data, self.id, self.retry_ms = "message", [], None, None
        self.last_id: str | None = None
        self.max_event, self.size = max_event, 0

    def reset(self):
        """A new connection: an event the old one cut short is dropped (it comes again, by its id)."""
        self.event, self.data, self.id, self.size = "message", [], None, 0

    def feed(self, raw: bytes) -> list:
        """The events a line completes (none, or one: a lone CR ends a line too, as the WHATWG rules
        say, so that no field carries one, and a line of them may complete more)."""
        text = raw.decode("utf-8", "replace")
        text = text[:-1] if text.endswith("\n") else text
        text = text[:-1] if text.endswith("\r") else text
        return [done for done in map(self._line, text.split("\r")) if done]

    def _line(self, line: str):
        if not line:
            if not self.data and self.event == "message":
                return None
            text = "\n".join(self.data)
            event = (self.event, text, self.id)
            if self.id is not None:
                self.last_id = self.id
            self.event, self.data, self.id, self.size = "message", [], None, 0
            return event
        if line.startswith(":"):
            return None
        self.size += len(line)
        if self.size > self.max_event:
            raise AnswerTooLarge(f"an event of the stream passed max_event_bytes ({self.max_event}): cut")
        name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if name == "event":
            self.event = value
        elif name == "data":
            self.data.append(value)
        elif name == "id":
            # Sent back as Last-Event-ID: one a header cannot carry is ignored (the WHATWG rules
            # ignore one with NUL), lest a reconnection fail or send what the node slipped in.
            if not _CONTROL.search(value) and value.isascii():
                self.id = value
        elif name == "retry" and value.isascii() and value.isdigit():
            self.retry_ms = int(value)
        return None
