#!/usr/bin/env python3
"""Workers share one counter under a warden lock (redis-py), the way a service should.

The classic recipe (SETNX + EXPIRE, poll every 100 ms, compare-and-delete in Lua)
becomes one blocking command: each worker waits in the server with
`DLOCK.ACQUIRE counter-lock <owner> 6000 WAIT 10000` and is handed the lock the
moment the previous holder releases it. Around that, what a real worker needs:

- a unique owner per process and thread (host:pid:thread:random), so no other
  process can be mistaken for the holder;
- a socket timeout longer than the WAIT, so the client does not give up (and
  retry) while the server is still holding its place in the queue;
- a lease kept alive in the background (`DLOCK.EXTEND` every ttl/3) with a "lease
  lost" signal: when EXTEND answers 0 or fails, the work stops;
- the fencing token passed to the protected write, which refuses a token smaller
  than one it has seen (here a Lua compare-and-set on the counter's hash).

Scenarios (both run; each prints `ok: …`):
  workers     5 threads increment the counter under the lock; tokens increase in
              grant order; the fenced store accepts every write.
  lease-lost  a worker holds the lock for a long job; the lease is taken from it
              (`PEXPIRE` to 1 ms, as when a holder stalls past its lease) and another
              client takes the lock. The worker's keepalive sees EXTEND answer 0 within
              ttl/3, the worker stops before its next step, and a write with its old
              token is refused by the fenced store.

Server address: WARDEN_HOST / WARDEN_PORT (default 127.0.0.1:6379).
Exits 0 on success, 1 on a failed check.
"""
import os
import secrets
import socket
import sys
import threading
import time

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

HOST = os.environ.get("WARDEN_HOST", "127.0.0.1")
PORT = int(os.environ.get("WARDEN_PORT", "6379"))

LOCK_KEY = "counter-lock"
COUNTER_KEY = "counter"  # a hash: value, and fence (the largest token seen)
WORKERS = 5
TTL_MS = 6000
WAIT_MS = 10000

# The protected write: store `value` only if `token` is at least the largest token
# this resource has seen, and remember it. Tokens stay below 2^53, exact in Lua.
FENCED_SET = """
local fence = tonumber(redis.call('HGET', KEYS[1], 'fence') or '0')
if tonumber(ARGV[1]) < fence then
  return redis.error_reply('FENCED token ' .. ARGV[1] .. ' is older than ' .. fence)
end
redis.call('HSET', KEYS[1], 'fence', ARGV[1], 'value', ARGV[2])
return 1
"""


def fail(msg):
    print(f"FAIL: lock: {msg}", file=sys.stderr)
    sys.exit(1)


def unique_owner():
    """host:pid:thread:random — unique across machines, processes, threads and
    restarts (a pid is reused; the random part is not)."""
    return f"{socket.gethostname()}:{os.getpid()}:{threading.get_ident()}:{secrets.token_hex(8)}"


def client(wait_ms=0):
    """A connection whose reads outlast a WAIT of `wait_ms` (redis-py 8 defaults to a
    5 s socket timeout and retries a timed-out command: a retried ACQUIRE loses its
    place in the queue)."""
    return redis.Redis(host=HOST, port=PORT, socket_timeout=wait_ms / 1000 + 5)


class Lease:
    """Keeps a held lock alive: `DLOCK.EXTEND key owner ttl` every ttl/3 on its own
    connection. `lost` is set when EXTEND answers 0 (the lock expired, was deleted or
    is someone else's) or fails (so the lease cannot be confirmed) — the holder must
    stop working under the lock then."""

    def __init__(self, key, owner, ttl_ms, token):
        self.key, self.owner, self.ttl_ms, self.token = key, owner, ttl_ms, token
        self.lost = threading.Event()
        self.lost_at = None
        self.why = None
        self._stop = threading.Event()
        # No retries: a keepalive that retries for longer than the lease would
        # report a lease it no longer has. One attempt per period, bounded in time.
        self._conn = redis.Redis(host=HOST, port=PORT, socket_timeout=ttl_ms / 3000,
                                 retry=Retry(NoBackoff(), 0))
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self._conn.close()

    def _run(self):
        while not self._stop.wait(self.ttl_ms / 3000):
            try:
                extended = self._conn.execute_command("DLOCK.EXTEND", self.key, self.owner,
                                                      self.ttl_ms)
                why = "EXTEND answered 0: the lock is no longer ours"
            except redis.RedisError as e:
                extended, why = 0, f"EXTEND failed: {e!r}"
            if extended != 1:
                self.lost_at, self.why = time.monotonic(), why
                self.lost.set()
                return


class Lock:
    """A warden lock: acquire blocks in the server, release drops one hold."""

    def __init__(self, conn, key, ttl_ms):
        self.conn, self.key, self.ttl_ms = conn, key, ttl_ms
        self.owner = unique_owner()

    def acquire(self, wait_ms):
        """Returns a Lease (not started) with the fencing token, or None if the
        wait timed out."""
        token = self.conn.execute_command("DLOCK.ACQUIRE", self.key, self.owner, self.ttl_ms,
                                          "WAIT", wait_ms)
        return None if token is None else Lease(self.key, self.owner, self.ttl_ms, token)

    def release(self):
        return self.conn.execute_command("DLOCK.RELEASE", self.key, self.owner) == 1


def read_counter(conn):
    return int(conn.hget(COUNTER_KEY, "value") or 0)


def workers_scenario(admin):
    admin.delete(LOCK_KEY, COUNTER_KEY)
    grants = []  # (token, worker), appended while the lock is held: grant order
    errors = []
    start = threading.Barrier(WORKERS)

    def worker(i):
        try:
            # One connection per worker: a blocked ACQUIRE occupies its connection.
            conn = client(WAIT_MS)
            fenced_set = conn.register_script(FENCED_SET)
            lock = Lock(conn, LOCK_KEY, TTL_MS)
            start.wait()
            lease = lock.acquire(WAIT_MS)
            if lease is None:
                errors.append(f"worker{i} timed out waiting for the lock")
                return
            with lease:
                grants.append((lease.token, i))
                # Read-modify-write that would lose updates without the lock.
                value = read_counter(conn)
                time.sleep(0.02)
                if lease.lost.is_set():
                    errors.append(f"worker{i} lost its lease: {lease.why}")
                    return
                fenced_set(keys=[COUNTER_KEY], args=[lease.token, value + 1])
                print(f"worker {i}: token {lease.token}, counter {value + 1}")
            if not lock.release():
                errors.append(f"worker{i} did not hold the lock at release")
            conn.close()
        except Exception as e:  # noqa: BLE001 - report any client error as a failure
            errors.append(f"worker{i}: {e!r}")

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(1, WORKERS + 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    if any(t.is_alive() for t in threads):
        fail("a worker is still running after 60 s")
    if errors:
        fail("; ".join(errors))

    counter = read_counter(admin)
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
    if int(admin.hget(COUNTER_KEY, "fence")) != tokens[-1]:
        fail("the fenced store did not keep the last token")
    if admin.execute_command("DLOCK.INFO", LOCK_KEY) is not None:
        fail("the lock is still held after every worker released it")
    print("ok: lock (5 workers, fenced writes)")


def lease_lost_scenario(admin):
    """A worker whose lease is taken away stops, and its late write is refused."""
    admin.delete(LOCK_KEY, COUNTER_KEY)
    ttl_ms, steps, step_s = 1500, 40, 0.05  # a 2 s job under a 1.5 s lease
    conn = client()
    fenced_set = conn.register_script(FENCED_SET)
    lock = Lock(conn, LOCK_KEY, ttl_ms)
    lease = lock.acquire(0)
    if lease is None:
        fail("lease-lost: the free lock was not granted")
    done = 0
    thief = {}

    def take_the_lock():
        # As if the holder stalled past its lease: the lease ends now, and another
        # client is granted the lock and writes with its (larger) token.
        time.sleep(0.4)
        admin.pexpire(LOCK_KEY, 1)
        other = client(5000)
        thief["token"] = other.execute_command("DLOCK.ACQUIRE", LOCK_KEY, unique_owner(),
                                               10000, "WAIT", 5000)
        thief["at"] = time.monotonic()
        other.register_script(FENCED_SET)(keys=[COUNTER_KEY], args=[thief["token"], 1000])
        other.close()

    taker = threading.Thread(target=take_the_lock)
    with lease:
        taker.start()
        for _ in range(steps):
            if lease.lost.is_set():
                break
            value = read_counter(conn)
            time.sleep(step_s)
            try:
                fenced_set(keys=[COUNTER_KEY], args=[lease.token, value + 1])
            except redis.ResponseError as e:
                # The other holder wrote first: the store refused the stale token.
                if "FENCED" not in str(e):
                    raise
            done += 1
        stopped_at = time.monotonic()
    taker.join(timeout=10)
    if "token" not in thief or thief["token"] is None:
        fail("lease-lost: the other client did not get the lock")
    if not lease.lost.is_set():
        fail(f"lease-lost: the worker never noticed; it finished all {steps} steps")
    print(f"lease lost: {lease.why}; {done} of {steps} steps done; detected "
          f"{(lease.lost_at - thief['at']) * 1000:+.0f} ms after the other grant")
    if lease.lost_at - thief["at"] > ttl_ms / 3000 + 0.5:
        fail("lease-lost: the keepalive took longer than ttl/3 to notice")
    if stopped_at - lease.lost_at > step_s + 0.5:
        fail("lease-lost: the worker went on after the lease was lost")
    if thief["token"] <= lease.token:
        fail(f"lease-lost: the new token {thief['token']} is not above {lease.token}")
    # The stale holder's write arrives late: the fenced store refuses it.
    try:
        fenced_set(keys=[COUNTER_KEY], args=[lease.token, 999999])
        fail("lease-lost: the store accepted a write with the old token")
    except redis.ResponseError as e:
        if "FENCED" not in str(e):
            raise
    if read_counter(admin) != 1000:
        fail(f"lease-lost: the counter is {read_counter(admin)}, want the new holder's 1000")
    if lock.release():
        fail("lease-lost: RELEASE by the old holder freed the new holder's lock")
    conn.close()
    admin.delete(LOCK_KEY, COUNTER_KEY)
    print("ok: lock (lease lost: the worker stopped, its stale write was fenced)")


def main():
    admin = client()
    workers_scenario(admin)
    lease_lost_scenario(admin)


if __name__ == "__main__":
    main()
