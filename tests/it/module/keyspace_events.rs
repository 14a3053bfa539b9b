//! Keyspace notifications: every write of every family emits an event named
//! after its command (module class `d`); calls that change nothing emit none.

use crate::bloom::support::{loadchunks, madd_range, scandump};
use crate::cache::support::{cache_get, cache_set, get_lease, refresh};
use crate::common::docs::{command_docs, command_flags, key_positions, public_commands};
use crate::common::fuzz_calls::{build, show_call, valid_call};
use crate::common::payload::Rng;
use crate::common::waiter::*;
use crate::common::*;
use crate::lock::support::*;

use std::time::Duration;

/// A connection subscribed to every keyspace event of database 0.
struct Events {
    con: Connection,
}

impl Events {
    fn subscribe(server: &Server) -> Events {
        let mut con = server.conn();
        con.set_read_timeout(Some(Duration::from_millis(300)))
            .expect("read timeout");
        let _: () = query!(&mut con, "CONFIG", "SET", "notify-keyspace-events", "Kd");
        let _: Value = query!(&mut con, "PSUBSCRIBE", "__keyspace@0__:*");
        Events { con }
    }

    /// The (key, event) pairs published before the message on channel
    /// `marker`.
    fn until_marker(&mut self) -> Vec<(String, String)> {
        let mut seen = Vec::new();
        loop {
            let v = match self.con.recv_response() {
                Ok(v) => v,
                Err(e) => panic!("no marker ({e}) after {seen:?}"),
            };
            let Value::Array(items) = v else { continue };
            let words: Vec<String> = items
                .iter()
                .map(|v| text_of(v).unwrap_or_default())
                .collect();
            match words.as_slice() {
                [kind, channel, _] if kind == "message" && channel == "marker" => return seen,
                [kind, _, channel, event] if kind == "pmessage" => seen.push((
                    channel.trim_start_matches("__keyspace@0__:").to_string(),
                    event.clone(),
                )),
                _ => {}
            }
        }
    }

    /// The (key, event) pairs published until the connection stays quiet.
    fn drain(&mut self) -> Vec<(String, String)> {
        let mut seen = Vec::new();
        while let Ok(v) = self.con.recv_response() {
            // ["pmessage", pattern, channel, event]
            if let Value::Array(items) = v {
                let text = |v: &Value| match v {
                    Value::BulkString(b) => String::from_utf8_lossy(b).into_owned(),
                    other => format!("{other:?}"),
                };
                if items.len() == 4 && text(&items[0]) == "pmessage" {
                    let channel = text(&items[2]);
                    let key = channel.trim_start_matches("__keyspace@0__:").to_string();
                    seen.push((key, text(&items[3])));
                }
            }
        }
        seen
    }
}

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(k, e)| (k.to_string(), e.to_string()))
        .collect()
}

/// A server, a connection subscribed to its keyspace events, and a connection to it.
fn subscribed() -> (Server, Events, Connection) {
    let server = Server::start();
    let events = Events::subscribe(&server);
    let con = conn_t(&server);
    (server, events, con)
}

/// Every lock write emits its event; a refused acquire or release emits none.
#[test]
fn lock_writes_emit_events() {
    let (_server, mut events, mut con) = subscribed();
    let t = try_acquire(&mut con, "l", "a", 30_000).expect("granted");
    assert_eq!(try_acquire(&mut con, "l", "b", 30_000), None);
    assert_eq!(try_acquire(&mut con, "l", "a", 30_000), Some(t));
    assert_eq!(reenter(&mut con, "l", "a", 30_000), Some(t));
    assert_eq!(extend(&mut con, "l", "a", 40_000), 1);
    assert_eq!(extend(&mut con, "l", "b", 40_000), 0);
    assert_eq!(release(&mut con, "l", "b"), 0);
    assert_eq!(release(&mut con, "l", "a"), 1);
    assert_eq!(release(&mut con, "l", "a"), 1);
    assert_eq!(
        events.drain(),
        pairs(&[
            ("l", "dlock.acquire"),
            ("l", "dlock.acquire"),
            ("l", "dlock.acquire"),
            ("l", "dlock.extend"),
            ("l", "dlock.release"),
            ("l", "dlock.release"),
        ])
    );
}

/// A hand-off to a waiter is an acquire by the waiter: it emits `dlock.acquire`.
#[test]
fn a_hand_off_emits_an_acquire() {
    let (server, mut events, mut con) = subscribed();
    try_acquire(&mut con, "h", "a", 30_000).expect("granted");
    let waiter = Waiter::lock(&server, "h", "w", 10_000, 5_000);
    wait_waiting(&mut con, 1);
    assert_eq!(release(&mut con, "h", "a"), 1);
    waiter.granted("the waiter");
    assert_eq!(
        events.drain(),
        pairs(&[
            ("h", "dlock.acquire"),
            ("h", "dlock.release"),
            ("h", "dlock.acquire"),
        ])
    );
}

/// Bloom writes emit `bf.reserve`/`bf.add`/`bf.madd`/`bf.insert` when the
/// filter changed; adding only items already present emits nothing.
#[test]
fn bloom_writes_emit_events() {
    let (_server, mut events, mut con) = subscribed();
    let ok: String = query!(&mut con, "BF.RESERVEX", "r", 0.01, 100);
    assert_eq!(ok, "OK");
    let added: i64 = query!(&mut con, "BF.ADDX", "b", "x");
    assert_eq!(added, 1);
    let again: i64 = query!(&mut con, "BF.ADDX", "b", "x");
    assert_eq!(again, 0);
    let _: Vec<i64> = query!(&mut con, "BF.MADDX", "b", "y", "x");
    let _: Vec<i64> = query!(&mut con, "BF.MADDX", "b", "y");
    let _: Vec<i64> = query!(&mut con, "BF.INSERTX", "i", "ITEMS", "z");
    let _: i64 = query!(&mut con, "BF.EXISTSX", "b", "x");
    assert_eq!(
        events.drain(),
        pairs(&[
            ("r", "bf.reserve"),
            ("b", "bf.add"),
            ("b", "bf.madd"),
            ("i", "bf.insert"),
        ])
    );
}

/// BF.LOADCHUNKX emits `bf.loadchunk` for every chunk it takes, the header and the
/// last one included; a refused chunk and BF.SCANDUMPX emit nothing.
#[test]
fn every_loaded_chunk_emits_an_event() {
    let (server, mut con) = Server::start_conn();
    let ok: String = query!(&mut con, "BF.RESERVEX", "src", 0.01, 100);
    assert_eq!(ok, "OK");
    madd_range(&mut con, "src", "s:", 0..300);
    let chunks = scandump(&mut con, "src");
    let mut events = Events::subscribe(&server);
    loadchunks(&mut con, "dst", &chunks[..2]);
    let refused = cmd("BF.LOADCHUNKX")
        .arg("dst")
        .arg(chunks[1].0)
        .arg(&chunks[1].1[..])
        .query::<String>(&mut con);
    assert!(refused.is_err(), "{refused:?}");
    loadchunks(&mut con, "dst", &chunks[2..]);
    let _ = scandump(&mut con, "dst");
    let want: Vec<(&str, &str)> = chunks.iter().map(|_| ("dst", "bf.loadchunk")).collect();
    assert_eq!(events.drain(), pairs(&want));
}

/// Rate-limiter writes emit their command's event; a denied call and `COST 0`
/// write nothing and emit nothing.
#[test]
fn limiter_writes_emit_events() {
    let (_server, mut events, mut con) = subscribed();
    let mut call = |c: &mut redis::Cmd| -> Vec<i64> { c.query(&mut con).unwrap() };
    assert_eq!(call(cmd("RL.TOKEN").arg("t").arg("1/h").arg(1))[0], 1);
    assert_eq!(call(cmd("RL.TOKEN").arg("t").arg("1/h").arg(1))[0], 0);
    let look = call(
        cmd("RL.TOKEN")
            .arg("t2")
            .arg("1/h")
            .arg(1)
            .arg("COST")
            .arg(0),
    );
    assert_eq!(look[0], 1);
    assert_eq!(call(cmd("RL.LEAKY").arg("l").arg("1/h").arg(1))[0], 1);
    assert_eq!(call(cmd("RL.WINDOW").arg("w").arg(1).arg(60_000))[0], 1);
    assert_eq!(call(cmd("RL.GCRA").arg("g").arg(0).arg(1).arg(3600))[0], 0);
    assert_eq!(call(cmd("RL.GCRA").arg("g").arg(0).arg(1).arg(3600))[0], 1);
    assert_eq!(
        events.drain(),
        pairs(&[
            ("t", "rl.token"),
            ("l", "rl.leaky"),
            ("w", "rl.window"),
            ("g", "rl.gcra"),
        ])
    );
}

#[test]
fn cache_writes_emit_events() {
    let (_server, mut events, mut con) = subscribed();
    assert_eq!(cache_set(&mut con, "c", "v", 60_000, &["VERSION", "2"]), 1);
    assert_eq!(
        cache_set(&mut con, "c", "old", 60_000, &["VERSION", "1"]),
        0
    );
    cache_get(&mut con, "c", &[]);
    cache_get(&mut con, "missing", &[]);
    let _: Value = query!(&mut con, "CACHE.INFO", "c");
    let (_, token) = get_lease(&mut con, "m", 60_000, &[]);
    assert_eq!(get_lease(&mut con, "m", 60_000, &[]), (None, 0));
    for _ in 0..2 {
        cache_get(&mut con, "c", &["HOT", "2", "1000", "EXTEND", "600000"]);
    }
    assert_eq!(refresh(&mut con, "m", "v", 1_000, token), 1);
    assert_eq!(
        events.drain(),
        pairs(&[
            ("c", "cache.set"),
            ("m", "cache.lease"),
            ("c", "cache.extend"),
            ("m", "cache.set"),
        ])
    );
}

/// Replicated writes reach a replica's subscribers as the internal forms.
#[test]
fn a_replica_emits_the_internal_forms() {
    let server = Server::start();
    let replica = server.start_replica(&[], &[]);
    let mut events = Events::subscribe(&replica);
    let mut con = conn_t(&server);
    try_acquire(&mut con, "l", "a", 30_000).expect("granted");
    let _: Vec<i64> = query!(&mut con, "RL.TOKEN", "t", "1/h", 1);
    server.sync_replicas(1);
    let seen = events.drain();
    assert!(
        seen.contains(&("l".to_string(), "dlock.set".to_string()))
            && seen.contains(&("t".to_string(), "rl.set".to_string())),
        "{seen:?}"
    );
}

/// One key as a call finds or leaves it: its value's digest and its expiry
/// time (-2 and no digest when it is missing or has expired: DEBUG
/// DIGEST-VALUE still sees an expired key the server has not removed yet).
fn key_state(con: &mut Connection, key: &[u8]) -> (Value, i64) {
    let expires: i64 = query!(con, "PEXPIRETIME", key);
    if expires == -2 {
        return (Value::Nil, -2);
    }
    let digest: Value = query!(con, "DEBUG", "DIGEST-VALUE", key);
    (digest, expires)
}

/// Every public write command of every family (`COMMAND LIST FILTERBY MODULE
/// warden`, flag `write`), in drawn valid calls: a call that changes its key
/// (value, expiry or existence) publishes at least one event on that key, named
/// in the command's own namespace (`cf.` for `CF.ADDX`); a refused call
/// publishes none. (A call that succeeds without changing anything may publish,
/// as `SET` of the same value does.)
#[test]
fn every_write_command_announces_what_it_changes_and_nothing_else() {
    let (server, mut events, mut con) = subscribed();
    let _: Value = query!(&mut events.con, "SUBSCRIBE", "marker");
    let public = public_commands(&mut con);
    let mut rng = Rng(0x0e7e_4751);
    let (mut problems, mut changed, mut unchanged) = (Vec::new(), 0, 0);
    for name in &public {
        let flags = command_flags(&mut con, name);
        if !flags.iter().any(|f| f == "write") {
            continue;
        }
        let docs = command_docs(&mut con, name);
        let at = key_positions(&docs);
        let namespace = format!("{}.", name.split('.').next().unwrap_or(name));
        for _ in 0..60 {
            let call = valid_call(&mut rng, name, &docs);
            let key = call[at[0]].clone();
            let before = key_state(&mut con, &key);
            let reply: redis::RedisResult<Value> = build(name.as_bytes(), &call).query(&mut con);
            let after = key_state(&mut con, &key);
            let _: i64 = query!(&mut con, "PUBLISH", "marker", "end");
            let seen = events.until_marker();
            let shown = || format!("{} -> {reply:?}", show_call(name.as_bytes(), &call));
            let on_key: Vec<&(String, String)> = seen
                .iter()
                .filter(|(k, _)| k.as_bytes() == &key[..])
                .collect();
            // The key's own expiry may end it during the call; news of a key
            // the server found expired (a lock's lapse) may come at any time.
            let ended = after.1 == -2 && before.1 >= 0 && before.1 <= now_ms() + 10;
            let news = |(k, _): &&(String, String)| k.as_bytes() != &key[..] || before.1 == -2;
            if let Some((_, e)) = seen.iter().find(|(_, e)| !e.starts_with(&namespace)) {
                problems.push(format!("{}: event {e} outside {namespace}", shown()));
            }
            if before == after {
                unchanged += 1;
                if reply.is_err() && !seen.iter().all(|e| news(&e)) {
                    problems.push(format!("{}: refused, published {seen:?}", shown()));
                }
            } else if !ended {
                changed += 1;
                if on_key.is_empty() {
                    problems.push(format!(
                        "{}: changed the key ({before:?} -> {after:?}), published {seen:?}",
                        shown()
                    ));
                }
            }
        }
    }
    drop(server);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(
        changed > 100 && unchanged > 20,
        "changed {changed}, unchanged {unchanged}"
    );
}
