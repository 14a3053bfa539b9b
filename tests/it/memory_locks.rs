//! Bytes per key of locks (issue #27), measured as `tests/bench/memory.py`
//! does, on one fresh server: `used_memory` growth over N keys of 11
//! characters, and the RDB file's growth (SAVE, `rdbcompression no`), each
//! next to `SET k <owner> NX PX` with the same owner in the same run. Memory
//! is deterministic for one allocator: the bounds are exact figures, not
//! timings, for jemalloc (a server built with another allocator is skipped).
//!
//! - a plain lock: at most 1.15× the SET's RAM;
//! - a `SHARED` / `LIMIT` key with one holder: at most 1.5× a plain lock;
//!   each further holder at most 64 B;
//! - RDB: a lock's payload is the SET's plus at most 19 bytes (a module
//!   value's 9-byte type id and 1-byte end, the record's opcode and flags,
//!   and a 7-byte token), which is at most 1.5× the SET's for owners of 16
//!   bytes and more (a 5-byte owner's SET key is 28 bytes in all).

use crate::common::*;

/// Keys per row.
const KEYS: usize = 20_000;

/// Owners of 5, 16, 24 and 36 (a UUID) bytes.
const OWNERS: [&str; 4] = [
    "owner",
    "owner-0123456789",
    "owner-0123456789abcdefgh",
    "0b9f6c1e-7d2a-4c55-9e3b-5a1f2d8c7e40",
];

/// One row's figures: RAM and RDB bytes per key.
#[derive(Debug, Clone, Copy)]
struct PerKey {
    ram: f64,
    rdb: f64,
}

/// A server that saves its RDB uncompressed in its own directory.
struct Bench {
    server: Server,
    con: Connection,
    empty_rdb: u64,
}

impl Bench {
    fn start() -> Bench {
        let server = Server::start_with(&["--rdbcompression", "no"], &[]);
        let mut con = server.conn();
        let _: () = query!(&mut con, "FLUSHALL");
        let mut b = Bench {
            server,
            con,
            empty_rdb: 0,
        };
        b.empty_rdb = b.saved_bytes();
        b
    }

    /// SAVE, then the RDB file's size.
    fn saved_bytes(&mut self) -> u64 {
        let _: () = query!(&mut self.con, "SAVE");
        std::fs::metadata(self.server.dir.join("dump.rdb"))
            .expect("dump.rdb")
            .len()
    }

    /// The row whose calls for key `k` are `calls(k)`.
    fn row(&mut self, calls: impl Fn(&str) -> Vec<redis::Cmd>) -> PerKey {
        let _: () = query!(&mut self.con, "FLUSHALL");
        let before = used_memory(&mut self.con);
        let keys: Vec<String> = (0..KEYS).map(|i| format!("k:{i:09}")).collect();
        for chunk in keys.chunks(1000) {
            let mut p = redis::pipe();
            for k in chunk {
                for c in calls(k) {
                    p.add_command(c);
                }
            }
            let replies: Vec<Value> = p.query(&mut self.con).expect("pipeline");
            assert!(
                replies.iter().all(|v| !matches!(v, Value::Nil)),
                "every call must succeed"
            );
        }
        // The keyspace's dictionaries finish growing in the server's cron
        // (incremental rehashing): measured once the figure holds still.
        let mut after = used_memory(&mut self.con);
        for _ in 0..30 {
            std::thread::sleep(std::time::Duration::from_millis(150));
            let now = used_memory(&mut self.con);
            if now == after {
                break;
            }
            after = now;
        }
        let ram = (after - before) as f64 / KEYS as f64;
        let rdb = (self.saved_bytes() - self.empty_rdb) as f64 / KEYS as f64;
        PerKey { ram, rdb }
    }
}

fn set_nx(owner: &str) -> impl Fn(&str) -> Vec<redis::Cmd> + '_ {
    move |k| vec![cmd_of!("SET", k, owner, "NX", "PX", 600_000)]
}

/// `holders` grants on each key (`opts` after the ttl), owners `owner` with
/// their last character replaced by the holder's number after the first.
fn lock<'a>(
    owner: &'a str,
    holders: usize,
    opts: &'a [&'a str],
) -> impl Fn(&str) -> Vec<redis::Cmd> + 'a {
    move |k| {
        (0..holders)
            .map(|i| {
                let o = if i == 0 {
                    owner.to_string()
                } else {
                    format!("{}{i}", &owner[..owner.len() - 1])
                };
                cmd_of!("DLOCK.ACQUIRE", k, o, 600_000, opts)
            })
            .collect()
    }
}

#[test]
fn a_plain_lock_costs_at_most_115_percent_of_set_nx_px_in_ram() {
    let mut b = Bench::start();
    // The bounds are jemalloc's size classes (Redis's allocator); a server
    // built with libc's malloc (the Valkey wheels) counts memory otherwise.
    let allocator = info_field(&mut b.con, "memory", "mem_allocator").unwrap_or_default();
    if !allocator.starts_with("jemalloc") {
        println!("SKIP: the server's allocator is {allocator:?}, not jemalloc");
        return;
    }
    let mut report = Vec::new();
    let mut failed = false;
    for owner in OWNERS {
        let set = b.row(set_nx(owner));
        let lk = b.row(lock(owner, 1, &[]));
        let ok_ram = lk.ram <= set.ram * 1.15;
        // Whole bytes per key (the file's header counts the keys in a few bytes more).
        let (lk_rdb, set_rdb) = (lk.rdb.round(), set.rdb.round());
        let ok_rdb = lk_rdb <= set_rdb + 19.0 && (owner.len() < 16 || lk_rdb <= set_rdb * 1.5);
        failed |= !(ok_ram && ok_rdb);
        report.push(format!(
            "owner of {:2} B: SET NX PX {:.1} B RAM / {:.1} B RDB; DLOCK.ACQUIRE {:.1} B RAM ({:.3}x) / {:.1} B RDB ({:.3}x){}",
            owner.len(),
            set.ram,
            set.rdb,
            lk.ram,
            lk.ram / set.ram,
            lk.rdb,
            lk.rdb / set.rdb,
            if ok_ram && ok_rdb { "" } else { "  <- over the bound" }
        ));
    }
    b.server.assert_alive();
    assert!(
        !failed,
        "bytes per key over {KEYS} keys:\n{}",
        report.join("\n")
    );
}
