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


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=100)
    ap.add_argument("--keys", type=int, default=10_000)
    ap.add_argument("--seconds", type=float, default=10.0)
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
    p99 = percentile(kept, 99)
    print("%s kill -9 -> next waiter p99 %.1f ms (goal <= %.0f ms)"
          % ("PASS" if p99 <= GOAL_P99_MS else "MISS", p99, GOAL_P99_MS))


if __name__ == "__main__":
    main()
