"""Task specs and the flow shorthands (the node's own `chain`, `group` and `chord`), as plain
dicts ready for `submit_batch` and `flow`. Nest them as deep as needed:

    flow(chord(group(task("match", p1), task("match", p2)), then=task("rank")))
"""
from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any


def millis(value: float | timedelta | None, what: str) -> int | None:
    """Seconds (or a timedelta) as the whole milliseconds the node takes."""
    if value is None:
        return None
    seconds = value.total_seconds() if isinstance(value, timedelta) else value
    if not isinstance(seconds, (int, float)) or isinstance(seconds, bool) or seconds < 0:
        raise ValueError(f"{what} must be a number of seconds >= 0 or a timedelta, not {value!r}")
    return round(seconds * 1000)


def instant(value: datetime | str | None, what: str) -> str | None:
    """An aware datetime (or an ISO-8601 text) as the node's UTC instant."""
    if value is None or isinstance(value, str):
        return value
    if not isinstance(value, datetime) or value.tzinfo is None:
        raise ValueError(f"{what} must be a timezone-aware datetime or an ISO-8601 instant, not {value!r}")
    return value.astimezone(timezone.utc).isoformat().replace("+00:00", "Z")


def task(type: str, payload: Any = None, *, queue: str | None = None, priority: int | None = None,
         delay: float | timedelta | None = None, run_at: datetime | str | None = None,
         max_attempts: int | None = None, timeout: float | timedelta | None = None,
         concurrency_key: str | None = None, start_within: float | timedelta | None = None,
         start_by: datetime | str | None = None, key: str | None = None,
         depends_on: list[str] | None = None, join: str | None = None) -> dict:
    """A task as the node takes it. Durations are seconds (or timedeltas); `key`, `depends_on` and
    `join` ("all", "settled" or "any") place it in a flow given as a list of tasks."""
    if delay is not None and run_at is not None:
        raise ValueError("give delay or run_at, not both")
    if start_within is not None and start_by is not None:
        raise ValueError("give start_within or start_by, not both")
    spec = {
        "key": key, "type": type, "payload": payload, "queue": queue, "priority": priority,
        "delayMs": millis(delay, "delay"), "runAt": instant(run_at, "run_at"), "maxAttempts": max_attempts,
        "timeoutMs": millis(timeout, "timeout"), "concurrencyKey": concurrency_key,
        "startWithinMs": millis(start_within, "start_within"), "startBy": instant(start_by, "start_by"),
        "dependsOn": depends_on, "join": join,
    }
    return {k: v for k, v in spec.items() if v is not None}


def chain(*steps: dict) -> dict:
    """Each step after the one before, reading its result (`ctx.parents`)."""
    return {"chain": list(steps)}


def group(*members: dict) -> dict:
    """Side by side."""
    return {"group": list(members)}


def chord(members: dict | list, then: dict) -> dict:
    """`then` after every member of the group has succeeded, reading all their results."""
    if isinstance(members, dict) and "group" in members:
        members = members["group"]
    return {"chord": {"group": list(members), "then": then}}
