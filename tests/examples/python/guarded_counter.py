#!/usr/bin/env python3
"""Seed 000's counter with the fencing enforced by Redis itself (redis-py).

Five workers each add to one counter, one increment per lock grant. The increment is
`DLOCK.GUARD counter-lock <owner> <token> INCR counter`: Redis runs the INCR only
while the worker holds the lock with that token. Nothing compares tokens in Lua.

Scenarios (each prints `ok: …`):
  workers   5 threads × 20 increments, each under its own grant (ACQUIRE … WAIT,
            GUARD INCR, RELEASE … TOKEN): the counter ends at exactly 100.
  paused    a holder with a 300 ms lease pauses for 600 ms (a GC pause, a frozen
            VM); another worker takes the lock meanwhile. When the paused one wakes
            up, its guarded write is refused with FENCED and the counter keeps the
            new holder's value.

With WARDEN_CLUSTER_PORT set, the same runs against a Redis Cluster through
redis-py's cluster client (keys share the hash tag {counter}), and a guarded command
whose key is in another slot is refused with CROSSSLOT.

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

HOST = os.environ.get("WARDEN_HOST", "127.0.0.1")
PORT = int(os.environ.get("WARDEN_PORT", "6379"))
CLUSTER_PORT = os.environ.get("WARDEN_CLUSTER_PORT")

LOCK = "{counter}:lock"
COUNTER = "{counter}:value"
WORKERS = 5
STEPS = 20


def fail(msg):
    print(f"FAIL: guarded_counter: {msg}", file=sys.stderr)
    sys.exit(1)


def connect():
    if CLUSTER_PORT:
        return redis.cluster.RedisCluster(host=HOST, port=int(CLUSTER_PORT), socket_timeout=15)
    return redis.Redis(host=HOST, port=PORT, socket_timeout=15)


def owner():
    return f"{socket.gethostname()}:{os.getpid()}:{threading.get_ident()}:{secrets.token_hex(4)}"


def guarded_incr(r, me, token):
    """INCR the counter only while `me` holds the lock with `token`."""
    return r.execute_command("DLOCK.GUARD", LOCK, me, token, "INCR", COUNTER)


def workers():
    r = connect()
    r.delete(COUNTER)
    errors = []

    def work():
        c = connect()
        me = owner()
        try:
            for _ in range(STEPS):
                token = c.execute_command("DLOCK.ACQUIRE", LOCK, me, 5000, "WAIT", 10000)
                if token is None:
                    errors.append("ACQUIRE … WAIT 10000 timed out")
                    return
                guarded_incr(c, me, token)
                if c.execute_command("DLOCK.RELEASE", LOCK, me, "TOKEN", token) != 1:
                    errors.append("RELEASE … TOKEN answered 0 for a held lock")
        except redis.RedisError as e:
            errors.append(repr(e))

    threads = [threading.Thread(target=work) for _ in range(WORKERS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        fail(f"workers: {errors[:3]}")
    total = int(r.get(COUNTER))
    if total != WORKERS * STEPS:
        fail(f"workers: counter is {total}, expected {WORKERS * STEPS}")
    print(f"ok: workers: {WORKERS} workers x {STEPS} guarded increments = {total}")


def paused():
    r = connect()
    r.set(COUNTER, 0)
    slow, fast = owner(), owner()
    slow_token = r.execute_command("DLOCK.ACQUIRE", LOCK, slow, 300)
    if slow_token is None:
        fail("paused: the lock was not free")
    time.sleep(0.6)  # the pause: the lease ends while this worker sleeps
    fast_token = r.execute_command("DLOCK.ACQUIRE", LOCK, fast, 5000)
    if fast_token is None or fast_token <= slow_token:
        fail(f"paused: the next worker got {fast_token!r} after {slow_token}")
    if guarded_incr(r, fast, fast_token) != 1:
        fail("paused: the new holder's guarded INCR did not run")
    try:
        guarded_incr(r, slow, slow_token)
        fail("paused: the paused holder's write was accepted")
    except redis.ResponseError as e:
        if not str(e).startswith("FENCED"):
            fail(f"paused: unexpected error {e}")
    if int(r.get(COUNTER)) != 1:
        fail("paused: the counter changed after the refused write")
    r.execute_command("DLOCK.RELEASE", LOCK, fast, "TOKEN", fast_token)
    print("ok: paused: the paused holder's write was refused with FENCED; the counter kept 1")


def crossslot():
    r = connect()
    me = owner()
    token = r.execute_command("DLOCK.ACQUIRE", LOCK, me, 5000)
    try:
        r.execute_command("DLOCK.GUARD", LOCK, me, token, "INCR", "elsewhere")
        fail("cluster: a guarded key in another slot was accepted")
    except (redis.RedisError, redis.exceptions.RedisClusterException) as e:
        # redis-py reads the keys with COMMAND GETKEYS and refuses before sending
        # ("all keys must map to the same key slot"); a server would say CROSSSLOT.
        if "CROSSSLOT" not in str(e) and "same key slot" not in str(e):
            fail(f"cluster: unexpected error {e!r}")
    r.execute_command("DLOCK.RELEASE", LOCK, me)
    print("ok: cluster: a guarded command with a key in another slot is refused")


if __name__ == "__main__":
    workers()
    paused()
    if CLUSTER_PORT:
        crossslot()
