//! `COMMAND DOCS` and the parser agree: every call the docs allow is read
//! without a syntax or arity error (whatever the command then answers), and
//! calls they do not allow — a repeated option, an option without its value,
//! a word too many, a missing argument — are refused with one. Both come
//! from one grammar per command (src/common/grammar.rs), so this is the proof
//! that the declaration drives the parse.

use crate::common::docs::*;
use crate::common::*;

use std::cell::Cell;

/// A valid-looking value for an argument, by its name; keys are fresh.
fn sample(a: &DocArg, fresh: &Cell<u32>) -> Vec<u8> {
    let v = match (a.kind.as_str(), a.name.as_str()) {
        ("key", _) => {
            fresh.set(fresh.get() + 1);
            return format!("docs:{}", fresh.get()).into_bytes();
        }
        (_, "owner") => "o",
        (_, "ttl_ms" | "stale_ms" | "lease_ms") => "10000",
        (_, "timeout_ms") => "1",
        (_, "n" | "reads") => "3",
        (_, "t" | "token" | "version" | "quantity" | "cost" | "iterator") => "1",
        (_, "command") => "PING",
        (_, "error_rate") => "0.01",
        (_, "capacity" | "burst" | "limit" | "max_burst" | "count") => "100",
        (_, "expansion") => "2",
        (_, "window_ms") => "60000",
        (_, "period_s") => "60",
        (_, "max_wait_ms") => "0",
        (_, "rate") => "10/s",
        (_, "field") => "CAPACITY",
        ("integer", _) => "1",
        ("double", _) => "0.5",
        _ => "x",
    };
    v.as_bytes().to_vec()
}

fn send(con: &mut Connection, name: &str, args: &[Vec<u8>]) -> redis::RedisResult<Value> {
    let mut c = cmd(name);
    for a in args {
        c.arg(&a[..]);
    }
    c.query(con)
}

fn show(name: &str, args: &[Vec<u8>]) -> String {
    let words: Vec<String> = args
        .iter()
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect();
    format!("{name} {}", words.join(" "))
}

#[test]
fn every_documented_call_parses() {
    let server = Server::start();
    let mut con = server.conn();
    let fresh = Cell::new(0);
    let mut problems = Vec::new();
    let mut checked = 0;
    for name in public_commands(&mut con) {
        let docs = command_docs(&mut con, &name);
        assert!(!docs.is_empty(), "{name}: no documented arguments");
        for call in documented_calls(&docs, &|a| sample(a, &fresh), 64) {
            let reply = send(&mut con, &name, &call);
            checked += 1;
            if refused_by_grammar(&name, &reply) {
                problems.push(format!("{}: {reply:?}", show(&name, &call)));
            }
        }
    }
    assert!(checked > 150, "only {checked} documented calls");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Calls next to a documented one (`base`, the shortest) that the docs do
/// not allow. Extra words go before a token that takes the rest of the call
/// (`ITEMS item ...`), where they would be items.
fn undocumented_calls(docs: &[DocArg], base: &[Vec<u8>], fresh: &Cell<u32>) -> Vec<Vec<Vec<u8>>> {
    let value = |a: &DocArg| sample(a, fresh);
    let rest_token = docs
        .iter()
        .find(|a| a.token.is_some() && a.multiple)
        .and_then(|a| a.token.clone());
    let at = rest_token
        .and_then(|t| {
            base.iter()
                .position(|w| w.eq_ignore_ascii_case(t.as_bytes()))
        })
        .unwrap_or(base.len());
    let with = |extra: Vec<Vec<u8>>| -> Vec<Vec<u8>> {
        base[..at]
            .iter()
            .cloned()
            .chain(extra)
            .chain(base[at..].iter().cloned())
            .collect()
    };
    let mut calls = Vec::new();
    // A word too many, unless the docs take any word there: a positional that
    // repeats to the end, or a choice with an untokened part (`quantity`).
    let open_end = docs.last().is_some_and(|a| a.multiple && a.token.is_none())
        || docs
            .iter()
            .any(|a| a.kind == "oneof" && a.parts.iter().any(|p| p.token.is_none()));
    if !open_end {
        calls.push(with(vec![b"NOSUCHWORD".to_vec()]));
    }
    // The first required positional after the key left out.
    if base.len() > 1
        && docs
            .get(1)
            .is_some_and(|a| a.is_positional() && !a.optional)
    {
        calls.push(vec![base[0].clone()]);
    }
    for a in docs.iter().filter(|a| a.token.is_some() && !a.multiple) {
        let once = occurrences(a, &value).swap_remove(0);
        calls.push(with(once.iter().chain(&once).cloned().collect()));
        if a.kind != "pure-token" && at == base.len() {
            // The token alone at the end: its value is missing.
            calls.push(with(once.into_iter().take(1).collect()));
        }
    }
    calls
}

#[test]
fn undocumented_calls_are_refused_by_the_grammar() {
    let server = Server::start();
    let mut con = server.conn();
    let fresh = Cell::new(0);
    let mut problems = Vec::new();
    let mut checked = 0;
    for name in public_commands(&mut con) {
        let docs = command_docs(&mut con, &name);
        // The shortest documented call: the positionals alone.
        let base = documented_calls(&docs, &|a| sample(a, &fresh), usize::MAX)
            .into_iter()
            .min_by_key(Vec::len)
            .expect("a documented call");
        for call in undocumented_calls(&docs, &base, &fresh) {
            let reply = send(&mut con, &name, &call);
            checked += 1;
            if !refused_by_grammar(&name, &reply) {
                problems.push(format!("{}: {reply:?}", show(&name, &call)));
            }
        }
    }
    assert!(checked > 30, "only {checked} undocumented calls");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
