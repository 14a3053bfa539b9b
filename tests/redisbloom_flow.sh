#!/usr/bin/env bash
# RedisBloom's own Bloom (issue #28) and cuckoo-filter flow tests, unrenamed,
# against warden loaded with `aliases redisbloom`. Not part of `make test`: it needs
# a RedisBloom source tree, which CI cannot fetch.
#
#   bash tests/redisbloom_flow.sh PATH [TAG]
#
# PATH is a RedisBloom checkout (with tests/flow/) or a RedisBloom git repository
# (bare mirror or clone), from which TAG (default v2.8.9) is taken with git archive.
# Runs, with RLTest from PyPI (the version RedisBloom's tests/flow/requirements.txt
# pins) in a venv under target/redisbloom-flow/, the suites FLOW_SUITE names
# (bloom, cuckoo, cms, topk or all; default all):
#   bloom:
#   - tests/flow/test_overall.py whole: classes testRedisBloom and
#     testRedisBloomNoCodec, every test a Bloom (BF.*) test;
#   - tests/flow/test_resp3.py's test_bf_resp3 up to its first CF.* line (the rest
#     of that test is cuckoo, count-min sketch, t-digest and top-k: not warden's).
#   cuckoo:
#   - tests/flow/test_cuckoo.py whole: classes testCuckoo and testCuckooNoCodec;
#   - the CF part of test_resp3.py's test_bf_resp3 (its version check, then the
#     lines from its first CF.* command to its first CMS.* one), as test_cf_resp3
#     in test_resp3_cf.py.
#   cms: tests/flow/test_cms.py whole; topk: test_topk.py and (RedisBloom 8's)
#   test_topk_restore_corrupt_rdb.py.
# Not run: test_tdigest.py and test_defrag.py (one test
# that makes keys of every RedisBloom type).
# Tests in the KNOWN list below (failures by design: a documented difference, a
# RedisBloom-internal detail) still run; when they fail they are reported KNOWN
# with the reason and do not fail the run; when they pass they are reported PASS
# and flagged, so that the list can be pruned.
# The files are run as they are; `paella` (a git submodule of RedisBloom that
# common.py imports) is replaced by tests/redisbloom_flow/paella.py on PYTHONPATH.
# Environment: MODULE (default target/release/libwarden.so), REDIS_SERVER (default
# redis-server on PATH), FLOW_SUITE, WARDEN_ARGS (more module arguments after
# `aliases redisbloom`, e.g. `bf-max-bytes 2gb`, which test_issue178's 1.1 GB
# filter needs), RLTEST_ARGS (more RLTest options).
# Prints each test's result and the counts; exits 1 when a test not in KNOWN fails.
set -euo pipefail

say() { echo "redisbloom_flow.sh: $*" >&2; }
die() { say "$*"; exit 2; }

ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$ROOT/tests/venv.sh"

SRC=${1:-}
TAG=${2:-v2.8.9}
[[ -n $SRC ]] || die "usage: bash tests/redisbloom_flow.sh PATH-TO-REDISBLOOM [TAG]"
MODULE=${MODULE:-$ROOT/target/release/libwarden.so}
FLOW_SUITE=${FLOW_SUITE:-all}
case $FLOW_SUITE in
    bloom) files=(test_overall.py test_resp3_bf.py) ;;
    cuckoo) files=(test_cuckoo.py test_resp3_cf.py) ;;
    cms) files=(test_cms.py) ;;
    topk) files=(test_topk.py test_topk_restore_corrupt_rdb.py) ;;
    all) files=(test_overall.py test_resp3_bf.py test_cuckoo.py test_resp3_cf.py test_cms.py test_topk.py
        test_topk_restore_corrupt_rdb.py) ;;
    *) die "FLOW_SUITE must be bloom, cuckoo, cms, topk or all, not $FLOW_SUITE" ;;
esac
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
# The CF part, as test_cf_resp3: the file up to the test's FLUSHALL (imports, the
# class, the Redis 7 check), then its lines from the first CF.* command to the
# first CMS.* one.
awk '/def test_bf_resp3/ { sub(/test_bf_resp3/, "test_cf_resp3") }
     !cf && /env\.cmd\(.FLUSHALL.\)/ { print; cf = 1; next }
     cf == 1 && /env\.cmd\(.CF\./ { cf = 2 }
     /env\.cmd\(.cms\./ { exit }
     cf != 1 { print }' "$FLOW/test_resp3.py" >"$FLOW/test_resp3_cf.py"
grep -q "def test_cf_resp3" "$FLOW/test_resp3_cf.py" && grep -q "CF.MEXISTS" "$FLOW/test_resp3_cf.py" \
    || die "test_resp3.py has changed shape: no CF part found"

# Known failures, with the reason: (b) a documented design difference
# (src/bloom/README.md, "Differences from RedisBloom", for Bloom;
# src/cuckoo/README.md, "Differences from RedisBloom", for cuckoo), (c) a RedisBloom-internal detail (BF.DEBUG, its binary dump
# header, its exact error texts), (s) the server, not the module (a test that no
# module passes on Redis 7.0). Keys are file:class.test as RLTest collects them:
# test_overall's classes testRedisBloom and testRedisBloomNoCodec, test_cuckoo's
# testCuckoo and testCuckooNoCodec, testResp3 in test_resp3_bf / test_resp3_cf
# (test_bf_resp3, the BF part, passes and is not listed). They run; a failure is
# reported KNOWN and does not fail the run. Checked with RedisBloom v2.8.9's tests
# on Redis 7.0.15; the four tests that skip before Redis 7.4 (test_insufficient_memory
# and test_scandump_invalid_header_alloc, in each suite) on Redis Stack's 7.4.1
# (REDIS_SERVER).
declare -A KNOWN=(
    [test_overall:testRedisBloom.test_invalid_expansion]="(c) error text, in RedisBloom 8's tests only: EXPANSION -1 is refused with RedisBloom 2.8's ERR expansion should be greater or equal to 1, where RedisBloom 8 says expansion must be in the range [0, 32768] (RedisBloom 2.8 fails it too)"
    [test_overall:testRedisBloom.test_issue178]="(b) a 300-million-item reserve at 1e-6 (1.1 GB) is over bf-max-bytes (128 MiB), refused with the size it needs; with WARDEN_ARGS='bf-max-bytes 2gb' it passes (Size 1132420232, as RedisBloom's)"
    [test_cuckoo:testCuckoo.test_number_of_buckets_does_not_overflow]="(b) its header makes a filter of 2^32 one-byte buckets (4 GiB), over cf-max-bytes (128 MiB): CF.LOADCHUNK refuses it (Couldn't create filter! It would take 4294967352 bytes, over cf-max-bytes …); with WARDEN_ARGS='cf-max-bytes 8gb' it passes (RedisBloom 2.8.2 crashes on it)"
    [test_cuckoo:testCuckooNoCodec.test_rdb_load_zero_numfilters]="(s) its RESTORE payload is RDB version 12, which Redis before 7.4 refuses (DUMP payload version or checksum are wrong) before any module reads it; on Redis 7.4 it passes (Bad data format)"
    [test_cuckoo:testCuckooNoCodec.test_scandump_huge]="(b) the 5th copy of foo needs a second sub-filter of 2^25 buckets of 2 (64 MiB), and the filter would take 134217800 bytes, over cf-max-bytes (128 MiB): ERR Insufficient memory: it would take 134217800 bytes, over cf-max-bytes …; with WARDEN_ARGS='cf-max-bytes 512mb' it passes"
)

# Files a tag does not have (test_topk_restore_corrupt_rdb.py is RedisBloom 8's).
present=()
for f in "${files[@]}"; do
    if [[ -f $FLOW/$f ]]; then present+=("$f"); else say "no $f in these tests"; fi
done
files=("${present[@]}")

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
for file in "${files[@]}"; do
    mapfile -t -O "${#tests[@]}" tests < <(rltest --collect-only -t "$file" \
        | sed 's/\x1b\[[0-9;]*m//g' | grep -E '^test_[a-z0-9_]+:[A-Za-z0-9_.]+$')
done
[[ ${#tests[@]} -gt 0 ]] || die "RLTest collected no tests"

# Tests that yield (test_rdb_reload, test_mem_usage): RLTest 0.7.5 calls them and
# drops the generator, so their bodies never run; they are counted apart, not passed.
mapfile -t generators < <(cd "$FLOW" && "$VENV/bin/python" - "${files[@]}" <<'PY'
import ast, sys
for f in sys.argv[1:]:
    for c in ast.parse(open(f).read()).body:
        for m in getattr(c, "body", []):
            if isinstance(m, ast.FunctionDef) and any(
                    isinstance(n, (ast.Yield, ast.YieldFrom)) for n in ast.walk(m)):
                print("%s:%s.%s" % (f[:-3], c.name, m.name))
PY
)

pass=0 fail=0 known=0 skip=0 norun=0 failed=() unlisted=()
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
        [[ -z ${KNOWN[$test]:-} ]] || unlisted+=("$test")
    elif [[ -n ${KNOWN[$test]:-} ]]; then
        result=KNOWN known=$((known + 1))
    else
        result=FAIL fail=$((fail + 1)) failed+=("$test")
    fi
    printf '%-5s %s\n' "$result" "$test"
    if [[ $result == KNOWN ]]; then
        echo "       ${KNOWN[$test]}"
    elif [[ $result == FAIL ]]; then
        # The first failed assertion or the exception, and where the test raised
        # it (a bare assert has no message), for the reader.
        grep -E '\(FAIL\)|Unhandled exception|File ".*/flow/[^/"]+", line' <<<"$plain" \
            | sed -E 's/^[[:space:]]*/       /; s|File ".*/flow/|File "|' \
            | awk '!seen[$0]++' | head -3 || true
    fi
done

echo
for test in "${unlisted[@]}"; do
    echo "passes, but is in KNOWN (take it off the list): $test"
done
echo "RedisBloom $TAG flow tests ($FLOW_SUITE) against warden (aliases redisbloom): $pass passed, $fail failed, $known known failures (KNOWN), $skip skipped, $norun not run by RLTest (generators) (of ${#tests[@]}); logs in $LOGS"
[[ $fail -eq 0 ]]
