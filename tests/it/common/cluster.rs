//! Cluster harness: a Redis Cluster of warden-loaded servers on loopback, with
//! helpers to find the node that owns a key, move slots, and a connection that
//! follows `MOVED` / `ASK` redirects itself (the `redis` crate's cluster client
//! is not enabled in this project).
//!
//! Every node is a `Server` (see `mod.rs`), so the whole cluster is killed when
//! the `Cluster` is dropped, also while a failing test unwinds.

use std::collections::HashMap;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use redis::{ErrorKind, FromRedisValue, RedisError, RedisResult};

use super::{cmd, digest, info_field, pttl, wait_until, Connection, Server, Value};

/// Options every cluster node starts with (the harness adds port, dir, module).
const NODE_ARGS: &[&str] = &[
    "--cluster-enabled",
    "yes",
    "--cluster-config-file",
    "nodes.conf",
    "--cluster-node-timeout",
    "2000",
];

/// How long forming a cluster may take before the test fails.
const FORM_DEADLINE: Duration = Duration::from_secs(20);

/// The hash slot of a key, computed locally (CRC16/XMODEM of the key or of its
/// `{hash tag}`, modulo 16384), as Redis Cluster does.
pub fn key_slot(key: &[u8]) -> u16 {
    let mut hashed = key;
    if let Some(open) = key.iter().position(|&b| b == b'{') {
        if let Some(len) = key[open + 1..].iter().position(|&b| b == b'}') {
            if len > 0 {
                hashed = &key[open + 1..open + 1 + len];
            }
        }
    }
    crc16(hashed) % 16384
}

fn crc16(data: &[u8]) -> u16 {
    let mut crc: u16 = 0;
    for &b in data {
        crc ^= u16::from(b) << 8;
        for _ in 0..8 {
            crc = if crc & 0x8000 != 0 {
                (crc << 1) ^ 0x1021
            } else {
                crc << 1
            };
        }
    }
    crc
}

/// One line of `CLUSTER NODES`.
#[derive(Debug, Clone)]
pub struct NodeLine {
    pub flags: Vec<String>,
    /// The master's id for a replica.
    pub master_id: Option<String>,
    /// Slot ranges it serves (inclusive); migration markers are skipped.
    pub slots: Vec<(u16, u16)>,
}

impl NodeLine {
    pub fn has_flag(&self, flag: &str) -> bool {
        self.flags.iter().any(|f| f == flag)
    }

    pub fn is_master(&self) -> bool {
        self.has_flag("master")
    }

    pub fn serves(&self, slot: u16) -> bool {
        self.slots.iter().any(|&(a, b)| a <= slot && slot <= b)
    }
}

/// Parses the text of `CLUSTER NODES`.
pub fn parse_cluster_nodes(text: &str) -> Vec<NodeLine> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            if f.len() < 8 {
                return None;
            }
            // ip:port@cport[,hostname]
            let addr = f[1].split('@').next()?;
            addr.rsplit(':').next()?.parse::<u16>().ok()?; // a line without a port is no node
            let slots = f[8..]
                .iter()
                .filter(|s| !s.starts_with('['))
                .filter_map(|s| match s.split_once('-') {
                    Some((a, b)) => Some((a.parse().ok()?, b.parse().ok()?)),
                    None => {
                        let n = s.parse().ok()?;
                        Some((n, n))
                    }
                })
                .collect();
            Some(NodeLine {
                flags: f[2].split(',').map(str::to_string).collect(),
                master_id: (f[3] != "-").then(|| f[3].to_string()),
                slots,
            })
        })
        .collect()
}

/// A cluster of warden-loaded servers (masters first, in start order; their
/// roles change with failovers: ask `role_of`, `masters`, `myself`).
pub struct Cluster {
    pub servers: Vec<Server>,
}

impl Cluster {
    /// 3 masters with 1 replica each.
    pub fn start() -> Cluster {
        Cluster::start_with(3, 1)
    }

    /// `masters` masters with `replicas` replicas each, formed with
    /// `redis-cli --cluster create`; returns once every node reports
    /// `cluster_state:ok`, agrees on the topology, and every replica is linked.
    pub fn start_with(masters: usize, replicas: usize) -> Cluster {
        let began = Instant::now();
        let total = masters * (1 + replicas);
        let servers: Vec<Server> = (0..total)
            .map(|_| Server::start_with(NODE_ARGS, &[]))
            .collect();
        let cluster = Cluster { servers };
        let mut create = Command::new(redis_cli());
        create.arg("--cluster").arg("create");
        for s in &cluster.servers {
            create.arg(format!("127.0.0.1:{}", s.port));
        }
        create
            .arg("--cluster-replicas")
            .arg(replicas.to_string())
            .arg("--cluster-yes");
        let log = cluster.servers[0].dir.join("cluster-create.log");
        let out = run_with_deadline(&mut create, &log, FORM_DEADLINE);
        assert!(
            out.0,
            "redis-cli --cluster create failed:\n{}\n{}",
            out.1,
            cluster.log_tails(10)
        );
        let left = FORM_DEADLINE.saturating_sub(began.elapsed());
        cluster.wait_formed(masters, replicas, left);
        cluster
    }

    /// Waits until the cluster is whole: every node `cluster_state:ok`, sees
    /// every other node without `fail`/`handshake`/`noaddr` flags, sees
    /// `masters` masters covering all slots, and every replica's link is up.
    fn wait_formed(&self, masters: usize, replicas: usize, timeout: Duration) {
        let total = self.servers.len();
        let ok = wait_until(timeout, || {
            self.servers.iter().all(|s| {
                let mut con = match conn_checked(s) {
                    Some(c) => c,
                    None => return false,
                };
                if info_cluster_state(&mut con).as_deref() != Some("ok") {
                    return false;
                }
                let view = match nodes_of(&mut con) {
                    Some(v) => v,
                    None => return false,
                };
                let healthy = view.len() == total
                    && view.iter().all(|n| {
                        !n.flags.iter().any(|f| {
                            matches!(f.as_str(), "fail" | "fail?" | "handshake" | "noaddr")
                        })
                    });
                let master_count = view
                    .iter()
                    .filter(|n| n.is_master() && !n.slots.is_empty())
                    .count();
                let replica_count = view.iter().filter(|n| n.has_flag("slave")).count();
                if !healthy || master_count != masters || replica_count != masters * replicas {
                    return false;
                }
                let role = info_field(&mut con, "replication", "role");
                match role.as_deref() {
                    Some("master") => true,
                    Some("slave") => {
                        info_field(&mut con, "replication", "master_link_status").as_deref()
                            == Some("up")
                    }
                    _ => false,
                }
            })
        });
        assert!(
            ok,
            "cluster did not form within {timeout:?}; views:\n{}\nlogs:\n{}",
            self.describe(),
            self.log_tails(8)
        );
    }

    /// Waits (up to `timeout`) until every node reports `cluster_state:ok`.
    pub fn wait_ok(&self, timeout: Duration) -> bool {
        wait_until(timeout, || {
            self.servers.iter().all(|s| {
                conn_checked(s)
                    .and_then(|mut c| info_cluster_state(&mut c))
                    .as_deref()
                    == Some("ok")
            })
        })
    }

    /// A new plain connection to node `i` (it does not follow redirects).
    pub fn conn(&self, i: usize) -> Connection {
        self.servers[i].conn()
    }

    /// A connection that starts at node `i` and follows MOVED and ASK.
    pub fn following(&self, i: usize) -> ClusterConn {
        ClusterConn::new(self.servers[i].port)
    }

    /// Node `i`'s own cluster id.
    pub fn node_id(&self, i: usize) -> String {
        cmd("CLUSTER")
            .arg("MYID")
            .query(&mut self.conn(i))
            .expect("CLUSTER MYID")
    }

    /// `CLUSTER NODES` as node `i` sees it.
    pub fn view_of(&self, i: usize) -> Vec<NodeLine> {
        nodes_of(&mut self.conn(i)).expect("CLUSTER NODES")
    }

    /// Node `i`'s own line (`myself`) of `CLUSTER NODES`.
    pub fn myself(&self, i: usize) -> NodeLine {
        self.view_of(i)
            .into_iter()
            .find(|n| n.has_flag("myself"))
            .expect("CLUSTER NODES has a myself line")
    }

    /// Replication role of node `i` ("master" or "slave").
    pub fn role_of(&self, i: usize) -> String {
        info_field(&mut self.conn(i), "replication", "role").expect("INFO replication role")
    }

    /// Indexes of the nodes that are masters serving slots (by their own view).
    pub fn masters(&self) -> Vec<usize> {
        (0..self.servers.len())
            .filter(|&i| {
                let me = self.myself(i);
                me.is_master() && !me.slots.is_empty()
            })
            .collect()
    }

    /// Indexes of the replicas of node `m` (by the replicas' own view).
    pub fn replicas_of(&self, m: usize) -> Vec<usize> {
        let id = self.node_id(m);
        (0..self.servers.len())
            .filter(|&i| i != m && self.myself(i).master_id.as_deref() == Some(id.as_str()))
            .collect()
    }

    /// Waits until replica `r` has applied everything its master `m` has
    /// propagated so far (polls the replica's own offset, which is faster than
    /// `Server::sync_replicas`, whose view of replicas is refreshed once a second).
    pub fn sync_replica(&self, m: usize, r: usize) {
        let offset = |i: usize, field: &str| -> Option<i64> {
            info_field(&mut self.conn(i), "replication", field)?
                .parse()
                .ok()
        };
        let target = offset(m, "master_repl_offset").expect("master_repl_offset");
        let ok = wait_until(Duration::from_secs(10), || {
            offset(r, "slave_repl_offset").is_some_and(|o| o >= target)
        });
        assert!(ok, "replica {r} did not reach offset {target} of node {m}");
    }

    /// `CLUSTER KEYSLOT key`, asked of node 0.
    pub fn keyslot(&self, key: &[u8]) -> u16 {
        cmd("CLUSTER")
            .arg("KEYSLOT")
            .arg(key)
            .query(&mut self.conn(0))
            .expect("CLUSTER KEYSLOT")
    }

    /// The owner of `slot` as `CLUSTER SLOTS` on node `i` reports it (a port).
    pub fn slot_owner_seen_by(&self, i: usize, slot: u16) -> Option<u16> {
        let v: Value = cmd("CLUSTER").arg("SLOTS").query(&mut self.conn(i)).ok()?;
        let Value::Array(ranges) = v else {
            return None;
        };
        ranges.iter().find_map(|r| {
            let Value::Array(parts) = r else {
                return None;
            };
            let int = |v: &Value| match v {
                Value::Int(n) => Some(*n),
                _ => None,
            };
            let (a, b) = (int(parts.first()?)?, int(parts.get(1)?)?);
            if !(a..=b).contains(&i64::from(slot)) {
                return None;
            }
            let Value::Array(master) = parts.get(2)? else {
                return None;
            };
            int(master.get(1)?).and_then(|p| u16::try_from(p).ok())
        })
    }

    /// Waits until every node's `CLUSTER SLOTS` names node `owner` for `slot`.
    pub fn wait_slot_owner(&self, slot: u16, owner: usize, timeout: Duration) -> bool {
        let port = self.servers[owner].port;
        wait_until(timeout, || {
            (0..self.servers.len()).all(|i| self.slot_owner_seen_by(i, slot) == Some(port))
        })
    }

    /// A hash tag (`{tagN}`) whose slot node `node` owns and is not in `avoid`.
    pub fn tag_on(&self, prefix: &str, node: usize, avoid: &[u16]) -> String {
        let me = self.myself(node);
        (0..100_000)
            .map(|n| format!("{{{prefix}{n}}}"))
            .find(|t| {
                let s = key_slot(t.as_bytes());
                me.serves(s) && !avoid.contains(&s)
            })
            .unwrap_or_else(|| panic!("no tag {prefix}N lands on node {node}"))
    }

    /// `CLUSTER SETSLOT slot IMPORTING <from>` on `to`, then `MIGRATING <to>`
    /// on `from`: the first half of a manual slot move.
    pub fn begin_slot_move(&self, slot: u16, from: usize, to: usize) {
        let (from_id, to_id) = (self.node_id(from), self.node_id(to));
        for (node, state, other) in [(to, "IMPORTING", from_id), (from, "MIGRATING", to_id)] {
            let _: () = query!(
                &mut self.conn(node),
                "CLUSTER",
                "SETSLOT",
                slot,
                state,
                other
            );
        }
    }

    /// `MIGRATE` of `keys` from node `from` to node `to` (db 0, 5 s timeout).
    pub fn migrate_keys(&self, from: usize, to: usize, keys: &[&[u8]]) -> RedisResult<Value> {
        let mut c = cmd("MIGRATE");
        c.arg("127.0.0.1")
            .arg(self.servers[to].port)
            .arg("")
            .arg(0)
            .arg(5000)
            .arg("KEYS");
        for k in keys {
            c.arg(*k);
        }
        c.query(&mut self.conn(from))
    }

    /// `CLUSTER SETSLOT slot NODE <to>` on every master: the target first, then
    /// the source, then the rest (the order redis-cli uses). Returns each
    /// node's reply, by node index.
    pub fn assign_slot(&self, slot: u16, to: usize) -> Vec<(usize, RedisResult<()>)> {
        let to_id = self.node_id(to);
        let mut order = vec![to];
        let mut rest: Vec<usize> = (0..self.servers.len())
            .filter(|&i| i != to && self.myself(i).is_master())
            .collect();
        // Nodes that serve the slot go right after the target.
        rest.sort_by_key(|&i| !self.myself(i).serves(slot));
        order.extend(rest);
        order
            .into_iter()
            .map(|i| {
                let r: RedisResult<()> = cmd("CLUSTER")
                    .arg("SETSLOT")
                    .arg(slot)
                    .arg("NODE")
                    .arg(&to_id)
                    .query(&mut self.conn(i));
                (i, r)
            })
            .collect()
    }

    /// Moves `slot` from `from` to `to` with every key in it, and waits until
    /// the whole cluster agrees.
    pub fn move_slot(&self, slot: u16, from: usize, to: usize) {
        self.begin_slot_move(slot, from, to);
        loop {
            let keys: Vec<Vec<u8>> =
                query!(&mut self.conn(from), "CLUSTER", "GETKEYSINSLOT", slot, 100);
            if keys.is_empty() {
                break;
            }
            let refs: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
            self.migrate_keys(from, to, &refs).expect("MIGRATE");
        }
        self.finish_slot_move(slot, to);
    }

    /// The second half of a manual slot move: `CLUSTER SETSLOT slot NODE <to>` on
    /// every node, then waits until the whole cluster agrees.
    pub fn finish_slot_move(&self, slot: u16, to: usize) {
        for (i, r) in self.assign_slot(slot, to) {
            r.unwrap_or_else(|e| panic!("SETSLOT {slot} NODE on node {i}: {e}"));
        }
        assert!(
            self.wait_slot_owner(slot, to, Duration::from_secs(10)),
            "the cluster never agreed that node {to} owns slot {slot}:\n{}",
            self.describe()
        );
    }

    /// Valkey 9's atomic slot migration of `first..=last` from `from` to `to`:
    /// `CLUSTER MIGRATESLOTS SLOTSRANGE first last NODE <to>`, sent to `from`
    /// (the command only starts the job; see `wait_slot_migration`).
    pub fn migrate_slots(&self, first: u16, last: u16, from: usize, to: usize) -> RedisResult<()> {
        cmd("CLUSTER")
            .arg("MIGRATESLOTS")
            .arg("SLOTSRANGE")
            .arg(first)
            .arg(last)
            .arg("NODE")
            .arg(self.node_id(to))
            .query(&mut self.conn(from))
    }

    /// The slot migration jobs node `i` knows (`CLUSTER GETSLOTMIGRATIONS`,
    /// Valkey 9), each as its fields (`slot_ranges`, `state`, `message`, …)
    /// in text.
    pub fn slot_migrations(&self, i: usize) -> Vec<HashMap<String, String>> {
        let v: Value = query!(&mut self.conn(i), "CLUSTER", "GETSLOTMIGRATIONS");
        let Value::Array(jobs) = v else {
            return Vec::new();
        };
        let text = |v: &Value| match v {
            Value::BulkString(b) => String::from_utf8_lossy(b).into_owned(),
            Value::SimpleString(s) => s.clone(),
            Value::Int(n) => n.to_string(),
            other => format!("{other:?}"),
        };
        jobs.iter()
            .map(|job| match job {
                Value::Array(fields) => fields
                    .chunks(2)
                    .filter(|p| p.len() == 2)
                    .map(|p| (text(&p[0]), text(&p[1])))
                    .collect(),
                Value::Map(pairs) => pairs.iter().map(|(k, v)| (text(k), text(v))).collect(),
                _ => HashMap::new(),
            })
            .collect()
    }

    /// Waits until node `i`'s job for `slots` (as `slot_ranges` shows them,
    /// e.g. "42-42") has ended; returns its fields (`state` is `success`,
    /// `failed` or `cancelled`), or None if it has not ended within `timeout`.
    pub fn wait_slot_migration(
        &self,
        i: usize,
        slots: &str,
        timeout: Duration,
    ) -> Option<HashMap<String, String>> {
        let mut ended = None;
        wait_until(timeout, || {
            ended = self.slot_migrations(i).into_iter().find(|job| {
                job.get("slot_ranges").map(String::as_str) == Some(slots)
                    && matches!(
                        job.get("state").map(String::as_str),
                        Some("success" | "failed" | "cancelled")
                    )
            });
            ended.is_some()
        });
        ended
    }

    /// Every node's view, for failure messages.
    pub fn describe(&self) -> String {
        let mut out = String::new();
        for (i, s) in self.servers.iter().enumerate() {
            let text: String = conn_checked(s)
                .and_then(|mut c| cmd("CLUSTER").arg("NODES").query(&mut c).ok())
                .unwrap_or_else(|| "(unreachable)".to_string());
            out.push_str(&format!("--- node {i} (port {}):\n{text}", s.port));
        }
        out
    }

    /// The last `n` log lines of every node.
    pub fn log_tails(&self, n: usize) -> String {
        let mut out = String::new();
        for (i, s) in self.servers.iter().enumerate() {
            out.push_str(&format!(
                "--- node {i} (port {}):\n{}\n",
                s.port,
                s.log_tail(n)
            ));
        }
        out
    }
}

/// A connection to `s`, or None when it does not answer.
fn conn_checked(s: &Server) -> Option<Connection> {
    let client = redis::Client::open(format!("redis://127.0.0.1:{}/", s.port)).ok()?;
    let con = client
        .get_connection_with_timeout(Duration::from_secs(2))
        .ok()?;
    con.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    Some(con)
}

fn info_cluster_state(con: &mut Connection) -> Option<String> {
    let text: String = cmd("CLUSTER").arg("INFO").query(con).ok()?;
    text.lines()
        .find_map(|l| l.trim().strip_prefix("cluster_state:").map(str::to_string))
}

fn nodes_of(con: &mut Connection) -> Option<Vec<NodeLine>> {
    let text: String = cmd("CLUSTER").arg("NODES").query(con).ok()?;
    Some(parse_cluster_nodes(&text))
}

fn redis_cli() -> String {
    std::env::var("REDIS_CLI").unwrap_or_else(|_| "redis-cli".to_string())
}

/// Runs a command to completion, killing it after `deadline`.
/// Returns (succeeded, stdout + stderr).
/// Its output goes to the file `out_path`.
fn run_with_deadline(c: &mut Command, out_path: &Path, deadline: Duration) -> (bool, String) {
    let out_file = std::fs::File::create(out_path).expect("create redis-cli output file");
    let err_file = out_file.try_clone().expect("clone output file");
    c.stdin(Stdio::null())
        .stdout(Stdio::from(out_file))
        .stderr(Stdio::from(err_file));
    let mut child = c.spawn().expect("run redis-cli");
    let end = Instant::now() + deadline;
    let status = loop {
        if let Ok(Some(st)) = child.try_wait() {
            break Some(st);
        }
        if Instant::now() >= end {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let text = std::fs::read_to_string(out_path).unwrap_or_default();
    match status {
        Some(st) => (st.success(), text),
        None => (false, format!("timed out after {deadline:?}\n{text}")),
    }
}

/// A redirect a `ClusterConn` followed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Redirect {
    Moved { slot: u16, port: u16 },
    Ask { slot: u16, port: u16 },
}

/// A connection to a cluster that follows `MOVED` (resend to the named node,
/// which it then keeps using) and `ASK` (send `ASKING` and then the command to
/// the named node, once).
pub struct ClusterConn {
    port: u16,
    conns: HashMap<u16, Connection>,
    read_timeout: Duration,
    /// The redirects the last `query` followed, in order.
    pub redirects: Vec<Redirect>,
}

impl ClusterConn {
    pub fn new(port: u16) -> ClusterConn {
        ClusterConn {
            port,
            conns: HashMap::new(),
            read_timeout: Duration::from_secs(10),
            redirects: Vec::new(),
        }
    }

    fn conn_to(&mut self, port: u16) -> RedisResult<&mut Connection> {
        if !self.conns.contains_key(&port) {
            let client = redis::Client::open(format!("redis://127.0.0.1:{port}/"))?;
            let con = client.get_connection_with_timeout(Duration::from_secs(5))?;
            con.set_read_timeout(Some(self.read_timeout))?;
            self.conns.insert(port, con);
        }
        Ok(self.conns.get_mut(&port).expect("connection just made"))
    }

    /// Runs `c`, following up to 5 redirects.
    pub fn query<T: FromRedisValue>(&mut self, c: &redis::Cmd) -> RedisResult<T> {
        self.redirects.clear();
        let mut port = self.port;
        let mut asking = false;
        for _ in 0..6 {
            let con = self.conn_to(port)?;
            if asking {
                let _: () = cmd("ASKING").query(con)?;
            }
            match c.query::<Value>(con) {
                Ok(v) => {
                    if !asking {
                        self.port = port;
                    }
                    return T::from_owned_redis_value(v);
                }
                Err(e) => {
                    let Some(to) = redirect_of(&e) else {
                        return Err(e);
                    };
                    self.redirects.push(to);
                    match to {
                        Redirect::Moved { port: p, .. } => {
                            port = p;
                            asking = false;
                        }
                        Redirect::Ask { port: p, .. } => {
                            port = p;
                            asking = true;
                        }
                    }
                }
            }
        }
        Err(RedisError::from((
            ErrorKind::ClientError,
            "too many cluster redirects",
            format!("{:?}", self.redirects),
        )))
    }
}

/// The redirect an error reply asks for, if it is `MOVED` or `ASK`.
/// The digest (DEBUG DIGEST-VALUE) and PTTL of each of `keys` on `con`.
pub fn digests_and_ttls<K: AsRef<str>>(con: &mut Connection, keys: &[K]) -> Vec<(String, i64)> {
    keys.iter()
        .map(|k| (digest(con, k.as_ref()), pttl(con, k.as_ref())))
        .collect()
}

/// Each of `keys` arrived intact on `con` (`where_` names the node): the digest it
/// had `before`, and its TTL — none if it had none, else no longer than before (plus
/// `slack` ms) and no shorter than the `elapsed` ms since allow.
pub fn assert_keys_intact<K: AsRef<str>>(
    con: &mut Connection,
    keys: &[K],
    before: &[(String, i64)],
    (elapsed, slack): (i64, i64),
    where_: &str,
) {
    for (k, (dig, ttl)) in keys.iter().map(AsRef::as_ref).zip(before) {
        assert_eq!(&digest(con, k), dig, "DEBUG DIGEST-VALUE of {k} {where_}");
        let now = pttl(con, k);
        if *ttl < 0 {
            assert_eq!(now, *ttl, "{k} had no TTL and must have none");
        } else {
            assert!(
                now <= *ttl + slack && now >= *ttl - elapsed - 1000,
                "PTTL of {k}: {ttl} before, {now} {where_} ({elapsed} ms later)"
            );
        }
    }
}

pub fn redirect_of(e: &RedisError) -> Option<Redirect> {
    let (addr, slot) = e.redirect_node()?;
    let port: u16 = addr.rsplit(':').next()?.parse().ok()?;
    match e.kind() {
        ErrorKind::Moved => Some(Redirect::Moved { slot, port }),
        ErrorKind::Ask => Some(Redirect::Ask { slot, port }),
        _ => None,
    }
}

/// Runs one scenario; a panic is recorded in `failures` instead of stopping the test.
pub fn scenario(failures: &mut Vec<String>, name: &str, f: impl FnOnce()) {
    let started = std::time::Instant::now();
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(()) => eprintln!("scenario {name}: ok in {:?}", started.elapsed()),
        Err(p) => {
            let msg = p
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "(non-text panic)".to_string());
            eprintln!("scenario {name}: FAILED in {:?}", started.elapsed());
            failures.push(format!("{name}: {msg}"));
        }
    }
}
