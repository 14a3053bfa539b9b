#!/usr/bin/env python3
"""Contended-lock benchmark: N clients fighting over ONE lock key.

    python3 tests/bench/contended.py --port PORT [--md FILE] [--json FILE]

Needs a running redis-server (with libwarden.so loaded for the DLOCK variant; without
it that variant is skipped). Python 3 standard library only (own RESP client; its
pieces, from the client processes to the report, also serve tests/bench/contended_kinds.py).

Every client loops until the cell's time is up:
    acquire -> INCR counter -> release
and waits for each reply before sending the next command (no pipelining).

Variants
  lua-100ms  the seed's lock: SET lock owner-i NX PX 10000 (what go-redis SetNX with an
             expiration sends); when refused, sleep 100 ms and retry. Release: EVALSHA of
             the seed's compare-and-delete script
             (if GET(lock) == owner then DEL(lock)), the same script as bench.sh's
             "Lua release" row.
  lua-1ms    the same with a 1 ms retry sleep.
  dlock-wait DLOCK.ACQUIRE lock owner-i 10000 WAIT 10000 (the server parks the client and
             hands the lock over at release, oldest waiter first) + DLOCK.RELEASE.

Measured per cell (variant x clients)
  sections/s    critical sections completed (release reply received) within the cell's
                window, divided by the window length (CONTENDED_SECONDS).
  hand-off      release sent -> the next holder's granted-acquire reply received. Every
                client records time.perf_counter_ns() just before it sends a release and
                just after it reads a granting acquire reply; perf_counter_ns is
                CLOCK_MONOTONIC, one clock for all processes on the machine. Each grant is
                paired with the latest release (of any client) sent before it. p50/p99
                over all grants in the window. "to another client" restricts that to
                grants whose paired release came from a different client (with a
                retry-sleep lock the releasing client usually re-takes the lock itself).
  per client    fewest / most sections one client completed in the window (fairness).
  attempts      acquire commands sent per completed section (1.00 = never refused).
  server CPU    used_cpu_user + used_cpu_sys delta of INFO cpu over the cell (includes
                networking and the drain after the window), per section and as % of one
                core; "cmdstat" is the INFO commandstats usec summed over the commands
                involved (set, evalsha, incr, dlock.acquire, dlock.release) per section,
                after CONFIG RESETSTAT at the start of the cell.
  client CPU    user+sys CPU of the client processes over the cell, as % of one core:
                near 100% x (number of client CPUs) means the clients, not the server,
                limit the cell.
Checks (a failure prints FAIL, still writes the tables, and exits 1)
  - the counter equals the number of completed sections (all of them, including those
    finished while draining after the window), and the INCR replies are exactly
    1..sections;
  - mutual exclusion as seen from the clients: taking the sections in counter order,
    each grant was received after the previous section's release was sent;
  - every release by the holder replied 1.

Method (clients): one OS process per group of clients, at most CONTENDED_PROCS processes
per cell, clients spread evenly. Each process runs its clients as state machines on one
selectors (epoll) loop over blocking sockets with TCP_NODELAY, so there is no GIL
contention and a parked DLOCK waiter costs nothing on the client. The retry sleep is a
timer in that loop (epoll rounds timeouts up to whole milliseconds, as Go's time.Sleep
on Linux does in practice). All processes start on the same perf_counter_ns instant.
At the end of the window a client stops starting new acquires; a client that is
granted after the window (queued DLOCK waiters) still completes its section, which then
counts for the checks but not for sections/s.
Rounds: every round runs every cell once (variants x client counts, in order), so a
burst of load from elsewhere on the machine hits one round of a few cells, not a whole
variant; the table shows the median over rounds of each column, and "x 1 client" is the
median of the per-round ratios to the 1-client cell of the same variant and round.
With CONTENDED_CPUS the client processes are pinned (bench.sh pins redis-server to CPU 0
and the clients to CPU 1). On a 2-CPU machine the clients of the retry variants can
saturate their CPU (see the client CPU column); real clients would run elsewhere.

Goal (printed PASS/MISS, never fails the run): with 50 clients, dlock-wait keeps at least
half the sections/s of a single uncontended client (dlock-wait, 1 client) and its p99
hand-off is <= 1 ms.

Environment
  CONTENDED_SECONDS  window per cell and round, seconds       (default 4)
  CONTENDED_ROUNDS   interleaved rounds (each runs every cell once); the table shows
                     medians over rounds                       (default 3; about 2 minutes)
  CONTENDED_CLIENTS  comma-separated client counts            (default 1,10,50)
  CONTENDED_VARIANTS comma-separated, from lua-100ms,lua-1ms,dlock-wait (default all)
  CONTENDED_PROCS    most client processes per cell           (default 4)
  CONTENDED_CPUS     CPU list for the client processes, e.g. "1" or "1-3" (default: none)
  CONTENDED_DRAIN    seconds allowed to finish after the window (default 20)
"""
import argparse
import bisect
import heapq
import json
import math
import multiprocessing as mp
import multiprocessing.connection
import os
import queue
import selectors
import socket
import statistics
import sys
import time
import traceback

LUA_RELEASE = ("if redis.call('GET', KEYS[1]) == ARGV[1] then "
               "return redis.call('DEL', KEYS[1]) else return 0 end")
LOCK_KEY = "warden-bench:contended:lock"
COUNTER_KEY = "warden-bench:contended:counter"
TTL_MS = 10000
WAIT_MS = 10000
VARIANTS = {
    # name: (label, retry sleep in ms or None for DLOCK WAIT)
    "lua-100ms": ("seed Lua lock, retry 100 ms", 100),
    "lua-1ms": ("seed Lua lock, retry 1 ms", 1),
    "dlock-wait": ("DLOCK.ACQUIRE … WAIT", None),
}
STAT_CMDS = ("set", "evalsha", "incr", "dlock.acquire", "dlock.release")


class ReplyError(Exception):
    pass


NIL = None


def encode(*args):
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


def parse(buf, pos=0):
    """One RESP2 reply from buf[pos:]: (value, next_pos), or None when incomplete.
    Errors come back as ReplyError instances (not raised)."""
    end = buf.find(b"\r\n", pos)
    if end < 0:
        return None
    kind, rest = buf[pos:pos + 1], buf[pos + 1:end]
    nxt = end + 2
    if kind == b"+":
        return bytes(rest), nxt
    if kind == b":":
        return int(rest), nxt
    if kind == b"-":
        return ReplyError(rest.decode(errors="replace")), nxt
    if kind == b"$":
        n = int(rest)
        if n < 0:
            return NIL, nxt
        if len(buf) < nxt + n + 2:
            return None
        return bytes(buf[nxt:nxt + n]), nxt + n + 2
    if kind == b"*":
        n = int(rest)
        if n < 0:
            return NIL, nxt
        items = []
        for _ in range(n):
            r = parse(buf, nxt)
            if r is None:
                return None
            items.append(r[0])
            nxt = r[1]
        return items, nxt
    raise ReplyError("bad reply %r" % bytes(buf[pos:pos + 40]))


class Conn:
    """Blocking request/reply connection for the controller."""

    def __init__(self, host, port, timeout=30):
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = bytearray()

    def call(self, *args):
        self.sock.sendall(encode(*args))
        while True:
            r = parse(self.buf)
            if r is not None:
                del self.buf[:r[1]]
                if isinstance(r[0], ReplyError):
                    raise r[0]
                return r[0]
            data = self.sock.recv(1 << 16)
            if not data:
                raise ConnectionError("server closed the connection")
            self.buf += data

    def info(self, section):
        text = self.call("INFO", section).decode()
        out = {}
        for line in text.splitlines():
            if ":" in line and not line.startswith("#"):
                k, v = line.split(":", 1)
                out[k] = v
        return out

    def close(self):
        self.sock.close()


# ------------------------------------------------------------------ client processes

ACQ, INCR, REL, SLEEP, DONE = range(5)


def connect(cfg):
    """One client connection of a worker process: blocking, TCP_NODELAY."""
    sock = socket.create_connection((cfg["host"], cfg["port"]), timeout=30)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.settimeout(None)
    return sock


def await_start(nclients, ready_q, go, start_ns):
    """Reports the worker's clients ready, waits for the start signal and spins until the
    common start instant; returns it (perf_counter_ns)."""
    ready_q.put(nclients)
    if not go.wait(120):
        raise RuntimeError("no start signal")
    start = start_ns.value
    time.sleep(max(0.0, (start - time.perf_counter_ns()) / 1e9 - 0.002))
    while time.perf_counter_ns() < start:
        pass
    return start


def replies(sock, buf, who):
    """Reads what the socket has (one recv) into buf and yields every complete reply."""
    data = sock.recv(1 << 16)
    if not data:
        raise ConnectionError("server closed %s's connection" % who)
    buf += data
    while True:
        r = parse(buf)
        if r is None:
            return
        del buf[:r[1]]
        yield r[0]


class Client:
    __slots__ = ("cid", "sock", "buf", "state", "acq", "incr", "rel", "t_grant",
                 "v", "t_rel")


def run_worker(target, cfg, cids, ready_q, go, start_ns, conn):
    """A client process: pinned to cfg["cpus"] (when set), runs
    target(cfg, cids, ready_q, go, start_ns) and sends back the report it returns, or the
    traceback as {"error": ...}."""
    try:
        if cfg["cpus"]:
            os.sched_setaffinity(0, cfg["cpus"])
        conn.send(target(cfg, cids, ready_q, go, start_ns))
    except BaseException:
        conn.send({"error": traceback.format_exc()})
    finally:
        conn.close()


def check_release(cid, val):
    if val != 1:
        raise RuntimeError("client %d: release by the holder replied %r" % (cid, val))


def cpu_since(t0):
    """User + system CPU seconds of this process since os.times() t0."""
    t1 = os.times()
    return (t1.user + t1.system) - (t0.user + t0.system)


def worker(cfg, cids, ready_q, go, start_ns):
    """Runs clients `cids` of one cell; returns their sections and counters."""
    sleep_ns = None if cfg["sleep_ms"] is None else cfg["sleep_ms"] * 1_000_000
    wait = sleep_ns is None
    sel = selectors.DefaultSelector()
    clients = []
    for cid in cids:
        c = Client()
        c.cid = cid
        c.sock = connect(cfg)
        c.buf = bytearray()
        owner = "owner-%d" % cid
        if wait:
            c.acq = encode("DLOCK.ACQUIRE", LOCK_KEY, owner, TTL_MS, "WAIT", WAIT_MS)
            c.rel = encode("DLOCK.RELEASE", LOCK_KEY, owner)
        else:
            c.acq = encode("SET", LOCK_KEY, owner, "NX", "PX", TTL_MS)
            c.rel = encode("EVALSHA", cfg["sha"], 1, LOCK_KEY, owner)
        c.incr = encode("INCR", COUNTER_KEY)
        c.state = DONE
        sel.register(c.sock, selectors.EVENT_READ, c)
        clients.append(c)
    start = await_start(len(clients), ready_q, go, start_ns)
    deadline = start + cfg["seconds_ns"]
    hard = deadline + cfg["drain_ns"]
    t0 = os.times()
    sections = []          # (counter value, cid, t_grant, t_rel, t_done)
    attempts = timeouts = 0
    timers = []            # (wake_ns, cid, client)
    pc = time.perf_counter_ns
    active = len(clients)
    for c in clients:
        c.state = ACQ
        c.sock.sendall(c.acq)
    while active:
        now = pc()
        if now > hard:
            busy = sorted({c.cid: ("acquire", "incr", "release", "sleep", "done")[c.state]
                           for c in clients if c.state != DONE}.items())[:5]
            raise RuntimeError("clients still busy %.0f s after the window: %s"
                               % (cfg["drain_ns"] / 1e9, busy))
        while timers and timers[0][0] <= now:
            c = heapq.heappop(timers)[2]
            if now >= deadline:
                c.state = DONE
                active -= 1
            else:
                c.state = ACQ
                c.sock.sendall(c.acq)
        if not active:
            break
        timeout = (hard - now) / 1e9
        if timers:
            timeout = min(timeout, max(0.0, (timers[0][0] - now) / 1e9))
        for key, _ in sel.select(min(timeout, 1.0)):
            c = key.data
            for val in replies(c.sock, c.buf, "client %d" % c.cid):
                now = pc()
                if isinstance(val, ReplyError):
                    raise RuntimeError("client %d: error reply in state %d: %s"
                                       % (c.cid, c.state, val))
                st = c.state
                if st == ACQ:
                    attempts += 1
                    if (val is not NIL) if wait else (val == b"OK"):
                        c.t_grant = now
                        c.state = INCR
                        c.sock.sendall(c.incr)
                    elif now >= deadline:
                        c.state = DONE
                        active -= 1
                    elif wait:
                        timeouts += 1
                        c.sock.sendall(c.acq)
                    else:
                        c.state = SLEEP
                        heapq.heappush(timers, (now + sleep_ns, c.cid, c))
                elif st == INCR:
                    if not isinstance(val, int):
                        raise RuntimeError("INCR replied %r" % (val,))
                    c.v = val
                    c.state = REL
                    c.t_rel = pc()
                    c.sock.sendall(c.rel)
                elif st == REL:
                    check_release(c.cid, val)
                    sections.append((c.v, c.cid, c.t_grant, c.t_rel, now))
                    if now < deadline:
                        c.state = ACQ
                        c.sock.sendall(c.acq)
                    else:
                        c.state = DONE
                        active -= 1
                else:
                    raise RuntimeError("client %d: unexpected reply %r" % (c.cid, val))
    cpu = cpu_since(t0)
    for c in clients:
        c.sock.close()
    return {"sections": sections, "attempts": attempts, "timeouts": timeouts, "cpu": cpu,
            "end": pc()}


# ------------------------------------------------------------------ controller

def percentile(sorted_vals, p):
    if not sorted_vals:
        return None
    k = max(0, math.ceil(p / 100 * len(sorted_vals)) - 1)
    return sorted_vals[k]


def cmdstat_usec(info):
    total = 0
    calls = {}
    for cmd in STAT_CMDS:
        v = info.get("cmdstat_" + cmd)
        if v:
            f = dict(kv.split("=", 1) for kv in v.split(","))
            total += int(f["usec"])
            calls[cmd] = int(f["calls"])
    return total, calls


def cpu_seconds(info):
    return float(info["used_cpu_user"]) + float(info["used_cpu_sys"])


def run_workers(args, admin, nclients, target, cfg):
    """Runs clients 0..nclients-1 in at most args.procs forked processes (clients spread
    evenly), each process target(cfg, cids, ready_q, go, start_ns) (see run_worker); when all are
    ready, CONFIG RESETSTAT and start them all on one perf_counter_ns instant 50 ms
    ahead. cfg gets host, port, cpus, seconds_ns and drain_ns from args. Returns the
    processes' reports, the start instant, the number of processes and the server's
    CPU seconds (INFO cpu) over the run."""
    nprocs = max(1, min(nclients, args.procs))
    groups = [list(range(i, nclients, nprocs)) for i in range(nprocs)]
    cfg = dict(cfg, host=args.host, port=args.port, cpus=args.cpus,
               seconds_ns=int(args.seconds * 1e9), drain_ns=int(args.drain * 1e9))
    ctx = mp.get_context("fork")
    ready_q, go, start_ns = ctx.Queue(), ctx.Event(), ctx.Value("q", 0)
    procs, pipes = [], []
    for g in groups:
        rd, wr = ctx.Pipe(duplex=False)
        p = ctx.Process(target=run_worker, args=(target, cfg, g, ready_q, go, start_ns, wr),
                        daemon=True)
        p.start()
        wr.close()
        procs.append(p)
        pipes.append(rd)
    results = []
    try:
        got, limit = 0, time.monotonic() + 60
        while got < nclients:
            failed = [rd for rd in pipes if rd.poll()]
            if failed:   # a worker failed before it was ready
                raise RuntimeError("client process failed:\n" + failed[0].recv().get("error", "?"))
            if time.monotonic() > limit:
                raise RuntimeError("client processes not ready after 60 s")
            try:
                got += ready_q.get(timeout=0.1)
            except queue.Empty:
                pass
        admin.call("CONFIG", "RESETSTAT")
        cpu0 = cpu_seconds(admin.info("cpu"))
        start = time.perf_counter_ns() + 50_000_000
        start_ns.value = start
        go.set()
        limit = time.monotonic() + args.seconds + args.drain + 60
        waiting = list(pipes)
        while waiting:
            ready = mp.connection.wait(waiting, max(0.0, limit - time.monotonic()))
            if not ready:
                raise RuntimeError("%d client processes did not report back" % len(waiting))
            for rd in ready:
                waiting.remove(rd)
                r = rd.recv()
                if "error" in r:   # stop the others at once (finally: kill)
                    raise RuntimeError("client process failed:\n" + r["error"])
                results.append(r)
    finally:
        for p in procs:
            p.join(5 if len(results) == len(procs) else 0)
            if p.is_alive():
                p.kill()
                p.join()
    return results, start, nprocs, cpu_seconds(admin.info("cpu")) - cpu0


def run_cell(args, variant, nclients, sha):
    label, sleep_ms = VARIANTS[variant]
    admin = Conn(args.host, args.port)
    admin.call("DEL", LOCK_KEY, COUNTER_KEY)
    results, start, nprocs, server_cpu = run_workers(
        args, admin, nclients, worker, {"sleep_ms": sleep_ms, "sha": sha})
    end = max(r["end"] for r in results)
    usec, calls = cmdstat_usec(admin.info("commandstats"))
    counter = admin.call("GET", COUNTER_KEY)
    counter = int(counter) if counter is not None else 0
    admin.call("DEL", LOCK_KEY, COUNTER_KEY)
    admin.close()

    window = args.seconds * 1e9
    deadline = start + window
    sections = sorted(s for r in results for s in r["sections"])   # by counter value
    total = len(sections)
    in_window = [s for s in sections if s[4] <= deadline]
    problems = []
    if counter != total:
        problems.append("counter is %d but %d sections completed" % (counter, total))
    if [s[0] for s in sections] != list(range(1, total + 1)):
        problems.append("INCR replies are not exactly 1..%d" % total)
    overlaps = sum(1 for a, b in zip(sections, sections[1:]) if b[2] <= a[3])
    if overlaps:
        problems.append("%d grants received before the previous holder sent its release "
                        "(mutual exclusion violated)" % overlaps)
    # hand-off: each grant paired with the latest release sent before it
    rels = sorted((s[3], s[1]) for s in sections)
    rel_t = [t for t, _ in rels]
    handoff, handoff_other = [], []
    for s in sections:
        if s[2] > deadline:
            continue
        i = bisect.bisect_left(rel_t, s[2]) - 1
        if i < 0:
            continue
        lat = s[2] - rel_t[i]
        handoff.append(lat)
        if rels[i][1] != s[1]:
            handoff_other.append(lat)
    handoff.sort()
    handoff_other.sort()
    per_client = [0] * nclients
    for s in in_window:
        per_client[s[1]] += 1
    attempts = sum(r["attempts"] for r in results)
    wall = max(end - start, 1)
    us = lambda v: None if v is None else v / 1000
    return {
        "variant": variant, "label": label, "clients": nclients, "procs": nprocs,
        "seconds": args.seconds, "sections": total, "sections_in_window": len(in_window),
        "rate": len(in_window) / args.seconds,
        "handoff_p50_us": us(percentile(handoff, 50)),
        "handoff_p99_us": us(percentile(handoff, 99)),
        "handoffs": len(handoff),
        "other_p50_us": us(percentile(handoff_other, 50)),
        "other_p99_us": us(percentile(handoff_other, 99)),
        "other_share": len(handoff_other) / len(handoff) if handoff else None,
        "per_client_min": min(per_client), "per_client_max": max(per_client),
        "attempts": attempts, "attempts_per_section": attempts / total if total else None,
        "wait_timeouts": sum(r["timeouts"] for r in results),
        "server_cpu_s": server_cpu, "server_cpu_pct": 100 * server_cpu / (wall / 1e9),
        "server_cpu_us_per_section": 1e6 * server_cpu / total if total else None,
        "cmdstat_usec": usec, "cmdstat_calls": calls,
        "cmdstat_us_per_section": usec / total if total else None,
        "client_cpu_pct": 100 * sum(r["cpu"] for r in results) / (wall / 1e9),
        "wall_s": wall / 1e9, "counter": counter, "problems": problems,
    }


def fmt(v, spec="%.0f", none="—"):
    return none if v is None else spec % v


def fmt_int(v):
    return "{:,.0f}".format(v)


MEDIAN_FIELDS = ("rate", "handoff_p50_us", "handoff_p99_us", "other_p50_us", "other_p99_us",
                 "other_share", "per_client_min", "per_client_max", "attempts_per_section",
                 "server_cpu_us_per_section", "server_cpu_pct", "cmdstat_us_per_section",
                 "client_cpu_pct")


def summary(rs, keys, fields):
    """One table row from a cell's results over the rounds `rs`: `keys` copied from the
    first round; the median of each of `fields` (None when no round has a value); the
    slowest and fastest round's rate; sections summed; every round's problems."""
    a = {k: rs[0][k] for k in keys}
    a["rounds"] = len(rs)
    a["sections"] = sum(c["sections"] for c in rs)
    a["problems"] = ["round %d: %s" % (c["round"], p) for c in rs for p in c["problems"]]
    a["per_round"] = rs
    for f in fields:
        vals = [c[f] for c in rs if c[f] is not None]
        a[f] = statistics.median(vals) if vals else None
    a["rate_min"] = min(c["rate"] for c in rs)
    a["rate_max"] = max(c["rate"] for c in rs)
    return a


def by_cell(rounds, variants, clients):
    """(variant, clients, that cell's results over the rounds) for every cell measured."""
    for v in variants:
        for n in clients:
            rs = [r[(v, n)] for r in rounds if (v, n) in r]
            if rs:
                yield v, n, rs


def aggregate(rounds, variants, clients):
    """One row per (variant, clients): medians over rounds; the ratio to 1 client is the
    median of per-round ratios (same round), so slow drifts of the machine cancel out."""
    out = []
    for v, n, rs in by_cell(rounds, variants, clients):
        a = summary(rs, ("variant", "label", "clients", "seconds", "procs"), MEDIAN_FIELDS)
        ratios = [r[(v, n)]["rate"] / r[(v, 1)]["rate"] for r in rounds
                  if (v, n) in r and (v, 1) in r and r[(v, 1)]["rate"]]
        a["vs_one"] = statistics.median(ratios) if ratios else None
        a["counter"] = sum(c["counter"] for c in rs)
        out.append(a)
    return out


def goal_line(cells):
    by = {(c["variant"], c["clients"]): c for c in cells}
    one, fifty = by.get(("dlock-wait", 1)), by.get(("dlock-wait", 50))
    if not one or not fifty or fifty["vs_one"] is None:
        return "- SKIP  dlock-wait with 50 clients vs 1 client (cell not measured)"
    ratio, p99 = fifty["vs_one"], fifty["handoff_p99_us"]
    ok = ratio >= 0.5 and p99 is not None and p99 <= 1000
    return ("- %s  dlock-wait, 50 clients: ≥ 0.5× the sections/s of 1 uncontended client "
            "and p99 hand-off ≤ 1 ms: measured %.2f× (%s vs %s sections/s), p99 %s µs"
            % ("PASS" if ok else "MISS", ratio, fmt_int(fifty["rate"]), fmt_int(one["rate"]),
               fmt(p99, "%.0f", "n/a")))


def markdown(cells, meta, rounds):
    out = ["## Contended lock (one key, N clients)", ""]
    out.append("- %s" % meta)
    if cells:
        out.append("- each client loops acquire → INCR counter → release; %d interleaved "
                   "round(s) of %g s per cell, medians over rounds; method and column "
                   "definitions: tests/bench/contended.py" % (rounds, cells[0]["seconds"]))
    out.append("")
    out.append("| variant | clients | sections/s (range) | × 1 client | hand-off p50 / p99 µs "
               "| to another client: share, p50 / p99 µs | per client min–max "
               "| attempts / section | server CPU µs / section (% core) "
               "| cmdstat µs / section | client CPU % | counter check |")
    out.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for c in cells:
        other = "—" if c["other_share"] is None else "%.0f%%, %s / %s" % (
            100 * c["other_share"], fmt(c["other_p50_us"]), fmt(c["other_p99_us"]))
        rng = "" if c["rounds"] < 2 else " (%s–%s)" % (fmt_int(c["rate_min"]),
                                                       fmt_int(c["rate_max"]))
        out.append("| %s | %d | %s%s | %s | %s / %s | %s | %s–%s | %s | %s (%.0f%%) | %s | %.0f | %s |" % (
            c["label"], c["clients"], fmt_int(c["rate"]), rng, fmt(c["vs_one"], "%.2f×"),
            fmt(c["handoff_p50_us"]), fmt(c["handoff_p99_us"]), other,
            fmt_int(c["per_client_min"]), fmt_int(c["per_client_max"]),
            fmt(c["attempts_per_section"], "%.2f"),
            fmt(c["server_cpu_us_per_section"], "%.1f"), c["server_cpu_pct"],
            fmt(c["cmdstat_us_per_section"], "%.1f"), c["client_cpu_pct"],
            "OK (%s = %s)" % (fmt_int(c["counter"]), fmt_int(c["sections"]))
            if not c["problems"] else "**FAIL**: " + "; ".join(c["problems"])))
    out.append("")
    out.append("Medians over rounds (range: slowest–fastest round); × 1 client: median of the "
               "per-round ratios to the same variant with 1 client. sections/s counts sections "
               "finished inside the window; the counter check (counter vs completed sections, "
               "summed over rounds) covers every section, including those finished while "
               "draining. Hand-off: release sent → next granted acquire reply "
               "(perf_counter_ns, same machine), each grant paired with the latest release "
               "before it.")
    out.append("")
    out.append("### Goal")
    out.append("")
    out.append(goal_line(cells))
    out.append("")
    return "\n".join(out)


def loadavg():
    try:
        with open("/proc/loadavg") as f:
            return "/".join(f.read().split()[:3])
    except OSError:
        return "unknown"


def parse_cpus(text):
    cpus = set()
    for part in filter(None, text.replace(" ", "").split(",")):
        if "-" in part:
            a, b = part.split("-")
            cpus.update(range(int(a), int(b) + 1))
        else:
            cpus.add(int(part))
    return cpus


def settings(doc, prog, prefix, variants, clients):
    """The command line (--host, --port, --md, --json) and the <prefix>_SECONDS, _ROUNDS,
    _DRAIN, _PROCS, _CLIENTS, _VARIANTS and _CPUS environment settings, in args."""
    ap = argparse.ArgumentParser(description=doc.split("\n")[0])
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--md", help="write the Markdown table here")
    ap.add_argument("--json", help="write the cells as JSON here (for charts.py)")
    args = ap.parse_args()
    env = lambda name, default: os.environ.get(prefix + name, default)
    try:
        args.seconds = float(env("_SECONDS", "4"))
        args.rounds = int(env("_ROUNDS", "3"))
        args.drain = float(env("_DRAIN", "20"))
        args.procs = int(env("_PROCS", "4"))
        args.clients = [int(x) for x in env("_CLIENTS", clients).split(",") if x.strip()]
        args.variants = [v.strip() for v in env("_VARIANTS", ",".join(variants)).split(",")
                         if v.strip()]
        args.cpus = parse_cpus(env("_CPUS", ""))
    except ValueError as e:
        sys.exit("%s: bad environment setting: %s" % (prog, e))
    unknown = [v for v in args.variants if v not in variants]
    if unknown or args.seconds <= 0 or args.procs < 1 or args.rounds < 1 or not args.clients \
            or min(args.clients) < 1:
        sys.exit("%s: bad settings (variants %s, seconds %g, procs %d, clients %s)"
                 % (prog, unknown or args.variants, args.seconds, args.procs, args.clients))
    return args


def server_setup(prog, args, scripts):
    """Drops the dlock-* variants when the module is not loaded, loads the Lua scripts;
    returns the server's version and the scripts' SHA1s."""
    admin = Conn(args.host, args.port)
    dlock = [v for v in args.variants if v.startswith("dlock")]
    if dlock and admin.call("COMMAND", "INFO", "DLOCK.ACQUIRE") in (None, [None]):
        print("%s: DLOCK.ACQUIRE unknown to the server (module not loaded): skipping %s"
              % (prog, ", ".join(dlock)), file=sys.stderr)
        args.variants = [v for v in args.variants if v not in dlock]
    shas = [admin.call("SCRIPT", "LOAD", s).decode() for s in scripts]
    version = admin.info("server").get("redis_version", "?")
    admin.close()
    return version, shas


def run_rounds(prog, args, run_one, progress):
    """Every round runs every cell (variant x client count, in order) once:
    run_one(variant, clients) returns the cell's dict (with "problems"), progress(cell)
    the text of its line on stderr. A cell that raises is reported and skipped. Returns
    the rounds (one {(variant, clients): cell} each) and the errors."""
    rounds, errors = [], []
    for rnd in range(1, args.rounds + 1):
        rounds.append({})
        for variant in args.variants:
            for n in args.clients:
                try:
                    c = run_one(variant, n)
                except Exception as e:   # report it, go on with the other cells
                    last = (str(e).strip().splitlines() or ["?"])[-1]
                    errors.append("round %d, %s, %d clients: %s" % (rnd, variant, n, last))
                    print("%s: round %d/%d %-10s %3d clients: FAIL: %s"
                          % (prog, rnd, args.rounds, variant, n, e), file=sys.stderr)
                    continue
                c["round"] = rnd
                rounds[-1][(variant, n)] = c
                print("%s: round %d/%d %-10s %3d clients: %s%s" % (
                          prog, rnd, args.rounds, variant, n, progress(c),
                          "" if not c["problems"] else "  FAIL: " + "; ".join(c["problems"])),
                      file=sys.stderr)
    return rounds, errors


def run_meta(version, args, what, t0, load0):
    return ("redis-server %s at %s:%d; client processes ≤ %d per cell, client CPUs %s, "
            "nproc=%d; %s; took %.0f s; load average %s at start, %s at end"
            % (version, args.host, args.port, args.procs,
               ",".join(map(str, sorted(args.cpus))) or "any", os.cpu_count(),
               what, time.monotonic() - t0, load0, loadavg()))


def report(prog, args, md, meta, cells, errors):
    """Writes the Markdown (--md, and stdout) and JSON (--json) results; exits 1 when a
    cell failed a check or could not run."""
    if errors:
        md += "\n### Failed cells\n\n" + "\n".join(
            "- **FAIL** " + e.replace("\n", " ") for e in errors) + "\n"
    if args.md:
        with open(args.md, "w") as f:
            f.write(md)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"meta": meta, "cells": cells, "errors": errors}, f, indent=1)
    print(md)
    failed = ["%s/%d: %s" % (c["variant"], c["clients"], "; ".join(c["problems"]))
              for c in cells if c["problems"]] + errors
    if failed:
        print("%s: FAIL: %s" % (prog, "; ".join(failed)), file=sys.stderr)
        sys.exit(1)


def main():
    args = settings(__doc__, "contended", "CONTENDED", VARIANTS, "1,10,50")
    version, (sha,) = server_setup("contended", args, [LUA_RELEASE])
    t0, load0 = time.monotonic(), loadavg()
    rounds, errors = run_rounds(
        "contended", args, lambda variant, n: run_cell(args, variant, n, sha),
        lambda c: "%9s sections/s, hand-off p50 %s p99 %s µs, server CPU %.0f%%, "
                  "client CPU %.0f%%" % (fmt_int(c["rate"]), fmt(c["handoff_p50_us"]),
                                         fmt(c["handoff_p99_us"]), c["server_cpu_pct"],
                                         c["client_cpu_pct"]))
    cells = aggregate(rounds, args.variants, args.clients)
    meta = run_meta(version, args, "TTL %d ms, WAIT %d ms" % (TTL_MS, WAIT_MS), t0, load0)
    report("contended", args, markdown(cells, meta, args.rounds), meta, cells, errors)


if __name__ == "__main__":
    main()
