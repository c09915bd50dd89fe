"""A back end's endpoint: `POST /matches` with a company and five projects submits the five
matches as a chord whose `rank` orders the projects by score, and answers at once with the ids;
`GET /matches/<flow id>` tells where they stand (and the ranking once there). Standard library
only (ThreadingHTTPServer); in FastAPI the two handlers would be the same few lines each.

    python3 examples/python-package/app.py          # listens on 127.0.0.1:8000
"""
import json
import os
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from taskline import BadRequest, InvalidInput, NotFound, QueueFull, Taskline, chord, group, task

taskline = Taskline(os.environ.get("TASKLINE_URL", "http://127.0.0.1:8080"), key=os.environ.get("TASKLINE_KEY"))


def submit_matches(company, projects):
    matches = group(*(task("qualification-match", {"company": company, "project": p, "simulateMs": 1000},
                           queue="python", key=p["name"]) for p in projects))
    flow = taskline.flow(chord(matches, then=task("rank", {"by": "score"}, key="ranking")), name="matches")
    return {"flowId": flow.flow_id, "tasks": flow.ids}


class BadBody(Exception):
    """What the caller sent cannot be matched: answered 400 (not JSON) or 422 (JSON of another shape)."""

    def __init__(self, status, detail):
        super().__init__(detail)
        self.status, self.detail = status, detail


def read_matches(raw):
    """The company and the projects of a request's body, checked before anything is submitted."""
    try:
        body = json.loads(raw or b"{}")
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise BadBody(400, f"the body is not JSON: {e}")
    if not isinstance(body, dict):
        raise BadBody(422, "the body must be a JSON object: {\"company\": {...}, \"projects\": [...]}")
    company, projects = body.get("company"), body.get("projects")
    if not isinstance(company, dict):
        raise BadBody(422, "company must be an object, as {\"name\": ..., \"qualifications\": [...]}")
    if not isinstance(projects, list) or not projects:
        raise BadBody(422, "projects must be a non-empty list")
    names = [p.get("name") if isinstance(p, dict) else None for p in projects]
    if not all(isinstance(n, str) and n for n in names):
        raise BadBody(422, "each project must be an object with a name")
    if len(set(names)) != len(names):
        raise BadBody(422, "two projects have the same name")
    return company, projects


def where(flow_id):
    flow = taskline.get_flow(flow_id)
    ranking = flow.tasks["ranking"].get("result") if flow.state == "succeeded" else None
    progress = {key: t.get("state") for key, t in flow.tasks.items()}
    return {"state": flow.state, "tasks": progress, "ranking": ranking and ranking["ranking"]}


class Endpoint(BaseHTTPRequestHandler):
    def do_POST(self):
        if self.path != "/matches":
            return self.answer(404, {"error": "no such route"})
        try:
            length = int(self.headers.get("Content-Length", 0))
        except ValueError:
            return self.answer(400, {"error": "invalid", "detail": "Content-Length is not a number"})
        try:
            company, projects = read_matches(self.rfile.read(length))
            self.answer(202, submit_matches(company, projects))
        except BadBody as bad:
            self.answer(bad.status, {"error": "invalid", "detail": bad.detail})
        except InvalidInput as invalid:  # the node's 422: a payload its handlers or queues refuse
            self.answer(422, {"error": "invalid", "detail": invalid.detail})
        except QueueFull as full:  # backpressure reaches our caller as it reached us
            self.answer(429, {"error": "busy", "retryAfter": full.retry_after})

    def do_GET(self):
        if not self.path.startswith("/matches/"):
            return self.answer(404, {"error": "no such route"})
        try:
            self.answer(200, where(self.path.split("/")[2]))
        except (BadRequest, NotFound, ValueError):  # an id the node does not know, or one that is no id at all
            self.answer(404, {"error": "no such matches"})

    def answer(self, status, body):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


if __name__ == "__main__":
    port = int(os.environ.get("PORT", "8000"))
    ThreadingHTTPServer(("127.0.0.1", port), Endpoint).serve_forever()
