#!/usr/bin/env python3
"""Five workers share one counter under a warden lock (redis-py).

The classic recipe (SETNX + EXPIRE, poll every 100 ms, compare-and-delete in Lua)
becomes one blocking command: each worker waits in the server with
`DLOCK.ACQUIRE counter-lock <worker-id> 30000 WAIT 5000` and is handed the lock the
moment the previous holder releases it. Every grant carries a fencing token that
strictly increases, which the protected resource can use to reject stale writers.

Server address: WARDEN_HOST / WARDEN_PORT (default 127.0.0.1:6379).
Prints `ok: lock` and exits 0 on success; exits 1 on a failed check.
"""
import os
import sys
import threading
import time

import redis

HOST = os.environ.get("WARDEN_HOST", "127.0.0.1")
PORT = int(os.environ.get("WARDEN_PORT", "6379"))

LOCK_KEY = "counter-lock"
COUNTER_KEY = "counter"
WORKERS = 5
TTL_MS = 30000
WAIT_MS = 5000


def fail(msg):
    print(f"FAIL: lock: {msg}", file=sys.stderr)
    sys.exit(1)


class Lock:
    """A warden lock: acquire blocks in the server, release drops one hold."""

    def __init__(self, client, key, owner, ttl_ms):
        self.client, self.key, self.owner, self.ttl_ms = client, key, owner, ttl_ms

    def acquire(self, wait_ms):
        """Returns the fencing token, or None if the wait timed out."""
        return self.client.execute_command(
            "DLOCK.ACQUIRE", self.key, self.owner, self.ttl_ms, "WAIT", wait_ms
        )

    def release(self):
        return self.client.execute_command("DLOCK.RELEASE", self.key, self.owner) == 1


def main():
    admin = redis.Redis(host=HOST, port=PORT, socket_timeout=10)
    admin.delete(LOCK_KEY, COUNTER_KEY)

    grants = []  # (token, worker), appended while the lock is held: grant order
    errors = []
    start = threading.Barrier(WORKERS)

    def worker(i):
        try:
            # One connection per worker: a blocked ACQUIRE occupies its connection.
            client = redis.Redis(host=HOST, port=PORT, socket_timeout=10)
            lock = Lock(client, LOCK_KEY, f"worker{i}", TTL_MS)
            start.wait()
            token = lock.acquire(WAIT_MS)
            if token is None:
                errors.append(f"worker{i} timed out waiting for the lock")
                return
            grants.append((token, i))
            # Read-modify-write that would lose updates without the lock.
            value = int(client.get(COUNTER_KEY) or 0)
            time.sleep(0.02)
            client.set(COUNTER_KEY, value + 1)
            print(f"worker {i}: token {token}, counter {value + 1}")
            if not lock.release():
                errors.append(f"worker{i} did not hold the lock at release")
            client.close()
        except Exception as e:  # noqa: BLE001 - report any client error as a failure
            errors.append(f"worker{i}: {e!r}")

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(1, WORKERS + 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    if any(t.is_alive() for t in threads):
        fail("a worker is still running after 30 s")
    if errors:
        fail("; ".join(errors))

    counter = int(admin.get(COUNTER_KEY) or 0)
    if counter != WORKERS:
        fail(f"counter is {counter}, want {WORKERS}")
    if len(grants) != WORKERS:
        fail(f"{len(grants)} grants, want {WORKERS}")
    tokens = [t for t, _ in grants]
    if any(not isinstance(t, int) or t <= 0 for t in tokens):
        fail(f"tokens are not positive integers: {tokens}")
    if any(b <= a for a, b in zip(tokens, tokens[1:])):
        fail(f"fencing tokens do not strictly increase in grant order: {tokens}")
    if sorted(w for _, w in grants) != list(range(1, WORKERS + 1)):
        fail(f"not every worker got the lock once: {grants}")
    if admin.execute_command("DLOCK.INFO", LOCK_KEY) is not None:
        fail("the lock is still held after every worker released it")

    admin.delete(COUNTER_KEY)
    print("ok: lock")


if __name__ == "__main__":
    main()
