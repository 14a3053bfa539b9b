//! The `TOPK.*X` contract: RedisBloom's replies (its own flow tests by the
//! X names) and error texts (after `ERR `), defaults, keyspace events, INFO
//! and the ACL category.

use std::time::Duration;

use crate::cms::support::error_of;
use crate::common::*;
use crate::topk::support::{add, counts, incr, list};

fn pairs(list: &[(&str, i64)]) -> Vec<(String, i64)> {
    list.iter().map(|(k, v)| (k.to_string(), *v)).collect()
}

/// RedisBloom's `test_simple`, `test_add_query_count`, `test_incrby`,
/// `test_list_info`, `test_list_with_count`, `test_empty_string` and
/// `test_cstring`, by the X names (on sketches wide enough that their few
/// items never share a bucket: what they decide then depends on the hash).
#[test]
fn replies_are_redisbloom_s() {
    let (s, mut con) = Server::start_conn();
    ok(
        &mut con,
        &cmd_of!("TOPK.RESERVEX", "topk", 20, 50, 5, "0.9"),
    );
    assert_eq!(add(&mut con, "topk", &["a"]), [None]);
    assert_eq!(add(&mut con, "topk", &["a", "b"]), [None, None]);
    let q: Vec<i64> = query!(&mut con, "TOPK.QUERYX", "topk", "a", "c");
    assert_eq!(q, [1, 0]);
    add(&mut con, "topk", &["bar", "baz", "42"]);
    add(&mut con, "topk", &["bar", "baz"]);
    assert_eq!(
        counts(&mut con, "topk", &["foo", "bar", "baz", "42"]),
        [0, 2, 2, 1]
    );

    ok(&mut con, &cmd_of!("TOPK.RESERVEX", "inc", 3, 1000, 3, 1));
    assert_eq!(
        incr(&mut con, "inc", &[("bar", 3), ("baz", 6), ("42", 2)]),
        [None, None, None]
    );
    assert_eq!(
        incr(&mut con, "inc", &[("42", 8), ("xyzzy", 4)]),
        [None, Some("bar".into())]
    );
    assert_eq!(
        counts(&mut con, "inc", &["bar", "baz", "42", "xyzzy", "4"]),
        [3, 6, 10, 4, 0]
    );

    ok(&mut con, &cmd_of!("TOPK.RESERVEX", "li", 2, 1000, 5, "0.9"));
    add(
        &mut con,
        "li",
        &["foo", "bar", "baz", "42", "foo", "bar", "baz"],
    );
    add(&mut con, "li", &["foo", "baz", "42", "foo", "baz"]);
    add(&mut con, "li", &["foo", "bar", "baz", "foo", "baz"]);
    let names: Vec<String> = query!(&mut con, "TOPK.LISTX", "li");
    assert_eq!(names, ["foo", "baz"]);
    let out = add(&mut con, "li", &["bar", "bar", "bar", "bar", "bar"]);
    assert_eq!(out, [None, None, Some("foo".into()), None, None]);
    let names: Vec<String> = query!(&mut con, "TOPK.LISTX", "li");
    assert_eq!(names, ["bar", "baz"]);

    ok(&mut con, &cmd_of!("TOPK.RESERVEX", "wc", 3, 1000, 7, "0.9"));
    add(
        &mut con,
        "wc",
        &["foo", "bar", "baz", "42", "foo", "bar", "baz"],
    );
    add(&mut con, "wc", &["foo", "baz", "42", "foo"]);
    add(&mut con, "wc", &["foo", "bar", "baz", "foo"]);
    assert_eq!(
        list(&mut con, "wc"),
        pairs(&[("foo", 6), ("baz", 4), ("bar", 3)])
    );

    ok(&mut con, &cmd_of!("TOPK.RESERVEX", "e", 3, 1000, 7, "0.9"));
    add(&mut con, "e", &[""]);
    incr(&mut con, "e", &[("", 100)]);
    add(&mut con, "e", &["foo", "bar", "baz"]);
    add(&mut con, "e", &["foo", "bar", "baz", ""]);
    add(&mut con, "e", &["foo", "bar", ""]);
    add(&mut con, "e", &["foo", ""]);
    assert_eq!(
        list(&mut con, "e"),
        pairs(&[("", 104), ("foo", 4), ("bar", 3)])
    );
    incr(&mut con, "e", &[("foo", 500), ("bar", 500), ("baz", 500)]);
    assert_eq!(
        list(&mut con, "e"),
        pairs(&[("foo", 504), ("bar", 503), ("baz", 502)])
    );
    add(&mut con, "e", &["Lets\nCrash", "\u{0}bin\u{0}"]);
    let q: Vec<i64> = query!(&mut con, "TOPK.QUERYX", "e", "bla", "foo");
    assert_eq!(q, [0, 1]);

    // Without sizes: RedisBloom's defaults (8, 7, 0.9).
    ok(&mut con, &cmd_of!("TOPK.RESERVEX", "d", 3));
    let info: Vec<Value> = query!(&mut con, "TOPK.INFOX", "d");
    let shown: Vec<String> = info
        .iter()
        .map(|v| {
            text_of(v)
                .or_else(|| int_of(v).map(|n| n.to_string()))
                .unwrap()
        })
        .collect();
    assert_eq!(
        shown,
        ["k", "3", "width", "8", "depth", "7", "decay", "0.9"]
    );
    assert_eq!(key_type(&mut con, "d"), "warden-tk");
    let mut r3 = s.conn_resp3();
    match raw(&mut r3, &cmd_of!("TOPK.INFOX", "d")) {
        Value::Map(m) => assert_eq!(m[3].1, Value::Double(0.9)),
        other => panic!("{other:?}"),
    }
}

#[test]
fn arguments_and_keys_are_refused_with_redisbloom_s_texts() {
    let (_s, mut con) = Server::start_conn();
    let _: () = query!(&mut con, "SET", "str", "v");
    ok(&mut con, &cmd_of!("TOPK.RESERVEX", "t", 3));
    let range = "(an integer from 1 to 4294967295)";
    let cases: Vec<(redis::Cmd, String)> = vec![
        (cmd_of!("TOPK.RESERVEX", "x"), "ERR wrong number of arguments for 'topk.reservex' command".into()),
        (cmd_of!("TOPK.RESERVEX", "x", "bar"), format!("ERR TopK: invalid k {range}")),
        (cmd_of!("TOPK.RESERVEX", "x", "4294967296", 1, 1, "0.1"), format!("ERR TopK: invalid k {range}")),
        (cmd_of!("TOPK.RESERVEX", "x", 20, "bar", 5, "0.9"), format!("ERR TopK: invalid width {range}")),
        (cmd_of!("TOPK.RESERVEX", "x", 20, "0.9", 5, "0.9"), format!("ERR TopK: invalid width {range}")),
        (cmd_of!("TOPK.RESERVEX", "x", 3, 1, "900000000000", 1), format!("ERR TopK: invalid depth {range}")),
        (cmd_of!("TOPK.RESERVEX", "x", 20, 50, 5, 42), "ERR TopK: invalid decay value. must be '<= 1' & '> 0'".into()),
        (cmd_of!("TOPK.RESERVEX", "x", 20, 50, 5, "bar"), "ERR TopK: invalid decay value. must be '<= 1' & '> 0'".into()),
        (cmd_of!("TOPK.RESERVEX", "x", 20, 50, 5), "ERR wrong number of arguments for 'topk.reservex' command".into()),
        (cmd_of!("TOPK.RESERVEX", "x", 20, 50, 5, "0.9", "xyzzy"), "ERR syntax error".into()),
        (cmd_of!("TOPK.RESERVEX", "x", 3, 2_000_000_000, 200_000_000, 1), "ERR Insufficient memory to create topk data structure (it would exceed topk-max-bytes)".into()),
        (cmd_of!("TOPK.RESERVEX", "x", 3, "WINDOW", 50), "ERR window must be from 100 ms to 10 years (3650 days)".into()),
        (cmd_of!("TOPK.RESERVEX", "t", 3), "ERR TopK: key already exists".into()),
        (cmd_of!("TOPK.RESERVEX", "str", 3), "ERR TopK: key already exists".into()),
        (cmd_of!("TOPK.ADDX", "t"), "ERR wrong number of arguments for 'topk.addx' command".into()),
        (cmd_of!("TOPK.ADDX", "missing", "a"), "ERR TopK: key does not exist".into()),
        (cmd_of!("TOPK.ADDX", "str", "a"), "WRONGTYPE Operation against a key holding the wrong kind of value".into()),
        (cmd_of!("TOPK.INCRBYX", "t", "foo", -5), "ERR TopK: increment must be an integer greater or equal to 0 and smaller or equal to 100,000".into()),
        (cmd_of!("TOPK.INCRBYX", "t", "foo", 123456), "ERR TopK: increment must be an integer greater or equal to 0 and smaller or equal to 100,000".into()),
        (cmd_of!("TOPK.INCRBYX", "t", "foo", 1, "bar"), "ERR syntax error".into()),
        (cmd_of!("TOPK.QUERYX", "missing", "a"), "ERR TopK: key does not exist".into()),
        (cmd_of!("TOPK.COUNTX", "t"), "ERR wrong number of arguments for 'topk.countx' command".into()),
        (cmd_of!("TOPK.LISTX", "t", "_topk_"), "ERR syntax error".into()),
        (cmd_of!("TOPK.LISTX", "missing"), "ERR TopK: key does not exist".into()),
        (cmd_of!("TOPK.INFOX", "t", "_topk_"), "ERR wrong number of arguments for 'topk.infox' command".into()),
        (cmd_of!("TOPK._ROTATEX", "t", 0), "ERR topk._rotatex is an internal command".into()),
        (cmd_of!("TOPK._LOADX", "t", "SLOT", 0, 1, "a"), "ERR topk._loadx is an internal command".into()),
    ];
    let before = db_digest(&mut con);
    for (c, want) in &cases {
        assert_eq!(&error_of(&mut con, c), want, "{}", show(c));
    }
    assert_eq!(
        db_digest(&mut con),
        before,
        "a refused call changed something"
    );
    assert!(!exists(&mut con, "x"));
}

#[test]
fn writes_emit_events_info_counts_keys_and_acl_has_a_category() {
    let server = Server::start();
    let mut events = server.conn();
    events
        .set_read_timeout(Some(Duration::from_millis(300)))
        .unwrap();
    let _: () = query!(&mut events, "CONFIG", "SET", "notify-keyspace-events", "Kd");
    let _: Value = query!(&mut events, "PSUBSCRIBE", "__keyspace@0__:*");
    let mut con = server.conn();
    ok(&mut con, &cmd_of!("TOPK.RESERVEX", "a", 2));
    add(&mut con, "a", &["x"]);
    incr(&mut con, "a", &[("y", 2)]);
    let _: Vec<i64> = query!(&mut con, "TOPK.QUERYX", "a", "x");
    list(&mut con, "a");
    let _ = raw(&mut con, &cmd_of!("TOPK.INCRBYX", "a", "x", -1));
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
    assert_eq!(seen, ["a topk.reserve", "a topk.add", "a topk.incrby"]);
    assert_eq!(warden_stat(&mut con, "topk_keys"), 1);
    let usage: i64 = query!(&mut con, "MEMORY", "USAGE", "a", "SAMPLES", 0);
    let bytes = warden_stat(&mut con, "topk_bytes");
    assert!(bytes > 8 * 56 && bytes < usage, "{bytes} {usage}");
    // Items held count: a longer item grows the gauge.
    let long = "x".repeat(1000);
    incr(&mut con, "a", &[(&long, 50)]);
    assert!(warden_stat(&mut con, "topk_bytes") >= bytes + 990);
    let _: () = query!(&mut con, "FLUSHALL");
    assert_eq!(warden_stat(&mut con, "topk_keys"), 0);
    assert_eq!(warden_stat(&mut con, "topk_bytes"), 0);
    // Where the server lets modules add ACL categories, `-@topk` keeps a
    // user off these commands and no others (RedisBloom's rule, unchanged).
    let cats: Vec<String> = query!(&mut con, "ACL", "CAT");
    if cats.iter().any(|c| c == "topk") {
        let _: () =
            query!(&mut con, "ACL", "SETUSER", "app", "on", "nopass", "~*", "+@all", "-@topk");
        let mut app = server.conn();
        let _: () = query!(&mut app, "AUTH", "app", "x");
        let refused = error_of(&mut app, &cmd_of!("TOPK.INFOX", "k"));
        assert!(refused.starts_with("NOPERM"), "{refused}");
        let other = error_of(&mut app, &cmd_of!("CMS.INFOX", "k"));
        assert!(other.contains("key does not exist"), "{other}");
    } else {
        println!("SKIP @topk: this server has no module ACL categories (Redis 7.4+, Valkey 8+)");
    }
}
