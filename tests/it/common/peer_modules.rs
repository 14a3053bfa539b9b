//! Other modules warden is compared with or must stand beside, where they
//! are at hand: RedisBloom's `redisbloom.so` and redis-cell's build; a
//! server with RedisBloom alone, and what side-by-side tests share.

use std::path::PathBuf;

use crate::common::*;

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
        let root = env!("CARGO_MANIFEST_DIR");
        let so = format!("{root}/target/bench/deps/redisbloom.so");
        if std::path::Path::new(&so).exists() {
            return Ok(so);
        }
        let out = std::process::Command::new("bash")
            .arg(format!("{root}/tests/bench/redisbloom.sh"))
            .arg(root)
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
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("../shared/peers/redis-cell-0.5.0/libredis_cell.so")
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

/// RedisBloom 2.8's own files (`tests/fixtures/redisbloom-2.8/`, made by its
/// `make.sh`): an RDB and an AOF holding Bloom and cuckoo filters, and
/// RedisBloom's recorded answers.
pub fn redisbloom_fixtures() -> PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/redisbloom-2.8")
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
    let mut s = Server::start_with(args, &["aliases", "redisbloom"]);
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
