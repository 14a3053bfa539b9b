//! Clients blocked until a key changes: one FIFO per (db, key), the blocking
//! callbacks Redis calls, and the timers and event hooks that look at the key
//! again when it may be ready — released, expired, deleted, flushed, at a
//! deadline the family names, or when writes are allowed again.
//!
//! The machinery knows nothing of what is awaited. A family (locks today; a
//! cache refresh or a semaphore would do the same) implements `Waited`:
//! `serve` is called with the key open for writing whenever the queue may
//! move, and takes waiters with `pop_front`, answering each with `answer`.
//! What a waiter asked for is the family's own payload type.
//!
//! Waiters are connection state: they are never persisted or replicated.

use std::any::Any;
use std::cell::RefCell;
use std::collections::HashMap;
use std::ffi::{c_char, c_int, c_void};
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use redis_module::raw::{self, RedisModuleBlockedClient as BlockedClient};
use redis_module::Context;

use crate::common::cluster::{key_slot, slot_owner, SlotOwner};
use crate::common::error::WardenError;
use crate::common::wait_queue::WaitQueue;
use crate::glue::host::{self, api, shield, Ctx, Key, OwnedString, RStr};

/// A kind of thing clients wait for.
pub trait Waited: Sync {
    /// Moves the queue of `name` in database `db` if it can: the key is open
    /// for writing and the server accepts writes. Take waiters with
    /// `pop_front`, answer them, and `look_at` the key again when needed.
    fn serve(&self, ctx: Ctx, key: &mut Key, name: RStr, db: c_int, now: i64);

    /// Whether `key` holds a value of this family's own types. Such a value
    /// changes only through the family's commands, which move the queue
    /// themselves, or with an event or at a deadline the machinery is told
    /// of: the periodic look passes it by (see `sweep`).
    fn holds_own(&self, key: &Key) -> bool;

    /// What a waiter whose WAIT timeout passed (or that `CLIENT UNBLOCK`
    /// freed) is answered.
    fn timeout_answer(&self) -> Answer {
        Answer::Nil
    }

    /// The INFO gauge of this family's blocked clients.
    fn gauge(&self) -> &'static AtomicI64;
}

/// A client this module blocked (`RedisModuleBlockedClient`), owned by its
/// waiter from `RedisModule_BlockClient` on. Whoever takes the waiter out of
/// the registry gets it and unblocks it, once: `wake` and `release` consume it.
struct Client(*mut BlockedClient);

impl Client {
    /// The registry's key for this client (Redis's handle as a number).
    fn id(&self) -> usize {
        self.0 as usize
    }

    /// Wakes the client with `answer` as its reply.
    fn wake(self, answer: Answer) {
        let data = Box::into_raw(Box::new(answer)).cast::<c_void>();
        // SAFETY: a blocked client not yet unblocked (this consumes the one
        // `Client` of it); Redis hands `data` to `on_reply`, then frees it
        // with `free_answer`.
        unsafe { api!(RedisModule_UnblockClient)(self.0, data) };
    }

    /// Unblocks the client without an answer (the callback running for it
    /// replies itself, or it is gone).
    fn release(self) {
        // SAFETY: a blocked client not yet unblocked (this consumes the one
        // `Client` of it).
        unsafe { api!(RedisModule_UnblockClient)(self.0, std::ptr::null_mut()) };
    }
}

/// A blocked client and what it waits for (the family's payload).
struct Waiter {
    client: Client,
    /// Unique for the module's lifetime (blocked-client handles are reused).
    serial: u64,
    /// Who serves it (its gauge counts it).
    family: &'static dyn Waited,
    payload: Box<dyn Any>,
}

impl Waiter {
    /// Counts the waiter out of the gauges as it leaves its queue.
    fn leave(&self) {
        WAITING.fetch_sub(1, Ordering::Relaxed);
        self.family.gauge().fetch_sub(1, Ordering::Relaxed);
    }

    /// The waiter as a `P`'s, or its client when it waits for another family.
    fn into_served<P: 'static>(self) -> Result<Served<P>, Client> {
        let client = self.client;
        match self.payload.downcast::<P>() {
            Ok(payload) => Ok(Served {
                client,
                payload: *payload,
            }),
            Err(_) => Err(client),
        }
    }
}

/// A waiter taken from its queue: its payload, and the client to `answer`.
pub struct Served<P> {
    client: Client,
    /// What the waiter asked for.
    pub payload: P,
}

impl<P> Served<P> {
    /// Wakes the client with `answer` as its reply.
    pub fn answer(self, answer: Answer) {
        self.client.wake(answer);
    }
}

/// What a woken client is answered.
pub enum Answer {
    /// An integer (a lock's fencing token).
    Integer(i64),
    /// A reply the family writes itself (a cache value with its lease).
    Custom(Box<dyn Fn(Ctx)>),
    /// An error (its slot moved to another cluster node, tokens ran out).
    Error(String),
    /// nil: the WAIT timeout passed.
    Nil,
}

/// The waiters of one key (each names the family that serves it: a key
/// deleted and re-created as another type may queue both kinds).
struct KeyWaiters {
    queue: WaitQueue<Waiter>,
    /// Whether a key-event timer (`Wake::KeyEvent`) is pending.
    event_armed: bool,
    /// When the earliest pending lease-end timer fires (absolute ms).
    lease_timer_at: Option<i64>,
    /// The key's name as a Redis string, made by the first periodic look and
    /// kept for the next ones (which then copy and allocate nothing).
    name: Option<Rc<OwnedString>>,
}

impl KeyWaiters {
    /// Nobody waits and no timer will look at the key: the entry can go.
    fn idle(&self) -> bool {
        self.queue.is_empty() && !self.event_armed && self.lease_timer_at.is_none()
    }
}

/// A blocked client, found by its serial: its handle and when its WAIT
/// timeout ends (absolute ms; `None` waits forever).
#[derive(Clone, Copy)]
struct Blocked {
    bc: usize,
    timeout_at: Option<i64>,
}

/// All waiters, by database and key.
#[derive(Default)]
struct Registry {
    keys: HashMap<Vec<u8>, KeyWaiters>,
    by_client: HashMap<usize, Vec<u8>>,
    by_serial: HashMap<u64, Blocked>,
    /// Whether the periodic look (`on_sweep`) is pending.
    sweep_armed: bool,
    /// Whether the next periodic look serves every key, passing none by: it
    /// found the server refusing writes (a replica, paused, loading), and
    /// whatever changed meanwhile is looked at as the per-key look would.
    full_look: bool,
}

impl Registry {
    /// Forgets a waiter taken from its queue: its indexes and its count.
    fn forget(&mut self, w: &Waiter) {
        w.leave();
        self.by_client.remove(&w.client.id());
        self.by_serial.remove(&w.serial);
    }

    /// Drops the entry of `id` once nobody waits and no timer looks at it.
    fn drop_if_idle(&mut self, id: &[u8]) {
        if self.keys.get(id).is_some_and(KeyWaiters::idle) {
            self.keys.remove(id);
        }
    }
}

mod schedule;
pub use schedule::{on_earliest_timer, run_master_schedule, EarliestTimer, ScheduleTimerProc};

/// Longest delay a module timer is created with. A later moment is reached
/// by re-arming when it fires, so no delay can overflow the server's timer
/// arithmetic (µs in 64 bits) and stall every other timer.
const MAX_TIMER_DELAY_MS: i64 = 86_400_000;

/// How soon a deferred hand-off looks again while the server does not
/// accept writes (paused, failing over, loading).
pub const DEFERRED_RETRY_MS: i64 = 5;

/// A module timer `delay_ms` from now (clamped to 0..=`MAX_TIMER_DELAY_MS`).
pub fn start_timer<T: 'static>(ctx: Ctx, delay_ms: i64, callback: fn(&Context, T), data: T) {
    let delay = Duration::from_millis(delay_ms.clamp(0, MAX_TIMER_DELAY_MS) as u64);
    ctx.context().create_timer(delay, callback, data);
}

/// Serial of the next waiter.
static NEXT_SERIAL: AtomicU64 = AtomicU64::new(1);

/// Clients blocked right now (mirrors the registry, readable without it).
static WAITING: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    static REGISTRY: RefCell<Registry> = RefCell::new(Registry::default());
}

/// Registry key for (db, key).
fn queue_id(db: c_int, key: &[u8]) -> Vec<u8> {
    let mut id = Vec::with_capacity(4 + key.len());
    id.extend_from_slice(&db.to_le_bytes());
    id.extend_from_slice(key);
    id
}

fn split_queue_id(id: &[u8]) -> (c_int, &[u8]) {
    let mut db = [0u8; 4];
    db.copy_from_slice(&id[..4]);
    (c_int::from_le_bytes(db), &id[4..])
}

fn with_registry<R>(op: impl FnOnce(&mut Registry) -> R) -> R {
    REGISTRY.with(|r| op(&mut r.borrow_mut()))
}

/// Clients blocked right now, over all keys (the INFO gauge).
pub fn total_waiting() -> usize {
    WAITING.load(Ordering::Relaxed)
}

/// Waiters queued on (db, key).
pub fn count(db: c_int, key: &[u8]) -> usize {
    if total_waiting() == 0 {
        return 0;
    }
    with_registry(|r| r.keys.get(&queue_id(db, key)).map_or(0, |w| w.queue.len()))
}

/// `count` for the key `name` in `ctx`'s db, neither read while nobody waits.
#[inline]
pub fn count_in(ctx: Ctx, name: RStr) -> usize {
    if total_waiting() == 0 {
        return 0;
    }
    count(host::selected_db(ctx), name.bytes())
}

/// Takes the oldest waiter of (db, key), whose payload is a `P`.
pub fn pop_front<P: 'static>(db: c_int, key: &[u8]) -> Option<Served<P>> {
    let waiter = with_registry(|r| {
        let id = queue_id(db, key);
        let waiter = r.keys.get_mut(&id)?.queue.pop_front()?;
        r.forget(&waiter);
        r.drop_if_idle(&id);
        Some(waiter)
    })?;
    match waiter.into_served::<P>() {
        Ok(served) => Some(served),
        Err(client) => {
            // Another family's waiter on this key: it cannot be served here.
            client.wake(Answer::Error(WardenError::WrongType.to_string()));
            None
        }
    }
}

/// Answers `error` to the oldest waiters of (db, key) that wait for a `P`,
/// up to the first one of another family, whose family then looks at the
/// key (it may serve what this one cannot: a key re-created as its type).
pub fn fail_front<P: 'static>(ctx: Ctx, db: c_int, key: &[u8], error: &str) {
    while front::<P, _>(db, key, |_| ()).is_some() {
        if let Some(waiter) = pop_front::<P>(db, key) {
            waiter.answer(Answer::Error(error.to_string()));
        }
    }
    if count(db, key) > 0 {
        schedule(ctx, db, key, Wake::KeyEvent, 0);
    }
}

/// Looks at the payload of the oldest waiter of (db, key) without taking
/// it: `None` when nobody waits or the oldest waits for another family.
pub fn front<P: 'static, R>(db: c_int, key: &[u8], look: impl FnOnce(&P) -> R) -> Option<R> {
    if total_waiting() == 0 {
        return None;
    }
    with_registry(|r| {
        let entry = r.keys.get(&queue_id(db, key))?;
        let waiter = entry.queue.front()?;
        waiter.payload.downcast_ref::<P>().map(look)
    })
}

/// Takes, in arrival order, every waiter of (db, key) that waits for a `P`
/// and whose payload `wanted` accepts; the others keep their places.
pub fn take_where<P: 'static>(
    db: c_int,
    key: &[u8],
    wanted: impl Fn(&P) -> bool,
) -> Vec<Served<P>> {
    if total_waiting() == 0 {
        return Vec::new();
    }
    let taken = with_registry(|r| {
        let id = queue_id(db, key);
        let taken = r
            .keys
            .get_mut(&id)?
            .queue
            .take_where(|w| w.payload.downcast_ref::<P>().is_some_and(&wanted));
        for w in &taken {
            r.forget(w);
        }
        r.drop_if_idle(&id);
        Some(taken)
    });
    // Every waiter taken waits for a `P` (the filter above).
    taken
        .unwrap_or_default()
        .into_iter()
        .filter_map(|w| w.into_served::<P>().ok())
        .collect()
}

/// Removes the blocked client `client` (its `Client::id`) wherever it waits:
/// its family and the client to unblock, or `None` if it was not waiting.
/// When it was the oldest waiter and others wait behind it, the key is
/// looked at again: what it waited for may have held back the next ones (a
/// writer ahead of readers a shared lock could take now).
fn remove_client(ctx: Ctx, client: usize) -> Option<(&'static dyn Waited, Client)> {
    let (removed, serve_next) = with_registry(|r| {
        let id = r.by_client.remove(&client)?;
        let entry = r.keys.get_mut(&id)?;
        let was_head = entry.queue.front().is_some_and(|w| w.client.id() == client);
        let removed = entry.queue.remove_where(|w| w.client.id() == client);
        if let Some(w) = &removed {
            w.leave();
            r.by_serial.remove(&w.serial);
        }
        let serve_next = (was_head && !entry.queue.is_empty()).then(|| id.clone());
        if entry.idle() {
            r.keys.remove(&id);
        }
        Some((removed.map(|w| (w.family, w.client)), serve_next))
    })?;
    if let Some(id) = serve_next {
        let (db, key) = split_queue_id(&id);
        schedule(ctx, db, key, Wake::KeyEvent, 0);
    }
    removed
}

/// The waiter with `serial`, if it still waits.
fn blocked(serial: u64) -> Option<Blocked> {
    with_registry(|r| r.by_serial.get(&serial).copied())
}

/// How a client waits: for whom, how long, and when to look at the key first.
pub struct WaitRequest {
    /// Who serves the queue.
    pub family: &'static dyn Waited,
    /// What the client waits for (handed back by `pop_front`).
    pub payload: Box<dyn Any>,
    /// Its WAIT timeout in ms (0 = forever).
    pub timeout_ms: i64,
    /// The most clients that may wait on one key.
    pub max_waiters: usize,
    /// When the key should be looked at even without an event (absolute ms:
    /// a lease end), if ever.
    pub look_at: Option<i64>,
}

/// Blocks the calling client on (db, key) until its family answers it or
/// its timeout passes (then nil).
pub fn block(
    ctx: Ctx,
    db: c_int,
    key: &[u8],
    request: WaitRequest,
    now: i64,
) -> Result<(), WardenError> {
    let timeout_ms = request.timeout_ms;
    if count(db, key) >= request.max_waiters {
        return Err(WardenError::TooManyWaiters);
    }
    subscribe_key_events(ctx);
    // Redis 7.0 drops the reply of a client that times out after it was
    // unblocked in the same event-loop turn, so the module keeps the timeout
    // itself (a timer) and Redis never times these clients out.
    // SAFETY: `ctx` is the live context of a command that may block (checked by the caller); the callbacks match Redis's signatures.
    let client = Client(unsafe {
        api!(RedisModule_BlockClient)(
            ctx.as_ptr(),
            Some(on_reply::<false>),
            Some(on_reply::<true>),
            Some(free_answer),
            0,
        )
    });
    // SAFETY: the client was just returned by RedisModule_BlockClient.
    unsafe { api!(RedisModule_SetDisconnectCallback)(client.0, Some(on_disconnect)) };
    let (serial, bc) = (NEXT_SERIAL.fetch_add(1, Ordering::Relaxed), client.id());
    let family = request.family;
    let waiter = Waiter {
        client,
        serial,
        family,
        payload: request.payload,
    };
    let timeout_at = (timeout_ms > 0).then(|| now.saturating_add(timeout_ms));
    with_registry(|r| {
        let id = queue_id(db, key);
        r.by_client.insert(bc, id.clone());
        let entry = Blocked { bc, timeout_at };
        r.by_serial.insert(serial, entry);
        r.keys
            .entry(id)
            .or_insert_with(|| KeyWaiters {
                queue: WaitQueue::default(),
                event_armed: false,
                lease_timer_at: None,
                name: None,
            })
            .queue
            .push(waiter);
        WAITING.fetch_add(1, Ordering::Relaxed);
        family.gauge().fetch_add(1, Ordering::Relaxed);
    });
    if timeout_ms > 0 {
        start_timer(ctx, timeout_ms, on_wait_timeout, serial);
    }
    if let Some(at) = request.look_at {
        look_at(ctx, db, key, at, now);
    }
    arm_sweep(ctx);
    Ok(())
}

/// Timer at a waiter's WAIT timeout: it leaves the queue and gets nil (a
/// timeout beyond the longest timer delay re-arms until it is reached).
fn on_wait_timeout(ctx: &Context, serial: u64) {
    // SAFETY: the context of this timer callback, used while it runs.
    let ctx = unsafe { Ctx::from_raw(ctx.ctx) };
    shield((), || {
        let Some(waiting) = blocked(serial) else {
            return; // already granted, moved or disconnected
        };
        let now = host::now_ms();
        if let Some(at) = waiting.timeout_at.filter(|at| *at > now) {
            start_timer(ctx, at - now, on_wait_timeout, serial);
            return;
        }
        if let Some((family, client)) = remove_client(ctx, waiting.bc) {
            client.wake(family.timeout_answer());
        }
    })
}

/// In cluster mode, the error for waiters of `key` when its slot is served
/// elsewhere now (a key that vanished may have left with its slot): `MOVED slot ip:port`, `ASK slot ip:port` while the slot is
/// migrating, or `TRYAGAIN` when nobody is known to serve it.
pub fn moved_error(ctx: Ctx, key: &[u8]) -> Option<String> {
    if !host::is_cluster(ctx) {
        return None;
    }
    let slot = key_slot(key);
    match slot_owner(&host::cluster_nodes(ctx)?, slot) {
        SlotOwner::Me => None,
        SlotOwner::Elsewhere(addr) => Some(format!("MOVED {slot} {addr}")),
        SlotOwner::Migrating(addr) => Some(format!("ASK {slot} {addr}")),
        SlotOwner::Unknown => Some("TRYAGAIN the key's slot is not served here".to_string()),
    }
}

/// Wakes every waiter of (db, key) with `error`: the key cannot be served
/// here.
pub fn fail_all(db: c_int, key: &[u8], error: &str) {
    let drained = with_registry(|r| {
        let id = queue_id(db, key);
        let entry = r.keys.remove(&id)?;
        let mut drained = Vec::with_capacity(entry.queue.len());
        let mut queue = entry.queue;
        while let Some(w) = queue.pop_front() {
            r.forget(&w);
            drained.push(w.client);
        }
        Some(drained)
    });
    for client in drained.unwrap_or_default() {
        client.wake(Answer::Error(error.to_string()));
    }
}

/// Why a per-key timer fires.
#[derive(Clone, Copy)]
enum Wake {
    /// The key was deleted, expired, renamed, flushed or swapped, or serving
    /// was deferred while the server did not accept writes.
    KeyEvent,
    /// The family asked to look at this time (`Alarm::at`): a lease end.
    Deadline,
}

/// A pending look at one key with waiters.
struct Alarm {
    /// Registry key (db and key name).
    id: Vec<u8>,
    why: Wake,
    /// When a `Deadline` alarm was due (absolute ms).
    at: i64,
}

/// How often every key with waiters is looked at (`on_sweep`).
const SWEEP_MS: i64 = 1000;

/// Makes sure a timer looks at (db, key) just after `deadline` (absolute ms),
/// so a lease that ends is served even if Redis has not expired the key yet.
/// A deadline earlier than the pending timer (a hand-off with a shorter ttl,
/// a PEXPIRE) gets a timer of its own.
pub fn look_at(ctx: Ctx, db: c_int, key: &[u8], deadline: i64, now: i64) {
    let id = queue_id(db, key);
    let due = deadline.saturating_add(1);
    let needed = with_registry(|r| {
        let Some(entry) = r.keys.get_mut(&id) else {
            return false;
        };
        if entry.lease_timer_at.is_some_and(|at| at <= due) {
            return false;
        }
        entry.lease_timer_at = Some(due);
        true
    });
    if needed {
        let why = Wake::Deadline;
        start_timer(
            ctx,
            due.saturating_sub(now),
            on_timer,
            Alarm { id, why, at: due },
        );
    }
}

/// Makes sure a `Wake::KeyEvent` timer looks at (db, key) in `delay_ms`
/// (one pending per key).
fn schedule(ctx: Ctx, db: c_int, key: &[u8], why: Wake, delay_ms: i64) {
    let id = queue_id(db, key);
    let needed = with_registry(|r| {
        let Some(entry) = r.keys.get_mut(&id) else {
            return false;
        };
        !std::mem::replace(&mut entry.event_armed, true)
    });
    if needed {
        start_timer(ctx, delay_ms, on_timer, Alarm { id, why, at: 0 });
    }
}

fn on_timer(ctx: &Context, alarm: Alarm) {
    // SAFETY: the context of this timer callback, used while it runs.
    let ctx = unsafe { Ctx::from_raw(ctx.ctx) };
    shield((), || {
        let id = alarm.id;
        let family = with_registry(|r| {
            let entry = r.keys.get_mut(&id)?;
            match alarm.why {
                Wake::Deadline if entry.lease_timer_at == Some(alarm.at) => {
                    entry.lease_timer_at = None;
                }
                Wake::Deadline => {}
                Wake::KeyEvent => entry.event_armed = false,
            }
            if entry.idle() {
                r.keys.remove(&id);
                return None;
            }
            // The oldest waiter's family moves the queue.
            entry.queue.front().map(|w| w.family)
        });
        let Some(family) = family else {
            return;
        };
        let (db, key) = split_queue_id(&id);
        if !host::writes_allowed(ctx) {
            // Paused, failing over, loading or no longer a master: a write
            // now would crash a paused Redis 7.0 or diverge a replica. What
            // was due is retried soon.
            schedule(ctx, db, key, Wake::KeyEvent, DEFERRED_RETRY_MS);
            return;
        }
        if host::select_db(ctx, db) {
            serve(ctx, family, db, key);
        }
    })
}

/// Lets `family` move the queue of (db, key), the key open for writing on
/// the selected database `db`.
fn serve(ctx: Ctx, family: &'static dyn Waited, db: c_int, key: &[u8]) {
    let name = OwnedString::new(Some(ctx), key);
    let mut open = Key::writable(ctx, name.as_rstr());
    family.serve(ctx, &mut open, name.as_rstr(), db, host::now_ms());
}

/// Starts the periodic look unless it is pending.
fn arm_sweep(ctx: Ctx) {
    if !with_registry(|r| std::mem::replace(&mut r.sweep_armed, true)) {
        start_timer(ctx, SWEEP_MS, on_sweep, ());
    }
}

/// The periodic look, once a second while clients wait, at every key with
/// waiters, for what ends a key without an event warden hears: a cluster
/// node that loses a slot deletes its keys silently, and a command that
/// overwrites a key (`SET`, `SORT … STORE`, `SUNIONSTORE`) sends an event of
/// its own type's class. Listening to those classes would cost every such
/// write on the server a module call (+500 instructions per `SET`, ~19%).
/// One timer for all keys: a timer per key woke the server once per key and
/// second.
fn on_sweep(ctx: &Context, (): ()) {
    // SAFETY: the context of this timer callback, used while it runs.
    let ctx = unsafe { Ctx::from_raw(ctx.ctx) };
    shield((), || {
        // Paused, failing over, loading or no longer a master: nothing is
        // served now, the look keeps its pace, and the next one that may
        // serve looks at every key in full.
        if total_waiting() > 0 {
            if host::writes_allowed(ctx) {
                let full = with_registry(|r| std::mem::take(&mut r.full_look));
                sweep(ctx, full);
            } else {
                with_registry(|r| r.full_look = true);
            }
        }
        let again = with_registry(|r| {
            r.sweep_armed = total_waiting() > 0;
            r.sweep_armed
        });
        if again {
            start_timer(ctx, SWEEP_MS, on_sweep, ());
        }
    })
}

/// A key the periodic look visits.
struct Visit {
    db: c_int,
    name: Rc<OwnedString>,
    /// Its oldest waiter's family.
    family: &'static dyn Waited,
    /// Whether a lease-end timer is pending for it (and the look may pass
    /// it by).
    deadline_pending: bool,
}

/// Looks at every key with waiters. What the look is for, a key gone or of
/// another type, is seen without serving: unless `full`, a key that still
/// holds a value of its oldest waiter's family, with a deadline timer
/// pending, is passed by (opened, its type compared). Any other key is
/// served as a key event would serve it.
fn sweep(ctx: Ctx, full: bool) {
    let visits: Vec<Visit> = with_registry(|r| {
        r.keys
            .iter_mut()
            .filter_map(|(id, entry)| {
                let family = entry.queue.front()?.family;
                let (db, key) = split_queue_id(id);
                let name = entry
                    .name
                    .get_or_insert_with(|| Rc::new(OwnedString::new(None, key)));
                Some(Visit {
                    db,
                    name: Rc::clone(name),
                    family,
                    deadline_pending: !full && entry.lease_timer_at.is_some(),
                })
            })
            .collect()
    });
    let mut selected = None;
    for visit in visits {
        if selected != Some(visit.db) {
            if !host::select_db(ctx, visit.db) {
                continue;
            }
            selected = Some(visit.db);
        }
        let name = visit.name.as_rstr();
        // Opened for writing, as serving would: a key opened for reading
        // would count as a keyspace hit or miss and send `keymiss` events.
        if visit.deadline_pending && visit.family.holds_own(&Key::writable(ctx, name)) {
            continue;
        }
        // Keys served before may have answered these waiters (a whole
        // flush): the oldest waiter's family now, if anyone still waits.
        let key = name.bytes();
        let id = queue_id(visit.db, key);
        let Some(family) = with_registry(|r| r.keys.get(&id)?.queue.front().map(|w| w.family))
        else {
            continue;
        };
        serve(ctx, family, visit.db, key);
    }
}

/// Whether `on_key_event` is subscribed (it stays so once it is).
static KEY_EVENTS_SUBSCRIBED: AtomicBool = AtomicBool::new(false);

/// Subscribes `on_key_event` the first time a client waits. Until then warden
/// adds nothing to other commands: Redis runs every subscribed module's hook
/// (with a temporary client) on each DEL, EXPIRE, SET … PX and RENAME.
fn subscribe_key_events(ctx: Ctx) {
    if KEY_EVENTS_SUBSCRIBED.load(Ordering::Relaxed) {
        return;
    }
    let kinds = raw::NotifyEvent::GENERIC | raw::NotifyEvent::EXPIRED | raw::NotifyEvent::EVICTED;
    // SAFETY: `ctx` is a live context; the callback matches Redis's signature.
    unsafe {
        api!(RedisModule_SubscribeToKeyspaceEvents)(ctx.as_ptr(), kinds.bits(), Some(on_key_event))
    };
    KEY_EVENTS_SUBSCRIBED.store(true, Ordering::Relaxed);
}

/// Keyspace hook: a key with waiters was deleted, expired, evicted or renamed.
/// Writing here is unsafe on 7.0, so the hand-off runs from a 0 ms timer.
unsafe extern "C" fn on_key_event(
    ctx: *mut raw::RedisModuleCtx,
    _kind: c_int,
    _event: *const c_char,
    key: *mut raw::RedisModuleString,
) -> c_int {
    shield((), || {
        if total_waiting() == 0 {
            return;
        }
        // SAFETY: the context Redis passed this keyspace hook, used while it runs.
        let ctx = unsafe { Ctx::from_raw(ctx) };
        let db = host::selected_db(ctx);
        // SAFETY: Redis passes the event's key, alive and unchanged during this callback.
        let key = unsafe { RStr::from_raw(key) }.bytes();
        schedule(ctx, db, key, Wake::KeyEvent, 0);
    });
    raw::REDISMODULE_OK as c_int
}

/// Schedules a hand-off check for every key with waiters in a database
/// `affected` accepts.
fn wake_databases(ctx: Ctx, affected: impl Fn(c_int) -> bool) {
    let ids: Vec<Vec<u8>> = with_registry(|r| {
        r.keys
            .keys()
            .filter(|id| affected(split_queue_id(id).0))
            .cloned()
            .collect()
    });
    for id in ids {
        let (db, key) = split_queue_id(&id);
        schedule(ctx, db, key, Wake::KeyEvent, 0);
    }
}

/// # Safety
/// Called by Redis with a valid context and the event's info struct.
///
/// Server-event hook: FLUSHDB / FLUSHALL (also DEBUG RELOAD) and SWAPDB change
/// keys without per-key events, so every key with waiters in the databases
/// involved gets a hand-off check.
pub unsafe extern "C" fn on_databases_changed(
    ctx: *mut raw::RedisModuleCtx,
    event: raw::RedisModuleEvent,
    subevent: u64,
    data: *mut c_void,
) {
    shield((), || {
        if data.is_null() || total_waiting() == 0 {
            return;
        }
        // SAFETY: the context Redis passed this event hook, used while it runs.
        let ctx = unsafe { Ctx::from_raw(ctx) };
        if event.id == raw::REDISMODULE_EVENT_FLUSHDB {
            if subevent != raw::REDISMODULE_SUBEVENT_FLUSHDB_END {
                return;
            }
            // SAFETY: Redis passes a RedisModuleFlushInfo with FLUSHDB events (checked non-null above).
            let flushed = unsafe { (*data.cast::<raw::RedisModuleFlushInfo>()).dbnum };
            wake_databases(ctx, |db| flushed == -1 || db == flushed);
        } else if event.id == raw::REDISMODULE_EVENT_SWAPDB {
            // SAFETY: Redis passes a RedisModuleSwapDbInfo with SWAPDB events (checked non-null above).
            let info = unsafe { &*data.cast::<raw::RedisModuleSwapDbInfo>() };
            let (a, b) = (info.dbnum_first, info.dbnum_second);
            wake_databases(ctx, |db| db == a || db == b);
        }
    })
}

/// Subscribes the flush and swap hooks.
pub fn subscribe_database_events(ctx: Ctx) -> bool {
    [
        raw::REDISMODULE_EVENT_FLUSHDB,
        raw::REDISMODULE_EVENT_SWAPDB,
    ]
    .into_iter()
    .all(|id| host::subscribe_server_event(ctx, id, on_databases_changed))
}

/// Replies with the answer a waiter was woken with; false if there is none.
fn reply_answer(ctx: Ctx) -> bool {
    // SAFETY: `ctx` is the reply context of a client this module blocked; its
    // private data is null or the `Answer` given to `wake`.
    let data =
        unsafe { api!(RedisModule_GetBlockedClientPrivateData)(ctx.as_ptr()) }.cast::<Answer>();
    // SAFETY: as above; Redis frees it (`free_answer`) only after this callback.
    match unsafe { data.as_ref() } {
        Some(answer) => reply(ctx, answer),
        None => return false,
    }
    true
}

/// Writes `answer` as the reply on `ctx`.
fn reply(ctx: Ctx, answer: &Answer) {
    match answer {
        Answer::Integer(n) => host::reply_integer(ctx, *n),
        Answer::Custom(reply) => reply(ctx),
        Answer::Error(error) => host::reply_error(ctx, error),
        Answer::Nil => host::reply_null(ctx),
    }
}

/// The reply callback (`TIMED_OUT` false) and the timeout callback (true)
/// of a blocked client. A client woken with an `Answer` gets it, also when
/// the timeout callback runs in the event-loop turn it was handed the lock.
/// Otherwise the timeout callback (`CLIENT UNBLOCK`: Redis's own timeout is
/// never set) takes it out of the queue with its family's timeout answer.
unsafe extern "C" fn on_reply<const TIMED_OUT: bool>(
    ctx: *mut raw::RedisModuleCtx,
    _argv: *mut *mut raw::RedisModuleString,
    _argc: c_int,
) -> c_int {
    // SAFETY: the reply context Redis passed this blocked-client callback,
    // used while it runs.
    let ctx = unsafe { Ctx::from_raw(ctx) };
    shield(raw::REDISMODULE_OK as c_int, || {
        if reply_answer(ctx) || !TIMED_OUT {
            return raw::REDISMODULE_OK as c_int;
        }
        // SAFETY: `ctx` is the reply context of a client this module blocked.
        let bc = unsafe { api!(RedisModule_GetBlockedClientHandle)(ctx.as_ptr()) };
        match remove_client(ctx, bc as usize) {
            Some((family, client)) => {
                client.release();
                reply(ctx, &family.timeout_answer());
            }
            None => host::reply_null(ctx),
        }
        raw::REDISMODULE_OK as c_int
    })
}

/// Disconnect callback (`CLIENT KILL`, connection lost, role change): forget
/// the waiter so the lock is never handed to a client that is gone.
unsafe extern "C" fn on_disconnect(ctx: *mut raw::RedisModuleCtx, bc: *mut BlockedClient) {
    // SAFETY: the context Redis passed this disconnect callback, used while it runs.
    let ctx = unsafe { Ctx::from_raw(ctx) };
    shield((), || {
        if let Some((_, client)) = remove_client(ctx, bc as usize) {
            client.release();
        }
    })
}

unsafe extern "C" fn free_answer(_ctx: *mut raw::RedisModuleCtx, data: *mut c_void) {
    if !data.is_null() {
        // SAFETY: non-null private data is always the boxed `Answer` of `wake`.
        drop(unsafe { Box::from_raw(data.cast::<Answer>()) });
    }
}
