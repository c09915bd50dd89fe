#!/usr/bin/env python3
"""A Taskline worker in Python, standard library only: claim tasks of a remote queue, report
progress with the heartbeat, complete or fail each. Runs `sum` ({"numbers": [...]}) and
`qualification-match` (the node's own scoring, in qualification.py; "simulateMs" stands in for
a slow model call, heart-beaten with progress while it runs)."""
import argparse, json, time, urllib.error, urllib.request

import qualification


def call(url, path, body):
    request = urllib.request.Request(url + path, data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=70) as answer:
            return answer.status, json.load(answer)
    except urllib.error.HTTPError as e:  # 409 lease-lost, 4xx problems: application/problem+json
        return e.code, json.load(e)


def run_sum(payload):
    numbers = payload.get("numbers")
    if not isinstance(numbers, list) or not all(isinstance(n, (int, float)) for n in numbers):
        raise ValueError("payload.numbers must be a list of numbers")
    return {"sum": sum(numbers), "count": len(numbers)}


HANDLERS = {"sum": run_sum, "qualification-match": qualification.score}


def main():
    args = argparse.ArgumentParser()
    args.add_argument("--url", default="http://127.0.0.1:8080")
    args.add_argument("--queue", default="python")
    args.add_argument("--worker", default="python-1")
    args.add_argument("--exit-when-idle", action="store_true", help="stop after a claim that found nothing")
    opts = args.parse_args()
    while True:
        status, answer = call(opts.url, f"/api/queues/{opts.queue}/claim", {"worker": opts.worker, "max": 10,
                              "waitMs": 1000 if opts.exit_when_idle else 20000, "types": list(HANDLERS)})
        if status != 200:
            raise SystemExit(f"claim refused: {status} {answer}")
        if not answer["tasks"] and opts.exit_when_idle:
            return
        for task in answer["tasks"]:
            lease, path = task["lease"]["token"], f"/api/tasks/{task['id']}"
            steps = 10 if task["payload"].get("simulateMs") else 1
            for step in range(1, steps + 1):  # the slow part, if any: heartbeat with progress as it goes
                time.sleep(task["payload"].get("simulateMs", 0) / 1000 / steps)
                progress = {"percent": step * 100 // steps, "message": f"step {step} of {steps}"}
                status, beat = call(opts.url, path + "/heartbeat", {"lease": lease, "progress": progress})
                if status != 200 or beat["cancelRequested"]:
                    break  # lost or cancelled: someone else's now, or no longer wanted
            if status != 200 or beat["cancelRequested"]:
                continue
            try:
                result = HANDLERS[task["type"]](task["payload"])
                status, done = call(opts.url, path + "/complete", {"lease": lease, "result": result})
            except (ValueError, KeyError, TypeError) as e:  # a bad payload: retrying will not mend it
                status, done = call(opts.url, path + "/fail",
                                    {"lease": lease, "error": f"{type(e).__name__}: {e}", "retry": False})
            print(task["id"], status, done.get("state", done.get("type")), flush=True)


if __name__ == "__main__":
    main()
