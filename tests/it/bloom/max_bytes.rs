//! `bf-max-bytes` is a limit on new filters, not on state that already exists: a replica
//! or an AOF restart with a smaller limit keeps the master's filters. And whatever the
//! limit, no filter larger than the machine's memory is allocated.

use crate::bloom::support::*;
use crate::common::*;
use crate::lock::support::lock_server;

// ---------------------------------------------------------------------------------------
// Replication
// ---------------------------------------------------------------------------------------

/// Lines of a server's log that explain a refused or failed command.
fn critical_lines(s: &Server) -> String {
    std::fs::read_to_string(s.dir.join("redis.log"))
        .unwrap_or_default()
        .lines()
        .filter(|l| l.contains("CRITICAL") || l.contains("Guru") || l.contains("panicked"))
        .take(10)
        .collect::<Vec<_>>()
        .join("\n")
}

// ---------------------------------------------------------------------------------------
// bf-max-bytes is a limit on new filters, not on state that already exists
// ---------------------------------------------------------------------------------------

#[test]
fn replica_with_a_smaller_bf_max_bytes_keeps_the_masters_filters() {
    let mut m = Server::start();
    let mut r = m.start_replica(&[], &["bf-max-bytes", "1048576"]);
    let mut con = bf_conn(&m);
    // 1.2 MB at once, and a filter that grows past 1 MiB.
    reserve(&mut con, b"big", "0.01", 1_000_000, &["NONSCALING"]);
    madd_range(&mut con, b"big", "b:", 0..1_000);
    reserve(&mut con, b"grows", "0.01", 200_000, &["EXPANSION", "4"]);
    madd_range(&mut con, b"grows", "g:", 0..250_000);
    assert!(bf_info(&mut con, b"grows").size > 1 << 20);
    let acked: i64 = query!(&mut con, "WAIT", 1, 5_000);
    assert!(
        acked == 1 && r.is_alive(),
        "the replica did not apply the stream (alive: {}); replica log:\n{}",
        r.is_alive(),
        critical_lines(&r)
    );
    let mut rc = r.conn();
    for k in ["big", "grows"] {
        assert!(
            exists(&mut rc, k.as_bytes()),
            "replica lacks {k}; log:\n{}",
            r.log_tail(10)
        );
        assert_eq!(
            digest(&mut rc, k.as_bytes()),
            digest(&mut con, k.as_bytes()),
            "replica key {k}"
        );
    }
    assert_eq!(db_digest(&mut rc), db_digest(&mut con));
    m.assert_alive();
}

fn restart_with_smaller_cap(preamble: &str) {
    let mut s = Server::start_with(
        &["--appendonly", "yes", "--aof-use-rdb-preamble", preamble],
        &["bf-max-bytes", "1048576"],
    );
    let mut con = bf_conn(&s);
    let _: () = query!(&mut con, "CONFIG", "SET", "warden.bf-max-bytes", "8388608");
    reserve(&mut con, b"big", "0.01", 1_000_000, &["NONSCALING"]);
    madd_range(&mut con, b"big", "b:", 0..1_000);
    reserve(&mut con, b"grows", "0.01", 200_000, &["EXPANSION", "4"]);
    madd_range(&mut con, b"grows", "g:", 0..250_000);
    assert!(bf_info(&mut con, b"grows").size > 1 << 20);
    s.bgrewriteaof();
    let d_big = digest(&mut con, b"big");
    let d_grows = digest(&mut con, b"grows");
    // Back to the module argument's 1 MiB cap at start.
    s.restart("NOSAVE");
    let mut con = bf_conn(&s);
    assert_eq!(
        digest(&mut con, b"big"),
        d_big,
        "preamble {preamble}: 'big' after restart; log:\n{}",
        critical_lines(&s)
    );
    assert_eq!(
        digest(&mut con, b"grows"),
        d_grows,
        "preamble {preamble}: 'grows' after restart"
    );
    assert_eq!(mexists_range(&mut con, b"grows", "g:", 0..250_000), 250_000);
}

#[test]
fn aof_restart_with_a_smaller_bf_max_bytes_keeps_filters_rdb_preamble() {
    restart_with_smaller_cap("yes");
}

#[test]
fn aof_restart_with_a_smaller_bf_max_bytes_keeps_filters_no_preamble() {
    restart_with_smaller_cap("no");
}

// ---------------------------------------------------------------------------------------
// No filter larger than the machine
// ---------------------------------------------------------------------------------------

/// With `bf-max-bytes` at its largest (1 TiB), a filter larger than the
/// machine's memory is still refused, not allocated (the kernel would kill
/// the server).
///
/// (A red-team regression of issue #10's fixes.)
#[test]
fn a_filter_larger_than_the_machine_is_refused() {
    let (mut server, mut con) = lock_server();
    let _: () = query!(
        &mut con,
        "CONFIG",
        "SET",
        "warden.bf-max-bytes",
        1_099_511_627_776u64
    );
    // About 9.6 bits per item at 1 %: twice this machine's memory (capped at
    // the capacity range, whose filter is over 1 TiB and refused as well).
    let capacity = (physical_memory() * 2 * 8 / 9).min(1_000_000_000_000);
    let err = cmd("BF.RESERVEX")
        .arg("huge")
        .arg(0.01)
        .arg(capacity)
        .arg("NONSCALING")
        .query::<String>(&mut con)
        .expect_err("refused");
    assert_eq!(err_text(&err), "ERR filter would exceed bf-max-bytes");
    assert!(!exists(&mut con, "huge"));
    server.assert_alive();
}
