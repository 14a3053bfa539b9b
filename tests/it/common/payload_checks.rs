//! Checks of the values that corrupt or forged payloads left in the server, for the
//! payload fuzzer (`tests/it/module/payload_fuzz.rs`): each type's read commands
//! (its kit's `reads`) answer in range and change nothing, the other commands do not
//! break the server, and whatever was accepted DUMPs and RESTOREs to the same value.
//! What goes wrong without taking the server down is collected as `Findings`,
//! reported at the end.

use super::kit::TypeKit;
use super::payload::hex;
use super::payload_bases::*;
use super::*;

/// What went wrong without taking the server down (reported at the end).
#[derive(Default, Debug)]
pub struct Findings {
    pub internal: Vec<String>,
    pub read_failures: Vec<String>,
    pub reads_that_wrote: Vec<String>,
    pub round_trips: Vec<String>,
    pub odd_codes: Vec<String>,
}

impl Findings {
    /// Notes `s` in `list` (the first ten of each list are kept).
    pub fn push(list: &mut Vec<String>, s: String) {
        if list.len() < 10 {
            list.push(s);
        }
    }

    pub fn is_empty(&self) -> bool {
        self.internal.is_empty()
            && self.read_failures.is_empty()
            && self.reads_that_wrote.is_empty()
            && self.round_trips.is_empty()
            && self.odd_codes.is_empty()
    }
}

/// Runs `c`, recording caught panics and odd error codes.
pub fn run(con: &mut Connection, c: &redis::Cmd, found: &mut Findings, ctx: &str) -> Value {
    run_coded(con, c, found, ctx, &[])
}

/// As `run`, where errors may also start with one of `codes` (the texts of
/// a foreign type's commands, which carry no `ERR`, say).
pub fn run_coded(
    con: &mut Connection,
    c: &redis::Cmd,
    found: &mut Findings,
    ctx: &str,
    codes: &[&str],
) -> Value {
    let v = raw(con, c);
    if let Some(e) = err_of(&v) {
        let known = ["ERR", "WRONGTYPE"]
            .iter()
            .chain(codes)
            .any(|p| e.starts_with(p));
        if e.contains("internal error") {
            Findings::push(&mut found.internal, format!("{ctx}: {} -> {e}", show(c)));
        } else if !known {
            Findings::push(&mut found.odd_codes, format!("{ctx}: {} -> {e}", show(c)));
        }
    }
    v
}

/// A check of a reply.
pub type Check = fn(&Value) -> bool;

/// The values of a reply of label and value pairs (a flat array in RESP2) as
/// integers, -1 where one is not; `None` when it is not an array of pairs.
pub fn labelled_ints(v: &Value) -> Option<Vec<i64>> {
    let Value::Array(a) = v else {
        return None;
    };
    if !a.len().is_multiple_of(2) {
        return None;
    }
    let n = a.iter().skip(1).step_by(2).map(|v| int_of(v).unwrap_or(-1));
    Some(n.collect())
}

/// Runs each of `reads`, noting the answers its check refuses.
pub fn run_reads(
    con: &mut Connection,
    reads: &[(redis::Cmd, Check)],
    found: &mut Findings,
    ctx: &str,
) {
    for (c, ok) in reads {
        let v = run(con, c, found, ctx);
        if !ok(&v) {
            Findings::push(
                &mut found.read_failures,
                format!("{ctx}: {} -> {v:?}", show(c)),
            );
        }
    }
}

/// Runs each of `writes` (what they answer is not checked: errors are
/// expected of many).
pub fn run_all(con: &mut Connection, writes: &[redis::Cmd], found: &mut Findings, ctx: &str) {
    for c in writes {
        run(con, c, found, ctx);
    }
}

/// The type's read commands (`TypeKit::reads`): must answer in range and change nothing.
pub fn read_checks(con: &mut Connection, ty: &TypeKit, key: &str, found: &mut Findings, ctx: &str) {
    let before = digest_value(con, key.as_bytes());
    (ty.reads)(con, key, found, ctx);
    let after = digest_value(con, key.as_bytes());
    if after != before {
        Findings::push(
            &mut found.reads_that_wrote,
            format!("{ctx}: read commands changed {key}: {before:?} -> {after:?}"),
        );
    }
}

/// Generic commands on an accepted value, then DUMP / RESTORE must give it back,
/// then the type's other commands (`TypeKit::exercise`), after which it must
/// still give it back (what they changed loads again), now and then a COPY.
pub fn exercise(
    con: &mut Connection,
    ty: &TypeKit,
    key: &str,
    i: usize,
    found: &mut Findings,
    ctx: &str,
) {
    let generic = [
        cmd("TYPE").arg(key).clone(),
        cmd("PTTL").arg(key).clone(),
        cmd("MEMORY").arg("USAGE").arg(key).clone(),
        cmd("OBJECT").arg("ENCODING").arg(key).clone(),
    ];
    for c in &generic {
        run(con, c, found, ctx);
    }
    round_trip(con, key, found, ctx, None);
    (ty.exercise)(con, key, i, found, ctx);
    round_trip(con, key, found, ctx, Some(" after its commands"));
    if rand_copy(i) {
        run(
            con,
            cmd("COPY")
                .arg(key)
                .arg(format!("{key}:copy"))
                .arg("REPLACE"),
            found,
            ctx,
        );
    }
}

/// Whatever was accepted DUMPs and RESTOREs to the same value; `after` says
/// when the type's commands ran before, which may have given the value a TTL
/// (then either one expiring in between is no finding).
fn round_trip(
    con: &mut Connection,
    key: &str,
    found: &mut Findings,
    ctx: &str,
    after: Option<&str>,
) {
    let when = after.unwrap_or_default();
    if let Value::BulkString(p) = raw(con, cmd("DUMP").arg(key)) {
        let again = format!("{key}:again");
        let restore = restore_like(con, key, &again, &p);
        let v = run(con, &restore, found, ctx);
        if err_of(&v).is_some() {
            Findings::push(
                &mut found.round_trips,
                format!(
                    "{ctx}: DUMP of the accepted value{when} does not RESTORE: {v:?}; payload {}",
                    hex(&p)
                ),
            );
        } else {
            let (a, b) = (
                digest_value(con, key.as_bytes()),
                digest_value(con, again.as_bytes()),
            );
            let both = |con: &mut Connection| exists(con, key) && exists(con, &again);
            if a != b && (after.is_none() || both(con)) {
                Findings::push(
                    &mut found.round_trips,
                    format!("{ctx}: DUMP/RESTORE{when} changed the value: {a:?} -> {b:?}"),
                );
            }
        }
        raw(con, cmd("DEL").arg(&again));
    }
}

/// Whether payload `i` is also COPYed.
pub fn rand_copy(i: usize) -> bool {
    i % 7 == 3
}

/// Every chunk of `key`'s dump by `scandump` (RedisBloom's `BF.SCANDUMP` or
/// `CF.SCANDUMP`, the header first), each with the iterator it was answered
/// with, until one answers iterator 0 (none for a value that answers it
/// first); `None` when one is refused or not a chunk.
pub fn scandump_chunks(
    con: &mut Connection,
    scandump: &str,
    key: &str,
) -> Option<Vec<(i64, Vec<u8>)>> {
    let mut out = Vec::new();
    let mut it = 0i64;
    loop {
        let v = raw(con, &cmd_of!(scandump, key, it));
        let Value::Array(a) = v else {
            return None;
        };
        match &a[..] {
            [Value::Int(0), _] => return Some(out),
            [Value::Int(next), Value::BulkString(data)] => {
                out.push((*next, data.clone()));
                it = *next;
            }
            _ => return None,
        }
    }
}

/// `key`'s chunks (`scandump_chunks` by `scandump`), loaded by `loadchunk`
/// into another key, must make the same value (checked where it answers
/// some).
pub fn chunks_copy_same(
    con: &mut Connection,
    [scandump, loadchunk]: [&str; 2],
    key: &str,
    found: &mut Findings,
    ctx: &str,
) {
    let Some(chunks) = scandump_chunks(con, scandump, key).filter(|c| !c.is_empty()) else {
        return;
    };
    let copy = format!("{key}:chunks");
    raw(con, &cmd_of!("DEL", &copy));
    for (it, data) in &chunks {
        let v = run(con, &cmd_of!(loadchunk, &copy, it, data), found, ctx);
        if let Some(e) = err_of(&v) {
            let what = format!("{ctx}: {loadchunk} of its chunk {it} refused: {e}");
            Findings::push(&mut found.round_trips, what);
            break;
        }
    }
    let (a, b) = (
        digest_value(con, key.as_bytes()),
        digest_value(con, copy.as_bytes()),
    );
    if a != b {
        let what = format!("{ctx}: its chunks loaded as another value: {a:?} -> {b:?}");
        Findings::push(&mut found.round_trips, what);
    }
    raw(con, &cmd_of!("DEL", &copy));
}
