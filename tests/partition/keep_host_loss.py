"""The keep-host-loss run of the partition suite (see run.sh, README.md).

One redis-server with the module (node 1, default settings: tcp-keepalive 300,
the kernel's defaults) and a holder host per case (nodes 2-6, each its own
namespace on the bridge). In each case a holder takes `DLOCK.ACQUIRE job:<case>
holder 3000 KEEP` on its host, a waiter in the client namespace queues with
`WAIT 0`, then the holder's host goes away. A kept lock must reach the waiter
within ttl + 2 s of a host that vanished, and must stay with a holder that is
only frozen. The cases run at once; the table says how long each waited.

`python keep_host_loss.py holder …` is the holder process itself.
"""

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time

from harness import PORT, Nodes, log, node_ip, scan_logs

KEY_PREFIX = "job:"
TTL_MS = 3000
# A vanished holder's lock must reach the waiter within this long after the cut.
BOUND_S = TTL_MS / 1000 + 2.0
# How long past the bound a case waits before it reports the lock still held.
MARGIN_S = 1.0
# How long a frozen holder must keep its lock.
FROZEN_S = 3 * TTL_MS / 1000
# After the frozen holder is killed, its kernel closes the socket: the lock goes at once.
KILLED_BOUND_S = 1.0
SETTLE_TIMEOUT_S = 5.0


class Case:
    """One way for the holder's host to go: its node, how it is cut, whether the lock
    is kept, whether a reply is in flight at the cut, whether the waiter must get
    the lock (else: must not, for FROZEN_S)."""

    def __init__(self, name, node, how, cut, keep=True, in_flight=False, granted=True):
        self.name = name
        self.node = node
        self.how = how
        self.cut = cut
        self.keep = keep
        self.in_flight = in_flight
        self.granted = granted


def link_down(nodes, case, holder):
    """The holder's host takes its own link down (inside its namespace)."""
    subprocess.run(["ip", "-n", nodes.ns(case.node), "link", "set", "eth0", "down"], check=True)


def port_down(nodes, case, holder):
    """The bridge drops every packet to and from the holder's host (its bridge port
    goes down); neither end's kernel is told."""
    subprocess.run(["ip", "link", "set", f"vb{case.node}", "down"], check=True)


def freeze(nodes, case, holder):
    """The holder process stops (SIGSTOP); its host and kernel stay up."""
    os.kill(holder.pid, signal.SIGSTOP)


CASES = [
    Case("a", 2, "holder's link down, idle", link_down),
    Case("b", 3, "all its packets dropped (bridge port down), idle", port_down),
    Case("c", 4, "bridge port down, BLPOP reply in flight", port_down, in_flight=True),
    Case("d", 5, "holder frozen (SIGSTOP), host up", freeze, granted=False),
    Case("control", 6, "no KEEP: holder's link down, idle", link_down, keep=False),
]


def resp(*args):
    """A command in RESP."""
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        b = str(a).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(b), b))
    return b"".join(out)


def read_line(sock):
    """One reply line (the replies here are one line: a token, nil or an error)."""
    data = b""
    while not data.endswith(b"\r\n"):
        chunk = sock.recv(1)
        if not chunk:
            raise ConnectionError("closed")
        data += chunk
    return data[:-2].decode()


def holder_main(args):
    """The holder: takes the lock and prints the reply, then at each line on stdin
    sends `BLPOP nokey 0.5` on its lock connection (the reply is not read) and
    prints `sent`. Exits at the end of stdin."""
    sock = socket.create_connection((args.host, PORT), timeout=5)
    keep = ["KEEP"] if args.keep else []
    sock.sendall(resp("DLOCK.ACQUIRE", args.key, "holder", TTL_MS, *keep))
    print(read_line(sock), flush=True)
    for _ in sys.stdin:
        sock.sendall(resp("BLPOP", "nokey", 0.5))
        print("sent", flush=True)


def start_holder(nodes, case):
    """Starts the holder in its host's namespace, records its pid (run.sh kills it on
    any failure) and waits for its grant."""
    cmd = ["ip", "netns", "exec", nodes.ns(case.node), sys.executable, os.path.abspath(__file__),
           "holder", "--host", node_ip(1), "--key", KEY_PREFIX + case.name]
    if case.keep:
        cmd.append("--keep")
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    with open(os.path.join(nodes.args.dir, "pids"), "a") as f:
        f.write(f"{proc.pid}\n")
    reply = proc.stdout.readline().strip()
    if not reply.startswith(":"):
        raise RuntimeError(f"holder {case.name}: no grant: {reply!r}")
    return proc


def lock_info(server, key):
    """DLOCK.INFO as a dict ({} when the key is free)."""
    reply = server.execute_command("DLOCK.INFO", key) or []
    if isinstance(reply, dict):
        return {k.decode(): v for k, v in reply.items()}
    return {k.decode(): v for k, v in zip(reply[::2], reply[1::2])}


def wait_for(what, check):
    """Polls check() until it is true."""
    deadline = time.monotonic() + SETTLE_TIMEOUT_S
    while not check():
        if time.monotonic() > deadline:
            raise RuntimeError(f"timed out waiting for {what}")
        time.sleep(0.02)


def blpop_blocked(server):
    """Whether a client is blocked in BLPOP on the server."""
    return any(c.get("cmd") == "blpop" for c in server.client_list())


def await_grant(waiter, since, within):
    """Seconds from `since` to the waiter's grant, or None if none came `within`
    seconds of it."""
    remaining = since + within - time.monotonic()
    if remaining <= 0:
        return None
    waiter.settimeout(remaining)
    try:
        reply = read_line(waiter)
    except socket.timeout:
        return None
    if not reply.startswith(":"):
        raise RuntimeError(f"waiter: {reply!r}")
    return time.monotonic() - since


def run_case(nodes, case):
    """One case; returns its row for the table."""
    key = KEY_PREFIX + case.name
    server = nodes.direct(1, 2.0)
    holder = start_holder(nodes, case)
    waiter = socket.create_connection((node_ip(1), PORT), timeout=5)
    try:
        waiter.sendall(resp("DLOCK.ACQUIRE", key, "waiter", TTL_MS, "WAIT", 0))
        wait_for("the waiter to queue", lambda: lock_info(server, key).get("waiters") == 1)
        if case.in_flight:
            holder.stdin.write("blpop\n")
            holder.stdin.flush()
            if holder.stdout.readline().strip() != "sent":
                raise RuntimeError("holder: BLPOP not sent")
            wait_for("the BLPOP to block", lambda: blpop_blocked(server))
        cut = time.monotonic()
        case.cut(nodes, case, holder)
        row = {"case": case.name, "how": case.how, "lock": "KEEP" if case.keep else "no KEEP"}
        measure = after_vanishing if case.granted else after_freezing
        row.update(measure(server, key, holder, waiter, cut))
        return row
    finally:
        waiter.close()
        holder.kill()
        holder.wait()


def after_vanishing(server, key, holder, waiter, cut):
    """The waiter must have the lock within BOUND_S of the cut; waits MARGIN_S more
    (or PARTITION_HOST_LOSS_WAIT seconds) before it gives up."""
    wait_s = float(os.environ.get("PARTITION_HOST_LOSS_WAIT", BOUND_S + MARGIN_S))
    after = await_grant(waiter, cut, wait_s)
    if after is None:
        info = lock_info(server, key)
        owner = info.get("owner", b"").decode() or None
        measured = f"NOT granted within {wait_s:.1f} s (held by {owner}, ttl_ms {info.get('ttl_ms')})"
    else:
        measured = f"granted {after:.2f} s after the cut"
    return {"expected": f"granted <= {BOUND_S:.0f} s after the cut", "measured": measured,
            "granted after (s)": None if after is None else round(after, 2),
            "ok": after is not None and after <= BOUND_S}


def after_freezing(server, key, holder, waiter, cut):
    """The waiter must not have the lock for FROZEN_S, and must have it within
    KILLED_BOUND_S once the holder is killed (its kernel closes the socket)."""
    early = await_grant(waiter, cut, FROZEN_S)
    if early is not None:
        return {"expected": f"held {FROZEN_S:.0f} s", "measured": f"granted {early:.2f} s after the freeze",
                "granted after (s)": round(early, 2), "ok": False}
    holder.kill()
    killed = time.monotonic()
    after = await_grant(waiter, killed, KILLED_BOUND_S + MARGIN_S)
    measured = f"held {FROZEN_S:.0f} s; " + (
        f"granted {after:.3f} s after the kill" if after is not None else "NOT granted after the kill")
    return {"expected": f"held {FROZEN_S:.0f} s, granted <= {KILLED_BOUND_S:.0f} s after a kill -9",
            "measured": measured, "granted after (s)": None,
            "granted after the kill (s)": None if after is None else round(after, 3),
            "ok": after is not None and after <= KILLED_BOUND_S}


def run_all(nodes):
    """Runs the cases at once (each on its own key and holder host)."""
    rows = {}

    def one(case):
        try:
            rows[case.name] = run_case(nodes, case)
        except Exception as e:  # a broken case is a failed row, not a lost thread
            rows[case.name] = {"case": case.name, "how": case.how, "error": repr(e), "ok": False}

    threads = [threading.Thread(target=one, args=(c,)) for c in CASES]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return [rows[c.name] for c in CASES]


def settings(nodes):
    """The server's tcp-keepalive and its namespace's TCP retry settings."""
    server = nodes.direct(1, 2.0)
    keepalive = server.config_get("tcp-keepalive")["tcp-keepalive"]
    out = subprocess.run(["ip", "netns", "exec", nodes.ns(1), "sysctl", "-n", "net.ipv4.tcp_retries2"],
                         capture_output=True, text=True)
    return f"tcp-keepalive {keepalive}, net.ipv4.tcp_retries2 {out.stdout.strip() or '?'}"


def describe(row):
    """One line of the table."""
    if "error" in row:
        return f"  {row['case']:<8} {row['how']:<50} ERROR {row['error']}"
    verdict = "ok" if row["ok"] else "FAIL"
    return (f"  {row['case']:<8} {row['how']:<50} {row['lock']:<8} {row['measured']}"
            f"  [{verdict}: {row['expected']}]")


def main():
    """The run: starts the server, runs the cases, prints the table; exit 1 when a case fails."""
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="role")
    h = sub.add_parser("holder")
    h.add_argument("--host", required=True)
    h.add_argument("--key", required=True)
    h.add_argument("--keep", action="store_true")
    for flag in ("--run", "--dir", "--module", "--server", "--ns-prefix"):
        p.add_argument(flag)
    p.add_argument("--nodes", type=int)
    args = p.parse_args()
    if args.role == "holder":
        return holder_main(args)
    nodes = Nodes(args)
    nodes.node_conf(1, [])
    nodes.start_node(1)
    nodes.wait_up(1)
    conf = settings(nodes)
    log(f"{args.run}: one server ({conf}), ttl {TTL_MS} ms, {len(CASES)} holder hosts")
    rows = run_all(nodes)
    problems = scan_logs(args)
    result = {"run": args.run, "settings": conf, "bound (s)": BOUND_S, "cases": rows,
              "log problems": problems}
    with open(os.path.join(args.dir, "result.json"), "w") as f:
        json.dump(result, f, indent=1)
    for row in rows:
        print(describe(row), flush=True)
    print(f"  {'log problems':<8} {problems}", flush=True)
    failures = [f"case {r['case']} ({r['how']})" for r in rows if not r["ok"]]
    if problems:
        failures.append("crash or warden warning in a log")
    for f in failures:
        print(f"partition: {args.run}: FAILED: {f}", flush=True)
    report_only = os.environ.get("PARTITION_REPORT_ONLY") == "1"
    return 0 if report_only or not failures else 1


if __name__ == "__main__":
    sys.exit(main())
