//! `COMMAND DOCS` and the parser agree: every call the docs allow is read
//! without a syntax or arity error (whatever the command then answers), and
//! calls they do not allow — a repeated option, an option without its value,
//! a word too many, a missing argument — are refused with one. Both come
//! from one grammar per command (src/common/grammar.rs), so this is the proof
//! that the declaration drives the parse.

use crate::common::docs::*;

use std::cell::Cell;

#[test]
fn every_documented_call_parses() {
    let (checked, problems) = send_public_calls(
        &|name, docs, fresh| {
            assert!(!docs.is_empty(), "{name}: no documented arguments");
            documented_calls(docs, &|a| sample(a, fresh), 64)
        },
        &refused_by_grammar,
    );
    assert!(checked > 150, "only {checked} documented calls");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Calls next to a documented one (`base`, the shortest) that the docs do
/// not allow. Extra words go before a token that takes the rest of the call
/// (`ITEMS item ...`), where they would be items.
fn undocumented_calls(docs: &[DocArg], base: &[Vec<u8>], fresh: &Cell<u32>) -> Vec<Vec<Vec<u8>>> {
    let value = |a: &DocArg| sample(a, fresh);
    let at = before_rest(docs, base);
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
    let (checked, problems) = send_public_calls(
        &|_, docs, fresh| {
            // The shortest documented call: the positionals alone.
            let base = documented_calls(docs, &|a| sample(a, fresh), usize::MAX)
                .into_iter()
                .min_by_key(Vec::len)
                .expect("a documented call");
            undocumented_calls(docs, &base, fresh)
        },
        &|name, reply| !refused_by_grammar(name, reply),
    );
    assert!(checked > 30, "only {checked} undocumented calls");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
