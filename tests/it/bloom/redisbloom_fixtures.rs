//! Files RedisBloom 2.8 wrote (`tests/fixtures/redisbloom-2.8/`, made by its
//! `make.sh`): its RDB and its AOF load into warden with `aliases redisbloom`,
//! and every member and 20,000 non-members of their Bloom filters answer as
//! RedisBloom answered (`answers.txt`). Their cuckoo filters:
//! `cuckoo::redisbloom_fixtures`.

use std::collections::HashSet;

use crate::common::peer_modules::{recorded_answers, started_on_fixtures};
use crate::common::*;

/// The Bloom keys of the fixtures and their members.
const KEYS: [(&str, u32); 3] = [("plain", 3000), ("scaled", 2000), ("defaults", 700)];
/// Non-members asked about, per key.
const ABSENT: u32 = 20_000;

/// The indexes of `answers` that are 1.
fn ones(answers: &[i64]) -> HashSet<u64> {
    (0..answers.len() as u64)
        .filter(|&i| answers[i as usize] == 1)
        .collect()
}

/// Asserts every answer of `con` against RedisBloom's.
fn answers_as_redisbloom(con: &mut Connection) {
    for (key, members) in KEYS {
        assert_eq!(key_type(con, key), "MBbloom--");
        let items: Vec<String> = (0..members).map(|i| format!("{key}:{i}")).collect();
        let found: Vec<i64> = query!(con, "BF.MEXISTS", key, items);
        assert!(found.iter().all(|&f| f == 1), "{key}: a member is missing");
        assert!(recorded_answers(key, "missing").is_empty());
        let card: i64 = query!(con, "BF.CARD", key);
        assert!(card <= i64::from(members) && card > 0, "{key}: {card}");
        let absent: Vec<String> = (0..ABSENT).map(|i| format!("absent:{i}")).collect();
        let found: Vec<i64> = query!(con, "BF.MEXISTS", key, absent);
        let recorded: HashSet<u64> = recorded_answers(key, "absent").into_iter().collect();
        assert_eq!(
            ones(&found),
            recorded,
            "{key}: false positives differ from RedisBloom's"
        );
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
