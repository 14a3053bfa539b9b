#!/usr/bin/env python3
"""RedisBloom's own Bloom flow scenarios, run unrenamed against warden (redis-py).

RedisBloom tests its Bloom filter with RLTest flow tests (`tests/flow/test_overall.py`,
class `testRedisBloom`, at RedisBloom commit b28c294). RLTest and that file need
RedisBloom's build tree and network access, so this program restates each scenario in
its own words, one function per RedisBloom test (same name), and runs it with
RedisBloom's command names against a server that loads warden with
`aliases redisbloom`. Where warden's contract (SPEC) decides otherwise, the check is
warden's and the scenario says so (`DIFF:`); src/bloom/README.md lists the same differences.
Scenarios on commands warden does not alias (`BF.DEBUG`) are listed as skipped.

Server address: WARDEN_HOST / WARDEN_PORT (default 127.0.0.1:6379).
Prints one line per scenario and `ok: redisbloom_flow`; exits 1 on a failed check.
"""
import os
import sys

import redis

HOST = os.environ.get("WARDEN_HOST", "127.0.0.1")
PORT = int(os.environ.get("WARDEN_PORT", "6379"))

c = redis.Redis(host=HOST, port=PORT, protocol=2, decode_responses=True, socket_timeout=30)


class Failed(Exception):
    pass


def eq(got, want, what=""):
    if got != want:
        raise Failed(f"{what}: got {got!r}, want {want!r}")


def ok(reply, what=""):
    eq(reply, True if reply is True else "OK", what)


def cmd(*args):
    return c.execute_command(*args)


def refused(*args):
    """The call answers an error (and RLTest's assertResponseError passes)."""
    try:
        reply = cmd(*args)
    except redis.ResponseError as e:
        return str(e)
    raise Failed(f"{' '.join(map(str, args))}: no error, replied {reply!r}")


def info_dict(key):
    flat = cmd("BF.INFO", key)
    return dict(zip(flat[::2], flat[1::2]))


def fresh():
    cmd("FLUSHALL")


def test_custom_filter():
    # A reserved filter takes three new items, finds one, misses another;
    # reserving without a capacity is an error.
    fresh()
    ok(cmd("BF.RESERVE", "test", "0.05", "1000"))
    eq(cmd("BF.MADD", "test", "foo", "bar", "baz"), [1, 1, 1])
    eq(cmd("BF.EXISTS", "test", "foo"), 1)
    eq(cmd("BF.EXISTS", "test", "nonexist"), 0)
    refused("BF.RESERVE", "test", "0.01")


def test_set():
    # ADD creates the filter; MADD of a present and a new item answers [0, 1].
    fresh()
    eq(cmd("BF.ADD", "test", "foo"), 1)
    eq(cmd("BF.EXISTS", "test", "foo"), 1)
    eq(cmd("BF.EXISTS", "test", "bar"), 0)
    eq(cmd("BF.MADD", "test", "foo", "bar"), [0, 1])
    for item, want in (("foo", 1), ("bar", 1), ("nonexist", 0)):
        eq(cmd("BF.EXISTS", "test", item), want, item)


def test_multi():
    fresh()
    eq(cmd("BF.MADD", "test", "foo", "bar", "baz"), [1, 1, 1])
    eq(cmd("BF.MADD", "test", "foo", "new1", "bar"), [0, 1, 0])
    eq(cmd("BF.MEXISTS", "test", "nonexist"), [0])
    eq(cmd("BF.MEXISTS", "test", "nonexist", "foo"), [0, 1])


def test_validation():
    # Reserve with missing, zero, non-numeric or out-of-range values; the item
    # commands with no key or no item; EXISTS/ADD with an extra argument; a reserve
    # on a string key: every one an error.
    fresh()
    for args in ((), ("foo",), ("foo", "0.001"), ("foo", "0.001", "blah"), ("foo", "0", "0"),
                 ("foo", "0", "100"), ("foo", "blah", "1000"), ("foo", "7.7", "1000")):
        refused("BF.RESERVE", *args)
    ok(cmd("BF.RESERVE", "test", "0.01", "1000"))
    for args in ((), ("test",)):
        for name in ("BF.ADD", "BF.MADD", "BF.EXISTS", "BF.MEXISTS"):
            refused(name, *args)
    for name in ("BF.EXISTS", "BF.ADD"):
        refused(name, "test", 1, 2)
    cmd("SET", "foo", "bar")
    refused("BF.RESERVE", "foo")


def test_oom():
    # A capacity of 2^64 is refused, not allocated.
    fresh()
    refused("BF.RESERVE", "test", 0.01, 4294967296 * 4294967296)


def test_rdb_reload():
    fresh()
    eq(cmd("BF.ADD", "test", "foo"), 1)
    cmd("DEBUG", "RELOAD")
    eq(cmd("BF.EXISTS", "test", "foo"), 1)
    eq(cmd("BF.EXISTS", "test", "bar"), 0)


def test_dump_and_load():
    # SCANDUMP without an iterator or with a non-numeric one, on a missing key;
    # LOADCHUNK without data or with a non-numeric iterator: errors. (RedisBloom's
    # round trip in this test is disabled upstream; the alias tests and
    # python/aliases.py make one.)
    fresh()
    cmd("BF.RESERVE", "myBloom", 0.001, 1000 * 1024 * 8)
    refused("BF.SCANDUMP", "myBloom")
    refused("BF.SCANDUMP", "myBloom", "str")
    refused("BF.SCANDUMP", "myCuckoo", 0)
    refused("BF.LOADCHUNK", "myBloom")
    refused("BF.LOADCHUNK", "myBloom", "str", "data")


def test_missing():
    fresh()
    eq(cmd("BF.EXISTS", "myBloom", "foo"), 0)
    eq(cmd("BF.MEXISTS", "myBloom", "foo", "bar", "baz"), [0, 0, 0])


def test_insert():
    # INSERT refuses NOCREATE on a missing key, unknown words, no items, options
    # without values or with bad ones; with ERROR/CAPACITY/EXPANSION it creates the
    # filter, and later parameters are ignored on an existing one.
    # (RedisBloom also compares BF.DEBUG lines here, which warden does not alias.)
    fresh()
    for args in (("NOCREATE", "ITEMS", "foo", "bar"), ("DONTEXIST", "NOCREATE"), (),
                 ("NOCREATE", "ITEMS"), ("NOCREATE", "CAPACITY"), ("CAPACITY", 0.3),
                 ("ERROR",), ("ERROR", "big"), ("EXPANSION", "-1", "ITEMS", "foo"),
                 ("EXPANSION", "big")):
        refused("BF.INSERT", "missingFilter", *args)
    eq(cmd("BF.INSERT", "missingFilter", "ERROR", "0.001", "CAPACITY", "50000", "EXPANSION", 2,
           "ITEMS", "foo"), [1])
    eq(cmd("BF.INSERT", "missingFilter", "ERROR", "0.1", "ITEMS", "foo", "bar", "baz"), [0, 1, 1])
    eq(info_dict("missingFilter")["Capacity"], 50000)
    eq(cmd("BF.CARD", "missingFilter"), 3)


def test_expansion():
    # Filters of capacity 4 with expansion 1, 2 and 4 each take 100 items, all found;
    # the number of sub-filters follows the expansion. EXPANSION without a value, 0,
    # or a word: errors.
    fresh()
    for e in (1, 2, 4):
        ok(cmd("BF.RESERVE", f"exp{e}", 0.01, 4, "expansion", e))
    for i in range(100):
        for e in (1, 2, 4):
            cmd("BF.ADD", f"exp{e}", str(i))
    for i in range(100):
        for e in (1, 2, 4):
            eq(cmd("BF.EXISTS", f"exp{e}", str(i)), 1, f"exp{e} {i}")
    # RedisBloom: 23, 5 and 4 filters. With expansion 1 a filter holds 4 items, so
    # the count is the adds judged new (BF.CARD) over 4: DIFF: RedisBloom judged 8 of
    # the 100 present (false positives of its hashing: 23 filters); warden's hashing
    # gives other false positives, so the count is checked against BF.CARD.
    filters = {e: cmd("BF.INFO", f"exp{e}")[5] for e in (1, 2, 4)}
    new = cmd("BF.CARD", "exp1")
    if filters[1] != -(-new // 4) or filters[2] != 5 or filters[4] != 4:
        raise Failed(f"filters {filters}, {new} adds judged new with expansion 1")
    refused("BF.RESERVE", "exp4", 0.01, 4, "expansion")
    refused("BF.RESERVE", "exp4", 0.01, 4, "expansion", 0)
    refused("BF.RESERVE", "exp4", 0.01, 4, "expansion", "str")


def test_info():
    # RedisBloom's five fields, a flat array in RESP2, with RedisBloom's Size for a
    # one-layer 0.001/100 filter (296); a missing key and no key are errors.
    fresh()
    ok(cmd("BF.RESERVE", "bf", "0.001", "100"))
    eq(cmd("BF.INFO", "bf"), ["Capacity", 100, "Size", 296, "Number of filters", 1,
                              "Number of items inserted", 0, "Expansion rate", 2])
    refused("BF.INFO", "cf")
    refused("BF.INFO")


def test_info_fields():
    # RedisBloom's test_info_capacity / _size / _filters / _items / _expansion: one
    # field, an array of its value.
    fresh()
    ok(cmd("BF.RESERVE", "bf", "0.001", "100"))
    for field, want in (("capacity", 100), ("size", 296), ("filters", 1), ("items", 0),
                        ("expansion", 2)):
        eq(cmd("BF.INFO", "bf", field), [want], field)


def test_info_errors():
    fresh()
    ok(cmd("BF.RESERVE", "bf", "0.001", "100"))
    refused("BF.INFO", "bf", "capacity", "size")
    refused("BF.INFO", "bf", "wrong_value")


def test_card():
    fresh()
    eq(cmd("BF.CARD", "not_exist"), 0)
    ok(cmd("BF.RESERVE", "bf", "0.001", "100"))
    eq(cmd("BF.CARD", "bf"), 0)
    eq(cmd("BF.ADD", "bf", "foo"), 1)
    eq(cmd("BF.CARD", "bf"), 1)
    refused("BF.CARD")
    cmd("SET", "key:string", "foo")
    refused("BF.CARD", "key:string")


def test_no_1_error_rate():
    fresh()
    refused("BF.RESERVE", "bf", 1, 1000)


def test_error_rate():
    # For rates 0.1 to 0.0001, 1024 items added, 10240 absent ones probed: the
    # share of false positives is at most the rate asked for.
    fresh()
    repeat = 1024
    for rate in (0.1, 0.01, 0.001, 0.0001):
        name = f"bf{rate}"
        cmd("BF.RESERVE", name, rate, repeat)
        p = c.pipeline(transaction=False)
        for x in range(repeat):
            p.execute_command("BF.ADD", name, x)
        p.execute()
        p = c.pipeline(transaction=False)
        for x in range(repeat, repeat * 11):
            p.execute_command("BF.EXISTS", name, x)
        fp = sum(p.execute())
        if fp / (repeat * 10) > rate:
            raise Failed(f"rate {rate}: {fp} false positives in {repeat * 10}")


def test_no_scaling():
    # A NONSCALING filter of capacity 3 takes 3 items and refuses a fourth;
    # NONSCALING with EXPANSION is an error; such a filter is smaller than a scaling one.
    fresh()
    ok(cmd("BF.RESERVE", "bf", "0.01", 3, "nonscaling"))
    for i in range(3):
        eq(cmd("BF.ADD", "bf", i), 1)
    refused("BF.ADD", "bf", "extra")
    refused("BF.RESERVE", "bf_mix", "0.01", 1000, "nonscaling", "expansion", 2)
    ok(cmd("BF.RESERVE", "bfnonscale", "0.001", 1000, "nonscaling"))
    ok(cmd("BF.RESERVE", "bfscale", "0.001", 1000))
    if not cmd("BF.INFO", "bfnonscale")[3] < cmd("BF.INFO", "bfscale")[3]:
        raise Failed("a non-scaling filter is not smaller")


def test_nonscaling_err():
    # INSERT into a full NONSCALING filter: the present items answer 0 and the first
    # new one the error. DIFF: RedisBloom stops there (4 entries); warden answers every
    # item (SPEC: one entry per item), so the second "d" is an error too.
    fresh()
    eq(cmd("BF.INSERT", "nonscaling_err", "CAPACITY", 3, "NONSCALING", "ITEMS", "a", "b", "c"),
       [1, 1, 1])
    resp = cmd("BF.INSERT", "nonscaling_err", "ITEMS", "a", "b", "c", "d", "d")
    eq(resp[:3], [0, 0, 0])
    eq(str(resp[3]), "non scaling filter is full")
    eq(len(resp), 5, "DIFF: one entry per item")
    eq(cmd("BF.INFO", "nonscaling_err"), ["Capacity", 3, "Size", 104, "Number of filters", 1,
                                          "Number of items inserted", 3, "Expansion rate", None])


def test_invalid_expansion():
    # EXPANSION -1 is refused. DIFF: the text is warden's ("expansion must be an
    # integer from 1 to 32768"; RedisBloom 8: "expansion must be in the range ...").
    fresh()
    e = refused("BF.RESERVE", "b", "0.1", 1, "EXPANSION", -1)
    if "expansion must be" not in e:
        raise Failed(e)


def test_issue178():
    # 300 million items at 1e-6: Capacity 300000000, Size 1132420232 in RedisBloom.
    # DIFF: warden refuses a filter above bf-max-bytes (128 MiB by default) instead of
    # allocating 1.1 GB; the refusal is checked here, the size by raising the cap
    # would take 1.1 GB of this machine.
    fresh()
    e = refused("BF.RESERVE", "bf", 0.000001, 300 * 1000 * 1000)
    if "bf-max-bytes" not in e and "too large" not in e:
        raise Failed(e)


def test_very_high_error_rate():
    # Error rates close to 1 on small NONSCALING filters are accepted and take an item.
    fresh()
    for name, rate, capacity in (("bf1", 0.99, 3), ("bf2", 0.95, 8),
                                 ("bf3", 0.9999999999999999, 100)):
        ok(cmd("BF.RESERVE", name, rate, capacity, "NONSCALING"))
        eq(cmd("BF.ADD", name, 1), 1)


SKIPPED = {
    "test_mem_usage": "MEMORY USAGE figures (1104 B) are RedisBloom's layout; warden's own "
                      "are pinned by tests/it/bloom/memory.rs; BF.DEBUG is not aliased",
    "test_debug": "BF.DEBUG is not aliased",
}


def main():
    scenarios = [(n, f) for n, f in globals().items() if n.startswith("test_") and callable(f)]
    failed = 0
    for name, f in scenarios:
        try:
            f()
            print(f"  pass {name}")
        except (Failed, redis.RedisError) as e:
            failed += 1
            print(f"FAIL: redisbloom_flow: {name}: {e}", file=sys.stderr)
    for name, why in SKIPPED.items():
        print(f"  skip {name}: {why}")
    if failed:
        sys.exit(1)
    print(f"ok: redisbloom_flow: {len(scenarios)} of RedisBloom's Bloom scenarios pass "
          f"under RedisBloom's names ({len(SKIPPED)} skipped)")


if __name__ == "__main__":
    main()
