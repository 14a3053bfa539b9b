#!/usr/bin/env python3
"""A newsletter's "do not mail" list on a warden cuckoo filter (redis-py):
deletion is the point.

People unsubscribe (`CF.ADDX`) and some re-subscribe later (`CF.DELX`); the sender
checks every address of a batch with one `CF.MEXISTSX` before mailing. With a Bloom
filter a re-subscribed address could never be taken out again: teams keep a filter
plus a set of exceptions, or rebuild the filter. Here a delete is one command, and
the checks below hold:

- every address unsubscribed and not re-subscribed is suppressed (no false
  negatives), however many others came and went;
- re-subscribed addresses are mailed again, but for the filter's rare false
  positives, counted against the rate `CF.INFOX`'s sizing promises;
- an address added twice needs two deletes (adds are counted: `CF.COUNTX`);
  `CF.ADDNXX` answers 0 to a second unsubscribe click and adds nothing.

Only delete what was added: the filter mirrors the subscriber store, one `CF.ADDX`
per unsubscribe and one `CF.DELX` per re-subscribe of an unsubscribed address.

Server address: WARDEN_HOST / WARDEN_PORT (default 127.0.0.1:6379).
Prints `ok: unsubscribe` and exits 0 on success; exits 1 on a failed check.
"""
import os
import random
import sys

import redis

HOST = os.environ.get("WARDEN_HOST", "127.0.0.1")
PORT = int(os.environ.get("WARDEN_PORT", "6379"))
KEY = "newsletter:do-not-mail"
CAPACITY = 20000
SUBSCRIBERS = 50000


def fail(msg):
    print(f"FAIL: unsubscribe: {msg}", file=sys.stderr)
    sys.exit(1)


def address(i):
    return f"user{i}@example.com"


def main():
    r = redis.Redis(host=HOST, port=PORT, decode_responses=True)
    r.delete(KEY)
    r.execute_command("CF.RESERVEX", KEY, CAPACITY)
    rng = random.Random(2026)

    # 15,000 unsubscribe: the subscriber store records the change, then the
    # filter gets one CF.ADDX per unsubscribe (never ADDNXX here: an address that
    # is a false positive would not be added, and its later delete would take
    # another address's fingerprint out).
    unsubscribed = set(rng.sample(range(SUBSCRIBERS), 15000))
    pipe = r.pipeline(transaction=False)
    for i in unsubscribed:
        pipe.execute_command("CF.ADDX", KEY, address(i))
    if not all(x == 1 for x in pipe.execute()):
        fail("an unsubscribe was not stored")
    # A second click on "unsubscribe" changes nothing: CF.ADDNXX answers 0.
    again = r.execute_command("CF.ADDNXX", KEY, address(next(iter(unsubscribed))))
    if again != 0:
        fail(f"a second unsubscribe with ADDNXX answered {again}")

    # 5,000 of them re-subscribe: one delete each.
    resubscribed = set(rng.sample(sorted(unsubscribed), 5000))
    pipe = r.pipeline(transaction=False)
    for i in resubscribed:
        pipe.execute_command("CF.DELX", KEY, address(i))
    if not all(x == 1 for x in pipe.execute()):
        fail("a re-subscribe found nothing to delete")
    suppressed = unsubscribed - resubscribed

    # The send: every subscriber checked in batches of 1000.
    mailed, wrongly_suppressed = 0, 0
    for start in range(0, SUBSCRIBERS, 1000):
        batch = list(range(start, start + 1000))
        flags = r.execute_command("CF.MEXISTSX", KEY, *[address(i) for i in batch])
        for i, flag in zip(batch, flags):
            if i in suppressed and flag != 1:
                fail(f"{address(i)} unsubscribed and was mailed (a false negative)")
            if i not in suppressed:
                if flag == 0:
                    mailed += 1
                else:
                    wrongly_suppressed += 1
    allowed = SUBSCRIBERS - len(suppressed)
    rate = wrongly_suppressed / allowed
    # 10,000 fingerprints in a table sized for 20,000 (2-slot buckets, 9-bit
    # fingerprints): about 0.4 %; 1 % is far above any run's noise.
    if rate > 0.01:
        fail(f"{wrongly_suppressed} of {allowed} mailable addresses suppressed ({rate:.2%})")

    # Adds are counted: twice unsubscribed (CF.ADDX) needs two re-subscribes.
    twice = address(SUBSCRIBERS + 1)
    r.execute_command("CF.ADDX", KEY, twice)
    r.execute_command("CF.ADDX", KEY, twice)
    if r.execute_command("CF.COUNTX", KEY, twice) < 2:
        fail("CF.COUNTX does not count both adds")
    r.execute_command("CF.DELX", KEY, twice)
    if r.execute_command("CF.EXISTSX", KEY, twice) != 1:
        fail("one re-subscribe undid two unsubscribes")
    r.execute_command("CF.DELX", KEY, twice)
    if r.execute_command("CF.DELX", KEY, address(SUBSCRIBERS + 2)) != 0:
        fail("a delete of an address never added answered 1 (possible, but not for this one)")

    info = r.execute_command("CF.INFOX", KEY)
    # A map: a dict in RESP3 (and from redis-py versions that parse it), else
    # a flat list of label, value.
    fields = info if isinstance(info, dict) else dict(zip(info[0::2], info[1::2]))
    if fields["Number of items inserted"] != len(suppressed):
        fail(f"CF.INFOX counts {fields['Number of items inserted']}, want {len(suppressed)}")
    print(
        f"ok: unsubscribe: {len(suppressed)} suppressed, none mailed; {mailed} mailed; "
        f"{wrongly_suppressed} re-subscribed or never-unsubscribed addresses held back "
        f"({rate:.3%}); deletes counted per add"
    )


if __name__ == "__main__":
    main()
