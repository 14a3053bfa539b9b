//! Test harness: real redis-server processes with the built warden module loaded.
//!
//! Every `Server` runs on its own free loopback port in its own directory and is
//! killed when dropped, also while a failing test unwinds.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

pub use redis::{cmd, Connection, Value};

/// `query!(con, "NAME", arg, …)`: sends one command and parses its reply as the type
/// the caller asks for, failing with the command's text on an error reply — one line
/// where a `cmd(…).arg(…)….query(…).expect(…)` chain takes six.
macro_rules! query {
    ($con:expr, $name:expr $(, $arg:expr)* $(,)?) => {{
        let mut c = redis::cmd($name);
        $(c.arg($arg);)*
        $crate::common::query_cmd(&mut c, $con)
    }};
}
pub(crate) use query;

/// `cmd_of!(NAME, arg, …)`: the command as a `redis::Cmd`, built and not sent — one
/// line where a `cmd(…).arg(…)….clone()` chain takes six.
macro_rules! cmd_of {
    ($name:expr $(, $arg:expr)* $(,)?) => {{
        let c = &mut redis::cmd($name);
        $(c.arg($arg);)*
        c.clone()
    }};
}
pub(crate) use cmd_of;

/// The reply to `c` as the type the caller asks for; fails with the command's text on
/// an error reply (the body of `query!`).
pub fn query_cmd<T: redis::FromRedisValue>(
    c: &mut redis::Cmd,
    con: &mut impl redis::ConnectionLike,
) -> T {
    c.query(con).unwrap_or_else(|e| panic!("{}: {e}", show(c)))
}

static NEXT_DIR: AtomicUsize = AtomicUsize::new(0);

/// Server binary to run (`REDIS_SERVER` overrides it, e.g. valkey-server).
pub fn server_binary() -> String {
    std::env::var("REDIS_SERVER").unwrap_or_else(|_| "redis-server".to_string())
}

/// The server binary's name and version from `--version` (`Redis server
/// v=7.0.15 …`, `Valkey server v=9.1.2 …`): ("redis" or "valkey", major, minor).
pub fn server_version() -> (String, u32, u32) {
    binary_version(Path::new(&server_binary()))
}

/// `server_version` of another binary.
pub fn binary_version(binary: &Path) -> (String, u32, u32) {
    let out = Command::new(binary)
        .arg("--version")
        .output()
        .expect("run the server binary with --version");
    let text = String::from_utf8_lossy(&out.stdout).to_lowercase();
    let name = text.split_whitespace().next().unwrap_or("").to_string();
    let version = text
        .split_whitespace()
        .find_map(|w| w.strip_prefix("v="))
        .unwrap_or("0.0");
    let mut parts = version.split('.').map(|p| p.parse::<u32>().unwrap_or(0));
    let major = parts.next().unwrap_or(0);
    let minor = parts.next().unwrap_or(0);
    (name, major, minor)
}

fn free_port() -> u16 {
    // Ports below 55535 keep room for a cluster bus port (port + 10000).
    for _ in 0..200 {
        let l = TcpListener::bind("127.0.0.1:0").expect("bind a free port");
        let port = l.local_addr().expect("local addr").port();
        if port <= 55535 {
            return port;
        }
    }
    panic!("no free port below 55535");
}

/// `DEBUG RELOAD`, then waits until the dataset it replaced is freed: Valkey
/// 8+ frees it in a background thread (lazy user flush), and the module's
/// counters (`bf_filters`, `bf_bytes`) drop only then.
pub fn debug_reload(con: &mut Connection) {
    let _: () = query!(con, "DEBUG", "RELOAD");
    wait_lazyfree(con, "the dataset DEBUG RELOAD replaced");
}

/// Waits until the server's background thread has freed everything handed
/// to it (`what`, for the failure message): Valkey 8+ deletes lazily by
/// default, and a large Bloom filter's free effort sends it there.
pub fn wait_lazyfree(con: &mut Connection, what: &str) {
    let freed = wait_until(Duration::from_secs(10), || {
        info_field(con, "memory", "lazyfree_pending_objects").as_deref() == Some("0")
    });
    assert!(freed, "{what} was never freed");
}

/// Polls `cond` until it is true or `timeout` passes; returns whether it became true.
pub fn wait_until(timeout: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + timeout;
    loop {
        if cond() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// A new, empty directory for one server under `target/it`, named after the test.
fn fresh_dir() -> PathBuf {
    let n = NEXT_DIR.fetch_add(1, Ordering::SeqCst);
    let dir =
        repo_root()
            .join("target/it")
            .join(format!("{}-{}-{}", test_name(), std::process::id(), n));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create server dir");
    dir
}

/// A redis-server child process with the module loaded.
pub struct Server {
    pub port: u16,
    pub dir: PathBuf,
    args: Vec<String>,
    module_args: Vec<String>,
    /// The server binary when not `REDIS_SERVER`'s (`start_binary`).
    binary: Option<PathBuf>,
    /// Started without the module (`start_bare`).
    bare: bool,
    child: Option<Child>,
}

impl Server {
    /// Starts a server with default options.
    pub fn start() -> Server {
        Server::start_with(&[], &[])
    }

    /// Starts a master, a replica of it, and opens a connection to the master.
    pub fn start_replicated() -> (Server, Server, Connection) {
        let master = Server::start();
        let replica = master.start_replica(&[], &[]);
        let con = master.conn();
        (master, replica, con)
    }

    /// Starts a server with an AOF of plain commands (no RDB preamble): what it
    /// replays on a restart is the commands' text.
    pub fn start_plain_aof() -> Server {
        Server::start_with(
            &["--appendonly", "yes", "--aof-use-rdb-preamble", "no"],
            &[],
        )
    }

    /// Starts a server with default options and opens a connection to it.
    pub fn start_conn() -> (Server, Connection) {
        let server = Server::start();
        let con = server.conn();
        (server, con)
    }

    /// Starts a server with extra server options (`["--appendonly", "yes"]`)
    /// and module arguments (`["dlock-max-waiters", "5"]`).
    pub fn start_with(args: &[&str], module_args: &[&str]) -> Server {
        Server::start_binary(None, args, module_args)
    }

    /// As `start_with`, running `binary` (a peer server build, say) instead
    /// of `REDIS_SERVER`'s, also when restarted.
    pub fn start_binary(binary: Option<&Path>, args: &[&str], module_args: &[&str]) -> Server {
        let dir = fresh_dir();
        let mut s = Server {
            port: 0,
            dir,
            args: args.iter().map(|s| s.to_string()).collect(),
            module_args: module_args.iter().map(|s| s.to_string()).collect(),
            binary: binary.map(Path::to_path_buf),
            bare: false,
            child: None,
        };
        s.spawn_with_retries();
        s
    }

    /// A server without the module (`binary` as in `start_binary`), whose
    /// clients may run `MODULE LOAD` / `MODULE LOADEX`.
    pub fn start_bare(binary: Option<&Path>) -> Server {
        let mut s = Server {
            port: 0,
            dir: fresh_dir(),
            args: vec!["--enable-module-command".into(), "yes".into()],
            module_args: Vec::new(),
            binary: binary.map(Path::to_path_buf),
            bare: true,
            child: None,
        };
        s.spawn_with_retries();
        s
    }

    /// The log of a server that refused to start with the module given
    /// `module_args` (panics if it started).
    pub fn start_refused(module_args: &[&str]) -> String {
        Server::start_refused_with(&[], module_args)
    }

    /// As `start_refused`, with extra server options (another module loaded
    /// before warden: `["--loadmodule", path]`).
    pub fn start_refused_with(args: &[&str], module_args: &[&str]) -> String {
        let dir = fresh_dir();
        let mut s = Server {
            port: free_port(),
            dir,
            args: args.iter().map(|s| s.to_string()).collect(),
            module_args: module_args.iter().map(|s| s.to_string()).collect(),
            binary: None,
            bare: false,
            child: None,
        };
        match s.spawn() {
            Ok(()) => panic!("the server started with module arguments {module_args:?}"),
            Err(log) => log,
        }
    }

    fn spawn_with_retries(&mut self) {
        let mut last_log = String::new();
        for _ in 0..5 {
            if self.port == 0 {
                self.port = free_port();
            }
            match self.spawn() {
                Ok(()) => return,
                Err(log) => {
                    let port_busy = log.contains("Address already in use");
                    last_log = log;
                    if !port_busy {
                        break;
                    }
                    self.port = 0;
                }
            }
        }
        panic!("redis-server did not start; log tail:\n{last_log}");
    }

    fn spawn(&mut self) -> Result<(), String> {
        let log = self.dir.join("redis.log");
        let mut c = match &self.binary {
            Some(b) => Command::new(b),
            None => Command::new(server_binary()),
        };
        c.current_dir(&self.dir)
            .arg("--port")
            .arg(self.port.to_string())
            .args(["--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
            .args(["--enable-debug-command", "yes", "--protected-mode", "no"])
            .args(["--repl-diskless-sync-delay", "0"])
            .arg("--dir")
            .arg(&self.dir)
            .arg("--logfile")
            .arg(&log)
            .args(&self.args);
        if !self.bare {
            c.arg("--loadmodule")
                .arg(module_path())
                .args(&self.module_args);
        }
        c.stdout(Stdio::null()).stderr(Stdio::null());
        kill_with_parent(&mut c);
        let child = c
            .spawn()
            .map_err(|e| format!("cannot run redis-server: {e}"))?;
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(ch) = self.child.as_mut() {
                if let Ok(Some(_)) = ch.try_wait() {
                    self.child = None;
                    return Err(self.log_tail(50));
                }
            }
            if let Ok(mut con) = self.try_conn() {
                let pong: redis::RedisResult<String> = cmd("PING").query(&mut con);
                // Ours only if the server answering is our child: another
                // test's server may have bound the port first (ours then
                // exits with the port busy, and starts again on another).
                let ours = self.child.as_ref().map(|c| c.id().to_string());
                if pong.is_ok() && info_field(&mut con, "server", "process_id") == ours {
                    return Ok(());
                }
            }
            if Instant::now() > deadline {
                self.kill();
                return Err(self.log_tail(50));
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Last `n` lines of the server log.
    pub fn log_tail(&self, n: usize) -> String {
        let text = std::fs::read_to_string(self.dir.join("redis.log")).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(n)..].join("\n")
    }

    fn try_conn(&self) -> redis::RedisResult<Connection> {
        let client = redis::Client::open(format!("redis://127.0.0.1:{}/", self.port))?;
        client.get_connection_with_timeout(Duration::from_secs(5))
    }

    /// A new RESP2 connection.
    pub fn conn(&self) -> Connection {
        self.try_conn().expect("connect to test server")
    }

    /// A new RESP3 connection.
    pub fn conn_resp3(&self) -> Connection {
        let client =
            redis::Client::open(format!("redis://127.0.0.1:{}/?protocol=resp3", self.port))
                .expect("client");
        client.get_connection().expect("connect resp3")
    }

    /// Whether the process is still running.
    pub fn is_alive(&mut self) -> bool {
        match self.child.as_mut() {
            Some(c) => matches!(c.try_wait(), Ok(None)),
            None => false,
        }
    }

    /// Asserts the server is up and answers PING (shows the log otherwise).
    pub fn assert_alive(&mut self) {
        assert!(
            self.is_alive(),
            "server died; log tail:\n{}",
            self.log_tail(40)
        );
        let pong: String = query!(&mut self.conn(), "PING");
        assert_eq!(pong, "PONG");
    }

    /// Server options for the next start (`restart`, `crash_and_restart`),
    /// in place of those it started with.
    pub fn set_args(&mut self, args: &[&str]) {
        self.args = args.iter().map(|s| s.to_string()).collect();
    }

    /// Module arguments for the next start (`restart`).
    pub fn set_module_args(&mut self, module_args: &[&str]) {
        self.module_args = module_args.iter().map(|s| s.to_string()).collect();
    }

    /// Kills the server with SIGKILL (no save); its directory stays.
    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Stops the server (SHUTDOWN with the given mode, e.g. "NOSAVE") and starts it
    /// again in the same directory, so it loads its own RDB or AOF.
    pub fn restart(&mut self, shutdown: &str) {
        let mut con = self.conn();
        let _: redis::RedisResult<()> = cmd("SHUTDOWN").arg(shutdown).query(&mut con);
        if let Some(mut c) = self.child.take() {
            let _ = c.wait();
        }
        self.spawn_with_retries();
        self.loaded_conn();
    }

    /// A connection once the server has finished loading its RDB or AOF.
    pub fn loaded_conn(&self) -> Connection {
        let mut con = self.conn();
        assert!(wait_until(Duration::from_secs(10), || {
            info_field(&mut con, "persistence", "loading").as_deref() == Some("0")
        }));
        con
    }

    /// Kills the server with SIGKILL (no save) and starts it again in the same directory.
    pub fn crash_and_restart(&mut self) {
        self.kill();
        self.spawn_with_retries();
    }

    /// Starts a replica of this server with the module loaded (extra server options
    /// and module arguments as in `start_with`) and waits for the link to come up.
    pub fn start_replica(&self, extra: &[&str], module_args: &[&str]) -> Server {
        let mut args = vec!["--propagation-error-behavior", "panic"];
        args.extend_from_slice(extra);
        let mut r = Server::start_with(&args, module_args);
        let mut con = r.conn();
        let _: () = query!(&mut con, "REPLICAOF", "127.0.0.1", self.port);
        r.args.extend([
            "--replicaof".to_string(),
            "127.0.0.1".to_string(),
            self.port.to_string(),
        ]);
        assert!(
            master_link_up(&mut con),
            "replica link never came up; log:\n{}",
            r.log_tail(30)
        );
        r.assert_alive();
        r
    }

    /// Waits until `n` replicas (taps excluded) have applied every write the
    /// master has propagated so far, by comparing replication offsets. (`WAIT`
    /// would not do: it only waits for the calling connection's own writes.)
    pub fn sync_replicas(&self, n: usize) {
        let mut con = self.conn();
        let target: i64 = info_field(&mut con, "replication", "master_repl_offset")
            .and_then(|v| v.parse().ok())
            .expect("master_repl_offset");
        let synced = wait_until(Duration::from_secs(10), || {
            let text: String = cmd("INFO")
                .arg("replication")
                .query(&mut con)
                .unwrap_or_default();
            let caught_up = text
                .lines()
                .filter(|l| l.starts_with("slave") && l.contains("state=online"))
                .filter_map(|l| l.split(',').find_map(|f| f.strip_prefix("offset=")))
                .filter_map(|o| o.parse::<i64>().ok())
                .filter(|o| *o >= target)
                .count();
            caught_up >= n
        });
        assert!(synced, "replicas did not catch up with offset {target}");
    }

    /// Waits until the master reports `n` replicas online (taps included: a tap
    /// has read its RDB a moment before the master marks it online).
    pub fn wait_replicas_online(&self, n: usize) {
        let mut con = self.conn();
        let online = wait_until(Duration::from_secs(10), || {
            let text: String = cmd("INFO")
                .arg("replication")
                .query(&mut con)
                .unwrap_or_default();
            text.lines()
                .filter(|l| l.starts_with("slave") && l.contains("state=online"))
                .count()
                >= n
        });
        assert!(online, "{n} replicas never came online");
    }

    /// A replica of this server that already receives its writes as they happen. After
    /// a diskless sync the master holds writes back until the replica's first ACK (sent
    /// once a second), so one write is waited for here.
    pub fn start_streaming_replica(&self) -> Server {
        let replica = self.start_replica(&[], &[]);
        let _: () = query!(&mut self.conn(), "SET", "replica:linked", 1);
        self.sync_replicas(1);
        replica
    }

    /// Waits until no AOF rewrite is running or scheduled (with `--appendonly yes`, the
    /// server starts one of its own).
    pub fn wait_aof_rewrite_idle(&self) {
        let mut con = self.conn();
        assert!(
            wait_until(Duration::from_secs(60), || aof_rewrite_idle(&mut con)),
            "an earlier AOF rewrite never ended"
        );
        assert_eq!(
            info_field(&mut con, "persistence", "aof_last_bgrewrite_status").as_deref(),
            Some("ok"),
            "an earlier AOF rewrite failed; log:\n{}",
            self.log_tail(20)
        );
    }

    /// Runs BGREWRITEAOF and waits until that rewrite has finished, successfully.
    pub fn bgrewriteaof(&self) {
        self.wait_aof_rewrite_idle();
        let mut con = self.conn();
        let rewrites = |con: &mut Connection| -> i64 {
            info_field(con, "persistence", "aof_rewrites")
                .and_then(|v| v.parse().ok())
                .expect("INFO persistence has no aof_rewrites")
        };
        let n0 = rewrites(&mut con);
        let _: Value = query!(&mut con, "BGREWRITEAOF");
        assert!(
            wait_until(Duration::from_secs(60), || {
                rewrites(&mut con) > n0 && aof_rewrite_idle(&mut con)
            }),
            "AOF rewrite did not finish"
        );
        assert_eq!(
            info_field(&mut con, "persistence", "aof_last_bgrewrite_status").as_deref(),
            Some("ok"),
            "AOF rewrite failed; log:\n{}",
            self.log_tail(20)
        );
    }

    /// Opens a raw replication link: every write the master propagates from now on.
    pub fn replication_tap(&self) -> ReplicationTap {
        ReplicationTap::connect(self.port)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill();
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

#[cfg(target_os = "linux")]
fn kill_with_parent(c: &mut Command) {
    use std::os::unix::process::CommandExt;
    // SAFETY: prctl is async-signal-safe; it only asks the kernel to SIGKILL the
    // server if the test process dies, so no server outlives a killed test run.
    unsafe {
        c.pre_exec(|| {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            Ok(())
        });
    }
}

#[cfg(not(target_os = "linux"))]
fn kill_with_parent(_c: &mut Command) {}

fn test_name() -> String {
    let t = std::thread::current();
    let name = t
        .name()
        .unwrap_or("test")
        .rsplit("::")
        .next()
        .unwrap_or("test")
        .to_string();
    name.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .take(40)
        .collect()
}

fn aof_rewrite_idle(con: &mut Connection) -> bool {
    info_field(con, "persistence", "aof_rewrite_in_progress").as_deref() == Some("0")
        && info_field(con, "persistence", "aof_rewrite_scheduled").as_deref() == Some("0")
}

/// A connection whose reads and writes time out after `timeout`, so a module that
/// blocks when it must not makes the test fail instead of hanging forever.
pub fn timed(con: Connection, timeout: Duration) -> Connection {
    con.set_read_timeout(Some(timeout)).expect("read timeout");
    con.set_write_timeout(Some(timeout)).expect("write timeout");
    con
}

/// This machine's wall clock in milliseconds since the Unix epoch.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_millis() as i64
}

/// Every key SCAN finds in the selected database, sorted and without duplicates;
/// `filter` is appended to each SCAN (e.g. `["TYPE", "warden-bf"]`).
pub fn scan_keys(con: &mut Connection, filter: &[&str]) -> Vec<Vec<u8>> {
    let mut cursor: u64 = 0;
    let mut keys: Vec<Vec<u8>> = Vec::new();
    loop {
        let mut c = cmd("SCAN");
        c.arg(cursor).arg("COUNT").arg(1000);
        for f in filter {
            c.arg(*f);
        }
        let (next, batch): (u64, Vec<Vec<u8>>) = c.query(con).expect("SCAN");
        keys.extend(batch);
        if next == 0 {
            break;
        }
        cursor = next;
    }
    keys.sort();
    keys.dedup();
    keys
}

/// INFO warden's `bf_filters` and `bf_bytes`: the filters the module counts and
/// their bytes (to compare with `filter_census`).
pub fn filter_stats(con: &mut Connection) -> (i64, i64) {
    (warden_stat(con, "bf_filters"), warden_stat(con, "bf_bytes"))
}

/// The filter keys of databases `dbs` and the sum of their sizes (BF.INFOX SIZE), by
/// SCAN; leaves the connection in database 0.
pub fn filter_census(con: &mut Connection, dbs: &[i64]) -> (i64, i64) {
    let (mut n, mut bytes) = (0i64, 0i64);
    for db in dbs {
        let _: () = query!(con, "SELECT", db);
        for k in scan_keys(con, &["TYPE", "warden-bf"]) {
            n += 1;
            let size: Value = query!(con, "BF.INFOX", &k, "SIZE");
            bytes += match size {
                Value::Int(n) => n,
                Value::Array(a) if a.len() == 1 => match a[0] {
                    Value::Int(n) => n,
                    ref other => panic!("BF.INFOX SIZE: {other:?}"),
                },
                other => panic!("BF.INFOX SIZE: {other:?}"),
            };
        }
    }
    let _: () = query!(con, "SELECT", 0);
    (n, bytes)
}

/// A command from its words (the name first).
pub fn command<S: AsRef<[u8]>>(words: &[S]) -> redis::Cmd {
    let mut c = redis::Cmd::new();
    for w in words {
        c.arg(w.as_ref());
    }
    c
}

/// Owned words, for `command` and failure messages.
pub fn words(ws: &[&str]) -> Vec<String> {
    ws.iter().map(|w| w.to_string()).collect()
}

/// An array reply of integers; None for any other reply.
pub fn ints(v: &Value) -> Option<Vec<i64>> {
    match v {
        Value::Array(items) => items
            .iter()
            .map(|i| match i {
                Value::Int(n) => Some(*n),
                _ => None,
            })
            .collect(),
        _ => None,
    }
}

/// Whether a reply is OK.
pub fn is_ok(v: &Value) -> bool {
    matches!(v, Value::Okay) || *v == Value::SimpleString("OK".into())
}

/// Sends `c` and asserts that it answers OK.
pub fn ok(con: &mut Connection, c: &redis::Cmd) {
    let v = raw(con, c);
    assert!(is_ok(&v), "{}: {v:?}", show(c));
}

/// `DUMP key`.
pub fn dump<K: redis::ToRedisArgs>(con: &mut Connection, key: K) -> Vec<u8> {
    cmd("DUMP").arg(key).query(con).expect("DUMP")
}

/// A table of calls and the errors they must answer, one a line: the call's words
/// (split at white space; `""` is an empty word), `=>`, the error's text. Blank lines
/// and lines starting with `#` (comments) are passed over. One line a case, where a
/// slice of tuples takes four.
pub fn refusals(table: &'static str) -> Vec<(Vec<&'static str>, &'static str)> {
    table
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| {
            let (call, error) = l
                .split_once("=>")
                .unwrap_or_else(|| panic!("no `=>` in the case {l:?}"));
            let word = |w: &'static str| if w == "\"\"" { "" } else { w };
            (call.split_whitespace().map(word).collect(), error.trim())
        })
        .collect()
}

/// Fails the test with every collected failure.
pub fn report(what: &str, failures: Vec<String>) {
    assert!(
        failures.is_empty(),
        "{what}: {} failure(s):\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

/// `PEXPIRETIME key`: the key's absolute expiry in ms (-1: none, -2: no key).
pub fn pexpiretime<K: redis::ToRedisArgs>(con: &mut Connection, key: K) -> i64 {
    cmd("PEXPIRETIME").arg(key).query(con).expect("PEXPIRETIME")
}

/// INFO memory's `used_memory`.
pub fn used_memory(con: &mut Connection) -> i64 {
    info_field(con, "memory", "used_memory")
        .expect("used_memory")
        .parse()
        .expect("a number")
}

/// One field of an INFO section, if present.
/// Whether the replica behind `con` has its link to the master up within 10 s.
pub fn master_link_up(con: &mut Connection) -> bool {
    wait_until(Duration::from_secs(10), || {
        info_field(con, "replication", "master_link_status").as_deref() == Some("up")
    })
}

pub fn info_field(con: &mut Connection, section: &str, field: &str) -> Option<String> {
    let text: String = cmd("INFO").arg(section).query(con).ok()?;
    text.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        (k == field).then(|| v.trim().to_string())
    })
}

/// An integer field of `INFO warden`;
/// `field` is given without the `warden_` prefix Redis adds to module fields.
/// Read once the background thread has freed what was handed to it, so a
/// gauge counts only values still in the keyspace (a large filter deleted or
/// replaced is freed there, and Valkey 8+ deletes lazily by default).
pub fn warden_stat(con: &mut Connection, field: &str) -> i64 {
    wait_lazyfree(con, "a value freed in the background before INFO warden");
    info_field(con, "warden", &format!("warden_{field}"))
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("INFO warden has no integer field warden_{field}"))
}

/// The server's wall clock in milliseconds (from TIME).
pub fn server_time_ms(con: &mut Connection) -> i64 {
    let (s, us): (i64, i64) = query!(con, "TIME");
    s * 1000 + us / 1000
}

/// Flattens a reply into printable text, for assertions on error messages.
pub fn err_text(e: &redis::RedisError) -> String {
    let mut s = String::new();
    if let Some(code) = e.code() {
        s.push_str(code);
        s.push(' ');
    }
    s.push_str(e.detail().unwrap_or(""));
    s
}

/// The text (`CODE detail`) of an error reply kept as a value; None for other replies.
pub fn err_of(v: &Value) -> Option<String> {
    match v {
        Value::ServerError(e) => Some(
            format!("{} {}", e.code(), e.details().unwrap_or(""))
                .trim_end()
                .to_string(),
        ),
        _ => None,
    }
}

/// Total physical memory of this machine in bytes (Linux /proc/meminfo).
pub fn physical_memory() -> u64 {
    let text = std::fs::read_to_string("/proc/meminfo").expect("/proc/meminfo");
    let kb: u64 = text
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .expect("MemTotal");
    kb * 1024
}

/// `DEBUG DIGEST-VALUE key`.
pub fn digest<K: redis::ToRedisArgs>(con: &mut Connection, key: K) -> String {
    let v: Vec<String> = query!(con, "DEBUG", "DIGEST-VALUE", key);
    v.into_iter().next().expect("one digest")
}

/// `DEBUG DIGEST`: a digest of the whole dataset.
pub fn db_digest(con: &mut Connection) -> String {
    cmd("DEBUG").arg("DIGEST").query(con).expect("DEBUG DIGEST")
}

pub fn pttl<K: redis::ToRedisArgs>(con: &mut Connection, key: K) -> i64 {
    cmd("PTTL").arg(key).query(con).expect("PTTL")
}

pub fn exists<K: redis::ToRedisArgs>(con: &mut Connection, key: K) -> bool {
    let n: i64 = query!(con, "EXISTS", key);
    n == 1
}

pub fn key_type<K: redis::ToRedisArgs>(con: &mut Connection, key: K) -> String {
    cmd("TYPE").arg(key).query(con).expect("TYPE")
}

/// Bytes as text for failure messages: printable ASCII as is, the rest as `\xNN`.
pub fn escape(b: &[u8]) -> String {
    let mut s = String::new();
    for &c in b {
        if (0x20..0x7f).contains(&c) && c != b'\\' {
            s.push(c as char);
        } else {
            s.push_str(&format!("\\x{c:02x}"));
        }
    }
    s
}

/// A command as text for failure messages (arguments over 200 bytes elided).
pub fn show(c: &redis::Cmd) -> String {
    c.args_iter()
        .map(|a| match a {
            redis::Arg::Simple(b) if b.len() > 200 => format!("<{} bytes>", b.len()),
            redis::Arg::Simple(b) => escape(b),
            redis::Arg::Cursor => "<cursor>".to_string(),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The reply as sent, with error replies (also nested ones) kept as values.
/// Panics on I/O errors, i.e. when the server went away.
pub fn raw(con: &mut Connection, c: &redis::Cmd) -> Value {
    redis::ConnectionLike::req_command(con, c)
        .unwrap_or_else(|e| panic!("no valid reply (server down?) to {}: {e}", show(c)))
}

/// The integer in a reply, if it is one.
pub fn int_of(v: &Value) -> Option<i64> {
    match v {
        Value::Int(n) => Some(*n),
        _ => None,
    }
}

/// The text of a bulk or simple string reply (`OK` included), if it is one.
pub fn text_of(v: &Value) -> Option<String> {
    match v {
        Value::BulkString(b) => Some(String::from_utf8_lossy(b).into_owned()),
        Value::SimpleString(s) => Some(s.clone()),
        Value::Okay => Some("OK".to_string()),
        _ => None,
    }
}

pub mod aof;
mod built;
pub use built::{module_path, repo_root};
pub mod cluster;
pub mod defrag;
pub mod docs;
pub mod fuzz_calls;
pub mod grammar;
pub mod kit;
pub mod memory;
pub mod module_types;
pub mod payload;
pub mod payload_bases;
pub mod payload_checks;
pub mod payload_forgeries;
pub mod peer_modules;
pub mod peer_redis;
pub mod ranges;
pub mod server_ops;
mod tap;
pub use tap::*;
pub mod waiter;

/// Copies the files of directory `from` (a test fixture) into `to`, made if missing.
pub fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).expect("create dir");
    for entry in std::fs::read_dir(from).expect("read fixture dir") {
        let entry = entry.expect("entry");
        std::fs::copy(entry.path(), to.join(entry.file_name())).expect("copy fixture");
    }
}
