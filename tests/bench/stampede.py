#!/usr/bin/env python3
"""Cache stampede benchmark: N clients miss ONE key at the same instant while the
source (the database behind the cache) takes SOURCE_MS to answer.

    python3 tests/bench/stampede.py --port PORT [--md FILE] [--json FILE]

Needs a running redis-server with libwarden.so loaded (the naive and Lua variants run
without it). Python 3 standard library only (the RESP client of contended.py).

Variants (every client does the same, all start together)
  naive        GET key -> nil -> "read the source" -> SET key value PX ttl
  seed-lua     the seed's script: GET + INCR of a read counter + EXPIRE, and a compare
               of the caller's update time with the cached one (nil = refresh), then
               "read the source" -> SET (the shape the redigo article describes)
  lease-wait   CACHE.GET key LEASE 2000 WAIT 2500: the client given the lease reads the
               source and stores with CACHE.SET ... LEASE token; the others block and
               get the value when that SET lands

"Reading the source" is a timer of SOURCE_MS in the client loop (the source is not
Redis), counted as one source call. One process runs all clients as state machines on
one selectors loop over sockets with TCP_NODELAY, so every client's time is read on
one clock (time.perf_counter_ns). Per trial the key is deleted, every client sends its
first command within the same loop turn, and each client's latency is the time from
that start to the moment it holds the value.

Reported per variant (medians over trials; p99 over all clients of all trials)
  source calls   source reads per trial (1 is the goal: one refresh per miss)
  p50 / p99      client latency to the value, and the same minus SOURCE_MS (the cost
                 of the cache on top of the one unavoidable source read; it includes
                 this one-process client reading 50 sockets)
  after store    lease-wait only: from the refresher's CACHE.SET being sent to each
                 waiting client holding the value, p99 (the server's hand-off)
Goal (PASS/MISS, never fails the run): lease-wait makes exactly 1 source call in every
trial, and its p99 is within SOURCE_MS + 2 ms.

Environment
  STAMPEDE_CLIENTS   clients per trial          (default 50)
  STAMPEDE_SOURCE_MS the source's answer time   (default 50)
  STAMPEDE_TRIALS    trials per variant         (default 20)
"""
import argparse
import json
import os
import selectors
import socket
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from contended import Conn, ReplyError, encode, parse, percentile  # noqa: E402

KEY = "stampede:product"
VALUE = b"x" * 200
TTL_MS = 60_000

SEED_LUA = """
local v = redis.call('GET', KEYS[1])
local n = redis.call('INCR', KEYS[2])
if n == 1 then redis.call('EXPIRE', KEYS[2], 1) end
if v == false then return false end
local updated = tonumber(redis.call('GET', KEYS[3]) or '0')
if tonumber(ARGV[1]) > updated then return false end
if n > tonumber(ARGV[2]) then redis.call('PEXPIRE', KEYS[1], ARGV[3]) end
return v
"""


class Client:
    __slots__ = ("sock", "buf", "state", "done_ns", "lease")


def first_command(variant, sha):
    if variant == "naive":
        return encode("GET", KEY)
    if variant == "seed-lua":
        return encode("EVALSHA", sha, 3, KEY, KEY + ":reads", KEY + ":updated", 1, 100, TTL_MS)
    return encode("CACHE.GET", KEY, "LEASE", 2000, "WAIT", 2500)


def store_command(variant, lease):
    if variant == "lease-wait":
        return encode("CACHE.SET", KEY, VALUE, TTL_MS, "LEASE", lease)
    return encode("SET", KEY, VALUE, "PX", TTL_MS)


def trial(port, variant, nclients, source_ms, sha):
    """One stampede: (source calls, [latency ns per client], [ns from the first
    store sent to each other client holding the value])."""
    admin = Conn("127.0.0.1", port)
    admin.call("DEL", KEY, KEY + ":reads", KEY + ":updated")
    admin.call("SET", KEY + ":updated", 1)
    sel = selectors.DefaultSelector()
    clients = []
    for _ in range(nclients):
        c = Client()
        c.sock = socket.create_connection(("127.0.0.1", port))
        c.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        c.buf, c.state, c.done_ns, c.lease = bytearray(), "read", None, None
        sel.register(c.sock, selectors.EVENT_READ, c)
        clients.append(c)
    source_calls = 0
    timers = []  # (due_ns, client)
    first_store_ns = None
    start = time.perf_counter_ns()
    for c in clients:
        c.sock.sendall(first_command(variant, sha))
    left = nclients
    deadline = start + 10 * 1_000_000_000
    while left and time.perf_counter_ns() < deadline:
        now = time.perf_counter_ns()
        for due, c in [t for t in timers if t[0] <= now]:
            timers.remove((due, c))
            c.state = "store"
            first_store_ns = first_store_ns or time.perf_counter_ns()
            c.sock.sendall(store_command(variant, c.lease))
        wait = min((t[0] for t in timers), default=now + 100_000_000) - now
        for key, _ in sel.select(max(wait, 0) / 1e9):
            c = key.data
            data = c.sock.recv(1 << 16)
            if not data:
                raise ConnectionError("server closed a client connection")
            c.buf += data
            while True:
                r = parse(c.buf)
                if r is None:
                    break
                reply, used = r
                del c.buf[:used]
                if isinstance(reply, ReplyError):
                    raise reply
                if c.state == "read":
                    value = reply[0] if variant == "lease-wait" else reply
                    lease = reply[1] if variant == "lease-wait" else 0
                    if value is not None and lease == 0:
                        c.done_ns, c.state = time.perf_counter_ns(), "done"
                        left -= 1
                    elif variant == "lease-wait" and lease == 0:
                        raise RuntimeError("a waiter timed out: %r" % (reply,))
                    else:
                        source_calls += 1
                        c.lease, c.state = lease, "source"
                        timers.append((time.perf_counter_ns() + source_ms * 1_000_000, c))
                elif c.state == "store":
                    c.done_ns, c.state = time.perf_counter_ns(), "done"
                    left -= 1
    for c in clients:
        sel.unregister(c.sock)
        c.sock.close()
    admin.close()
    if left:
        raise RuntimeError("%s: %d clients never got the value" % (variant, left))
    after_store = [c.done_ns - first_store_ns for c in clients
                   if c.lease is None and first_store_ns and c.done_ns >= first_store_ns]
    return source_calls, [c.done_ns - start for c in clients], after_store


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--md")
    ap.add_argument("--json")
    args = ap.parse_args()
    nclients = int(os.environ.get("STAMPEDE_CLIENTS", "50"))
    source_ms = int(os.environ.get("STAMPEDE_SOURCE_MS", "50"))
    trials = int(os.environ.get("STAMPEDE_TRIALS", "20"))
    admin = Conn("127.0.0.1", args.port)
    sha = admin.call("SCRIPT", "LOAD", SEED_LUA).decode()
    has_module = any(b"warden" in bytes(m[1]) for m in admin.call("MODULE", "LIST"))
    admin.close()
    variants = ["naive", "seed-lua"] + (["lease-wait"] if has_module else [])
    results = {}
    for variant in variants:
        calls, lat, after = [], [], []
        for _ in range(trials):
            n, ns, waited = trial(args.port, variant, nclients, source_ms, sha)
            calls.append(n)
            lat.extend(ns)
            after.extend(waited)
        lat.sort()
        after.sort()
        ms = lambda v: v / 1e6  # noqa: E731
        results[variant] = {
            "source_calls_median": sorted(calls)[len(calls) // 2],
            "source_calls_max": max(calls),
            "source_calls_min": min(calls),
            "p50_ms": ms(percentile(lat, 50)),
            "p99_ms": ms(percentile(lat, 99)),
            "after_store_p99_ms": ms(percentile(after, 99)) if after else None,
        }
    lines = [
        "## Cache stampede: %d clients miss one key at once, the source takes %d ms"
        % (nclients, source_ms),
        "",
        "%d trials per variant; latency = start of the stampede to the client holding "
        "the value, p99 over all clients of all trials." % trials,
        "",
        "| variant | source calls per trial (median, min–max) | p50 ms | p99 ms | p99 − source ms "
        "| others hold the value after the first store, p99 ms |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    names = {"naive": "GET → miss → source → SET", "seed-lua": "seed's Lua (GET + INCR + EXPIRE + compare) → source → SET",
             "lease-wait": "CACHE.GET … LEASE 2000 WAIT 2500"}
    for v, r in results.items():
        after = r["after_store_p99_ms"]
        lines.append("| %s | %d (%d–%d) | %.2f | %.2f | %.2f | %s |" % (
            names[v], r["source_calls_median"], r["source_calls_min"], r["source_calls_max"],
            r["p50_ms"], r["p99_ms"], r["p99_ms"] - source_ms,
            "—" if after is None else "%.2f" % after))
    if "lease-wait" in results:
        r = results["lease-wait"]
        ok = r["source_calls_max"] == 1 and r["source_calls_min"] == 1 and r["p99_ms"] <= source_ms + 2
        lines += ["", "- %s  lease-wait: one source call per stampede and p99 ≤ source + 2 ms: "
                  "%d–%d calls, p99 %.2f ms" % ("PASS" if ok else "MISS", r["source_calls_min"],
                                                 r["source_calls_max"], r["p99_ms"])]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.md:
        with open(args.md, "w") as f:
            f.write(text)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"clients": nclients, "source_ms": source_ms, "trials": trials,
                       "variants": results}, f, indent=1)


if __name__ == "__main__":
    main()
