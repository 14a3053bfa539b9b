#!/usr/bin/env python3
"""RedisBloom's and redis-cell's clients, unchanged, against warden (redis-py).

With `loadmodule libwarden.so aliases redisbloom,redis-cell` warden answers to
RedisBloom's BF.* names and to redis-cell's CL.THROTTLE. This program drives redis-py's
own RedisBloom helpers (`r.bf().create/add/madd/exists/mexists/insert/info/card/
scandump/loadchunk`), whose reply parsers expect RedisBloom's reply shapes, in RESP2
and RESP3, and a CL.THROTTLE limiter written for redis-cell.

Server address: WARDEN_HOST / WARDEN_PORT (default 127.0.0.1:6379); the server must
load warden with `aliases redisbloom,redis-cell`.
Prints `ok: aliases` and exits 0 on success; exits 1 on a failed check.
"""
import os
import sys

import redis

HOST = os.environ.get("WARDEN_HOST", "127.0.0.1")
PORT = int(os.environ.get("WARDEN_PORT", "6379"))


def fail(msg):
    print(f"FAIL: aliases: {msg}", file=sys.stderr)
    sys.exit(1)


def check(what, got, want):
    if got != want:
        fail(f"{what}: got {got!r}, want {want!r}")


def text(v):
    return v.decode() if isinstance(v, bytes) else v


def info_fields(info):
    """BF.INFO as redis-py gives it: its BFInfo (parsed from RedisBloom's reply) or,
    in RESP3 with some redis-py versions, the map itself."""
    if isinstance(info, dict):
        return {text(k): v for k, v in info.items()}
    return {"Capacity": info.capacity, "Size": info.size,
            "Number of filters": info.filterNum,
            "Number of items inserted": info.insertedNum,
            "Expansion rate": info.expansionRate}


def bloom(r, protocol):
    """Every r.bf() helper on one filter, as a RedisBloom user writes them."""
    p = f"aliases:{protocol}:"
    bf = r.bf()
    r.delete(p + "seen", p + "copy", p + "auto", p + "ins")
    check("create", bf.create(p + "seen", 0.01, 1000), True)
    # RESP2 gives 1/0, RESP3 true/false: redis-py passes RedisBloom's replies through.
    check("add new", bool(bf.add(p + "seen", "url:1")), True)
    check("add again", bool(bf.add(p + "seen", "url:1")), False)
    check("madd", [bool(x) for x in bf.madd(p + "seen", "url:1", "url:2", "url:3")],
          [False, True, True])
    check("exists", bool(bf.exists(p + "seen", "url:2")), True)
    check("exists absent", bool(bf.exists(p + "seen", "url:never")), False)
    check("mexists", [bool(x) for x in bf.mexists(p + "seen", "url:3", "url:never")],
          [True, False])
    check("insert", [bool(x) for x in bf.insert(p + "ins", ["a", "b", "a"], capacity=50,
                                                 error=0.001)],
          [True, True, False])
    try:
        bf.insert(p + "nocreate", ["a"], noCreate=True)
        fail("insert NOCREATE on a missing key did not fail")
    except redis.ResponseError as e:
        check("insert NOCREATE error", str(e), "not found")
    check("card", bf.card(p + "seen"), 3)
    check("card missing", bf.card(p + "nothing"), 0)

    info = info_fields(bf.info(p + "seen"))
    check("info", {k: v for k, v in info.items() if k != "Size"},
          {"Capacity": 1000, "Number of filters": 1, "Number of items inserted": 3,
           "Expansion rate": 2})
    if not info["Size"] > 1000 * 9 / 8:
        fail(f"info size {info['Size']}")
    # One field: RESP3 a map of one, RESP2 an array of the value alone.
    # (A client without bf()'s BF.INFO parser, which expects all five fields.)
    plain = redis.Redis(host=HOST, port=PORT, protocol=protocol, socket_timeout=10)
    one = plain.execute_command("BF.INFO", p + "seen", "ITEMS")
    if protocol == 3:
        check("info ITEMS", {text(k): v for k, v in one.items()},
              {"Number of items inserted": 3})
    else:
        check("info ITEMS", one, [3])

    # SCANDUMP / LOADCHUNK as RedisBloom's docs show the loop.
    chunks, it = [], 0
    while True:
        it, data = bf.scandump(p + "seen", it)
        if it == 0:
            break
        chunks.append((it, data))
    if len(chunks) < 2:
        fail(f"scandump gave {len(chunks)} chunks")
    for it, data in chunks:
        check("loadchunk", text(bf.loadchunk(p + "copy", it, data)), "OK")
    check("copy mexists", [bool(x) for x in bf.mexists(p + "copy", "url:1", "url:2",
                                                        "url:3", "url:never")],
          [True, True, True, False])

    # An add on a missing key creates it with the module's defaults, as RedisBloom does.
    check("add creates", bool(bf.add(p + "auto", "x")), True)
    check("auto capacity", info_fields(bf.info(p + "auto"))["Capacity"], 100)


def throttle(r):
    """A redis-cell client: CL.THROTTLE key max_burst count period [quantity]."""
    key = "aliases:cell:user123"
    r.delete(key)
    replies = [r.execute_command("CL.THROTTLE", key, 2, 30, 60) for _ in range(4)]
    for limited, limit, remaining, retry_after, reset_after in replies:
        check("limit", limit, 3)
        if limited == 0 and retry_after != -1:
            fail(f"an allowed call has retry_after {retry_after}")
        if limited == 1 and retry_after <= 0:
            fail(f"a denied call has retry_after {retry_after}")
    check("limited", [x[0] for x in replies], [0, 0, 0, 1])
    check("remaining", [x[2] for x in replies][:3], [2, 1, 0])
    # The quantity, positional as in redis-cell.
    r.delete("aliases:cell:q")
    q = r.execute_command("CL.THROTTLE", "aliases:cell:q", 10, 10, 1, 5)
    check("quantity", q[:3], [0, 11, 6])


def main():
    for protocol in (2, 3):
        r = redis.Redis(host=HOST, port=PORT, protocol=protocol, socket_timeout=10)
        bloom(r, protocol)
        throttle(r)
    print("ok: aliases: redis-py's bf() helpers (RESP2 and RESP3) and a CL.THROTTLE client")


if __name__ == "__main__":
    main()
