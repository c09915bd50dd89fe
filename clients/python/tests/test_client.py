"""The clients' calls against a real node, and their errors."""
import asyncio
import socket
import threading
import uuid

import pytest

from conftest import KEY, READ_KEY, URL, until
from taskline import (AsyncTaskline, Conflict, DeadlineUnmeetable, Forbidden, IdempotencyKeyReused, InvalidInput,
                      NotFound, QueueFull, ServerTooOld, Taskline, Unauthorized, chain, chord, group, task)
from taskline._calls import Call
from taskline.errors import problem_error


def test_a_task_is_submitted_and_waited_for_over_its_stream(tl):
    submitted = tl.submit("sleep", {"ms": 20}, queue="local", max_attempts=2, priority=3, timeout=30)
    assert submitted.queue == "local" and not submitted.replayed
    done = tl.wait(submitted.id, timeout=30)
    assert done.state == "succeeded" and done.finished
    assert done.result["sleptMs"] == 20
    assert done.priority == 3 and done.max_attempts == 2
    assert [h.reason for h in done.history] == ["submitted", "claimed", "succeeded"]
    assert tl.server_version().startswith("0.")


def test_the_async_client_has_the_same_calls():
    async def go():
        async with AsyncTaskline(URL, key=KEY) as atl:
            ids = [(await atl.submit("sleep", {"ms": 5}, queue="local")).id for _ in range(5)]
            done = await asyncio.gather(*(atl.wait(i, timeout=30) for i in ids))
            assert {t.state for t in done} == {"succeeded"}
            events = [e async for e in atl.events(ids[0])]
            assert events[0].event == "snapshot" and events[-1].event == "end"
            assert [e.data["to"] for e in events if e.event == "state"] == ["pending", "running", "succeeded"]
            with pytest.raises(NotFound):
                await atl.get(str(uuid.uuid4()))
            return await atl.server_version()
    assert asyncio.run(go())


def test_an_idempotency_key_answers_a_repeat_as_the_first_time_and_refuses_another_body(tl):
    key = f"order-{uuid.uuid4()}"
    first = tl.submit("sleep", {"ms": 1}, queue="local", idempotency_key=key)
    again = tl.submit("sleep", {"ms": 1}, queue="local", idempotency_key=key)
    assert again.id == first.id and again.replayed
    with pytest.raises(IdempotencyKeyReused) as refused:
        tl.submit("sleep", {"ms": 2}, queue="local", idempotency_key=key)
    assert refused.value.status == 409


def test_a_delayed_task_is_cancelled_then_retried(tl):
    submitted = tl.submit("sleep", {"ms": 1}, queue="local", delay=3600)
    assert tl.get(submitted.id).state == "pending"
    assert tl.cancel(submitted.id) == "cancelled"
    with pytest.raises(Conflict):
        tl.cancel(submitted.id)
    assert tl.retry(submitted.id) == "pending"
    assert tl.wait(submitted.id, timeout=30).state == "succeeded"


def test_a_batch_is_all_or_nothing(tl):
    batch = tl.submit_batch([task("sleep", {"ms": i}, queue="local") for i in range(3)])
    assert len(batch.tasks) == 3
    for t in batch.tasks:
        tl.wait(t.id, timeout=30)
    assert tl.get_batch(batch.batch_id)["counts"]["succeeded"] == 3
    with pytest.raises(InvalidInput) as bad:
        tl.submit_batch([task("sleep", queue="local"), task("", queue="local")])
    assert "type" in bad.value.detail


def test_a_chord_ranks_what_its_group_found(tl):
    members = group(*(task("sleep", {"ms": ms}, queue="local") for ms in (30, 10, 20)))
    flow = tl.flow(chord(members, then=task("rank", {"by": "sleptMs"}, queue="local")), name="rank-three")
    assert set(flow.ids) == {"0", "1", "2", "then"}
    for event in tl.events(flow.flow_id, kind="flows"):
        pass  # to its end
    done = tl.get_flow(flow.flow_id)
    assert done.state == "succeeded" and done.finished
    ranking = done.tasks["then"]["result"]["ranking"]
    assert [r["key"] for r in ranking] == ["0", "2", "1"]
    chained = tl.flow(chain(task("sleep", {"ms": 1}, queue="local"), task("sleep", {"ms": 1}, queue="local")))
    for event in tl.events(chained.flow_id, kind="flows"):
        pass
    assert tl.get_flow(chained.flow_id).state == "succeeded"


class CuttingProxy:
    """Forwards to the node, and cuts each of its first connections once it has passed the bytes
    `cuts` gives for it down: a stream that drops mid-way, again and again."""

    def __init__(self, port, cuts):
        self.port, self.cuts = port, list(cuts)
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        self.connections = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            cut = self.cuts[self.connections] if self.connections < len(self.cuts) else None
            self.connections += 1
            upstream = socket.create_connection(("127.0.0.1", self.port))
            threading.Thread(target=self._pipe, args=(client, upstream, None), daemon=True).start()
            threading.Thread(target=self._pipe, args=(upstream, client, cut), daemon=True).start()

    @staticmethod
    def _pipe(source, target, limit):
        passed = 0
        try:
            while True:
                data = source.recv(limit - passed if limit else 65536)
                if not data:
                    break
                target.sendall(data)
                passed += len(data)
                if limit and passed >= limit:
                    break
        except OSError:
            pass
        for s in (source, target):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()

    def close(self):
        self.listener.close()


def test_a_dropped_stream_is_resumed_with_last_event_id_missing_nothing_and_repeating_nothing(tl):
    flow = tl.flow(chain(*(task("sleep", {"ms": 1}, queue="local") for _ in range(6))))
    for _ in tl.events(flow.flow_id, kind="flows"):
        pass
    whole = [e for e in tl.events(flow.flow_id, kind="flows")]
    port = int(URL.rsplit(":", 1)[1])
    size = len(b"".join(_raw_stream(port, flow.flow_id)))
    proxy = CuttingProxy(port, cuts=[size // 3, size // 2])
    try:
        with Taskline(proxy.url, key=KEY) as cut:
            resumed = list(cut.events(flow.flow_id, kind="flows"))
    finally:
        proxy.close()
    assert proxy.connections == 3, "the stream was cut twice and resumed"
    ids = [e.id for e in resumed if e.id is not None]
    assert len(ids) == len(set(ids)), "no event twice"
    assert ids == [e.id for e in whole if e.id is not None], "none missed, in order"
    assert resumed[-1].event == "end"

    async def follow():
        async with AsyncTaskline(proxy2.url, key=KEY) as atl:
            return [e async for e in atl.events(flow.flow_id, kind="flows")]
    proxy2 = CuttingProxy(port, cuts=[size // 4, size * 2 // 3])
    try:
        resumed_async = asyncio.run(follow())
    finally:
        proxy2.close()
    assert [e.id for e in resumed_async if e.id] == ids


def _raw_stream(port, flow_id):
    with socket.create_connection(("127.0.0.1", port)) as s:
        s.sendall(f"GET /api/flows/{flow_id}/events HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {KEY}\r\n"
                  f"Connection: close\r\n\r\n".encode())
        while True:
            data = s.recv(65536)
            if not data:
                return
            yield data


def test_refusals_raise_typed_errors_carrying_the_problem(tl):
    with pytest.raises(NotFound) as missing:
        tl.get(str(uuid.uuid4()))
    assert missing.value.status == 404 and missing.value.problem["type"].endswith("not-found")
    with pytest.raises(InvalidInput):
        tl.submit("sleep", {"ms": 1}, queue="nowhere-such")
    with Taskline(URL, key=READ_KEY) as reader:
        assert reader.list_tasks(limit=1)["tasks"] is not None
        with pytest.raises(Forbidden):
            reader.submit("sleep", {"ms": 1}, queue="local")
    with Taskline(URL, key="tl_not-a-key") as stranger:
        with pytest.raises(Unauthorized):
            stranger.get(str(uuid.uuid4()))


def test_a_full_queue_raises_queue_full_with_its_retry_after_and_is_retried_only_when_asked(tl):
    while True:  # what an earlier run against this node may have left
        left = [t["id"] for state in ("running", "pending")
                for t in tl.list_tasks(queue="tiny", state=state, limit=100)["tasks"]]
        if not left:
            break
        for i in left:
            if not tl.get(i).finished:
                tl.cancel(i)
            tl.wait(i, timeout=60)
    blocker = tl.submit("sleep", {"ms": 5000}, queue="tiny")  # busy for 5 s, then the queue frees by itself
    until(lambda: tl.get(blocker.id).state == "running", "the blocker to run")
    waiting = tl.submit("sleep", {"ms": 1}, queue="tiny")
    try:
        with pytest.raises(QueueFull) as full:
            tl.submit("sleep", {"ms": 1}, queue="tiny")
        assert full.value.status == 429 and full.value.retry_after is not None
        rejected = _rejected(tl, "tiny")
        with Taskline(URL, key=KEY, write_retries=2, max_retry_wait=0.01) as patient:
            with pytest.raises(QueueFull):
                patient.submit("sleep", {"ms": 1}, queue="tiny")
        assert _rejected(tl, "tiny") == rejected + 3, "tried three times, as asked"
    finally:
        tl.cancel(waiting.id)
        tl.cancel(blocker.id)
        tl.wait(blocker.id, timeout=30)  # the queue free again for the next run


def _rejected(tl, queue):
    queues = tl._perform(Call("queues", "GET", "/api/queues", write=False))["queues"]
    return next(q for q in queues if q["name"] == queue)["rejected"]


def test_a_call_the_server_lacks_says_the_server_is_too_old(tl):
    with pytest.raises(ServerTooOld) as old:
        tl._perform(Call("future_call", "GET", "/api/a-route-of-a-later-version", write=False, since="99.0.0"))
    assert old.value.server == tl.server_version() and "99.0.0" in str(old.value)


def test_problem_documents_map_to_their_exceptions():
    unmeetable = problem_error(429, {"type": "urn:taskline:problem:deadline-unmeetable", "estimatedWaitMs": 5017,
                                     "estimatedStartAt": "2026-12-01T20:40:48Z", "retryAfterSeconds": 5}, None)
    assert isinstance(unmeetable, DeadlineUnmeetable)
    assert unmeetable.estimated_wait_ms == 5017 and unmeetable.retry_after == 5
    assert isinstance(problem_error(409, {"type": "urn:taskline:problem:already-finished"}, None), Conflict)
    assert type(problem_error(418, {}, None)).__name__ == "ProblemError"


def test_wait_gives_up_at_its_timeout_though_the_stream_stays_open(tl):
    delayed = tl.submit("sleep", {"ms": 1}, queue="local", delay=3600)
    started = __import__("time").monotonic()
    with pytest.raises(TimeoutError):
        tl.wait(delayed.id, timeout=0.5)
    assert __import__("time").monotonic() - started < 5
    async def go():
        async with AsyncTaskline(URL, key=KEY) as atl:
            with pytest.raises(TimeoutError):
                await atl.wait(delayed.id, timeout=0.5)
    asyncio.run(go())
    tl.cancel(delayed.id)
