#!/usr/bin/env bash
# warden benchmark, instructions inside the module: for one or more builds of
# libwarden.so side by side, what one call costs in the module's own functions
# and the RM_* calls they make (callgrind, exclusive counts summed). Unlike
# `instructions.sh`, which counts the whole call, this leaves out the event
# loop, networking and Redis's own command dispatch, so two builds compare to
# the instruction: use it to check that a change makes no command slower.
#
#   bash tests/bench/module_instructions.sh OLD.so NEW.so [...]
#
# Each row starts a fresh redis-server under callgrind per build, prepares
# its keys, then sends CALLS calls from one redis-benchmark client (fresh keys
# for creating rows, 1,000 held keys for the others). Needs valgrind.
set -euo pipefail

[[ $# -ge 1 ]] || { echo "usage: $0 LIBWARDEN.so [LIBWARDEN.so ...]" >&2; exit 2; }
for tool in valgrind callgrind_control callgrind_annotate redis-server redis-benchmark redis-cli python3; do
    command -v "$tool" >/dev/null || { echo "module_instructions: '$tool' not found" >&2; exit 1; }
done
CALLS=${BENCH_CALLS:-2000}

source "$(dirname "${BASH_SOURCE[0]}")/ports.sh"

# per_call SO KEYSPACE SETUP WORDS...: module + RM_* instructions per call.
# SETUP runs with $PORT set; a word `$TOKEN` is replaced by what SETUP
# printed (DLOCK.GUARD's fencing token).
per_call() {
    local so=$1 keyspace=$2 setup=$3 dir port vpid token out
    shift 3
    dir=$(mktemp -d "${TMPDIR:-/tmp}/warden-modinstr.XXXXXX")
    port=$(free_port)
    valgrind --tool=callgrind --dump-instr=no --collect-jumps=no \
        --callgrind-out-file="$dir/cg.out" \
        redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no \
        --dir "$dir" --loadmodule "$so" >"$dir/server.log" 2>&1 &
    vpid=$!
    await_server "$port" 60 || { echo "module_instructions: redis-server under valgrind did not start: $(tail -3 "$dir/server.log")" >&2; exit 1; }
    token=$(PORT=$port bash -c "$setup")
    local words=()
    for w in "$@"; do words+=("${w//\$TOKEN/$token}"); done
    callgrind_control -z "$vpid" >/dev/null
    redis-benchmark -p "$port" -c 1 -n "$CALLS" -r "$keyspace" "${words[@]}" >/dev/null
    callgrind_control -d "$vpid" >/dev/null
    sleep 0.5
    out=$(ls -t "$dir"/cg.out.* | head -1)
    callgrind_annotate --threshold=100 "$out" 2>/dev/null |
        grep -E 'warden::|RM_' |
        awk -v n="$CALLS" '{gsub(",", "", $1); t += $1} END {printf "%.0f", t / n}'
    redis-cli -p "$port" SHUTDOWN NOSAVE >/dev/null 2>&1 || true
    wait "$vpid" 2>/dev/null || true
    rm -rf "$dir"
}

HOLD_LOCKS='for i in $(seq 0 999); do printf "DLOCK.ACQUIRE lock:%012d owner 600000\n" $i; done | redis-cli -p $PORT >/dev/null'
HOLD_ENTRIES='for i in $(seq 0 999); do printf "CACHE.SET lock:%012d value-0123456789abcdef012345678 600000\n" $i; done | redis-cli -p $PORT >/dev/null'
FILTER='redis-cli -p $PORT BF.RESERVEX bf 0.01 1000000 >/dev/null'
GUARD_LOCK='redis-cli -p $PORT DLOCK.ACQUIRE g owner 600000'
HOLD_SHARED='for i in $(seq 0 999); do printf "DLOCK.ACQUIRE lock:%012d owner 600000 SHARED\n" $i; done | redis-cli -p $PORT >/dev/null'
HOLD_LIMIT='for i in $(seq 0 999); do printf "DLOCK.ACQUIRE lock:%012d owner 600000 LIMIT 3\n" $i; done | redis-cli -p $PORT >/dev/null'
FRESH=100000000

printf '| call |'
for so in "$@"; do printf ' %s |' "$so"; done
printf '\n|---|'
for _ in "$@"; do printf -- '---:|'; done
echo
row() {
    local name=$1 keyspace=$2 setup=$3
    shift 3
    printf '| %s |' "$name"
    for so in "${BUILDS[@]}"; do printf ' %s |' "$(per_call "$so" "$keyspace" "$setup" "$@")"; done
    echo
}
BUILDS=()
for so in "$@"; do
    [[ -f $so ]] || { echo "module_instructions: $so not found" >&2; exit 1; }
    # Absolute: the server runs in its own directory.
    BUILDS+=("$(realpath "$so")")
done
row "DLOCK.ACQUIRE" $FRESH "" DLOCK.ACQUIRE lock:__rand_int__ owner 30000
row "DLOCK.ACQUIRE WAIT REENTRANT" $FRESH "" DLOCK.ACQUIRE lock:__rand_int__ owner 30000 WAIT 10 REENTRANT
row "DLOCK.ACQUIRE, held" 1000 "$HOLD_LOCKS" DLOCK.ACQUIRE lock:__rand_int__ other 30000
row "DLOCK.ACQUIRE WAIT 1, held (blocks, times out)" 1000 "$HOLD_LOCKS" DLOCK.ACQUIRE lock:__rand_int__ other 30000 WAIT 1
row "DLOCK.EXTEND" 1000 "$HOLD_LOCKS" DLOCK.EXTEND lock:__rand_int__ owner 600000
row "DLOCK.RELEASE, not the holder" 1000 "$HOLD_LOCKS" DLOCK.RELEASE lock:__rand_int__ other
row "DLOCK.INFO" 1000 "$HOLD_LOCKS" DLOCK.INFO lock:__rand_int__
row "DLOCK.ACQUIRE SHARED" $FRESH "" DLOCK.ACQUIRE lock:__rand_int__ owner 30000 SHARED
row "DLOCK.ACQUIRE LIMIT 3" $FRESH "" DLOCK.ACQUIRE lock:__rand_int__ owner 30000 LIMIT 3
row "DLOCK.ACQUIRE SHARED, held (joins, then renews)" 1000 "$HOLD_SHARED" DLOCK.ACQUIRE lock:__rand_int__ other 30000 SHARED
row "DLOCK.ACQUIRE LIMIT 3, held (joins, then renews)" 1000 "$HOLD_LIMIT" DLOCK.ACQUIRE lock:__rand_int__ other 30000 LIMIT 3
row "DLOCK.EXTEND, SHARED" 1000 "$HOLD_SHARED" DLOCK.EXTEND lock:__rand_int__ owner 600000
row "DLOCK.RELEASE, SHARED, not the holder" 1000 "$HOLD_SHARED" DLOCK.RELEASE lock:__rand_int__ other
row "DLOCK.INFO, SHARED" 1000 "$HOLD_SHARED" DLOCK.INFO lock:__rand_int__
row "DLOCK.GUARD INCR" 1 "$GUARD_LOCK" DLOCK.GUARD g owner '$TOKEN' INCR counter
row "BF.ADDX" $FRESH "$FILTER" BF.ADDX bf item:__rand_int__
row "BF.EXISTSX" $FRESH "$FILTER" BF.EXISTSX bf item:__rand_int__
row "BF.MADDX, 3 items" $FRESH "$FILTER" BF.MADDX bf a:__rand_int__ b:__rand_int__ c:__rand_int__
row "BF.INSERTX" $FRESH "" BF.INSERTX bf:__rand_int__ CAPACITY 100 ERROR 0.01 ITEMS a b
row "CACHE.GET" 1000 "$HOLD_ENTRIES" CACHE.GET lock:__rand_int__
row "CACHE.GET HOT" 1000 "$HOLD_ENTRIES" CACHE.GET lock:__rand_int__ HOT 1000000000 1000 EXTEND 1000
row "CACHE.SET" $FRESH "" CACHE.SET ch:__rand_int__ value-0123456789abcdef012345678 60000
row "RL.TOKEN" $FRESH "" RL.TOKEN rl:__rand_int__ 100 10
row "RL.TOKEN, two limits, COST" $FRESH "" RL.TOKEN rl:__rand_int__ 100 10 10/m 100 COST 2
row "RL.LEAKY" $FRESH "" RL.LEAKY rl:__rand_int__ 100 10
row "RL.WINDOW" $FRESH "" RL.WINDOW rl:__rand_int__ 100 1000
row "RL.GCRA" $FRESH "" RL.GCRA rl:__rand_int__ 10 100 1
