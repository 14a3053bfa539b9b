//! Files RedisBloom 2.8 wrote (`tests/fixtures/redisbloom-2.8/`, made by its
//! `make.sh`): its RDB and its AOF load into warden with `aliases redisbloom`,
//! and every member and 20,000 non-members answer as RedisBloom answered
//! (`answers.txt`: the non-members it found).

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use crate::common::*;

/// The keys of the fixtures and their members.
const KEYS: [(&str, u32); 3] = [("plain", 3000), ("scaled", 2000), ("defaults", 700)];
/// Non-members asked about, per key.
const ABSENT: u32 = 20_000;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/redisbloom-2.8")
}

/// RedisBloom's recorded false positives: per key, the `absent:<i>` it found.
fn recorded() -> Vec<(String, HashSet<u32>)> {
    let text = std::fs::read_to_string(fixtures().join("answers.txt")).unwrap();
    text.lines()
        .map(|line| {
            let mut words = line.split_whitespace();
            let key = words.next().unwrap().to_string();
            (key, words.map(|w| w.parse().unwrap()).collect())
        })
        .collect()
}

/// Asserts every answer of `con` against RedisBloom's.
fn answers_as_redisbloom(con: &mut Connection) {
    let recorded = recorded();
    assert_eq!(recorded.len(), KEYS.len());
    for ((key, members), (recorded_key, hits)) in KEYS.iter().zip(&recorded) {
        assert_eq!(key, recorded_key);
        assert_eq!(key_type(con, *key), "MBbloom--");
        let items: Vec<String> = (0..*members).map(|i| format!("{key}:{i}")).collect();
        let found: Vec<i64> = query!(con, "BF.MEXISTS", *key, items);
        assert!(found.iter().all(|&f| f == 1), "{key}: a member is missing");
        let card: i64 = query!(con, "BF.CARD", *key);
        assert!(card <= i64::from(*members) && card > 0, "{key}: {card}");
        let absent: Vec<String> = (0..ABSENT).map(|i| format!("absent:{i}")).collect();
        let found: Vec<i64> = query!(con, "BF.MEXISTS", *key, absent);
        let ours: HashSet<u32> = (0..ABSENT).filter(|&i| found[i as usize] == 1).collect();
        assert_eq!(
            &ours, hits,
            "{key}: false positives differ from RedisBloom's"
        );
    }
}

/// A warden server with `aliases redisbloom` started on `files` (copied
/// into its directory), with extra server options `args`.
fn started_on(files: &[&str], args: &[&str]) -> (Server, Connection) {
    let mut s = Server::start_with(args, &["aliases", "redisbloom"]);
    s.kill();
    for f in files {
        let from = fixtures().join(f);
        let to = s.dir.join(f);
        if from.is_dir() {
            let _ = std::fs::remove_dir_all(&to);
            std::fs::create_dir_all(&to).unwrap();
            for entry in std::fs::read_dir(&from).unwrap() {
                let entry = entry.unwrap();
                std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
            }
        } else {
            std::fs::copy(from, to).unwrap();
        }
    }
    s.crash_and_restart();
    let con = s.loaded_conn();
    (s, con)
}

#[test]
fn redisblooms_rdb_answers_as_redisbloom() {
    let (_s, mut con) = started_on(&["dump.rdb"], &[]);
    answers_as_redisbloom(&mut con);
}

#[test]
fn redisblooms_aof_answers_as_redisbloom() {
    let (_s, mut con) = started_on(&["appendonlydir"], &["--appendonly", "yes"]);
    answers_as_redisbloom(&mut con);
}
