//! The fuzzer's grammar is `COMMAND DOCS`, so it is the commands' one declaration:
//! every call it draws with valid values parses on a server (no syntax or arity
//! error from the command itself); it uses every token each command's docs name
//! — options, pure tokens, choices and inner tokens, internal commands' too — so
//! a part of the tree the drawing skips fails here; every row of its value table
//! fills an argument the docs name. It sends no token the docs do not name, so an
//! option the parser accepted without documenting it would never be fuzzed: every
//! option word warden knows (`WORDS`, which must hold every documented token) is
//! refused by each command whose docs omit it; each family's own words hold every
//! token its commands' docs name.

use crate::common::docs::*;
use crate::common::fuzz_calls::{build, draw, sanitize_wait, show_call};
use crate::common::grammar::{b, value_row, Gen, COMMANDS, FAMILY_FUZZ, VALUES, WORDS};
use crate::common::payload::Rng;
use crate::common::*;

/// Calls drawn per command: enough for every option to come up.
const CALLS: usize = 300;

/// The names of the arguments that take a value (not blocks, choices or pure
/// tokens), nested ones included.
fn valued(args: &[DocArg]) -> Vec<&str> {
    args.iter()
        .flat_map(|a| match a.kind.as_str() {
            "block" | "oneof" => valued(&a.parts),
            "pure-token" => Vec::new(),
            _ => vec![a.name.as_str()],
        })
        .collect()
}

#[test]
fn the_fuzzers_calls_are_the_documented_grammar() {
    let server = Server::start();
    let mut con = server.conn();
    let public = public_commands(&mut con);
    let docs = docs_of(&mut con, &COMMANDS);
    let mut rng = Rng(0x5eed_f022);
    let mut problems = Vec::new();
    let mut rows_used = vec![false; VALUES.len()];
    for name in COMMANDS.iter() {
        let tree = &docs[*name];
        for arg in valued(tree) {
            if let Some(row) = value_row(name, arg) {
                rows_used[row] = true;
            }
        }
        let documented = tokens(tree);
        // Internal commands refuse every client before reading their arguments.
        let parses = public.contains(&name.to_lowercase());
        let mut seen: Vec<String> = Vec::new();
        for _ in 0..CALLS {
            let g = Gen {
                p: 0,
                now: now_ms(),
            };
            let mut args = draw(&g, &mut rng, name, tree);
            sanitize_wait(&mut rng, &mut args);
            for w in &args {
                let word = String::from_utf8_lossy(w).to_uppercase();
                if documented.contains(&word) && !seen.contains(&word) {
                    seen.push(word);
                }
            }
            if !parses {
                continue;
            }
            let reply: redis::RedisResult<Value> = build(name.as_bytes(), &args).query(&mut con);
            if refused_by_grammar(&name.to_lowercase(), &reply) {
                problems.push(format!(
                    "{} -> {reply:?}",
                    show_call(name.as_bytes(), &args)
                ));
            }
        }
        let missing: Vec<&String> = documented.iter().filter(|t| !seen.contains(t)).collect();
        if !missing.is_empty() {
            problems.push(format!("{name}: the fuzzer never sends {missing:?}"));
        }
        let family = FAMILY_FUZZ
            .iter()
            .find(|f| f.commands.contains(name))
            .expect("every command is a family's");
        let unlisted: Vec<&String> = documented
            .iter()
            .filter(|t| !family.words.contains(&t.as_str()))
            .collect();
        if !unlisted.is_empty() {
            problems.push(format!(
                "{name}: its family's words (its fuzz_values.rs) lack {unlisted:?}"
            ));
        }
    }
    for (row, used) in VALUES.iter().zip(rows_used) {
        if !used {
            problems.push(format!(
                "VALUES row ({:?}, {:?}) fills no documented argument",
                row.0, row.1
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Each public command's longest documented call (every option, the longest
/// choice) with one more option word its docs do not name — any of `WORDS`, every
/// command's tokens and look-alikes, alone or with a value — is refused by the
/// grammar. Commands whose last argument takes any word to the end
/// (`item ...`, a guarded command) have no place for one.
#[test]
fn no_option_the_docs_omit_is_accepted() {
    let (checked, problems) = send_public_calls(
        &|_, docs, fresh| {
            if docs.last().is_some_and(|a| a.multiple && a.token.is_none()) {
                return Vec::new();
            }
            let own = tokens(docs);
            let base = documented_calls(docs, &|a| sample(a, fresh), usize::MAX)
                .into_iter()
                .max_by_key(Vec::len)
                .expect("a documented call");
            let at = before_rest(docs, &base);
            let mut calls = Vec::new();
            for word in WORDS.iter().filter(|w| !own.iter().any(|t| t == *w)) {
                for extra in [vec![b(word)], vec![b(word), b("1")]] {
                    let mut call = base.clone();
                    call.splice(at..at, extra);
                    calls.push(call);
                }
            }
            calls
        },
        &|name, reply| !refused_by_grammar(name, reply),
    );
    assert!(
        checked > 500,
        "only {checked} calls with an undocumented word"
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
