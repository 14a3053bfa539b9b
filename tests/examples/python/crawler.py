#!/usr/bin/env python3
"""A crawler's "seen URL" set on a warden Bloom filter (redis-py).

In place of a Lua loop of SETBIT/GETBIT over hand-rolled hashes, the crawler sizes a
filter once (`BF.RESERVEX`), adds each batch of discovered links with `BF.MADDX`
(1 = new, crawl it; 0 = seen before) and checks single links with `BF.EXISTSX`.

Then re-visits: a crawler that must fetch a page again once its re-visit window
has passed keeps "fetched lately" in an aging filter (`BF.RESERVEX … AGE
window_ms`): a page fetched at t answers 1 until at least t + window and 0 from
t + window × 1.25 on, with no expiry bookkeeping in the client.

Server address: WARDEN_HOST / WARDEN_PORT (default 127.0.0.1:6379).
Prints `ok: crawler` and exits 0 on success; exits 1 on a failed check.
"""
import os
import sys
import time

import redis

HOST = os.environ.get("WARDEN_HOST", "127.0.0.1")
PORT = int(os.environ.get("WARDEN_PORT", "6379"))

KEY = "crawler:seen"
ERROR_RATE = 0.001
CAPACITY = 10000

REVISIT_KEY = "crawler:fetched"
REVISIT_MS = 1500  # the re-visit window (short, so the example stays fast)
REVISIT_CAPACITY = 100  # most fetches in any one window
SLACK = 1.25  # a page is due again by window × 1.25 after its fetch
MARGIN_S = 0.1


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


class FetchedPages:
    """Pages fetched within the re-visit window, on an aging filter."""

    def __init__(self, client, key, window_ms, capacity):
        self.client, self.key = client, key
        client.delete(key)
        client.execute_command("BF.RESERVEX", key, 0.01, capacity, "AGE", window_ms)

    def due(self, urls):
        """The URLs not fetched within the window. Checked with BF.MEXISTSX, not
        BF.MADDX: adding a page that is present restarts its window, so merely
        seeing a link would put off its re-visit."""
        flags = self.client.execute_command("BF.MEXISTSX", self.key, *urls)
        return [u for u, f in zip(urls, flags) if f == 0]

    def fetched(self, urls):
        """Records fetches (restarting each page's window); one flag per URL,
        1 if it was not in the window."""
        return self.client.execute_command("BF.MADDX", self.key, *urls)


def revisits(client):
    pages = [f"https://example.com/news/{i}" for i in range(30)]
    changed = pages[7]  # fetched again midway (its feed announced a change)
    window_s = REVISIT_MS / 1000
    fetched = FetchedPages(client, REVISIT_KEY, REVISIT_MS, REVISIT_CAPACITY)
    if client.execute_command("BF.INFOX", REVISIT_KEY, "WINDOW") != [REVISIT_MS]:
        fail(f"BF.INFOX WINDOW is not [{REVISIT_MS}]")

    def crawl(label, want):
        """One pass over all pages: fetches those due, checks which were."""
        due = fetched.due(pages)
        if due and fetched.fetched(due) != [1] * len(due):
            fail(f"{label}: BF.MADDX did not answer 1 for every page due")
        if sorted(due) != sorted(want):
            fail(f"{label}: fetched {len(due)} pages, want {len(want)} "
                 f"(e.g. {sorted(set(due) ^ set(want))[:3]})")
        print(f"{label}: fetched {len(due)} of {len(pages)}")

    def sleep_until(t):
        time.sleep(max(0.0, t - time.monotonic()))

    def still_in_window(since, what):
        """A page fetched at `since` is only sure to be skipped within the window."""
        late = time.monotonic() - since
        if late >= window_s:
            fail(f"too slow to check {what}: {late * 1000:.0f} ms after its fetch, "
                 f"past the {REVISIT_MS} ms window (a loaded host?)")

    first = time.monotonic()
    crawl("first pass", pages)
    first_done = time.monotonic()
    if client.execute_command("BF.CARDX", REVISIT_KEY) != len(pages):
        fail(f"BF.CARDX after the first pass is not {len(pages)}")
    still_in_window(first, "the second pass")
    crawl("second pass, at once", [])

    # Midway through the window one page is fetched again: BF.ADDX answers 0
    # (it was fetched lately) but its window starts over.
    sleep_until(first_done + 0.6 * window_s)
    refetch = time.monotonic()
    still_in_window(first, "the re-fetch")
    if client.execute_command("BF.ADDX", REVISIT_KEY, changed) != 0:
        fail(f"{changed} re-fetched within its window: BF.ADDX did not answer 0")
    refetched = time.monotonic()

    # Past window × 1.25 of the first pass every page is due again, but the one
    # fetched midway, whose own window has not passed.
    sleep_until(first_done + SLACK * window_s + MARGIN_S)
    third = time.monotonic()
    still_in_window(refetch, "the re-fetched page")
    crawl(f"third pass, {(third - first_done) * 1000:.0f} ms on",
          [u for u in pages if u != changed])

    # And past window × 1.25 of its re-fetch, that page alone is due.
    sleep_until(refetched + SLACK * window_s + MARGIN_S)
    fourth = time.monotonic()
    still_in_window(third, "the fourth pass")
    crawl(f"fourth pass, {(fourth - first_done) * 1000:.0f} ms on", [changed])
    if client.execute_command("BF.CARDX", REVISIT_KEY) != len(pages):
        fail(f"BF.CARDX after the fourth pass is not {len(pages)}")
    client.delete(REVISIT_KEY)


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

    revisits(client)
    print("ok: crawler")


if __name__ == "__main__":
    main()
