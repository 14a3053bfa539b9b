//! Active defragmentation moves count-min sketches (on Redis 7.2.6, the
//! one server here that runs it): after 80 % of 3,000 sketches are deleted,
//! a pass moves their blocks, and every value stays the same (DEBUG DIGEST,
//! DEBUG RELOAD) and every survivor answers.

use crate::cms::support::counts;
use crate::common::defrag::defragment;
use crate::common::peer_redis::redis_7_2_or_skip;
use crate::common::*;

#[test]
fn defragmentation_moves_sketches_and_keeps_them() {
    let Some(binary) = redis_7_2_or_skip() else {
        return;
    };
    let server = Server::start_binary(Some(&binary), &[], &[]);
    let mut con = server.conn();
    let mut p = redis::pipe();
    for i in 0..3000 {
        let key = format!("cms:{i}");
        match i % 3 {
            0 => p.cmd("CMS.INITBYDIMX").arg(&key).arg(64).arg(3),
            1 => p
                .cmd("CMS.INITBYDIMX")
                .arg(&key)
                .arg(40)
                .arg(2)
                .arg("WINDOW")
                .arg("1h"),
            _ => p.cmd("CMS.INITBYPROBX").arg(&key).arg(0.05).arg(0.1),
        };
        p.cmd("CMS.INCRBYX")
            .arg(&key)
            .arg("a")
            .arg(i)
            .arg("b")
            .arg(1);
    }
    let _: Vec<Value> = p.query(&mut con).unwrap();
    let mut p = redis::pipe();
    let kept: Vec<usize> = (0..3000).filter(|i| i % 5 == 0).collect();
    for i in (0..3000).filter(|i| i % 5 != 0) {
        p.cmd("DEL").arg(format!("cms:{i}"));
    }
    let _: Vec<i64> = p.query(&mut con).unwrap();
    let digest = db_digest(&mut con);
    let moved_before = warden_stat(&mut con, "defrag_moved");
    let (before, after, hits) = defragment(&mut con);
    let moved = warden_stat(&mut con, "defrag_moved") - moved_before;
    eprintln!(
        "cms: frag {:.2} -> {:.2}, hits {hits}, warden blocks moved {moved}",
        before.ratio, after.ratio
    );
    assert!(moved > 0, "no sketch moved (hits {hits})");
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
        assert_eq!(
            counts(&mut con, &format!("cms:{i}"), &["a"])[0],
            i as i64,
            "cms:{i}"
        );
    }
}
