//! Other modules warden is compared with or must stand beside, where they
//! are at hand: RedisBloom's `redisbloom.so` and redis-cell's build; a
//! server with RedisBloom alone, and what side-by-side tests share.

use std::path::{Path, PathBuf};

use crate::common::payload::Rng;
use crate::common::*;

/// The module arguments under which warden answers RedisBloom's names.
pub const ALIASES: &[&str] = &["aliases", "redisbloom"];

/// RedisBloom 2.8's module (`redisbloom.so`): `$REDISBLOOM` when set, else
/// `target/bench/deps/redisbloom.so`, fetched there once by `tests/bench/redisbloom.sh`
/// (as `make test` does) when missing. Panics when it cannot be had: the tests that
/// need it fail loudly rather than skip.
pub fn redisbloom() -> String {
    static PATH: std::sync::OnceLock<Result<String, String>> = std::sync::OnceLock::new();
    let found = PATH.get_or_init(|| {
        if let Ok(p) = std::env::var("REDISBLOOM") {
            return match std::path::Path::new(&p).exists() {
                true => Ok(p),
                false => Err(format!("REDISBLOOM={p} does not exist")),
            };
        }
        let root = super::repo_root().display().to_string();
        let so = format!("{root}/target/bench/deps/redisbloom.so");
        if std::path::Path::new(&so).exists() {
            return Ok(so);
        }
        let out = std::process::Command::new("bash")
            .arg(format!("{root}/tests/bench/redisbloom.sh"))
            .arg(&root)
            .output()
            .map_err(|e| format!("running tests/bench/redisbloom.sh: {e}"))?;
        match out.status.success() && std::path::Path::new(&so).exists() {
            true => Ok(so),
            false => Err(String::from_utf8_lossy(&out.stderr).into_owned()),
        }
    });
    match found {
        Ok(p) => p.clone(),
        Err(e) => panic!(
            "RedisBloom's redisbloom.so is needed and could not be fetched: {e}\n\
             (run `bash tests/bench/redisbloom.sh` with network access, or set REDISBLOOM)"
        ),
    }
}

/// The redis-cell module (`$WARDEN_REDIS_CELL`, else its build beside the
/// project in `../shared/peers/`), if present.
pub fn redis_cell() -> Option<PathBuf> {
    let path = std::env::var_os("WARDEN_REDIS_CELL")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            super::repo_root().join("../shared/peers/redis-cell-0.5.0/libredis_cell.so")
        });
    path.exists().then_some(path)
}

/// A server with RedisBloom alone (and no warden), with server options
/// `args` (`--name value` pairs) set before RedisBloom loads.
pub fn redisbloom_server(args: &[&str]) -> Server {
    let s = Server::start_bare(None);
    let mut con = s.conn();
    for pair in args.chunks(2) {
        let _: () = query!(
            &mut con,
            "CONFIG",
            "SET",
            pair[0].trim_start_matches('-'),
            pair[1]
        );
    }
    let _: () = query!(&mut con, "MODULE", "LOAD", redisbloom());
    s
}

/// A reply as text, errors included (so two replies compare whole).
pub fn reply(con: &mut Connection, c: &redis::Cmd) -> String {
    match c.query::<Value>(con) {
        Ok(v) => format!("{v:?}"),
        Err(e) => format!("error: {}", err_text(&e)),
    }
}

/// Sends `c` to RedisBloom's server (`rb`) and warden's (`w`) and asserts
/// the same reply.
pub fn same(rb: &mut Connection, w: &mut Connection, c: &redis::Cmd) -> String {
    let (theirs, ours) = (reply(rb, c), reply(w, c));
    assert_eq!(ours, theirs, "{}", show(c));
    ours
}

/// Whether the server lets a module's RDB aux data be left out
/// (`aux_save2`: Redis 7.2+, Valkey 8+), so that warden's RDB loads into a
/// server without warden.
pub fn aux_is_optional() -> bool {
    let (_, major, minor) = server_version();
    major > 7 || (major == 7 && minor >= 2)
}

pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
    }
}

/// Whether `MEMORY USAGE` of a key is comparable between warden and
/// RedisBloom: on Redis it is the value's size plus the server's own
/// overhead; Valkey's overhead of a module key differs between the two
/// modules' keys (by 16 bytes, for keys of every RedisBloom type), so there only
/// the values' own sizes are compared (`BF.INFO`'s `Size`, say).
pub fn memory_usage_comparable() -> bool {
    server_version().0 == "redis"
}

/// Writes with `write` on RedisBloom, then `late` after an AOF rewrite, and
/// asserts that warden (loaded with `module_args`, which name `aliases
/// redisbloom`) replaying that AOF holds what `snapshot` saw there; then the
/// same the other way round, warden's AOF into RedisBloom (where an RDB
/// preamble can leave warden's aux field out). With and without the preamble.
pub fn aof_both_ways<T: PartialEq + std::fmt::Debug>(
    module_args: &[&str],
    write: fn(&mut Connection),
    late: &[redis::Cmd],
    snapshot: fn(&mut Connection) -> T,
) {
    for preamble in ["no", "yes"] {
        let args = ["--appendonly", "yes", "--aof-use-rdb-preamble", preamble];
        let rb = redisbloom_server(&args);
        rb.wait_aof_rewrite_idle();
        let mut rbc = rb.conn();
        write(&mut rbc);
        rb.bgrewriteaof();
        for c in late {
            let _: Value = c.query(&mut rbc).expect("a late write");
        }
        let theirs = snapshot(&mut rbc);
        let mut w = Server::start_with(&args, module_args);
        w.kill();
        let _ = std::fs::remove_dir_all(w.dir.join("appendonlydir"));
        copy_dir(&rb.dir.join("appendonlydir"), &w.dir.join("appendonlydir"));
        w.crash_and_restart();
        let mut wc = w.loaded_conn();
        assert_eq!(
            snapshot(&mut wc),
            theirs,
            "RedisBloom's AOF, preamble {preamble}"
        );
        let _: () = query!(&mut wc, "FLUSHALL");
        write(&mut wc);
        w.bgrewriteaof();
        for c in late {
            let _: Value = c.query(&mut wc).expect("a late write");
        }
        let ours = snapshot(&mut wc);
        if preamble == "yes" && !aux_is_optional() {
            continue;
        }
        let mut back = Server::start_bare(None);
        back.kill();
        copy_dir(
            &w.dir.join("appendonlydir"),
            &back.dir.join("appendonlydir"),
        );
        back.set_args(&["--appendonly", "yes", "--loadmodule", &redisbloom()]);
        back.crash_and_restart();
        let mut backc = back.loaded_conn();
        assert_eq!(
            snapshot(&mut backc),
            ours,
            "warden's AOF, preamble {preamble}"
        );
    }
}

/// Moves every key of `from` to `to` (a RedisBloom server) through an RDB
/// file where warden's aux field can be left out, else through `DUMP` and
/// `RESTORE`.
pub fn move_to_redisbloom(from: &Server, to: &Server) {
    let (mut fc, mut tc) = (from.conn(), to.conn());
    if aux_is_optional() {
        let _: () = query!(&mut fc, "SAVE");
        std::fs::copy(from.dir.join("dump.rdb"), to.dir.join("dump.rdb")).unwrap();
        let _: () = query!(&mut tc, "DEBUG", "RELOAD", "NOSAVE");
    } else {
        let keys: Vec<String> = query!(&mut fc, "KEYS", "*");
        for k in keys {
            let payload = dump(&mut fc, &k);
            let _: () = query!(&mut tc, "RESTORE", &k, 0, payload);
        }
    }
}

/// RESTOREs 300 mutations (1 to 4 random bytes) of each payload as key
/// `victim` and runs `exercise` on each that loads, then checks the server
/// lives. Returns how many were refused.
pub fn mutated_restores(
    s: &mut Server,
    payloads: &[Vec<u8>],
    seed: u64,
    exercise: &[redis::Cmd],
) -> usize {
    let mut con = s.conn();
    let mut rng = Rng(seed);
    let mut refused = 0;
    for payload in payloads {
        for _ in 0..300 {
            let mut bad = payload.clone();
            for _ in 0..1 + rng.below(4) {
                let at = rng.below(bad.len());
                bad[at] = rng.next() as u8;
            }
            let r: redis::RedisResult<()> = cmd("RESTORE")
                .arg("victim")
                .arg(0)
                .arg(bad)
                .arg("REPLACE")
                .query(&mut con);
            if r.is_err() {
                refused += 1;
                continue;
            }
            for c in exercise {
                let _ = reply(&mut con, c);
            }
        }
    }
    s.assert_alive();
    refused
}

/// Runs `each` on a flushed RedisBloom and a flushed warden (`aliases
/// redisbloom`), first in RESP2, then in RESP3 (`true`).
pub fn in_both_protocols(mut each: impl FnMut(&mut Connection, &mut Connection, bool)) {
    let rb = redisbloom_server(&[]);
    let w = Server::start_with(&[], ALIASES);
    for resp3 in [false, true] {
        let (mut rbc, mut wc) = match resp3 {
            false => (rb.conn(), w.conn()),
            true => (rb.conn_resp3(), w.conn_resp3()),
        };
        let _: () = query!(&mut rbc, "FLUSHALL");
        let _: () = query!(&mut wc, "FLUSHALL");
        each(&mut rbc, &mut wc, resp3);
    }
}

/// Writes with `write` on RedisBloom and asserts that its RDB loads into
/// warden as `snapshot` saw it; then `more` on warden, and warden's keys
/// moved back (`move_to_redisbloom`) load into RedisBloom as `snapshot`
/// sees them on warden. Returns that last RedisBloom server.
pub fn rdb_both_ways<T: PartialEq + std::fmt::Debug>(
    write: fn(&mut Connection),
    more: fn(&mut Connection),
    snapshot: fn(&mut Connection) -> T,
) -> Server {
    let rb = redisbloom_server(&[]);
    let mut rbc = rb.conn();
    write(&mut rbc);
    let theirs = snapshot(&mut rbc);
    let _: () = query!(&mut rbc, "SAVE");
    let w = Server::start_with(&[], ALIASES);
    std::fs::copy(rb.dir.join("dump.rdb"), w.dir.join("dump.rdb")).unwrap();
    let mut wc = w.conn();
    let _: () = query!(&mut wc, "DEBUG", "RELOAD", "NOSAVE");
    assert_eq!(snapshot(&mut wc), theirs, "RedisBloom's RDB in warden");
    more(&mut wc);
    let ours = snapshot(&mut wc);
    let back = redisbloom_server(&[]);
    move_to_redisbloom(&w, &back);
    assert_eq!(
        snapshot(&mut back.conn()),
        ours,
        "warden's keys in RedisBloom"
    );
    back
}

/// Writes with `write` on RedisBloom, RESTOREs each of `keys`' payloads
/// into warden (`aliases redisbloom`) and asserts that warden's own `DUMP`
/// of it is the same bytes. Returns both servers: RedisBloom's, warden's.
pub fn dumps_both_ways(write: fn(&mut Connection), keys: &[&str]) -> (Server, Server) {
    let rb = redisbloom_server(&[]);
    let w = Server::start_with(&[], ALIASES);
    let (mut rbc, mut wc) = (rb.conn(), w.conn());
    write(&mut rbc);
    for k in keys {
        let payload = dump(&mut rbc, k);
        let _: () = query!(&mut wc, "RESTORE", *k, 0, payload.clone());
        assert_eq!(dump(&mut wc, k), payload, "warden's payload of {k}");
    }
    (rb, w)
}

/// RedisBloom 2.8's own files (`tests/fixtures/redisbloom-2.8/`, made by its
/// `make.sh`): an RDB and an AOF holding Bloom and cuckoo filters, and
/// RedisBloom's recorded answers.
pub fn redisbloom_fixtures() -> PathBuf {
    super::repo_root().join("tests/fixtures/redisbloom-2.8")
}

/// RedisBloom's recorded answers of `kind` for `key` (`answers.txt`):
/// `absent`, the non-members `absent:<i>` it answers 1 for; `missing`, the
/// members it answers 0 for; `count`, its `CF.COUNT` of each member.
pub fn recorded_answers(key: &str, kind: &str) -> Vec<u64> {
    let text = std::fs::read_to_string(redisbloom_fixtures().join("answers.txt")).unwrap();
    let line = text
        .lines()
        .find(|l| l.split_whitespace().take(2).eq([key, kind]))
        .unwrap_or_else(|| panic!("answers.txt has no `{key} {kind}` line"));
    line.split_whitespace()
        .skip(2)
        .map(|w| w.parse().unwrap())
        .collect()
}

/// A warden server with `aliases redisbloom` started on RedisBloom's fixture
/// `files` (copied into its directory), with extra server options `args`.
pub fn started_on_fixtures(files: &[&str], args: &[&str]) -> (Server, Connection) {
    let mut s = Server::start_with(args, ALIASES);
    s.kill();
    for f in files {
        let from = redisbloom_fixtures().join(f);
        let to = s.dir.join(f);
        if from.is_dir() {
            let _ = std::fs::remove_dir_all(&to);
            copy_dir(&from, &to);
        } else {
            std::fs::copy(from, to).unwrap();
        }
    }
    s.crash_and_restart();
    let con = s.loaded_conn();
    (s, con)
}
