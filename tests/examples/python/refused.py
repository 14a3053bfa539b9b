#!/usr/bin/env python3
"""Who is hammering the API: the ten API keys most often refused by `RL.TOKEN`
in the last five minutes (redis-py).

Every request asks the limiter (`RL.TOKEN api:<key> rate burst`); when it
answers "denied" (its first integer is 0), the next call counts the key in a
top-k over a five-minute window (`TOPK.ADDX refused <key>`, made by
`TOPK.RESERVEX refused 10 100 5 0.9 WINDOW 5m`). `TOPK.LISTX refused WITHCOUNT`
then answers the question at any time: the ten keys refused most in (at least)
the last five minutes, most refused first. Nothing runs per key on the server;
refusals older than the window age out as the sketch moves on.

Server address: WARDEN_HOST / WARDEN_PORT (default 127.0.0.1:6379).
Prints `ok: refused` and exits 0 on success; exits 1 on a failed check.
"""
import os
import sys

import redis

HOST = os.environ.get("WARDEN_HOST", "127.0.0.1")
PORT = int(os.environ.get("WARDEN_PORT", "6379"))

KEYS = 30  # API keys key:00 .. key:29
RATE, BURST = 1, 10  # per key: 1 request a second, bursts of 10


def fail(msg):
    print(f"FAIL: refused: {msg}", file=sys.stderr)
    sys.exit(1)


def request(client, key):
    """One API request of `key`: asks the limiter and, when it refuses, counts
    the refusal in the top-k. True when allowed."""
    allowed = client.execute_command("RL.TOKEN", f"api:{key}", RATE, BURST)[0]
    if allowed == 0:
        client.execute_command("TOPK.ADDX", "refused", key)
    return allowed == 1


def main():
    client = redis.Redis(host=HOST, port=PORT, socket_timeout=10, decode_responses=True)
    names = [f"key:{i:02d}" for i in range(KEYS)]
    client.delete("refused", *(f"api:{k}" for k in names))
    client.execute_command("TOPK.RESERVEX", "refused", 10, 100, 5, "0.9", "WINDOW", "5m")

    # key:00 sends the most requests, key:29 the fewest: 3 × (30 − i) each,
    # interleaved as real traffic would be.
    sent = {k: 3 * (KEYS - i) for i, k in enumerate(names)}
    refused = {k: 0 for k in names}
    for round_ in range(max(sent.values())):
        for k in names:
            if round_ < sent[k] and not request(client, k):
                refused[k] += 1

    top = client.execute_command("TOPK.LISTX", "refused", "WITHCOUNT")
    listed = list(zip(top[::2], top[1::2]))
    print("most refused in the last five minutes:")
    for key, count in listed:
        print(f"  {key}: {count} refusals")

    # The limiter allowed BURST (plus what refilled) of each key's requests;
    # the ten heaviest senders are the ten most refused, in order, with the
    # counts the limiter's answers gave.
    want = sorted(refused.items(), key=lambda kv: (-kv[1], kv[0]))[:10]
    if [k for k, _ in listed] != [k for k, _ in want]:
        fail(f"TOPK.LISTX gave {listed}, want {want}")
    if any(int(c) != refused[k] for k, c in listed):
        fail(f"counts {listed}, the limiter refused {want}")
    if client.execute_command("TOPK.QUERYX", "refused", "key:00", "key:29") != [1, 0]:
        fail("TOPK.QUERYX does not place key:00 in and key:29 out")
    print("ok: refused")


if __name__ == "__main__":
    main()
