#!/usr/bin/env python3
"""warden benchmark, idle waiters: what the server spends while clients wait
and nothing happens, next to the same number of clients blocked in BLPOP.

    python3 tests/bench/idle_waiters.py [--keys 1000,5000,10000] [--seconds 10]
                                        [--module PATH]

Per size N and per kind, a fresh redis-server (loopback, free port, temp dir,
no persistence, default hz, maxclients and the open-file limit raised for N
clients) with warden loaded:

  DLOCK WAIT  N keys k<i>, each held by "holder" for 600 s, and N connections,
              one per key, each blocked in DLOCK.ACQUIRE k<i> other 60000 WAIT 60000;
  BLPOP       N connections, each blocked in BLPOP list<i> 0;
  held        the N held keys of DLOCK WAIT and N connections that sent one
              PING, nobody waiting: what the keys and connections cost alone
              (shown for attribution; the goal compares with BLPOP).

Once INFO clients reports all N blocked (and, for DLOCK, INFO warden's
locks_waiting; for held, N connected), the server's CPU time (utime + stime of /proc/<pid>/stat) is
read over --seconds of nothing happening: the figure is that time as % of one
core. The goal (issue 27): at 10,000 keys, DLOCK WAIT within 1 % of a core of
BLPOP. Prints a Markdown table and one PASS/MISS line per size of 10,000 or
more. Python 3 standard library only.
"""

import argparse
import os
import resource
import shutil
import socket
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # no tests/bench/__pycache__ from importing memory.py
from memory import Conn, free_port, resp  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GOAL_KEYS = 10_000
GOAL_POINTS = 1.0  # % of a core above BLPOP
CLK_TCK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    """utime + stime of process `pid`, in seconds."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    # After the command name: state is field 3, utime 14 and stime 15 (1-based).
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def cpu_share(server, seconds):
    """% of a core `server` spends over the next `seconds`."""
    before = cpu_seconds(server.proc.pid)
    time.sleep(seconds)
    return 100.0 * (cpu_seconds(server.proc.pid) - before) / seconds


def info_field(con, section, name):
    for line in con.call("INFO", section).splitlines():
        if line.startswith(name + ":"):
            return int(line.split(":")[1])
    raise ValueError("no %s in INFO %s" % (name, section))


class Server:
    """A redis-server with warden, in its own directory, killed on exit."""

    def __init__(self, module, clients, module_args=()):
        self.dir = tempfile.mkdtemp(prefix="warden-idle-")
        self.port = free_port()
        cmd = ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1",
               "--dir", self.dir, "--save", "", "--appendonly", "no",
               "--maxclients", str(clients + 100), "--loadmodule", module, *module_args]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 10
        while True:
            try:
                self.con = Conn(self.port)
                self.con.call("PING")
                break
            except (ConnectionError, OSError, RuntimeError):
                if time.time() > deadline or self.proc.poll() is not None:
                    self.close()
                    raise RuntimeError("redis-server did not start on port %d" % self.port)
                time.sleep(0.05)
        granted = info_field(self.con, "clients", "maxclients")
        if granted < clients + 1:
            self.close()
            raise RuntimeError("the server allows %d clients, %d needed (ulimit -n?)"
                               % (granted, clients + 1))

    def close(self):
        self.proc.kill()
        self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


def connect_all(server, calls, field, settle_s=30):
    """Opens one connection per call, sends it, and waits until INFO clients'
    `field` (blocked_clients, connected_clients) counts every one of them.
    Returns the sockets (kept open)."""
    socks = []
    for call in calls:
        s = socket.create_connection(("127.0.0.1", server.port))
        s.sendall(resp(call))
        socks.append(s)
    deadline = time.time() + settle_s
    while info_field(server.con, "clients", field) < len(calls):
        if time.time() > deadline:
            raise RuntimeError("only %d of %d clients counted in %s"
                               % (info_field(server.con, "clients", field), len(calls), field))
        time.sleep(0.1)
    return socks


def idle_cpu(module, kind, n, seconds):
    """% of a core the server spends over `seconds` with n clients of `kind` blocked."""
    server = Server(module, n)
    socks = []
    try:
        if kind in ("dlock", "held"):
            server.con.pipeline([["DLOCK.ACQUIRE", "k%d" % i, "holder", 600000] for i in range(n)])
        if kind == "dlock":
            calls = [["DLOCK.ACQUIRE", "k%d" % i, "other", 60000, "WAIT", 60000] for i in range(n)]
        elif kind == "blpop":
            calls = [["BLPOP", "list%d" % i, 0] for i in range(n)]
        else:
            calls = [["PING"]] * n
        # The bench's own connection is one more connected client.
        field = "connected_clients" if kind == "held" else "blocked_clients"
        socks = connect_all(server, calls, field)
        if kind == "dlock" and info_field(server.con, "warden", "warden_locks_waiting") != n:
            raise RuntimeError("INFO warden_locks_waiting is not %d" % n)
        time.sleep(1)  # the last connections' work is done
        share = cpu_share(server, seconds)
        still = info_field(server.con, "clients", "blocked_clients")
        if still != (0 if kind == "held" else n):
            raise RuntimeError("%d clients blocked after the window (%s, %d)" % (still, kind, n))
        return share
    finally:
        for s in socks:
            s.close()
        server.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--keys", default="1000,5000,10000",
                    help="comma-separated numbers of waiting clients (default 1000,5000,10000)")
    ap.add_argument("--seconds", type=float, default=10.0, help="measurement window (default 10)")
    ap.add_argument("--module", default=os.path.join(ROOT, "target", "release", "libwarden.so"))
    args = ap.parse_args()
    module = os.path.abspath(args.module)
    sizes = [int(k) for k in args.keys.split(",")]
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    need = max(sizes) + 256  # each process (this one, the server) holds a socket per client
    if hard != resource.RLIM_INFINITY and hard < need:
        sys.exit("the open-file limit is %d; %d needed (raise ulimit -Hn)" % (hard, need))
    resource.setrlimit(resource.RLIMIT_NOFILE, (need if hard == resource.RLIM_INFINITY else hard, hard))

    print("## Idle waiters: server CPU while clients wait and nothing happens (%g s)\n" % args.seconds)
    print("| waiting clients | DLOCK.ACQUIRE … WAIT, % of a core | BLPOP, % of a core | difference "
          "| held keys, nobody waiting |")
    print("|---:|---:|---:|---:|---:|")
    verdicts = []
    for n in sizes:
        dlock = idle_cpu(module, "dlock", n, args.seconds)
        blpop = idle_cpu(module, "blpop", n, args.seconds)
        held = idle_cpu(module, "held", n, args.seconds)
        diff = dlock - blpop
        print("| %d | %.2f | %.2f | %+.2f | %.2f |" % (n, dlock, blpop, diff, held), flush=True)
        if n >= GOAL_KEYS:
            verdicts.append("%s idle waiters, %d keys: DLOCK WAIT - BLPOP = %+.2f %% of a core (goal <= %.1f)"
                            % ("PASS" if diff <= GOAL_POINTS else "MISS", n, diff, GOAL_POINTS))
    print()
    for v in verdicts:
        print(v)


if __name__ == "__main__":
    main()
