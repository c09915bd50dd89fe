"""Durable steps for a Taskline remote worker, standard library only (Python 3.10+).

A handler may run several times for one task: a retry, a takeover after a crash, a resume after
a sleep or a wait. So it is written as a sequence of named steps, and the server journals each
step's result: on every run the steps already done return their journaled result at once and only
the rest run. Sleeps and waits end the run *suspended* (the task holds no slot and spends no
attempt) and the server runs the handler again when the time comes or the signal or event arrives.
Steps are found again by name, not by replaying a history, so code may change between deploys;
but the code between steps runs again on every run: keep it free of outside effects."""
import http.client, json, re, sys, threading, time, urllib.parse
from datetime import datetime, timezone


class Suspend(BaseException):
    """Unwinds the handler at a sleep or a wait that has not happened yet; the runner turns it into
    a complete with `suspend`. Raised, so handlers need no plumbing for it; a BaseException, so a
    handler's `except Exception` does not swallow it."""
    def __init__(self, body):
        super().__init__(body["step"])
        self.body = body


class Permanent(Exception):
    """Fails the task for good: a retry would not mend it (a declined card, an order undone)."""


class LeaseLost(BaseException):
    """The task was taken over (we stalled past the lease): someone else runs it now, so this run
    must stop without writing anything more."""


class Client:
    """One kept-alive connection per worker: its requests go one after another (the heartbeat
    thread waits its turn), so one socket is enough and no step pays a TCP handshake."""
    def __init__(self, url, key=None, timeout=70):  # timeout: longer than a claim's long poll
        parts = urllib.parse.urlsplit(url)
        self.host, self.port, self.base = parts.hostname, parts.port or 80, parts.path.rstrip("/")
        self.headers = {"Content-Type": "application/json"} | ({"Authorization": f"Bearer {key}"} if key else {})
        self.timeout, self.conn, self.lock = timeout, None, threading.Lock()

    def post(self, path, body):
        data = json.dumps(body).encode()
        with self.lock:
            for attempt in (1, 2):  # a second try: the server may have closed an idle connection
                try:
                    if self.conn is None:
                        self.conn = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
                    self.conn.request("POST", self.base + path, data, self.headers)
                    answer = self.conn.getresponse()
                    raw = answer.read()
                    return answer.status, json.loads(raw) if raw else {}
                except NETWORK_ERRORS:
                    if self.conn:
                        self.conn.close()
                    self.conn = None
                    if attempt == 2:
                        raise


NETWORK_ERRORS = (OSError, http.client.HTTPException)  # the server unreachable, restarting, or cut off


def _ms(seconds):
    return None if seconds is None else int(seconds * 1000)


class Context:
    """What a handler sees of its task. `steps` is the journal as of this run's claim."""
    def __init__(self, client, task):
        self.client, self.task_id, self.lease = client, task["id"], task["lease"]["token"]
        self.payload, self.attempt = task.get("payload"), task.get("attempt", 1)
        self.max_attempts, self.steps = task.get("maxAttempts", 1), dict(task.get("steps") or {})
        self._compensating = bool(task.get("compensating"))

    @property
    def cancelled(self):
        """True when a compensating cancel resumed the task: undo what was done, then return."""
        return self._compensating

    def step_id(self, name):
        """The same on every run of this step: the idempotency key to give outside services, since
        a step that dies between its effect and its journal write runs again."""
        return f"{self.task_id}:{name}"

    def step(self, name, fn):
        if name in self.steps:
            return self.steps[name]
        path = f"/api/tasks/{self.task_id}/steps/{urllib.parse.quote(name, safe='')}"
        status, answer = self.client.post(path, {"lease": self.lease, "result": fn()})
        if status == 409:
            raise LeaseLost(name)
        if status != 200:
            raise RuntimeError(f"step {name}: {status} {answer}")
        self.steps[name] = answer["result"]  # the first result journaled wins, even if not ours
        return answer["result"]

    def sleep(self, name, seconds):
        self._wait(name, {"sleepMs": _ms(seconds)})

    def sleep_until(self, name, when):
        instant = when.astimezone(timezone.utc).isoformat().replace("+00:00", "Z")
        self._wait(name, {"until": instant})

    def wait_for_signal(self, name, timeout_seconds=None, step=None):
        """The signal's payload ({} if it had none), or None when the wait timed out."""
        done = self._wait(step or name, {"signal": name, "timeoutMs": _ms(timeout_seconds)})
        return None if done is None or done.get("timedOut") else done.get("payload") or {}

    def wait_for_event(self, name, field, value, timeout_seconds=None, step=None):
        """The event ({"id", "name", "data"}), or None when the wait timed out."""
        event = {"name": name, "field": field, "value": value}
        done = self._wait(step or name, {"event": event, "timeoutMs": _ms(timeout_seconds)})
        return None if done is None or done.get("timedOut") else done.get("event")

    def _wait(self, step, what):
        if step in self.steps:  # the server completed it at this run's claim
            return self.steps[step]
        if self._compensating:  # undoing must not wait for anything
            return None
        raise Suspend({"step": step} | {k: v for k, v in what.items() if v is not None})

    def progress(self, percent, message=None):
        """Also renews the lease; answers whether someone asked to cancel the task."""
        status, answer = self.client.post(f"/api/tasks/{self.task_id}/heartbeat",
                                          {"lease": self.lease, "progress": {"percent": percent, "message": message}})
        if status == 409:
            raise LeaseLost("progress")
        return status == 200 and answer.get("cancelRequested", False)


def _expires_in(task):
    """Seconds the claim's lease is good for (Java writes up to 9 fractional digits, 3.10 reads 6)."""
    text = re.sub(r"(\.\d{6})\d+", r"\1", task["lease"]["expiresAt"]).replace("Z", "+00:00")
    return (datetime.fromisoformat(text) - datetime.now(timezone.utc)).total_seconds()


class Worker:
    """Claims tasks of one remote queue and runs them one at a time. A claim takes up to `max`
    tasks, so while one runs a thread keeps every held lease alive (one batch heartbeat), lest the
    others be taken over before their turn or a slow step lose its own."""
    def __init__(self, url, queue, handlers, worker_id, max=10, exit_when_idle=False, key=None):
        self.client, self.queue, self.handlers = Client(url, key), queue, handlers
        self.worker_id, self.max, self.exit_when_idle = worker_id, max, exit_when_idle
        self.held, self.beat_every, self.next_beat = {}, 5.0, 0.0
        threading.Thread(target=self._heartbeat, daemon=True).start()

    def _heartbeat(self):
        while True:
            time.sleep(0.25)
            held = [{"id": i, "lease": lease} for i, lease in list(self.held.items())]
            if not held or time.monotonic() < self.next_beat:
                continue
            self.next_beat = time.monotonic() + self.beat_every
            try:
                self.client.post(f"/api/queues/{self.queue}/heartbeat", {"tasks": held})
            except NETWORK_ERRORS as e:
                print("heartbeat:", e, file=sys.stderr, flush=True)

    def run(self):
        while True:
            try:
                status, answer = self.client.post(f"/api/queues/{self.queue}/claim", {
                    "worker": self.worker_id, "max": self.max, "types": list(self.handlers),
                    "waitMs": 1000 if self.exit_when_idle else 20000})
            except NETWORK_ERRORS as e:  # the server restarting: try again shortly
                print("claim:", e, file=sys.stderr, flush=True)
                time.sleep(1)
                continue
            if status != 200:
                raise SystemExit(f"claim refused: {status} {answer}")
            if not answer["tasks"] and self.exit_when_idle:
                return
            if answer["tasks"]:
                self.beat_every = max(0.5, min(_expires_in(t) for t in answer["tasks"]) / 3)
                self.next_beat = time.monotonic() + self.beat_every
            self.held = {t["id"]: t["lease"]["token"] for t in answer["tasks"]}
            for task in answer["tasks"]:
                try:
                    print(task["id"], *self._run(task), flush=True)
                except NETWORK_ERRORS as e:  # the lease lapses and the task runs again: nothing is lost
                    print(task["id"], "unreachable:", e, file=sys.stderr, flush=True)
                self.held.pop(task["id"], None)

    def _run(self, task):
        ctx, path = Context(self.client, task), f"/api/tasks/{task['id']}"
        try:
            status, done = self.client.post(path + "/complete",
                                            {"lease": ctx.lease, "result": self.handlers[task["type"]](ctx)})
        except Suspend as s:
            status, done = self.client.post(path + "/complete", {"lease": ctx.lease, "suspend": s.body})
            return status, done.get("state", done.get("type")), s.body
        except LeaseLost as lost:
            return "lease lost at", lost
        except Exception as e:  # retried while attempts last (not a Permanent); the steps done stay done
            status, done = self.client.post(path + "/fail", {"lease": ctx.lease, "retry": not isinstance(e, Permanent),
                                                             "error": f"{type(e).__name__}: {e}"})
        return status, done.get("state", done.get("type"))


def run(url, queue, handlers, worker_id, max=10, exit_when_idle=False, key=None):
    Worker(url, queue, handlers, worker_id, max, exit_when_idle, key).run()
