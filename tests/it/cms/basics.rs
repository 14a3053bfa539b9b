//! The `CMS.*X` contract: RedisBloom's replies and error texts (after
//! `ERR `), its merge and overflow rules, counts never under the truth, the
//! keys `CMS.MERGEX` declares, keyspace events, INFO and the ACL category.

use std::collections::HashMap;
use std::time::Duration;

use crate::cms::support::{counts, error_of, incr, info};
use crate::common::payload::Rng;
use crate::common::*;

fn pairs(list: &[(&str, i64)]) -> Vec<(String, i64)> {
    list.iter().map(|(k, v)| (k.to_string(), *v)).collect()
}

/// RedisBloom's own flow test (`test_simple`, `test_smallset`,
/// `test_incrby_query`), by the X names.
#[test]
fn replies_are_redisbloom_s() {
    let (_s, mut con) = Server::start_conn();
    ok(&mut con, &cmd_of!("CMS.INITBYDIMX", "cms1", 20, 5));
    assert_eq!(incr(&mut con, "cms1", &[("a", 5)]), [5]);
    assert_eq!(counts(&mut con, "cms1", &["a"]), [5]);
    assert_eq!(
        info(&mut con, "cms1"),
        pairs(&[("width", 20), ("depth", 5), ("count", 5)])
    );
    ok(
        &mut con,
        &cmd_of!("CMS.INITBYPROBX", "cms2", "0.001", "0.01"),
    );
    assert_eq!(incr(&mut con, "cms2", &[("a", 5)]), [5]);
    assert_eq!(
        info(&mut con, "cms2"),
        pairs(&[("width", 2000), ("depth", 7), ("count", 5)])
    );
    // On 2 × 2 counters items collide (whether these two do depends on
    // the hash): never under, and the total is exact.
    ok(&mut con, &cmd_of!("CMS.INITBYDIMX", "small", 2, 2));
    let got = incr(&mut con, "small", &[("foo", 10), ("bar", 42)]);
    assert!(got[0] >= 10 && got[1] >= 42, "{got:?}");
    let now = counts(&mut con, "small", &["foo", "bar"]);
    assert_eq!(incr(&mut con, "small", &[("foo", 0), ("bar", 0)]), now);
    assert_eq!(info(&mut con, "small")[2], ("count".to_string(), 52));
    ok(&mut con, &cmd_of!("CMS.INITBYDIMX", "cms", 1000, 5));
    incr(&mut con, "cms", &[("bar", 5), ("baz", 42)]);
    assert_eq!(counts(&mut con, "cms", &["foo", "bar", "baz"]), [0, 5, 42]);
    assert_eq!(key_type(&mut con, "cms"), "warden-cm");
    // RESP3: INFOX is a map.
    let mut r3 = _s.conn_resp3();
    match raw(&mut r3, &cmd_of!("CMS.INFOX", "cms")) {
        Value::Map(m) => assert_eq!(m.len(), 3),
        other => panic!("{other:?}"),
    }
}

#[test]
fn arguments_and_keys_are_refused_with_redisbloom_s_texts() {
    let (_s, mut con) = Server::start_conn();
    let _: () = query!(&mut con, "SET", "str", "v");
    ok(&mut con, &cmd_of!("CMS.INITBYDIMX", "a", 100, 5));
    ok(&mut con, &cmd_of!("CMS.INITBYDIMX", "b", 100, 5));
    ok(&mut con, &cmd_of!("CMS.INITBYDIMX", "other", 100, 4));
    let cases: &[(redis::Cmd, &str)] = &[
        (
            cmd_of!("CMS.INITBYDIMX", "x", 10),
            "ERR wrong number of arguments for 'cms.initbydimx' command",
        ),
        (
            cmd_of!("CMS.INITBYDIMX", "x", 0, 5),
            "ERR CMS: invalid width (an integer from 1 to 4294967295)",
        ),
        (
            cmd_of!("CMS.INITBYDIMX", "x", "blah", 5),
            "ERR CMS: invalid width (an integer from 1 to 4294967295)",
        ),
        (
            cmd_of!("CMS.INITBYDIMX", "x", 10, 0),
            "ERR CMS: invalid depth (an integer from 1 to 4294967295)",
        ),
        (
            cmd_of!("CMS.INITBYDIMX", "x", "8589934592", "8589934592"),
            "ERR CMS: invalid width (an integer from 1 to 4294967295)",
        ),
        (
            cmd_of!("CMS.INITBYDIMX", "x", 10, 5, "WINDOW", 99),
            "ERR window must be from 100 ms to 10 years (3650 days)",
        ),
        (
            cmd_of!("CMS.INITBYDIMX", "x", 10, 5, "FOO", 1),
            "ERR syntax error",
        ),
        (
            cmd_of!("CMS.INITBYDIMX", "x", 100000, 100000),
            "ERR CMS: Insufficient memory to create the key (it would exceed cms-max-bytes)",
        ),
        (
            cmd_of!("CMS.INITBYDIMX", "a", 10, 5),
            "ERR CMS: key already exists",
        ),
        (
            cmd_of!("CMS.INITBYDIMX", "str", 10, 5),
            "ERR CMS: key already exists",
        ),
        (
            cmd_of!("CMS.INITBYPROBX", "x", 1000, "0.1"),
            "ERR CMS: invalid overestimation value",
        ),
        (
            cmd_of!("CMS.INITBYPROBX", "x", "0.1", 0),
            "ERR CMS: invalid prob value",
        ),
        (
            cmd_of!("CMS.INITBYPROBX", "x", "0.9", "0.9999999999999999"),
            "ERR CMS: invalid init arguments",
        ),
        (
            cmd_of!("CMS.INITBYPROBX", "x", "0.0000000000000000001", "0.9"),
            "ERR CMS: invalid init arguments",
        ),
        (
            cmd_of!("CMS.INCRBYX", "a", "item"),
            "ERR wrong number of arguments for 'cms.incrbyx' command",
        ),
        (
            cmd_of!("CMS.INCRBYX", "a", "item", "foo"),
            "ERR CMS: Cannot parse number",
        ),
        (
            cmd_of!("CMS.INCRBYX", "a", "item", -1),
            "ERR CMS: Number cannot be negative",
        ),
        (cmd_of!("CMS.INCRBYX", "a", "i", 1, "j"), "ERR syntax error"),
        (
            cmd_of!("CMS.INCRBYX", "missing", "i", 1),
            "ERR CMS: key does not exist",
        ),
        (
            cmd_of!("CMS.INCRBYX", "str", "i", 1),
            "WRONGTYPE Operation against a key holding the wrong kind of value",
        ),
        (
            cmd_of!("CMS.QUERYX", "missing", "i"),
            "ERR CMS: key does not exist",
        ),
        (
            cmd_of!("CMS.QUERYX", "a"),
            "ERR wrong number of arguments for 'cms.queryx' command",
        ),
        (
            cmd_of!("CMS.INFOX", "missing"),
            "ERR CMS: key does not exist",
        ),
        (
            cmd_of!("CMS.INFOX", "str"),
            "WRONGTYPE Operation against a key holding the wrong kind of value",
        ),
        (
            cmd_of!("CMS.MERGEX", "a", 0),
            "ERR wrong number of arguments for 'cms.mergex' command",
        ),
        (
            cmd_of!("CMS.MERGEX", "a", 0, "b"),
            "ERR CMS: Number of keys must be positive",
        ),
        (
            cmd_of!("CMS.MERGEX", "a", -1, "a", "b"),
            "ERR CMS: Number of keys must be positive",
        ),
        (
            cmd_of!("CMS.MERGEX", "a", "B", "a"),
            "ERR CMS: invalid numkeys",
        ),
        (
            cmd_of!("CMS.MERGEX", "a", 1, "b", "WEIGHTS", "B"),
            "ERR CMS: invalid weight value",
        ),
        (
            cmd_of!("CMS.MERGEX", "a", 1, "b", "WEIGHTS", 1, 2),
            "ERR CMS: wrong number of keys/weights",
        ),
        (
            cmd_of!("CMS.MERGEX", "a", 3, "a", "b"),
            "ERR wrong number of arguments for 'cms.mergex' command",
        ),
        (cmd_of!("CMS.MERGEX", "a", 1, "b", "c"), "ERR syntax error"),
        (
            cmd_of!("CMS.MERGEX", "missing", 1, "a"),
            "ERR CMS: key does not exist",
        ),
        (
            cmd_of!("CMS.MERGEX", "a", 2, "b", "missing"),
            "ERR CMS: key does not exist",
        ),
        (
            cmd_of!("CMS.MERGEX", "a", 1, "str"),
            "WRONGTYPE Operation against a key holding the wrong kind of value",
        ),
        (
            cmd_of!("CMS.MERGEX", "a", 2, "b", "other"),
            "ERR CMS: width/depth is not equal",
        ),
        (
            cmd_of!("CMS._ROTATEX", "a", 0),
            "ERR cms._rotatex is an internal command",
        ),
        (
            cmd_of!("CMS._LOADX", "a", "CELLS", 0, 0, 0, ""),
            "ERR cms._loadx is an internal command",
        ),
    ];
    let before = db_digest(&mut con);
    for (c, want) in cases {
        assert_eq!(error_of(&mut con, c), *want, "{}", show(c));
    }
    assert_eq!(
        db_digest(&mut con),
        before,
        "a refused call changed something"
    );
    assert!(!exists(&mut con, "x"));
}

/// RedisBloom's overflow rule: an item whose counters saturate at 2^32 − 1
/// answers `CMS: INCRBY overflow` in its place of the reply; the others count.
#[test]
fn saturated_counts_answer_an_overflow_error_in_place() {
    let (_s, mut con) = Server::start_conn();
    let large = (1i64 << 31) - 1;
    ok(&mut con, &cmd_of!("CMS.INITBYDIMX", "cms", 1000, 4));
    let pairs = [("a", large), ("b", 10), ("c", 7)];
    assert_eq!(incr(&mut con, "cms", &pairs), [large, 10, 7]);
    assert_eq!(incr(&mut con, "cms", &pairs), [2 * large, 20, 14]);
    let v = raw(
        &mut con,
        &cmd_of!("CMS.INCRBYX", "cms", "a", large, "b", 10, "c", 7),
    );
    let Value::Array(items) = v else {
        panic!("{v:?}")
    };
    assert_eq!(
        err_of(&items[0]).as_deref(),
        Some("ERR CMS: INCRBY overflow")
    );
    assert_eq!((int_of(&items[1]), int_of(&items[2])), (Some(30), Some(21)));
    assert_eq!(counts(&mut con, "cms", &["a", "b"]), [u32::MAX as i64, 30]);
}

/// RedisBloom's `test_merge_success`: merges add counters with their
/// weights; subtracting a sketch merged in leaves exactly the others; a
/// second subtraction would go negative and is refused, nothing changed.
#[test]
fn merges_follow_redisbloom_s_rules() {
    let (_s, mut con) = Server::start_conn();
    for k in ["cms1{t}", "cms2{t}", "cms3{t}", "cms5{t}", "cms6{t}"] {
        ok(&mut con, &cmd_of!("CMS.INITBYDIMX", k, 1000, 5));
    }
    for i in 0..100 {
        incr(&mut con, "cms1{t}", &[(&format!("foo{i}"), 1)]);
        incr(&mut con, "cms2{t}", &[(&format!("bar{i}"), 1)]);
        incr(&mut con, "cms3{t}", &[(&format!("baz{i}"), 1)]);
    }
    ok(
        &mut con,
        &cmd_of!(
            "CMS.MERGEX",
            "cms5{t}",
            3,
            "cms1{t}",
            "cms2{t}",
            "cms3{t}",
            "WEIGHTS",
            1,
            1,
            1
        ),
    );
    ok(
        &mut con,
        &cmd_of!(
            "CMS.MERGEX",
            "cms6{t}",
            2,
            "cms5{t}",
            "cms3{t}",
            "weights",
            1,
            -1
        ),
    );
    assert_eq!(info(&mut con, "cms6{t}")[2], ("count".to_string(), 200));
    for i in 0..100 {
        let got = counts(
            &mut con,
            "cms6{t}",
            &[&format!("foo{i}"), &format!("bar{i}"), &format!("baz{i}")],
        );
        assert_eq!(got, [1, 1, 0], "{i}");
    }
    let before = digest(&mut con, "cms6{t}");
    let c = cmd_of!(
        "CMS.MERGEX",
        "cms6{t}",
        2,
        "cms6{t}",
        "cms3{t}",
        "WEIGHTS",
        1,
        -1
    );
    assert_eq!(error_of(&mut con, &c), "ERR CMS: MERGE overflow");
    assert_eq!(digest(&mut con, "cms6{t}"), before);
    // The destination may be a source, and a source may come twice.
    ok(
        &mut con,
        &cmd_of!("CMS.MERGEX", "cms1{t}", 2, "cms1{t}", "cms1{t}"),
    );
    assert_eq!(counts(&mut con, "cms1{t}", &["foo3"]), [2]);
    assert_eq!(info(&mut con, "cms1{t}")[2].1, 200);
    // MERGEX declares every key: dest, then its sources.
    let keys: Vec<String> = query!(
        &mut con,
        "COMMAND",
        "GETKEYS",
        "CMS.MERGEX",
        "d",
        2,
        "s1",
        "s2",
        "WEIGHTS",
        1,
        2
    );
    assert_eq!(keys, ["d", "s1", "s2"]);
}

/// Property: over a random stream (a few heavy items, many light ones),
/// every count is at least the item's true count.
#[test]
fn no_count_is_ever_under_the_truth() {
    let (_s, mut con) = Server::start_conn();
    ok(&mut con, &cmd_of!("CMS.INITBYDIMX", "c", 64, 3));
    let mut rng = Rng(99);
    let mut truth: HashMap<String, i64> = HashMap::new();
    let mut p = redis::pipe();
    for _ in 0..5000 {
        let spread = if rng.below(4) == 0 { 5 } else { 2000 };
        let item = format!("k{}", rng.below(spread));
        let by = 1 + rng.below(3) as i64;
        *truth.entry(item.clone()).or_default() += by;
        p.cmd("CMS.INCRBYX").arg("c").arg(&item).arg(by);
    }
    let _: Vec<Vec<i64>> = p.query(&mut con).unwrap();
    let items: Vec<&String> = truth.keys().collect();
    for chunk in items.chunks(500) {
        let names: Vec<&str> = chunk.iter().map(|s| s.as_str()).collect();
        for (item, got) in names.iter().zip(counts(&mut con, "c", &names)) {
            assert!(got >= truth[*item], "{item}: {got} < {}", truth[*item]);
        }
    }
}

#[test]
fn writes_emit_events_info_counts_sketches_and_acl_has_a_category() {
    let server = Server::start();
    let mut events = server.conn();
    events
        .set_read_timeout(Some(Duration::from_millis(300)))
        .unwrap();
    let _: () = query!(&mut events, "CONFIG", "SET", "notify-keyspace-events", "Kd");
    let _: Value = query!(&mut events, "PSUBSCRIBE", "__keyspace@0__:*");
    let mut con = server.conn();
    ok(&mut con, &cmd_of!("CMS.INITBYDIMX", "a", 10, 2));
    ok(&mut con, &cmd_of!("CMS.INITBYPROBX", "b", "0.1", "0.1"));
    incr(&mut con, "a", &[("x", 1)]);
    incr(&mut con, "a", &[("x", 0)]);
    counts(&mut con, "a", &["x"]);
    info(&mut con, "a");
    ok(&mut con, &cmd_of!("CMS.INITBYDIMX", "c", 10, 2));
    ok(&mut con, &cmd_of!("CMS.MERGEX", "c", 1, "a"));
    let _ = raw(&mut con, &cmd_of!("CMS.INCRBYX", "a", "x", -1));
    let mut seen = Vec::new();
    while let Ok(Value::Array(v)) = events.recv_response() {
        if v.len() == 4 {
            let key = text_of(&v[2])
                .unwrap()
                .trim_start_matches("__keyspace@0__:")
                .to_string();
            seen.push(format!("{key} {}", text_of(&v[3]).unwrap()));
        }
    }
    assert_eq!(
        seen,
        [
            "a cms.initbydim",
            "b cms.initbyprob",
            "a cms.incrby",
            "c cms.initbydim",
            "c cms.merge"
        ]
    );
    assert_eq!(warden_stat(&mut con, "cms_sketches"), 3);
    let bytes = warden_stat(&mut con, "cms_bytes");
    let sizes: i64 = ["a", "b", "c"]
        .iter()
        .map(|k| -> i64 { query!(&mut con, "MEMORY", "USAGE", *k, "SAMPLES", 0) })
        .sum();
    assert!(bytes > 0 && bytes < sizes, "{bytes} {sizes}");
    let _: i64 = query!(&mut con, "DEL", "a");
    let copied: i64 = query!(&mut con, "COPY", "b", "b2");
    assert_eq!(copied, 1);
    assert_eq!(warden_stat(&mut con, "cms_sketches"), 3);
    let _: () = query!(&mut con, "FLUSHALL");
    assert_eq!(warden_stat(&mut con, "cms_sketches"), 0);
    assert_eq!(warden_stat(&mut con, "cms_bytes"), 0);
    // Where the server lets modules add ACL categories, @cms holds the commands.
    // Where the server lets modules add ACL categories, `-@cms` keeps a
    // user off these commands and no others (RedisBloom's rule, unchanged).
    let cats: Vec<String> = query!(&mut con, "ACL", "CAT");
    if cats.iter().any(|c| c == "cms") {
        let _: () =
            query!(&mut con, "ACL", "SETUSER", "app", "on", "nopass", "~*", "+@all", "-@cms");
        let mut app = server.conn();
        let _: () = query!(&mut app, "AUTH", "app", "x");
        let refused = error_of(&mut app, &cmd_of!("CMS.INFOX", "k"));
        assert!(refused.starts_with("NOPERM"), "{refused}");
        let other = error_of(&mut app, &cmd_of!("TOPK.INFOX", "k"));
        assert!(other.contains("key does not exist"), "{other}");
    } else {
        println!("SKIP @cms: this server has no module ACL categories (Redis 7.4+, Valkey 8+)");
    }
}
