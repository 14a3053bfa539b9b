//! Cache stampede benchmark: N clients miss ONE key at the same instant while the source
//! (the database behind the cache) takes SOURCE_MS to answer.
//!
//! ```text
//! cargo run --release --example stampede -- --port PORT [--md FILE] [--json FILE]
//! ```
//!
//! Needs a running redis-server; the `lease-wait` variant needs libwarden.so loaded.
//! Every client has its own TCP connection (TCP_NODELAY); one thread drives them all over
//! epoll and takes each reply the moment it is readable.
//!
//! Variants (every client does the same; all send their read in one burst)
//! - `naive`: GET key → nil → read the source → SET key value PX ttl
//! - `seed-lua`: the seed's script (GET + INCR of a read counter + EXPIRE, and a compare of
//!   the caller's update time with the cached one; nil = refresh) → source → SET
//! - `lease-wait`: CACHE.GET key LEASE 2000 WAIT 2500; the client given the lease reads the
//!   source and stores with CACHE.SET … LEASE token, the others block and get the value when
//!   that SET lands
//!
//! "Reading the source" is a sleep of SOURCE_MS in the client (the source is not Redis),
//! counted as one source call. A client's latency runs from the moment it sends its first
//! command to the moment it holds the value.
//!
//! Reported per variant (source calls: median and range over trials; latency: p50/p99 over
//! all clients of all trials), plus for lease-wait the time from the refresher's CACHE.SET
//! being sent to each waiter holding the value (p99: the server's hand-off). Goal (PASS/MISS,
//! never fails the run): lease-wait makes exactly one source call in every trial and its p99
//! is within SOURCE_MS + 2 ms.
//!
//! Environment: STAMPEDE_CLIENTS (50), STAMPEDE_SOURCE_MS (50), STAMPEDE_TRIALS (20).

use std::io::{BufReader, Read as _, Write};
use std::net::TcpStream;
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

const KEY: &str = "stampede:product";
const TTL_MS: u64 = 60_000;
const VALUE: [u8; 200] = [b'x'; 200];

/// The seed's read script (seed 001): GET, a read counter with a one-second window, and an
/// update-time compare; nil tells the caller to refresh.
const SEED_LUA: &str = "
local v = redis.call('GET', KEYS[1])
local n = redis.call('INCR', KEYS[2])
if n == 1 then redis.call('EXPIRE', KEYS[2], 1) end
if v == false then return false end
local updated = tonumber(redis.call('GET', KEYS[3]) or '0')
if tonumber(ARGV[1]) > updated then return false end
if n > tonumber(ARGV[2]) then redis.call('PEXPIRE', KEYS[1], ARGV[3]) end
return v
";

/// One way of reading through the cache.
#[derive(Clone, Copy, PartialEq)]
enum Variant {
    Naive,
    SeedLua,
    LeaseWait,
}

impl Variant {
    fn name(self) -> &'static str {
        match self {
            Variant::Naive => "naive",
            Variant::SeedLua => "seed-lua",
            Variant::LeaseWait => "lease-wait",
        }
    }

    fn title(self) -> &'static str {
        match self {
            Variant::Naive => "GET → miss → source → SET",
            Variant::SeedLua => "seed's Lua (GET + INCR + EXPIRE + compare) → source → SET",
            Variant::LeaseWait => "CACHE.GET … LEASE 2000 WAIT 2500",
        }
    }
}

/// A blocking RESP connection: one request, one reply.
struct Conn {
    writer: TcpStream,
    reader: BufReader<TcpStream>,
    parser: redis::Parser,
}

impl Conn {
    fn open(port: u16) -> Conn {
        let stream = TcpStream::connect(("127.0.0.1", port)).expect("connect to the server");
        stream.set_nodelay(true).expect("TCP_NODELAY");
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .expect("read timeout");
        let reader = BufReader::new(stream.try_clone().expect("clone the socket"));
        Conn {
            writer: stream,
            reader,
            parser: redis::Parser::new(),
        }
    }

    fn send(&mut self, cmd: &redis::Cmd) {
        self.writer
            .write_all(&cmd.get_packed_command())
            .expect("write a command");
    }

    fn reply(&mut self) -> redis::Value {
        match self
            .parser
            .parse_value(&mut self.reader)
            .expect("read a reply")
        {
            redis::Value::ServerError(e) => panic!("server error: {e:?}"),
            v => v,
        }
    }

    fn call(&mut self, cmd: &redis::Cmd) -> redis::Value {
        self.send(cmd);
        self.reply()
    }
}

fn first_command(variant: Variant, sha: &str) -> redis::Cmd {
    match variant {
        Variant::Naive => redis::cmd("GET").arg(KEY).clone(),
        Variant::SeedLua => redis::cmd("EVALSHA")
            .arg(sha)
            .arg(3)
            .arg(KEY)
            .arg(format!("{KEY}:reads"))
            .arg(format!("{KEY}:updated"))
            .arg(1)
            .arg(100)
            .arg(TTL_MS)
            .clone(),
        Variant::LeaseWait => redis::cmd("CACHE.GET")
            .arg(KEY)
            .arg("LEASE")
            .arg(2000)
            .arg("WAIT")
            .arg(2500)
            .clone(),
    }
}

fn store_command(variant: Variant, lease: i64) -> redis::Cmd {
    match variant {
        Variant::LeaseWait => redis::cmd("CACHE.SET")
            .arg(KEY)
            .arg(&VALUE[..])
            .arg(TTL_MS)
            .arg("LEASE")
            .arg(lease)
            .clone(),
        _ => redis::cmd("SET")
            .arg(KEY)
            .arg(&VALUE[..])
            .arg("PX")
            .arg(TTL_MS)
            .clone(),
    }
}

/// What a first reply says: the value is here, or this client must read the source (with
/// the lease token for lease-wait, 0 otherwise).
enum Read {
    Hit,
    Refresh(i64),
}

fn classify(variant: Variant, reply: redis::Value) -> Read {
    match (variant, reply) {
        (Variant::LeaseWait, redis::Value::Array(pair)) => match pair.as_slice() {
            [redis::Value::BulkString(_), redis::Value::Int(0)] => Read::Hit,
            [redis::Value::Nil, redis::Value::Int(lease)] if *lease > 0 => Read::Refresh(*lease),
            other => panic!("a waiter was not served: {other:?}"),
        },
        (Variant::LeaseWait, other) => panic!("unexpected CACHE.GET reply {other:?}"),
        (_, redis::Value::Nil) => Read::Refresh(0),
        (_, redis::Value::BulkString(_)) => Read::Hit,
        (_, other) => panic!("unexpected reply {other:?}"),
    }
}

/// Where one client of a stampede is.
#[derive(Clone, Copy, PartialEq)]
enum State {
    /// Its first command is out; the reply is awaited.
    Reading,
    /// It reads the source until the instant given.
    Source(Instant),
    /// Its store is out; the reply is awaited.
    Storing,
    /// It holds the value.
    Done,
}

/// One client of a stampede: its connection, unparsed reply bytes and clock marks.
struct Client {
    stream: TcpStream,
    buf: Vec<u8>,
    state: State,
    lease: i64,
    sent: Instant,
    done: Option<Instant>,
    refreshed: bool,
}

impl Client {
    /// One complete reply from the socket's readable bytes, if they hold one.
    fn take_reply(&mut self) -> Option<redis::Value> {
        let mut chunk = [0u8; 4096];
        let n = self.stream.read(&mut chunk).expect("read a reply");
        assert!(n > 0, "the server closed a client connection");
        self.buf.extend_from_slice(&chunk[..n]);
        let value = redis::parse_redis_value(&self.buf).ok()?;
        self.buf.clear();
        match value {
            redis::Value::ServerError(e) => panic!("server error: {e:?}"),
            v => Some(v),
        }
    }
}

/// What one stampede measured.
struct TrialResult {
    /// Clients that read the source.
    source_calls: usize,
    /// Each client's latency to the value (ns).
    latencies: Vec<u64>,
    /// For each client that did not read the source: first store sent → value held (ns).
    after_store: Vec<u64>,
    /// The server's CPU time from the first store being sent to the last client holding the
    /// value (ns), when its scheduler statistics are readable.
    server_cpu: Option<u64>,
}

/// The CPU time (ns) a thread has run, from `/proc/<pid>/task/<tid>/schedstat`.
fn cpu_ns(schedstat: &str) -> Option<u64> {
    std::fs::read_to_string(schedstat)
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// One stampede of `clients` clients. `schedstat` is the server main thread's scheduler
/// statistics file, if the server runs on this machine.
///
/// One thread drives every client over epoll, as load generators do: a reply is taken
/// the moment it is readable, with no thread to wake per client (on a small VM a thread
/// wake-up costs ~100 µs and fifty of them would be measured as the server's hand-off).
fn trial(
    port: u16,
    variant: Variant,
    clients: usize,
    source: Duration,
    sha: &str,
    schedstat: Option<&str>,
) -> TrialResult {
    let mut admin = Conn::open(port);
    admin.call(
        redis::cmd("DEL")
            .arg(KEY)
            .arg(format!("{KEY}:reads"))
            .arg(format!("{KEY}:updated")),
    );
    admin.call(redis::cmd("SET").arg(format!("{KEY}:updated")).arg(1));
    let first = first_command(variant, sha).get_packed_command();
    let mut all: Vec<Client> = (0..clients)
        .map(|_| {
            let conn = Conn::open(port);
            Client {
                stream: conn.writer,
                buf: Vec::new(),
                state: State::Reading,
                lease: 0,
                sent: Instant::now(),
                done: None,
                refreshed: false,
            }
        })
        .collect();
    // SAFETY: plain syscall; the fd is closed at the end of the trial.
    let poller = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
    assert!(poller >= 0, "epoll_create1 failed");
    for (i, c) in all.iter().enumerate() {
        let mut event = libc::epoll_event {
            events: libc::EPOLLIN as u32,
            u64: i as u64,
        };
        // SAFETY: `poller` is an epoll fd, the socket is open and `event` lives across the call.
        let added = unsafe {
            libc::epoll_ctl(
                poller,
                libc::EPOLL_CTL_ADD,
                c.stream.as_raw_fd(),
                &mut event,
            )
        };
        assert!(added == 0, "epoll_ctl failed");
    }
    let mut events = vec![libc::epoll_event { events: 0, u64: 0 }; clients];
    // The clients are independent: one whose reply is already in must not wait for the
    // driver to finish sending the others' reads (about 1 ms for 50 on a small VM), so the
    // driver takes ready replies between sends.
    for i in 0..all.len() {
        all[i].sent = Instant::now();
        all[i]
            .stream
            .write_all(&first)
            .expect("send the first read");
        take_ready(poller, &mut events, &mut all, 0, variant, source);
    }
    let mut first_store: Option<Instant> = None;
    let mut cpu_at_store = None;
    let deadline = Instant::now() + Duration::from_secs(10);
    while all.iter().any(|c| c.state != State::Done) {
        let now = Instant::now();
        assert!(
            now < deadline,
            "{}: clients never got the value",
            variant.name()
        );
        for c in all.iter_mut() {
            if let State::Source(due) = c.state {
                if due <= now {
                    if first_store.is_none() {
                        cpu_at_store = schedstat.and_then(cpu_ns);
                        first_store = Some(Instant::now());
                    }
                    c.stream
                        .write_all(&store_command(variant, c.lease).get_packed_command())
                        .expect("store");
                    c.state = State::Storing;
                }
            }
        }
        // Sleep in epoll until a reply or the next source answer; the last millisecond
        // before a source answer is polled without sleeping (epoll's clock is in ms).
        let next_due = all.iter().filter_map(|c| match c.state {
            State::Source(due) => Some(due.saturating_duration_since(now)),
            _ => None,
        });
        let timeout_ms = next_due
            .min()
            .map_or(100, |d| d.as_millis().saturating_sub(1) as i32);
        take_ready(poller, &mut events, &mut all, timeout_ms, variant, source);
    }
    let server_cpu = cpu_at_store.and_then(|at| Some(cpu_ns(schedstat?)?.saturating_sub(at)));
    // SAFETY: `poller` is an fd this function opened and no longer uses.
    unsafe { libc::close(poller) };
    let done = |c: &Client| c.done.expect("every client is done");
    let latencies = all
        .iter()
        .map(|c| (done(c) - c.sent).as_nanos() as u64)
        .collect();
    let after_store = match first_store {
        Some(at) => all
            .iter()
            .filter(|c| !c.refreshed && done(c) >= at)
            .map(|c| (done(c) - at).as_nanos() as u64)
            .collect(),
        None => Vec::new(),
    };
    TrialResult {
        source_calls: all.iter().filter(|c| c.refreshed).count(),
        latencies,
        after_store,
        server_cpu,
    }
}

/// Waits up to `timeout_ms` in epoll and takes every reply that is in: a read reply starts
/// a hit's clock stop or a refresher's source read, a store reply ends the refresher's wait.
fn take_ready(
    poller: i32,
    events: &mut [libc::epoll_event],
    all: &mut [Client],
    timeout_ms: i32,
    variant: Variant,
    source: Duration,
) {
    // SAFETY: `events` is a live array of `events.len()` entries and `poller` an epoll fd.
    let ready =
        unsafe { libc::epoll_wait(poller, events.as_mut_ptr(), events.len() as i32, timeout_ms) };
    assert!(
        ready >= 0,
        "epoll_wait failed: {}",
        std::io::Error::last_os_error()
    );
    for event in &events[..ready as usize] {
        let c = &mut all[event.u64 as usize];
        if !matches!(c.state, State::Reading | State::Storing) {
            continue;
        }
        let Some(reply) = c.take_reply() else {
            continue;
        };
        match c.state {
            State::Reading => match classify(variant, reply) {
                Read::Hit => (c.state, c.done) = (State::Done, Some(Instant::now())),
                Read::Refresh(lease) => {
                    c.refreshed = true;
                    c.lease = lease;
                    c.state = State::Source(Instant::now() + source);
                }
            },
            State::Storing => (c.state, c.done) = (State::Done, Some(Instant::now())),
            State::Source(_) | State::Done => panic!("a reply nobody asked for: {reply:?}"),
        }
    }
}

/// The nearest-rank percentile of sorted values.
fn percentile(sorted: &[u64], p: f64) -> u64 {
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// The server main thread's `/proc` scheduler statistics, when the server runs here.
fn server_schedstat(admin: &mut Conn) -> Option<String> {
    let info = match admin.call(redis::cmd("INFO").arg("server")) {
        redis::Value::BulkString(b) => b,
        _ => return None,
    };
    let info = String::from_utf8_lossy(&info);
    let pid = info
        .lines()
        .find_map(|l| l.strip_prefix("process_id:"))?
        .trim()
        .to_owned();
    let path = format!("/proc/{pid}/task/{pid}/schedstat");
    cpu_ns(&path).map(|_| path)
}

/// Whether a MODULE LIST reply names warden.
fn mentions_warden(reply: &redis::Value) -> bool {
    match reply {
        redis::Value::BulkString(name) => name == b"warden",
        redis::Value::Array(items) => items.iter().any(mentions_warden),
        redis::Value::Map(pairs) => pairs
            .iter()
            .any(|(k, v)| mentions_warden(k) || mentions_warden(v)),
        _ => false,
    }
}

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Per-variant figures, as written to the JSON file charts.py reads.
struct Summary {
    variant: Variant,
    calls_median: usize,
    calls_min: usize,
    calls_max: usize,
    p50_ms: f64,
    p99_ms: f64,
    after_store_p99_ms: Option<f64>,
    /// Median server CPU time from the store to the last client served (ms).
    server_cpu_ms: Option<f64>,
}

fn main() {
    let mut port = None;
    let (mut md, mut json) = (None, None);
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let value = args
            .next()
            .unwrap_or_else(|| panic!("{flag} needs a value"));
        match flag.as_str() {
            "--port" => port = Some(value.parse::<u16>().expect("--port takes a port number")),
            "--md" => md = Some(value),
            "--json" => json = Some(value),
            _ => panic!("unknown argument {flag}"),
        }
    }
    let port = port.expect("--port is required");
    let clients = env_number("STAMPEDE_CLIENTS", 50) as usize;
    let source_ms = env_number("STAMPEDE_SOURCE_MS", 50);
    let trials = env_number("STAMPEDE_TRIALS", 20) as usize;

    let mut admin = Conn::open(port);
    let sha = match admin.call(redis::cmd("SCRIPT").arg("LOAD").arg(SEED_LUA)) {
        redis::Value::BulkString(b) => String::from_utf8(b).expect("a hex sha"),
        other => panic!("SCRIPT LOAD answered {other:?}"),
    };
    let schedstat = server_schedstat(&mut admin);
    let mut variants = vec![Variant::Naive, Variant::SeedLua];
    if mentions_warden(&admin.call(&redis::cmd("MODULE").arg("LIST").clone())) {
        variants.push(Variant::LeaseWait);
    }

    let source = Duration::from_millis(source_ms);
    let mut summaries = Vec::new();
    for &variant in &variants {
        let (mut calls, mut lat, mut after, mut cpu) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for _ in 0..trials {
            let t = trial(port, variant, clients, source, &sha, schedstat.as_deref());
            calls.push(t.source_calls);
            lat.extend(t.latencies);
            after.extend(t.after_store);
            cpu.extend(t.server_cpu);
        }
        calls.sort_unstable();
        lat.sort_unstable();
        after.sort_unstable();
        cpu.sort_unstable();
        let ms = |ns: u64| ns as f64 / 1e6;
        summaries.push(Summary {
            variant,
            calls_median: calls[calls.len() / 2],
            calls_min: calls[0],
            calls_max: calls[calls.len() - 1],
            p50_ms: ms(percentile(&lat, 50.0)),
            p99_ms: ms(percentile(&lat, 99.0)),
            after_store_p99_ms: (!after.is_empty()).then(|| ms(percentile(&after, 99.0))),
            server_cpu_ms: (!cpu.is_empty() && !after.is_empty())
                .then(|| ms(percentile(&cpu, 50.0))),
        });
    }

    let mut text = format!(
        "## Cache stampede: {clients} clients miss one key at once, the source takes {source_ms} ms\n\n\
         {trials} trials per variant; latency = a client sending its read to holding the value \
         (a connection per client, one epoll loop), p99 over all clients of all trials.\n\n\
         | variant | source calls per trial (median, min–max) | p50 ms | p99 ms | p99 − source ms \
         | others hold the value after the first store, p99 ms | server CPU from the store to the last reply, median ms |\n\
         |---|---:|---:|---:|---:|---:|---:|\n"
    );
    for s in &summaries {
        let figure = |v: Option<f64>| v.map_or("—".to_owned(), |v| format!("{v:.2}"));
        text += &format!(
            "| {} | {} ({}–{}) | {:.2} | {:.2} | {:.2} | {} | {} |\n",
            s.variant.title(),
            s.calls_median,
            s.calls_min,
            s.calls_max,
            s.p50_ms,
            s.p99_ms,
            s.p99_ms - source_ms as f64,
            figure(s.after_store_p99_ms),
            figure(s.server_cpu_ms)
        );
    }
    if let Some(s) = summaries.iter().find(|s| s.variant == Variant::LeaseWait) {
        let ok = s.calls_min == 1 && s.calls_max == 1 && s.p99_ms <= (source_ms + 2) as f64;
        text += &format!(
            "\n- {}  lease-wait: one source call per stampede and p99 ≤ source + 2 ms: {}–{} calls, \
             p99 {:.2} ms (the waiters hold the value {} ms after the store, p99; the server's own \
             CPU for the store and every hand-off: {} ms)\n",
            if ok { "PASS" } else { "MISS" },
            s.calls_min,
            s.calls_max,
            s.p99_ms,
            s.after_store_p99_ms.map_or("—".to_owned(), |v| format!("{v:.2}")),
            s.server_cpu_ms.map_or("—".to_owned(), |v| format!("{v:.2}")),
        );
    }
    println!("{text}");
    if let Some(path) = md {
        std::fs::write(path, &text).expect("write the markdown table");
    }
    if let Some(path) = json {
        let variants: Vec<String> = summaries
            .iter()
            .map(|s| {
                format!(
                    "  \"{}\": {{\"source_calls_median\": {}, \"source_calls_max\": {}, \"source_calls_min\": {}, \
                     \"p50_ms\": {:.4}, \"p99_ms\": {:.4}, \"after_store_p99_ms\": {}, \"server_cpu_ms\": {}}}",
                    s.variant.name(),
                    s.calls_median,
                    s.calls_max,
                    s.calls_min,
                    s.p50_ms,
                    s.p99_ms,
                    s.after_store_p99_ms.map_or("null".to_owned(), |v| format!("{v:.4}")),
                    s.server_cpu_ms.map_or("null".to_owned(), |v| format!("{v:.4}"))
                )
            })
            .collect();
        let body = format!(
            "{{\"clients\": {clients}, \"source_ms\": {source_ms}, \"trials\": {trials},\n \"variants\": {{\n{}\n }}}}\n",
            variants.join(",\n")
        );
        std::fs::write(path, body).expect("write the JSON results");
    }
}
