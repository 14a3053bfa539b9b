#!/usr/bin/env bash
# Runs the client examples (redis-py and redigo) against a real server with the
# built module loaded, and checks their results.
#
#   python/lock.py  python/crawler.py  python/limiter.py  python/backup.py  python/cache.py
#   python/guarded_counter.py  python/shared.py  python/wait_defaults.py  python/aliases.py
#   python/redisbloom_flow.py  python/keep_lock.py  python/keep_semaphore.py
#   python/unsubscribe.py  python/refused.py
#                                                             (redis-py, venv in target/)
#   go/lock  go/bloom  go/limiter  go/cache  go/guarded_counter  go/keep  go/revoked  go/refused
#                                                             (redigo from Debian, offline)
#   cluster/guarded_counter  (guarded_counter.py through redis-py's RedisCluster)
#   cluster/guard_cli        (redis-cli -c)   -- both on a three-master cluster started here
#   (both lock programs also run a lease-lost scenario: the worker must stop)
#
# The server loads warden with `aliases redisbloom,redis-cell` (python/aliases drives
# redis-py's RedisBloom helpers and a CL.THROTTLE client through them, and
# python/redisbloom_flow runs RedisBloom's own Bloom flow scenarios); the other
# examples use warden's own names, which answer the same with or without it.
#
# Installs what is missing: redis-py into target/examples-venv with pip; Debian's
# golang-go and golang-github-gomodule-redigo-dev with apt-get when run as root
# (otherwise it prints the apt-get line and exits 1).
#
# Environment:
#   REDIS_SERVER    server binary (default redis-server; valkey-server works too)
#   WARDEN_MODULE   module to load (default target/release/libwarden.so)
#   EXAMPLES_VENV   venv for redis-py (default target/examples-venv)
#   EXAMPLE_TIMEOUT seconds per example (default 120)
#   arguments       names of examples to run (e.g. `python/lock go/bloom`); default all
#
# Last line: `examples: N passed, M failed`; exits non-zero if any failed.
set -uo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD

VENV=${EXAMPLES_VENV:-$ROOT/target/examples-venv}
SERVER_BIN=${REDIS_SERVER:-redis-server}
MODULE=${WARDEN_MODULE:-$ROOT/target/release/libwarden.so}
TIMEOUT=${EXAMPLE_TIMEOUT:-120}
GOPATH_DEB=/usr/share/gocode
REDIGO=$GOPATH_DEB/src/github.com/gomodule/redigo/redis

say() { echo "examples: $*"; }
die() { echo "examples: $*" >&2; exit 1; }

. "$ROOT/tests/venv.sh"

# --- what the examples need -------------------------------------------------------
[ -f "$MODULE" ] || die "$MODULE is missing: run \`make build\` first"
command -v "$SERVER_BIN" >/dev/null 2>&1 || die "$SERVER_BIN not found (apt-get install redis-server)"

ensure_redis_py "$VENV"

missing=""
command -v go >/dev/null 2>&1 || missing="$missing golang-go"
[ -d "$REDIGO" ] || missing="$missing golang-github-gomodule-redigo-dev"
if [ -n "$missing" ]; then
    if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
        say "installing:$missing"
        { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing >/dev/null; } \
            || die "apt-get install$missing failed"
    else
        echo "examples: missing:$missing"
        echo "examples: install them first, e.g.: sudo apt-get install$missing"
        exit 1
    fi
fi
command -v go >/dev/null 2>&1 || die "go is still missing after install"

# --- a server on a free loopback port ------------------------------------------------
TMP=$(mktemp -d "${TMPDIR:-/tmp}/warden-examples.XXXXXX")
SERVER_PID=""
CLUSTER_PIDS=""
cleanup() {
    for pid in $SERVER_PID $CLUSTER_PIDS; do
        kill "$pid" 2>/dev/null
        wait "$pid" 2>/dev/null
    done
    rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

free_port() {
    "$VENV/bin/python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

ping() {
    "$VENV/bin/python" - "$1" <<'EOF' >/dev/null 2>&1
import sys, redis
redis.Redis(host="127.0.0.1", port=int(sys.argv[1]), socket_timeout=1).ping()
EOF
}

PORT=""
for attempt in 1 2 3 4 5; do
    port=$(free_port)
    "$SERVER_BIN" --port "$port" --bind 127.0.0.1 --save "" --appendonly no \
        --protected-mode no --dir "$TMP" --logfile "$TMP/server.log" --enable-debug-command local \
        --loadmodule "$MODULE" aliases redisbloom,redis-cell >/dev/null 2>&1 &
    SERVER_PID=$!
    for _ in $(seq 100); do
        if ! kill -0 "$SERVER_PID" 2>/dev/null; then break; fi
        if ping "$port"; then PORT=$port; break; fi
        sleep 0.05
    done
    [ -n "$PORT" ] && break
    kill "$SERVER_PID" 2>/dev/null
    wait "$SERVER_PID" 2>/dev/null
    SERVER_PID=""
    grep -q "Address already in use" "$TMP/server.log" 2>/dev/null || break
done
if [ -z "$PORT" ]; then
    echo "examples: the server did not start; log tail:" >&2
    tail -n 20 "$TMP/server.log" >&2 2>/dev/null
    exit 1
fi
say "$("$SERVER_BIN" --version | head -n1) on 127.0.0.1:$PORT with $MODULE"

# --- a three-master cluster, started for the cluster/* examples -------------------------
CLI_BIN=${REDIS_CLI:-redis-cli}

# A free port p whose cluster bus port p + 10000 is free too (so p <= 55535).
free_cluster_port() {
    "$VENV/bin/python" - <<'EOF'
import random, socket
for _ in range(200):
    p = random.randint(20000, 45000)
    try:
        for q in (p, p + 10000):
            s = socket.socket()
            s.bind(("127.0.0.1", q))
            s.close()
    except OSError:
        continue
    print(p)
    break
EOF
}
CLUSTER_PORTS=""
start_cluster() {
    [ -n "$CLUSTER_PORTS" ] && return 0
    command -v "$CLI_BIN" >/dev/null 2>&1 || { echo "examples: $CLI_BIN not found" >&2; return 1; }
    local p d addrs=""
    for _ in 1 2 3; do
        p=$(free_cluster_port)
        d=$TMP/cluster-$p
        mkdir -p "$d"
        "$SERVER_BIN" --port "$p" --bind 127.0.0.1 --save "" --appendonly no \
            --protected-mode no --cluster-enabled yes --cluster-config-file "$d/nodes.conf" \
            --dir "$d" --logfile "$d/server.log" --loadmodule "$MODULE" >/dev/null 2>&1 &
        CLUSTER_PIDS="$CLUSTER_PIDS $!"
        for _ in $(seq 100); do ping "$p" && break; sleep 0.05; done
        ping "$p" || {
            echo "examples: cluster node $p did not start; log tail:" >&2
            tail -n 20 "$d/server.log" >&2 2>/dev/null
            return 1
        }
        CLUSTER_PORTS="$CLUSTER_PORTS $p"
        addrs="$addrs 127.0.0.1:$p"
    done
    # shellcheck disable=SC2086
    "$CLI_BIN" --cluster create $addrs --cluster-yes >"$TMP/cluster-create.log" 2>&1 \
        || { cat "$TMP/cluster-create.log" >&2; return 1; }
    for p in $CLUSTER_PORTS; do
        for _ in $(seq 200); do
            "$CLI_BIN" -p "$p" CLUSTER INFO 2>/dev/null | grep -q "cluster_state:ok" && break
            sleep 0.05
        done
    done
    say "cluster of three masters on ports$CLUSTER_PORTS"
}

# cluster/guard_cli: redis-cli -c routes DLOCK.GUARD by its declared keys; a key in
# another slot is refused with CROSSSLOT.
guard_cli() {
    local first last token out
    first=$(echo $CLUSTER_PORTS | cut -d' ' -f1)
    last=$(echo $CLUSTER_PORTS | cut -d' ' -f3)
    token=$("$CLI_BIN" -c -p "$first" DLOCK.ACQUIRE '{cli}lock' cli 10000)
    [ "$token" -gt 0 ] 2>/dev/null || { echo "FAIL: guard_cli: ACQUIRE gave '$token'" >&2; return 1; }
    out=$("$CLI_BIN" -c -p "$last" DLOCK.GUARD '{cli}lock' cli "$token" INCR '{cli}count')
    [ "$out" = "1" ] || { echo "FAIL: guard_cli: GUARD INCR gave '$out'" >&2; return 1; }
    out=$("$CLI_BIN" -c -p "$first" DLOCK.GUARD '{cli}lock' cli 1 INCR '{cli}count')
    case "$out" in FENCED*) ;; *) echo "FAIL: guard_cli: a stale token gave '$out'" >&2; return 1 ;; esac
    out=$("$CLI_BIN" -c -p "$first" DLOCK.GUARD '{cli}lock' cli "$token" INCR elsewhere)
    case "$out" in CROSSSLOT*) ;; *) echo "FAIL: guard_cli: another slot gave '$out'" >&2; return 1 ;; esac
    echo "ok: guard_cli: redis-cli -c runs DLOCK.GUARD on the key's node; FENCED and CROSSSLOT as expected"
}

# --- the examples ----------------------------------------------------------------------
export WARDEN_HOST=127.0.0.1 WARDEN_PORT=$PORT
export PYTHONDONTWRITEBYTECODE=1
export GOCACHE=${GOCACHE:-$ROOT/target/examples-gocache}

ALL="python/lock python/crawler python/limiter python/backup python/cache python/guarded_counter python/shared python/wait_defaults python/aliases python/redisbloom_flow python/keep_lock python/keep_semaphore python/unsubscribe python/refused go/lock go/bloom go/limiter go/cache go/guarded_counter go/keep go/revoked go/refused cluster/guarded_counter cluster/guard_cli"
SELECTED=${*:-$ALL}

passed=0
failed=0
failed_names=""
for name in $SELECTED; do
    case "$name" in
        python/*)
            script=tests/examples/$name.py
            [ -f "$script" ] || die "no example $name ($script)"
            run=(timeout "$TIMEOUT" "$VENV/bin/python" "$script")
            dir=$ROOT
            ;;
        go/*)
            dir=$ROOT/tests/examples/$name
            [ -f "$dir/main.go" ] || die "no example $name ($dir/main.go)"
            # `go run main.go`, split in two so the timeout reaches the program itself.
            bin=$TMP/$(echo "$name" | tr / -)
            run=(sh -c 'GO111MODULE=off GOPATH="$1" go build -o "$2" main.go && exec timeout "$3" "$2"' \
                sh "$GOPATH_DEB" "$bin" "$TIMEOUT")
            ;;
        cluster/guarded_counter)
            start_cluster || die "the cluster did not start"
            run=(env WARDEN_CLUSTER_PORT="$(echo $CLUSTER_PORTS | cut -d' ' -f2)" \
                timeout "$TIMEOUT" "$VENV/bin/python" tests/examples/python/guarded_counter.py)
            dir=$ROOT
            ;;
        cluster/guard_cli)
            start_cluster || die "the cluster did not start"
            run=(guard_cli)
            dir=$ROOT
            ;;
        *) die "unknown example $name (want python/NAME, go/NAME or cluster/NAME)" ;;
    esac
    echo "=== $name"
    start=$(date +%s.%N)
    (cd "$dir" && "${run[@]}")
    rc=$?
    secs=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
    if [ "$rc" -eq 0 ]; then
        passed=$((passed + 1))
        echo "--- PASS $name (${secs}s)"
    else
        failed=$((failed + 1))
        failed_names="$failed_names $name"
        echo "--- FAIL $name (exit $rc, ${secs}s)"
    fi
    if ! kill -0 "$SERVER_PID" 2>/dev/null; then
        echo "examples: the server died during $name; log tail:" >&2
        tail -n 30 "$TMP/server.log" >&2 2>/dev/null
        SERVER_PID=""
        break
    fi
done

total=$(echo "$SELECTED" | wc -w)
skipped=$((total - passed - failed))
if [ "$skipped" -gt 0 ]; then
    failed=$((failed + skipped))
    echo "examples: $skipped not run after the server died"
fi
[ -n "$failed_names" ] && echo "examples: failed:$failed_names"
echo "examples: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
