#!/usr/bin/env python3
"""warden benchmark, bytes per key: what one lock, limiter or cache entry costs
in RAM, in an RDB file and in a rewritten AOF, next to the plain Redis keys and
the peers (redis-cell's CL.THROTTLE, the seeds' Lua token bucket) a user
compares it with.

    python3 tests/bench/memory.py [--keys N] [--module PATH] [--redis-cell PATH]

One redis-server (loopback, free port, temp dir) with warden (and redis-cell
when its .so is given or found) loaded. Per row: FLUSHALL, used_memory before,
N keys of 11 characters (`k:000000000` ..) made through one pipeline,
used_memory after; the difference over N is the row's RAM per key (the key's
name, its dictionary entries and its expiry included, as for every row). Then
SAVE with rdbcompression off, and BGREWRITEAOF without the RDB preamble: the
file's size beyond an empty one, over N. Memory is deterministic for one
allocator, so one run is the figure; every row's keys outlive the run (slow
rates, long leases). Prints a Markdown table.
"""

import argparse
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PEER_CELL = os.path.join(ROOT, "..", "shared", "peers", "redis-cell-0.5.0", "libredis_cell.so")
VALUE_100 = "v" * 100
# A UUID, the owner many clients use.
UUID_OWNER = "0b9f6c1e-7d2a-4c55-9e3b-5a1f2d8c7e40"

# The seeds' token bucket: tokens and last refill in a hash of two fields.
LUA_TOKEN = (
    "redis.call('HSET', KEYS[1], 'tokens', ARGV[1], 'last', ARGV[2]) "
    "redis.call('PEXPIRE', KEYS[1], 60000) return 1"
)


def resp(words):
    out = [b"*%d\r\n" % len(words)]
    for w in words:
        w = w if isinstance(w, bytes) else str(w).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(w), w))
    return b"".join(out)


class Conn:
    """A blocking RESP2 connection, enough for INFO, CONFIG and pipelines."""

    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.buf = b""

    def _line(self):
        while b"\r\n" not in self.buf:
            chunk = self.sock.recv(1 << 16)
            if not chunk:
                raise ConnectionError("server closed the connection")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def _read(self):
        line = self._line()
        kind, rest = line[:1], line[1:]
        if kind in (b"+", b":"):
            return rest.decode()
        if kind == b"-":
            return RuntimeError(rest.decode())
        if kind == b"$":
            n = int(rest)
            if n < 0:
                return None
            while len(self.buf) < n + 2:
                self.buf += self.sock.recv(1 << 16)
            data, self.buf = self.buf[:n], self.buf[n + 2:]
            return data.decode(errors="replace")
        if kind == b"*":
            return [self._read() for _ in range(int(rest))]
        raise ValueError(line)

    def call(self, *words):
        self.sock.sendall(resp(words))
        reply = self._read()
        if isinstance(reply, RuntimeError):
            raise reply
        return reply

    def pipeline(self, calls, batch=2000):
        """Sends every call, reading replies batch by batch; errors fail the row."""
        for start in range(0, len(calls), batch):
            part = calls[start:start + batch]
            self.sock.sendall(b"".join(resp(c) for c in part))
            for c in part:
                reply = self._read()
                if isinstance(reply, RuntimeError):
                    raise RuntimeError("%s -> %s" % (c[:3], reply))

    def used_memory(self):
        for line in self.call("INFO", "memory").splitlines():
            if line.startswith("used_memory:"):
                return int(line.split(":")[1])
        raise ValueError("no used_memory")


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def rows(has_cell):
    """(name, calls for key k) of every row; a row whose peer is absent is left out."""
    now = int(time.time() * 1000)
    table = [
        ("SET k owner NX PX (the seeds' lock)", lambda k: [["SET", k, "owner", "NX", "PX", 600000]]),
        ("DLOCK.ACQUIRE", lambda k: [["DLOCK.ACQUIRE", k, "owner", 600000]]),
        ("SET k <UUID> NX PX (a 36-byte owner)", lambda k: [["SET", k, UUID_OWNER, "NX", "PX", 600000]]),
        ("DLOCK.ACQUIRE, a 36-byte owner", lambda k: [["DLOCK.ACQUIRE", k, UUID_OWNER, 600000]]),
        ("DLOCK.ACQUIRE … SHARED, one holder", lambda k: [["DLOCK.ACQUIRE", k, "owner", 600000, "SHARED"]]),
        ("DLOCK.ACQUIRE … SHARED, two holders", lambda k: [
            ["DLOCK.ACQUIRE", k, "owner", 600000, "SHARED"],
            ["DLOCK.ACQUIRE", k, "other", 600000, "SHARED"],
        ]),
        ("Lua token bucket (a hash of 2 fields)", lambda k: [["EVAL", LUA_TOKEN, 1, k, 9, now]]),
        # Slow rates, so that no key is full again (and expires) during the run.
        ("RL.TOKEN, one limit", lambda k: [["RL.TOKEN", k, "1/h", 10]]),
        ("RL.TOKEN, two limits", lambda k: [["RL.TOKEN", k, "1/h", 10, "1000/d", 1000]]),
        ("RL.LEAKY", lambda k: [["RL.LEAKY", k, "1/h", 10]]),
        ("RL.WINDOW, one limit", lambda k: [["RL.WINDOW", k, 100, 60000]]),
        ("RL.GCRA", lambda k: [["RL.GCRA", k, 10, 1, 3600]]),
        ("SET k <100 B> PX", lambda k: [["SET", k, VALUE_100, "PX", 600000]]),
        ("CACHE.SET k <100 B> ttl", lambda k: [["CACHE.SET", k, VALUE_100, 600000]]),
    ]
    if has_cell:
        table.insert(4, ("redis-cell CL.THROTTLE", lambda k: [["CL.THROTTLE", k, 10, 1, 3600]]))
    return table


def file_size(path):
    return os.path.getsize(path) if os.path.exists(path) else 0


def aof_size(directory):
    """Bytes of the rewritten AOF's base file (Redis 7: appendonlydir/*.base.aof)."""
    total = 0
    aof_dir = os.path.join(directory, "appendonlydir")
    for name in os.listdir(aof_dir) if os.path.isdir(aof_dir) else []:
        if ".base." in name:
            total += file_size(os.path.join(aof_dir, name))
    return total


def wait_rewrite(con):
    for _ in range(600):
        info = con.call("INFO", "persistence")
        if "aof_rewrite_in_progress:0" in info and "aof_rewrite_scheduled:0" in info:
            return
        time.sleep(0.05)
    raise TimeoutError("AOF rewrite did not finish")


def settled_memory(con):
    """used_memory once the server has finished growing its dictionaries (a
    rehash in progress holds the old table and the new one)."""
    last = con.used_memory()
    for _ in range(50):
        time.sleep(0.12)
        now = con.used_memory()
        if now == last:
            return now
        last = now
    raise TimeoutError("used_memory never settled")


def measure(con, directory, calls_for, keys, port):
    con.call("FLUSHALL")
    before = settled_memory(con)
    calls = []
    for i in range(keys):
        calls.extend(calls_for("k:%09d" % i))
    # From a connection of its own, closed before measuring: a pipeline's
    # query and reply buffers count in used_memory while their client lives.
    writer = Conn(port)
    writer.pipeline(calls)
    writer.sock.close()
    for _ in range(100):
        if "connected_clients:1\r" in con.call("INFO", "clients"):
            break
        time.sleep(0.05)
    ram = (settled_memory(con) - before) / keys
    con.call("SAVE")
    rdb = file_size(os.path.join(directory, "dump.rdb"))
    con.call("BGREWRITEAOF")
    wait_rewrite(con)
    aof = aof_size(directory)
    return ram, rdb, aof


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--keys", type=int, default=200_000)
    ap.add_argument("--module", default=os.path.join(ROOT, "target", "release", "libwarden.so"))
    ap.add_argument("--redis-cell", default=os.environ.get("BENCH_REDIS_CELL", PEER_CELL))
    args = ap.parse_args()
    has_cell = args.redis_cell != "none" and os.path.exists(args.redis_cell)
    directory = tempfile.mkdtemp(prefix="warden-memory.")
    port = free_port()
    cmd = ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--dir", directory,
           "--save", "", "--appendonly", "yes", "--aof-use-rdb-preamble", "no",
           "--rdbcompression", "no", "--auto-aof-rewrite-percentage", "0",
           "--loadmodule", os.path.abspath(args.module)]
    if has_cell:
        cmd += ["--loadmodule", os.path.abspath(args.redis_cell)]
    server = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(200):
            try:
                con = Conn(port)
                con.call("PING")
                break
            except OSError:
                time.sleep(0.05)
        else:
            raise RuntimeError("redis-server did not start")
        con.call("FLUSHALL")
        con.call("SAVE")
        empty_rdb = file_size(os.path.join(directory, "dump.rdb"))
        con.call("BGREWRITEAOF")
        wait_rewrite(con)
        empty_aof = aof_size(directory)
        version = con.call("INFO", "server").split("redis_version:")[1].split()[0]
        print("# warden: bytes per key\n")
        print("- %s keys of 11 characters per row; redis-server %s; %s\n" % (
            format(args.keys, ","), version,
            "redis-cell from " + args.redis_cell if has_cell else "redis-cell absent: its row is left out"))
        print("| kind | used_memory B/key | RDB B/key | AOF rewrite B/key |")
        print("|---|---:|---:|---:|")
        for name, calls_for in rows(has_cell):
            ram, rdb, aof = measure(con, directory, calls_for, args.keys, port)
            print("| %s | %.0f | %.1f | %.1f |" % (
                name, ram, (rdb - empty_rdb) / args.keys, (aof - empty_aof) / args.keys))
            sys.stdout.flush()
    finally:
        server.terminate()
        server.wait()
        shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    main()
