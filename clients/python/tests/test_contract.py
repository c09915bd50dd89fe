"""The OpenAPI document is the contract: every route this package calls is in it, with its method,
so that a route renamed on the server fails here and not for a user."""
import json
import re
import urllib.request

from conftest import URL
from taskline import _calls, flows

ID = "01a23c5f-2dfa-7000-8ff1-4338d4dbf79a"

# Every call the clients make, built as they build it.
CLIENT_CALLS = [
    _calls.submit("t"), _calls.submit_batch([flows.task("t")]), _calls.flow(flows.chain(flows.task("t"))),
    _calls.get(ID), _calls.get_flow(ID), _calls.get_batch(ID), _calls.list_tasks(state="failed"),
    _calls.cancel(ID), _calls.retry(ID), _calls.cancel_flow(ID), _calls.retry_flow(ID),
    _calls.signal(ID, "payment"), _calls.send_event("paid"), _calls.live(),
]

# The streams and the worker's own routes (see Worker and Context).
OTHER_ROUTES = [
    ("GET", _calls.stream_path("tasks", ID)), ("GET", _calls.stream_path("batches", ID)),
    ("GET", _calls.stream_path("flows", ID)),
    ("POST", "/api/queues/py/work"), ("POST", "/api/queues/py/heartbeat"),
    ("POST", f"/api/tasks/{ID}/complete"), ("POST", f"/api/tasks/{ID}/steps/reserve"),
]


def routes():
    with urllib.request.urlopen(URL + "/openapi.json") as answer:
        document = json.load(answer)
    table = []
    for template, operations in document["paths"].items():
        pattern = re.compile("^" + re.sub(r"\{[^}]+\}", "[^/]+", template) + "$")
        table += [(method.upper(), pattern, operations[method]) for method in operations]
    return table


def test_every_route_the_package_calls_is_in_the_servers_contract():
    table = routes()
    called = [(c.method, c.path.split("?", 1)[0]) for c in CLIENT_CALLS] + OTHER_ROUTES
    missing = [f"{m} {p}" for m, p in called if not any(m == tm and tp.match(p) for tm, tp, _ in table)]
    assert not missing, f"routes the package calls that the server does not have: {missing}"


def test_the_fields_the_worker_sends_on_a_work_call_are_in_the_contract():
    work = next(op for m, p, op in routes() if m == "POST" and p.match("/api/queues/py/work"))
    schema = work["requestBody"]["content"]["application/json"]["schema"]["properties"]
    assert {"worker", "max", "types", "waitMs", "complete", "fail"} <= set(schema)
    assert {"snoozeMs", "release", "error", "retry"} <= set(schema["fail"]["items"]["properties"])
