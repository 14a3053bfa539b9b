//! The lock family's typed requests: each command's grammar (what `COMMAND
//! DOCS` shows, its arity, and how a call is read) and the values a call
//! carries, checked as they are read.

use crate::common::error::WardenError;
use crate::common::grammar::{
    arg, chosen, flag, items, key, one_of, option, optional, shape_only_request, Arg, Grammar,
    Kind, Request,
};
use crate::lock::core::errors;
use crate::lock::core::plain::{TOKEN, TTL_MS, WAIT_TIMEOUT_MS};
use crate::lock::core::set::{Want, LIMIT};

/// An owner, which must not be empty.
fn owner(word: &[u8]) -> Result<&[u8], WardenError> {
    if word.is_empty() {
        return Err(errors::OWNER_EMPTY);
    }
    Ok(word)
}

/// `DLOCK.ACQUIRE key owner ttl_ms [WAIT timeout_ms] [REENTRANT] [SHARED | LIMIT n] [KEEP]`
pub struct Acquire<'a> {
    /// Who takes the lock.
    pub owner: &'a [u8],
    /// The lease asked for.
    pub ttl_ms: i64,
    /// `WAIT timeout_ms`: block until granted (0 = forever).
    pub wait_ms: Option<i64>,
    /// `REENTRANT`: a holder's repeat adds a hold.
    pub reentrant: bool,
    /// `KEEP`: the grant lives as long as the connection that got it.
    pub keep: bool,
    /// Exclusive, `SHARED` or `LIMIT n`.
    pub want: Want,
}

/// Where `DLOCK.ACQUIRE` and `DLOCK.EXTEND` carry their ttl: a replicated
/// call may carry its effect there instead (`ttl@state`).
pub const TTL_AT: usize = 3;

impl<'a> Request<'a> for Acquire<'a> {
    const NAME: &'static str = "dlock.acquire";
    const GRAMMAR: Grammar = Grammar::new(&[
        key(),
        arg("owner", Kind::Str),
        arg("ttl_ms", Kind::Int),
        option("WAIT", "timeout_ms", Kind::Int),
        flag("REENTRANT"),
        one_of(
            "kind",
            &[
                chosen(flag("SHARED")),
                chosen(option("LIMIT", "n", Kind::Int)),
            ],
        ),
        flag("KEEP"),
    ]);

    fn empty() -> Self {
        Acquire {
            owner: &[],
            ttl_ms: 0,
            wait_ms: None,
            reentrant: false,
            keep: false,
            want: Want::Exclusive,
        }
    }

    #[inline(always)]
    fn take(&mut self, arg: &'static Arg, word: &'a [u8]) -> Result<(), WardenError> {
        match arg.name {
            "owner" => self.owner = owner(word)?,
            "ttl_ms" => self.ttl_ms = TTL_MS.parse(word)?,
            "timeout_ms" => self.wait_ms = Some(WAIT_TIMEOUT_MS.parse(word)?),
            "REENTRANT" => self.reentrant = true,
            "KEEP" => self.keep = true,
            "SHARED" => self.want = Want::Shared,
            "n" => self.want = Want::Limit(LIMIT.parse(word)? as u32),
            _ => {}
        }
        Ok(())
    }
}

/// `DLOCK.RELEASE key owner [TOKEN t]` and `DLOCK.EXTEND key owner ttl_ms
/// [TOKEN t]`: an owner's grant (the one that carried token `t`), and for
/// EXTEND its new lease.
pub struct OwnerGrant<'a, const EXTEND: bool> {
    /// The holder.
    pub owner: &'a [u8],
    /// EXTEND's new lease (0 for RELEASE).
    pub ttl_ms: i64,
    /// `TOKEN t`: only the grant that carried it.
    pub token: Option<i64>,
}

/// `DLOCK.RELEASE key owner [TOKEN t]`
pub type Release<'a> = OwnerGrant<'a, false>;
/// `DLOCK.EXTEND key owner ttl_ms [TOKEN t]`
pub type Extend<'a> = OwnerGrant<'a, true>;

impl<'a> Request<'a> for OwnerGrant<'a, false> {
    const NAME: &'static str = "dlock.release";
    const GRAMMAR: Grammar = Grammar::exact(&[
        key(),
        arg("owner", Kind::Str),
        option("TOKEN", "t", Kind::Int),
    ]);

    fn empty() -> Self {
        OwnerGrant {
            owner: &[],
            ttl_ms: 0,
            token: None,
        }
    }

    #[inline(always)]
    fn take(&mut self, arg: &'static Arg, word: &'a [u8]) -> Result<(), WardenError> {
        self.take_field(arg, word)
    }
}

impl<'a> Request<'a> for OwnerGrant<'a, true> {
    const NAME: &'static str = "dlock.extend";
    const GRAMMAR: Grammar = Grammar::exact(&[
        key(),
        arg("owner", Kind::Str),
        arg("ttl_ms", Kind::Int),
        option("TOKEN", "t", Kind::Int),
    ]);

    fn empty() -> Self {
        OwnerGrant {
            owner: &[],
            ttl_ms: 0,
            token: None,
        }
    }

    #[inline(always)]
    fn take(&mut self, arg: &'static Arg, word: &'a [u8]) -> Result<(), WardenError> {
        self.take_field(arg, word)
    }
}

impl<'a, const EXTEND: bool> OwnerGrant<'a, EXTEND> {
    /// The fields RELEASE and EXTEND share.
    fn take_field(&mut self, arg: &'static Arg, word: &'a [u8]) -> Result<(), WardenError> {
        match arg.name {
            "owner" => self.owner = owner(word)?,
            "ttl_ms" => self.ttl_ms = TTL_MS.parse(word)?,
            "t" => self.token = Some(TOKEN.parse(word)?),
            _ => {}
        }
        Ok(())
    }
}

/// `DLOCK.GUARD key owner token command [arg ...]`: the words as given; the
/// command checks them in its own order (nesting first).
pub struct Guard<'a> {
    /// The owner, unchecked.
    pub owner: &'a [u8],
    /// The token, unparsed.
    pub token: &'a [u8],
}

/// Where DLOCK.GUARD's carried command starts.
pub const COMMAND_AT: usize = 4;

impl<'a> Request<'a> for Guard<'a> {
    const NAME: &'static str = "dlock.guard";
    const GRAMMAR: Grammar = Grammar::new(&[
        key(),
        arg("owner", Kind::Str),
        arg("token", Kind::Int),
        arg("command", Kind::Str),
        optional(items("arg")),
    ]);

    fn empty() -> Self {
        Guard {
            owner: &[],
            token: &[],
        }
    }

    fn reads(arg: &'static Arg) -> bool {
        matches!(arg.name, "owner" | "token")
    }

    #[inline(always)]
    fn take(&mut self, arg: &'static Arg, word: &'a [u8]) -> Result<(), WardenError> {
        match arg.name {
            "owner" => self.owner = word,
            "token" => self.token = word,
            _ => {}
        }
        Ok(())
    }
}

impl Guard<'_> {
    /// The owner and token, checked as an ACQUIRE's would be.
    pub fn checked(&self) -> Result<(&[u8], i64), WardenError> {
        Ok((owner(self.owner)?, TOKEN.parse(self.token)?))
    }
}

shape_only_request!(
    /// `DLOCK.INFO key`
    Info,
    "dlock.info",
    Grammar::new(&[key()])
);

/// `DLOCK._SET key owner state`: a lock's state with an absolute deadline
/// (its wire format is `wire::SetLock`).
pub struct SetState<'a> {
    /// The holder.
    pub owner: &'a [u8],
    /// `token:holds:deadline_ms`, unparsed.
    pub state: &'a [u8],
}

impl<'a> Request<'a> for SetState<'a> {
    const NAME: &'static str = "dlock._set";
    const GRAMMAR: Grammar =
        Grammar::new(&[key(), arg("owner", Kind::Str), arg("state", Kind::Str)]);

    fn empty() -> Self {
        SetState {
            owner: &[],
            state: &[],
        }
    }

    #[inline(always)]
    fn take(&mut self, arg: &'static Arg, word: &'a [u8]) -> Result<(), WardenError> {
        match arg.name {
            "owner" => self.owner = owner(word)?,
            "state" => self.state = word,
            _ => {}
        }
        Ok(())
    }
}

/// `DLOCK._SETS key limit:floor:expiry holders`: the holders of a lock set
/// (its wire format is `set_wire::SetLocks`).
pub struct SetStates<'a> {
    /// `limit:floor:expiry`, unparsed.
    pub head: &'a [u8],
    /// The holders' records, unparsed.
    pub holders: &'a [u8],
}

impl<'a> Request<'a> for SetStates<'a> {
    const NAME: &'static str = "dlock._sets";
    const GRAMMAR: Grammar = Grammar::new(&[
        key(),
        arg("limit:floor:expiry", Kind::Str),
        arg("holders", Kind::Str),
    ]);

    fn empty() -> Self {
        SetStates {
            head: &[],
            holders: &[],
        }
    }

    #[inline(always)]
    fn take(&mut self, arg: &'static Arg, word: &'a [u8]) -> Result<(), WardenError> {
        match arg.name {
            "limit:floor:expiry" => self.head = word,
            "holders" => self.holders = word,
            _ => {}
        }
        Ok(())
    }
}
