//! Cuckoo filter helpers shared by the `CF.*X` tests.

use crate::common::*;

/// Every chunk of `key`'s dump, as CF.SCANDUMPX gives them (the header first).
pub fn scandump(con: &mut Connection, key: &str) -> Vec<(i64, Vec<u8>)> {
    let mut out = Vec::new();
    let mut it = 0i64;
    loop {
        let (next, data): (i64, Vec<u8>) = query!(con, "CF.SCANDUMPX", key, it);
        if next == 0 {
            assert!(data.is_empty());
            return out;
        }
        out.push((next, data));
        it = next;
    }
}
