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
    list_by(con, "TOPK.LISTX", key)
}

/// `{name} key WITHCOUNT` (`TOPK.LISTX`, or RedisBloom's `TOPK.LIST`) as
/// (item, count) pairs.
pub fn list_by(con: &mut Connection, name: &str, key: &str) -> Vec<(String, i64)> {
    let v: Vec<Value> = query!(con, name, key, "WITHCOUNT");
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

/// `{add} key` (`TOPK.ADDX`, or RedisBloom's `TOPK.ADD`) of 200 items out of
/// 37, counted unevenly (`item{i² mod 37}`): enough for decays at work.
pub fn uneven_adds(add: &str, key: &str) -> redis::Cmd {
    let mut c = cmd(add);
    c.arg(key);
    for i in 0..200u64 {
        c.arg(format!("item{}", i * i % 37));
    }
    c
}

/// `{incrby} key` (`TOPK.INCRBYX`, or RedisBloom's `TOPK.INCRBY`) of a
/// binary item, the empty item and a long one, by 5, 3 and 9.
pub fn odd_items(incrby: &str, key: &str) -> redis::Cmd {
    let long = "a-long-item-".repeat(20);
    let mut c = cmd(incrby);
    c.arg(key).arg(&b"\x00\xff\r\n"[..]).arg(5).arg("").arg(3);
    c.arg(long).arg(9);
    c
}
