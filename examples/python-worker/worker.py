#!/usr/bin/env python3
"""A Taskline worker in Python, standard library only. Runs `sum` ({"numbers": [...]}) and
`qualification-match` (the node's own scoring, in qualification.py; "simulateMs" stands in for
a slow model call, heart-beaten with progress while it runs).

Its loop is the fast one: one kept-alive connection, and one round trip a batch
(`POST /api/queues/{q}/work` hands in the batch's results and claims the next). A task that ends
well within its lease is never heart-beaten; a batch still running at a third of its lease hands in
what is done and renews the rest."""
import argparse, calendar, http.client, json, time, urllib.parse

import qualification


class Node:
    """One kept-alive HTTP/1.1 connection to the node, opened again once if the node closed it."""

    def __init__(self, url):
        parts = urllib.parse.urlsplit(url)
        self.connection = http.client.HTTPConnection(parts.hostname, parts.port or 80, timeout=70)

    def post(self, path, body):
        for retry in (False, True):
            try:
                self.connection.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
                answer = self.connection.getresponse()
                return answer.status, json.loads(answer.read() or b"{}")  # 4xx: application/problem+json
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                self.connection.close()  # a claim the node answered into a closed connection is handed back
                if retry:
                    raise


def run_sum(payload):
    numbers = payload.get("numbers")
    if not isinstance(numbers, list) or not all(isinstance(n, (int, float)) for n in numbers):
        raise ValueError("payload.numbers must be a list of numbers")
    return {"sum": sum(numbers), "count": len(numbers)}


HANDLERS = {"sum": run_sum, "qualification-match": qualification.score}


def expires(lease):
    """The lease's end, in seconds since the epoch (to the second: enough to renew at a third)."""
    return calendar.timegm(time.strptime(lease["expiresAt"][:19], "%Y-%m-%dT%H:%M:%S"))


def run(node, task):
    """Runs one task; what to hand in: ("complete", item) or ("fail", item), or None when it is no longer ours."""
    lease, payload = task["lease"]["token"], task["payload"]
    steps = 10 if payload.get("simulateMs") else 0
    for step in range(1, steps + 1):  # the slow part: heartbeat with progress as it goes
        time.sleep(payload["simulateMs"] / 1000 / steps)
        progress = {"percent": step * 100 // steps, "message": f"step {step} of {steps}"}
        status, beat = node.post(f"/api/tasks/{task['id']}/heartbeat", {"lease": lease, "progress": progress})
        if status != 200 or beat["cancelRequested"]:
            return None  # lost or cancelled: someone else's now, or no longer wanted
    try:
        return "complete", {"id": task["id"], "lease": lease, "result": HANDLERS[task["type"]](payload)}
    except (ValueError, KeyError, TypeError) as e:  # a bad payload: retrying will not mend it
        return "fail", {"id": task["id"], "lease": lease, "error": f"{type(e).__name__}: {e}", "retry": False}


def main():
    args = argparse.ArgumentParser()
    args.add_argument("--url", default="http://127.0.0.1:8080")
    args.add_argument("--queue", default="python")
    args.add_argument("--worker", default="python-1")
    args.add_argument("--max", type=int, default=250,
                      help="most tasks a batch claims: for slow tasks, fewer (a batch runs one task at a time)")
    args.add_argument("--verbose", action="store_true", help="print every task, not only those that did not succeed")
    args.add_argument("--exit-when-idle", action="store_true", help="stop after a claim that found nothing")
    opts = args.parse_args()
    node, path = Node(opts.url), f"/api/queues/{opts.queue}"
    done = {"complete": [], "fail": []}

    def work(most):
        """Hands in what is done and claims up to `most` tasks (0: none); the tasks claimed."""
        status, answer = node.post(path + "/work", {"worker": opts.worker, "max": most, "types": list(HANDLERS),
                                   "waitMs": 1000 if opts.exit_when_idle else 20000, **done})
        if status != 200:
            raise SystemExit(f"work refused: {status} {answer}")
        for item in answer["completed"] + answer["failed"]:
            if opts.verbose or item.get("state") != "succeeded":
                print(item["id"], item["status"], item.get("state", item.get("type")), flush=True)
        done["complete"], done["fail"] = [], []
        return answer["tasks"]

    while True:
        tasks = work(opts.max)
        if not tasks and opts.exit_when_idle:
            return
        third = (min(expires(t["lease"]) for t in tasks) - time.time()) / 3 if tasks else 0
        renew_at = time.time() + third
        for i, task in enumerate(tasks):
            if time.time() >= renew_at:  # a long batch: hand in what is done, renew the rest
                work(0)
                node.post(path + "/heartbeat", {"tasks": [{"id": t["id"], "lease": t["lease"]["token"]}
                                                          for t in tasks[i:]]})
                renew_at = time.time() + third
            ended = run(node, task)
            if ended:
                done[ended[0]].append(ended[1])


if __name__ == "__main__":
    main()
