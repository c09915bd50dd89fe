"""The worker process: runs `qualification-match` tasks of the `python` queue with the package's
asyncio worker, reporting progress while the (simulated) model call runs.

    pip install ./clients/python
    python3 examples/python-package/matcher.py
"""
import asyncio
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python-worker"))
import qualification  # the node's own scoring, in Python  # noqa: E402

from taskline import Permanent, Worker  # noqa: E402

worker = Worker(os.environ.get("TASKLINE_URL", "http://127.0.0.1:8080"), key=os.environ.get("TASKLINE_KEY"),
                queue="python", concurrency=20)


@worker.handler("qualification-match")
async def match(ctx, payload):
    if not isinstance(payload, dict) or "company" not in payload or "project" not in payload:
        raise Permanent("payload needs a company and a project")
    steps = 5
    for step in range(1, steps + 1):  # the slow model call, in steps
        await asyncio.sleep(payload.get("simulateMs", 0) / 1000 / steps)
        ctx.progress(step * 100 // steps, f"scoring, step {step} of {steps}")
    result = qualification.score(payload)
    result["project"] = payload["project"]["name"]  # for the ranking
    return result


if __name__ == "__main__":
    worker.run()  # until Ctrl-C or SIGTERM: running matches finish, the rest are handed back
