//! Every redis-cli example in the docs, run against a real server with its
//! shown reply checked.
//!
//! The pages are `README.md`, `src/*/README.md` and `docs/*.md`, found by
//! listing those folders. An example is a fenced block with a line that
//! starts `127.0.0.1:6379> ` or `$ redis-cli`. The rules (the README's
//! Development section states them for writers):
//!
//! - Each page gets a fresh server; `<!-- examples: module arguments ARGS -->`
//!   in the page loads the module with `ARGS` (`aliases redisbloom`). Its
//!   blocks run in order, as one redis-cli session (RESP2) that lasts the page.
//! - `127.0.0.1:6379> command` is split as redis-cli splits a line (quotes,
//!   `\xHH`) and sent; the lines after it are its reply, exactly as redis-cli
//!   prints it. `$ redis-cli` (`-3`: RESP3) starts another session for the
//!   rest of the block, numbered from 2 (the page's own is 1); `$ redis-cli
//!   [-3] command` sends one command on a connection of its own.
//! - A line `... text` is narration, and must say what to do: `N s later` or
//!   `N ms later` (the test sleeps), `kill -9 redis-cli N` / `quit redis-cli N`
//!   (the session's connection is closed). Between a command and its reply it
//!   happens while the command waits.
//! - An integer of 10^15 or more in a reply is a fencing or lease token: it
//!   matches any integer of 10^15 or more, in the same order as the page's
//!   earlier tokens, and the page's later uses of that number (in commands and
//!   replies) stand for the token the server gave. An integer after a
//!   `ttl_ms`, `fresh_ms` or `stale_ms` label is a time left: it matches within
//!   1000 of the page's.

use crate::common::*;
use std::io::Write;
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The redis-cli prompt that starts an example's command line.
const PROMPT: &str = "127.0.0.1:6379> ";
/// The comment that names a page's module arguments.
const ARGS_MARK: &str = "<!-- examples: module arguments ";
/// The smallest integer read as a token.
const TOKEN_MIN: i64 = 1_000_000_000_000_000;
/// Labels whose value is a time left, and how far it may be from the page's.
const TIME_LABELS: [&str; 3] = ["\"ttl_ms\"", "\"fresh_ms\"", "\"stale_ms\""];
const TIME_SLACK: i64 = 1000;

#[test]
fn every_redis_cli_example_in_the_docs_replies_as_shown() {
    let root = repo_root();
    let pages = doc_pages(root);
    let (mut found, mut run, mut commands) = (0, 0, 0);
    let mut failures = Vec::new();
    for page in &pages {
        let text = std::fs::read_to_string(page).expect("read a doc page");
        let blocks = example_blocks(&text);
        found += blocks.len();
        if blocks.is_empty() {
            continue;
        }
        let name = page
            .strip_prefix(root)
            .unwrap_or(page)
            .display()
            .to_string();
        let mut p = Page::start(module_args(&text));
        for b in &blocks {
            match p.run_block(b) {
                Ok(n) => {
                    run += 1;
                    commands += n;
                }
                Err(e) => {
                    failures.push(format!("{name}, block at line {}: {e}", b.line));
                    break;
                }
            }
        }
    }
    println!(
        "docs examples: {} pages read, {found} blocks found, {run} run, {commands} commands checked",
        pages.len()
    );
    assert!(failures.is_empty(), "\n{}", failures.join("\n\n"));
    assert!(
        found > 20 && commands > 100,
        "too few examples found: {found}"
    );
    assert_eq!(run, found, "example blocks found but not run");
}

/// `README.md`, then `src/*/README.md` and `docs/*.md`, each folder listed.
fn doc_pages(root: &Path) -> Vec<PathBuf> {
    let listed = |dir: PathBuf| -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
            .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
            .unwrap_or_default();
        v.sort();
        v
    };
    let mut pages = vec![root.join("README.md")];
    for dir in listed(root.join("src")) {
        if dir.join("README.md").is_file() {
            pages.push(dir.join("README.md"));
        }
    }
    pages.extend(
        listed(root.join("docs"))
            .into_iter()
            .filter(|p| p.extension().is_some_and(|e| e == "md")),
    );
    assert!(pages.len() >= 7, "doc pages: {pages:?}");
    pages
}

/// The module arguments a page's `<!-- examples: module arguments … -->` names.
fn module_args(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| l.trim().strip_prefix(ARGS_MARK))
        .flat_map(|rest| {
            let rest = rest.trim_end().strip_suffix("-->").unwrap_or(rest);
            rest.split_whitespace()
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .collect()
}

/// One example block: its lines (fence indentation removed) and where it starts.
struct Block {
    line: usize,
    lines: Vec<String>,
}

/// Every fenced block of `text` with a prompt or a `$ redis-cli` line.
fn example_blocks(text: &str) -> Vec<Block> {
    let mut blocks = Vec::new();
    let mut open: Option<(usize, usize, Vec<String>)> = None;
    for (i, l) in text.lines().enumerate() {
        let indent = l.len() - l.trim_start().len();
        if l.trim_start().starts_with("```") {
            match open.take() {
                None => open = Some((i + 1, indent, Vec::new())),
                Some((line, _, lines)) => {
                    if lines
                        .iter()
                        .any(|l| l.starts_with(PROMPT) || l.starts_with("$ redis-cli"))
                    {
                        blocks.push(Block { line, lines });
                    }
                }
            }
        } else if let Some((_, at, lines)) = open.as_mut() {
            let cut = (*at).min(indent);
            lines.push(l[cut..].to_string());
        }
    }
    blocks
}

/// One redis-cli connection: a socket and the parser of its replies.
struct Session {
    stream: TcpStream,
    parser: redis::Parser,
}

impl Session {
    fn open(port: u16, resp3: bool) -> Result<Session, String> {
        let stream = TcpStream::connect(("127.0.0.1", port)).map_err(|e| e.to_string())?;
        stream
            .set_read_timeout(Some(Duration::from_secs(30)))
            .map_err(|e| e.to_string())?;
        let mut s = Session {
            stream,
            parser: redis::Parser::new(),
        };
        if resp3 {
            s.send(&["HELLO".into(), "3".into()])?;
            s.read()?;
        }
        Ok(s)
    }

    fn send(&mut self, args: &[Vec<u8>]) -> Result<(), String> {
        let mut c = redis::Cmd::new();
        for a in args {
            c.arg(a.as_slice());
        }
        self.stream
            .write_all(&c.get_packed_command())
            .map_err(|e| format!("send: {e}"))
    }

    fn read(&mut self) -> Result<Value, String> {
        self.parser
            .parse_value(&mut self.stream)
            .map_err(|e| format!("no reply: {e}"))
    }
}

/// A page's server, its session, and the tokens its examples have seen.
struct Page {
    server: Server,
    main: Option<Session>,
    /// (the page's number, the server's token), in the order first seen.
    tokens: Vec<(i64, i64)>,
}

/// A command sent whose reply is still to be read and checked.
struct Pending {
    session: usize,
    shown: String,
}

impl Page {
    fn start(module_args: Vec<String>) -> Page {
        let args: Vec<&str> = module_args.iter().map(String::as_str).collect();
        Page {
            server: Server::start_with(&[], &args),
            main: None,
            tokens: Vec::new(),
        }
    }

    /// Runs one block; returns how many commands it checked.
    fn run_block(&mut self, b: &Block) -> Result<usize, String> {
        let main = match self.main.take() {
            Some(s) => s,
            None => Session::open(self.server.port, false)?,
        };
        // Session i is sessions[i - 1]; a closed one is None.
        let mut sessions: Vec<Option<Session>> = vec![Some(main)];
        let mut current = 1;
        let mut pending: Option<Pending> = None;
        let mut reply: Vec<String> = Vec::new();
        let mut checked = 0;
        let lines: Vec<&str> = b.lines.iter().map(String::as_str).collect();
        for (i, line) in lines.iter().enumerate() {
            let is_reply = !line.starts_with(PROMPT)
                && !line.starts_with("$ ")
                && !line.trim_start().starts_with("...")
                && !line.trim().is_empty();
            if !is_reply {
                if let Some(p) = pending.as_ref().filter(|_| !reply.is_empty()) {
                    self.check(&mut sessions, p, &reply, &lines[..i])?;
                    checked += 1;
                    pending = None;
                    reply.clear();
                }
            }
            if let Some(cmd) = line.strip_prefix(PROMPT) {
                if let Some(p) = &pending {
                    return Err(format!("`{}` shows no reply", p.shown));
                }
                let args = self.substitute(split_args(cmd)?);
                session(&mut sessions, current)?.send(&args)?;
                pending = Some(Pending {
                    session: current,
                    shown: cmd.to_string(),
                });
            } else if let Some(shell) = line.strip_prefix("$ ") {
                if let Some(p) = &pending {
                    return Err(format!("`{}` shows no reply", p.shown));
                }
                let words = split_args(shell)?;
                let resp3 = words.get(1).is_some_and(|w| w == b"-3");
                let rest = &words[1 + usize::from(resp3)..];
                if words.first().map(Vec::as_slice) != Some(b"redis-cli".as_slice()) {
                    return Err(format!("not a redis-cli line: `{line}`"));
                }
                sessions.push(Some(Session::open(self.server.port, resp3)?));
                if rest.is_empty() {
                    current = sessions.len();
                } else {
                    let args = self.substitute(rest.to_vec());
                    let last = sessions.len();
                    session(&mut sessions, last)?.send(&args)?;
                    pending = Some(Pending {
                        session: sessions.len(),
                        shown: shell.to_string(),
                    });
                }
            } else if line.trim_start().starts_with("...") {
                if !reply.is_empty() {
                    return Err(format!("narration inside a reply: `{line}`"));
                }
                narrate(&mut sessions, line)?;
            } else if is_reply {
                if pending.is_none() {
                    return Err(format!("a reply line with no command: `{line}`"));
                }
                reply.push(line.to_string());
            }
        }
        if let Some(p) = pending {
            if reply.is_empty() {
                return Err(format!("`{}` shows no reply", p.shown));
            }
            self.check(&mut sessions, &p, &reply, &lines)?;
            checked += 1;
        }
        // The page's session goes on (unless the block closed it); the others end here.
        self.main = sessions.swap_remove(0);
        Ok(checked)
    }

    /// Reads `p`'s reply and checks it against the `shown` lines.
    fn check(
        &mut self,
        sessions: &mut [Option<Session>],
        p: &Pending,
        shown: &[String],
        before: &[&str],
    ) -> Result<(), String> {
        let got = session(sessions, p.session)?.read()?;
        let mut text = String::new();
        format_reply(&got, "", &mut text);
        let actual: Vec<&str> = text.lines().collect();
        let mismatch = || {
            format!(
                "`{}` replied\n{}\nwhere the page shows\n{}",
                p.shown,
                actual.join("\n"),
                shown.join("\n")
            )
        };
        if actual.len() != shown.len() {
            return Err(mismatch());
        }
        for (k, (a, s)) in actual.iter().zip(shown).enumerate() {
            let previous = match k {
                0 => before.last().copied().unwrap_or(""),
                _ => shown[k - 1].as_str(),
            };
            if *a != s && !self.same_integer(a, s, previous) {
                return Err(mismatch());
            }
        }
        Ok(())
    }

    /// Whether reply line `actual` matches the page's `shown` by the token or
    /// time-left rule (`previous`: the page's line before, for a label).
    fn same_integer(&mut self, actual: &str, shown: &str, previous: &str) -> bool {
        let split = |l: &str| {
            let (head, n) = l.rsplit_once("(integer) ")?;
            Some((head.to_string(), n.parse::<i64>().ok()?))
        };
        let (Some((ha, a)), Some((hs, s))) = (split(actual), split(shown)) else {
            return false;
        };
        if ha != hs {
            return false;
        }
        if s >= TOKEN_MIN {
            return a >= TOKEN_MIN && self.token(s, a);
        }
        let labelled = TIME_LABELS
            .iter()
            .any(|t| hs.contains(&format!("{t} => ")) || previous.trim_end().ends_with(t));
        labelled && (a - s).abs() <= TIME_SLACK
    }

    /// Records (or checks) that the page's token `shown` is the server's `actual`.
    fn token(&mut self, shown: i64, actual: i64) -> bool {
        if let Some(&(_, known)) = self.tokens.iter().find(|(s, _)| *s == shown) {
            return known == actual;
        }
        let ordered = self
            .tokens
            .iter()
            .all(|&(s, a)| (s < shown) == (a < actual) && a != actual);
        self.tokens.push((shown, actual));
        ordered
    }

    /// A command's words with the page's known token numbers replaced by the
    /// server's.
    fn substitute(&self, words: Vec<Vec<u8>>) -> Vec<Vec<u8>> {
        words
            .into_iter()
            .map(|w| {
                let n = std::str::from_utf8(&w)
                    .ok()
                    .and_then(|t| t.parse::<i64>().ok());
                match self.tokens.iter().find(|(s, _)| Some(*s) == n) {
                    Some((_, a)) => a.to_string().into_bytes(),
                    None => w,
                }
            })
            .collect()
    }
}

/// Session `n` (from 1), or why it cannot be used.
fn session(sessions: &mut [Option<Session>], n: usize) -> Result<&mut Session, String> {
    sessions
        .get_mut(n.wrapping_sub(1))
        .and_then(Option::as_mut)
        .ok_or_else(|| format!("redis-cli {n} is not open"))
}

/// Does what a narration line says: sleeps, or closes a session.
fn narrate(sessions: &mut [Option<Session>], line: &str) -> Result<(), String> {
    let words: Vec<&str> = line
        .split(|c: char| c.is_whitespace() || c == ',' || c == ';' || c == ':')
        .filter(|w| !w.is_empty())
        .collect();
    let mut acted = false;
    for (i, w) in words.iter().enumerate() {
        if *w == "later" && i >= 2 {
            let n: f64 = words[i - 2].parse().unwrap_or(-1.0);
            let ms = match words[i - 1] {
                "s" => n * 1000.0,
                "ms" => n,
                _ => -1.0,
            };
            if ms >= 0.0 {
                std::thread::sleep(Duration::from_millis(ms as u64));
                acted = true;
            }
        }
        if *w == "redis-cli" && i >= 1 && matches!(words[i - 1], "-9" | "quit") {
            let n: usize = words
                .get(i + 1)
                .and_then(|n| n.parse().ok())
                .ok_or_else(|| format!("which redis-cli? `{line}`"))?;
            let s = sessions
                .get_mut(n.wrapping_sub(1))
                .ok_or_else(|| format!("no redis-cli {n}: `{line}`"))?;
            *s = None;
            acted = true;
        }
    }
    match acted {
        true => Ok(()),
        false => Err(format!("narration says nothing to do: `{line}`")),
    }
}

/// Splits a command line as redis-cli does (`sdssplitargs`): words apart by
/// spaces; "double quotes" with `\xHH`, `\n`, `\r`, `\t`, `\b`, `\a` and
/// `\<c>`; 'single quotes' with `\'`.
fn split_args(line: &str) -> Result<Vec<Vec<u8>>, String> {
    let b = line.as_bytes();
    let mut words = Vec::new();
    let mut i = 0;
    let hex = |c: u8| (c as char).to_digit(16).map(|d| d as u8);
    loop {
        while i < b.len() && b[i].is_ascii_whitespace() {
            i += 1;
        }
        if i == b.len() {
            return Ok(words);
        }
        let mut w = Vec::new();
        let quote = match b[i] {
            q @ (b'"' | b'\'') => {
                i += 1;
                Some(q)
            }
            _ => None,
        };
        loop {
            let Some(&c) = b.get(i) else {
                match quote {
                    Some(_) => return Err(format!("unbalanced quotes: `{line}`")),
                    None => break,
                }
            };
            match quote {
                None if c.is_ascii_whitespace() => break,
                None => w.push(c),
                Some(q) if c == q => {
                    if b.get(i + 1).is_some_and(|n| !n.is_ascii_whitespace()) {
                        return Err(format!("a closing quote must end the word: `{line}`"));
                    }
                    i += 1;
                    break;
                }
                Some(b'"') if c == b'\\' && i + 1 < b.len() => {
                    i += 1;
                    let digits = (b.get(i + 1).copied(), b.get(i + 2).copied());
                    let byte = match digits {
                        (Some(h), Some(l)) => hex(h).zip(hex(l)).map(|(h, l)| h * 16 + l),
                        _ => None,
                    };
                    match (b[i], byte) {
                        (b'x', Some(v)) => {
                            w.push(v);
                            i += 2;
                        }
                        (b'n', _) => w.push(b'\n'),
                        (b'r', _) => w.push(b'\r'),
                        (b't', _) => w.push(b'\t'),
                        (b'b', _) => w.push(8),
                        (b'a', _) => w.push(7),
                        (other, _) => w.push(other),
                    }
                }
                Some(b'\'') if c == b'\\' && b.get(i + 1) == Some(&b'\'') => {
                    i += 1;
                    w.push(b'\'');
                }
                Some(_) => w.push(c),
            }
            i += 1;
        }
        words.push(w);
    }
}

/// Appends `v` as redis-cli prints it on a terminal (`cliFormatReplyTTY`),
/// nested elements after `prefix`.
fn format_reply(v: &Value, prefix: &str, out: &mut String) {
    match v {
        Value::Nil => out.push_str("(nil)\n"),
        Value::Int(n) => out.push_str(&format!("(integer) {n}\n")),
        Value::BulkString(b) => {
            out.push_str(&repr(b));
            out.push('\n');
        }
        Value::SimpleString(s) => out.push_str(&format!("{s}\n")),
        Value::Okay => out.push_str("OK\n"),
        Value::Double(d) => out.push_str(&format!("(double) {d}\n")),
        Value::Boolean(t) => out.push_str(&format!("({t})\n")),
        Value::VerbatimString { text, .. } => out.push_str(&format!("{text}\n")),
        Value::BigNumber(n) => out.push_str(&format!("(big number) {n}\n")),
        Value::ServerError(e) => match e.details() {
            Some(d) => out.push_str(&format!("(error) {} {d}\n", e.code())),
            None => out.push_str(&format!("(error) {}\n", e.code())),
        },
        Value::Attribute { data, .. } => format_reply(data, prefix, out),
        Value::Array(items) | Value::Push { data: items, .. } => {
            format_items(items.iter().map(|i| (i, None)).collect(), ')', prefix, out)
        }
        Value::Set(items) => {
            format_items(items.iter().map(|i| (i, None)).collect(), '~', prefix, out)
        }
        Value::Map(pairs) => format_items(
            pairs.iter().map(|(k, v)| (k, Some(v))).collect(),
            '#',
            prefix,
            out,
        ),
    }
}

/// An aggregate's elements (a map's as key and value), numbered with `sep`.
fn format_items(items: Vec<(&Value, Option<&Value>)>, sep: char, prefix: &str, out: &mut String) {
    if items.is_empty() {
        out.push_str(match sep {
            '#' => "(empty hash)\n",
            '~' => "(empty set)\n",
            _ => "(empty array)\n",
        });
        return;
    }
    let width = items.len().to_string().len();
    let inner = format!("{prefix}{}", " ".repeat(width + 2));
    for (i, (item, value)) in items.iter().enumerate() {
        let lead = if i == 0 { "" } else { prefix };
        out.push_str(&format!("{lead}{:>width$}{sep} ", i + 1));
        format_reply(item, &inner, out);
        if let Some(v) = value {
            out.pop();
            out.push_str(" => ");
            format_reply(v, &inner, out);
        }
    }
}

/// A string as redis-cli quotes it (`sdscatrepr`).
fn repr(b: &[u8]) -> String {
    let mut s = String::from("\"");
    for &c in b {
        match c {
            b'\\' => s.push_str("\\\\"),
            b'"' => s.push_str("\\\""),
            b'\n' => s.push_str("\\n"),
            b'\r' => s.push_str("\\r"),
            b'\t' => s.push_str("\\t"),
            7 => s.push_str("\\a"),
            8 => s.push_str("\\b"),
            0x20..=0x7e => s.push(c as char),
            _ => s.push_str(&format!("\\x{c:02x}")),
        }
    }
    s.push('"');
    s
}

/// Every link between the docs (and the test guides) reaches a file that
/// exists and, with `#anchor`, a heading of it: pages move, links follow.
#[test]
fn every_link_between_the_docs_resolves() {
    let root = repo_root();
    let mut pages = doc_pages(root);
    for guide in ["tests", "tests/bench", "tests/examples", "tests/partition"] {
        pages.push(root.join(guide).join("README.md"));
    }
    let mut broken = Vec::new();
    let mut links = 0;
    for page in &pages {
        let text = std::fs::read_to_string(page).expect("read a doc page");
        for (n, target) in prose_links(&text) {
            links += 1;
            let (file, anchor) = target.split_once('#').unwrap_or((target.as_str(), ""));
            let to = match file {
                "" => page.clone(),
                f => page.parent().expect("a folder").join(f),
            };
            let ok = match std::fs::read_to_string(&to) {
                Err(_) => to.exists() && anchor.is_empty(),
                Ok(t) => {
                    anchor.is_empty()
                        || to.extension().is_none_or(|e| e != "md")
                        || heading_anchors(&t).iter().any(|a| a == anchor)
                }
            };
            if !ok {
                let name = page
                    .strip_prefix(root)
                    .unwrap_or(page)
                    .display()
                    .to_string();
                broken.push(format!("{name}:{n}: {target}"));
            }
        }
    }
    assert!(links > 100, "too few links found: {links}");
    assert!(
        broken.is_empty(),
        "links that lead nowhere:\n{}",
        broken.join("\n")
    );
}

/// The relative link targets of `text` outside fenced blocks, with their line.
fn prose_links(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut fenced = false;
    for (i, l) in text.lines().enumerate() {
        if l.trim_start().starts_with("```") {
            fenced = !fenced;
        }
        if fenced {
            continue;
        }
        for part in l.split("](").skip(1) {
            let target = part.split(')').next().unwrap_or("");
            if !target.contains("://") && !target.starts_with("mailto:") && !target.is_empty() {
                out.push((i + 1, target.to_string()));
            }
        }
    }
    out
}

/// The anchors GitHub gives a page's headings: lower case, inline code and
/// links reduced to their text, punctuation but `-` and `_` dropped, spaces
/// as `-`, a repeated one numbered.
fn heading_anchors(text: &str) -> Vec<String> {
    let (mut out, mut bases): (Vec<String>, Vec<String>) = (Vec::new(), Vec::new());
    let mut fenced = false;
    for l in text.lines() {
        if l.trim_start().starts_with("```") {
            fenced = !fenced;
        }
        let Some(title) = l.trim_start_matches('#').strip_prefix(' ') else {
            continue;
        };
        if fenced || !l.starts_with('#') {
            continue;
        }
        let mut plain = String::new();
        let mut rest = title;
        while let Some(at) = rest.find("](") {
            plain.push_str(&rest[..at]);
            rest = rest[at + 2..].split_once(')').map_or("", |(_, r)| r);
        }
        plain.push_str(rest);
        let slug: String = plain
            .to_lowercase()
            .chars()
            .filter_map(|c| match c {
                ' ' => Some('-'),
                c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
                _ => None,
            })
            .collect();
        let seen = bases.iter().filter(|b| **b == slug).count();
        out.push(match seen {
            0 => slug.clone(),
            n => format!("{slug}-{n}"),
        });
        bases.push(slug);
    }
    out
}

#[test]
fn the_example_reader_splits_and_prints_as_redis_cli_does() {
    let words = split_args(r#"SET k "{\"a\":1}" 'it\'s' "\x01\n""#).unwrap();
    assert_eq!(
        words,
        vec![
            b"SET".to_vec(),
            b"k".to_vec(),
            br#"{"a":1}"#.to_vec(),
            b"it's".to_vec(),
            vec![1, b'\n']
        ]
    );
    assert!(split_args("GET \"k").is_err());
    let nested = Value::Array(vec![
        Value::Int(1),
        Value::Array(vec![Value::BulkString(b"a\x00\"".to_vec()), Value::Nil]),
        Value::Map(vec![(
            Value::SimpleString("n".into()),
            Value::Boolean(true),
        )]),
    ]);
    let mut out = String::new();
    format_reply(&nested, "", &mut out);
    assert_eq!(
        out,
        "1) (integer) 1\n2) 1) \"a\\x00\\\"\"\n   2) (nil)\n3) 1# n => (true)\n"
    );
    let ten = Value::Array((0..10).map(Value::Int).collect());
    out.clear();
    format_reply(&ten, "", &mut out);
    assert!(out.starts_with(" 1) (integer) 0\n") && out.ends_with("10) (integer) 9\n"));
}
