#!/usr/bin/env python3
"""Read/write locks and semaphores with warden (redis-py): `SHARED` and `LIMIT n`.

Two scenarios; each prints `ok: …`:

  semaphore   12 worker threads call a fragile downstream that takes at most 4
              callers at once. Each waits in the server for one of the 4 places
              (`DLOCK.ACQUIRE api-permits <owner> 5000 WAIT 10000 LIMIT 4`), calls,
              and releases its place with its own token. The downstream counts its
              callers: never more than 4, and all 4 places were in use at some point.
  rwlock      6 readers and 1 writer share a two-key document (a version and a
              checksum written by two separate commands). Readers read both keys
              under `SHARED`; the writer rewrites them under the exclusive lock. No
              reader ever sees the two keys disagree, and the writer is not starved
              by the stream of readers (readers that come after a waiting writer
              queue behind it).

Each worker has its own owner (host:pid:thread:random) and a socket timeout above its
WAIT, so the client never gives up while the server still keeps its place.
Server address: WARDEN_HOST / WARDEN_PORT (default 127.0.0.1:6379).
Exits 0 on success, 1 on a failed check.
"""
import os
import secrets
import socket
import sys
import threading
import time
import zlib

import redis

HOST = os.environ.get("WARDEN_HOST", "127.0.0.1")
PORT = int(os.environ.get("WARDEN_PORT", "6379"))
WAIT_MS = 10_000


def connect():
    return redis.Redis(host=HOST, port=PORT, socket_timeout=WAIT_MS / 1000 + 5)


def owner_id():
    return f"{socket.gethostname()}:{os.getpid()}:{threading.get_ident()}:{secrets.token_hex(4)}"


def fail(msg):
    print(f"FAIL: {msg}")
    sys.exit(1)


def semaphore():
    key, limit = "api-permits", 4
    r = connect()
    r.delete(key, "api-callers", "api-most")
    errors = []

    def worker():
        c, me = connect(), owner_id()
        for _ in range(5):
            token = c.execute_command("DLOCK.ACQUIRE", key, me, 5000, "WAIT", WAIT_MS, "LIMIT", limit)
            if token is None:
                errors.append("no place within the WAIT")
                return
            inside = c.incr("api-callers")  # the downstream counts its callers
            c.execute_command("EVAL", "if tonumber(redis.call('GET', KEYS[1]) or 0) < tonumber(ARGV[1]) "
                              "then redis.call('SET', KEYS[1], ARGV[1]) end", 1, "api-most", inside)
            if inside > limit:
                errors.append(f"{inside} callers inside")
            time.sleep(0.01)  # the call
            c.decr("api-callers")
            if c.execute_command("DLOCK.RELEASE", key, me, "TOKEN", token) != 1:
                errors.append("release of our own place refused")

    threads = [threading.Thread(target=worker) for _ in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        fail(f"semaphore: {errors[:3]}")
    most = int(r.get("api-most") or 0)
    if most != limit:
        fail(f"semaphore: at most {most} callers at once, expected all {limit} places used")
    if r.exists(key):
        fail("semaphore: places left held")
    print(f"ok: semaphore: 12 workers x 5 calls, at most {most} inside at once")


def rwlock():
    key = "doc-lock"
    r = connect()
    r.set("doc:version", "0")
    r.set("doc:sum", zlib.crc32(b"0"))
    stop = threading.Event()
    errors, reads, writes = [], [0], [0]

    def reader():
        c, me = connect(), owner_id()
        while not stop.is_set():
            token = c.execute_command("DLOCK.ACQUIRE", key, me, 5000, "WAIT", WAIT_MS, "SHARED")
            if token is None:
                errors.append("reader got no lock")
                return
            version = c.get("doc:version")
            checksum = int(c.get("doc:sum"))
            if zlib.crc32(version) != checksum:
                errors.append(f"torn read: version {version!r}, checksum {checksum}")
            reads[0] += 1
            c.execute_command("DLOCK.RELEASE", key, me, "TOKEN", token)

    def writer():
        c, me = connect(), owner_id()
        for n in range(1, 21):
            token = c.execute_command("DLOCK.ACQUIRE", key, me, 5000, "WAIT", WAIT_MS)
            if token is None:
                errors.append("writer got no lock")
                return
            version = str(n).encode()
            c.set("doc:version", version)
            time.sleep(0.002)  # a reader here would see the new version, old checksum
            c.set("doc:sum", zlib.crc32(version))
            writes[0] += 1
            c.execute_command("DLOCK.RELEASE", key, me, "TOKEN", token)
            time.sleep(0.005)

    readers = [threading.Thread(target=reader) for _ in range(6)]
    w = threading.Thread(target=writer)
    for t in readers:
        t.start()
    w.start()
    w.join(timeout=30)
    stop.set()
    for t in readers:
        t.join()
    if w.is_alive():
        fail("rwlock: the writer was starved by the readers")
    if errors:
        fail(f"rwlock: {errors[:3]}")
    if writes[0] != 20 or reads[0] == 0:
        fail(f"rwlock: {writes[0]} writes, {reads[0]} reads")
    print(f"ok: rwlock: 20 writes between {reads[0]} shared reads, never a torn read")


if __name__ == "__main__":
    semaphore()
    rwlock()
