#!/usr/bin/env python3
"""Contended read/write lock and semaphore: N clients on ONE key, warden beside Lua.

    python3 tests/bench/contended_kinds.py --port PORT [--md FILE] [--json FILE]

Issue #15's bench for the lock kinds that tests/bench/contended.py (the plain exclusive
lock) does not cover. Needs a running redis-server (with libwarden.so loaded for the
dlock-* variants; without it they are skipped). Python 3 standard library only: the RESP
client, the worker processes, the rounds and the output are tests/bench/contended.py's,
imported from it.

Every client loops until the cell's time is up:
    acquire -> INCRBY inside w -> DECRBY inside w -> release
waiting for each reply before sending the next command. `inside` is one counter key for
all clients: a reader or a semaphore holder adds w = 1, a writer w = 1,000,000, so the
INCRBY reply of whoever enters second shows every overlap (see Checks).

Scenarios and variants
  rwlock: N clients on one key, the first round(N x KINDS_WRITERS) of them (at least one)
  writers (exclusive), the others readers (shared).
    dlock-rw        DLOCK.ACQUIRE rw owner-i 10000 WAIT 10000 [SHARED] + DLOCK.RELEASE: the
                    server parks waiters FIFO; a waiting writer stops new SHARED grants,
                    consecutive SHARED waiters are granted together.
    lua-rw-pubsub   Lua in the shape of Redisson's RReadWriteLock (RedissonReadLock /
                    RedissonWriteLock, as described in /work/shared/research/lock.md;
                    written for this bench, not copied): a hash with field mode = read or
                    write and a hold counter per holder, PEXPIRE on the hash; each read
                    hold also sets a timeout key with its own PX, and a read unlock that
                    leaves other holders re-computes the hash's expiry from the PTTL of
                    every remaining holder's timeout keys. A refused acquire returns the
                    hash's PTTL; the client then waits for a message on the unlock channel
                    (SUBSCRIBEd on a second connection before the window) or for that PTTL,
                    and retries. The unlock that empties the hash DELs it and PUBLISHes.
                    Like Redisson's, it admits a reader whenever the mode is read, waiting
                    writers or not (no fairness: writers can starve).
  semaphore: N clients on one key with KINDS_LIMIT (default 4) holders at most.
    dlock-limit     DLOCK.ACQUIRE sem owner-i 10000 WAIT 10000 LIMIT 4 + DLOCK.RELEASE (FIFO).
    lua-sem-pubsub  Lua in the shape of Redisson's RPermitExpirableSemaphore: a sorted set of
                    permit ids scored with their expiry time, computed from the CLIENT's
                    clock (time.time()) and passed in with the client's "now"; the acquire
                    script removes expired ids, and when ZCARD < 4 ZADDs a new permit id and
                    returns it; otherwise it returns the ms until the earliest permit
                    expires, and the client waits for a message on the semaphore's channel
                    or that long, then retries. Release ZREMs the id and PUBLISHes.
                    (Redisson keeps the free-permit count in a second key set by
                    trySetPermits; ZCARD against the limit stands for it here.)
    lua-sem-poll    the same scripts, no subscription: a refused client retries after 1 ms.
  Each client is a separate subscriber, as separate processes (or JVMs) are: every
  PUBLISH reaches every subscribed client, and every waiting one retries.

Measured per cell (variant x clients), as contended.py measures them
  sections/s    critical sections completed (release reply received) within the window,
                per second; rwlock also splits readers / writers.
  Jain          Jain's fairness index over the clients' completed sections in the window:
                (sum x)^2 / (n x sum x^2); 1 = every client did as many sections, 1/n = one
                client did them all. per client min–max beside it.
  hand-off      release sent -> a waiting client's grant received (time.perf_counter_ns(),
                CLOCK_MONOTONIC, one clock for every process). Each grant in the window is
                paired with the latest release (of any client) sent before it, and counts
                when the granted client had sent its first acquire of that section before
                that release (it was waiting when the lock was released; a reader let in
                beside other readers at once is not a hand-off). p50 / p99.
  wait          first acquire of a section sent -> its grant received, over every section
                (rwlock: readers and writers apart, and the longest writer wait). A client
                whose section started in the window finishes it during the drain, so a
                starved writer's wait is measured too, up to the window's end and a bit.
  together      most holders inside at once, from the INCRBY replies (readers for rwlock):
                shows that sharing (rwlock) and the 4 permits (semaphore) are used.
  attempts      acquire commands sent per completed section (1.00 = never refused; a
                DLOCK WAIT that timed out and was sent again counts twice).
  wake-ups      pub/sub messages received by the clients, per completed section.
  server CPU    used_cpu_user + used_cpu_sys delta of INFO cpu over the cell (includes the
                pub/sub fan-out and the drain), per section and as % of one core.
  client CPU    user+sys CPU of the client processes over the cell, % of one core.
Checks (a failure prints FAIL, still writes the tables, and exits 1)
  - exclusion from the server's side: a writer's INCRBY must reply exactly 1,000,000 (no
    one else inside), a reader's less than 1,000,000 (no writer inside), a semaphore
    holder's at most 4. One key and one atomic command per entry: of two overlapping
    sections the second to enter sees the first, so every overlap is caught;
  - exclusion from the clients' clocks: with intervals [grant received, release sent], no
    writer's interval meets another section's, and no instant is inside more than 4
    semaphore intervals;
  - `inside` is 0 at the end and no lock state is left (no key of the cell but `inside`):
    every hold was released and nothing leaked;
  - every release by a holder replied 1.

Method: contended.py's (one OS process per group of clients, at most KINDS_PROCS, each
running its clients as state machines on one epoll loop with TCP_NODELAY; all processes
start on one perf_counter_ns instant; interleaved rounds, medians over rounds, the range
of sections/s shown). A client stops when a section ends after the window; one still
waiting at the end of the window goes on until it is granted (the drain), since no client
starts an acquire after the window. Clients are pinned with KINDS_CPUS (bench.sh: CPU 1,
the server on CPU 0); on a 2-CPU machine a pub/sub herd of 50 clients can saturate that
CPU (see client CPU).

Goals (printed PASS/MISS, never fail the run), at the largest client count measured, for
each of dlock-rw and dlock-limit: sections/s at least the best Lua variant of the same
scenario; Jain >= 0.9; hand-off p99 <= 1 ms.

Environment
  KINDS_SECONDS   window per cell and round, seconds           (default 4)
  KINDS_ROUNDS    interleaved rounds; the tables show medians   (default 3; about 1 minute)
  KINDS_CLIENTS   comma-separated client counts                 (default 50)
  KINDS_VARIANTS  comma-separated, from dlock-rw, lua-rw-pubsub, dlock-limit, lua-sem-pubsub,
                  lua-sem-poll                                  (default all)
  KINDS_WRITERS   share of rwlock clients that are writers      (default 0.1: 5 of 50)
  KINDS_LIMIT     semaphore holders                             (default 4)
  KINDS_PROCS     most client processes per cell                (default 4)
  KINDS_CPUS      CPU list for the client processes, e.g. "1" or "1-3" (default: none)
  KINDS_DRAIN     seconds allowed to finish after the window    (default 20)
"""
import bisect
import heapq
import os
import selectors
import sys
import time

sys.dont_write_bytecode = True   # no tests/bench/__pycache__ from importing contended.py
from contended import (  # noqa: E402
    Conn, ReplyError, await_start, by_cell, check_release, connect, cpu_since,
    encode, fmt, fmt_int, loadavg, percentile, replies, report, run_meta, run_rounds,
    run_workers, server_setup, settings, summary)

TTL_MS = 10000
WAIT_MS = 10000
WRITER_WEIGHT = 1_000_000
PREFIX = "warden-bench:kinds:"
INSIDE_KEY = PREFIX + "inside"
DLOCK_RW_KEY = PREFIX + "rw"
DLOCK_SEM_KEY = PREFIX + "sem"
RW_HASH = "{%srwlua}" % PREFIX                       # Redisson: the lock's name
RW_TIMEOUTS = RW_HASH + ":rwlock_timeout:"          # + holder + ":" + hold number
RW_CHANNEL = "redisson_rwlock:" + RW_HASH
SEM_ZSET = "{%ssemlua}" % PREFIX
SEM_CHANNEL = "redisson_sc:" + SEM_ZSET

# Read lock. KEYS: hash, timeout-key prefix. ARGV: lease ms, holder. nil when granted,
# else the hash's PTTL (how long to wait at most).
RW_READ_ACQUIRE = """
local mode = redis.call('HGET', KEYS[1], 'mode')
if mode == false or mode == 'read' then
  if mode == false then redis.call('HSET', KEYS[1], 'mode', 'read') end
  local n = redis.call('HINCRBY', KEYS[1], ARGV[2], 1)
  redis.call('SET', KEYS[2] .. ARGV[2] .. ':' .. n, 1, 'PX', ARGV[1])
  redis.call('PEXPIRE', KEYS[1], math.max(redis.call('PTTL', KEYS[1]), tonumber(ARGV[1])))
  return nil
end
return redis.call('PTTL', KEYS[1])
"""
# Both unlocks begin so: with no lock, publish anyway (waking waiters that may have missed
# an unlock) and answer "not held".
RW_UNLOCK_START = """
local mode = redis.call('HGET', KEYS[1], 'mode')
if mode == false then
  redis.call('PUBLISH', KEYS[2], ARGV[1])
  return 0
end
"""
# Read unlock. KEYS: hash, channel, timeout-key prefix. ARGV: message, holder. 1 when the
# holder's hold was released, else 0.
RW_READ_RELEASE = RW_UNLOCK_START + """
if redis.call('HEXISTS', KEYS[1], ARGV[2]) == 0 then return 0 end
local n = redis.call('HINCRBY', KEYS[1], ARGV[2], -1)
if n == 0 then redis.call('HDEL', KEYS[1], ARGV[2]) end
redis.call('DEL', KEYS[3] .. ARGV[2] .. ':' .. (n + 1))
if redis.call('HLEN', KEYS[1]) > 1 then
  local longest = -3
  for _, holder in ipairs(redis.call('HKEYS', KEYS[1])) do
    local holds = tonumber(redis.call('HGET', KEYS[1], holder))
    if holds then
      for i = holds, 1, -1 do
        longest = math.max(longest, redis.call('PTTL', KEYS[3] .. holder .. ':' .. i))
      end
    end
  end
  if longest > 0 then
    redis.call('PEXPIRE', KEYS[1], longest)
    return 1
  end
  if mode == 'write' then return 1 end
end
redis.call('DEL', KEYS[1])
redis.call('PUBLISH', KEYS[2], ARGV[1])
return 1
"""
# Write lock. KEYS: hash. ARGV: lease ms, holder. nil when granted, else the PTTL.
RW_WRITE_ACQUIRE = """
local mode = redis.call('HGET', KEYS[1], 'mode')
if mode == false then
  redis.call('HSET', KEYS[1], 'mode', 'write', ARGV[2], 1)
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  return nil
end
if mode == 'write' and redis.call('HEXISTS', KEYS[1], ARGV[2]) == 1 then
  redis.call('HINCRBY', KEYS[1], ARGV[2], 1)
  redis.call('PEXPIRE', KEYS[1], redis.call('PTTL', KEYS[1]) + ARGV[1])
  return nil
end
return redis.call('PTTL', KEYS[1])
"""
# Write unlock. KEYS: hash, channel. ARGV: message, holder. 1 / 0 as the read unlock.
RW_WRITE_RELEASE = RW_UNLOCK_START + """
if mode ~= 'write' or redis.call('HEXISTS', KEYS[1], ARGV[2]) == 0 then return 0 end
if redis.call('HINCRBY', KEYS[1], ARGV[2], -1) > 0 then return 1 end
redis.call('HDEL', KEYS[1], ARGV[2])
if redis.call('HLEN', KEYS[1]) == 1 then
  redis.call('DEL', KEYS[1])
  redis.call('PUBLISH', KEYS[2], ARGV[1])
else
  redis.call('HSET', KEYS[1], 'mode', 'read')
end
return 1
"""
# Permit semaphore. KEYS: zset, channel. ARGV: limit, permit id, expiry (client ms), now
# (client ms). The permit id when granted, else the ms until the earliest permit expires.
SEM_ACQUIRE = """
local expired = redis.call('ZRANGEBYSCORE', KEYS[1], 0, ARGV[4], 'LIMIT', 0, ARGV[1])
if #expired > 0 then
  redis.call('ZREM', KEYS[1], unpack(expired))
  redis.call('PUBLISH', KEYS[2], #expired)
end
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[1]) then
  redis.call('ZADD', KEYS[1], ARGV[3], ARGV[2])
  return ARGV[2]
end
local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
return math.max(0, tonumber(first[2]) - tonumber(ARGV[4]))
"""
# KEYS: zset, channel. ARGV: permit id. 1 when the permit was held, else 0.
SEM_RELEASE = """
if redis.call('ZREM', KEYS[1], ARGV[1]) == 0 then return 0 end
redis.call('PUBLISH', KEYS[2], 1)
return 1
"""
SCRIPTS = (RW_READ_ACQUIRE, RW_READ_RELEASE, RW_WRITE_ACQUIRE, RW_WRITE_RELEASE,
           SEM_ACQUIRE, SEM_RELEASE)

VARIANTS = {
    # name: (scenario, label, what a refused client does: wait in the server, pubsub, poll)
    "dlock-rw": ("rw", "DLOCK.ACQUIRE … WAIT [SHARED]", "wait"),
    "lua-rw-pubsub": ("rw", "Redisson-style rwlock Lua, pub/sub wake-up", "pubsub"),
    "dlock-limit": ("sem", "DLOCK.ACQUIRE … WAIT LIMIT n", "wait"),
    "lua-sem-pubsub": ("sem", "Redisson-style permit semaphore Lua, pub/sub wake-up", "pubsub"),
    "lua-sem-poll": ("sem", "the same Lua, retry 1 ms", "poll"),
}

# ------------------------------------------------------------------ client processes

ACQ, ENTER, LEAVE, REL, PAUSE, DONE = range(6)
STATES = ("acquire", "incrby", "decrby", "release", "refused", "done")


class Client:
    __slots__ = ("cid", "writer", "owner", "sock", "buf", "sub", "sbuf", "state", "acq", "rel",
                 "enter", "leave", "n", "permit", "t_first", "t_grant", "t_rel", "v", "woken",
                 "seq")


def worker(cfg, cids, ready_q, go, start_ns):
    """Runs clients `cids` of one cell (a process of run_workers); returns their sections
    and counters."""
    scenario, _, how = VARIANTS[cfg["variant"]]
    dlock, limit, shas = how == "wait", cfg["limit"], cfg["shas"]
    sel = selectors.DefaultSelector()
    clients = []
    for cid in cids:
        c = Client()
        c.cid, c.writer, c.owner = cid, cid in cfg["writers"], "owner-%d" % cid
        c.sock, c.buf, c.sub, c.sbuf = connect(cfg), bytearray(), None, bytearray()
        c.n, c.woken, c.seq, c.state = 0, False, 0, DONE
        w = WRITER_WEIGHT if c.writer else 1
        c.enter, c.leave = encode("INCRBY", INSIDE_KEY, w), encode("DECRBY", INSIDE_KEY, w)
        if dlock:
            key = DLOCK_RW_KEY if scenario == "rw" else DLOCK_SEM_KEY
            kind = () if c.writer else ("SHARED",) if scenario == "rw" else ("LIMIT", limit)
            c.acq = encode("DLOCK.ACQUIRE", key, c.owner, TTL_MS, "WAIT", WAIT_MS, *kind)
            c.rel = encode("DLOCK.RELEASE", key, c.owner)
        elif scenario == "rw" and c.writer:
            c.acq = encode("EVALSHA", shas[2], 1, RW_HASH, TTL_MS, c.owner)
            c.rel = encode("EVALSHA", shas[3], 2, RW_HASH, RW_CHANNEL, 1, c.owner)
        elif scenario == "rw":
            c.acq = encode("EVALSHA", shas[0], 2, RW_HASH, RW_TIMEOUTS, TTL_MS, c.owner)
            c.rel = encode("EVALSHA", shas[1], 3, RW_HASH, RW_CHANNEL, RW_TIMEOUTS, 0,
                           c.owner)
        if how == "pubsub":
            c.sub = connect(cfg)
            c.sub.sendall(encode("SUBSCRIBE", RW_CHANNEL if scenario == "rw" else SEM_CHANNEL))
            got = []
            while not got:
                got = list(replies(c.sub, c.sbuf, "client %d's subscriber" % c.cid))
            if got[0][0] != b"subscribe":
                raise RuntimeError("SUBSCRIBE replied %r" % (got,))
            sel.register(c.sub, selectors.EVENT_READ, (c, True))
        sel.register(c.sock, selectors.EVENT_READ, (c, False))
        clients.append(c)
    start = await_start(len(clients), ready_q, go, start_ns)
    deadline = start + cfg["seconds_ns"]
    hard = deadline + cfg["drain_ns"]
    t0 = os.times()
    sections = []   # (cid, t_first, t_grant, t_rel, t_done, INCRBY reply)
    attempts = timeouts = wakeups = 0
    timers = []     # (wake_ns, seq, client)
    pc = time.perf_counter_ns
    seq = 0

    def send_acquire(c):
        c.state = ACQ
        c.woken = False
        if scenario == "sem" and not dlock:   # expiry and "now" from the client clock
            now_ms = int(time.time() * 1000)
            c.sock.sendall(encode("EVALSHA", shas[4], 2, SEM_ZSET, SEM_CHANNEL, limit,
                                  c.permit, now_ms + TTL_MS, now_ms))
        else:
            c.sock.sendall(c.acq)

    def begin(c, now):
        c.n += 1
        c.t_first = now
        if scenario == "sem" and not dlock:
            c.permit = "%s:%d" % (c.owner, c.n)
            c.rel = encode("EVALSHA", shas[5], 2, SEM_ZSET, SEM_CHANNEL, c.permit)
        send_acquire(c)

    active = len(clients)
    for c in clients:
        begin(c, pc())
    while active:
        now = pc()
        if now > hard:
            busy = sorted({c.cid: STATES[c.state] for c in clients
                           if c.state != DONE}.items())[:5]
            raise RuntimeError("clients still busy %.0f s after the window: %s"
                               % (cfg["drain_ns"] / 1e9, busy))
        while timers and timers[0][0] <= now:
            _, s, c = heapq.heappop(timers)
            if c.state == PAUSE and c.seq == s:
                send_acquire(c)
        timeout = (hard - now) / 1e9
        if timers:
            timeout = min(timeout, max(0.0, (timers[0][0] - now) / 1e9))
        for key, _ in sel.select(min(timeout, 1.0)):
            c, is_sub = key.data
            if is_sub:
                for val in replies(c.sub, c.sbuf, "client %d's subscriber" % c.cid):
                    if not (isinstance(val, list) and val[0] == b"message"):
                        raise RuntimeError("client %d: subscriber got %r" % (c.cid, val))
                    wakeups += 1
                    if c.state == PAUSE:
                        send_acquire(c)
                    else:   # on its way: a refusal that comes back retries at once
                        c.woken = True
                continue
            for val in replies(c.sock, c.buf, "client %d" % c.cid):
                now = pc()
                st = c.state
                if isinstance(val, ReplyError):
                    raise RuntimeError("client %d: error reply to %s: %s"
                                       % (c.cid, STATES[st], val))
                if st == ACQ:
                    attempts += 1
                    if isinstance(val, int) == dlock:   # DLOCK: a token; Lua: not a wait
                        c.t_grant = now
                        c.state = ENTER
                        c.sock.sendall(c.enter)
                    elif dlock:                         # WAIT timed out: ask again
                        timeouts += 1
                        send_acquire(c)
                    elif how == "pubsub" and c.woken:
                        send_acquire(c)
                    else:
                        c.state = PAUSE
                        seq += 1
                        c.seq = seq
                        wait_ns = 1_000_000 if how == "poll" else val * 1_000_000
                        heapq.heappush(timers, (now + wait_ns, seq, c))
                elif st == ENTER:
                    if not isinstance(val, int):
                        raise RuntimeError("INCRBY replied %r" % (val,))
                    c.v = val
                    c.state = LEAVE
                    c.sock.sendall(c.leave)
                elif st == LEAVE:
                    c.state = REL
                    c.t_rel = pc()
                    c.sock.sendall(c.rel)
                elif st == REL:
                    check_release(c.cid, val)
                    sections.append((c.cid, c.t_first, c.t_grant, c.t_rel, now, c.v))
                    if now < deadline:
                        begin(c, now)
                    else:
                        c.state = DONE
                        active -= 1
                else:
                    raise RuntimeError("client %d: unexpected reply %r in state %s"
                                       % (c.cid, val, STATES[st]))
    cpu = cpu_since(t0)
    for c in clients:
        c.sock.close()
        if c.sub:
            c.sub.close()
    return {"sections": sections, "attempts": attempts, "timeouts": timeouts,
            "wakeups": wakeups, "cpu": cpu, "end": pc()}


# ------------------------------------------------------------------ controller

def writer_ids(nclients, share):
    """The first round(n x share) clients (at least one when share > 0): with clients spread
    round-robin over the processes, the writers are too."""
    n = 0 if share <= 0 else min(nclients, max(1, round(nclients * share)))
    return set(range(n))


def jain(xs):
    sq = sum(x * x for x in xs)
    return sum(xs) ** 2 / (len(xs) * sq) if sq else None


def clock_overlaps(sections, writers, limit):
    """Sweeps the intervals [grant received, release sent] (a grant at the instant of a
    release counts as inside it): the entries that found a writer inside, or that a writer
    made beside anyone, or beyond `limit` holders."""
    events = sorted([(s[2], 1, s[0]) for s in sections] + [(s[3], 2, s[0]) for s in sections])
    inside = wr = bad = 0
    for _, kind, cid in events:
        w = cid in writers
        if kind == 2:
            inside -= 1
            wr -= w
            continue
        if wr or (w and inside) or (limit and inside >= limit):
            bad += 1
        inside += 1
        wr += w
    return bad


def leftover_keys(admin):
    """The cell's keys still there, but the `inside` counter."""
    keys, cursor = [], b"0"
    while True:
        cursor, batch = admin.call("SCAN", cursor, "MATCH", "*%s*" % PREFIX, "COUNT", 1000)
        keys += [k.decode() for k in batch if k.decode() != INSIDE_KEY]
        if cursor == b"0":
            return sorted(keys)


def run_cell(args, variant, nclients, shas):
    scenario, label, _ = VARIANTS[variant]
    rw = scenario == "rw"
    admin = Conn(args.host, args.port)
    for k in leftover_keys(admin) + [INSIDE_KEY]:
        admin.call("DEL", k)
    writers = writer_ids(nclients, args.writers) if rw else set()
    limit = None if rw else args.limit
    results, start, nprocs, server_cpu = run_workers(
        args, admin, nclients, worker,
        {"variant": variant, "shas": shas, "writers": writers, "limit": args.limit})
    inside = admin.call("GET", INSIDE_KEY)
    left = leftover_keys(admin)
    for k in left + [INSIDE_KEY]:
        admin.call("DEL", k)
    admin.close()

    deadline = start + args.seconds * 1e9
    sections = sorted((s for r in results for s in r["sections"]), key=lambda s: s[2])
    total = len(sections)
    problems = []
    if rw:
        bad = sum(1 for s in sections if (s[5] != WRITER_WEIGHT if s[0] in writers
                                          else s[5] >= WRITER_WEIGHT))
        if bad:
            problems.append("%d INCRBY replies show a writer beside another holder "
                            "(exclusion violated)" % bad)
    elif any(s[5] > limit for s in sections):
        problems.append("%d INCRBY replies above %d (more holders than the limit)"
                        % (sum(1 for s in sections if s[5] > limit), limit))
    bad = clock_overlaps(sections, writers, limit)
    if bad:
        problems.append("%d grants received while the clients' clocks show %s inside"
                        % (bad, "a conflicting holder" if rw else "%d holders" % limit))
    if inside not in (None, b"0"):
        problems.append("inside is %s after every section ended" % inside.decode())
    if left:
        problems.append("lock state left after every holder released: %s" % ", ".join(left[:3]))

    in_window = [s for s in sections if s[4] <= deadline]
    per_client = [0] * nclients
    for s in in_window:
        per_client[s[0]] += 1
    # hand-off: each grant paired with the latest release sent before it, when the granted
    # client was already waiting then
    rel_t = sorted(s[3] for s in sections)
    handoff = []
    for s in sections:
        i = bisect.bisect_left(rel_t, s[2]) - 1
        if s[2] <= deadline and i >= 0 and rel_t[i] > s[1]:
            handoff.append(s[2] - rel_t[i])
    handoff.sort()
    wait_r = sorted(s[2] - s[1] for s in sections if s[0] not in writers)
    wait_w = sorted(s[2] - s[1] for s in sections if s[0] in writers)
    us = lambda v: None if v is None else v / 1000
    attempts = sum(r["attempts"] for r in results)
    wall = max(max(r["end"] for r in results) - start, 1)
    return {
        "variant": variant, "scenario": scenario, "label": label, "clients": nclients,
        "writers": len(writers), "limit": limit, "procs": nprocs, "seconds": args.seconds,
        "sections": total, "sections_in_window": len(in_window),
        "rate": len(in_window) / args.seconds,
        "reader_rate": sum(1 for s in in_window if s[0] not in writers) / args.seconds,
        "writer_rate": sum(1 for s in in_window if s[0] in writers) / args.seconds,
        "jain": jain(per_client),
        "per_client_min": min(per_client), "per_client_max": max(per_client),
        "handoff_p50_us": us(percentile(handoff, 50)),
        "handoff_p99_us": us(percentile(handoff, 99)), "handoffs": len(handoff),
        "wait_p50_us": us(percentile(wait_r, 50)), "wait_p99_us": us(percentile(wait_r, 99)),
        "writer_wait_p99_us": us(percentile(wait_w, 99)),
        "writer_wait_max_us": us(wait_w[-1] if wait_w else None),
        "together_max": max((s[5] for s in sections if s[5] < WRITER_WEIGHT), default=0),
        "attempts_per_section": attempts / total if total else None,
        "wait_timeouts": sum(r["timeouts"] for r in results),
        "wakeups_per_section": sum(r["wakeups"] for r in results) / total if total else None,
        "server_cpu_s": server_cpu, "server_cpu_pct": 100 * server_cpu / (wall / 1e9),
        "server_cpu_us_per_section": 1e6 * server_cpu / total if total else None,
        "client_cpu_pct": 100 * sum(r["cpu"] for r in results) / (wall / 1e9),
        "wall_s": wall / 1e9, "problems": problems,
    }


MEDIAN_FIELDS = ("rate", "reader_rate", "writer_rate", "jain", "per_client_min",
                 "per_client_max", "handoff_p50_us", "handoff_p99_us", "wait_p50_us",
                 "wait_p99_us", "writer_wait_p99_us", "writer_wait_max_us",
                 "attempts_per_section", "wakeups_per_section", "server_cpu_us_per_section",
                 "server_cpu_pct", "client_cpu_pct")


def aggregate(rounds, variants, clients):
    """One row per (variant, clients): medians over rounds; sums and maxima of the checks."""
    out = []
    for _, _, rs in by_cell(rounds, variants, clients):
        a = summary(rs, ("variant", "scenario", "label", "clients", "writers", "limit",
                         "seconds", "procs"), MEDIAN_FIELDS)
        a["together_max"] = max(c["together_max"] for c in rs)
        out.append(a)
    return out


def goal_lines(cells, scenario, dlock):
    rows = [c for c in cells if c["scenario"] == scenario]
    if not rows:
        return []
    n = max(c["clients"] for c in rows)
    by = {c["variant"]: c for c in rows if c["clients"] == n}
    d = by.get(dlock)
    if d is None:
        return ["- SKIP  %s (not measured)" % dlock]
    lua = [c for v, c in by.items() if v != dlock]
    mark = lambda ok: "PASS" if ok else "MISS"
    out = []
    if lua:
        best = max(lua, key=lambda c: c["rate"])
        out.append("- %s  %s, %d clients: sections/s ≥ the best Lua variant's: measured %s "
                   "vs %s (%s), %.2f×" % (mark(d["rate"] >= best["rate"]), dlock, n,
                                          fmt_int(d["rate"]), fmt_int(best["rate"]),
                                          best["variant"], d["rate"] / max(best["rate"], 1e-9)))
    out.append("- %s  %s, %d clients: Jain's fairness index ≥ 0.9: measured %s"
               % (mark(d["jain"] is not None and d["jain"] >= 0.9), dlock, n,
                  fmt(d["jain"], "%.3f", "n/a")))
    p99 = d["handoff_p99_us"]
    out.append("- %s  %s, %d clients: hand-off p99 ≤ 1 ms: measured %s µs"
               % (mark(p99 is not None and p99 <= 1000), dlock, n, fmt(p99, "%.0f", "n/a")))
    return out


def check_text(c):
    if c["problems"]:
        return "**FAIL**: " + "; ".join(c["problems"])
    return "OK (%s sections)" % fmt_int(c["sections"])


def rate_text(c):
    rng = "" if c["rounds"] < 2 else " (%s–%s)" % (fmt_int(c["rate_min"]), fmt_int(c["rate_max"]))
    return fmt_int(c["rate"]) + rng


def markdown(cells, meta, rounds):
    out = ["## Contended read/write lock and semaphore (one key, N clients)", "", "- %s" % meta]
    if cells:
        out.append("- each client loops acquire → INCRBY inside → DECRBY inside → release; "
                   "%d interleaved round(s) of %g s per cell, medians over rounds; method, "
                   "Lua scripts and column definitions: tests/bench/contended_kinds.py"
                   % (rounds, cells[0]["seconds"]))
    rw = [c for c in cells if c["scenario"] == "rw"]
    sem = [c for c in cells if c["scenario"] == "sem"]
    if rw:
        out += ["", "### Read/write lock (%d of %d clients are writers)"
                % (rw[0]["writers"], rw[0]["clients"]), "",
                "| variant | clients | sections/s (range) | readers / writers sections/s "
                "| Jain | per client min–max | hand-off p50 / p99 µs "
                "| wait p99 µs: readers / writers (longest writer) | readers together "
                "| attempts / section | wake-ups / section | server CPU µs / section (% core) "
                "| client CPU % | check |",
                "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
        for c in rw:
            out.append("| %s | %d | %s | %s / %s | %s | %s–%s | %s / %s | %s / %s (%s) | %d "
                       "| %s | %s | %s (%.0f%%) | %.0f | %s |" % (
                           c["label"], c["clients"], rate_text(c), fmt_int(c["reader_rate"]),
                           fmt_int(c["writer_rate"]), fmt(c["jain"], "%.3f"),
                           fmt_int(c["per_client_min"]), fmt_int(c["per_client_max"]),
                           fmt(c["handoff_p50_us"]), fmt(c["handoff_p99_us"]),
                           fmt(c["wait_p99_us"]), fmt(c["writer_wait_p99_us"]),
                           fmt(c["writer_wait_max_us"]), c["together_max"],
                           fmt(c["attempts_per_section"], "%.2f"),
                           fmt(c["wakeups_per_section"], "%.1f"),
                           fmt(c["server_cpu_us_per_section"], "%.1f"), c["server_cpu_pct"],
                           c["client_cpu_pct"], check_text(c)))
    if sem:
        out += ["", "### Semaphore (%d holders at most)" % sem[0]["limit"], "",
                "| variant | clients | sections/s (range) | Jain | per client min–max "
                "| hand-off p50 / p99 µs | wait p50 / p99 µs | holders together "
                "| attempts / section | wake-ups / section | server CPU µs / section (% core) "
                "| client CPU % | check |",
                "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
        for c in sem:
            out.append("| %s | %d | %s | %s | %s–%s | %s / %s | %s / %s | %d | %s | %s "
                       "| %s (%.0f%%) | %.0f | %s |" % (
                           c["label"], c["clients"], rate_text(c), fmt(c["jain"], "%.3f"),
                           fmt_int(c["per_client_min"]), fmt_int(c["per_client_max"]),
                           fmt(c["handoff_p50_us"]), fmt(c["handoff_p99_us"]),
                           fmt(c["wait_p50_us"]), fmt(c["wait_p99_us"]), c["together_max"],
                           fmt(c["attempts_per_section"], "%.2f"),
                           fmt(c["wakeups_per_section"], "%.1f"),
                           fmt(c["server_cpu_us_per_section"], "%.1f"), c["server_cpu_pct"],
                           c["client_cpu_pct"], check_text(c)))
    out += ["", "Medians over rounds (range: slowest–fastest round); sections/s and Jain "
            "count sections finished inside the window, the checks every section. Hand-off: "
            "release sent → grant received by a client that was waiting when it was sent, "
            "each grant paired with the latest release before it (perf_counter_ns, same "
            "machine). Wait: first acquire sent → grant. Together: most holders at once "
            "(INCRBY replies).", "", "### Goals", ""]
    goals = goal_lines(cells, "rw", "dlock-rw") + goal_lines(cells, "sem", "dlock-limit")
    out += (goals or ["- SKIP  no dlock cell measured"]) + [""]
    return "\n".join(out)


def main():
    args = settings(__doc__, "contended_kinds", "KINDS", VARIANTS, "50")
    try:
        args.writers = float(os.environ.get("KINDS_WRITERS", "0.1"))
        args.limit = int(os.environ.get("KINDS_LIMIT", "4"))
    except ValueError as e:
        sys.exit("contended_kinds: bad environment setting: %s" % e)
    if not 0 <= args.writers <= 1 or args.limit < 1:
        sys.exit("contended_kinds: KINDS_WRITERS must be in 0..1 and KINDS_LIMIT ≥ 1")
    version, shas = server_setup("contended_kinds", args, SCRIPTS)
    t0, load0 = time.monotonic(), loadavg()
    rounds, errors = run_rounds(
        "contended_kinds", args, lambda variant, n: run_cell(args, variant, n, shas),
        lambda c: "%9s sections/s%s, Jain %s, hand-off p99 %s µs, attempts %s, "
                  "server CPU %.0f%%, client CPU %.0f%%" % (
                      fmt_int(c["rate"]), " (writers %s)" % fmt_int(c["writer_rate"])
                      if c["writers"] else "", fmt(c["jain"], "%.3f"),
                      fmt(c["handoff_p99_us"]), fmt(c["attempts_per_section"], "%.2f"),
                      c["server_cpu_pct"], c["client_cpu_pct"]))
    cells = aggregate(rounds, args.variants, args.clients)
    meta = run_meta(version, args, "TTL %d ms, WAIT %d ms, semaphore limit %d, writers %g of "
                    "rwlock clients" % (TTL_MS, WAIT_MS, args.limit, args.writers), t0, load0)
    report("contended_kinds", args, markdown(cells, meta, args.rounds), meta, cells, errors)


if __name__ == "__main__":
    main()
