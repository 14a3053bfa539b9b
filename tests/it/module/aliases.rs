//! `aliases redisbloom,redis-cell` at load: RedisBloom's `BF.*` and `CF.*`
//! names are RedisBloom's commands (its layouts: `bloom::redisbloom_layout`,
//! `cuckoo::redisbloom_layout`), which answer warden's own filters too, in RedisBloom's reply types in RESP2 and
//! RESP3; redis-cell's `CL.THROTTLE` is `RL.GCRA` under that name; a name
//! another module holds refuses the load; writes to warden's own keys reach
//! replicas and the AOF under warden's own names only.

use crate::bloom::support::expect_err;
use crate::common::peer_modules::{redis_cell, redisbloom};
use crate::common::*;

const BOTH: &[&str] = &["aliases", "redisbloom,redis-cell"];

/// Every alias and the command it is.
const ALIASES: [(&str, &str); 1] = [("cl.throttle", "rl.gcra")];

/// RedisBloom's Bloom and cuckoo commands, registered with `aliases redisbloom`.
const REDISBLOOM_NAMES: [&str; 25] = [
    "bf.reserve",
    "bf.add",
    "bf.madd",
    "bf.insert",
    "bf.exists",
    "bf.mexists",
    "bf.info",
    "bf.card",
    "bf.debug",
    "bf.scandump",
    "bf.loadchunk",
    "cf.reserve",
    "cf.add",
    "cf.addnx",
    "cf.insert",
    "cf.insertnx",
    "cf.exists",
    "cf.mexists",
    "cf.count",
    "cf.del",
    "cf.compact",
    "cf.scandump",
    "cf.loadchunk",
    "cf.info",
    "cf.debug",
];

/// RedisBloom's flag reply: the integer 1/0 in RESP2, a boolean in RESP3.
fn flag(resp3: bool, v: bool) -> Value {
    match resp3 {
        true => Value::Boolean(v),
        false => Value::Int(i64::from(v)),
    }
}

fn status(s: &str) -> Value {
    Value::SimpleString(s.to_string())
}

/// Every BF alias in one protocol, against the X command on a twin key.
fn bloom_aliases_reply_as_redisbloom(con: &mut Connection, resp3: bool) {
    let f = |v| flag(resp3, v);
    let ok: Value = query!(con, "BF.RESERVE", "b", "0.01", 100);
    assert!(is_ok(&ok), "{ok:?}");
    let _: Value = query!(con, "BF.RESERVEX", "x", "0.01", 100);
    let v: Value = query!(con, "BF.ADD", "b", "a");
    assert_eq!(v, f(true));
    let v: Value = query!(con, "BF.ADD", "b", "a");
    assert_eq!(v, f(false));
    let v: Value = query!(con, "BF.MADD", "b", "a", "c");
    assert_eq!(v, Value::Array(vec![f(false), f(true)]));
    let v: Value = query!(con, "BF.INSERT", "b", "ITEMS", "c", "d");
    assert_eq!(v, Value::Array(vec![f(false), f(true)]));
    let v: Value = query!(con, "BF.EXISTS", "b", "d");
    assert_eq!(v, f(true));
    let v: Value = query!(con, "BF.EXISTS", "missing", "d");
    assert_eq!(v, f(false));
    let v: Value = query!(con, "BF.MEXISTS", "b", "a", "zz-absent");
    assert_eq!(v, Value::Array(vec![f(true), f(false)]));
    let v: Value = query!(con, "BF.CARD", "b");
    assert_eq!(v, Value::Int(3));
    // The X names keep warden's integers in both protocols.
    let v: Value = query!(con, "BF.ADDX", "x", "a");
    assert_eq!(v, Value::Int(1));
    let v: Value = query!(con, "BF.MEXISTSX", "x", "a", "zz-absent");
    assert_eq!(v, Value::Array(vec![Value::Int(1), Value::Int(0)]));

    // BF.INFO: RedisBloom's five fields, simple-string labels; a map in
    // RESP3, a flat array in RESP2. Size as RedisBloom counts it: its chain
    // and link records (32 + 64 bytes) and 144 bytes of bits.
    let fields = [
        ("Capacity", Value::Int(100)),
        ("Size", Value::Int(240)),
        ("Number of filters", Value::Int(1)),
        ("Number of items inserted", Value::Int(3)),
        ("Expansion rate", Value::Int(2)),
    ];
    let v: Value = query!(con, "BF.INFO", "b");
    let want = match resp3 {
        true => Value::Map(fields.iter().map(|(l, v)| (status(l), v.clone())).collect()),
        false => Value::Array(
            fields
                .iter()
                .flat_map(|(l, v)| [status(l), v.clone()])
                .collect(),
        ),
    };
    assert_eq!(v, want);
    for (word, (label, value)) in ["CAPACITY", "size", "FILTERS", "ITEMS", "EXPANSION"]
        .iter()
        .zip(fields.iter())
    {
        let v: Value = query!(con, "BF.INFO", "b", *word);
        let want = match resp3 {
            true => Value::Map(vec![(status(label), value.clone())]),
            false => Value::Array(vec![value.clone()]),
        };
        assert_eq!(v, want, "BF.INFO b {word}");
    }
    let _: Value = query!(con, "BF.RESERVE", "ns", "0.01", 10, "NONSCALING");
    let v: Value = query!(con, "BF.INFO", "ns", "EXPANSION");
    let want = match resp3 {
        true => Value::Map(vec![(status("Expansion rate"), Value::Nil)]),
        false => Value::Array(vec![Value::Nil]),
    };
    assert_eq!(v, want);
    let e = expect_err(con, &cmd_of!("BF.INFO", "missing"));
    assert!(e.contains("not found"), "{e}");

    // SCANDUMP / LOADCHUNK move the filter to another key.
    let mut it = 0i64;
    loop {
        let (next, data): (i64, Vec<u8>) = query!(con, "BF.SCANDUMP", "b", it);
        if next == 0 {
            assert!(data.is_empty());
            break;
        }
        let v: Value = query!(con, "BF.LOADCHUNK", "copy", next, data);
        assert!(is_ok(&v), "{v:?}");
        it = next;
    }
    let v: Value = query!(con, "BF.MEXISTS", "copy", "a", "c", "d", "zz-absent");
    assert_eq!(v, Value::Array(vec![f(true), f(true), f(true), f(false)]));
    assert_eq!(digest(con, "copy"), digest(con, "b"));

    // Arity errors name the command as called.
    let e = expect_err(con, &cmd_of!("BF.ADD", "b"));
    assert!(e.contains("'bf.add'"), "{e}");
    let e = expect_err(con, &cmd_of!("BF.INSERT", "b", "ITEMS"));
    assert!(e.contains("'bf.insert'"), "{e}");
}

#[test]
fn bloom_aliases_reply_as_redisbloom_in_resp2_and_resp3() {
    let s = Server::start_with(&[], BOTH);
    bloom_aliases_reply_as_redisbloom(&mut s.conn(), false);
    let _: () = query!(&mut s.conn(), "FLUSHALL");
    bloom_aliases_reply_as_redisbloom(&mut s.conn_resp3(), true);
}

#[test]
fn cl_throttle_is_rl_gcra_in_both_protocols() {
    let s = Server::start_with(&[], BOTH);
    for mut con in [s.conn(), s.conn_resp3()] {
        let _: () = query!(&mut con, "FLUSHALL");
        // redis-cell's README call, on a twin key through RL.GCRA.
        for _ in 0..3 {
            let cell: Vec<i64> = query!(&mut con, "CL.THROTTLE", "user123", 15, 30, 60, 1);
            let gcra: Vec<i64> = query!(&mut con, "RL.GCRA", "twin", 15, 30, 60, 1);
            assert_eq!(cell, gcra);
        }
        let v: Value = query!(&mut con, "CL.THROTTLE", "user123", 15, 30, 60);
        let Value::Array(items) = v else {
            panic!("{v:?}")
        };
        assert!(items.iter().all(|i| matches!(i, Value::Int(_))));
        assert_eq!(items.len(), 5);
    }
}

#[test]
fn an_alias_is_its_command_under_another_name() {
    let s = Server::start_with(&[], BOTH);
    let mut con = s.conn();
    for (alias, own) in ALIASES {
        let info: Vec<Value> = query!(&mut con, "COMMAND", "INFO", alias, own);
        let (Value::Array(a), Value::Array(o)) = (&info[0], &info[1]) else {
            panic!("COMMAND INFO {alias} {own}: {info:?}")
        };
        assert_eq!(a[0], Value::BulkString(alias.as_bytes().to_vec()));
        // Arity, flags, key positions, ACL categories, tips, key specs.
        assert_eq!(a[1..], o[1..], "{alias} vs {own}");
        let docs: Value = query!(&mut con, "COMMAND", "DOCS", alias, own);
        let Value::Array(d) = docs else {
            panic!("{docs:?}")
        };
        assert_eq!(d.len(), 4, "COMMAND DOCS {alias} {own}");
        let doc_of = |name: &str| {
            let at = d
                .iter()
                .position(|v| *v == Value::BulkString(name.as_bytes().to_vec()))
                .unwrap();
            d[at + 1].clone()
        };
        assert_eq!(doc_of(alias), doc_of(own), "{alias}");
        // As many arguments as the arity asks, the key first.
        let Value::Int(arity) = a[1] else {
            panic!("{a:?}")
        };
        let mut getkeys = cmd("COMMAND");
        getkeys.arg("GETKEYS").arg(alias).arg("k");
        for _ in 2..arity.abs() {
            getkeys.arg("1");
        }
        let keys: Vec<Vec<u8>> = query_cmd(&mut getkeys, &mut con);
        assert_eq!(keys, vec![b"k".to_vec()], "{alias}");
    }
}

#[test]
fn without_the_option_the_names_stay_free() {
    for (module_args, present) in [
        (&[][..], &[][..]),
        (&["aliases", "redisbloom"][..], &["bf."][..]),
        (&["aliases", "redis-cell"][..], &["cl."][..]),
        (
            &["aliases", "redis-cell,redisbloom"][..],
            &["bf.", "cl."][..],
        ),
    ] {
        let s = Server::start_with(&[], module_args);
        let mut con = s.conn();
        for (alias, own) in ALIASES {
            let info: Vec<Value> = query!(&mut con, "COMMAND", "INFO", alias, own);
            let want = present.iter().any(|p| alias.starts_with(p));
            assert_eq!(info[0] != Value::Nil, want, "{alias} with {module_args:?}");
            assert_ne!(info[1], Value::Nil, "{own}");
        }
        for name in REDISBLOOM_NAMES {
            let info: Vec<Value> = query!(&mut con, "COMMAND", "INFO", name);
            let want = present.contains(&"bf.");
            assert_eq!(info[0] != Value::Nil, want, "{name} with {module_args:?}");
        }
    }
}

#[test]
fn an_unknown_alias_set_is_refused() {
    for value in ["rebloom", "redisbloom,", "RedisBloom", "redisbloom,cell"] {
        let log = Server::start_refused(&["aliases", value]);
        assert!(
            log.contains("unknown alias set") && log.contains("redisbloom, redis-cell"),
            "aliases {value}:\n{log}"
        );
    }
}

#[test]
fn a_name_redisbloom_holds_refuses_the_load() {
    let rb = redisbloom();
    let beside = ["--loadmodule", rb.as_str()];
    let log = Server::start_refused_with(&beside, &["aliases", "redisbloom"]);
    assert!(
        log.contains("cannot register command BF.RESERVE")
            && log.contains("'aliases redisbloom'")
            && log.contains("Module not loaded"),
        "{log}"
    );
    // Without the option (or with another set) both load, each with its names.
    for module_args in [&[][..], &["aliases", "redis-cell"][..]] {
        let s = Server::start_with(&beside, module_args);
        let mut con = s.conn();
        let _: () = query!(&mut con, "BF.RESERVE", "rb", "0.01", 100);
        let _: () = query!(&mut con, "BF.RESERVEX", "w", "0.01", 100);
        assert_eq!(key_type(&mut con, "rb"), "MBbloom--");
        assert_eq!(key_type(&mut con, "w"), "warden-bf");
    }
    // At run time: MODULE LOADEX is refused and the server carries on.
    let s = Server::start_bare(None);
    let mut con = s.conn();
    let _: () = query!(&mut con, "MODULE", "LOAD", rb.as_str());
    let path = module_path().display().to_string();
    let refused: redis::RedisResult<()> = cmd("MODULE")
        .arg("LOADEX")
        .arg(&path)
        .arg("ARGS")
        .arg("aliases")
        .arg("redisbloom")
        .query(&mut con);
    assert!(refused.is_err());
    assert!(s
        .log_tail(20)
        .contains("cannot register command BF.RESERVE"));
    let _: () = query!(
        &mut con,
        "MODULE",
        "LOADEX",
        &path,
        "ARGS",
        "aliases",
        "redis-cell"
    );
    let v: Vec<i64> = query!(&mut con, "CL.THROTTLE", "k", 1, 2, 3);
    assert_eq!(v[0], 0);
    let v: i64 = query!(&mut con, "BF.ADD", "rb", "x");
    assert_eq!(v, 1);
}

#[test]
fn a_name_redis_cell_holds_refuses_the_load() {
    let Some(cell) = redis_cell() else {
        println!("skipped: no redis-cell build (set WARDEN_REDIS_CELL)");
        return;
    };
    let cell = cell.display().to_string();
    let beside = ["--loadmodule", cell.as_str()];
    for set in ["redis-cell", "redisbloom,redis-cell"] {
        let log = Server::start_refused_with(&beside, &["aliases", set]);
        assert!(
            log.contains("cannot register command CL.THROTTLE")
                && log.contains("Module not loaded"),
            "{log}"
        );
    }
    for module_args in [&[][..], &["aliases", "redisbloom"][..]] {
        let s = Server::start_with(&beside, module_args);
        let mut con = s.conn();
        let cell: Vec<i64> = query!(&mut con, "CL.THROTTLE", "c", 15, 30, 60);
        let gcra: Vec<i64> = query!(&mut con, "RL.GCRA", "g", 15, 30, 60);
        assert_eq!(cell, gcra);
    }
}

/// Every write RedisBloom's names and an alias can make to warden's own
/// keys, on a master with the option.
fn alias_writes(con: &mut Connection) {
    let _: () = query!(con, "BF.RESERVEX", "r", "0.01", 1000, "EXPANSION", 3);
    let _: Value = query!(con, "BF.ADD", "r", "a");
    let _: Value = query!(con, "BF.ADD", "r", "a");
    let _: () = query!(con, "BF.RESERVEX", "auto", "0.01", 100);
    let _: Value = query!(con, "BF.MADD", "auto", "a", "b");
    let _: () = query!(con, "BF.RESERVEX", "ins", "0.01", 50);
    let _: Value = query!(con, "BF.INSERT", "ins", "ITEMS", "a", "b", "a");
    let _: Value = query!(con, "BF.MADD", "r", "b", "a", "c");
    let _: () = query!(con, "BF.RESERVEX", "aging", "0.01", 100, "AGE", 3_600_000);
    let _: Value = query!(con, "BF.ADD", "aging", "a");
    let _: Value = query!(con, "BF.MADD", "aging", "b", "c");
    let mut it = 0i64;
    loop {
        let (next, data): (i64, Vec<u8>) = query!(con, "BF.SCANDUMP", "r", it);
        if next == 0 {
            break;
        }
        let _: () = query!(con, "BF.LOADCHUNK", "loaded", next, data);
        it = next;
    }
    let _: () = query!(con, "CF.RESERVEX", "cf", 100);
    let _: Value = query!(con, "CF.ADD", "cf", "a");
    let _: Value = query!(con, "CF.ADDNX", "cf", "b");
    let _: Value = query!(con, "CF.INSERT", "cf", "ITEMS", "c", "d");
    let _: Value = query!(con, "CF.DEL", "cf", "a");
    let _: () = query!(con, "CF.COMPACT", "cf");
    for _ in 0..3 {
        let _: Vec<i64> = query!(con, "CL.THROTTLE", "cell", 5, 10, 60, 2);
    }
}

#[test]
fn replicas_with_and_without_the_option_follow_alias_writes() {
    let master = Server::start_with(&[], BOTH);
    let plain = master.start_replica(&[], &[]);
    let aliased = master.start_replica(&[], BOTH);
    let mut con = master.conn();
    alias_writes(&mut con);
    master.sync_replicas(2);
    let want = db_digest(&mut con);
    for r in [&plain, &aliased] {
        let mut rc = r.conn();
        assert_eq!(db_digest(&mut rc), want);
        let v: i64 = query!(&mut rc, "BF.EXISTSX", "loaded", "c");
        assert_eq!(v, 1);
    }
}

#[test]
fn the_aof_holds_only_wardens_own_names() {
    let mut s = Server::start_with(
        &["--appendonly", "yes", "--aof-use-rdb-preamble", "no"],
        BOTH,
    );
    let mut con = s.conn();
    alias_writes(&mut con);
    let want = db_digest(&mut con);
    let mut aof = Vec::new();
    for entry in std::fs::read_dir(s.dir.join("appendonlydir")).unwrap() {
        aof.extend(std::fs::read(entry.unwrap().path()).unwrap());
    }
    let text = String::from_utf8_lossy(&aof).to_ascii_uppercase();
    for (alias, _) in ALIASES {
        let word = format!("\r\n{}\r\n", alias.to_ascii_uppercase());
        assert!(!text.contains(&word), "{alias} in the AOF");
    }
    // Replayed by a warden without the option.
    s.set_module_args(&[]);
    s.restart("NOSAVE");
    let mut con = s.conn();
    assert_eq!(db_digest(&mut con), want);
}
