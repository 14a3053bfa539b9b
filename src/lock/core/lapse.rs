//! The lapse watch: keys whose lock set has a holder whose lease ends while
//! another holder's runs on, and when. The key's own expiry (the last lease)
//! ends the set and tells every holder left; a holder whose lease ends
//! earlier is dropped and told (`dlock.lost`) when its time in this schedule
//! comes. One entry per key, at its earliest such lease end; the glue runs
//! one timer at the earliest entry. Times are Unix ms passed in by the
//! caller.

use std::collections::{BTreeSet, HashMap};
use std::rc::Rc;

/// How far apart the first and the last lease of a set must end for the
/// first to be watched: a holder whose lease ends within this of the last
/// is told when the key expires (Redis's own active expiry runs every 100
/// ms at the default `hz`), and a set whose holders came in one burst
/// costs no watch entry.
pub const LAPSE_SLACK_MS: i64 = 100;

/// The watched keys, by database and name, and by due time.
#[derive(Debug, Default)]
pub struct LapseWatch {
    due_of: HashMap<i32, HashMap<Rc<[u8]>, i64>>,
    schedule: BTreeSet<(i64, i32, Rc<[u8]>)>,
}

impl LapseWatch {
    /// How many keys are watched.
    pub fn len(&self) -> usize {
        self.schedule.len()
    }

    /// Whether no key is watched.
    pub fn is_empty(&self) -> bool {
        self.schedule.is_empty()
    }

    /// Watches (`db`, `key`) for a lease ending at `at`, in place of any
    /// earlier entry for the key. Nothing is copied when the key is already
    /// watched at `at`.
    pub fn watch(&mut self, db: i32, key: &[u8], at: i64) {
        let keys = self.due_of.entry(db).or_default();
        let name = match keys.get_key_value(key) {
            Some((_, &old)) if old == at => return,
            Some((name, &old)) => {
                let name = Rc::clone(name);
                self.schedule.remove(&(old, db, Rc::clone(&name)));
                name
            }
            None => Rc::from(key),
        };
        keys.insert(Rc::clone(&name), at);
        self.schedule.insert((at, db, name));
    }

    /// Stops watching (`db`, `key`).
    pub fn forget(&mut self, db: i32, key: &[u8]) {
        let Some(keys) = self.due_of.get_mut(&db) else {
            return;
        };
        if let Some((name, at)) = keys.remove_entry(key) {
            self.schedule.remove(&(at, db, name));
        }
        if keys.is_empty() {
            self.due_of.remove(&db);
        }
    }

    /// Stops watching database `db`, or every database for `None`.
    pub fn forget_db(&mut self, db: Option<i32>) {
        match db {
            Some(db) => {
                self.due_of.remove(&db);
                self.schedule.retain(|(_, d, _)| *d != db);
            }
            None => {
                self.due_of.clear();
                self.schedule.clear();
            }
        }
    }

    /// When the earliest entry is due, if any key is watched.
    pub fn next_due(&self) -> Option<i64> {
        self.schedule.first().map(|(at, _, _)| *at)
    }

    /// The earliest key due at `now`, no longer watched (the glue looks at
    /// it, and watches it again if a lease still ends early).
    pub fn pop_due(&mut self, now: i64) -> Option<(i32, Rc<[u8]>)> {
        let (at, _, _) = self.schedule.first()?;
        if *at > now {
            return None;
        }
        let (_, db, name) = self.schedule.pop_first()?;
        if let Some(keys) = self.due_of.get_mut(&db) {
            keys.remove(&name);
            if keys.is_empty() {
                self.due_of.remove(&db);
            }
        }
        Some((db, name))
    }

    /// Databases `a` and `b` traded their keys (`SWAPDB`): the keys
    /// watched in each are now watched in the other.
    pub fn swap_dbs(&mut self, a: i32, b: i32) {
        if a == b {
            return;
        }
        let moved = [
            (a, b, self.due_of.remove(&a)),
            (b, a, self.due_of.remove(&b)),
        ];
        for (from, _, keys) in &moved {
            for (name, &at) in keys.iter().flatten() {
                self.schedule.remove(&(at, *from, Rc::clone(name)));
            }
        }
        for (_, to, keys) in moved {
            let Some(keys) = keys else {
                continue;
            };
            for (name, &at) in &keys {
                self.schedule.insert((at, to, Rc::clone(name)));
            }
            self.due_of.insert(to, keys);
        }
    }
}

#[cfg(test)]
#[path = "lapse_tests.rs"]
mod tests;
