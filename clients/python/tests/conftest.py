"""The suite runs against a real node: TASKLINE_URL (and TASKLINE_KEY, an admin's key, and
TASKLINE_READ_KEY, a key with the read scope only) name it. `mvn test` starts one and sets them
(ClientPackagesTest); by hand, start a node with the queues of that test's config."""
import asyncio
import os
import threading
import time
import uuid

import pytest

from taskline import Taskline

URL = os.environ.get("TASKLINE_URL")
KEY = os.environ.get("TASKLINE_KEY")
READ_KEY = os.environ.get("TASKLINE_READ_KEY")


def pytest_configure(config):
    config.addinivalue_line("markers", "local: needs no node (a hostile server of the test's own)")


def pytest_collection_modifyitems(config, items):
    if not URL:
        skip = pytest.mark.skip(reason="TASKLINE_URL names no node")
        for item in items:
            if item.get_closest_marker("local") is None:
                item.add_marker(skip)


@pytest.fixture
def tl():
    with Taskline(URL, key=KEY) as client:
        yield client


@pytest.fixture
def kind():
    """A task type of this test's own, so that no worker of another test takes its tasks."""
    return f"t-{uuid.uuid4().hex[:12]}"


def until(check, what, timeout=30.0):
    """Waits until check() gives something true (the node's state, read again and again)."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


class Background:
    """A worker serving in a thread of its own (its own event loop) while the test goes on."""

    def __init__(self, worker):
        self.worker = worker
        self.error = None
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        try:
            asyncio.run(self.worker.serve())
        except BaseException as e:  # noqa: BLE001 - reported by stop()
            self.error = e

    def stop(self, timeout=30.0):
        self.worker.stop()
        self.thread.join(timeout)
        assert not self.thread.is_alive(), "the worker stopped"
        if self.error:
            raise self.error

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


@pytest.fixture
def background():
    started = []

    def start(worker):
        b = Background(worker)
        started.append(b)
        return b

    yield start
    for b in started:
        if b.thread.is_alive():
            b.stop()
