"""The asyncio worker against a real node: its claim and complete path, failures, heartbeats,
cancels, fencing, durable steps and waits, and stopping."""
import asyncio
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import pytest

from conftest import KEY, URL, until
from taskline import Permanent, Snooze, Worker, chain, task


def worker(**options):
    options.setdefault("queue", "py")
    options.setdefault("concurrency", 20)
    return Worker(URL, key=KEY, poll_wait=1.0, **options)


def reasons(t):
    return [h.reason for h in t.history]


def test_a_batch_of_tasks_is_claimed_run_and_handed_in(tl, kind):
    ids = [t.id for start in range(0, 300, 100)
           for t in tl.submit_batch([task(kind, {"numbers": [i, i]}, queue="py")
                                     for i in range(start, start + 100)]).tasks]
    w = worker(concurrency=50, exit_when_idle=True)

    @w.handler(kind)
    async def add(ctx, payload):
        return {"sum": sum(payload["numbers"]), "attempt": ctx.attempt}

    asyncio.run(w.serve())
    assert w.counts["succeeded"] == 300
    for i in (0, 150, 299):
        done = tl.get(ids[i])
        assert done.state == "succeeded" and done.result == {"sum": 2 * i, "attempt": 1}
        assert reasons(done) == ["submitted", "claimed", "succeeded"]


def test_an_error_is_retried_while_attempts_last_and_permanent_fails_at_once(tl, kind):
    flaky = tl.submit(kind, {"fail": "always"}, queue="py", max_attempts=2)
    fatal = tl.submit(kind, {"fail": "permanent"}, queue="py", max_attempts=3)
    sync_one = tl.submit(kind, {"fail": "no"}, queue="py")
    w = worker(exit_when_idle=True)

    @w.handler(kind)
    def run(ctx, payload):  # a plain def: it runs in a thread
        ctx.progress(50, "half way")
        if payload["fail"] == "always":
            raise ValueError("the model timed out")
        if payload["fail"] == "permanent":
            raise Permanent("the payload cannot be matched")
        return {"thread": True, "step": ctx.step("once", lambda: 42)}

    with_background_until_idle(w, lambda: all(tl.get(i).finished for i in (flaky.id, fatal.id, sync_one.id)))
    flaky_t, fatal_t, sync_t = (tl.get(i) for i in (flaky.id, fatal.id, sync_one.id))
    assert flaky_t.state == "failed" and flaky_t.attempt == 2
    assert "ValueError: the model timed out" in str(flaky_t.error)
    assert fatal_t.state == "failed" and fatal_t.attempt == 1
    assert sync_t.state == "succeeded" and sync_t.result == {"thread": True, "step": 42}


def with_background_until_idle(w, done, timeout=60):
    thread = threading.Thread(target=lambda: asyncio.run(w.serve()), daemon=True)
    thread.start()
    try:
        until(done, "the tasks to end", timeout)
    finally:
        w.stop()
        thread.join(30)


def test_a_snooze_runs_the_task_again_without_spending_an_attempt(tl, kind):
    submitted = tl.submit(kind, None, queue="py", max_attempts=1)
    w = worker()

    @w.handler(kind)
    async def later(ctx, payload):
        if "snoozed" not in ctx.steps:
            await ctx.step("snoozed", lambda: True)
            raise Snooze(0.2)
        return {"attempt": ctx.attempt}

    with_background_until_idle(w, lambda: tl.get(submitted.id).finished)
    done = tl.get(submitted.id)
    assert done.state == "succeeded" and done.result == {"attempt": 1}, "one attempt allowed, none spent on the snooze"
    assert "snoozed" in reasons(done)


def test_a_task_that_outlives_its_lease_is_heart_beaten_with_its_progress(tl, kind):
    submitted = tl.submit(kind, None, queue="short")  # a 1.5 s lease
    w = worker(queue="short")

    @w.handler(kind)
    async def slow(ctx, payload):
        for step in range(1, 5):
            await asyncio.sleep(1.0)
            ctx.progress(step * 25, f"step {step}")
        return {"took": 4}

    progress = []
    events = threading.Thread(target=lambda: progress.extend(
        e.data["percent"] for e in tl_events(submitted.id) if e.event == "progress"), daemon=True)
    events.start()
    with_background_until_idle(w, lambda: tl.get(submitted.id).finished)
    events.join(10)
    done = tl.get(submitted.id)
    assert done.state == "succeeded" and done.attempt == 1
    assert reasons(done) == ["submitted", "claimed", "succeeded"], "never taken over"
    assert 100 in progress or 75 in progress, progress


def tl_events(task_id):
    from taskline import Taskline
    with Taskline(URL, key=KEY) as client:
        yield from client.events(task_id)


def test_a_cancel_cancels_the_running_handler(tl, kind):
    submitted = tl.submit(kind, None, queue="short")
    started, seen = threading.Event(), []
    w = worker(queue="short")

    @w.handler(kind)
    async def forever(ctx, payload):
        started.set()
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            seen.append(ctx.cancelled)
            raise

    thread = threading.Thread(target=lambda: asyncio.run(w.serve()), daemon=True)
    thread.start()
    try:
        assert started.wait(30)
        assert tl.cancel(submitted.id) == "cancelling"
        assert tl.wait(submitted.id, timeout=30).state == "cancelled"
        assert seen == [True]
    finally:
        w.stop()
        thread.join(30)


def test_a_stalled_workers_late_result_is_fenced(tl, kind):
    submitted = tl.submit(kind, None, queue="short")
    first_running, second_done = threading.Event(), threading.Event()
    stalled = worker(queue="short", name="stalled")

    async def no_heartbeats():  # a worker stalled past its lease: it renews nothing
        await asyncio.Event().wait()
    stalled._heartbeats = no_heartbeats

    @stalled.handler(kind)
    async def late(ctx, payload):
        first_running.set()
        await asyncio.get_running_loop().run_in_executor(None, second_done.wait, 60)
        return {"by": "stalled"}

    healthy = worker(queue="short", name="healthy")

    @healthy.handler(kind)
    async def prompt(ctx, payload):
        return {"by": "healthy", "attempt": ctx.attempt}

    thread = threading.Thread(target=lambda: asyncio.run(stalled.serve()), daemon=True)
    thread.start()
    try:
        assert first_running.wait(30)
        stalled.stop()  # claims no more; its handler runs on (within the grace)
        until(lambda: tl.get(submitted.id).state == "pending" or tl.get(submitted.id).attempt > 1,
              "the lapsed lease to be taken back")
        with_background_until_idle(healthy, lambda: tl.get(submitted.id).finished)
        second_done.set()
        thread.join(30)
    finally:
        second_done.set()
    done = tl.get(submitted.id)
    assert done.result == {"by": "healthy", "attempt": 2}, "the late result was fenced, not kept"
    assert reasons(done)[-1] == "succeeded"


def test_durable_sleeps_signals_events_and_flow_parents(tl, kind):
    w = worker()
    runs = []

    @w.handler(kind)
    async def order(ctx, payload):
        runs.append(ctx.attempt)
        reserved = await ctx.step("reserve", lambda: {"stock": "held", "id": ctx.step_id("reserve")})
        await ctx.sleep("nap", 0.2)
        paid = await ctx.wait_for_signal("payment", timeout=60)
        shipped = await ctx.wait_for_event("shipped", "data.order", payload["order"], timeout=60)
        return {"reserved": reserved, "paid": paid, "shipped": shipped["data"]}

    child_kind = kind + "-child"

    @w.handler(child_kind)
    async def child(ctx, payload):
        return {"parents": ctx.parents}

    order_id = f"o-{kind}"
    submitted = tl.submit(kind, {"order": order_id}, queue="py")
    flow = tl.flow(chain(task("sleep", {"ms": 1}, queue="local", key="first"), task(child_kind, queue="py")))
    thread = threading.Thread(target=lambda: asyncio.run(w.serve()), daemon=True)
    thread.start()
    try:
        until(lambda: (tl.get(submitted.id).raw.get("wait") or {}).get("kind") == "signal", "the signal wait")
        sent = tl.signal(submitted.id, "payment", {"paid": 12})
        assert sent.name == "payment"
        until(lambda: (tl.get(submitted.id).raw.get("wait") or {}).get("kind") == "event", "the event wait")
        delivered = tl.send_event("shipped", {"order": order_id, "carrier": "post"}, id=f"ev-{kind}")
        assert delivered.delivered == 1
        done = tl.wait(submitted.id, timeout=30)
        for _ in tl.events(flow.flow_id, kind="flows"):
            pass
    finally:
        w.stop()
        thread.join(30)
    assert done.state == "succeeded", done.raw
    assert done.result["reserved"] == {"stock": "held", "id": f"{submitted.id}:reserve"}
    assert done.result["paid"] == {"paid": 12} and done.result["shipped"]["carrier"] == "post"
    assert [s["name"] for s in done.steps][:1] == ["reserve"]
    assert "suspended" in reasons(done) and "resumed" in reasons(done)
    assert set(runs) == {1}, "suspensions spend no attempt"
    assert tl.get_flow(flow.flow_id).tasks["1"]["result"]["parents"]["first"]["sleptMs"] == 1


WORKER_SCRIPT = textwrap.dedent("""
    import asyncio, os, sys, time
    from taskline import Worker
    url, key, kind, marks = sys.argv[1:5]
    w = Worker(url, key=key, queue="short", concurrency=4, grace=float(os.environ.get("GRACE", "30")),
               poll_wait=1.0)

    @w.handler(kind)
    async def handle(ctx, payload):
        def mark():
            with open(os.path.join(marks, "a"), "a") as f:
                f.write("ran\\n")
            return "a-done"
        a = await ctx.step("a", mark)
        if payload.get("block"):
            open(os.path.join(marks, "blocked-" + ctx.id), "w").close()
            await asyncio.sleep(3600)
        return {"a": a, "attempt": ctx.attempt}

    print("ready", flush=True)
    w.run()
    print("stopped", w.counts, flush=True)
""")


def start_script(tmp_path, kind, grace="30"):
    script = tmp_path / "worker_script.py"
    script.write_text(WORKER_SCRIPT)
    env = dict(os.environ, GRACE=grace)
    return subprocess.Popen([sys.executable, str(script), URL, KEY, kind, str(tmp_path)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def test_a_killed_workers_task_resumes_past_its_steps_on_the_next_worker(tl, kind, tmp_path):
    submitted = tl.submit(kind, {"block": True}, queue="short")
    first = start_script(tmp_path, kind)
    try:
        until(lambda: (tmp_path / f"blocked-{submitted.id}").exists(), "the step to be journaled")
    finally:
        first.kill()
        first.wait(30)
    (tmp_path / f"blocked-{submitted.id}").unlink()
    second = start_script(tmp_path, kind)
    try:
        until(lambda: (tmp_path / f"blocked-{submitted.id}").exists(), "the second run", timeout=60)
        assert tl.get(submitted.id).attempt == 2
    finally:
        second.kill()
        second.wait(30)
    assert len((tmp_path / "a").read_text().splitlines()) == 1, "the step ran once, across the kill"
    tl.cancel(submitted.id)


def test_sigterm_lets_running_tasks_end_within_the_grace_and_hands_the_rest_back(tl, kind, tmp_path):
    blocked = [tl.submit(kind, {"block": True}, queue="short") for _ in range(2)]
    proc = start_script(tmp_path, kind, grace="0.5")
    try:
        until(lambda: all((tmp_path / f"blocked-{b.id}").exists() for b in blocked), "both to run")
        started = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        output, _ = proc.communicate(timeout=30)
        assert time.monotonic() - started < 10
    finally:
        if proc.poll() is None:
            proc.kill()
    assert "'released': 2" in output, output
    for b in blocked:
        t = tl.get(b.id)
        assert t.state == "pending" and t.attempt == 0, "handed back, its attempt unspent"
        assert reasons(t)[-1] == "released"
        tl.cancel(b.id)


def test_a_worker_asked_to_exit_when_idle_exits_on_an_empty_queue(kind):
    w = worker(exit_when_idle=True)

    @w.handler(kind)
    async def never(ctx, payload):
        raise AssertionError("no task of this type was submitted")

    started = time.monotonic()
    asyncio.run(asyncio.wait_for(w.serve(), 30))  # both claim loops find nothing and end
    assert time.monotonic() - started < 10
