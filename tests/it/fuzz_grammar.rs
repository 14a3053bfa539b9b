//! The fuzzer's grammar is `COMMAND DOCS`, so it is the commands' one declaration:
//! every call it draws with valid values parses on a server (no syntax or arity
//! error from the command itself); it uses every token each command's docs name
//! — options, pure tokens, choices and inner tokens, internal commands' too — so
//! a part of the tree the drawing skips fails here; every row of its value table
//! fills an argument the docs name.

use crate::common::docs::*;
use crate::common::fuzz_calls::{build, draw, sanitize_wait, show_call};
use crate::common::grammar::{value_row, Gen, COMMANDS, VALUES};
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
    let docs = docs_of(&mut con, COMMANDS);
    let mut rng = Rng(0x5eed_f022);
    let mut problems = Vec::new();
    let mut rows_used = vec![false; VALUES.len()];
    for name in COMMANDS {
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
