"""One run of the partition suite, inside the client namespace (see run.sh).

Nodes run redis-server with the module, one per network namespace: 3 nodes with
a Sentinel beside each (runs `sentinel-*`), or 6 nodes forming a Redis Cluster of
3 masters and 3 replicas (runs `cluster-*`). Four workers contend for one lock
through redis-py's Sentinel or cluster client, write to an in-process fencing
resource and increment a counter with DLOCK.GUARD; a nemesis splits the node
serving the lock from the other nodes (its clients still reach it), kills it with
-9 and restarts it, and isolates it. The table counts what went wrong; the asserts
fail the run (unless PARTITION_REPORT_ONLY=1).
"""

import argparse
import bisect
import itertools
import json
import os
import subprocess
import sys
import threading
import time
import uuid

import redis
from redis.backoff import NoBackoff
from redis.cluster import ClusterNode, RedisCluster
from redis.retry import Retry
from redis.sentinel import Sentinel

MASTER_NAME = "wm"
PORT = 6379
SENTINEL_PORT = 26379
# One hash tag: in a cluster the lock, the counter and the probes share a slot.
LOCK = "lock:{r}"
COUNTER = "counter:{r}"
CLUSTER_NODE_TIMEOUT_MS = 1000
# The node timeout of a cluster master while it is split off: longer than the split,
# so it serves its clients throughout while the others fail it over.
SPLIT_NODE_TIMEOUT_MS = 10000
# How often the cluster workers that refresh their slot map do so.
SLOT_MAP_REFRESH_S = 0.5
WORKERS = 4
LEASE_MS = 1500
WAIT_MS = 1000
ISOLATION_S = 6.0
RESTART_AFTER_S = 3.0
PROBES = 5
STABLE_TIMEOUT_S = 30.0
TAIL_S = 3.0
MONITOR_EVERY_S = 0.05


def node_ip(i):
    """Address of node i (1-based) inside its namespace."""
    return f"10.77.0.{10 + i}"


def log(msg):
    """A progress line."""
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


class Nodes:
    """The nodes (and Sentinels) of one run: configs, processes, addresses."""

    def __init__(self, args):
        self.args = args
        self.n = args.nodes
        self.pids = {}

    def ns(self, i):
        """Namespace of node i."""
        return f"{self.args.ns_prefix}n{i}"

    def record_pid(self, path):
        """Reads a pidfile (waiting for it) and appends the pid to RUN_DIR/pids."""
        for _ in range(100):
            try:
                with open(path) as f:
                    pid = int(f.read().strip())
                with open(os.path.join(self.args.dir, "pids"), "a") as f:
                    f.write(f"{pid}\n")
                return pid
            except (OSError, ValueError):
                time.sleep(0.05)
        raise RuntimeError(f"no pid in {path}")

    def node_conf(self, i, extra):
        """Writes node i's redis.conf and returns its path."""
        d = os.path.join(self.args.dir, f"n{i}")
        os.makedirs(d, exist_ok=True)
        lines = [
            f"port {PORT}",
            f"bind {node_ip(i)} 127.0.0.1",
            "protected-mode no",
            "daemonize yes",
            f"pidfile {d}/redis.pid",
            f"logfile {d}/redis.log",
            f"dir {d}",
            "appendonly yes",
            'save ""',
            "repl-diskless-sync-delay 0",
            f"loadmodule {self.args.module}",
        ]
        if self.args.run.startswith("cluster"):
            lines += [
                "cluster-enabled yes",
                f"cluster-config-file {d}/nodes.conf",
                f"cluster-node-timeout {CLUSTER_NODE_TIMEOUT_MS}",
            ]
        elif i > 1:
            lines.append(f"replicaof {node_ip(1)} {PORT}")
        lines += extra
        path = os.path.join(d, "redis.conf")
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")
        return path

    def start_node(self, i):
        """Starts (or restarts) node i from its config."""
        d = os.path.join(self.args.dir, f"n{i}")
        pidfile = f"{d}/redis.pid"
        if os.path.exists(pidfile):
            os.remove(pidfile)
        subprocess.run(
            ["ip", "netns", "exec", self.ns(i), self.args.server, f"{d}/redis.conf"],
            check=True,
        )
        self.pids[i] = self.record_pid(pidfile)

    def start_sentinel(self, i):
        """Starts node i's Sentinel."""
        d = os.path.join(self.args.dir, f"s{i}")
        os.makedirs(d, exist_ok=True)
        conf = os.path.join(d, "sentinel.conf")
        with open(conf, "w") as f:
            f.write(
                "\n".join(
                    [
                        f"port {SENTINEL_PORT}",
                        f"bind {node_ip(i)}",
                        "protected-mode no",
                        "daemonize yes",
                        f"pidfile {d}/sentinel.pid",
                        f"logfile {d}/sentinel.log",
                        f"dir {d}",
                        f"sentinel monitor {MASTER_NAME} {node_ip(1)} {PORT} 2",
                        f"sentinel down-after-milliseconds {MASTER_NAME} 1000",
                        f"sentinel failover-timeout {MASTER_NAME} 5000",
                        f"sentinel parallel-syncs {MASTER_NAME} 1",
                    ]
                )
                + "\n"
            )
        subprocess.run(
            ["ip", "netns", "exec", self.ns(i), self.args.server, conf, "--sentinel"],
            check=True,
        )
        self.record_pid(f"{d}/sentinel.pid")

    def wait_up(self, i):
        """Waits until node i answers PING (it has loaded its data)."""
        deadline = time.monotonic() + STABLE_TIMEOUT_S
        while time.monotonic() < deadline:
            try:
                if self.direct(i).ping():
                    return
            except redis.RedisError:
                time.sleep(0.05)
        raise RuntimeError(f"node {i} does not answer")

    def direct(self, i, timeout=0.3):
        """A plain client of node i."""
        return redis.Redis(host=node_ip(i), port=PORT, socket_timeout=timeout,
                           socket_connect_timeout=timeout)

    def index_of(self, host):
        """Node index of an address."""
        return int(host.rsplit(".", 1)[1]) - 10


class Epochs:
    """Replication epochs: each `master_replid` in the order first seen on a master,
    except that a master restarted from its own data (kill -9) continues the epoch it
    last led until it is seen as a replica. It comes back with a new replid, but its
    tokens go on from its data: a restart promotes nothing, and a stale master
    restarted after its replica's promotion is older than that promotion."""

    def __init__(self):
        self.lock = threading.Lock()
        self.order = {}
        self.count = 0
        self.last_master_replid = {}
        self.restarted = set()

    def restart(self, node):
        """Marks a node as restarting from its own data."""
        with self.lock:
            self.restarted.add(node)

    def saw(self, node, role, replid):
        """Records a node's role and replid; returns the order of the epoch it leads
        or, not a master, the one it last led (-1: none)."""
        with self.lock:
            if role == "master":
                if replid not in self.order:
                    last = self.last_master_replid.get(node)
                    if node in self.restarted and last is not None:
                        self.order[replid] = self.order[last]
                    else:
                        self.order[replid] = self.count
                        self.count += 1
                self.last_master_replid[node] = replid
            else:
                self.restarted.discard(node)
            last = self.last_master_replid.get(node)
            return self.order[last] if last is not None else -1


def parse_info(text):
    """INFO (as redis-py parsed it, or raw text) as a dict."""
    if isinstance(text, dict):
        return text
    if isinstance(text, bytes):
        text = text.decode()
    out = {}
    for line in text.splitlines():
        if ":" in line and not line.startswith("#"):
            k, v = line.split(":", 1)
            out[k] = v
    return out


class Resource:
    """The external fencing resource: accepts a write iff its token is at least the
    highest accepted so far."""

    def __init__(self):
        self.lock = threading.Lock()
        self.highest = 0
        self.highest_epoch = -1
        self.accepted = 0
        self.rejected = 0
        self.older_epoch = 0
        self.overlapping = 0
        self.live = {}

    def write(self, token, epoch, worker):
        """One write carrying `token` from a grant of `epoch`."""
        with self.lock:
            if token < self.highest:
                self.rejected += 1
                return False
            self.highest = token
            self.accepted += 1
            if epoch < self.highest_epoch:
                self.older_epoch += 1
            self.highest_epoch = max(self.highest_epoch, epoch)
            if any(w != worker for w in self.live):
                self.overlapping += 1
            return True

    def hold(self, worker, on):
        """Marks a worker as holding a grant it believes live (for overlaps)."""
        with self.lock:
            if on:
                self.live[worker] = True
            else:
                self.live.pop(worker, None)


class Run:
    """State shared by workers, monitor and nemesis."""

    def __init__(self, args, safe_wait):
        self.args = args
        self.stop = threading.Event()
        self.epochs = Epochs()
        self.resource = Resource()
        self.lock = threading.Lock()
        self.grants = []
        self.errors = {}
        self.acked = 0
        self.safe_wait = safe_wait

    def error(self, kind):
        """Counts an error reply or exception by kind."""
        with self.lock:
            self.errors[kind] = self.errors.get(kind, 0) + 1

    def record(self, grant):
        """Keeps a grant: (started, received, token, epoch, node, ended)."""
        with self.lock:
            self.grants.append(grant)


def classify(exc):
    """A short name for an error."""
    text = str(exc)
    for prefix in ("NOREPLICAS", "READONLY", "FENCED", "UNBLOCKED", "LOADING", "MASTERDOWN",
                   "CLUSTERDOWN"):
        if text.startswith(prefix) or prefix in text[:40]:
            return prefix
    return type(exc).__name__


CLIENT_ERRORS = (redis.RedisError, redis.exceptions.RedisClusterException, OSError)


def take(pool):
    """A connection from a redis-py pool (redis-py before 5.3 wants a command name)."""
    try:
        return pool.get_connection()
    except TypeError:
        return pool.get_connection("PING")


def raw(client, *args):
    """A command's reply as the server sent it (no redis-py response callback)."""
    conn = take(client.connection_pool)
    try:
        conn.send_command(*args)
        return conn.read_response()
    except BaseException:
        conn.disconnect()
        raise
    finally:
        client.connection_pool.release(conn)


def monitor(nodes, run):
    """Polls every node's INFO replication to learn the epochs."""
    clients = {i: nodes.direct(i, 0.2) for i in range(1, nodes.n + 1)}
    while not run.stop.is_set():
        for i, c in clients.items():
            try:
                info = parse_info(raw(c, "INFO", "replication"))
                run.epochs.saw(i, info.get("role"), info.get("master_replid"))
            except CLIENT_ERRORS:
                pass
        time.sleep(MONITOR_EVERY_S)


class SentinelSession:
    """One worker's way to the master through redis-py's Sentinel client: one
    connection from the master pool per cycle, so every command of a cycle goes to
    the node that granted."""

    def __init__(self, nodes, n, sentinels):
        # Even workers: redis-py's default settings, as most applications run them
        # (no socket timeouts: a connection to a master that was cut off resumes
        # when the link heals; the master is looked up only on reconnect). Odd
        # workers: 0.5 s timeouts, no retries on the Sentinel connections, and they
        # ask the Sentinels for the master at every cycle in their own order:
        # worker 1 asks s2, s3, s1, worker 3 s1, s2, s3. In a split, whoever asks
        # the cut-off master's Sentinel first is told the old master and whoever
        # asks the others first the promoted one, so both masters grant.
        self.nodes = nodes
        self.order = None
        if n % 2 == 0:
            self.sentinel = Sentinel(sentinels)
            master = self.sentinel.master_for(MASTER_NAME)
        else:
            fast = {"socket_timeout": 0.5, "retry": Retry(NoBackoff(), 0)}
            order = sentinels[n % len(sentinels):] + sentinels[:n % len(sentinels)]
            self.sentinel = Sentinel(order, sentinel_kwargs=fast, socket_timeout=0.5)
            self.order = list(self.sentinel.sentinels)
            master = self.sentinel.master_for(MASTER_NAME, socket_timeout=0.5)
        self.pool = master.connection_pool
        self.conn = None

    def begin(self):
        """Takes the connection of this cycle. An odd worker first asks its Sentinels
        for the master in its own order (redis-py moves the one that answered to the
        front: the order is put back), and the pool drops its idle connections when
        the answer names another master."""
        if self.order:
            self.sentinel.sentinels[:] = self.order
            self.pool.get_master_address()
        self.conn = take(self.pool)

    def keyed(self, *args):
        """A command on the lock's key."""
        self.conn.send_command(*args)
        return self.conn.read_response()

    def on_node(self, *args):
        """A keyless command on the node that served the last keyed one."""
        return self.keyed(*args)

    def node(self):
        """Index of the node that served the last keyed command."""
        return self.nodes.index_of(self.conn.host)

    def end(self, failed):
        """Gives the connection back (dropped after an error)."""
        if self.conn is not None:
            if failed:
                self.conn.disconnect()
            self.pool.release(self.conn)
        self.conn = None


class ClusterSession:
    """One worker's way to the lock's slot through redis-py's cluster client, which
    follows MOVED and re-reads the slot map after connection errors. Even workers
    keep the default socket timeout (none) and the slot map until an error; odd
    workers use 0.5 s and also re-read the slot map every SLOT_MAP_REFRESH_S (from
    a node redis-py picks at random), as clients with a periodic topology refresh
    do: in a split they follow the promoted replica while the even ones stay with
    the cut-off master. All connect with a 1 s timeout: the default (none) leaves a
    worker in SYN retries for two minutes when its cached node is cut off."""

    def __init__(self, nodes, n):
        self.nodes = nodes
        self.kwargs = {"socket_connect_timeout": 1.0}
        self.refresh = n % 2 == 1
        if self.refresh:
            self.kwargs["socket_timeout"] = 0.5
        self.rc = None
        self.read_at = 0.0

    def begin(self):
        """Makes the client (it reads the slot map) if there is none yet, or re-reads
        the slot map when it is due."""
        now = time.monotonic()
        if self.rc is None:
            startup = [ClusterNode(node_ip(i), PORT) for i in range(1, self.nodes.n + 1)]
            self.rc = RedisCluster(startup_nodes=startup, **self.kwargs)
            self.read_at = now
        elif self.refresh and now - self.read_at >= SLOT_MAP_REFRESH_S:
            self.rc.nodes_manager.initialize()
            self.read_at = now

    def keyed(self, *args):
        """A command routed by its key's slot."""
        return self.rc.execute_command(*args)

    def on_node(self, *args):
        """A keyless command on the node the client routes the lock's slot to."""
        return self.rc.execute_command(*args, target_nodes=self.rc.get_node_from_key(LOCK))

    def node(self):
        """Index of the node the client routes the lock's slot to (the one that
        answered the last keyed command: each worker has its own client)."""
        return self.nodes.index_of(self.rc.get_node_from_key(LOCK).host)

    def end(self, failed):
        """Nothing to give back: the client keeps its connections."""


def worker(nodes, run, n, session):
    """Acquire, write to the resource, GUARD INCR, release: over and over."""
    while not run.stop.is_set():
        owner = f"w{n}-{uuid.uuid4().hex[:8]}"
        failed = False
        grant = None
        try:
            session.begin()
            started = time.monotonic()
            token = session.keyed("DLOCK.ACQUIRE", LOCK, owner, LEASE_MS, "WAIT", WAIT_MS)
            if token is None:
                continue
            received = time.monotonic()
            node = session.node()
            info = parse_info(session.on_node("INFO", "replication"))
            # The node was master when the grant was made unless it was demoted
            # since; a demoted node's grant belongs to the epoch it last led.
            epoch = run.epochs.saw(node, info.get("role"), info.get("master_replid"))
            grant = (started, received, token, epoch, node)
            run.resource.hold(n, True)
            for _ in range(2):
                run.resource.write(token, epoch, n)
                time.sleep(0.003)
            session.keyed("DLOCK.GUARD", LOCK, owner, token, "INCR", COUNTER)
            acked = True
            if run.safe_wait:
                k, ms = run.safe_wait
                acked = session.on_node("WAIT", k, ms) >= k
            if acked:
                with run.lock:
                    run.acked += 1
            run.resource.hold(n, False)
            session.keyed("DLOCK.RELEASE", LOCK, owner, "TOKEN", token)
        except CLIENT_ERRORS as e:
            failed = True
            run.resource.hold(n, False)
            run.error(classify(e))
            time.sleep(0.05)
        finally:
            if grant:
                run.record(grant + (time.monotonic(),))
            session.end(failed)


class SentinelTopology:
    """3 nodes, node 1 the first master, a Sentinel beside each (quorum 2)."""

    def __init__(self, nodes):
        self.nodes = nodes
        self.sentinels = [(node_ip(i), SENTINEL_PORT) for i in range(1, nodes.n + 1)]

    def form(self):
        """Starts the Sentinels."""
        for i in range(1, self.nodes.n + 1):
            self.nodes.start_sentinel(i)

    def session(self, n):
        """Worker n's client."""
        return SentinelSession(self.nodes, n, self.sentinels)

    def before_split(self, m):
        """Nothing to set: a master cut off from its replicas goes on serving."""

    def after_split(self, m):
        """Nothing to undo."""

    def serving(self):
        """The node serving the lock once stable (every Sentinel names it, it is
        master with all replicas online), else None."""
        seen = set()
        for host, port in self.sentinels:
            try:
                s = redis.Redis(host=host, port=port, socket_timeout=0.3)
                addr = s.execute_command("SENTINEL", "GET-MASTER-ADDR-BY-NAME", MASTER_NAME)
                seen.add(addr[0].decode() if addr else None)
            except CLIENT_ERRORS:
                seen.add(None)
        if len(seen) != 1 or None in seen:
            return None
        m = self.nodes.index_of(seen.pop())
        return m if is_master_with_replicas(self.nodes, m, self.nodes.n - 1) else None


def cluster_nodes(text):
    """CLUSTER NODES as [(address ip, flags, slot ranges)]."""
    if isinstance(text, bytes):
        text = text.decode()
    out = []
    for line in text.splitlines():
        f = line.split()
        if len(f) < 8:
            continue
        ranges = []
        for r in f[8:]:
            if r.startswith("["):
                continue
            lo, _, hi = r.partition("-")
            ranges.append((int(lo), int(hi or lo)))
        out.append((f[1].split(":")[0], f[2].split(","), ranges))
    return out


class ClusterTopology:
    """6 nodes in a Redis Cluster: 3 masters, 3 replicas (`redis-cli --cluster
    create --cluster-replicas 1`), node timeout 1 s, automatic failover."""

    def __init__(self, nodes):
        self.nodes = nodes
        self.slot = redis.crc.key_slot(LOCK.encode())

    def form(self):
        """Creates the cluster."""
        addrs = [f"{node_ip(i)}:{PORT}" for i in range(1, self.nodes.n + 1)]
        for i in range(1, self.nodes.n + 1):
            self.nodes.wait_up(i)
        out = subprocess.run(
            ["redis-cli", "--cluster", "create", *addrs, "--cluster-replicas", "1", "--cluster-yes"],
            capture_output=True, text=True,
        )
        if out.returncode != 0:
            raise RuntimeError(f"redis-cli --cluster create failed:\n{out.stdout}{out.stderr}")

    def session(self, n):
        """Worker n's client."""
        return ClusterSession(self.nodes, n)

    def before_split(self, m):
        """Gives master m a node timeout longer than the split: a master that cannot
        reach the majority stops serving (CLUSTERDOWN) at its node timeout, about
        when its replica is elected; with the longer one it serves its clients
        through the split while the others fail it over."""
        raw(self.nodes.direct(m, 2.0), "CONFIG", "SET", "cluster-node-timeout", SPLIT_NODE_TIMEOUT_MS)

    def after_split(self, m):
        """Gives node m its node timeout back."""
        raw(self.nodes.direct(m, 2.0), "CONFIG", "SET", "cluster-node-timeout", CLUSTER_NODE_TIMEOUT_MS)

    def serving(self):
        """The master of the lock's slot once stable (every node answers with
        cluster_state:ok, flags no node as failing and names the same owner, which
        has an online replica), else None."""
        owners = set()
        for i in range(1, self.nodes.n + 1):
            try:
                c = self.nodes.direct(i)
                if "cluster_state:ok" not in raw(c, "CLUSTER", "INFO").decode():
                    return None
                view = cluster_nodes(raw(c, "CLUSTER", "NODES"))
            except CLIENT_ERRORS:
                return None
            if any("fail" in flags or "fail?" in flags for _, flags, _ in view):
                return None
            owners |= {ip for ip, flags, ranges in view
                       if "master" in flags and any(lo <= self.slot <= hi for lo, hi in ranges)}
        if len(owners) != 1:
            return None
        m = self.nodes.index_of(owners.pop())
        return m if is_master_with_replicas(self.nodes, m, 1) else None


def is_master_with_replicas(nodes, m, wanted):
    """Whether node m is a master with at least `wanted` replicas online."""
    info = parse_info(raw(nodes.direct(m), "INFO", "replication"))
    online = sum(1 for k, v in info.items() if k.startswith("slave") and "online" in v)
    return info.get("role") == "master" and online >= wanted


def wait_stable(topology):
    """Waits for a stable topology; returns the node serving the lock."""
    deadline = time.monotonic() + STABLE_TIMEOUT_S
    while time.monotonic() < deadline:
        try:
            m = topology.serving()
        except CLIENT_ERRORS:
            m = None
        if m is not None:
            return m
        time.sleep(0.1)
    raise RuntimeError("the nodes did not settle on one master with its replicas")


def take_probes(nodes, m, tag):
    """Probe locks on master m, each kept only if WAIT 1 says a replica has it."""
    kept = {}
    c = nodes.direct(m, 2.0)
    for k in range(PROBES):
        key = f"lock:probe:{{r}}:{tag}:{k}"
        token = c.execute_command("DLOCK.ACQUIRE", key, "prober", 60000)
        if token is not None and c.execute_command("WAIT", 1, 1000) >= 1:
            kept[key] = token
    return kept


def blackhole(nodes, m, op):
    """Adds (op "add") or deletes ("del") blackhole routes between node m and every
    other node, both ways, in the nodes' namespaces: replication, the cluster bus
    and Sentinel gossip between them stop; the client namespace reaches them all."""
    for i in range(1, nodes.n + 1):
        if i == m:
            continue
        for a, b in ((m, i), (i, m)):
            subprocess.run(["ip", "-n", nodes.ns(a), "route", op, "blackhole", f"{node_ip(b)}/32"],
                           check=True)


def nemesis(nodes, topology, events, epochs):
    """Runs the events; returns [(name, start, end, node)] and the probe results."""
    done = []
    probes_taken = probes_kept = 0
    for name in events:
        m = wait_stable(topology)
        time.sleep(1.0)
        start = time.monotonic()
        if name == "split":
            log(f"split node {m} from the other nodes (its clients still reach it)")
            topology.before_split(m)
            blackhole(nodes, m, "add")
            time.sleep(ISOLATION_S)
            blackhole(nodes, m, "del")
            topology.after_split(m)
        elif name == "isolate":
            log(f"isolate node {m}")
            subprocess.run(["ip", "link", "set", f"vb{m}", "down"], check=True)
            time.sleep(ISOLATION_S)
            subprocess.run(["ip", "link", "set", f"vb{m}", "up"], check=True)
        elif name == "kill":
            probes = take_probes(nodes, m, len(done))
            probes_taken += len(probes)
            log(f"kill -9 node {m} ({len(probes)} probe locks)")
            os.kill(nodes.pids[m], 9)
            time.sleep(RESTART_AFTER_S)
            epochs.restart(m)
            nodes.start_node(m)
            new = wait_stable(topology)
            c = nodes.direct(new, 2.0)
            for key, token in probes.items():
                reply = c.execute_command("DLOCK.INFO", key)
                if isinstance(reply, list):
                    reply = dict(zip(reply[::2], reply[1::2]))
                fields = {(k.decode() if isinstance(k, bytes) else k): v for k, v in (reply or {}).items()}
                if fields.get("token") == token:
                    probes_kept += 1
        else:
            raise ValueError(name)
        done.append((name, start, time.monotonic(), m))
    wait_stable(topology)
    return done, probes_taken, probes_kept


def regressions(grants):
    """Grants g2 that started after g1 was received, from the same or a newer epoch,
    with a token not above g1's."""
    by_received = sorted(grants, key=lambda g: g[1])
    by_started = sorted(grants, key=lambda g: g[0])
    best = {}
    count = 0
    i = 0
    for g2 in by_started:
        while i < len(by_received) and by_received[i][1] < g2[0]:
            g1 = by_received[i]
            best[g1[3]] = max(best.get(g1[3], 0), g1[2])
            i += 1
        floor = max((t for e, t in best.items() if e <= g2[3]), default=0)
        if g2[2] <= floor:
            count += 1
    return count


def unavailability(grants, events):
    """Per event: the longest gap between grants that overlaps the event."""
    times = sorted(g[1] for g in grants)
    out = []
    for _, start, end, _ in events:
        gap = 0.0
        for a, b in zip(times, times[1:]):
            if b >= start and a <= end:
                gap = max(gap, b - a)
        out.append(round(gap, 1))
    return out


def cross_master_overlaps(grants):
    """Grants held (from the grant's reply to the release or an error) while a grant
    from another node was held: two masters granting the lock at once."""
    spans = {}
    for g in grants:
        spans.setdefault(g[4], []).append((g[1], g[5]))
    index = {}
    for node, held in spans.items():
        held.sort()
        index[node] = ([a for a, _ in held], list(itertools.accumulate((b for _, b in held), max)))
    count = 0
    for g in grants:
        for node, (starts, reach) in index.items():
            if node == g[4]:
                continue
            k = bisect.bisect_right(starts, g[5])
            if k and reach[k - 1] >= g[1]:
                count += 1
                break
    return count


def split_windows(grants, events):
    """Per split: seconds from the cut to the first grant by another node, and to the
    cut-off master's last grant before the next event."""
    out = []
    for k, (name, start, _, m) in enumerate(events):
        if name != "split":
            continue
        until = events[k + 1][1] if k + 1 < len(events) else float("inf")
        new = [g[1] - start for g in grants if g[4] != m and start <= g[1] < until]
        old = [g[1] - start for g in grants if g[4] == m and start <= g[1] < until]
        out.append((round(min(new), 1) if new else None, round(max(old), 1) if old else None))
    return out


def jumps(grants):
    """First token of each epoch minus the highest token granted before it."""
    out = []
    ordered = sorted(grants, key=lambda g: g[1])
    highest = 0
    seen = set()
    for g in ordered:
        if g[3] not in seen and highest:
            out.append(g[2] - highest)
        seen.add(g[3])
        highest = max(highest, g[2])
    return out


def scan_logs(args):
    """Lines that show a crash or a warden warning."""
    bad = []
    for root, _, files in os.walk(args.dir):
        for f in files:
            if f.endswith(".log"):
                with open(os.path.join(root, f), errors="replace") as fh:
                    for line in fh:
                        warning = "# <warden>" in line and "defrag" not in line
                        if "crashed by signal" in line or "panicked" in line or warning:
                            bad.append(f"{f}: {line.strip()}")
    return bad


def main():
    """Runs one run and prints its table; exit 1 when an assert fails."""
    p = argparse.ArgumentParser()
    p.add_argument("--run", required=True)
    p.add_argument("--dir", required=True)
    p.add_argument("--module", required=True)
    p.add_argument("--server", required=True)
    p.add_argument("--ns-prefix", required=True)
    p.add_argument("--nodes", type=int, required=True)
    args = p.parse_args()
    report_only = os.environ.get("PARTITION_REPORT_ONLY") == "1"
    events = os.environ.get("PARTITION_EVENTS", "split kill isolate").split()
    safe = args.run.endswith("-safe")
    lag = int(os.environ.get("PARTITION_SAFE_LAG", "2"))
    k, ms = os.environ.get("PARTITION_SAFE_WAIT", "1 500").split()
    nodes = Nodes(args)
    for i in range(1, nodes.n + 1):
        nodes.node_conf(i, [])
        nodes.start_node(i)
    rule = "none"
    if safe:
        c = nodes.direct(1, 2.0)
        has_switch = bool(c.execute_command("CONFIG", "GET", "warden.dlock-min-replicas"))
        use_switch = has_switch and os.environ.get("PARTITION_SAFE_CONFIG", "1") != "0"
        settings = (
            [("warden.dlock-min-replicas", 1), ("warden.dlock-min-replicas-max-lag", lag)]
            if use_switch
            else [("min-replicas-to-write", 1), ("min-replicas-max-lag", lag)]
        )
        rule = ", ".join(f"{n} {v}" for n, v in settings) + f", WAIT {k} {ms}"
        for i in range(1, nodes.n + 1):
            d = nodes.direct(i, 2.0)
            for name, value in settings:
                d.execute_command("CONFIG", "SET", name, value)
            d.execute_command("CONFIG", "REWRITE")
    topology = ClusterTopology(nodes) if args.run.startswith("cluster") else SentinelTopology(nodes)
    topology.form()
    log(f"{args.run}: {nodes.n} nodes, rule: {rule}")
    wait_stable(topology)
    run = Run(args, (int(k), int(ms)) if safe else None)
    threads = [threading.Thread(target=monitor, args=(nodes, run), daemon=True)]
    threads += [
        threading.Thread(target=worker, args=(nodes, run, n, topology.session(n)), daemon=True)
        for n in range(WORKERS)
    ]
    for t in threads:
        t.start()
    done, probes_taken, probes_kept = nemesis(nodes, topology, events, run.epochs)
    time.sleep(TAIL_S)
    run.stop.set()
    for t in threads:
        t.join(timeout=5)
    m = wait_stable(topology)
    final = int(nodes.direct(m, 2.0).execute_command("GET", COUNTER) or 0)
    grants = list(run.grants)
    after_each = [sum(1 for g in grants if g[1] > end) > 0 for _, _, end, _ in done]
    result = {
        "run": args.run,
        "rule": rule,
        "events": [e[0] for e in done],
        "grants": len(grants),
        "epochs": len({g[3] for g in grants}),
        "writes accepted": run.resource.accepted,
        "writes rejected": run.resource.rejected,
        "accepted from an older epoch": run.resource.older_epoch,
        "accepted while another grant was live": run.resource.overlapping,
        "grants overlapping another master's": cross_master_overlaps(grants),
        "split: new master from, old until (s)": split_windows(grants, done),
        "token regressions": regressions(grants),
        "acknowledged GUARD increments": run.acked,
        "final counter": final,
        "lost increments": max(0, run.acked - final),
        "probe locks kept / taken": f"{probes_kept} / {probes_taken}",
        "unavailability per event (s)": unavailability(grants, done),
        "token jump at each new epoch": jumps(grants),
        "errors": run.errors,
        "log problems": scan_logs(args),
    }
    with open(os.path.join(args.dir, "result.json"), "w") as f:
        json.dump(result, f, indent=1)
    for key, value in result.items():
        print(f"  {key:<40} {value}", flush=True)
    failures = []
    if result["accepted from an older epoch"]:
        failures.append("writes accepted from an older epoch")
    if result["token regressions"]:
        failures.append("token regressions")
    if probes_kept != probes_taken:
        failures.append("probe locks lost after kill -9")
    if len(done) < 3:
        failures.append("fewer than 3 events")
    if not all(after_each):
        failures.append("no grant after an event")
    if safe and result["lost increments"]:
        failures.append("acknowledged GUARD increments lost")
    if not safe and "split" in result["events"]:
        if not result["grants overlapping another master's"]:
            failures.append("no split brain: no grant overlapped another master's")
        if not result["writes rejected"]:
            failures.append("no split brain: the fencing resource rejected no write")
    if result["log problems"]:
        failures.append("crash or warden warning in a log")
    for f in failures:
        print(f"partition: {args.run}: FAILED: {f}", flush=True)
    return 0 if report_only or not failures else 1


if __name__ == "__main__":
    sys.exit(main())
