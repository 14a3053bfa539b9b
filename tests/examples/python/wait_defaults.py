#!/usr/bin/env python3
"""`DLOCK.ACQUIRE … WAIT` from redis-py with its defaults, and with the setting docs/clients.md advises.

Two scenarios; each prints `ok: …`:

  defaults   a client made with redis-py's defaults (a 5 s socket timeout, retries
             after a timeout) waits with `WAIT 12000` for a lock another owner holds
             for 7 s. The read times out at 5 s; redis-py closes that connection
             (warden drops its waiter) and sends the same command again on a new
             one, and that send gets the lock when the holder releases. Because the
             owner is the same, a send that arrives after a grant gets that grant's
             token back, so the retry cannot take a second hold: one grant, one
             hold (`DLOCK.INFO`), and one `RELEASE` frees the lock. The server
             saw the acquire at least twice (`warden_locks_contended`).
  advised    the same wait on a client whose socket timeout is above the `WAIT`
             (docs/clients.md's advice): the acquire is sent once and returns the
             token when the holder releases.

Server address: WARDEN_HOST / WARDEN_PORT (default 127.0.0.1:6379).
Exits 0 on success, 1 on a failed check.
"""
import os
import sys
import threading
import time

import redis

HOST = os.environ.get("WARDEN_HOST", "127.0.0.1")
PORT = int(os.environ.get("WARDEN_PORT", "6379"))
HOLD_S = 7.0
WAIT_MS = 12_000


def fail(msg):
    print(f"FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def acquire_calls(admin):
    """How many DLOCK.ACQUIRE calls found the lock held (`warden_locks_contended`):
    every send of a waiting acquire does, and the count is the module's own, so it
    is the same on every server (`INFO commandstats` counts a blocked call only
    when it returns, and not at all on some servers when its client is gone)."""
    return int(admin.info("warden").get("warden_locks_contended", 0))


def field(info, name):
    """A field of DLOCK.INFO's reply: a map in RESP3, a flat array in RESP2."""
    if isinstance(info, dict):
        return info.get(name.encode(), info.get(name))
    pairs = dict(zip(info[::2], info[1::2]))
    return pairs.get(name.encode(), pairs.get(name))


def wait_behind_holder(admin, waiter, key):
    """Holds `key` as another owner for HOLD_S while `waiter` waits for it;
    returns the waiter's token, the seconds it took and the acquires sent."""
    if admin.execute_command("DLOCK.ACQUIRE", key, "holder", 60_000) is None:
        fail(f"{key}: the holder could not take the free lock")

    def release_later():
        time.sleep(HOLD_S)
        admin.execute_command("DLOCK.RELEASE", key, "holder")

    releaser = threading.Thread(target=release_later)
    before = acquire_calls(admin)
    start = time.monotonic()
    releaser.start()
    token = waiter.execute_command("DLOCK.ACQUIRE", key, "waiter", 30_000, "WAIT", WAIT_MS)
    took = time.monotonic() - start
    releaser.join()
    return token, took, acquire_calls(admin) - before


def check_one_hold(admin, key, token):
    info = admin.execute_command("DLOCK.INFO", key)
    if info is None:
        fail(f"{key}: the waiter's lock is not held")
    if field(info, "owner") != b"waiter" or field(info, "token") != token:
        fail(f"{key}: held as {info}, want owner waiter and token {token}")
    if field(info, "holds") != 1:
        fail(f"{key}: {field(info, 'holds')} holds after a retried acquire, want 1")
    if admin.execute_command("DLOCK.RELEASE", key, "waiter") != 1:
        fail(f"{key}: RELEASE did not release")
    if admin.execute_command("DLOCK.INFO", key) is not None:
        fail(f"{key}: one RELEASE left the lock held")


def defaults_scenario(admin):
    waiter = redis.Redis(host=HOST, port=PORT)
    timeout = waiter.connection_pool.connection_kwargs.get("socket_timeout")
    if not timeout or timeout >= WAIT_MS / 1000:
        fail(f"redis-py's default socket_timeout is {timeout}: this scenario needs one below the WAIT")
    token, took, sends = wait_behind_holder(admin, waiter, "wait:defaults")
    if token is None:
        fail("the retried wait returned nil")
    if sends < 2:
        fail(f"the acquire was sent {sends} time(s): redis-py did not retry after its timeout")
    if not HOLD_S - 0.5 <= took <= WAIT_MS / 1000:
        fail(f"the lock came after {took:.1f} s, want about {HOLD_S} s")
    check_one_hold(admin, "wait:defaults", token)
    print(f"ok: defaults (socket_timeout {timeout} s: sent {sends} times, granted after "
          f"{took:.1f} s, one hold, freed by one RELEASE)")


def advised_scenario(admin):
    waiter = redis.Redis(host=HOST, port=PORT, socket_timeout=WAIT_MS / 1000 + 5)
    token, took, sends = wait_behind_holder(admin, waiter, "wait:advised")
    if token is None:
        fail("the wait returned nil")
    if sends != 1:
        fail(f"the acquire was sent {sends} times with a socket timeout above the WAIT")
    check_one_hold(admin, "wait:advised", token)
    print(f"ok: advised (socket_timeout {WAIT_MS / 1000 + 5:.0f} s: sent once, granted after {took:.1f} s)")


def main():
    admin = redis.Redis(host=HOST, port=PORT, socket_timeout=30)
    defaults_scenario(admin)
    advised_scenario(admin)


if __name__ == "__main__":
    main()
