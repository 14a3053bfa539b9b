//! Top-k helpers shared by the `TOPK.*X` tests.

use crate::common::*;

/// `TOPK.ADDX key item …`: what each item pushed out (nil as `None`).
pub fn add(con: &mut Connection, key: &str, items: &[&str]) -> Vec<Option<String>> {
    let mut c = cmd("TOPK.ADDX");
    c.arg(key).arg(items);
    query_cmd(&mut c, con)
}

/// `TOPK.INCRBYX key item by …`.
pub fn incr(con: &mut Connection, key: &str, pairs: &[(&str, i64)]) -> Vec<Option<String>> {
    let mut c = cmd("TOPK.INCRBYX");
    c.arg(key);
    for (item, by) in pairs {
        c.arg(*item).arg(*by);
    }
    query_cmd(&mut c, con)
}

/// `TOPK.LISTX key WITHCOUNT` as (item, count) pairs.
pub fn list(con: &mut Connection, key: &str) -> Vec<(String, i64)> {
    let v: Vec<Value> = query!(con, "TOPK.LISTX", key, "WITHCOUNT");
    v.chunks(2)
        .map(|p| (text_of(&p[0]).expect("item"), int_of(&p[1]).expect("count")))
        .collect()
}

/// `TOPK.COUNTX key item …`.
pub fn counts(con: &mut Connection, key: &str, items: &[&str]) -> Vec<i64> {
    let mut c = cmd("TOPK.COUNTX");
    c.arg(key).arg(items);
    query_cmd(&mut c, con)
}
