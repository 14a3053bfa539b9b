#!/usr/bin/env python3
"""Back up a filter to a file and restore it, as RedisBloom users do with
BF.SCANDUMP / BF.LOADCHUNK (redis-py): the same loop on BF.SCANDUMPX / BF.LOADCHUNKX.

The recipe of src/bloom/README.md, checked: a filter grown to several layers is dumped chunk by chunk
into a file, restored under another key, and answers like the original (every added
item present, the same BF.INFOX, the same DEBUG DIGEST-VALUE when the server allows
DEBUG). While the restore is under way the key answers "still being loaded".

Server address: WARDEN_HOST / WARDEN_PORT (default 127.0.0.1:6379).
Prints `ok: backup` and exits 0 on success; exits 1 on a failed check.
"""
import os
import pickle
import sys
import tempfile

import redis

HOST = os.environ.get("WARDEN_HOST", "127.0.0.1")
PORT = int(os.environ.get("WARDEN_PORT", "6379"))


def fail(msg):
    print(f"FAIL: backup: {msg}", file=sys.stderr)
    sys.exit(1)


# --- the recipe (src/bloom/README.md: "Backup and restore like RedisBloom") ------------

def dump(r, key):
    """The filter's chunks, header first, as (iterator, data) pairs."""
    chunks, it = [], 0
    while True:
        it, data = r.execute_command("BF.SCANDUMPX", key, it)
        if it == 0:
            return chunks
        chunks.append((it, data))


def restore(r, key, chunks):
    """Rebuilds the filter under `key` (which must not exist), chunk by chunk, in order."""
    for it, data in chunks:
        r.execute_command("BF.LOADCHUNKX", key, it, data)

# ----------------------------------------------------------------------------------------


def main():
    r = redis.Redis(host=HOST, port=PORT, socket_timeout=30, protocol=2)
    src, dst = "backup:urls", "backup:urls:restored"
    r.delete(src, dst)
    r.execute_command("BF.RESERVEX", src, 0.001, 1000)
    items = [f"https://example.com/{i}" for i in range(5000)]
    for i in range(0, len(items), 1000):
        r.execute_command("BF.MADDX", src, *items[i:i + 1000])

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "urls.bf")
        with open(path, "wb") as f:
            pickle.dump(dump(r, src), f)
        with open(path, "rb") as f:
            chunks = pickle.load(f)

    if chunks[0][0] != 1 or not chunks[0][1].startswith(b"wardenbf"):
        fail(f"the first chunk is not the header: iterator {chunks[0][0]}")
    restore(r, dst, chunks[:2])
    try:
        r.execute_command("BF.EXISTSX", dst, items[0])
        fail("a half-restored filter answered BF.EXISTSX")
    except redis.ResponseError as e:
        if "still being loaded" not in str(e):
            fail(f"unexpected error while loading: {e}")
    restore(r, dst, chunks[2:])

    found = r.execute_command("BF.MEXISTSX", dst, *items)
    if not all(f == 1 for f in found):
        fail(f"{found.count(0)} added items are missing after the restore")
    if r.execute_command("BF.INFOX", src) != r.execute_command("BF.INFOX", dst):
        fail("BF.INFOX differs between the original and the restored filter")
    try:
        a = r.execute_command("DEBUG", "DIGEST-VALUE", src)
        b = r.execute_command("DEBUG", "DIGEST-VALUE", dst)
        if a != b:
            fail(f"digests differ: {a} != {b}")
    except redis.ResponseError:
        pass  # DEBUG is disabled on this server
    layers = r.execute_command("BF.INFOX", dst, "FILTERS")[0]
    r.delete(src, dst)
    print(f"ok: backup ({len(chunks)} chunks, {layers} layers, {len(items)} items)")


if __name__ == "__main__":
    main()
