//! The data types the module makes, found by asking it rather than from a hand
//! list: on a server of its own, drawn calls (`fuzz_calls::any_call`: from `COMMAND
//! DOCS`, with the fuzzer's valid values) of every public write command (`COMMAND LIST FILTERBY MODULE
//! warden`), each command on an empty database, and the `TYPE` of every key a call
//! names after it answers. The server loads the module with the arguments of the
//! checks across families (`kit::MODULE_ARGS`), so the foreign types count too.
//! A check that claims to cover every type asserts that each of these is in its
//! list, so a new family's type fails it until covered.

use std::collections::BTreeSet;
use std::sync::OnceLock;

use super::docs::{command_docs, command_flags, key_positions, public_commands};
use super::fuzz_calls::{any_call, build};
use super::kit::MODULE_ARGS;
use super::payload::Rng;
use super::*;

/// Valid calls drawn per write command.
const CALLS: usize = 60;

/// Every type (`TYPE`'s answer) the module's write commands make, sorted; asked
/// once per test binary.
pub fn module_types() -> Vec<String> {
    static TYPES: OnceLock<Vec<String>> = OnceLock::new();
    TYPES.get_or_init(find_types).clone()
}

fn find_types() -> Vec<String> {
    let server = Server::start_with(&[], MODULE_ARGS);
    let mut con = server.conn();
    let mut rng = Rng(0x7e5_7a9e5);
    let mut types = BTreeSet::new();
    let mut writers = Vec::new();
    let mut silent = Vec::new();
    for name in public_commands(&mut con) {
        if !command_flags(&mut con, &name).iter().any(|f| f == "write") {
            continue;
        }
        writers.push(name.clone());
        let docs = command_docs(&mut con, &name);
        let at = key_positions(&docs);
        let _: () = query!(&mut con, "FLUSHALL", "SYNC");
        let mut made = false;
        for _ in 0..CALLS {
            let call = any_call(&mut rng, &name, &docs);
            let _: redis::RedisResult<Value> = build(name.as_bytes(), &call).query(&mut con);
            for &i in &at {
                let t: String = query!(&mut con, "TYPE", &call[i][..]);
                if t != "none" {
                    made = true;
                    types.insert(t);
                }
            }
        }
        if !made {
            silent.push(name);
        }
    }
    let _: () = query!(&mut con, "FLUSHALL", "SYNC");
    // Every command namespace that writes makes some key (or the drawing is broken).
    let space = |n: &str| n.split('.').next().unwrap_or_default().to_string();
    let spaces: BTreeSet<String> = writers.iter().map(|n| space(n)).collect();
    let quiet: Vec<&String> = spaces
        .iter()
        .filter(|s| {
            writers
                .iter()
                .all(|n| space(n) != **s || silent.contains(n))
        })
        .collect();
    assert!(
        quiet.is_empty(),
        "no drawn call of these namespaces' write commands made a key: {quiet:?}"
    );
    assert!(types.len() >= spaces.len(), "types {types:?} of {spaces:?}");
    println!("the module's write commands make {types:?}");
    types.into_iter().collect()
}

/// Fails naming the types the module makes that `covered` leaves out (`what`
/// says which check).
pub fn assert_covers(what: &str, covered: &[&str]) {
    let missing: Vec<String> = module_types()
        .into_iter()
        .filter(|t| !covered.contains(&t.as_str()))
        .collect();
    assert!(
        missing.is_empty(),
        "{what} leaves out types the module makes: {missing:?} (of {:?})",
        module_types()
    );
}
