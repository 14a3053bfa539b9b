#!/usr/bin/env bash
# The partition suite: real failovers (network partitions made with network
# namespaces, kill -9) against nodes running the module, with redis-py clients
# contending for one lock and writing to a fencing resource. See README.md here.
#
#   sentinel-default  3 nodes + 3 Sentinels, default replication settings; must
#                     show a split brain (two masters granting) and fence it
#   sentinel-safe     the same with warden.dlock-min-replicas (or plain
#                     min-replicas-to-write) and WAIT after every guarded write
#   cluster-default   Redis Cluster, 3 masters + 3 replicas, automatic failover,
#                     default replication settings; must show a split brain too
#   cluster-safe      the cluster with the settings of sentinel-safe
#   keep-host-loss    one server; holders of KEEP locks whose hosts vanish (the
#                     lock must reach a waiter within ttl + 2 s) or freeze (it
#                     must not)
#
# Environment:
#   WARDEN_MODULE          module to load (default target/release/libwarden.so; copied)
#   REDIS_SERVER           server binary (default redis-server)
#   PARTITION_RUNS         runs to do (default: all five above)
#   PARTITION_REPORT_ONLY  1: print the tables, assert nothing
#   PARTITION_SAFE_CONFIG  0: the safe run uses plain min-replicas-to-write even
#                          where the module has warden.dlock-min-replicas
#   PARTITION_SAFE_WAIT    "k timeout_ms" of the WAIT after each guarded write in
#                          the safe run (default "1 500")
#   PARTITION_SAFE_LAG     max lag in seconds for the safe run (default 2)
#   PARTITION_EVENTS       nemesis events (default "split kill isolate")
#   PARTITION_HOST_LOSS_WAIT  seconds keep-host-loss waits for a grant after a cut
#                          (default: the bound + 1 s)
#   PARTITION_RUN_TIMEOUT  seconds one run may take (default 150)
#   PARTITION_DIR          where run directories and logs go (default target/partition)
#
# Needs root and `ip netns`. Last line: `partition: N passed, M failed`.
set -uo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD

VENV=${EXAMPLES_VENV:-$ROOT/target/examples-venv}
SERVER_BIN=${REDIS_SERVER:-redis-server}
MODULE=${WARDEN_MODULE:-$ROOT/target/release/libwarden.so}
RUNS=${PARTITION_RUNS:-sentinel-default sentinel-safe cluster-default cluster-safe keep-host-loss}
OUT=${PARTITION_DIR:-$ROOT/target/partition}
RUN_TIMEOUT=${PARTITION_RUN_TIMEOUT:-150}

say() { echo "partition: $*"; }
die() { echo "partition: $*" >&2; echo "partition: 0 passed, $(echo "$RUNS" | wc -w) failed"; exit 1; }

# --- what the suite needs -------------------------------------------------------------
[ "$(id -u)" = "0" ] || die "must run as root (it makes network namespaces)"
command -v ip >/dev/null 2>&1 || die "the ip command (iproute2) is missing"
ip netns list >/dev/null 2>&1 || die "\`ip netns\` is not available here"
[ -f "$MODULE" ] || die "$MODULE is missing: run \`make build\` first"
command -v "$SERVER_BIN" >/dev/null 2>&1 || die "$SERVER_BIN not found (apt-get install redis-server)"
command -v redis-cli >/dev/null 2>&1 || die "redis-cli not found (apt-get install redis-tools)"
for run in $RUNS; do
    case "$run" in sentinel-default|sentinel-safe|cluster-default|cluster-safe|keep-host-loss) ;; *) die "unknown run $run" ;; esac
done

. "$ROOT/tests/venv.sh"
ensure_redis_py "$VENV"

# --- namespaces, processes, cleanup ------------------------------------------------------
# Names carry this shell's pid so that parallel suites do not collide.
PFX="wdp$$"
NC="${PFX}c"
NSES=""
RUN_DIR=""
HARNESS_PID=""

# Kill every process the harness recorded (by pid, only if it is still a redis-server
# or a keep-host-loss holder).
kill_recorded() {
    local pid
    [ -n "$RUN_DIR" ] && [ -f "$RUN_DIR/pids" ] || return 0
    while read -r pid; do
        [ -n "$pid" ] || continue
        if [ -r "/proc/$pid/cmdline" ] && tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qE 'redis-server|keep_host_loss\.py holder'; then
            kill -9 "$pid" 2>/dev/null
        fi
    done <"$RUN_DIR/pids"
}

del_net() {
    local ns
    for ns in $NSES; do
        ip netns del "$ns" 2>/dev/null
    done
    NSES=""
}

cleanup() {
    if [ -n "$HARNESS_PID" ] && kill -0 "$HARNESS_PID" 2>/dev/null; then
        kill -TERM "$HARNESS_PID" 2>/dev/null
        for _ in $(seq 30); do kill -0 "$HARNESS_PID" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$HARNESS_PID" 2>/dev/null
        wait "$HARNESS_PID" 2>/dev/null
    fi
    HARNESS_PID=""
    kill_recorded
    sleep 0.1
    del_net
}
trap cleanup EXIT
trap 'echo "partition: interrupted" >&2; exit 130' INT TERM

# make_net N: a client namespace with a bridge (10.77.0.254/24) and N node namespaces,
# node i at 10.77.0.(10+i) on veth eth0, its peer vb<i> a port of the bridge.
make_net() {
    local n=$1 i ns
    ip netns add "$NC" || return 1
    NSES="$NC"
    ip -n "$NC" link set lo up || return 1
    ip -n "$NC" link add br0 type bridge || return 1
    ip -n "$NC" addr add 10.77.0.254/24 dev br0 || return 1
    ip -n "$NC" link set br0 up || return 1
    for i in $(seq "$n"); do
        ns="${PFX}n$i"
        ip netns add "$ns" || return 1
        NSES="$NSES $ns"
        ip -n "$ns" link set lo up || return 1
        ip -n "$NC" link add "vb$i" type veth peer name eth0 netns "$ns" || return 1
        ip -n "$NC" link set "vb$i" master br0 || return 1
        ip -n "$NC" link set "vb$i" up || return 1
        ip -n "$ns" addr add "10.77.0.$((10 + i))/24" dev eth0 || return 1
        ip -n "$ns" link set eth0 up || return 1
    done
}

# --- the runs ------------------------------------------------------------------------------
mkdir -p "$OUT" || die "cannot create $OUT"
SUITE_START=$(date +%s.%N)
say "$("$SERVER_BIN" --version | head -n1); module $MODULE; redis-py $("$VENV/bin/python" -c 'import redis; print(redis.__version__)')"
passed=0
failed=0
failed_names=""
for run in $RUNS; do
    RUN_DIR=$OUT/$run
    rm -rf "$RUN_DIR"
    mkdir -p "$RUN_DIR"
    cp "$MODULE" "$RUN_DIR/libwarden.so" || die "cannot copy $MODULE"
    script=harness.py
    case "$run" in
        cluster-*) nodes=6 ;;
        keep-host-loss) nodes=6; script=keep_host_loss.py ;;  # the server and 5 holder hosts
        *) nodes=3 ;;
    esac
    echo "=== $run"
    start=$(date +%s.%N)
    if ! make_net "$nodes"; then
        echo "partition: could not set up the network namespaces for $run" >&2
        rc=2
    else
        ip netns exec "$NC" timeout -k 5 "$RUN_TIMEOUT" "$VENV/bin/python" -u "$ROOT/tests/partition/$script" \
            --run "$run" --dir "$RUN_DIR" --module "$RUN_DIR/libwarden.so" --server "$SERVER_BIN" \
            --ns-prefix "$PFX" --nodes "$nodes" &
        HARNESS_PID=$!
        wait "$HARNESS_PID"
        rc=$?
        HARNESS_PID=""
    fi
    kill_recorded
    del_net
    secs=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
    if [ "$rc" -eq 0 ]; then
        passed=$((passed + 1))
        echo "--- PASS $run (${secs}s)"
    else
        failed=$((failed + 1))
        failed_names="$failed_names $run"
        [ "$rc" -eq 124 ] && echo "partition: $run timed out after ${RUN_TIMEOUT}s" >&2
        echo "--- FAIL $run (exit $rc, ${secs}s; logs in $RUN_DIR)"
    fi
done
RUN_DIR=""
total=$(awk -v a="$SUITE_START" -v b="$(date +%s.%N)" 'BEGIN { printf "%.0f", b - a }')
[ -n "$failed_names" ] && say "failed:$failed_names"
say "total ${total}s"
echo "partition: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
