//! Count-min helpers shared by the `CMS.*X` tests.

use crate::common::*;

/// `CMS.INCRBYX key item by …`: the counts it answers (an overflowed item's
/// error as -1).
pub fn incr(con: &mut Connection, key: &str, pairs: &[(&str, i64)]) -> Vec<i64> {
    let mut c = cmd("CMS.INCRBYX");
    c.arg(key);
    for (item, by) in pairs {
        c.arg(*item).arg(*by);
    }
    match raw(con, &c) {
        Value::Array(items) => items
            .iter()
            .map(|v| int_of(v).unwrap_or_else(|| err_of(v).map(|_| -1).expect("int or error")))
            .collect(),
        other => panic!("{}: {other:?}", show(&c)),
    }
}

/// `CMS.QUERYX key item …`.
pub fn counts(con: &mut Connection, key: &str, items: &[&str]) -> Vec<i64> {
    let mut c = cmd("CMS.QUERYX");
    c.arg(key).arg(items);
    query_cmd(&mut c, con)
}

/// `CMS.INFOX key` as (field, value) pairs, in order.
pub fn info(con: &mut Connection, key: &str) -> Vec<(String, i64)> {
    let v: Vec<Value> = query!(con, "CMS.INFOX", key);
    v.chunks(2)
        .map(|p| {
            (
                text_of(&p[0]).expect("label"),
                int_of(&p[1]).expect("value"),
            )
        })
        .collect()
}

/// The error a call answers (panics if it answers anything else).
pub fn error_of(con: &mut Connection, c: &redis::Cmd) -> String {
    match raw(con, c) {
        v @ Value::ServerError(_) => err_of(&v).unwrap(),
        v => panic!("{} answered {v:?}", show(c)),
    }
}
