#!/usr/bin/env python3
"""A concurrency limiter whose places free themselves when a worker dies (redis-py):
`DLOCK.ACQUIRE pool <owner> 60000 WAIT 15000 LIMIT 2 KEEP`.

Worker processes each take one of 2 places, work, and release it in `finally`.
Checks (prints `ok: …`):

  - two workers hold both places; a third waits in the server (DLOCK.INFO: 2 holders,
    1 waiter) and is still waiting 1 s later;
  - the first worker is killed with SIGKILL (no `finally` runs): the third gets the
    freed place within a few seconds, though the dead worker's ttl was 60 s, with a
    token above both earlier ones; the holders are then the second and the third;
  - the second finishes normally and releases its place (RELEASE answers 1): one
    holder is left; the third is stopped with SIGTERM and the key is gone.

Server address: WARDEN_HOST / WARDEN_PORT (default 127.0.0.1:6379).
Exits 0 on success, 1 on a failed check.
"""
import os
import select
import signal
import subprocess
import sys
import time

import redis

HOST = os.environ.get("WARDEN_HOST", "127.0.0.1")
PORT = int(os.environ.get("WARDEN_PORT", "6379"))
KEY = "keep-pool"

# One worker: its own connection for as long as it holds its place.
WORKER = r"""
import sys, redis
host, port, key, owner = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
r = redis.Redis(host=host, port=port, socket_timeout=20, single_connection_client=True)
token = r.execute_command("DLOCK.ACQUIRE", key, owner, 60000, "WAIT", 15000, "LIMIT", 2, "KEEP")
print(token, flush=True)
if token is None:
    sys.exit(1)
try:
    sys.stdin.readline()  # the work, until told it is done
finally:
    print("released", r.execute_command("DLOCK.RELEASE", key, owner, "TOKEN", token), flush=True)
"""


def fail(msg):
    print(f"FAIL: {msg}")
    sys.exit(1)


def holders(r):
    v = r.execute_command("DLOCK.INFO", KEY)
    if v is None:
        return None, {}
    if not isinstance(v, dict):
        v = dict(zip(v[::2], v[1::2]))
    out = {}
    for h in v.get(b"holders", []):
        if not isinstance(h, dict):
            h = dict(zip(h[::2], h[1::2]))
        out[h[b"owner"].decode()] = h[b"token"]
    return v, out


def start(owner):
    return subprocess.Popen([sys.executable, "-c", WORKER, HOST, str(PORT), KEY, owner],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)


def read_line(proc, timeout):
    ready, _, _ = select.select([proc.stdout], [], [], timeout)
    return proc.stdout.readline().strip() if ready else None


def main():
    r = redis.Redis(host=HOST, port=PORT, socket_timeout=5)
    r.delete(KEY)
    procs = {}
    try:
        tokens = {}
        for name in ("w1", "w2"):
            procs[name] = start(name)
            line = read_line(procs[name], 10)
            if not (line or "").isdigit():
                fail(f"{name} did not get a place: {line!r}")
            tokens[name] = int(line)
        procs["w3"] = start("w3")
        deadline = time.monotonic() + 5
        while (holders(r)[0] or {}).get(b"waiters") != 1:
            if time.monotonic() > deadline:
                fail(f"w3 never queued: {holders(r)[0]}")
            time.sleep(0.01)
        if read_line(procs["w3"], 1.0) is not None:
            fail("w3 got a place while both were held")
        info, held = holders(r)
        if sorted(held) != ["w1", "w2"]:
            fail(f"holders before the kill: {held}")

        killed = time.monotonic()
        os.kill(procs["w1"].pid, signal.SIGKILL)
        procs["w1"].wait()
        line = read_line(procs["w3"], 10)
        took = time.monotonic() - killed
        if not (line or "").isdigit():
            fail(f"w3 was not served after w1 died: {line!r}")
        tokens["w3"] = int(line)
        if took > 3:
            fail(f"w3 waited {took:.2f} s after the kill (ttl 60 s)")
        if tokens["w3"] <= max(tokens["w1"], tokens["w2"]):
            fail(f"w3's token {tokens['w3']} is not above {tokens}")
        info, held = holders(r)
        if held != {"w2": tokens["w2"], "w3": tokens["w3"]} or info[b"limit"] != 2:
            fail(f"holders after the kill: {held} (limit {info.get(b'limit')})")

        procs["w2"].stdin.write("done\n")
        procs["w2"].stdin.flush()
        if read_line(procs["w2"], 10) != "released 1" or procs["w2"].wait(10) != 0:
            fail("w2's RELEASE of its own place did not answer 1")
        info, held = holders(r)
        if list(held) != ["w3"]:
            fail(f"holders after w2 released: {held}")

        procs["w3"].terminate()  # SIGTERM: the process ends, its socket closes
        procs["w3"].wait()
        deadline = time.monotonic() + 5
        while r.exists(KEY):
            if time.monotonic() > deadline:
                fail(f"the last place outlived its worker: {holders(r)}")
            time.sleep(0.01)
    finally:
        for p in procs.values():
            if p.poll() is None:
                p.kill()
                p.wait()
    print(f"ok: keep_semaphore: LIMIT 2 KEEP: w1 killed -9, w3 got its place in {took * 1000:.0f} ms "
          f"(ttl 60 s); w2 released its own; w3's SIGTERM freed the last place")


if __name__ == "__main__":
    main()
