//! `BF.LOADCHUNKX` under replication and persistence (issue #13): a ~100 MB filter moves
//! in 16 MiB chunks and a replica and the AOF end with the same filter; the replication
//! stream carries each accepted chunk as it was sent (nothing for a refused one), a
//! replica started in the middle of a load gets the key being loaded and follows the
//! rest, a replica with a smaller `bf-max-bytes` applies what the master accepted; a key
//! being loaded survives RDB restarts and AOF rewrites (with and without the RDB
//! preamble), and loading goes on after them.
//!
//! The commands themselves are in `tests/it/bloom/scandump.rs`.

use crate::bloom::support::*;
use crate::common::*;

/// 16 MiB, the largest chunk.
const CHUNK: usize = 16 << 20;

/// A ~96 MB filter in 16 MiB chunks: copied by chunks on a master with a replica and
/// an AOF; the copy is the source bit for bit, on the master, on the replica and after
/// the AOF is replayed.
#[test]
fn a_100mb_filter_moves_in_16mib_chunks_to_the_replica_and_the_aof() {
    let mut m = Server::start_with(&["--appendonly", "yes"], &[]);
    let r = m.start_streaming_replica();
    let mut con = bf_conn(&m);
    // A small first layer, then a second one for 32768 times its capacity: ~96 MB.
    reserve(&mut con, "big", "0.00005", 1_000, &["EXPANSION", "32768"]);
    let n = 20_000;
    assert_eq!(madd_range(&mut con, "big", "b:", 0..n), n);
    let info = bf_info(&mut con, "big");
    assert_eq!(info.filters, 2);
    assert!(info.size > 90_000_000 && info.size < 128 << 20, "{info:?}");

    let chunks = copy_by_chunks(&mut con, "big", "big:copy");
    let lens: Vec<usize> = chunks.iter().map(|(_, c)| c.len()).collect();
    assert_eq!(
        lens.len(),
        8,
        "header, the first layer, six chunks: {lens:?}"
    );
    assert!(lens[2..7].iter().all(|l| *l == CHUNK), "{lens:?}");
    assert!(lens[7] > 0 && lens[7] < CHUNK, "{lens:?}");
    let want = digest(&mut con, "big");
    assert_eq!(digest(&mut con, "big:copy"), want);
    assert_eq!(bf_info(&mut con, "big:copy"), info);
    assert_eq!(mexists_range(&mut con, "big:copy", "b:", 0..n), n);

    m.sync_replicas(1);
    let mut rc = bf_conn(&r);
    assert_eq!(digest(&mut rc, "big:copy"), want, "replica");
    assert_eq!(mexists_range(&mut rc, "big:copy", "b:", 0..n), n, "replica");
    assert_eq!(db_digest(&mut rc), db_digest(&mut con), "replica dataset");
    drop(r);

    // The AOF replays the chunks (applied with the same checks while loading).
    let dataset = db_digest(&mut con);
    m.restart("NOSAVE");
    let mut con = bf_conn(&m);
    assert_eq!(digest(&mut con, "big:copy"), want, "after AOF replay");
    assert_eq!(db_digest(&mut con), dataset, "after AOF replay");
    assert_eq!(mexists_range(&mut con, "big:copy", "b:", 0..n), n);
    m.assert_alive();
}

/// The stream carries each accepted chunk verbatim and nothing for a refused one; a
/// replica (one with a 1 KiB `bf-max-bytes` too) follows a load, also one started in
/// the middle of it (the key being loaded reaches it in the full sync), and also chunks
/// sent in MULTI; every replica ends with the master's dataset.
#[test]
fn replicas_follow_every_chunk() {
    let m = Server::start();
    let first = m.start_replica(&[], &["bf-max-bytes", "1024"]);
    let mut con = m.conn();
    reserve(&mut con, "src", "0.01", 100, &[]);
    madd_range(&mut con, "src", "s:", 0..1_500);
    let chunks = scandump(&mut con, "src");
    assert!(chunks.len() >= 5, "{} chunks", chunks.len());
    let mut tap = m.replication_tap();

    loadchunks(&mut con, "k", &chunks[..2]);
    let bad = raw(
        &mut con,
        cmd("BF.LOADCHUNKX")
            .arg("k")
            .arg(chunks[3].0)
            .arg(&chunks[3].1[..]),
    );
    assert!(err_of(&bad).is_some(), "{bad:?}");
    let seen = without_multi_exec(tap.until_marker(&mut con, "marker", "1"));
    let want: Vec<Vec<String>> = chunks[..2]
        .iter()
        .map(|(it, data)| {
            let data = String::from_utf8_lossy(data).into_owned();
            vec!["BF.LOADCHUNKX".into(), "k".into(), it.to_string(), data]
        })
        .collect();
    assert!(
        seen == want,
        "the stream: {:?}",
        seen.iter().map(|c| &c[..3]).collect::<Vec<_>>()
    );

    m.sync_replicas(1);
    let mut fc = first.conn();
    assert_eq!(key_type(&mut fc, "k"), "warden-bl");
    assert_eq!(
        expect_err(&mut fc, cmd("BF.EXISTSX").arg("k").arg("s:1")),
        LOADING
    );
    assert_eq!(digest(&mut fc, "k"), digest(&mut con, "k"));

    // A replica started now gets "k" as it is in the full sync, then the rest.
    let second = m.start_replica(&[], &[]);
    loadchunks(&mut con, "k", &chunks[2..4]);
    // Chunks in MULTI reach replicas as a transaction.
    let _: () = query!(&mut con, "MULTI");
    for (it, data) in &chunks[4..] {
        let _: () = query!(&mut con, "BF.LOADCHUNKX", "k", *it, &data[..]);
    }
    let replies: Vec<Value> = query!(&mut con, "EXEC");
    assert!(replies.iter().all(is_ok), "{replies:?}");
    let want = digest(&mut con, "src");
    assert_eq!(digest(&mut con, "k"), want);
    m.sync_replicas(2);
    for (name, replica) in [("first", &first), ("second", &second)] {
        let mut rc = replica.conn();
        assert_eq!(key_type(&mut rc, "k"), "warden-bf", "{name}");
        assert_eq!(digest(&mut rc, "k"), want, "{name}");
        assert_eq!(mexists_range(&mut rc, "k", "s:", 0..1_500), 1_500, "{name}");
        assert_eq!(db_digest(&mut rc), db_digest(&mut con), "{name}");
    }
}

/// How a server is restarted in the middle of a load.
#[derive(Clone, Copy, Debug)]
enum Restart {
    /// SHUTDOWN SAVE, RDB load.
    Rdb,
    /// BGREWRITEAOF with the given `aof-use-rdb-preamble`, then AOF load.
    Aof(&'static str),
}

/// A key being loaded (with a TTL) and a key loaded by chunks survive the restart;
/// loading goes on after it and ends with the source filter.
fn restart_in_the_middle_of_a_load(how: Restart) {
    let mut s = match how {
        Restart::Rdb => Server::start(),
        Restart::Aof(preamble) => Server::start_with(
            &["--appendonly", "yes", "--aof-use-rdb-preamble", preamble],
            &[],
        ),
    };
    let mut con = s.conn();
    reserve(&mut con, "src", "0.01", 100, &["EXPANSION", "3"]);
    madd_range(&mut con, "src", "s:", 0..2_000);
    let chunks = scandump(&mut con, "src");
    assert!(chunks.len() >= 5, "{} chunks", chunks.len());
    loadchunks(&mut con, "done", &chunks);
    loadchunks(&mut con, "header-only", &chunks[..1]);
    loadchunks(&mut con, "half", &chunks[..3]);
    let _: i64 = query!(&mut con, "PEXPIRE", "half", 3_600_000);
    let expires_at = pexpiretime(&mut con, "half");
    let keys = ["done", "header-only", "half"];
    let before: Vec<String> = keys.iter().map(|k| digest(&mut con, k)).collect();
    match how {
        Restart::Rdb => s.restart("SAVE"),
        Restart::Aof(_) => {
            s.bgrewriteaof();
            s.restart("NOSAVE");
        }
    }
    let mut con = s.conn();
    let after: Vec<String> = keys.iter().map(|k| digest(&mut con, k)).collect();
    assert_eq!(after, before, "{how:?}: {keys:?}");
    assert_eq!(key_type(&mut con, "half"), "warden-bl", "{how:?}");
    assert_eq!(pexpiretime(&mut con, "half"), expires_at, "{how:?}");
    let want = digest(&mut con, "src");
    loadchunks(&mut con, "half", &chunks[3..]);
    loadchunks(&mut con, "header-only", &chunks[1..]);
    assert_eq!(
        pexpiretime(&mut con, "half"),
        expires_at,
        "{how:?}: the TTL is kept"
    );
    let _: i64 = query!(&mut con, "PERSIST", "half");
    for k in keys {
        assert_eq!(digest(&mut con, k), want, "{how:?}: {k}");
        assert_eq!(
            mexists_range(&mut con, k, "s:", 0..2_000),
            2_000,
            "{how:?}: {k}"
        );
    }
    assert_eq!(
        filter_stats(&mut con),
        filter_census(&mut con, &[0]),
        "{how:?}"
    );
    s.assert_alive();
}

#[test]
fn a_load_goes_on_after_an_rdb_restart() {
    restart_in_the_middle_of_a_load(Restart::Rdb);
}

#[test]
fn a_load_goes_on_after_an_aof_rewrite_with_the_rdb_preamble() {
    restart_in_the_middle_of_a_load(Restart::Aof("yes"));
}

#[test]
fn a_load_goes_on_after_an_aof_rewrite_without_the_rdb_preamble() {
    restart_in_the_middle_of_a_load(Restart::Aof("no"));
}
