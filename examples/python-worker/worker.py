#!/usr/bin/env python3
"""A Taskline worker in Python, standard library only: claim tasks of a remote queue, report
progress with the heartbeat, complete or fail each. Runs `sum` tasks: {"numbers": [...]}."""
import argparse, json, urllib.error, urllib.request


def call(url, path, body):
    request = urllib.request.Request(url + path, data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=70) as answer:
            return answer.status, json.load(answer)
    except urllib.error.HTTPError as e:  # 409 lease-lost, 4xx problems: application/problem+json
        return e.code, json.load(e)


def run(task):
    numbers = task["payload"].get("numbers")
    if not isinstance(numbers, list) or not all(isinstance(n, (int, float)) for n in numbers):
        raise ValueError("payload.numbers must be a list of numbers")
    return {"sum": sum(numbers), "count": len(numbers)}


def main():
    args = argparse.ArgumentParser()
    args.add_argument("--url", default="http://127.0.0.1:8080")
    args.add_argument("--queue", default="python")
    args.add_argument("--worker", default="python-1")
    args.add_argument("--exit-when-idle", action="store_true", help="stop after a claim that found nothing")
    opts = args.parse_args()
    wait = 1000 if opts.exit_when_idle else 20000
    while True:
        status, answer = call(opts.url, f"/api/queues/{opts.queue}/claim",
                              {"worker": opts.worker, "max": 10, "waitMs": wait})
        if status != 200:
            raise SystemExit(f"claim refused: {status} {answer}")
        if not answer["tasks"] and opts.exit_when_idle:
            return
        for task in answer["tasks"]:
            lease = task["lease"]["token"]
            path = f"/api/tasks/{task['id']}"
            status, beat = call(opts.url, path + "/heartbeat",
                                {"lease": lease, "progress": {"percent": 50, "message": "adding"}})
            if status != 200 or beat["cancelRequested"]:
                continue  # lost or cancelled: someone else's now, or no longer wanted
            try:
                status, done = call(opts.url, path + "/complete", {"lease": lease, "result": run(task)})
            except ValueError as e:
                status, done = call(opts.url, path + "/fail", {"lease": lease, "error": str(e), "retry": False})
            print(task["id"], status, done.get("state", done.get("type")), flush=True)


if __name__ == "__main__":
    main()
