#!/usr/bin/env python3
"""A cache-aside read on `CACHE.GET … LEASE … WAIT` (redis-py): one source call per
miss however many clients miss at once, and no stale write after an invalidation.

    CACHE.GET key [MINVERSION v] LEASE lease_ms WAIT timeout_ms
        -> [value, 0]            fresh: use it
        -> [stale or nil, token] you refresh: read the source, CACHE.SET ... LEASE token
        -> [stale, 0]            someone else refreshes: use the stale value
        -> [nil, 0]              the wait timed out: read the source yourself

Server address: WARDEN_HOST / WARDEN_PORT (default 127.0.0.1:6379).
Prints `ok: cache` and exits 0 on success; exits 1 on a failed check.
"""
import os
import sys
import threading
import time

import redis

HOST = os.environ.get("WARDEN_HOST", "127.0.0.1")
PORT = int(os.environ.get("WARDEN_PORT", "6379"))


def fail(msg):
    print(f"FAIL: cache: {msg}", file=sys.stderr)
    sys.exit(1)


class Source:
    """The database behind the cache: rows with an update time, slow to read."""

    def __init__(self, delay_s=0.05):
        self.rows, self.calls, self.delay_s = {}, 0, delay_s
        self.lock = threading.Lock()

    def write(self, key, value):
        with self.lock:
            updated = self.rows.get(key, (None, 0))[1] + 1
            self.rows[key] = (value, updated)
            return updated

    def read(self, key):
        with self.lock:
            self.calls += 1
            row = self.rows[key]
        time.sleep(self.delay_s)
        return row


class Cache:
    def __init__(self, client, source, ttl_ms=60_000, stale_ms=30_000):
        self.client, self.source = client, source
        self.ttl_ms, self.stale_ms = ttl_ms, stale_ms

    def get(self, key, lease_ms=2_000, wait_ms=2_500):
        value, lease = self.client.execute_command(
            "CACHE.GET", key, "LEASE", lease_ms, "WAIT", wait_ms)
        if lease == 0 and value is not None:
            return value  # fresh, or stale while another client refreshes
        if lease == 0:
            return self.source.read(key)[0]  # the wait timed out
        fresh, updated = self.source.read(key)
        # Stored only if the lease is still ours: a DEL or a newer SET voids it.
        self.client.execute_command(
            "CACHE.SET", key, fresh, self.ttl_ms, "STALE", self.stale_ms,
            "VERSION", updated, "LEASE", lease)
        return fresh


def stampede(client, source, cache):
    """50 clients miss one key at once: one source call, everyone gets the value."""
    source.write("product:1", "lamp v1")
    before = source.calls
    results, threads = [], []
    barrier = threading.Barrier(50)

    def reader():
        c = Cache(redis.Redis(host=HOST, port=PORT, decode_responses=True), source)
        barrier.wait()
        results.append(c.get("product:1"))

    for _ in range(50):
        t = threading.Thread(target=reader)
        t.start()
        threads.append(t)
    for t in threads:
        t.join()
    if results != ["lamp v1"] * 50:
        fail(f"stampede readers got {sorted(set(results))!r} ({len(results)} replies)")
    if source.calls - before != 1:
        fail(f"50 concurrent misses made {source.calls - before} source calls, want 1")


def no_stale_write(client, source):
    """A refresher reads the source, then the row changes and the cache entry is
    deleted: the refresher's SET must not bring the old value back."""
    source.write("product:2", "chair v1")
    value, lease = client.execute_command("CACHE.GET", "product:2", "LEASE", 2_000)
    if value is not None or lease <= 0:
        fail(f"a miss should give the lease: {[value, lease]!r}")
    old, updated = source.read("product:2")
    source.write("product:2", "chair v2")          # the row changes ...
    client.delete("product:2")                     # ... and the writer invalidates
    stored = client.execute_command(
        "CACHE.SET", "product:2", old, 60_000, "VERSION", updated, "LEASE", lease)
    if stored != 0:
        fail("a SET under a voided lease was stored")
    if client.execute_command("CACHE.GET", "product:2") is not None:
        fail("the stale value is in the cache")


def versions(client):
    """An older writer never overwrites newer data; a caller who knows of a newer
    version gets nil and refreshes."""
    client.execute_command("CACHE.SET", "product:3", "desk v7", 60_000, "VERSION", 7)
    if client.execute_command("CACHE.SET", "product:3", "desk v6", 60_000, "VERSION", 6) != 0:
        fail("an older version overwrote a newer one")
    if client.execute_command("CACHE.GET", "product:3", "MINVERSION", 8) is not None:
        fail("MINVERSION above the cached version should miss")
    if client.execute_command("CACHE.GET", "product:3", "MINVERSION", 7) != "desk v7":
        fail("MINVERSION equal to the cached version should hit")


def hot_key(client):
    """The seed's hot-key read: a key read often stays fresh."""
    client.execute_command("CACHE.SET", "product:4", "lamp", 200)
    for _ in range(3):
        client.execute_command("CACHE.GET", "product:4", "HOT", 3, 1_000, "EXTEND", 10_000)
    time.sleep(0.3)
    if client.execute_command("CACHE.GET", "product:4") != "lamp":
        fail("a hot key expired at its first ttl")


def main():
    client = redis.Redis(host=HOST, port=PORT, decode_responses=True)
    client.delete("product:1", "product:2", "product:3", "product:4")
    source = Source()
    stampede(client, source, Cache(client, source))
    no_stale_write(client, source)
    versions(client)
    hot_key(client)
    print("ok: cache")


if __name__ == "__main__":
    main()
