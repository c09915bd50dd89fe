"""Typed errors. Every answer the node refuses is an RFC 9457 problem document
(`urn:taskline:problem:<name>`); each name has its exception here, carrying the document."""
from __future__ import annotations

import json
import re
from typing import Any

PROBLEM_PREFIX = "urn:taskline:problem:"


class TasklineError(Exception):
    """The base of every error this package raises."""


class ConnectionFailed(TasklineError):
    """The node could not be reached, or cut the connection before it answered."""


class AnswerTooLarge(ConnectionFailed):
    """The node's answer passed a bound of this package (`max_answer_bytes`, `max_event_bytes`, the
    size or count of its header lines): the connection was closed without reading the rest."""


class ServerTooOld(TasklineError):
    """The node does not have a call this package makes: upgrade the server (or use an older package)."""

    def __init__(self, call: str, needs: str, server: str | None):
        super().__init__(f"{call} needs a Taskline server of version {needs} or later; "
                         f"this one is {server or 'older than 0.1.0 (it tells no version)'}")
        self.call, self.needs, self.server = call, needs, server


class ProblemError(TasklineError):
    """The node refused the request. `problem` is the whole problem document."""

    def __init__(self, status: int, problem: dict[str, Any], retry_after: float | None = None):
        self.status = status
        self.problem = problem
        self.type = str(problem.get("type", ""))
        self.name = self.type[len(PROBLEM_PREFIX):] if self.type.startswith(PROBLEM_PREFIX) else self.type
        self.title = problem.get("title")
        self.detail = problem.get("detail")
        self.retry_after = retry_after
        super().__init__(f"{status} {self.name}: {self.detail or self.title or ''}".rstrip(": "))


class BadRequest(ProblemError):
    """400: the request could not be read (malformed JSON, a garbled lease token)."""


class InvalidInput(ProblemError):
    """422: the request was read but is not valid (`detail` names the field). Nothing was changed."""


class Unauthorized(ProblemError):
    """401: no key, or not a valid one."""


class Forbidden(ProblemError):
    """403: the key may not do this (a scope or queue it lacks, another tenant's lease)."""


class NotFound(ProblemError):
    """404: no such task, batch, flow, schedule or queue (or one of another tenant)."""


class Conflict(ProblemError):
    """409: the thing is not in a state that allows this (already finished, not retryable, ...)."""


class LeaseLost(Conflict):
    """409 lease-lost: the attempt's lease lapsed or was taken over; the write changed nothing."""


class IdempotencyKeyReused(Conflict):
    """409: the same Idempotency-Key was sent with a different body."""


class Refused(ProblemError):
    """429: the node has no room now; `retry_after` (seconds) says when to try again."""


class QueueFull(Refused):
    """429 queue-full: the queue is at capacity (backpressure)."""


class TenantLimit(Refused):
    """429 tenant-limit: this tenant has its share of the queue."""


class DeadlineUnmeetable(Refused):
    """429 deadline-unmeetable: the task would not start by its deadline. `estimated_start_at` and
    `estimated_wait_ms` are the node's estimate."""

    @property
    def estimated_start_at(self) -> str | None:
        return self.problem.get("estimatedStartAt")

    @property
    def estimated_wait_ms(self) -> int | None:
        return self.problem.get("estimatedWaitMs")

    @property
    def start_by(self) -> str | None:
        return self.problem.get("startBy")


class Unavailable(ProblemError):
    """503: the node is shutting down or its journal does not answer; try another node or later."""


_BY_NAME: dict[str, type[ProblemError]] = {
    "lease-lost": LeaseLost,
    "idempotency-key-reused": IdempotencyKeyReused,
    "queue-full": QueueFull,
    "scheduled-full": QueueFull,
    "tenant-limit": TenantLimit,
    "deadline-unmeetable": DeadlineUnmeetable,
}

_BY_STATUS: dict[int, type[ProblemError]] = {
    400: BadRequest, 401: Unauthorized, 403: Forbidden, 404: NotFound, 409: Conflict,
    413: InvalidInput, 422: InvalidInput, 429: Refused, 503: Unavailable,
}


def problem_error(status: int, problem: Any, retry_after: float | None) -> ProblemError:
    """The exception for an answer: by the problem's name first, else by its status."""
    doc = problem if isinstance(problem, dict) else {"title": str(problem)}
    if retry_after is None and isinstance(doc.get("retryAfterSeconds"), (int, float)):
        retry_after = float(doc["retryAfterSeconds"])
    name = str(doc.get("type", ""))
    name = name[len(PROBLEM_PREFIX):] if name.startswith(PROBLEM_PREFIX) else name
    cls = _BY_NAME.get(name) or _BY_STATUS.get(status, ProblemError)
    return cls(status, doc, retry_after)


def answer_error(status: int, body: bytes, retry_after: str | None) -> ProblemError:
    """The exception for a refused answer as it came: its body (a problem document, or not JSON)
    and its Retry-After header."""
    try:
        doc = json.loads(body) if body else {}
    except ValueError:
        doc = {"title": body[:200].decode("utf-8", "replace")}
    seconds = float(retry_after) if retry_after and _SECONDS.fullmatch(retry_after) else None
    return problem_error(status, doc, seconds)


_SECONDS = re.compile(r"[0-9]{1,9}")  # ASCII digits: str.isdigit takes '²', which float() refuses
