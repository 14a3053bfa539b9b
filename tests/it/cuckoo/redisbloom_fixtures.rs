//! Files RedisBloom 2.8 wrote (`tests/fixtures/redisbloom-2.8/`, made by its
//! `make.sh`): its RDB and its AOF load into warden with `aliases redisbloom`,
//! and the members (after deletes), 20,000 non-members and `CF.COUNT` of every
//! member of their cuckoo filters (several sub-filters, deletes, compactions,
//! bucket sizes 2 and 4) answer as RedisBloom answered (`answers.txt`). Their
//! Bloom filters: `bloom::redisbloom_fixtures`.

use crate::common::peer_modules::{recorded_answers, started_on_fixtures};
use crate::common::*;

/// The cuckoo keys of the fixtures.
const KEYS: [&str; 3] = ["cuckoo", "cuckoo4", "cuckoo-auto"];
/// Non-members asked about, per key.
const ABSENT: u64 = 20_000;

/// The members `key` holds, as `make.sh` made them: `cuckoo` lost every 5th
/// of its 5000; `cuckoo4` had every 3rd of its 3000 added twice and every
/// 10th from the 2nd deleted once; `cuckoo-auto` holds its 2500.
fn members(key: &str) -> Vec<String> {
    let held: Vec<u32> = match key {
        "cuckoo" => (0..5000).filter(|i| i % 5 != 0).collect(),
        "cuckoo4" => (0..3000).filter(|i| i % 10 != 1 || i % 3 == 0).collect(),
        _ => (0..2500).collect(),
    };
    held.into_iter().map(|i| format!("{key}:{i}")).collect()
}

/// The indexes of `answers` equal to `v`.
fn where_is(answers: &[i64], v: i64) -> Vec<u64> {
    (0..answers.len() as u64)
        .filter(|&i| answers[i as usize] == v)
        .collect()
}

/// Asserts every answer of `con` against RedisBloom's.
fn answers_as_redisbloom(con: &mut Connection) {
    for key in KEYS {
        assert_eq!(key_type(con, key), "MBbloomCF");
        let items = members(key);
        let found: Vec<i64> = query!(con, "CF.MEXISTS", key, items.clone());
        assert_eq!(
            where_is(&found, 0),
            recorded_answers(key, "missing"),
            "{key}"
        );
        let absent: Vec<String> = (0..ABSENT).map(|i| format!("absent:{i}")).collect();
        let found: Vec<i64> = query!(con, "CF.MEXISTS", key, absent);
        assert_eq!(
            where_is(&found, 1),
            recorded_answers(key, "absent"),
            "{key}: false positives differ from RedisBloom's"
        );
        let mut p = redis::pipe();
        for item in &items {
            p.cmd("CF.COUNT").arg(key).arg(item);
        }
        let counts: Vec<u64> = p.query(con).unwrap();
        assert_eq!(counts, recorded_answers(key, "count"), "{key}: CF.COUNT");
    }
}

#[test]
fn redisblooms_rdb_answers_as_redisbloom() {
    let (_s, mut con) = started_on_fixtures(&["dump.rdb"], &[]);
    answers_as_redisbloom(&mut con);
}

#[test]
fn redisblooms_aof_answers_as_redisbloom() {
    let (_s, mut con) = started_on_fixtures(&["appendonlydir"], &["--appendonly", "yes"]);
    answers_as_redisbloom(&mut con);
}
