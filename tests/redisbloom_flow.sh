#!/usr/bin/env bash
# RedisBloom's own Bloom flow tests, unrenamed, against warden loaded with
# `aliases redisbloom` (issue #28). Not part of `make test`: it needs a RedisBloom
# source tree, which CI cannot fetch.
#
#   bash tests/redisbloom_flow.sh PATH [TAG]
#
# PATH is a RedisBloom checkout (with tests/flow/) or a RedisBloom git repository
# (bare mirror or clone), from which TAG (default v2.8.9) is taken with git archive.
# Runs, with RLTest from PyPI (the version RedisBloom's tests/flow/requirements.txt
# pins) in a venv under target/redisbloom-flow/:
#   - tests/flow/test_overall.py whole: classes testRedisBloom and
#     testRedisBloomNoCodec, every test a Bloom (BF.*) test;
#   - tests/flow/test_resp3.py's test_bf_resp3 up to its first CF.* line (the rest
#     of that test is cuckoo, count-min sketch, t-digest and top-k: not warden's).
# Not run: test_cuckoo.py, test_cms.py, test_topk.py, test_tdigest.py and
# test_defrag.py (one test that makes keys of every RedisBloom type).
# The files are run as they are; `paella` (a git submodule of RedisBloom that
# common.py imports) is replaced by tests/redisbloom_flow/paella.py on PYTHONPATH.
# Environment: MODULE (default target/release/libwarden.so), REDIS_SERVER (default
# redis-server on PATH), WARDEN_ARGS (more module arguments after `aliases
# redisbloom`, e.g. `bf-max-bytes 2gb`, which test_issue178's 1.1 GB filter needs),
# RLTEST_ARGS (more RLTest options).
# Prints each test's result and the counts; exits 1 when a test fails.
set -euo pipefail

say() { echo "redisbloom_flow.sh: $*" >&2; }
die() { say "$*"; exit 2; }

ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$ROOT/tests/venv.sh"

SRC=${1:-}
TAG=${2:-v2.8.9}
[[ -n $SRC ]] || die "usage: bash tests/redisbloom_flow.sh PATH-TO-REDISBLOOM [TAG]"
MODULE=${MODULE:-$ROOT/target/release/libwarden.so}
REDIS_SERVER=${REDIS_SERVER:-$(command -v redis-server || true)}
[[ -f $MODULE ]] || die "no module at $MODULE (cargo build --release first)"
[[ -n $REDIS_SERVER ]] || die "redis-server is not on PATH (set REDIS_SERVER)"

WORK=$ROOT/target/redisbloom-flow
FLOW=$WORK/flow
rm -rf "$FLOW"
mkdir -p "$FLOW"
if [[ -f $SRC/tests/flow/test_overall.py ]]; then
    cp -r "$SRC/tests/flow/." "$FLOW/"
    say "tests from the checkout $SRC"
elif git -C "$SRC" rev-parse --verify -q "$TAG^{commit}" >/dev/null; then
    git -C "$SRC" archive "$TAG" tests/flow | tar -x -C "$FLOW" --strip-components=2
    say "tests from $SRC at $TAG"
else
    die "$SRC is neither a RedisBloom checkout (tests/flow/test_overall.py) nor a git repository with $TAG"
fi

# The BF part of test_bf_resp3: the file cut before the test's first CF.* command.
awk '/env\.cmd\(.CF\./ { exit } { print }' "$FLOW/test_resp3.py" >"$FLOW/test_resp3_bf.py"
grep -q "bf.MEXISTS" "$FLOW/test_resp3_bf.py" || die "test_resp3.py has changed shape: no BF part found"

# RLTest at the version RedisBloom pins; packaging, which common.py imports.
RLTEST_PIN=$(grep -i '^rltest' "$FLOW/requirements.txt" | tr -d ' ' || true)
RLTEST_PIN=${RLTEST_PIN:-RLTest}
VENV=$WORK/venv
if ! "$VENV/bin/python" -c "import RLTest, packaging" >/dev/null 2>&1 \
    || [[ $(cat "$VENV/.pin" 2>/dev/null) != "$RLTEST_PIN" ]]; then
    say "making $VENV ($RLTEST_PIN)"
    make_venv "$VENV" || die "python3 -m venv failed (apt-get install python3-venv)"
    "$VENV/bin/pip" install -q --disable-pip-version-check "$RLTEST_PIN" packaging \
        || die "pip install $RLTEST_PIN failed"
    echo "$RLTEST_PIN" >"$VENV/.pin"
fi

# Each test in its own RLTest run (its own server): RLTest 0.7.5 counts a class's
# failed assertions on the env the class shares and reports them under a later test.
LOGS=$WORK/logs
rm -rf "$LOGS"
mkdir -p "$LOGS"
rltest() {
    (cd "$FLOW" && PYTHONPATH="$ROOT/tests/redisbloom_flow" "$VENV/bin/RLTest" \
        --oss-redis-path "$REDIS_SERVER" \
        --module "$MODULE" --module-args "aliases redisbloom${WARDEN_ARGS:+ $WARDEN_ARGS}" \
        --enable-debug-command --randomize-ports --log-dir "$LOGS" "$@" ${RLTEST_ARGS:-})
}
tests=()
for file in test_overall.py test_resp3_bf.py; do
    mapfile -t -O "${#tests[@]}" tests < <(rltest --collect-only -t "$file" \
        | sed 's/\x1b\[[0-9;]*m//g' | grep -E '^test_[a-z0-9_]+:[A-Za-z0-9_.]+$')
done
[[ ${#tests[@]} -gt 0 ]] || die "RLTest collected no tests"

# Tests that yield (test_rdb_reload, test_mem_usage): RLTest 0.7.5 calls them and
# drops the generator, so their bodies never run; they are counted apart, not passed.
mapfile -t generators < <(cd "$FLOW" && "$VENV/bin/python" - test_overall.py test_resp3_bf.py <<'PY'
import ast, sys
for f in sys.argv[1:]:
    for c in ast.parse(open(f).read()).body:
        for m in getattr(c, "body", []):
            if isinstance(m, ast.FunctionDef) and any(
                    isinstance(n, (ast.Yield, ast.YieldFrom)) for n in ast.walk(m)):
                print("%s:%s.%s" % (f[:-3], c.name, m.name))
PY
)

pass=0 fail=0 skip=0 norun=0 failed=()
for test in "${tests[@]}"; do
    log=$LOGS/${test//[:.]/_}.out
    rltest -t "${test/:/.py:}" >"$log" 2>&1 || true
    plain=$(sed 's/\x1b\[[0-9;]*m//g' "$log")
    if printf '%s\n' "${generators[@]}" | grep -qxF "$test"; then
        result=NORUN norun=$((norun + 1))
    elif grep -q '\[SKIP\]' <<<"$plain"; then
        result=SKIP skip=$((skip + 1))
    elif grep -q 'Total Tests Failed: 0,' <<<"$plain" && grep -q '\[PASS\]' <<<"$plain"; then
        result=PASS pass=$((pass + 1))
    else
        result=FAIL fail=$((fail + 1)) failed+=("$test")
    fi
    printf '%-5s %s\n' "$result" "$test"
    if [[ $result == FAIL ]]; then
        # The first failed assertion or the exception, for the reader.
        grep -E '\(FAIL\)|Unhandled exception' <<<"$plain" | sed 's/^[[:space:]]*/       /' \
            | awk '!seen[$0]++' | head -3
    fi
done

echo
echo "RedisBloom $TAG Bloom flow tests against warden (aliases redisbloom): $pass passed, $fail failed, $skip skipped, $norun not run by RLTest (generators) (of ${#tests[@]}); logs in $LOGS"
[[ $fail -eq 0 ]]
