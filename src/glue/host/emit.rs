//! Internal commands written to the replication stream or an AOF rewrite
//! through the variadic `RedisModule_Replicate` and `RedisModule_EmitAOF`.
//!
//! The C functions read their arguments as a format string says. Here the
//! format is built, at compile time, from the Rust types of the arguments
//! (`EmitArg`), and the C words passed for each come from the same impl, so
//! the two cannot disagree: a call site names no format letter, and an
//! argument of another type does not compile. Nothing is allocated.

use std::ffi::{c_char, c_longlong, CStr};

use redis_module::raw;

use crate::glue::host::{api, Ctx, Io, RStr};

/// Where an internal command is written: the replication stream (and AOF)
/// of the running command, or an AOF rewrite. One `emit` per wire format
/// serves both.
#[derive(Clone, Copy)]
pub enum Sink {
    /// `RedisModule_Replicate` from a command or timer context.
    Replication(Ctx),
    /// `RedisModule_EmitAOF` from a type's `aof_rewrite` callback.
    AofRewrite(Io),
}

/// Writes the internal command `cmd` with `args`, a tuple of `EmitArg`s
/// (`(key, c"AGE", 3_i64, bytes)`), to `sink`.
#[inline(always)]
pub fn emit<A: EmitArgs>(sink: Sink, cmd: &CStr, args: A) {
    let format: &'static [u8; FORMAT_LEN] = A::FORMAT;
    // SAFETY: `format` is NUL-terminated and holds, in order, the letter of
    // each argument, which is the letter of the words that argument adds.
    unsafe { args.words().write(sink, cmd, format.as_ptr().cast()) }
}

/// An argument of an internal command. Its type decides its format letter
/// and the C words the call passes for it (what Redis reads for the letter).
pub trait EmitArg: Copy + sealed::Arg {
    /// Its letter in the format.
    const LETTER: u8;
    /// The words `W`, then this argument's.
    type After<W>;
    /// Appends this argument's words to `words`.
    fn after<W>(self, words: W) -> Self::After<W>;
}

/// A string handle (a key, an argument): `s`, its pointer.
impl EmitArg for RStr<'_> {
    const LETTER: u8 = b's';
    type After<W> = (W, *mut raw::RedisModuleString);
    #[inline(always)]
    fn after<W>(self, words: W) -> Self::After<W> {
        (words, self.as_ptr())
    }
}

/// A C string: `c`, its pointer.
impl EmitArg for &CStr {
    const LETTER: u8 = b'c';
    type After<W> = (W, *const c_char);
    #[inline(always)]
    fn after<W>(self, words: W) -> Self::After<W> {
        (words, self.as_ptr())
    }
}

/// An integer: `l`, a `long long`.
impl EmitArg for i64 {
    const LETTER: u8 = b'l';
    type After<W> = (W, c_longlong);
    #[inline(always)]
    fn after<W>(self, words: W) -> Self::After<W> {
        (words, self)
    }
}

/// Bytes: `b`, their pointer and length.
impl EmitArg for &[u8] {
    const LETTER: u8 = b'b';
    type After<W> = ((W, *const c_char), usize);
    #[inline(always)]
    fn after<W>(self, words: W) -> Self::After<W> {
        ((words, self.as_ptr().cast()), self.len())
    }
}

/// String handles: `v`, a pointer to the first and how many. `RStr` is a
/// transparent non-null `*mut RedisModuleString`, so the slice is the
/// array of pointers Redis reads.
impl EmitArg for &[RStr<'_>] {
    const LETTER: u8 = b'v';
    type After<W> = ((W, *const *mut raw::RedisModuleString), usize);
    #[inline(always)]
    fn after<W>(self, words: W) -> Self::After<W> {
        ((words, self.as_ptr().cast()), self.len())
    }
}

/// What only this file implements, so that the letter, the words and the
/// format of an argument can only come from here.
mod sealed {
    /// The argument types.
    pub trait Arg {}
    impl Arg for super::RStr<'_> {}
    impl Arg for &std::ffi::CStr {}
    impl Arg for i64 {}
    impl Arg for &[u8] {}
    impl Arg for &[super::RStr<'_>] {}

    /// The word types.
    pub trait Word {}
    impl Word for i64 {}
    impl Word for usize {}
    impl<T> Word for *const T {}
    impl<T> Word for *mut T {}

    /// The argument tuples.
    pub trait Args {}
}

/// A C word the variadic functions read: a pointer, a `long long` or a
/// `size_t`.
pub trait Word: Copy + sealed::Word {}
impl Word for c_longlong {}
impl Word for usize {}
impl<T> Word for *const T {}
impl<T> Word for *mut T {}

/// The longest format, with its NUL.
const FORMAT_LEN: usize = 16;

/// `letters` NUL-terminated, checked (at compile time) to fit.
const fn format(letters: &[u8]) -> [u8; FORMAT_LEN] {
    assert!(letters.len() < FORMAT_LEN, "too many arguments to emit");
    let mut out = [0; FORMAT_LEN];
    let mut i = 0;
    while i < letters.len() {
        out[i] = letters[i];
        i += 1;
    }
    out
}

/// The arguments of an internal command: a tuple of `EmitArg`s.
pub trait EmitArgs: sealed::Args {
    /// Their letters, in order, NUL-terminated.
    const FORMAT: &'static [u8; FORMAT_LEN];
    /// Their C words.
    type Words: Words;
    /// Their C words, in order.
    fn words(self) -> Self::Words;
}

/// The C words of a call, as the list `(((), a), b)` that `EmitArg::after`
/// builds.
pub trait Words {
    /// Writes command `cmd` with format `format` and these words to `sink`.
    ///
    /// # Safety
    /// `format` is NUL-terminated and describes these words, in order.
    unsafe fn write(self, sink: Sink, cmd: &CStr, format: *const c_char);
}

/// `(((), A), B)` from `() ; A B`, as a type or a pattern.
macro_rules! nested {
    ($acc:tt ;) => { $acc };
    ($acc:tt ; $head:ident $($rest:ident)*) => { nested!(($acc, $head) ; $($rest)*) };
}

/// The words type of arguments `A B`: `<B as EmitArg>::After<<A as EmitArg>::After<()>>`.
macro_rules! words_of {
    ($acc:ty ;) => { $acc };
    ($acc:ty ; $head:ident $($rest:ident)*) => {
        words_of!(<$head as EmitArg>::After<$acc> ; $($rest)*)
    };
}

/// `Words` for lists of as many words as idents given.
macro_rules! words_impls {
    ($($w:ident)+) => {
        impl<$($w: Word),+> Words for nested!(() ; $($w)+) {
            #[inline(always)]
            #[allow(non_snake_case)]
            unsafe fn write(self, sink: Sink, cmd: &CStr, format: *const c_char) {
                let nested!(() ; $($w)+) = self;
                match sink {
                    // SAFETY: a live context or rewrite IO (the handles'
                    // contract); `format` describes the words (this
                    // function's contract); `cmd` is a C string.
                    Sink::Replication(ctx) => unsafe {
                        api!(RedisModule_Replicate)(ctx.as_ptr(), cmd.as_ptr(), format, $($w),+);
                    },
                    // SAFETY: as above.
                    Sink::AofRewrite(io) => unsafe {
                        api!(RedisModule_EmitAOF)(io.as_ptr(), cmd.as_ptr(), format, $($w),+);
                    },
                }
            }
        }
    };
}

/// `EmitArgs` for tuples of as many arguments as idents given.
macro_rules! args_impls {
    ($($a:ident)+) => {
        impl<$($a: EmitArg),+> sealed::Args for ($($a,)+) {}

        impl<$($a: EmitArg),+> EmitArgs for ($($a,)+)
        where
            words_of!(() ; $($a)+): Words,
        {
            const FORMAT: &'static [u8; FORMAT_LEN] = &format(&[$($a::LETTER),+]);
            type Words = words_of!(() ; $($a)+);
            #[inline(always)]
            #[allow(non_snake_case)]
            fn words(self) -> Self::Words {
                let ($($a,)+) = self;
                let words = ();
                $(let words = $a.after(words);)+
                words
            }
        }
    };
}

/// Runs `$m` for every non-empty prefix of the idents given.
macro_rules! for_prefixes {
    ($m:ident ;) => {};
    ($m:ident ; $($x:ident)+) => {
        for_prefixes!(@ $m ; [] $($x)+);
    };
    (@ $m:ident ; [$($done:ident)*] $next:ident $($rest:ident)*) => {
        $m!($($done)* $next);
        for_prefixes!(@ $m ; [$($done)* $next] $($rest)*);
    };
    (@ $m:ident ; [$($done:ident)*]) => {};
}

for_prefixes!(words_impls ; W1 W2 W3 W4 W5 W6 W7 W8 W9 W10 W11 W12 W13 W14 W15 W16);
for_prefixes!(args_impls ; A1 A2 A3 A4 A5 A6 A7 A8 A9 A10 A11 A12);

#[cfg(test)]
mod tests {
    use super::*;

    /// The format of argument types `A`, without its NUL.
    fn format_of<A: EmitArgs>() -> &'static [u8] {
        let end = A::FORMAT.iter().position(|b| *b == 0).unwrap();
        &A::FORMAT[..end]
    }

    #[test]
    fn format_follows_the_argument_types() {
        type V<'a> = &'a [RStr<'a>];
        assert_eq!(format_of::<(i64,)>(), b"l");
        assert_eq!(format_of::<(RStr, RStr, &[u8])>(), b"ssb");
        assert_eq!(format_of::<(RStr, &[u8], &[u8])>(), b"sbb");
        assert_eq!(format_of::<(RStr, &CStr, &CStr, i64, i64)>(), b"sccll");
        assert_eq!(format_of::<(RStr, &CStr, &CStr, V)>(), b"sccv");
        assert_eq!(format_of::<(RStr, i64, V)>(), b"slv");
        type Layer<'a> = (
            RStr<'a>,
            &'a CStr,
            &'a CStr,
            i64,
            i64,
            i64,
            &'a CStr,
            i64,
            i64,
            i64,
            i64,
        );
        assert_eq!(format_of::<Layer>(), b"scclllcllll");
    }

    #[test]
    fn words_follow_the_arguments_in_order() {
        let bytes: &[u8] = b"abc";
        let (((((), word), n), ptr), len) = (c"AGE", -7_i64, bytes).words();
        assert_eq!(word, c"AGE".as_ptr());
        assert_eq!(n, -7);
        assert_eq!(ptr, bytes.as_ptr().cast());
        assert_eq!(len, 3);
    }

    #[test]
    fn string_slices_pass_as_the_pointers_redis_reads() {
        let mut cells = [0u64; 2];
        let [a, b] = cells
            .each_mut()
            .map(|c| (c as *mut u64).cast::<raw::RedisModuleString>());
        // SAFETY: only the pointers are read, never the strings.
        let strings = unsafe { [RStr::from_raw(a), RStr::from_raw(b)] };
        let (((), ptr), len) = (&strings[..],).words();
        assert_eq!(len, 2);
        // SAFETY: `ptr` points at `strings`, two pointers long.
        let read = unsafe { [*ptr, *ptr.add(1)] };
        assert_eq!(read, [strings[0].as_ptr(), strings[1].as_ptr()]);
    }
}
