"""Taskline for Python: a client (blocking and asyncio) and an asyncio worker, standard library only.

    from taskline import Taskline, task, chord, group
    tl = Taskline("http://127.0.0.1:8080")
    submitted = tl.submit("qualification-match", {...}, queue="matching")
    print(tl.wait(submitted.id, timeout=60).result)
"""
from .client import AsyncTaskline, Taskline
from .errors import (AnswerTooLarge, BadRequest, Conflict, ConnectionFailed, DeadlineUnmeetable, Forbidden,
                     IdempotencyKeyReused, InvalidInput, LeaseLost, NotFound, ProblemError, QueueFull, Refused,
                     ServerTooOld, TasklineError, TenantLimit, Unauthorized, Unavailable)
from .flows import chain, chord, group, task
from .models import (BatchSubmitted, Event, EventSent, Flow, FlowSubmitted, Progress, SignalSent, Submitted, Task,
                     Transition)
from .worker import Context, Permanent, Snooze, SyncContext, Worker

__version__ = "0.1.0.dev0"  # the server's 0.1.0-SNAPSHOT

__all__ = [
    "Taskline", "AsyncTaskline", "Worker", "Context", "SyncContext", "Permanent", "Snooze",
    "task", "chain", "group", "chord",
    "Task", "Transition", "Progress", "Submitted", "BatchSubmitted", "FlowSubmitted", "Flow", "Event", "SignalSent",
    "EventSent",
    "TasklineError", "ConnectionFailed", "AnswerTooLarge", "ServerTooOld", "ProblemError", "BadRequest", "InvalidInput",
    "Unauthorized", "Forbidden", "NotFound", "Conflict", "LeaseLost", "IdempotencyKeyReused", "Refused",
    "QueueFull", "TenantLimit", "DeadlineUnmeetable", "Unavailable",
]
