//! `DLOCK._SET key owner token:holds:deadline_ms`: the one form in which lock
//! state travels to replicas and the AOF (grants, renewals, extensions and
//! hand-offs replicate it; AOF rewrite emits it). The deadline is absolute
//! Unix ms; `NO_DEADLINE` leaves the key without expiry.

use std::ffi::CStr;
use std::ops::Deref;

use crate::common::compact_bytes::CompactBytes;
use crate::common::error::WardenError;
use crate::common::parse::{parse_fields, Fields};
use crate::glue::host::{emit, RStr, Sink};
use crate::lock::core::plain::LockState;

/// The command's name.
pub const SET_LOCK: &CStr = c"DLOCK._SET";

/// Room for the state argument, mark included: three i64 fields of at most
/// 20 characters, two ':' and the mark.
const STATE_ROOM: usize = 64;

/// The state argument's text (`SetLock::state_text`).
pub type StateText = Fields<STATE_ROOM>;

/// `DLOCK._SET`: the whole state of a lock, parsed and emitted here only.
pub struct SetLock;

impl SetLock {
    /// Parses the owner and the `token:holds:deadline_ms` argument; the state
    /// is validated like RDB input.
    pub fn parse(owner: &[u8], state: &[u8]) -> Result<LockState, WardenError> {
        let bad = || WardenError::InvalidState("state must be token:holds:deadline_ms");
        let [token, holds, deadline] = parse_fields::<3>(state).ok_or_else(bad)?;
        let state = LockState {
            owner: CompactBytes::from(owner),
            token: i64::try_from(token).map_err(|_| bad())?,
            holds: i64::try_from(holds).map_err(|_| bad())?,
            deadline_ms: i64::try_from(deadline).map_err(|_| bad())?,
        };
        state.validate()?;
        Ok(state)
    }

    /// The state argument: token, holds and deadline joined by ':', led by
    /// `mark` if given (the in-place effect's separator, `effect::MARK`).
    #[inline]
    pub fn state_text<O>(state: &LockState<O>, mark: Option<u8>) -> StateText {
        let mut text = match mark {
            Some(m) => StateText::marked(m),
            None => StateText::empty(),
        };
        text.push_field(state.token.into());
        text.push_field(state.holds.into());
        text.push_field(state.deadline_ms.into());
        text
    }

    /// Writes `DLOCK._SET key owner state` to `sink`. `owner_arg` is the
    /// client's own owner argument when it is this lock's owner (shared, not
    /// copied).
    pub fn emit<O: Deref<Target = [u8]>>(
        state: &LockState<O>,
        sink: Sink,
        key: RStr,
        owner_arg: Option<RStr>,
    ) {
        let text = SetLock::state_text(state, None);
        let text = text.as_bytes();
        let owner: &[u8] = &state.owner;
        match owner_arg {
            Some(arg) => emit(sink, SET_LOCK, (key, arg, text)),
            None => emit(sink, SET_LOCK, (key, owner, text)),
        }
    }
}
