//! The fuzzer's grammar is the commands' one declaration: every call it makes
//! with valid values parses on a server (no syntax or arity error from the
//! command itself), and it uses every token the command's `COMMAND DOCS`
//! names — options, pure tokens, choices and inner tokens — so an option added
//! to a command's grammar and not to the fuzzer fails here.

use crate::common::docs::*;
use crate::common::fuzz_calls::{build, sanitize_wait, show_call};
use crate::common::grammar::{grammar, Gen, COMMANDS};
use crate::common::payload::Rng;
use crate::common::*;

/// Calls drawn per command: enough for every option to come up.
const CALLS: usize = 300;

#[test]
fn the_fuzzers_calls_are_the_documented_grammar() {
    let server = Server::start();
    let mut con = server.conn();
    let public = public_commands(&mut con);
    let mut rng = Rng(0x5eed_f022);
    let mut problems = Vec::new();
    for name in COMMANDS
        .iter()
        .filter(|n| public.contains(&n.to_lowercase()))
    {
        let documented = tokens(&command_docs(&mut con, name));
        let mut seen: Vec<String> = Vec::new();
        for _ in 0..CALLS {
            let g = Gen {
                p: 0,
                now: now_ms(),
            };
            let mut args = grammar(&g, &mut rng, name);
            sanitize_wait(&mut rng, &mut args);
            for w in &args {
                let word = String::from_utf8_lossy(w).to_uppercase();
                if documented.contains(&word) && !seen.contains(&word) {
                    seen.push(word);
                }
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
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
