//! In a cluster, `CMS.MERGEX` declares its destination and every source: a
//! call is routed to the node of its keys (MOVED followed), and keys in two
//! slots are refused with `CROSSSLOT` before anything runs.

use crate::common::cluster::Cluster;
use crate::common::*;

#[test]
fn merges_are_routed_by_every_key_and_refused_across_slots() {
    let cluster = Cluster::start_with(3, 0);
    let masters = cluster.masters();
    let (here, there) = (masters[0], masters[1]);
    let tag = cluster.tag_on("cms", there, &[]);
    let other = cluster.tag_on("cms", masters[2], &[]);
    let (dest, a, b) = (format!("{tag}:all"), format!("{tag}:a"), format!("{tag}:b"));
    let mut follow = cluster.following(here);
    let ok = |follow: &mut crate::common::cluster::ClusterConn, c: redis::Cmd| {
        let v: Value = follow
            .query(&c)
            .unwrap_or_else(|e| panic!("{}: {}", show(&c), err_text(&e)));
        v
    };
    for k in [&dest, &a, &b] {
        ok(&mut follow, cmd_of!("CMS.INITBYDIMX", k, 100, 3));
    }
    ok(&mut follow, cmd_of!("CMS.INCRBYX", &a, "x", 2));
    ok(&mut follow, cmd_of!("CMS.INCRBYX", &b, "x", 3));
    // Sent to another node: MOVED to the keys' node, then merged there.
    let mut fresh = cluster.following(here);
    let merged = ok(&mut fresh, cmd_of!("CMS.MERGEX", &dest, 2, &a, &b));
    assert!(is_ok(&merged), "{merged:?}");
    assert_eq!(fresh.redirects.len(), 1, "{:?}", fresh.redirects);
    let counts: Vec<i64> = follow.query(&cmd_of!("CMS.QUERYX", &dest, "x")).unwrap();
    assert_eq!(counts, [5]);
    // A source in another slot: CROSSSLOT, nothing changed.
    let stray = format!("{other}:c");
    let mut owner = cluster.conn(there);
    let e = cmd_of!("CMS.MERGEX", &dest, 2, &a, &stray)
        .query::<Value>(&mut owner)
        .unwrap_err();
    assert!(err_text(&e).starts_with("CROSSSLOT"), "{}", err_text(&e));
    let counts: Vec<i64> = follow.query(&cmd_of!("CMS.QUERYX", &dest, "x")).unwrap();
    assert_eq!(counts, [5]);
}
