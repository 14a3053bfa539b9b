//! Servers started from an AOF with commands of the test's own appended: what
//! a master's stream or an older version's file can carry (internal commands,
//! values a client can no longer store), loaded as the server loads its AOF.

use super::Server;
use redis::cmd;

/// A server with an AOF of plain commands (no preamble) that replays
/// `commands` (their words) after whatever it wrote itself.
pub fn server_replaying(commands: &[&[&[u8]]]) -> Server {
    let mut server = Server::start_plain_aof();
    server.wait_aof_rewrite_idle();
    let _: redis::RedisResult<()> = cmd("SHUTDOWN").query(&mut server.conn());
    server.kill();
    append(&server.dir, commands);
    server.crash_and_restart();
    server.loaded_conn();
    server
}

/// Appends `commands` (RESP) to the newest incremental AOF in `dir`.
fn append(dir: &std::path::Path, commands: &[&[&[u8]]]) {
    let aof_dir = dir.join("appendonlydir");
    let manifest =
        std::fs::read_to_string(aof_dir.join("appendonly.aof.manifest")).expect("manifest");
    // Each line is `key value` pairs (`file … seq … type i`, and on Redis 8
    // `startoffset …` and `endoffset …` after them).
    let field = |line: &str, name: &str| {
        let words: Vec<&str> = line.split(' ').collect();
        words
            .chunks(2)
            .find(|pair| pair[0] == name)
            .and_then(|pair| pair.get(1).map(|v| v.to_string()))
    };
    let incr = manifest
        .lines()
        .filter(|l| field(l, "type").as_deref() == Some("i"))
        .filter_map(|l| field(l, "file"))
        .next_back()
        .expect("an incremental AOF");
    let path = aof_dir.join(incr);
    let mut bytes = std::fs::read(&path).expect("incr AOF");
    for words in commands {
        bytes.extend_from_slice(format!("*{}\r\n", words.len()).as_bytes());
        for w in *words {
            bytes.extend_from_slice(format!("${}\r\n", w.len()).as_bytes());
            bytes.extend_from_slice(w);
            bytes.extend_from_slice(b"\r\n");
        }
    }
    std::fs::write(&path, bytes).expect("write AOF");
}
