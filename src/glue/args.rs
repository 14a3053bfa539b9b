//! The arguments of a command call, and the rule for internal commands.

use crate::common::error::WardenError;
use crate::common::grammar::{self, Refused, Request, Words};
use crate::common::parse::parse_i64;
use crate::glue::host::{self, Ctx, RStr};

/// Which name a call used: the command's own, or its alias (another
/// module's name, answered in that module's reply style).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Called {
    /// The command's own name (as its table row names it).
    Own,
    /// Its alias (another module's name for it, under `aliases`).
    Alias,
}

/// The arguments of one call, borrowed from Redis (no copies).
pub struct Args<'a> {
    argv: &'a [RStr<'a>],
    called: Called,
}

impl<'a> Args<'a> {
    /// The arguments Redis passed to a command called by the name `called`.
    pub fn new(argv: &'a [RStr<'a>], called: Called) -> Args<'a> {
        Args { argv, called }
    }

    /// Whether the call used the command's alias: it replies in the alias
    /// module's style, and never replicates itself verbatim (a replica
    /// without the alias would not know the name).
    pub fn by_alias(&self) -> bool {
        self.called == Called::Alias
    }

    /// Number of arguments including the command name.
    pub fn len(&self) -> usize {
        self.argv.len()
    }

    /// Whether there are no arguments at all.
    pub fn is_empty(&self) -> bool {
        self.argv.is_empty()
    }

    /// The string at position `i` (for keys and zero-copy replication).
    pub fn raw(&self, i: usize) -> RStr<'a> {
        self.argv[i]
    }

    /// The strings from position `i` on (a command carried inside this one).
    pub fn raw_from(&self, i: usize) -> &'a [RStr<'a>] {
        &self.argv[i.min(self.argv.len())..]
    }

    /// The bytes at position `i`.
    pub fn bytes(&self, i: usize) -> &'a [u8] {
        self.argv[i].bytes()
    }

    /// The bytes at position `i`, if there is one.
    pub fn get_bytes(&self, i: usize) -> Option<&'a [u8]> {
        self.argv.get(i).map(|a| a.bytes())
    }

    /// The integer at position `i`, or `err` when it is not one.
    pub fn int(&self, i: usize, err: WardenError) -> Result<i64, WardenError> {
        parse_i64(self.bytes(i)).ok_or(err)
    }

    /// The call read into the command's typed request `R` by its grammar.
    pub fn parse<R: Request<'a>>(&self) -> Result<R, Refused> {
        grammar::parse(self)
    }

    /// `parse` into a request the caller holds (a large one is not moved).
    pub fn parse_into<R: Request<'a>>(&self, request: &mut R) -> Result<(), Refused> {
        grammar::parse_into(self, request)
    }
}

impl<'a> Words<'a> for Args<'a> {
    fn count(&self) -> usize {
        self.len()
    }

    fn word(&self, i: usize) -> &'a [u8] {
        self.bytes(i)
    }
}

/// Refuses an internal command (`name`, lower case) unless it comes from the
/// master link or the AOF being loaded: a client could otherwise forge any
/// lock's owner and token or any limiter's state.
pub fn internal_only(ctx: Ctx, name: &'static str) -> Result<(), WardenError> {
    if host::is_replay(ctx) {
        Ok(())
    } else {
        Err(WardenError::InternalCommand(name))
    }
}
