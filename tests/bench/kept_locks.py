#!/usr/bin/env python3
"""warden benchmark, kept locks (DLOCK.ACQUIRE ... KEEP): how soon the next
waiter is served after a holder's process is killed, and what keeping many
locks alive costs the server.

    python3 tests/bench/kept_locks.py [--trials 100] [--keys 10000]
                                      [--seconds 10] [--module PATH]

Hand-over after kill -9: per trial, a `redis-cli` process takes
`DLOCK.ACQUIRE job<i> holder 60000 KEEP` (a 60 s lease), a second connection
waits with `WAIT`; once INFO warden counts it waiting, the holder's process
gets SIGKILL and the time until the waiter's token arrives is taken. The
goal (issue 29): p99 <= 50 ms, against the whole ttl without KEEP (shown
with a 1 s ttl for a few trials).

Cost: --keys locks held by 100 connections, with KEEP (a 30 s and a 3 s
ttl: renewed every 10 s and every 1 s) and without (the same keys and
connections): the server's CPU time (utime + stime of /proc/<pid>/stat) over
--seconds of nothing else happening, as % of one core.

Renewal capacity: --capacity-requests KEEP requests at a short ttl against
`dlock-keep-max-renewals` (the default, then one raised out of the way), while
`redis-benchmark` loads the server (DLOCK.ACQUIRE on random keys, 50 clients,
32 deep) for --load-seconds: how many were granted and refused, and how many
of the granted leases lapsed while their connections stayed open.

Prints Markdown tables and a PASS/MISS line. Python 3 standard library only.
"""

import argparse
import os
import socket
import subprocess
import sys
import time

sys.dont_write_bytecode = True
from idle_waiters import Server, cpu_share, info_field  # noqa: E402
from memory import resp  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GOAL_P99_MS = 50.0
CONNECTIONS = 100


def read_reply(sock, timeout):
    """The first line of the next reply on `sock` (enough for an integer,
    nil or an error), or None after `timeout` seconds."""
    sock.settimeout(timeout)
    buf = b""
    try:
        while b"\r\n" not in buf:
            chunk = sock.recv(4096)
            if not chunk:
                return None
            buf += chunk
    except socket.timeout:
        return None
    return buf.split(b"\r\n", 1)[0].decode()


def wait_for_waiters(server, n, timeout=10):
    deadline = time.time() + timeout
    while info_field(server.con, "warden", "warden_locks_waiting") != n:
        if time.time() > deadline:
            raise RuntimeError("no waiter counted")
        time.sleep(0.002)


def hand_over_ms(server, key, keep, ttl_ms):
    """Kills a redis-cli holding `key` (with KEEP or not) and returns the ms
    until the waiter behind it has its token."""
    holder = subprocess.Popen(["redis-cli", "-p", str(server.port)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    words = "DLOCK.ACQUIRE %s holder %d%s\n" % (key, ttl_ms, " KEEP" if keep else "")
    holder.stdin.write(words.encode())
    holder.stdin.flush()
    token = holder.stdout.readline().strip()
    if not token.isdigit():
        raise RuntimeError("the holder got %r" % token)
    waiter = socket.create_connection(("127.0.0.1", server.port))
    waiter.sendall(resp(["DLOCK.ACQUIRE", key, "waiter", 1000, "WAIT", 120000]))
    wait_for_waiters(server, 1)
    start = time.perf_counter()
    holder.kill()
    reply = read_reply(waiter, 120)
    elapsed = (time.perf_counter() - start) * 1000.0
    holder.wait()
    waiter.close()
    if reply is None or not reply.startswith(":"):
        raise RuntimeError("the waiter got %r" % reply)
    return elapsed


def percentile(values, p):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100.0 * (len(ordered) - 1))))]


def idle_cost(module, keys, seconds, keep, ttl_ms):
    """% of a core the server spends over `seconds` with `keys` locks held
    by CONNECTIONS connections (kept or not)."""
    server = Server(module, CONNECTIONS)
    socks = []
    try:
        for c in range(CONNECTIONS):
            s = socket.create_connection(("127.0.0.1", server.port))
            calls = []
            for k in range(c, keys, CONNECTIONS):
                words = ["DLOCK.ACQUIRE", "k%d" % k, "holder", ttl_ms]
                if keep:
                    words.append("KEEP")
                calls.append(resp(words))
            s.sendall(b"".join(calls))
            socks.append(s)
        deadline = time.time() + 30
        while int(server.con.call("DBSIZE")) < keys:
            if time.time() > deadline:
                raise RuntimeError("the locks were not all granted")
            time.sleep(0.05)
        time.sleep(1)
        share = cpu_share(server, seconds)
        if int(server.con.call("DBSIZE")) != keys:
            raise RuntimeError("a lock was lost during the window")
        return share
    finally:
        for s in socks:
            s.close()
        server.close()


def renewal_capacity(module, requests, ttl_ms, capacity, load_s):
    """(granted, refused, lapsed, renewals/s) for `requests` KEEPs at `ttl_ms`
    with `dlock-keep-max-renewals` at `capacity`, under redis-benchmark load."""
    server = Server(module, CONNECTIONS, ("dlock-keep-max-renewals", str(capacity)))
    socks = []
    try:
        granted = []
        refused = 0
        for c in range(CONNECTIONS):
            s = socket.create_connection(("127.0.0.1", server.port))
            keys = ["cap%d" % k for k in range(c, requests, CONNECTIONS)]
            s.sendall(b"".join(resp(["DLOCK.ACQUIRE", k, "holder", ttl_ms, "KEEP"]) for k in keys))
            replies = s.makefile("rb")
            for k in keys:
                reply = replies.readline().decode().strip()
                if reply.startswith(":"):
                    granted.append(k)
                elif "renewal capacity" in reply:
                    refused += 1
                else:
                    raise RuntimeError("%s got %r" % (k, reply))
            socks.append(s)
        renewals = info_field(server.con, "warden", "warden_locks_kept_renewals")
        subprocess.run(["timeout", str(load_s), "redis-benchmark", "-p", str(server.port),
                        "-c", "50", "-P", "32", "-r", "100000", "-n", "100000000", "-q",
                        "DLOCK.ACQUIRE", "load:__rand_int__", "o", "1000"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        lapsed = sum(1 for k in granted if int(server.con.call("EXISTS", k)) == 0)
        return len(granted), refused, lapsed, renewals
    finally:
        for s in socks:
            s.close()
        server.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=100)
    ap.add_argument("--keys", type=int, default=10_000)
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--capacity-requests", type=int, default=20_000)
    ap.add_argument("--load-seconds", type=int, default=6)
    ap.add_argument("--module", default=os.path.join(ROOT, "target", "release", "libwarden.so"))
    args = ap.parse_args()
    module = os.path.abspath(args.module)

    server = Server(module, 10)
    try:
        kept = [hand_over_ms(server, "job%d" % i, True, 60_000) for i in range(args.trials)]
        plain = [hand_over_ms(server, "plain%d" % i, False, 1_000) for i in range(3)]
    finally:
        server.close()
    print("## Kept locks: the next waiter's token after kill -9 of the holder's process\n")
    print("| holder | trials | p50 ms | p99 ms | max ms |")
    print("|---|---:|---:|---:|---:|")
    print("| KEEP, ttl 60 s | %d | %.1f | %.1f | %.1f |"
          % (len(kept), percentile(kept, 50), percentile(kept, 99), max(kept)))
    print("| no KEEP, ttl 1 s | %d | %.1f | %.1f | %.1f |"
          % (len(plain), percentile(plain, 50), percentile(plain, 99), max(plain)))
    print()

    print("## Kept locks: server CPU while %d locks are held and nothing else happens (%g s)\n"
          % (args.keys, args.seconds))
    print("| locks held by %d connections | %% of a core |" % CONNECTIONS)
    print("|---|---:|")
    for label, keep, ttl in (("without KEEP", False, 30_000), ("KEEP, ttl 30 s (renewed every 10 s)", True, 30_000),
                             ("KEEP, ttl 3 s (renewed every 1 s)", True, 3_000)):
        print("| %s | %.2f |" % (label, idle_cost(module, args.keys, args.seconds, keep, ttl)), flush=True)
    print()

    print("## Kept locks: renewal capacity under redis-benchmark load (%d s)\n" % args.load_seconds)
    print("| KEEP requests | ttl ms | dlock-keep-max-renewals | granted | refused | renewals/s needed | lapsed |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    n = args.capacity_requests
    rows = [(n, 100, 50_000), (5 * n, 1_000, 50_000), (n // 4, 100, 10 ** 8),
            (n // 2, 100, 10 ** 8), (n, 100, 10 ** 8)]
    lapsed_within = 0
    for requests, ttl, capacity in rows:
        granted, refused, lapsed, renewals = renewal_capacity(module, requests, ttl, capacity,
                                                              args.load_seconds)
        if capacity == 50_000:
            lapsed_within += lapsed
        print("| %d | %d | %d | %d | %d | %d | %d |"
              % (requests, ttl, capacity, granted, refused, renewals, lapsed), flush=True)
    print()
    print("%s kept leases within the default capacity lapsed under load: %d"
          % ("PASS" if lapsed_within == 0 else "MISS", lapsed_within))
    p99 = percentile(kept, 99)
    print("%s kill -9 -> next waiter p99 %.1f ms (goal <= %.0f ms)"
          % ("PASS" if p99 <= GOAL_P99_MS else "MISS", p99, GOAL_P99_MS))


if __name__ == "__main__":
    main()
