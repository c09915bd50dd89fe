"""What the node answers, as dataclasses. Each keeps the whole JSON it came from in `raw`, so a
field the node adds later is there before this package names it."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

TERMINAL = frozenset({"succeeded", "failed", "cancelled", "expired"})


@dataclass(frozen=True)
class Transition:
    """One journaled change of a task's state."""
    event_id: int | None
    from_state: str | None
    to_state: str
    reason: str | None
    at: str | None
    attempt: int | None
    worker_id: str | None

    @classmethod
    def of(cls, j: dict) -> "Transition":
        return cls(j.get("eventId"), j.get("from"), j.get("to"), j.get("reason"), j.get("at"), j.get("attempt"),
                   j.get("workerId"))


@dataclass(frozen=True)
class Progress:
    percent: int | None
    message: str | None


@dataclass(frozen=True)
class Task:
    """A task as `GET /api/tasks/{id}` shows it."""
    id: str
    type: str
    queue: str
    state: str
    payload: Any
    result: Any
    error: Any
    priority: int
    attempt: int
    max_attempts: int
    progress: Progress
    created_at: str | None
    started_at: str | None
    finished_at: str | None
    history: list[Transition]
    steps: list[dict]
    raw: dict = field(repr=False, compare=False)

    @property
    def finished(self) -> bool:
        return self.state in TERMINAL

    @classmethod
    def of(cls, j: dict) -> "Task":
        p = j.get("progress") or {}
        return cls(j["id"], j.get("type", ""), j.get("queue", ""), j["state"], j.get("payload"), j.get("result"),
                   j.get("error"), j.get("priority", 0), j.get("attempt", 0), j.get("maxAttempts", 0),
                   Progress(p.get("percent"), p.get("message")), j.get("createdAt"), j.get("startedAt"),
                   j.get("finishedAt"), [Transition.of(h) for h in j.get("history") or []], j.get("steps") or [], j)


@dataclass(frozen=True)
class Submitted:
    """A task the node accepted (202): journaled before this answer."""
    id: str
    state: str
    queue: str
    type: str
    run_at: str | None
    start_by: str | None
    replayed: bool  # the answer to an earlier request with the same Idempotency-Key
    raw: dict = field(repr=False, compare=False)

    @classmethod
    def of(cls, j: dict, replayed: bool = False) -> "Submitted":
        return cls(j["id"], j.get("state", ""), j.get("queue", ""), j.get("type", ""), j.get("runAt"),
                   j.get("startBy"), replayed, j)


@dataclass(frozen=True)
class BatchSubmitted:
    batch_id: str
    tasks: list[Submitted]
    replayed: bool
    raw: dict = field(repr=False, compare=False)

    @classmethod
    def of(cls, j: dict, replayed: bool = False) -> "BatchSubmitted":
        return cls(j["batchId"], [Submitted.of(t, replayed) for t in j.get("tasks", [])], replayed, j)


@dataclass(frozen=True)
class FlowSubmitted:
    """A flow the node accepted; `ids` maps each task's key to its id."""
    flow_id: str
    state: str
    ids: dict[str, str]
    replayed: bool
    raw: dict = field(repr=False, compare=False)

    @classmethod
    def of(cls, j: dict, replayed: bool = False) -> "FlowSubmitted":
        return cls(j["flowId"], j.get("state", ""), {t["key"]: t["id"] for t in j.get("tasks", [])}, replayed, j)


@dataclass(frozen=True)
class Flow:
    """A flow as `GET /api/flows/{id}` shows it; `tasks` maps each key to its task's summary."""
    id: str
    name: str | None
    state: str
    counts: dict[str, int]
    tasks: dict[str, dict]
    raw: dict = field(repr=False, compare=False)

    @property
    def finished(self) -> bool:
        return self.state in TERMINAL

    @classmethod
    def of(cls, j: dict) -> "Flow":
        return cls(j["id"], j.get("name"), j.get("state", ""), j.get("counts") or {},
                   {t["key"]: t for t in j.get("tasks", [])}, j)


@dataclass(frozen=True)
class Event:
    """One Server-Sent Event of a stream: `event` is snapshot, state, progress, result, step,
    suspended, resumed or end; `id` is the journal's event id (state events only)."""
    event: str
    data: Any
    id: str | None = None


@dataclass(frozen=True)
class SignalSent:
    id: str
    task: str
    name: str
    woke: bool
    raw: dict = field(repr=False, compare=False)

    @classmethod
    def of(cls, j: dict) -> "SignalSent":
        return cls(str(j.get("id")), j.get("task", ""), j.get("name", ""), bool(j.get("woke")), j)


@dataclass(frozen=True)
class EventSent:
    id: str
    name: str
    delivered: int
    started: list
    raw: dict = field(repr=False, compare=False)

    @classmethod
    def of(cls, j: dict) -> "EventSent":
        return cls(str(j.get("id")), j.get("name", ""), j.get("delivered", 0), j.get("started") or [], j)
