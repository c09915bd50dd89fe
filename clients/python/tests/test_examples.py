"""The README's Python example, as written: the endpoint submits five matches as a chord with a
rank and answers at once; the worker process runs the matches with progress."""
import json
import os
import signal
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from conftest import KEY, URL, until

EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "python-package"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_the_endpoint_and_the_matcher_rank_five_projects():
    env = dict(os.environ, TASKLINE_URL=URL, TASKLINE_KEY=KEY, PORT=str(free_port()))
    matcher = subprocess.Popen([sys.executable, str(EXAMPLES / "matcher.py")], env=env)
    app = subprocess.Popen([sys.executable, str(EXAMPLES / "app.py")], env=env)
    base = f"http://127.0.0.1:{env['PORT']}"
    try:
        projects = [{"name": f"P{level}", "requirements": [{"name": "Java", "minLevel": level * 2}]}
                    for level in range(1, 6)]
        body = json.dumps({"company": {"name": "Acme", "qualifications": [{"name": "Java", "level": 5}]},
                           "projects": projects}).encode()

        def post():
            try:
                request = urllib.request.Request(base + "/matches", body, {"Content-Type": "application/json"})
                with urllib.request.urlopen(request) as answer:
                    return answer.status, json.load(answer)
            except OSError:
                return None  # the endpoint is still starting
        status, accepted = until(post, "the endpoint to answer")
        assert status == 202 and set(accepted["tasks"]) == {"P1", "P2", "P3", "P4", "P5", "ranking"}

        def ranked():
            with urllib.request.urlopen(f"{base}/matches/{accepted['flowId']}") as answer:
                where = json.load(answer)
            return where if where["state"] == "succeeded" else None
        where = until(ranked, "the ranking", timeout=60)
        assert [r["project"] for r in where["ranking"]] == ["P1", "P2", "P3", "P4", "P5"]
        assert where["ranking"][0]["score"] == 100
    finally:
        app.kill()
        matcher.send_signal(signal.SIGTERM)
        assert matcher.wait(30) == 0
        app.wait(30)


@pytest.mark.local
def test_the_endpoint_answers_a_bad_body_with_a_clear_4xx_and_keeps_serving():
    # No node is needed: a body the endpoint cannot use is refused before anything is submitted.
    env = dict(os.environ, TASKLINE_URL="http://127.0.0.1:9", PORT=str(free_port()))
    env.pop("TASKLINE_KEY", None)
    app = subprocess.Popen([sys.executable, str(EXAMPLES / "app.py")], env=env, stderr=subprocess.PIPE)
    base = f"http://127.0.0.1:{env['PORT']}"

    def post(body):
        request = urllib.request.Request(base + "/matches", body, {"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request) as answer:
                return answer.status, json.load(answer)
        except urllib.error.HTTPError as refused:
            return refused.code, json.load(refused)

    def started():
        try:
            return post(b"not json")
        except OSError:
            return None  # the endpoint is still starting
    try:
        status, answer = until(started, "the endpoint to answer")
        assert status == 400 and answer["error"] == "invalid" and "not JSON" in answer["detail"]
        for body, says in [(b"[1, 2]", "JSON object"), (b'{"company": "Acme", "projects": []}', "company"),
                           (b'{"company": {}, "projects": []}', "projects"),
                           (b'{"company": {}, "projects": [{"requirements": []}]}', "name"),
                           (b'{"company": {}, "projects": [{"name": "P"}, {"name": "P"}]}', "same name")]:
            status, answer = post(body)
            assert status == 422 and says in answer["detail"], (body, status, answer)
        assert app.poll() is None, "the endpoint is still serving"
    finally:
        app.kill()
        app.wait(30)
