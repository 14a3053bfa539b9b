#!/usr/bin/env bash
# Runs the client examples (redis-py and redigo) against a real server with the
# built module loaded, and checks their results.
#
#   python/lock.py  python/crawler.py  python/limiter.py  python/backup.py  python/cache.py  (redis-py, venv in target/)
#   go/lock  go/bloom  go/limiter  go/cache                 (redigo from Debian, offline)
#   (both lock programs also run a lease-lost scenario: the worker must stop)
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

# python3 -m venv, installing Debian's python3-venv first if it is missing (as root).
make_venv() {
    rm -rf "$1"
    python3 -m venv "$1" >/dev/null 2>&1 && return 0
    rm -rf "$1"
    if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
        echo "examples: installing python3-venv"
        { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null; } || return 1
        python3 -m venv "$1"
    else
        return 1
    fi
}

# --- what the examples need -------------------------------------------------------
[ -f "$MODULE" ] || die "$MODULE is missing: run \`make build\` first"
command -v "$SERVER_BIN" >/dev/null 2>&1 || die "$SERVER_BIN not found (apt-get install redis-server)"

if ! "$VENV/bin/python" -c "import redis" >/dev/null 2>&1; then
    command -v python3 >/dev/null 2>&1 || die "python3 is missing (apt-get install python3 python3-venv)"
    say "installing redis-py into $VENV"
    if [ ! -x "$VENV/bin/python" ]; then
        make_venv "$VENV" || die "python3 -m venv failed (apt-get install python3-venv)"
    fi
    "$VENV/bin/pip" install -q --disable-pip-version-check redis || die "pip install redis failed"
    "$VENV/bin/python" -c "import redis" || die "redis-py does not import after install"
fi

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
cleanup() {
    if [ -n "$SERVER_PID" ]; then
        kill "$SERVER_PID" 2>/dev/null
        wait "$SERVER_PID" 2>/dev/null
    fi
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
        --protected-mode no --dir "$TMP" --logfile "$TMP/server.log" \
        --loadmodule "$MODULE" >/dev/null 2>&1 &
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

# --- the examples ----------------------------------------------------------------------
export WARDEN_HOST=127.0.0.1 WARDEN_PORT=$PORT
export PYTHONDONTWRITEBYTECODE=1
export GOCACHE=${GOCACHE:-$ROOT/target/examples-gocache}

ALL="python/lock python/crawler python/limiter python/backup python/cache go/lock go/bloom go/limiter go/cache"
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
        *) die "unknown example $name (want python/NAME or go/NAME)" ;;
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
