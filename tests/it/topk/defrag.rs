//! Active defragmentation moves top-k keys, their heaps and items (on
//! Redis 7.2.6, the one server here that runs it): after 80 % of 3,000 keys
//! are deleted, a pass moves their blocks, and every value stays the same
//! (DEBUG DIGEST, DEBUG RELOAD) and every survivor answers.

use crate::common::defrag::defragment;
use crate::common::peer_redis::redis_7_2_or_skip;
use crate::common::*;
use crate::topk::support::list;

#[test]
fn defragmentation_moves_top_k_and_keeps_them() {
    let Some(binary) = redis_7_2_or_skip() else {
        return;
    };
    let server = Server::start_binary(Some(&binary), &[], &[]);
    let mut con = server.conn();
    let long = "an-item-long-enough-to-live-on-the-heap-".repeat(2);
    let mut p = redis::pipe();
    for i in 0..3000 {
        let key = format!("tk:{i}");
        match i % 2 {
            0 => p
                .cmd("TOPK.RESERVEX")
                .arg(&key)
                .arg(5)
                .arg(100)
                .arg(3)
                .arg(0.9),
            _ => p
                .cmd("TOPK.RESERVEX")
                .arg(&key)
                .arg(4)
                .arg(100)
                .arg(3)
                .arg(0.9)
                .arg("WINDOW")
                .arg("1h"),
        };
        p.cmd("TOPK.INCRBYX")
            .arg(&key)
            .arg(format!("{long}{i}"))
            .arg(7)
            .arg("b")
            .arg(3);
    }
    let _: Vec<Value> = p.query(&mut con).unwrap();
    let mut p = redis::pipe();
    let kept: Vec<usize> = (0..3000).filter(|i| i % 5 == 0).collect();
    for i in (0..3000).filter(|i| i % 5 != 0) {
        p.cmd("DEL").arg(format!("tk:{i}"));
    }
    let _: Vec<i64> = p.query(&mut con).unwrap();
    let digest = db_digest(&mut con);
    let moved_before = warden_stat(&mut con, "defrag_moved");
    let (before, after, hits) = defragment(&mut con);
    let moved = warden_stat(&mut con, "defrag_moved") - moved_before;
    eprintln!(
        "topk: frag {:.2} -> {:.2}, hits {hits}, warden blocks moved {moved}",
        before.ratio, after.ratio
    );
    assert!(moved > 0, "no top-k moved (hits {hits})");
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
        let got = list(&mut con, &format!("tk:{i}"));
        assert_eq!(
            got,
            [(format!("{long}{i}"), 7), ("b".to_string(), 3)],
            "tk:{i}"
        );
    }
}
