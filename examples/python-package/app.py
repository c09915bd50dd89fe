"""A back end's endpoint: `POST /matches` with a company and five projects submits the five
matches as a chord whose `rank` orders the projects by score, and answers at once with the ids;
`GET /matches/<flow id>` tells where they stand (and the ranking once there). Standard library
only (ThreadingHTTPServer); in FastAPI the two handlers would be the same few lines each.

    python3 examples/python-package/app.py          # listens on 127.0.0.1:8000
"""
import json
import os
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from taskline import QueueFull, Taskline, chord, group, task

taskline = Taskline(os.environ.get("TASKLINE_URL", "http://127.0.0.1:8080"), key=os.environ.get("TASKLINE_KEY"))


def submit_matches(company, projects):
    matches = group(*(task("qualification-match", {"company": company, "project": p, "simulateMs": 1000},
                           queue="python", key=p["name"]) for p in projects))
    flow = taskline.flow(chord(matches, then=task("rank", {"by": "score"}, key="ranking")), name="matches")
    return {"flowId": flow.flow_id, "tasks": flow.ids}


def where(flow_id):
    flow = taskline.get_flow(flow_id)
    ranking = flow.tasks["ranking"].get("result") if flow.state == "succeeded" else None
    progress = {key: t.get("state") for key, t in flow.tasks.items()}
    return {"state": flow.state, "tasks": progress, "ranking": ranking and ranking["ranking"]}


class Endpoint(BaseHTTPRequestHandler):
    def do_POST(self):
        if self.path != "/matches":
            return self.answer(404, {"error": "no such route"})
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
        try:
            self.answer(202, submit_matches(body["company"], body["projects"]))
        except QueueFull as full:  # backpressure reaches our caller as it reached us
            self.answer(429, {"error": "busy", "retryAfter": full.retry_after})

    def do_GET(self):
        if not self.path.startswith("/matches/"):
            return self.answer(404, {"error": "no such route"})
        self.answer(200, where(self.path.split("/")[2]))

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
