#!/usr/bin/env python3
"""Framework smoke test: a real Celery worker on sluice through kombu's SQS transport.

Celery (`celery[sqs]`, pinned in requirements.txt) is the most used Python
framework on SQS. It runs here unchanged: the worker polls with kombu's
asynchronous SQS client (pycurl, signed AWS JSON 1.0 requests to the queue
URL), publishes and acknowledges through boto3.

Run by scripts/client-smoke, which starts sluice and sets SLUICE_ENDPOINT.
By hand:  SLUICE_ENDPOINT=http://127.0.0.1:PORT python frameworks_celery.py

This file is both the test driver (run as a script) and the Celery app the
worker imports (`celery -A frameworks_celery worker`): the tasks have fixed
names, and the driver's code runs only under `__main__`. Tasks report what
they did by appending a JSON line to a file (FW_CELERY_OUT), so no result
backend is needed.

What it proves:
  * the worker connects, creates its queue (CreateQueue with kombu's
    VisibilityTimeout) and becomes ready;
  * tasks sent with .delay() run exactly once each, and the queue empties;
  * retries: a task that fails twice and retries (self.retry, countdown 1 s)
    succeeds on its third attempt; an autoretry task gives up after
    max_retries;
  * a task rejected without requeue on a queue with a RedrivePolicy
    (maxReceiveCount 2) is redelivered after its visibility timeout and then
    lands in the dead-letter queue (kombu reads the RedrivePolicy and leaves
    the message to SQS);
  * acks_late: a worker that dies mid-task does not lose it; after the
    visibility timeout a second worker runs it;
  * the worker stops cleanly on SIGTERM (warm shutdown, exit status 0).
The worker is always killed at the end. The whole run takes about 30 s.

Output: one `ok - NAME` / `not ok - NAME` line per check, then a final line
`smoke-result: suite=NAME passed=N failed=M`; exit status 1 if any failed.
"""

import json
import os
import sys
import time
from urllib.parse import urlsplit

from celery import Celery
from celery.exceptions import Reject

ENDPOINT = os.environ.get("SLUICE_ENDPOINT")
if not ENDPOINT:
    sys.exit("SLUICE_ENDPOINT is not set (e.g. http://127.0.0.1:9324)")
_ep = urlsplit(ENDPOINT)
KEY, SECRET = "AKIDSLUICESMOKE", "sluicesmokesecret"
REGION = "us-east-1"
# The driver picks the prefix and passes it to the workers, so every run has
# its own queues.
PREFIX = os.environ.setdefault("FW_CELERY_PREFIX", f"fw-celery-{os.getpid()}-{int(time.time())}-")
OUT = os.environ.get("FW_CELERY_OUT", "")
DEFAULT_VISIBILITY = 3  # seconds, for the queue kombu creates
POISON_VISIBILITY = 2  # seconds, for the pre-created queue with a RedrivePolicy

app = Celery("sluice_smoke")
app.conf.update(
    # kombu's SQS transport takes a custom endpoint from the URL's host and
    # port (http when is_secure is False); the user and password are the keys.
    broker_url=f"sqs://{KEY}:{SECRET}@{_ep.hostname}:{_ep.port}",
    broker_transport_options={
        "region": REGION,
        "is_secure": False,
        "queue_name_prefix": PREFIX,
        "visibility_timeout": DEFAULT_VISIBILITY,
        "wait_time_seconds": 1,
        "polling_interval": 0.1,
        "client-config": {"connect_timeout": 5, "read_timeout": 30, "retries": {"total_max_attempts": 1}},
    },
    broker_connection_retry_on_startup=True,
    broker_connection_max_retries=3,
    task_default_queue="default",
    task_ignore_result=True,
    result_backend=None,
    worker_prefetch_multiplier=1,
    worker_enable_remote_control=False,  # needs a fanout exchange (SNS)
    worker_send_task_events=False,
    worker_hijack_root_logger=False,
    worker_redirect_stdouts=False,
)


def record(**fields):
    fields["pid"] = os.getpid()
    fields["t"] = time.time()
    with open(OUT, "a", encoding="utf-8") as f:
        f.write(json.dumps(fields) + "\n")


@app.task(name="smoke.record")
def record_task(i):
    record(task="record", i=i)


@app.task(name="smoke.flaky", bind=True, max_retries=3)
def flaky(self, key):
    record(task="flaky", key=key, retries=self.request.retries)
    if self.request.retries < 2:
        raise self.retry(exc=RuntimeError("not yet"), countdown=1)
    record(task="flaky-done", key=key)


@app.task(name="smoke.always_fails", bind=True, autoretry_for=(ValueError,), max_retries=1, default_retry_delay=1)
def always_fails(self, key):
    record(task="always_fails", key=key, retries=self.request.retries)
    raise ValueError("always fails")


@app.task(name="smoke.poison", bind=True, acks_late=True)
def poison(self, key):
    record(task="poison", key=key)
    raise Reject("poison", requeue=False)


@app.task(name="smoke.crash_once", bind=True, acks_late=True)
def crash_once(self, marker):
    if not os.path.exists(marker):
        open(marker, "w").close()
        record(task="crash_once", attempt="crash")
        os._exit(3)  # the worker dies mid-task, before acknowledging
    record(task="crash_once", attempt="done")


# ---------------------------------------------------------------------------
def main():
    import shutil
    import signal
    import subprocess
    import tempfile
    import traceback

    import boto3
    from botocore.config import Config

    passed = failed = 0

    def ok(name):
        nonlocal passed
        passed += 1
        print(f"ok - {name}", flush=True)

    def not_ok(name, why):
        nonlocal failed
        failed += 1
        print(f"not ok - {name}", flush=True)
        for line in str(why).rstrip().splitlines():
            print(f"#   {line}", flush=True)

    def check(name, cond, why=""):
        ok(name) if cond else not_ok(name, why or "condition false")
        return cond

    sqs = boto3.client(
        "sqs",
        endpoint_url=ENDPOINT,
        region_name=REGION,
        aws_access_key_id=KEY,
        aws_secret_access_key=SECRET,
        config=Config(retries={"total_max_attempts": 1}, connect_timeout=5, read_timeout=30),
    )

    tmp = tempfile.mkdtemp(prefix="fw-celery-")
    out = os.path.join(tmp, "records.jsonl")
    open(out, "w").close()
    os.environ["FW_CELERY_OUT"] = out
    global OUT
    OUT = out
    here = os.path.dirname(os.path.abspath(__file__))
    workers = []

    def records(task=None):
        with open(out, encoding="utf-8") as f:
            rows = [json.loads(line) for line in f if line.strip()]
        return [r for r in rows if task is None or r["task"] == task]

    def wait_for(what, pred, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if pred():
                return True
            time.sleep(0.1)
        raise TimeoutError(f"timed out after {timeout} s waiting for {what}")

    def start_worker(name):
        log = os.path.join(tmp, f"{name}.log")
        env = dict(os.environ, PYTHONPATH=here + os.pathsep + os.environ.get("PYTHONPATH", ""))
        with open(log, "w") as logf:
            p = subprocess.Popen(
                [sys.executable, "-m", "celery", "-A", "frameworks_celery", "worker",
                 "--pool", "solo", "--loglevel", "INFO", "-n", f"{name}@%h",
                 "-Q", "default,poison", "--without-gossip", "--without-mingle", "--without-heartbeat"],
                cwd=tmp, env=env, stdin=subprocess.DEVNULL, stdout=logf, stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        workers.append((p, log))

        def ready():
            if p.poll() is not None:
                raise RuntimeError(f"worker {name} exited with {p.returncode}:\n{open(log).read()[-3000:]}")
            return " ready." in open(log).read()

        wait_for(f"worker {name} to be ready", ready, 40)
        return p, log

    def kill_worker(p):
        if p.poll() is None:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            p.wait(timeout=10)

    def counts(url):
        a = sqs.get_queue_attributes(
            QueueUrl=url,
            AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible",
                            "ApproximateNumberOfMessagesDelayed"],
        )["Attributes"]
        return (int(a["ApproximateNumberOfMessages"]), int(a["ApproximateNumberOfMessagesNotVisible"]),
                int(a["ApproximateNumberOfMessagesDelayed"]))

    def step(name, fn):
        try:
            fn()
        except Exception:
            not_ok(name, traceback.format_exc())

    state = {}
    try:
        # -- a queue with a RedrivePolicy, created first as an operator would;
        #    kombu finds it by ListQueues(QueueNamePrefix=prefix).
        def setup():
            dlq = sqs.create_queue(QueueName=PREFIX + "dead")["QueueUrl"]
            arn = sqs.get_queue_attributes(QueueUrl=dlq, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
            state["dlq"] = dlq
            state["poison"] = sqs.create_queue(
                QueueName=PREFIX + "poison",
                Attributes={
                    "VisibilityTimeout": str(POISON_VISIBILITY),
                    "RedrivePolicy": json.dumps({"deadLetterTargetArn": arn, "maxReceiveCount": 2}),
                },
            )["QueueUrl"]
            ok("setup: a dead-letter queue and a source queue with RedrivePolicy maxReceiveCount 2")

        step("setup: queues", setup)

        def start_first():
            state["w1"], state["w1log"] = start_worker("w1")
            ok("a Celery worker (solo pool) connects to sluice over sqs:// and becomes ready")
            urls = sqs.list_queues(QueueNamePrefix=PREFIX + "default").get("QueueUrls", [])
            check("kombu created its queue `default` (CreateQueue)", len(urls) == 1, urls)
            state["default"] = urls[0]
            vt = sqs.get_queue_attributes(QueueUrl=urls[0], AttributeNames=["VisibilityTimeout"])["Attributes"]
            check("with kombu's visibility_timeout as the queue's VisibilityTimeout",
                  vt.get("VisibilityTimeout") == str(DEFAULT_VISIBILITY), vt)

        step("worker start", start_first)
        if "w1" not in state:
            raise RuntimeError("no worker; the remaining checks cannot run")

        # -- plain tasks --------------------------------------------------
        def plain():
            n = 20
            for i in range(n):
                record_task.delay(i)
            wait_for(f"{n} tasks to run", lambda: len(records("record")) >= n, 30)
            time.sleep(DEFAULT_VISIBILITY + 1)  # past the visibility timeout: nothing may run twice
            got = sorted(r["i"] for r in records("record"))
            check(f"{n} tasks sent with .delay() each ran exactly once", got == list(range(n)), got)

        step("plain tasks", plain)

        # -- retries --------------------------------------------------------
        def retries():
            flaky.delay("f1")
            always_fails.delay("a1")
            wait_for("the flaky task to succeed", lambda: records("flaky-done"), 30)
            wait_for("the failing task's retry", lambda: len(records("always_fails")) >= 2, 30)
            time.sleep(2.5)  # a third attempt would come within the retry delay
            attempts = [r["retries"] for r in records("flaky")]
            check("self.retry(countdown=1): attempts 0, 1, 2, then success once",
                  attempts == [0, 1, 2] and len(records("flaky-done")) == 1, (attempts, records("flaky-done")))
            times = [r["t"] for r in records("flaky")]
            check("each retry runs after its countdown (>= 1 s apart)",
                  all(b - a >= 0.9 for a, b in zip(times, times[1:])), times)
            attempts = [r["retries"] for r in records("always_fails")]
            check("autoretry_for with max_retries=1: two attempts, then it gives up", attempts == [0, 1], attempts)

        step("retries", retries)

        # -- rejected on a queue with a RedrivePolicy -> DLQ -------------------
        def dead_letter():
            poison.apply_async(("p1",), queue="poison")
            wait_for("the rejected task in the DLQ", lambda: counts(state["dlq"])[0] == 1, 30)
            time.sleep(POISON_VISIBILITY + 0.5)
            runs = records("poison")
            check("Reject(requeue=False) with a RedrivePolicy: the task is redelivered once, runs twice",
                  len(runs) == 2, runs)
            if len(runs) == 2:
                gap = runs[1]["t"] - runs[0]["t"]
                check(f"the redelivery comes after the {POISON_VISIBILITY} s visibility timeout",
                      gap >= POISON_VISIBILITY - 0.2, f"{gap:.2f} s")
            check("then the message is in the DLQ and the source queue is empty",
                  counts(state["dlq"]) == (1, 0, 0) and counts(state["poison"]) == (0, 0, 0),
                  (counts(state["dlq"]), counts(state["poison"])))
            body = json.loads(__import__("base64").b64decode(
                sqs.receive_message(QueueUrl=state["dlq"], WaitTimeSeconds=1)["Messages"][0]["Body"]))
            check("the dead-lettered message is Celery's task message",
                  body.get("headers", {}).get("task") == "smoke.poison", body.get("headers"))

        step("dead-letter", dead_letter)

        # -- acks_late: the worker dies mid-task ---------------------------------
        def worker_lost():
            marker = os.path.join(tmp, "crashed-once")
            crash_once.delay(marker)
            w1 = state["w1"]
            w1.wait(timeout=30)
            check("the worker running the acks_late task died mid-task (exit 3)", w1.returncode == 3, w1.returncode)
            check("the unacknowledged message is in flight, not lost",
                  counts(state["default"])[1] == 1, counts(state["default"]))
            state["w2"], state["w2log"] = start_worker("w2")
            wait_for("the task to run again", lambda: any(r["attempt"] == "done" for r in records("crash_once")), 30)
            runs = [r["attempt"] for r in records("crash_once")]
            check("after the visibility timeout a second worker runs it to completion",
                  runs == ["crash", "done"], runs)

        step("worker lost", worker_lost)

        def empty():
            # The ack (DeleteMessage) follows the task's return, later on a
            # busy machine: wait for it (bounded), then check.
            try:
                wait_for("the last ack", lambda: counts(state["default"]) == (0, 0, 0)
                         and counts(state["poison"]) == (0, 0, 0), 15)
            except TimeoutError:
                pass  # the check below reports what is left
            check("every queue the worker consumed is empty afterwards",
                  counts(state["default"]) == (0, 0, 0) and counts(state["poison"]) == (0, 0, 0),
                  (counts(state["default"]), counts(state["poison"])))

        step("queues empty", empty)

        def stop():
            w2 = state["w2"]
            os.killpg(w2.pid, signal.SIGTERM)
            w2.wait(timeout=20)
            check("the worker stops cleanly on SIGTERM (warm shutdown, exit 0)", w2.returncode == 0, w2.returncode)
            log = open(state["w2log"]).read()
            check("no error in the second worker's log",
                  all(s not in log for s in ("ERROR/", "CRITICAL/", "Traceback")), log[-3000:])
            # The first worker logs the two failures the test causes, and
            # nothing else: no SQS error, no connection trouble.
            unexpected = [
                line for line in open(state["w1log"]).read().splitlines()
                if any(s in line for s in ("WARNING/", "ERROR/", "CRITICAL/"))
                and "smoke.always_fails" not in line and "reject requeue=False: poison" not in line
            ]
            check("the first worker logged no warning or error but the ones the test causes",
                  not unexpected, "\n".join(unexpected))

        if "w2" in state:
            step("stop", stop)
    except Exception:
        not_ok("celery suite", traceback.format_exc())
    finally:
        for p, log in workers:
            kill_worker(p)
        if failed:  # the workers' logs help only when something failed
            for p, log in workers:
                print(f"# --- worker log {os.path.basename(log)} (last lines)")
                for line in open(log).read().splitlines()[-40:]:
                    print(f"#   {line}")
        for name in ("default", "poison", "dlq"):
            if name in state:
                try:
                    sqs.delete_queue(QueueUrl=state[name])
                except Exception:
                    pass
        shutil.rmtree(tmp, ignore_errors=True)

    import celery
    import kombu
    import pycurl
    suite = f"frameworks-celery (celery {celery.__version__}, kombu {kombu.__version__}, {pycurl.version.split()[0]})"
    print(f"smoke-result: suite={suite} passed={passed} failed={failed}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
