//! Bytes per key, measured as `tests/bench/memory.py` does: `used_memory`
//! growth over `KEYS` keys of 11 characters (`k:000000000` ..) and the RDB
//! file's growth (SAVE, `rdbcompression no`), on one server, every row in
//! the same run. Memory is deterministic for one allocator, so a test may
//! assert exact bounds on these figures: they are not timings.

use std::time::Duration;

use super::*;

/// Keys per row: enough that every row's dictionaries grow alike.
pub const KEYS: usize = 20_000;

/// RAM and RDB bytes per key of one row.
#[derive(Debug, Clone, Copy)]
pub struct Cost {
    /// `used_memory` growth per key.
    pub ram: f64,
    /// RDB file growth per key.
    pub rdb: f64,
}

/// A server that saves its RDB uncompressed in its own directory, and a
/// connection that measures it.
pub struct MemoryBench {
    /// The server.
    pub server: Server,
    /// The measuring connection (the keys are written from another).
    pub con: Connection,
}

impl MemoryBench {
    /// A fresh server with `args` besides `--rdbcompression no`.
    pub fn start(args: &[&str]) -> MemoryBench {
        let mut all = vec!["--rdbcompression", "no"];
        all.extend_from_slice(args);
        let server = Server::start_with(&all, &[]);
        let con = server.conn();
        let mut bench = MemoryBench { server, con };
        // What the first SAVE and the first readings allocate for good is
        // left out of every row.
        bench.settled_memory();
        bench.rdb_bytes();
        bench
    }

    /// Whether the server allocates with jemalloc (Redis's allocator), whose
    /// size classes the bounds are; says why when not (the Valkey wheels use
    /// libc's malloc, which counts memory otherwise), and the caller skips.
    pub fn is_jemalloc(&mut self) -> bool {
        let allocator = info_field(&mut self.con, "memory", "mem_allocator").unwrap_or_default();
        let jemalloc = allocator.starts_with("jemalloc");
        if !jemalloc {
            println!("SKIP: the server's allocator is {allocator:?}, not jemalloc");
        }
        jemalloc
    }

    /// Bytes a RAM bound set on Debian's jemalloc allows a module key on a
    /// server with finer size classes: 0 where jemalloc's quantum is 16 B
    /// (Debian's redis-server 7.0, which the bounds were set on), 8 where it is
    /// 8 B (Redis built with its own jemalloc, `--with-lg-quantum=3`: 7.2.6
    /// from source, Redis Stack 7.4). There a string key's single value
    /// allocation (the object with its string) and its dictionary entries
    /// round to 8 B and shrink by up to 24 B, while a module key's object and
    /// module value (16 B each) do not shrink, so it ends up to one 8 B step
    /// further above the string key (measured: RL.GCRA 8.0 B over a 19-byte
    /// string key on 7.2.6 and 7.4, 0.0 B on 7.0; a 36-byte-owner lock 1.164x
    /// the SET). Read from `MEMORY MALLOC-STATS` ("Quantum size").
    pub fn quantum_slack(&mut self) -> f64 {
        let stats: String = query!(&mut self.con, "MEMORY", "MALLOC-STATS");
        let quantum = stats
            .lines()
            .find_map(|l| l.trim().strip_prefix("Quantum size:"))
            .and_then(|q| q.trim().parse::<f64>().ok())
            .expect("MEMORY MALLOC-STATS names jemalloc's quantum");
        assert!(
            quantum == 8.0 || quantum == 16.0,
            "jemalloc's quantum is {quantum} B, the bounds know 8 and 16"
        );
        println!(
            "jemalloc's quantum: {quantum} B, RAM bounds + {} B",
            16.0 - quantum
        );
        16.0 - quantum
    }

    /// What `KEYS` keys made with `calls(key)` add to an empty server,
    /// measured on a second round, so what the first calls of a kind
    /// allocate once (a module's tables, the server's) is left out.
    pub fn cost(&mut self, calls: impl Fn(&str) -> Vec<redis::Cmd>) -> Cost {
        self.flush();
        self.write_keys(&calls);
        self.flush();
        let (ram0, rdb0) = (self.settled_memory(), self.rdb_bytes());
        self.write_keys(&calls);
        let per = |d: i64| d as f64 / KEYS as f64;
        Cost {
            ram: per(self.settled_memory() - ram0),
            rdb: per(self.rdb_bytes() - rdb0),
        }
    }

    /// Empties the database and waits until its memory is freed.
    fn flush(&mut self) {
        let _: () = query!(&mut self.con, "FLUSHALL", "SYNC");
        wait_lazyfree(&mut self.con, "the flushed keyspace");
    }

    /// Makes `KEYS` keys with `calls` on an empty database, from a
    /// connection of their own, closed before this returns: a pipeline's
    /// query and reply buffers are in `used_memory` while their client lives.
    fn write_keys(&mut self, calls: &impl Fn(&str) -> Vec<redis::Cmd>) {
        let mut writer = self.server.conn();
        for start in (0..KEYS).step_by(1000) {
            let mut pipe = redis::pipe();
            for i in start..(start + 1000).min(KEYS) {
                for c in calls(&format!("k:{i:09}")) {
                    pipe.add_command(c);
                }
            }
            let replies: Vec<Value> = pipe.query(&mut writer).expect("pipeline");
            assert!(
                replies.iter().all(|v| !matches!(v, Value::Nil)),
                "every call must succeed: {:?}",
                replies.iter().find(|v| matches!(v, Value::Nil))
            );
        }
        drop(writer);
        let alone = wait_until(Duration::from_secs(10), || {
            info_field(&mut self.con, "clients", "connected_clients").as_deref() == Some("1")
        });
        assert!(alone, "the writer's connection never closed");
        let n: usize = query!(&mut self.con, "DBSIZE");
        assert_eq!(n, KEYS, "every key made, none expired");
    }

    /// The size of the server's RDB file after SAVE.
    fn rdb_bytes(&mut self) -> i64 {
        let _: () = query!(&mut self.con, "SAVE");
        std::fs::metadata(self.server.dir.join("dump.rdb"))
            .expect("dump.rdb")
            .len() as i64
    }

    /// `used_memory` once the server has finished growing its dictionaries
    /// (a rehash in progress holds the old table and the new one; the
    /// server's cron finishes it within a tick or two).
    fn settled_memory(&mut self) -> i64 {
        let mut last = used_memory(&mut self.con);
        for _ in 0..50 {
            std::thread::sleep(Duration::from_millis(120));
            let stats: String = cmd("DEBUG")
                .arg("HTSTATS")
                .arg(0)
                .query(&mut self.con)
                .unwrap_or_default();
            let now = used_memory(&mut self.con);
            if now == last && !rehashing(&stats) {
                return now;
            }
            last = now;
        }
        panic!("used_memory never settled (last {last})");
    }
}

/// The calls of a row whose one command is `call` with the key inserted
/// second (`["SET", "v", "PX", "1000"]`: `SET k v PX 1000`).
pub fn keyed<'a>(call: &'a [&'a str]) -> impl Fn(&str) -> Vec<redis::Cmd> + 'a {
    move |key| {
        let mut words = vec![call[0], key];
        words.extend(&call[1..]);
        vec![command(&words)]
    }
}

/// Whether `DEBUG HTSTATS` shows a table being rehashed: Redis names a
/// second table "rehashing target"; Valkey 9's hashtable prints a
/// "rehashing index" in every table's stats, -1 when it is not rehashing.
fn rehashing(stats: &str) -> bool {
    stats
        .lines()
        .map(str::trim)
        .any(|l| l.contains("rehashing") && l != "rehashing index: -1")
}
