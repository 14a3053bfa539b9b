#!/usr/bin/env python3
"""An API rate limiter on `RL.TOKEN` (redis-py).

`RL.TOKEN key rate burst [COST n] [MAXWAIT ms]` is a token bucket with the semantics of
Go's golang.org/x/time/rate, kept on the server's clock. It replies with four integers:
allowed, remaining, wait_ms, reset_ms. With MAXWAIT a call beyond the burst reserves
its token and is told how long to wait before acting; without it such a call is
denied and told when to retry.

Server address: WARDEN_HOST / WARDEN_PORT (default 127.0.0.1:6379).
Prints `ok: limiter` and exits 0 on success; exits 1 on a failed check.
"""
import os
import sys
import time

import redis

HOST = os.environ.get("WARDEN_HOST", "127.0.0.1")
PORT = int(os.environ.get("WARDEN_PORT", "6379"))

RATE = 1  # tokens per second
BURST = 2
TOLERANCE_MS = 50


def fail(msg):
    print(f"FAIL: limiter: {msg}", file=sys.stderr)
    sys.exit(1)


class ApiLimiter:
    def __init__(self, client, rate, burst):
        self.client, self.rate, self.burst = client, rate, burst

    def check(self, user, max_wait_ms=None):
        """Returns (allowed, remaining, wait_ms, reset_ms) for one call of `user`."""
        args = ["RL.TOKEN", f"api:{user}", self.rate, self.burst]
        if max_wait_ms is not None:
            args += ["MAXWAIT", max_wait_ms]
        reply = self.client.execute_command(*args)
        if not (isinstance(reply, list) and len(reply) == 4):
            fail(f"RL.TOKEN replied {reply!r}, want 4 integers")
        return tuple(reply)


def near(got, want, lag_ms=(0.0, 0.0)):
    """got ≈ want ± TOLERANCE_MS, after taking off the time that passed between the
    first call of a series and this one (lag_ms: its lower and upper bound as seen
    by the client), so that a stalled client does not fail the check."""
    lo, hi = lag_ms
    return want - hi - TOLERANCE_MS <= got <= want - lo + TOLERANCE_MS


class Clock:
    """Bounds on the server time elapsed since the first call of a series."""

    def __init__(self):
        self.first_sent = self.first_done = None

    def call(self, fn):
        sent = time.monotonic()
        reply = fn()
        done = time.monotonic()
        if self.first_sent is None:
            self.first_sent, self.first_done = sent, done
        lag = (max(0.0, sent - self.first_done) * 1000, (done - self.first_sent) * 1000)
        return reply, lag


def main():
    client = redis.Redis(host=HOST, port=PORT, socket_timeout=10)
    limiter = ApiLimiter(client, RATE, BURST)
    client.delete("api:alice", "api:bob")

    # Reserving calls: the first two are in the burst, then one token per second.
    clock = Clock()
    waits, lags = [], []
    for _ in range(5):
        reply, lag = clock.call(lambda: limiter.check("alice", max_wait_ms=100000))
        allowed, remaining, wait_ms, reset_ms = reply
        if allowed != 1:
            fail(f"a MAXWAIT call was denied: {reply}")
        if reset_ms < wait_ms:
            fail(f"reset_ms {reset_ms} is before wait_ms {wait_ms}")
        waits.append(wait_ms)
        lags.append(lag)
    want = [0, 0, 1000, 2000, 3000]
    # The first two calls are inside the burst: exactly 0.
    if waits[:2] != [0, 0] or not all(near(g, w, l) for g, w, l in zip(waits, want, lags)):
        fail(f"wait_ms {waits}, want about {want} (±{TOLERANCE_MS}; "
             f"client lag {[round(l[1]) for l in lags]} ms)")
    print(f"alice reserved with waits {waits} ms")

    # The bucket is now 3 tokens in debt: a call without MAXWAIT is denied and told to
    # retry once a token is there again (about 4 s from now).
    (allowed, remaining, wait_ms, reset_ms), lag = clock.call(lambda: limiter.check("alice"))
    if allowed != 0 or remaining != 0:
        fail(f"a call on a bucket in debt was allowed: {(allowed, remaining, wait_ms, reset_ms)}")
    if not near(wait_ms, 4000, lag):
        fail(f"denied call: retry after {wait_ms} ms, want about 4000")

    # Plain API calls without MAXWAIT: the burst passes, the next call is denied.
    bob = Clock()
    replies, lags = zip(*[bob.call(lambda: limiter.check("bob")) for _ in range(3)])
    if [r[0] for r in replies] != [1, 1, 0]:
        fail(f"bob's calls: {replies}, want allowed 1, 1, 0")
    if [r[1] for r in replies] != [1, 0, 0]:
        fail(f"bob's remaining: {[r[1] for r in replies]}, want 1, 0, 0")
    if replies[0][2] != 0 or replies[1][2] != 0:
        fail(f"allowed calls without MAXWAIT must have wait_ms 0: {replies}")
    retry_ms = replies[2][2]
    if not near(retry_ms, 1000, lags[2]):
        fail(f"bob's denied call: retry after {retry_ms} ms, want about 1000")

    # A denied call changes nothing: after the advised wait, bob passes again.
    time.sleep((retry_ms + 20) / 1000)
    allowed, *_ = limiter.check("bob")
    if allowed != 1:
        fail("bob was still denied after waiting the advised retry time")

    # A cost above the burst can never pass: wait_ms is -1.
    reply = client.execute_command("RL.TOKEN", "api:carol", RATE, BURST, "COST", 3)
    if reply[0] != 0 or reply[2] != -1:
        fail(f"COST above burst: {reply}, want denied with wait_ms -1")

    client.delete("api:alice", "api:bob", "api:carol")
    print("ok: limiter")


if __name__ == "__main__":
    main()
