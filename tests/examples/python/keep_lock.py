#!/usr/bin/env python3
"""Locks that live as long as their holder's connection (redis-py): `DLOCK.ACQUIRE … KEEP`.

Three scenarios; each prints `ok: …`:

  renewed     a lock taken with a 900 ms ttl and KEEP is still held, with the same
              token, 2.5 s later: the server renews it while the connection is open.
              RELEASE then frees it at once, and nothing renews it afterwards.
  holder_dies a holder process takes `DLOCK.ACQUIRE keep-job <owner> 60000 KEEP` and
              is killed with SIGKILL while a second client waits with `WAIT`. The
              waiter gets the lock within a few seconds (its token larger), though
              the dead holder's ttl was 60 s.
  lost        a holder subscribed to `__keyspace@0__:<key>` (notify-keyspace-events
              Kd) holds a kept lock on its own connection. Its RELEASE sends
              `dlock.release` and no `dlock.lost`; a DEL of its lock by another
              client sends `dlock.lost`, the holder stops its work, confirms with
              DLOCK.INFO that its token is gone, and its late RELEASE answers 0.

The holders keep one connection each for as long as they hold (a Redis with
`single_connection_client=True`): KEEP binds the grant to the connection that sent
the ACQUIRE, so a pooled connection would keep the lock after being returned.
Server address: WARDEN_HOST / WARDEN_PORT (default 127.0.0.1:6379).
Exits 0 on success, 1 on a failed check.
"""
import os
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time

import redis

HOST = os.environ.get("WARDEN_HOST", "127.0.0.1")
PORT = int(os.environ.get("WARDEN_PORT", "6379"))


def connect(**kw):
    return redis.Redis(host=HOST, port=PORT, socket_timeout=20, **kw)


def owner_id(role):
    return f"{socket.gethostname()}:{os.getpid()}:{role}:{secrets.token_hex(4)}"


def fail(msg):
    print(f"FAIL: {msg}")
    sys.exit(1)


def info(r, key):
    v = r.execute_command("DLOCK.INFO", key)
    if v is None or isinstance(v, dict):
        return v
    return dict(zip(v[::2], v[1::2]))


def renewed():
    key = "keep-renewed"
    r = connect()
    r.delete(key)
    holder = connect(single_connection_client=True)  # one connection for the lock's life
    me = owner_id("renewed")
    try:
        token = holder.execute_command("DLOCK.ACQUIRE", key, me, 900, "KEEP")
        if not token:
            fail(f"renewed: ACQUIRE … KEEP answered {token!r}")
        time.sleep(2.5)  # almost three ttls
        held = info(r, key)
        if held is None or held[b"token"] != token:
            fail(f"renewed: a kept lock lapsed while its connection was open: {held}")
        if not 0 < held[b"ttl_ms"] <= 900:
            fail(f"renewed: a renewal sets the lease to the ttl again, got {held[b'ttl_ms']} ms")
    finally:
        released = holder.execute_command("DLOCK.RELEASE", key, me)
        holder.close()
    if released != 1 or r.exists(key):
        fail(f"renewed: RELEASE answered {released}, key exists: {r.exists(key)}")
    print(f"ok: renewed: a 900 ms kept lock still held with its token after 2.5 s; RELEASE freed it")


# The holder process: takes the lock with KEEP, says so, then works until killed.
HOLDER = r"""
import sys, time, redis
r = redis.Redis(host=sys.argv[1], port=int(sys.argv[2]), single_connection_client=True)
token = r.execute_command("DLOCK.ACQUIRE", sys.argv[3], sys.argv[4], 60000, "KEEP")
print(token, flush=True)
while True:
    time.sleep(1)
"""


def holder_dies():
    key = "keep-job"
    r = connect()
    r.delete(key)
    owner = owner_id("holder")
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, HOST, str(PORT), key, owner],
                            stdout=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline().strip()
        if not line.isdigit():
            fail(f"holder_dies: the holder process printed {line!r}")
        holder_token = int(line)
        held = info(r, key)
        if held is None or held[b"owner"].decode() != owner:
            fail(f"holder_dies: the holder does not hold {key}: {held}")

        got = {}

        def waiter():
            c = connect()  # socket timeout 20 s, above the WAIT
            got["token"] = c.execute_command("DLOCK.ACQUIRE", key, "waiter", 60000, "WAIT", 15000)
            got["at"] = time.monotonic()
            got["owner_then"] = info(c, key)

        t = threading.Thread(target=waiter)
        t.start()
        deadline = time.monotonic() + 5
        while (info(r, key) or {}).get(b"waiters") != 1:
            if time.monotonic() > deadline:
                fail("holder_dies: the waiter never queued")
            time.sleep(0.01)
        killed = time.monotonic()
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        t.join(20)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    if not got.get("token"):
        fail(f"holder_dies: the waiter was not served: {got}")
    after = got["at"] - killed
    if after > 3:
        fail(f"holder_dies: the waiter waited {after:.2f} s after the kill (ttl 60 s)")
    if got["token"] <= holder_token:
        fail(f"holder_dies: the waiter's token {got['token']} is not above {holder_token}")
    if got["owner_then"][b"owner"] != b"waiter":
        fail(f"holder_dies: the key is not the waiter's: {got['owner_then']}")
    r.execute_command("DLOCK.RELEASE", key, "waiter")
    print(f"ok: holder_dies: SIGKILL of the KEEP holder (ttl 60 s) served the waiter in {after * 1000:.0f} ms")


class KeptLock:
    """A kept lock on its own connection, with a subscription that tells the
    holder when the lock is taken from it (`dlock.lost` on the key)."""

    def __init__(self, key, ttl_ms=10_000):
        self.key, self.ttl_ms = key, ttl_ms
        self.owner = owner_id("kept")
        self.conn = connect(single_connection_client=True)
        self.check = connect()
        self.lost = threading.Event()
        self.events = []
        self.token = None
        # Subscribe before taking the lock, so no event can be missed.
        self.pubsub = connect().pubsub(ignore_subscribe_messages=True)
        self.pubsub.subscribe(**{f"__keyspace@0__:{key}": self._on_event})
        self.thread = self.pubsub.run_in_thread(sleep_time=0.01, daemon=True)

    def _on_event(self, message):
        event = message["data"].decode()
        self.events.append(event)
        # The event names the key, not the grant: a lost event may follow a
        # DEL that a new grant of the same key already followed. Confirm.
        if event == "dlock.lost" and self.token is not None and not self.still_mine():
            self.lost.set()

    def still_mine(self):
        held = info(self.check, self.key)
        return held is not None and held[b"token"] == self.token

    def acquire(self):
        self.token = self.conn.execute_command("DLOCK.ACQUIRE", self.key, self.owner, self.ttl_ms, "KEEP")
        return self.token

    def release(self):
        return self.conn.execute_command("DLOCK.RELEASE", self.key, self.owner, "TOKEN", self.token)

    def close(self):
        self.thread.stop()
        self.pubsub.close()
        self.conn.close()  # closing the connection would release a kept lock anyway


def events_until_quiet(lock, quiet=0.3):
    seen = len(lock.events)
    while True:
        time.sleep(quiet)
        if len(lock.events) == seen:
            return list(lock.events)
        seen = len(lock.events)


def lost():
    key = "keep-lost"
    r = connect()
    r.delete(key)
    before = r.config_get("notify-keyspace-events")["notify-keyspace-events"]
    r.config_set("notify-keyspace-events", "Kd")
    lock = KeptLock(key)
    try:
        time.sleep(0.1)  # the subscription is in place
        # 1. Released by its holder: dlock.release, no dlock.lost.
        if not lock.acquire():
            fail("lost: the first ACQUIRE … KEEP was refused")
        try:
            pass  # the work
        finally:
            if lock.release() != 1:
                fail("lost: RELEASE of our own kept lock did not answer 1")
        events = events_until_quiet(lock)
        if "dlock.release" not in events or "dlock.lost" in events or lock.lost.is_set():
            fail(f"lost: RELEASE sent {events}")

        # 2. Taken away by a DEL while held: dlock.lost, the worker stops.
        lock.events.clear()
        if not lock.acquire():
            fail("lost: the second ACQUIRE … KEEP was refused")
        stopped = threading.Event()

        def work():
            while not lock.lost.is_set():  # a step of the job, then check
                time.sleep(0.01)
            stopped.set()

        worker = threading.Thread(target=work)
        worker.start()
        deleted = time.monotonic()
        r.delete(key)  # an operator, a script, a bug: anything but the holder's RELEASE
        if not stopped.wait(3):
            fail(f"lost: the holder was not told of the DEL; events {lock.events}")
        took = time.monotonic() - deleted
        worker.join()
        events = events_until_quiet(lock)
        if events != ["dlock.acquire", "dlock.lost"]:
            fail(f"lost: after a DEL the holder saw {events}")
        if lock.release() != 0:
            fail("lost: the late RELEASE of a deleted lock did not answer 0")
    finally:
        lock.close()
        r.config_set("notify-keyspace-events", before)
    print(f"ok: lost: RELEASE sent dlock.release only; a DEL sent dlock.lost and the holder stopped "
          f"{took * 1000:.0f} ms later; its late RELEASE answered 0")


if __name__ == "__main__":
    renewed()
    holder_dies()
    lost()
