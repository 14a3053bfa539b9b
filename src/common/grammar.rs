//! A command's argument grammar, declared once: it is what `COMMAND DOCS`
//! shows (`glue::commands::docs`), it gives the arity Redis enforces
//! (`arity`), and `parse` reads a call by it, handing each argument to the
//! command's typed request (`Request`) in the order the words come.
//!
//! How a call is read:
//! - The leading arguments without a token are positional, in order. A
//!   repeated one (`item [item ...]`, `rate burst [rate burst ...]`) takes
//!   every word to the end, or, when options follow it, every group up to a
//!   word that starts options (a letter first, and not the rate `inf`). An
//!   optional positional (`key [field]`) takes the next word if any.
//! - The rest are options, in any order, each at most once, matched by their
//!   token in any case: a pure token (`REENTRANT`), a token and its value
//!   (`WAIT timeout_ms`), a token and a block with inner tokens
//!   (`HOT reads window_ms EXTEND ttl_ms`), a token that takes every word
//!   after it (`ITEMS item ...`), or a one-of of such (`SHARED | LIMIT n`;
//!   one part may have no token: `quantity | QUANTITY n`). An unknown word,
//!   a repeat, a missing value or a mismatched inner token is a syntax
//!   error.
//! - Words left over where the grammar has no options are the wrong number
//!   of arguments, as are missing positionals and a required `ITEMS` with
//!   nothing after it.
//! - Values are handed to the request as they are read, so an earlier bad
//!   value is reported before a later syntax error, as a hand-written loop
//!   would. A grammar whose options are `Tail::Exact` is checked whole first:
//!   its words after the positionals must form exactly one of its options
//!   before any value is read.

use crate::common::error::WardenError;
use crate::common::parse::is_keyword;

/// The kind of one argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// The key (always argument 1).
    Key,
    /// A string.
    Str,
    /// An integer.
    Int,
    /// A floating-point number.
    Double,
    /// A bare keyword such as `NONSCALING`.
    Flag,
    /// Arguments that go together (`rate burst`), listed in order.
    Block(&'static [Arg]),
    /// Exactly one of these (`SHARED | LIMIT n`).
    OneOf(&'static [Arg]),
}

/// One declared argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Arg {
    /// Its name: shown in hints, and how a request tells its arguments apart
    /// (unique within a command).
    pub name: &'static str,
    /// Its kind.
    pub kind: Kind,
    /// The keyword before it (`WAIT`, `COST`), if any.
    pub token: Option<&'static str>,
    /// Whether it may be left out.
    pub optional: bool,
    /// Whether it may repeat (`item [item ...]`).
    pub multiple: bool,
    /// Words one occurrence takes (`words_of`), worked out when it is
    /// declared; private, so an `Arg` is only made by the functions below,
    /// which keep it right.
    words: usize,
}

/// An argument with every field given, its word count worked out.
const fn declare(
    name: &'static str,
    kind: Kind,
    token: Option<&'static str>,
    optional: bool,
    multiple: bool,
) -> Arg {
    let mut a = Arg {
        name,
        kind,
        token,
        optional,
        multiple,
        words: 0,
    };
    a.words = words_of(&a) as usize;
    a
}

/// A required positional argument.
pub const fn arg(name: &'static str, kind: Kind) -> Arg {
    declare(name, kind, None, false, false)
}

/// The key, at argument 1.
pub const fn key() -> Arg {
    arg("key", Kind::Key)
}

/// An optional `TOKEN value`.
pub const fn option(token: &'static str, name: &'static str, kind: Kind) -> Arg {
    declare(name, kind, Some(token), true, false)
}

/// An optional `TOKEN` followed by `parts` in order (`HOT reads window_ms
/// EXTEND ttl_ms`).
pub const fn tokened_block(token: &'static str, name: &'static str, parts: &'static [Arg]) -> Arg {
    option(token, name, Kind::Block(parts))
}

/// An optional pure token (`NONSCALING`), named after itself.
pub const fn flag(token: &'static str) -> Arg {
    declare(token, Kind::Flag, Some(token), true, false)
}

/// Arguments that go together and repeat: `name [name ...]`, each `name`
/// being `parts` in order (`rate burst [rate burst ...]`).
pub const fn pairs(name: &'static str, parts: &'static [Arg]) -> Arg {
    declare(name, Kind::Block(parts), None, false, true)
}

/// An optional choice of exactly one of `parts` (`[SHARED | LIMIT n]`); each
/// part is made with `chosen`.
pub const fn one_of(name: &'static str, parts: &'static [Arg]) -> Arg {
    declare(name, Kind::OneOf(parts), None, true, false)
}

/// A part of a `one_of`: not optional on its own (the choice is).
pub const fn chosen(part: Arg) -> Arg {
    Arg {
        optional: false,
        ..part
    }
}

/// Strings that repeat to the end: `name [name ...]`.
pub const fn items(name: &'static str) -> Arg {
    declare(name, Kind::Str, None, false, true)
}

/// `Arg` that may repeat: an option that takes every word after its token
/// (`ITEMS item ...`).
pub const fn repeated(a: Arg) -> Arg {
    Arg {
        multiple: true,
        ..a
    }
}

/// `Arg` with `optional` set: an optional positional or an optional repeat.
pub const fn optional(a: Arg) -> Arg {
    Arg {
        optional: true,
        ..a
    }
}

/// `Arg` with `optional` cleared: a required option (`ITEMS item ...`).
pub const fn required(a: Arg) -> Arg {
    Arg {
        optional: false,
        ..a
    }
}

/// How the words after the positional arguments are read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tail {
    /// Option by option, each value handed over as it is read.
    Options,
    /// The words must form exactly one option (or none) before any value is
    /// read (a trailing `[TOKEN t]`: `TOKEN` with a bad value and a word after
    /// it is a syntax error, not a bad token).
    Exact,
}

/// A command's whole grammar: its arguments after the name, and how its
/// options are read.
#[derive(Clone, Copy, Debug)]
pub struct Grammar {
    /// The arguments after the command name.
    pub args: &'static [Arg],
    /// How the options are read.
    pub tail: Tail,
    /// Whether a second part of a one-of is a syntax error (the parser's
    /// rule); false: each part is read as an option of its own and the
    /// request refuses a combination with an error that names it.
    pub exclusive: bool,
    /// Index of the first option in `args` (the positionals come before it).
    first_option: usize,
    /// Whether an option must be given (`ITEMS item ...`).
    required_option: bool,
    /// How many leading positionals are one required word each: they are
    /// words 1 to `single_words`, and one count check covers them all.
    single_words: usize,
    /// The most words a call can have after its name (`usize::MAX` when a
    /// repeat or an option makes it unbounded): more is the wrong number of
    /// arguments before any value is read, as Redis's own arity check would
    /// say for a fixed-arity command.
    most_words: usize,
}

impl Grammar {
    /// A grammar whose options are read one by one.
    pub const fn new(args: &'static [Arg]) -> Grammar {
        let mut first_option = 0;
        while first_option < args.len() && is_positional(&args[first_option]) {
            first_option += 1;
        }
        let (mut required_option, mut i) = (false, first_option);
        while i < args.len() {
            required_option |= !args[i].optional;
            i += 1;
        }
        let mut single_words = 0;
        while single_words < first_option {
            let a = &args[single_words];
            let single = !a.optional
                && !a.multiple
                && matches!(a.kind, Kind::Key | Kind::Str | Kind::Int | Kind::Double);
            if !single {
                break;
            }
            single_words += 1;
        }
        let (mut most_words, mut i) = (0, 0);
        while i < args.len() {
            let a = &args[i];
            if a.multiple || i >= first_option {
                most_words = usize::MAX;
                break;
            }
            most_words += a.words;
            i += 1;
        }
        Grammar {
            args,
            tail: Tail::Options,
            exclusive: true,
            first_option,
            required_option,
            single_words,
            most_words,
        }
    }

    /// A grammar whose trailing option is checked whole first (`Tail::Exact`).
    pub const fn exact(args: &'static [Arg]) -> Grammar {
        Grammar {
            tail: Tail::Exact,
            ..Grammar::new(args)
        }
    }

    /// A grammar whose one-ofs the request checks (`exclusive` false).
    pub const fn choices_checked_by_request(args: &'static [Arg]) -> Grammar {
        Grammar {
            exclusive: false,
            ..Grammar::new(args)
        }
    }

    /// Redis's arity: the count of words (the name included) when every
    /// call has the same, else the negative of the fewest a call can have.
    pub const fn arity(&self) -> i32 {
        let (mut fewest, mut fixed, mut i) = (1i32, true, 0);
        while i < self.args.len() {
            let a = &self.args[i];
            if a.optional || a.multiple || varies(a) {
                fixed = false;
            }
            if !a.optional {
                fewest += words_of(a);
            }
            i += 1;
        }
        if fixed {
            fewest
        } else {
            -fewest
        }
    }

    /// Whether the first argument is the key.
    pub const fn has_key(&self) -> bool {
        matches!(self.args.first(), Some(a) if matches!(a.kind, Kind::Key))
    }
}

/// Whether occurrences of `a` differ in length: a one-of whose choices do,
/// or a block with an optional part.
const fn varies(a: &Arg) -> bool {
    let parts = match a.kind {
        Kind::Block(parts) | Kind::OneOf(parts) => parts,
        _ => return false,
    };
    let mut i = 0;
    while i < parts.len() {
        let p = &parts[i];
        let differs = matches!(a.kind, Kind::OneOf(_)) && words_of(p) != words_of(&parts[0]);
        if differs || p.optional || p.multiple || varies(p) {
            return true;
        }
        i += 1;
    }
    false
}

/// Words one occurrence of `a` takes: its token, then its value or block.
#[inline]
const fn words_of(a: &Arg) -> i32 {
    let token = if a.token.is_some() { 1 } else { 0 };
    let value = match a.kind {
        Kind::Flag => 0,
        Kind::Block(parts) => {
            let (mut n, mut i) = (0, 0);
            while i < parts.len() {
                if !parts[i].optional {
                    n += words_of(&parts[i]);
                }
                i += 1;
            }
            n
        }
        Kind::OneOf(parts) => {
            // The shortest choice.
            let (mut n, mut i) = (i32::MAX, 0);
            while i < parts.len() {
                let w = words_of(&parts[i]);
                if w < n {
                    n = w;
                }
                i += 1;
            }
            if n == i32::MAX {
                0
            } else {
                n
            }
        }
        _ => 1,
    };
    token + value
}

/// The words of a call (argv, the command name first), read without copying.
pub trait Words<'a> {
    /// How many words, the command name included.
    fn count(&self) -> usize;
    /// Word `i` (`i < count()`).
    fn word(&self, i: usize) -> &'a [u8];
}

impl<'a> Words<'a> for [&'a [u8]] {
    fn count(&self) -> usize {
        self.len()
    }

    fn word(&self, i: usize) -> &'a [u8] {
        self[i]
    }
}

/// A command's typed request: filled from a call's words by `parse`, one
/// argument at a time.
pub trait Request<'a>: Sized {
    /// The command's grammar (its one declaration).
    const GRAMMAR: Grammar;
    /// The command's name in error messages (lower case).
    const NAME: &'static str;

    /// The request before any argument is read (what absent options mean).
    fn empty() -> Self;

    /// Takes the value `word` of the argument `arg` (for a pure token, the
    /// token itself; never the key, which a command opens by position); an
    /// error stops the parse.
    fn take(&mut self, arg: &'static Arg, word: &'a [u8]) -> Result<(), WardenError>;

    /// Whether the request reads the value of `arg`: the word of one it does
    /// not read is never fetched (a command that reads its items by
    /// position, or carries another command's arguments).
    #[inline(always)]
    fn reads(_arg: &'static Arg) -> bool {
        true
    }

    /// Checks the request once every word is read (rules across arguments).
    fn finish(&self) -> Result<(), WardenError> {
        Ok(())
    }
}

/// Declares `$ty`, the request of a command that reads no value of its own
/// (its handler opens the key by position): the parse only checks the call's
/// shape against `$grammar`.
macro_rules! shape_only_request {
    ($(#[$doc:meta])* $ty:ident, $name:literal, $grammar:expr) => {
        $(#[$doc])*
        pub struct $ty;

        impl<'a> $crate::common::grammar::Request<'a> for $ty {
            const NAME: &'static str = $name;
            const GRAMMAR: $crate::common::grammar::Grammar = $grammar;

            fn empty() -> Self {
                $ty
            }

            fn reads(_: &'static $crate::common::grammar::Arg) -> bool {
                false
            }

            fn take(
                &mut self,
                _: &'static $crate::common::grammar::Arg,
                _: &'a [u8],
            ) -> Result<(), $crate::common::error::WardenError> {
                Ok(())
            }
        }
    };
}
pub(crate) use shape_only_request;

/// Why a call was refused: the error, and the word it was about (0 when it
/// is about the call as a whole), so a command can treat a word specially
/// (a replicated effect carried in its first parameter).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    /// Index of the word in the call (the command name is 0).
    pub at: usize,
    /// The error the client gets.
    pub error: WardenError,
}

impl From<Refused> for WardenError {
    fn from(r: Refused) -> WardenError {
        r.error
    }
}

/// Reads a call (`words`, the command name first) into `R` by `R::GRAMMAR`.
#[inline(always)]
pub fn parse<'a, R: Request<'a>, W: Words<'a> + ?Sized>(words: &W) -> Result<R, Refused> {
    let mut request = R::empty();
    parse_into(words, &mut request)?;
    Ok(request)
}

/// `parse` into a request the caller holds (a large one is not moved).
#[inline(always)]
pub fn parse_into<'a, R: Request<'a>, W: Words<'a> + ?Sized>(
    words: &W,
    request: &mut R,
) -> Result<(), Refused> {
    let mut reader = Reader {
        words,
        at: 1,
        request,
        name: R::NAME,
        lifetime: std::marker::PhantomData,
    };
    let grammar = R::GRAMMAR;
    if reader.left() > grammar.most_words {
        return Err(reader.arity());
    }
    reader.single_words(&grammar.args[..grammar.single_words])?;
    let others = &grammar.args[grammar.single_words..grammar.first_option];
    if !others.is_empty() {
        reader.positionals(others, grammar.first_option < grammar.args.len())?;
    }
    let options = &grammar.args[grammar.first_option..];
    if options.is_empty() {
        if reader.at < words.count() {
            return Err(reader.arity());
        }
    } else if reader.at < words.count() || grammar.required_option {
        if grammar.tail == Tail::Exact {
            reader.check_exact(options)?;
        }
        reader.options(options, grammar.exclusive, grammar.required_option)?;
    }
    reader
        .request
        .finish()
        .map_err(|error| Refused { at: 0, error })
}

/// Whether a word after a repeated positional starts the options: a word
/// that begins with a letter (`COST`, or an unknown one, a syntax error) and
/// is not the rate `inf`.
pub fn starts_options(word: &[u8]) -> bool {
    word.first().is_some_and(u8::is_ascii_alphabetic) && !word.eq_ignore_ascii_case(b"inf")
}

/// Words one occurrence of `a` takes (worked out when it was declared).
#[inline(always)]
fn width(a: &Arg) -> usize {
    a.words
}

/// Whether `a` is read as a positional argument (no token, not a choice).
#[inline(always)]
const fn is_positional(a: &Arg) -> bool {
    a.token.is_none() && !matches!(a.kind, Kind::OneOf(_))
}

/// The state of one parse.
struct Reader<'w, 'a, R, W: ?Sized> {
    words: &'w W,
    /// The next word to read.
    at: usize,
    request: &'w mut R,
    name: &'static str,
    /// The words' lifetime, which the request's values carry.
    lifetime: std::marker::PhantomData<&'a [u8]>,
}

impl<'a, R: Request<'a>, W: Words<'a> + ?Sized> Reader<'_, 'a, R, W> {
    fn arity(&self) -> Refused {
        Refused {
            at: 0,
            error: WardenError::WrongArity(self.name.into()),
        }
    }

    fn syntax(&self) -> Refused {
        Refused {
            at: self.at,
            error: WardenError::Syntax,
        }
    }

    #[inline(always)]
    fn left(&self) -> usize {
        self.words.count().saturating_sub(self.at)
    }

    /// Hands word `i` to the request as the value of `arg`.
    #[inline(always)]
    fn take(&mut self, arg: &'static Arg, i: usize) -> Result<(), Refused> {
        if !R::reads(arg) {
            return Ok(());
        }
        let word = self.words.word(i);
        self.request
            .take(arg, word)
            .map_err(|error| Refused { at: i, error })
    }

    /// Reads the leading positionals that are one word each (most of them,
    /// without a check per argument): too few words is the wrong number of
    /// arguments, as the per-argument reading finds.
    #[inline(always)]
    fn single_words(&mut self, args: &'static [Arg]) -> Result<(), Refused> {
        if self.words.count() < self.at + args.len() {
            return Err(self.arity());
        }
        for (i, arg) in args.iter().enumerate() {
            if !matches!(arg.kind, Kind::Key) {
                self.take(arg, self.at + i)?;
            }
        }
        self.at += args.len();
        Ok(())
    }

    /// Reads the leading positional arguments `args` (options follow them
    /// when `options_follow`). The key is not handed over: a command opens it
    /// by its position.
    #[inline(always)]
    fn positionals(&mut self, args: &'static [Arg], options_follow: bool) -> Result<(), Refused> {
        for arg in args {
            if matches!(arg.kind, Kind::Key) {
                if self.left() == 0 {
                    return Err(self.arity());
                }
                self.at += 1;
            } else if arg.multiple {
                self.repeated(arg, options_follow)?;
            } else if arg.optional {
                if self.left() > 0 {
                    self.value(arg)?;
                }
            } else if self.left() < width(arg) {
                return Err(self.arity());
            } else {
                self.value(arg)?;
            }
        }
        Ok(())
    }

    /// Reads a repeated positional: to the end, or group by group up to a
    /// word that starts options.
    #[inline(always)]
    fn repeated(&mut self, arg: &'static Arg, options_follow: bool) -> Result<(), Refused> {
        let size = width(arg);
        if size == 1 && !options_follow && !R::reads(arg) {
            // Single words to the end that the request reads by position.
            if self.left() == 0 && !arg.optional {
                return Err(self.arity());
            }
            self.at = self.words.count();
            return Ok(());
        }
        let mut groups = 0;
        while self.left() > 0 && !(options_follow && groups > 0 && starts_options(self.word())) {
            if self.left() < size {
                // A group cut short: the first of a pair without its second.
                return Err(if groups == 0 {
                    self.arity()
                } else {
                    self.syntax()
                });
            }
            self.value(arg)?;
            groups += 1;
        }
        if groups == 0 && !arg.optional {
            return Err(self.arity());
        }
        Ok(())
    }

    fn word(&self) -> &'a [u8] {
        self.words.word(self.at)
    }

    /// Reads one value of `arg` (a single word, or a block's parts in order)
    /// at the current word, which the caller checked is there.
    #[inline(always)]
    fn value(&mut self, arg: &'static Arg) -> Result<(), Refused> {
        match arg.kind {
            Kind::Block(parts) => {
                for part in parts {
                    if part.token.is_some() {
                        self.at += 1; // an inner token, checked by `fits`
                    }
                    self.take(part, self.at)?;
                    self.at += 1;
                }
            }
            _ => {
                self.take(arg, self.at)?;
                self.at += 1;
            }
        }
        Ok(())
    }

    /// Whether the words from the current one on can hold one occurrence of
    /// the option `arg`, whose token is the current word: enough words and
    /// the inner tokens of its block in place.
    #[inline(always)]
    fn fits(&self, arg: &Arg) -> bool {
        let after = self.at + 1;
        match arg.kind {
            Kind::Flag => true,
            Kind::Block(parts) => {
                if self.left() < width(arg) {
                    return false;
                }
                let mut i = after;
                parts.iter().all(|p| {
                    let ok = p.token.is_none_or(|t| is_keyword(self.words.word(i), t));
                    i += width(p);
                    ok
                })
            }
            _ => self.left() >= 2,
        }
    }

    /// The option in `options` that `word` names (its token, or with
    /// `tokened` false a choice's part without one) and that is not `taken`
    /// yet, with the bit that marks it taken: its top-level option's, or with
    /// `exclusive` false a one-of part's own (bit 8·n + 1 + part).
    #[inline(always)]
    fn pick(
        options: &'static [Arg],
        taken: u128,
        exclusive: bool,
        word: Option<&[u8]>,
    ) -> Option<(u128, &'static Arg)> {
        let named = |a: &Arg| match (a.token, word) {
            (Some(t), Some(w)) => is_keyword(w, t),
            (None, None) => true,
            _ => false,
        };
        for (n, o) in options.iter().enumerate() {
            let own = 1u128 << (8 * n);
            match o.kind {
                Kind::OneOf(parts) => {
                    for (k, p) in parts.iter().enumerate() {
                        let bit = if exclusive { own } else { own << (1 + k) };
                        if taken & bit == 0 && named(p) {
                            return Some((bit, p));
                        }
                    }
                }
                _ if word.is_some() && taken & own == 0 && named(o) => return Some((own, o)),
                _ => {}
            }
        }
        None
    }

    /// The option in `options` whose token `word` is, not `taken` yet.
    #[inline(always)]
    fn find(
        options: &'static [Arg],
        taken: u128,
        exclusive: bool,
        word: &[u8],
    ) -> Option<(u128, &'static Arg)> {
        Self::pick(options, taken, exclusive, Some(word))
    }

    /// The part of a one-of in `options` without a token (a bare
    /// `quantity`), if it is not `taken` yet.
    #[inline(always)]
    fn untokened(
        options: &'static [Arg],
        taken: u128,
        exclusive: bool,
    ) -> Option<(u128, &'static Arg)> {
        Self::pick(options, taken, exclusive, None)
    }

    /// `Tail::Exact`: the words left must be one option (or none).
    #[inline(always)]
    fn check_exact(&self, options: &'static [Arg]) -> Result<(), Refused> {
        let left = self.left();
        if left == 0 {
            return Ok(());
        }
        let fits = match Self::find(options, 0, true, self.word()) {
            Some((_, o)) => width(o) == left && self.fits(o),
            None => Self::untokened(options, 0, true).is_some_and(|(_, p)| width(p) == left),
        };
        if fits {
            Ok(())
        } else {
            Err(self.syntax())
        }
    }

    /// Reads the options to the end of the call.
    #[inline(always)]
    fn options(
        &mut self,
        options: &'static [Arg],
        exclusive: bool,
        required: bool,
    ) -> Result<(), Refused> {
        let mut taken = 0u128;
        while self.left() > 0 {
            let word = self.word();
            if let Some((bit, o)) = Self::find(options, taken, exclusive, word) {
                taken |= bit;
                if o.multiple {
                    // `ITEMS item ...`: every word after it.
                    self.at += 1;
                    if self.left() == 0 {
                        return Err(self.arity());
                    }
                    while self.left() > 0 {
                        self.take(o, self.at)?;
                        self.at += 1;
                    }
                } else if !self.fits(o) {
                    return Err(self.syntax());
                } else if matches!(o.kind, Kind::Flag) {
                    self.take(o, self.at)?;
                    self.at += 1;
                } else {
                    self.at += 1;
                    self.value(o)?;
                }
            } else if let Some((bit, p)) = Self::untokened(options, taken, exclusive) {
                taken |= bit;
                self.value(p)?;
            } else {
                return Err(self.syntax());
            }
        }
        // A required option (`ITEMS`) that never came.
        let missing = required
            && options
                .iter()
                .enumerate()
                .any(|(n, o)| !o.optional && taken & (1u128 << (8 * n)) == 0);
        if missing {
            return Err(self.arity());
        }
        Ok(())
    }
}

#[cfg(test)]
#[path = "grammar_tests.rs"]
mod tests;
