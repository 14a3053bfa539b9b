#!/usr/bin/env python3
"""A crawler's "seen URL" set on a warden Bloom filter (redis-py).

In place of a Lua loop of SETBIT/GETBIT over hand-rolled hashes, the crawler sizes a
filter once (`BF.RESERVEX`), adds each batch of discovered links with `BF.MADDX`
(1 = new, crawl it; 0 = seen before) and checks single links with `BF.EXISTSX`.

Server address: WARDEN_HOST / WARDEN_PORT (default 127.0.0.1:6379).
Prints `ok: crawler` and exits 0 on success; exits 1 on a failed check.
"""
import os
import sys

import redis

HOST = os.environ.get("WARDEN_HOST", "127.0.0.1")
PORT = int(os.environ.get("WARDEN_PORT", "6379"))

KEY = "crawler:seen"
ERROR_RATE = 0.001
CAPACITY = 10000


def fail(msg):
    print(f"FAIL: crawler: {msg}", file=sys.stderr)
    sys.exit(1)


class SeenUrls:
    def __init__(self, client, key, error_rate, capacity):
        self.client, self.key = client, key
        client.delete(key)
        client.execute_command("BF.RESERVEX", key, error_rate, capacity)

    def add_batch(self, urls):
        """Adds a batch; returns the URLs that were new (to be crawled)."""
        flags = self.client.execute_command("BF.MADDX", self.key, *urls)
        if len(flags) != len(urls):
            fail(f"BF.MADDX answered {len(flags)} flags for {len(urls)} items")
        return [u for u, f in zip(urls, flags) if f == 1]

    def seen(self, url):
        return self.client.execute_command("BF.EXISTSX", self.key, url) == 1

    def count(self):
        return self.client.execute_command("BF.CARDX", self.key)


def page_links(page):
    """Links found on a page: 20 of its own, plus links back to earlier pages."""
    own = [f"https://example.com/page/{page}/item/{i}" for i in range(20)]
    back = [f"https://example.com/page/{p}/item/{p % 20}" for p in range(max(0, page - 3), page)]
    return own + back + [f"https://example.com/page/{page}/item/0"]  # one repeat on the page


def main():
    client = redis.Redis(host=HOST, port=PORT, socket_timeout=10)
    seen = SeenUrls(client, KEY, ERROR_RATE, CAPACITY)

    distinct = set()
    new_counted = 0
    for page in range(50):
        batch = page_links(page)
        new = seen.add_batch(batch)
        new_counted += len(new)
        # Every URL reported new must really be new; repeats (on the page or from
        # earlier pages) must never be reported new.
        for u in new:
            if u in distinct:
                fail(f"{u} was added before but BF.MADDX reported it new")
        fresh = [u for u in dict.fromkeys(batch) if u not in distinct]
        distinct.update(batch)
        # A false positive would make a fresh URL look seen; at this load and error
        # rate none is expected, and the result is deterministic (fixed hashing).
        if len(new) != len(fresh):
            fail(f"page {page}: {len(new)} new URLs reported, {len(fresh)} were new")

    if new_counted != len(distinct):
        fail(f"counted {new_counted} new URLs, {len(distinct)} distinct were added")
    card = seen.count()
    if card != new_counted:
        fail(f"BF.CARDX is {card}, counted {new_counted} new URLs")

    # No false negatives: every URL added answers 1.
    missing = [u for u in distinct if not seen.seen(u)]
    if missing:
        fail(f"false negatives: {missing[:5]}")

    # Re-adding everything finds nothing new.
    again = seen.add_batch(sorted(distinct))
    if again:
        fail(f"{len(again)} URLs reported new on the second pass")

    # URLs never added: at most a few false positives (error rate 0.1%).
    unseen = [f"https://example.org/never/{i}" for i in range(2000)]
    flags = client.execute_command("BF.MEXISTSX", KEY, *unseen)
    fp = sum(flags)
    if fp > 20:
        fail(f"{fp} false positives among 2000 unseen URLs (error rate {ERROR_RATE})")

    # A missing filter answers 0, not an error.
    if client.execute_command("BF.EXISTSX", "crawler:no-such-filter", "x") != 0:
        fail("BF.EXISTSX on a missing key is not 0")

    print(f"crawled {new_counted} distinct URLs, {fp} false positives among 2000 unseen")
    client.delete(KEY)
    print("ok: crawler")


if __name__ == "__main__":
    main()
