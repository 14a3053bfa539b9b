//! Active defragmentation as the tests run it (on a server that runs it:
//! `peer_redis::defrag_server`): the allocator's figures and a pass turned on
//! with low thresholds.

use std::time::{Duration, Instant};

use super::*;

/// A number from an INFO section.
pub fn info_f64(con: &mut Connection, section: &str, field: &str) -> f64 {
    info_field(con, section, field)
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("INFO {section} has no number {field}"))
}

/// Fragmentation figures of one run.
#[derive(Debug, Clone, Copy)]
pub struct Frag {
    /// INFO memory's `allocator_frag_ratio`.
    pub ratio: f64,
    /// INFO memory's `allocator_active`.
    pub active: f64,
}

/// The figures once the server has refreshed them (`INFO memory` shows the
/// allocator's statistics as of its last 100 ms cron tick).
pub fn frag(con: &mut Connection) -> Frag {
    std::thread::sleep(Duration::from_millis(1_100));
    Frag {
        ratio: info_f64(con, "memory", "allocator_frag_ratio"),
        active: info_f64(con, "memory", "allocator_active"),
    }
}

/// Turns active defragmentation on (thresholds low, so it runs on a small
/// dataset) and waits until its hits stop growing (or 40 s): the figures
/// before and after, and the hits.
pub fn defragment(con: &mut Connection) -> (Frag, Frag, i64) {
    let before = frag(con);
    for (name, v) in [
        ("active-defrag-ignore-bytes", "1mb"),
        ("active-defrag-threshold-lower", "1"),
        ("active-defrag-threshold-upper", "5"),
        ("active-defrag-cycle-min", "25"),
        ("active-defrag-cycle-max", "75"),
        // Values of more than 4 units of work go the stepped way.
        ("active-defrag-max-scan-fields", "4"),
        ("activedefrag", "yes"),
    ] {
        let _: () = query!(con, "CONFIG", "SET", name, v);
    }
    let hits = |con: &mut Connection| info_f64(con, "stats", "active_defrag_hits") as i64;
    let deadline = Instant::now() + Duration::from_secs(40);
    let mut last = hits(con);
    let mut calm = 0;
    while Instant::now() < deadline && calm < 4 {
        std::thread::sleep(Duration::from_millis(500));
        let now = hits(con);
        calm = if now - last < 200 && now > 0 {
            calm + 1
        } else {
            0
        };
        last = now;
    }
    let _: () = query!(con, "CONFIG", "SET", "activedefrag", "no");
    (before, frag(con), last)
}

/// One family's keys through a pass (on `peer_redis::defrag_server`; skipped,
/// as `defrag_server_or_skip` says, where there is none): 3,000 keys `{prefix}:{i}`
/// made by `make(key, i)`, 80 % of them deleted, then a pass must move
/// warden's blocks, leave every value the same (DEBUG DIGEST, DEBUG RELOAD),
/// and every survivor must answer (`survivor(con, key, i)`).
pub fn churn_one_family(
    prefix: &str,
    make: fn(&str, usize) -> Vec<redis::Cmd>,
    survivor: fn(&mut Connection, &str, usize),
) {
    let Some(binary) = super::peer_redis::defrag_server_or_skip() else {
        return;
    };
    let server = Server::start_binary(Some(&binary), &[], &[]);
    let mut con = server.conn();
    let mut p = redis::pipe();
    for i in 0..3000 {
        for c in make(&format!("{prefix}:{i}"), i) {
            p.add_command(c);
        }
    }
    let _: Vec<Value> = p.query(&mut con).unwrap();
    let mut p = redis::pipe();
    let kept: Vec<usize> = (0..3000).filter(|i| i % 5 == 0).collect();
    for i in (0..3000).filter(|i| i % 5 != 0) {
        p.cmd("DEL").arg(format!("{prefix}:{i}"));
    }
    let _: Vec<i64> = p.query(&mut con).unwrap();
    let digest = db_digest(&mut con);
    let moved_before = warden_stat(&mut con, "defrag_moved");
    let (before, after, hits) = defragment(&mut con);
    let moved = warden_stat(&mut con, "defrag_moved") - moved_before;
    eprintln!(
        "{prefix}: frag {:.2} -> {:.2}, hits {hits}, warden blocks moved {moved}",
        before.ratio, after.ratio
    );
    assert!(moved > 0, "no {prefix} key moved (hits {hits})");
    assert_eq!(
        db_digest(&mut con),
        digest,
        "defragmentation changed a value"
    );
    debug_reload(&mut con);
    assert_eq!(
        db_digest(&mut con),
        digest,
        "DEBUG RELOAD after defragmentation"
    );
    for i in kept {
        survivor(&mut con, &format!("{prefix}:{i}"), i);
    }
}

/// Sends `cmds` in pipelines of 5,000, failing on any error reply.
pub fn send(con: &mut Connection, cmds: impl IntoIterator<Item = redis::Cmd>) {
    let mut p = redis::pipe();
    let mut n = 0;
    for c in cmds {
        p.add_command(c);
        n += 1;
        if n == 5_000 {
            let _: Vec<Value> = p.query(con).expect("pipeline");
            p = redis::pipe();
            n = 0;
        }
    }
    if n > 0 {
        let _: Vec<Value> = p.query(con).expect("pipeline");
    }
}
