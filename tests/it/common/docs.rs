//! Commands as `COMMAND DOCS` describes them: the argument tree a server
//! reports for a command (warden's come from the same grammar that parses its
//! calls), and the calls that tree allows. The docs test checks the parser
//! against it; the fuzzer draws its calls from it.

use super::*;

use std::cell::Cell;
use std::collections::HashMap;

/// One documented argument.
#[derive(Debug, Clone, PartialEq)]
pub struct DocArg {
    /// Its name.
    pub name: String,
    /// `key`, `string`, `integer`, `double`, `pure-token`, `block` or `oneof`.
    pub kind: String,
    /// The keyword before it, if any.
    pub token: Option<String>,
    /// May be left out.
    pub optional: bool,
    /// May repeat.
    pub multiple: bool,
    /// The parts of a block or one-of.
    pub parts: Vec<DocArg>,
}

impl DocArg {
    /// Whether it is read as a positional argument (no token, not a choice).
    pub fn is_positional(&self) -> bool {
        self.token.is_none() && self.kind != "oneof"
    }
}

/// The text of a simple or bulk string reply.
fn text(v: &Value) -> String {
    text_of(v).unwrap_or_default()
}

/// The entries of a RESP2 map (a flat array) or a RESP3 map as pairs.
fn pairs_of(v: &Value) -> Vec<(String, Value)> {
    match v {
        Value::Array(items) => items
            .chunks(2)
            .filter(|c| c.len() == 2)
            .map(|c| (text(&c[0]), c[1].clone()))
            .collect(),
        Value::Map(items) => items.iter().map(|(k, v)| (text(k), v.clone())).collect(),
        _ => Vec::new(),
    }
}

/// One argument from its `COMMAND DOCS` map.
fn doc_arg(v: &Value) -> DocArg {
    let mut a = DocArg {
        name: String::new(),
        kind: String::new(),
        token: None,
        optional: false,
        multiple: false,
        parts: Vec::new(),
    };
    for (field, value) in pairs_of(v) {
        match field.as_str() {
            "name" => a.name = text(&value),
            "type" => a.kind = text(&value),
            "token" => a.token = Some(text(&value)),
            "flags" => {
                let flags: Vec<String> = match &value {
                    Value::Array(f) | Value::Set(f) => f.iter().map(text).collect(),
                    _ => Vec::new(),
                };
                a.optional = flags.iter().any(|f| f == "optional");
                a.multiple = flags.iter().any(|f| f == "multiple");
            }
            "arguments" => a.parts = args_of(&value),
            _ => {}
        }
    }
    a
}

fn args_of(v: &Value) -> Vec<DocArg> {
    match v {
        Value::Array(items) => items.iter().map(doc_arg).collect(),
        _ => Vec::new(),
    }
}

/// The documented arguments of `name` (after the name), from the server.
pub fn command_docs(con: &mut Connection, name: &str) -> Vec<DocArg> {
    let v: Value = cmd("COMMAND")
        .arg("DOCS")
        .arg(name)
        .query(con)
        .expect("COMMAND DOCS");
    let entries = pairs_of(&v);
    let (_, doc) = entries
        .into_iter()
        .next()
        .unwrap_or_else(|| panic!("COMMAND DOCS knows nothing of {name}: {v:?}"));
    pairs_of(&doc)
        .into_iter()
        .find(|(f, _)| f == "arguments")
        .map(|(_, a)| args_of(&a))
        .unwrap_or_default()
}

/// The documented arguments of each of `names`, read once: the grammar the fuzzer
/// draws its calls from for a whole run.
pub fn docs_of(con: &mut Connection, names: &[&str]) -> HashMap<String, Vec<DocArg>> {
    names
        .iter()
        .map(|n| (n.to_string(), command_docs(con, n)))
        .collect()
}

/// The word sequences one occurrence of `a` may take, values from `value`
/// (every choice of a one-of; an optional part of a block with and without).
pub fn occurrences(a: &DocArg, value: &dyn Fn(&DocArg) -> Vec<u8>) -> Vec<Vec<Vec<u8>>> {
    let token: Vec<Vec<u8>> = a.token.iter().map(|t| t.as_bytes().to_vec()).collect();
    let bodies: Vec<Vec<Vec<u8>>> = match a.kind.as_str() {
        "pure-token" => vec![Vec::new()],
        "oneof" => a.parts.iter().flat_map(|p| occurrences(p, value)).collect(),
        "block" => a.parts.iter().fold(vec![Vec::new()], |acc, p| {
            let mut alternatives = occurrences(p, value);
            if p.optional {
                alternatives.push(Vec::new());
            }
            product(&acc, &alternatives)
        }),
        _ => vec![vec![value(a)]],
    };
    bodies
        .into_iter()
        .map(|b| token.iter().cloned().chain(b).collect())
        .collect()
}

/// Every `x ++ y` for `x` in `xs`, `y` in `ys`.
fn product(xs: &[Vec<Vec<u8>>], ys: &[Vec<Vec<u8>>]) -> Vec<Vec<Vec<u8>>> {
    xs.iter()
        .flat_map(|x| ys.iter().map(move |y| x.iter().chain(y).cloned().collect()))
        .collect()
}

/// The word sequences `a` may take in a call: its occurrences, once or twice
/// when it repeats, and nothing when it is optional.
pub fn alternatives(a: &DocArg, value: &dyn Fn(&DocArg) -> Vec<u8>) -> Vec<Vec<Vec<u8>>> {
    let once = occurrences(a, value);
    let mut all = once.clone();
    if a.multiple {
        all.extend(product(&once[..1], &once[..1]));
    }
    if a.optional {
        all.push(Vec::new());
    }
    all
}

/// Documented calls of a command (arguments after the name): every
/// combination of its arguments' alternatives, with the options also in
/// reverse order, at most `limit` of them (spread over the combinations).
pub fn documented_calls(
    args: &[DocArg],
    value: &dyn Fn(&DocArg) -> Vec<u8>,
    limit: usize,
) -> Vec<Vec<Vec<u8>>> {
    let split = args
        .iter()
        .position(|a| !a.is_positional())
        .unwrap_or(args.len());
    let (positionals, options) = args.split_at(split);
    let calls = |order: &mut dyn Iterator<Item = &DocArg>| {
        order.fold(vec![Vec::new()], |acc, a| {
            product(&acc, &alternatives(a, value))
        })
    };
    let mut heads = calls(&mut positionals.iter());
    // Keys counted by the integer before them (`numkeys key [key ...]`, the
    // last positionals): the count says how many came.
    let n = positionals.len();
    if n >= 2 && positionals[n - 1].kind == "key" && positionals[n - 1].multiple {
        for head in &mut heads {
            let keys = head.len() - (n - 1);
            head[n - 2] = keys.to_string().into_bytes();
        }
    }
    let mut tails = calls(&mut options.iter());
    if options.len() > 1 {
        tails.extend(calls(&mut options.iter().rev()));
    }
    let all = product(&heads, &tails);
    let step = all.len().div_ceil(limit.max(1)).max(1);
    let mut picked: Vec<Vec<Vec<u8>>> = all.into_iter().step_by(step).collect();
    picked.dedup();
    picked
}

/// A valid-looking value for an argument, by its name; keys are fresh.
pub fn sample(a: &DocArg, fresh: &Cell<u32>) -> Vec<u8> {
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

/// Where a word put among the options of `call` goes: before a token that takes
/// every word after it (`ITEMS item ...`), where it would be an item, else at the
/// end.
pub fn before_rest(docs: &[DocArg], call: &[Vec<u8>]) -> usize {
    docs.iter()
        .find(|a| a.token.is_some() && a.multiple)
        .and_then(|a| {
            let t = a.token.as_deref()?;
            call.iter()
                .position(|w| w.eq_ignore_ascii_case(t.as_bytes()))
        })
        .unwrap_or(call.len())
}

/// The public commands: internal ones (`._`) refuse every client before
/// reading their arguments.
pub fn public_commands(con: &mut Connection) -> Vec<String> {
    let names: Vec<String> = cmd("COMMAND")
        .arg("LIST")
        .arg("FILTERBY")
        .arg("MODULE")
        .arg("warden")
        .query(con)
        .expect("COMMAND LIST");
    let mut public: Vec<String> = names.into_iter().filter(|n| !n.contains("._")).collect();
    public.sort();
    public
}

/// The calls (arguments after the name) to send of a command, from its name, its
/// docs and a counter for fresh keys.
pub type CallsOf = dyn Fn(&str, &[DocArg], &Cell<u32>) -> Vec<Vec<Vec<u8>>>;

/// Sends, on a fresh server, the calls `calls` makes of every public command;
/// returns how many were sent, and those `wrong` flags (from the command's name
/// and the reply) shown with their reply.
pub fn send_public_calls(
    calls: &CallsOf,
    wrong: &dyn Fn(&str, &redis::RedisResult<Value>) -> bool,
) -> (usize, Vec<String>) {
    let server = Server::start();
    let mut con = server.conn();
    let fresh = Cell::new(0);
    let (mut sent, mut flagged) = (0, Vec::new());
    for name in public_commands(&mut con) {
        let docs = command_docs(&mut con, &name);
        for call in calls(&name, &docs, &fresh) {
            let c = command(&[&[name.as_bytes().to_vec()], &call[..]].concat());
            let reply = c.query(&mut con);
            sent += 1;
            if wrong(&name, &reply) {
                flagged.push(format!("{} -> {reply:?}", show(&c)));
            }
        }
    }
    (sent, flagged)
}

/// The parse refused the call: a syntax error, or the wrong number of
/// arguments for `name` itself (not for a command it carries).
pub fn refused_by_grammar(name: &str, reply: &redis::RedisResult<Value>) -> bool {
    match reply {
        Err(e) => {
            let text = e.to_string().to_lowercase();
            text.contains("syntax error")
                || text.contains(&format!("wrong number of arguments for '{name}'"))
        }
        Ok(_) => false,
    }
}

/// Every token `args` name (options, pure tokens, choices, inner tokens).
pub fn tokens(args: &[DocArg]) -> Vec<String> {
    let mut out = Vec::new();
    for a in args {
        out.extend(a.token.iter().map(|t| t.to_uppercase()));
        out.extend(tokens(&a.parts));
    }
    out.sort();
    out.dedup();
    out
}

/// The positions (in the call, after the name) of the leading positional
/// arguments the docs type `key`: each is one word, before any optional or
/// repeated argument.
pub fn key_positions(docs: &[DocArg]) -> Vec<usize> {
    docs.iter()
        .take_while(|a| a.is_positional() && !a.optional && !a.multiple && a.kind != "block")
        .enumerate()
        .filter(|(_, a)| a.kind == "key")
        .map(|(i, _)| i)
        .collect()
}

/// The flags `COMMAND INFO` gives command `name` (`write`, `readonly`,
/// `movablekeys`, ...).
pub fn command_flags(con: &mut Connection, name: &str) -> Vec<String> {
    let v: Value = query!(con, "COMMAND", "INFO", name);
    match &v {
        Value::Array(outer) => match outer.first() {
            Some(Value::Array(row)) => match row.get(2) {
                Some(Value::Array(f)) | Some(Value::Set(f)) => {
                    f.iter().filter_map(text_of).collect()
                }
                _ => Vec::new(),
            },
            _ => Vec::new(),
        },
        _ => Vec::new(),
    }
}
