//! Kept grants (`DLOCK.ACQUIRE … KEEP`): which grants each client
//! connection keeps alive, and when each is next due. A kept grant is
//! renewed a third of its ttl after its last renewal, so a renewal held back
//! (writes paused, a failover in progress) has two thirds of the lease to
//! wait in; when its connection closes, every grant it kept is due at once,
//! to be released. One schedule for all kept grants: the glue runs one timer
//! at the earliest due time. Times are Unix ms passed in by the caller.

use std::collections::{BTreeSet, HashMap};

/// A grant kept alive by a connection. A grant is known by its token and
/// its key (the fencing clock never issues a token twice and a holder's
/// repeat keeps it, but `COPY` or `RESTORE` of a kept lock makes another
/// lock with the same token); the schedule knows it by `id`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kept {
    /// The schedule's name for it (given by `Keeper::bind`).
    pub id: u64,
    /// The connection (client id) the grant is bound to.
    pub client: u64,
    /// The database of the key.
    pub db: i32,
    /// The lock's key.
    pub key: Vec<u8>,
    /// The holder.
    pub owner: Vec<u8>,
    /// The grant's fencing token.
    pub token: i64,
    /// The lease each renewal gives, from the moment it is made.
    pub ttl_ms: i64,
}

/// What is to be done for a kept grant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Due {
    /// Its lease is to be renewed for another `ttl_ms`.
    Renew,
    /// Its connection closed: it is to be released.
    Release,
    /// Its lease is to be renewed in memory only: writes are paused, and
    /// the key must not reach its deadline before they resume.
    Hold,
    /// Writes resumed after renewals were held: its lease, as it is, is to
    /// be replicated (`Settle` also renews it if that is due).
    Settle,
    /// The node stopped being master with renewals held: the lease goes back
    /// to what replicas have, and the key's expiry too when `key_expiry`
    /// (the first grant held on its key: later ones found it moved).
    Revert {
        /// What replicas have.
        replicated: Replicated,
        /// Whether the key's expiry goes back too.
        key_expiry: bool,
    },
}

/// What the module did with a kept grant that was due.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Applied {
    /// Done (or nothing was needed).
    Done,
    /// The grant is gone (released, expired, replaced): nothing to do.
    Gone,
    /// Its lease was renewed in memory only; replicas have this.
    Held(Replicated),
}

/// What replicas have of a kept grant whose lease was renewed in memory
/// only (`Due::Hold`): its lease's end and its key's expiry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Replicated {
    /// The grant's lease end (absolute ms).
    pub lease_ms: i64,
    /// The key's expiry (absolute ms; `None`: none).
    pub key_expiry_ms: Option<i64>,
}

/// One kept grant and its place in the schedule.
#[derive(Debug)]
struct Entry {
    grant: Kept,
    /// When it is next due (absolute ms).
    at: i64,
    /// Its connection is gone.
    released: bool,
    /// What replicas have, when its lease was renewed in memory only, and
    /// the order of that first hold among all.
    owed: Option<(Replicated, u64)>,
}

/// Every kept grant, by id, by token, by connection and by due time.
#[derive(Debug, Default)]
pub struct Keeper {
    grants: HashMap<u64, Entry>,
    by_token: HashMap<i64, Vec<u64>>,
    by_client: HashMap<u64, Vec<u64>>,
    schedule: BTreeSet<(i64, u64)>,
    /// The id the next bound grant gets.
    next_id: u64,
    /// Open connections whose last kept grant went (`take_emptied`).
    emptied: Vec<u64>,
    /// The renewals per 1000 s the grants of open connections need.
    load_milli: u64,
    /// Grants whose lease was renewed in memory only (`held`).
    owed: BTreeSet<u64>,
    /// How many first holds there have been (orders them).
    holds: u64,
}

/// The shortest ttl `KEEP` takes: a renewal is due a third of the lease
/// after the last, and the two thirds left must outlast a busy event loop.
pub const MIN_KEPT_TTL_MS: i64 = 100;

/// How long after a renewal (or the grant) the next one is due: a third of
/// the lease, at least 1 ms.
pub fn renewal_period(ttl_ms: i64) -> i64 {
    (ttl_ms / 3).max(1)
}

/// How much longer than the lease a holder's host may stay silent, or leave
/// data unacknowledged, before its connection is given up: room for a
/// retransmission or two on a lossy link.
pub const LIVENESS_SLACK_MS: i64 = 500;

/// The renewals per 1000 s a kept lease of `ttl_ms` needs (one every
/// `renewal_period`).
pub fn renewal_load(ttl_ms: i64) -> u64 {
    1_000_000 / renewal_period(ttl_ms) as u64
}

/// The TCP liveness a connection keeping a grant with a lease of `ttl_ms`
/// gets, so a host that vanishes (no FIN, no RST) frees the lock within
/// about the lease: the kernel gives the connection up once nothing came
/// back from the peer for `user_timeout_ms` (probes answered by the peer's
/// kernel count), checked by a probe a second once the peer was silent for
/// `idle_s`; so at most `max(ttl_ms + LIVENESS_SLACK_MS, 1 s) + 1 s` after
/// the host went silent (within `ttl_ms + 2 s`), or `ttl_ms +
/// LIVENESS_SLACK_MS` after data sent to it first went unacknowledged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Liveness {
    /// Seconds of silence before probes start (half the lease, 1 to 32,767).
    pub idle_s: i32,
    /// Seconds between probes.
    pub interval_s: i32,
    /// Probes before giving up where the user timeout is not honoured.
    pub probes: i32,
    /// Milliseconds without an acknowledgement before giving up.
    pub user_timeout_ms: u32,
}

/// The liveness for a kept lease of `ttl_ms` (see `Liveness`).
pub fn liveness(ttl_ms: i64) -> Liveness {
    let user_timeout_ms = ttl_ms
        .saturating_add(LIVENESS_SLACK_MS)
        .clamp(1, u32::MAX as i64);
    Liveness {
        idle_s: (ttl_ms / 2_000).clamp(1, 32_767) as i32,
        interval_s: 1,
        probes: (user_timeout_ms / 1_000 + 1).clamp(1, 127) as i32,
        user_timeout_ms: user_timeout_ms as u32,
    }
}

impl Keeper {
    /// The renewals per second the grants of open connections need.
    pub fn renewals_per_sec(&self) -> u64 {
        self.load_milli / 1_000
    }

    /// Whether `more` renewals per 1000 s fit within `capacity` renewals per
    /// second besides those needed now.
    pub fn fits(&self, more: u64, capacity: u64) -> bool {
        self.load_milli.saturating_add(more) <= capacity.saturating_mul(1_000)
    }

    /// The id of the grant `token` on (`db`, `key`), if kept.
    fn id_of(&self, token: i64, db: i32, key: &[u8]) -> Option<u64> {
        self.by_token.get(&token)?.iter().copied().find(|id| {
            self.grants
                .get(id)
                .is_some_and(|e| e.grant.db == db && e.grant.key == key)
        })
    }

    /// The lease of the grant `token` on (`db`, `key`) if an open connection
    /// keeps it (its renewals go on).
    pub fn renewed_lease(&self, token: i64, db: i32, key: &[u8]) -> Option<i64> {
        let e = self.grants.get(&self.id_of(token, db, key)?)?;
        (!e.released).then_some(e.grant.ttl_ms)
    }

    /// Kept grants, of open and closed connections.
    pub fn len(&self) -> usize {
        self.grants.len()
    }

    /// Whether no grant is kept.
    pub fn is_empty(&self) -> bool {
        self.grants.is_empty()
    }

    /// Binds `grant`, just made or renewed at `now`, to its connection: its
    /// first renewal is due a renewal period later. A grant already kept
    /// (the holder's repeat, perhaps from another connection) moves to the
    /// new connection and ttl. Returns its id.
    pub fn bind(&mut self, mut grant: Kept, now: i64) -> u64 {
        // Kept before (even by a connection now gone): the new one keeps it.
        if let Some(id) = self.id_of(grant.token, grant.db, &grant.key) {
            self.remove(id);
        }
        self.next_id += 1;
        let id = self.next_id;
        grant.id = id;
        let at = now.saturating_add(renewal_period(grant.ttl_ms));
        self.load_milli += renewal_load(grant.ttl_ms);
        self.by_client.entry(grant.client).or_default().push(id);
        self.by_token.entry(grant.token).or_default().push(id);
        self.schedule.insert((at, id));
        self.grants.insert(
            id,
            Entry {
                grant,
                at,
                released: false,
                owed: None,
            },
        );
        id
    }

    /// Forgets the grant `id` (released, lost, or no longer kept).
    pub fn remove(&mut self, id: u64) -> Option<Kept> {
        let entry = self.grants.remove(&id)?;
        self.schedule.remove(&(entry.at, id));
        self.owed.remove(&id);
        if !entry.released {
            self.load_milli -= renewal_load(entry.grant.ttl_ms);
        }
        if let Some(ids) = self.by_token.get_mut(&entry.grant.token) {
            ids.retain(|i| *i != id);
            if ids.is_empty() {
                self.by_token.remove(&entry.grant.token);
            }
        }
        if let Some(ids) = self.by_client.get_mut(&entry.grant.client) {
            ids.retain(|i| *i != id);
            if ids.is_empty() {
                self.by_client.remove(&entry.grant.client);
                self.emptied.push(entry.grant.client);
            }
        }
        Some(entry.grant)
    }

    /// The open connections that kept grants and keep none any more, since
    /// the last call.
    pub fn take_emptied(&mut self) -> Vec<u64> {
        std::mem::take(&mut self.emptied)
    }

    /// Forgets the grant with `token` if it is kept on (`db`, `key`): a copy
    /// of a kept lock elsewhere (COPY) carries the same token, and its end
    /// is not the kept grant's.
    pub fn remove_on(&mut self, token: i64, db: i32, key: &[u8]) -> Option<Kept> {
        let id = self.id_of(token, db, key)?;
        self.remove(id)
    }

    /// Whether the grant `id` is kept.
    pub fn contains(&self, id: u64) -> bool {
        self.grants.contains_key(&id)
    }

    /// The kept grant with `token` on (`db`, `key`) was extended at `now` to
    /// a lease of `ttl_ms`: renewals go on with that lease, the next a
    /// renewal period from now. Unless the connection is gone. Returns the
    /// connection that keeps it.
    pub fn extended(
        &mut self,
        token: i64,
        db: i32,
        key: &[u8],
        ttl_ms: i64,
        now: i64,
    ) -> Option<u64> {
        let id = self.id_of(token, db, key)?;
        let entry = self.grants.get_mut(&id)?;
        if entry.released {
            return None;
        }
        self.load_milli = self.load_milli - renewal_load(entry.grant.ttl_ms) + renewal_load(ttl_ms);
        entry.grant.ttl_ms = ttl_ms;
        let client = entry.grant.client;
        self.reschedule(id, now.saturating_add(renewal_period(ttl_ms)));
        Some(client)
    }

    /// The connection `client` closed at `now`: every grant it kept is due
    /// for release at once. Returns how many.
    pub fn client_gone(&mut self, client: u64, now: i64) -> usize {
        let Some(ids) = self.by_client.remove(&client) else {
            return 0;
        };
        for id in &ids {
            if let Some(entry) = self.grants.get_mut(id) {
                self.schedule.remove(&(entry.at, *id));
                entry.at = now;
                entry.released = true;
                self.load_milli -= renewal_load(entry.grant.ttl_ms);
                self.schedule.insert((now, *id));
            }
        }
        ids.len()
    }

    /// When the earliest grant is due, if any is kept.
    pub fn next_due(&self) -> Option<i64> {
        self.schedule.first().map(|(at, _)| *at)
    }

    /// The earliest grant due at `now` and what is due for it, taken out of
    /// the schedule (it comes back with `renewed` or `retry_at`, or is
    /// dropped with `remove`).
    pub fn pop_due(&mut self, now: i64) -> Option<(Kept, Due)> {
        let &(at, id) = self.schedule.first()?;
        if at > now {
            return None;
        }
        self.schedule.remove(&(at, id));
        let entry = self.grants.get(&id)?;
        let due = if entry.released {
            Due::Release
        } else {
            Due::Renew
        };
        Some((entry.grant.clone(), due))
    }

    /// The lease of the grant `id` was renewed in memory only at `now`
    /// (writes paused); `replicated` is what replicas had before. Its next
    /// renewal is due a period later, and what it owes them is kept until
    /// `pop_owed` (the first hold's `replicated`, when held again).
    pub fn held(&mut self, id: u64, replicated: Replicated, now: i64) {
        if let Some(entry) = self.grants.get_mut(&id) {
            if entry.owed.is_none() {
                self.holds += 1;
                entry.owed = Some((replicated, self.holds));
            }
            self.owed.insert(id);
        }
        self.renewed(id, now);
    }

    /// Whether some lease was renewed in memory only.
    pub fn owes(&self) -> bool {
        !self.owed.is_empty()
    }

    /// A grant whose lease was renewed in memory only, no longer owed (its
    /// lease is about to be replicated).
    pub fn pop_owed(&mut self) -> Option<Kept> {
        let id = self.owed.pop_first()?;
        let entry = self.grants.get_mut(&id)?;
        entry.owed = None;
        Some(entry.grant.clone())
    }

    /// The grant `id` was renewed at `now`: its next renewal is due a
    /// period later.
    pub fn renewed(&mut self, id: u64, now: i64) {
        if let Some(entry) = self.grants.get(&id) {
            let at = now.saturating_add(renewal_period(entry.grant.ttl_ms));
            self.reschedule(id, at);
        }
    }

    /// What was due for the grant `id` could not be done now (writes paused,
    /// too few replicas): it is due again at `at`.
    pub fn retry_at(&mut self, id: u64, at: i64) {
        self.reschedule(id, at);
    }

    fn reschedule(&mut self, id: u64, at: i64) {
        if let Some(entry) = self.grants.get_mut(&id) {
            self.schedule.remove(&(entry.at, id));
            entry.at = at;
            self.schedule.insert((at, id));
        }
    }

    /// Forgets every kept grant (the node is no longer a master: its grants
    /// now follow the master's, and nothing here renews them). Returns them,
    /// with what replicas have of those renewed in memory only, those in the
    /// order they were first held.
    pub fn clear(&mut self) -> Vec<(Kept, Option<Replicated>)> {
        self.emptied.extend(self.by_client.keys());
        self.by_client.clear();
        self.by_token.clear();
        self.load_milli = 0;
        self.schedule.clear();
        self.owed.clear();
        let mut all: Vec<_> = self
            .grants
            .drain()
            .map(|(_, e)| (e.grant, e.owed))
            .collect();
        all.sort_by_key(|(_, owed)| owed.map_or(0, |(_, order)| order));
        all.into_iter()
            .map(|(grant, owed)| (grant, owed.map(|(replicated, _)| replicated)))
            .collect()
    }
}

#[cfg(test)]
#[path = "keep_tests.rs"]
mod tests;
