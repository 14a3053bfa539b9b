#!/usr/bin/env python3
"""RedisBloom's own Bloom flow scenarios, run unrenamed against warden (redis-py).

RedisBloom tests its Bloom filter with RLTest flow tests (`tests/flow/test_overall.py`,
class `testRedisBloom`, at RedisBloom commit b28c294). RLTest and that file need
RedisBloom's build tree and network access, so this program restates each scenario in
its own words, one function per RedisBloom test (same name), and runs it with
RedisBloom's command names against a server that loads warden with
`aliases redisbloom`. Where warden's contract (SPEC) decides otherwise (a size cap), the
check is warden's and the scenario says so (`DIFF:`); src/bloom/README.md lists it.

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
    # RedisBloom's hashing judges 8 of the 100 present with expansion 1: 23 filters.
    filters = {e: cmd("BF.INFO", f"exp{e}")[5] for e in (1, 2, 4)}
    eq(filters, {1: 23, 2: 5, 4: 4})
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
    # new one the error, which ends the reply (4 entries).
    fresh()
    eq(cmd("BF.INSERT", "nonscaling_err", "CAPACITY", 3, "NONSCALING", "ITEMS", "a", "b", "c"),
       [1, 1, 1])
    resp = cmd("BF.INSERT", "nonscaling_err", "ITEMS", "a", "b", "c", "d", "d")
    eq(resp[:3], [0, 0, 0])
    eq(str(resp[3]), "non scaling filter is full")
    eq(len(resp), 4)
    eq(cmd("BF.INFO", "nonscaling_err"), ["Capacity", 3, "Size", 104, "Number of filters", 1,
                                          "Number of items inserted", 3, "Expansion rate", None])


def test_invalid_expansion():
    # EXPANSION -1 is refused with RedisBloom 2.8's text (RedisBloom 8: "expansion
    # must be in the range ...").
    fresh()
    e = refused("BF.RESERVE", "b", "0.1", 1, "EXPANSION", -1)
    eq(e, "expansion should be greater or equal to 1")


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


def test_debug():
    # BF.DEBUG's lines after 100 and 4000 adds: RedisBloom's links, byte for byte.
    fresh()
    ok(cmd("BF.RESERVE", "bf", "0.01", "10"))
    for i in range(100):
        cmd("BF.ADD", "bf", str(i))
    eq(cmd("BF.DEBUG", "bf"), [
        "size:99",
        "bytes:16 bits:128 hashes:8 hashwidth:64 capacity:10 size:10 ratio:0.005",
        "bytes:32 bits:256 hashes:9 hashwidth:64 capacity:20 size:20 ratio:0.0025",
        "bytes:72 bits:576 hashes:10 hashwidth:64 capacity:40 size:40 ratio:0.00125",
        "bytes:160 bits:1280 hashes:11 hashwidth:64 capacity:80 size:29 ratio:0.000625"])
    cmd("DEL", "bf")
    ok(cmd("BF.RESERVE", "bf", "0.001", "100"))
    p = c.pipeline(transaction=False)
    for i in range(4000):
        p.execute_command("BF.ADD", "bf", str(i))
    p.execute()
    eq(cmd("BF.DEBUG", "bf"), [
        "size:3997",
        "bytes:200 bits:1600 hashes:11 hashwidth:64 capacity:100 size:100 ratio:0.0005",
        "bytes:432 bits:3456 hashes:12 hashwidth:64 capacity:200 size:200 ratio:0.00025",
        "bytes:936 bits:7488 hashes:13 hashwidth:64 capacity:400 size:400 ratio:0.000125",
        "bytes:2016 bits:16128 hashes:14 hashwidth:64 capacity:800 size:800 ratio:6.25e-05",
        "bytes:4320 bits:34560 hashes:15 hashwidth:64 capacity:1600 size:1600 ratio:3.125e-05",
        "bytes:9216 bits:73728 hashes:16 hashwidth:64 capacity:3200 size:897 ratio:1.5625e-05"])


def test_mem_usage():
    # MEMORY USAGE of a 0.05/1000 filter through a reload and three adds: 1104 bytes
    # on Redis 7 (the key's own 48 and RedisBloom's Size, 1056; the key's share
    # differs between servers, so the Size is checked, and the usage kept).
    fresh()
    ok(cmd("BF.RESERVE", "bf", "0.05", "1000"))
    cmd("DEBUG", "RELOAD")
    eq(cmd("BF.INFO", "bf", "SIZE"), [1056])
    usage = cmd("MEMORY", "USAGE", "bf")
    eq(cmd("BF.MADD", "bf", "foo", "bar", "baz"), [1, 1, 1])
    eq(cmd("MEMORY", "USAGE", "bf"), usage)
    refused("BF.DEBUG", "bf", "noexist")
    refused("BF.DEBUG", "cf")


SKIPPED = {}


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
