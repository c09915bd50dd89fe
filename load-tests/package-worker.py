#!/usr/bin/env python3
"""The Python package's worker for remote-drain.mjs: runs `sum` tasks of a remote queue with one
process and `--concurrency` slots, until stopped (SIGTERM, SIGINT) or, with --exit-when-idle,
until a claim finds nothing. Start it before `node load-tests/remote-drain.mjs --mode remote
--workers 0`. Needs the package: `pip install ./clients/python` (or PYTHONPATH=clients/python)."""
import argparse
import re

from taskline import Permanent, Worker

args = argparse.ArgumentParser()
args.add_argument("--url", default="http://127.0.0.1:18181")
args.add_argument("--queue", default="remote-bench")
args.add_argument("--concurrency", type=int, default=50)
args.add_argument("--exit-when-idle", action="store_true")
opts = args.parse_args()
if not re.match(r"^http://(127\.0\.0\.1|localhost)(:\d+)?$", opts.url):
    raise SystemExit("only 127.0.0.1")

worker = Worker(opts.url, queue=opts.queue, concurrency=opts.concurrency, name="package-worker",
                exit_when_idle=opts.exit_when_idle)


@worker.handler("sum")
async def add(ctx, payload):
    numbers = payload.get("numbers") if isinstance(payload, dict) else None
    if not isinstance(numbers, list):
        raise Permanent("payload.numbers must be a list of numbers")
    return {"sum": sum(numbers), "count": len(numbers)}


worker.run()
