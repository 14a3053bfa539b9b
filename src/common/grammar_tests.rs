//! Unit tests of `grammar` (its `tests` module), kept apart so the code reads on its own.

use super::*;

/// A request that records what it was handed, and refuses the value `bad`.
struct Seen<const G: u8>(Vec<(&'static str, String)>);

const ACQUIRE: &[Arg] = &[
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
];
const RELEASE: &[Arg] = &[
    key(),
    arg("owner", Kind::Str),
    option("TOKEN", "t", Kind::Int),
];
const TOKEN: &[Arg] = &[
    key(),
    pairs("limit", &[arg("rate", Kind::Str), arg("burst", Kind::Int)]),
    option("COST", "cost", Kind::Int),
    option("MAXWAIT", "max_wait_ms", Kind::Int),
];
const GCRA: &[Arg] = &[
    key(),
    arg("max_burst", Kind::Int),
    arg("count", Kind::Int),
    arg("period_s", Kind::Int),
    one_of(
        "quantity",
        &[
            chosen(arg("quantity", Kind::Int)),
            chosen(option("QUANTITY", "quantity", Kind::Int)),
        ],
    ),
];
const INSERT: &[Arg] = &[
    key(),
    option("CAPACITY", "capacity", Kind::Int),
    flag("NONSCALING"),
    required(repeated(option("ITEMS", "item", Kind::Str))),
];
const GET: &[Arg] = &[
    key(),
    option("MINVERSION", "version", Kind::Int),
    tokened_block(
        "HOT",
        "hot",
        &[
            arg("reads", Kind::Int),
            arg("window_ms", Kind::Int),
            chosen(option("EXTEND", "ttl_ms", Kind::Int)),
        ],
    ),
];
const INFO: &[Arg] = &[key(), optional(arg("field", Kind::Str))];
const RESERVE: &[Arg] = &[
    key(),
    arg("error_rate", Kind::Double),
    one_of(
        "shape",
        &[
            chosen(option("EXPANSION", "expansion", Kind::Int)),
            chosen(flag("NONSCALING")),
        ],
    ),
];
const GUARD: &[Arg] = &[key(), arg("command", Kind::Str), optional(items("arg"))];
const MERGE: &[Arg] = &[
    key(),
    arg("numkeys", Kind::Int),
    counted_keys("source"),
    required(repeated(option("WEIGHTS", "weight", Kind::Int))),
];

const RESERVE_K: &[Arg] = &[
    key(),
    arg("k", Kind::Int),
    optional(block(
        "params",
        &[
            arg("width", Kind::Int),
            arg("depth", Kind::Int),
            arg("decay", Kind::Double),
        ],
    )),
    option("WINDOW", "window_ms", Kind::Int),
];
const MERGE_OPTIONAL: [Arg; 4] = [MERGE[0], MERGE[1], MERGE[2], optional(MERGE[3])];

/// The grammars above by number (a const generic picks one per test type).
const fn grammar(g: u8) -> Grammar {
    match g {
        0 => Grammar::new(ACQUIRE),
        1 => Grammar::exact(RELEASE),
        2 => Grammar::new(TOKEN),
        3 => Grammar::exact(GCRA),
        4 => Grammar::new(INSERT),
        5 => Grammar::new(GET),
        6 => Grammar::new(INFO),
        7 => Grammar::choices_checked_by_request(RESERVE),
        8 => Grammar::new(GUARD),
        10 => Grammar::new(RESERVE_K),
        _ => Grammar::new(&MERGE_OPTIONAL),
    }
}

impl<'a, const G: u8> Request<'a> for Seen<G> {
    const GRAMMAR: Grammar = grammar(G);
    const NAME: &'static str = "test.cmd";

    fn empty() -> Self {
        Seen(Vec::new())
    }

    fn take(&mut self, arg: &'static Arg, word: &'a [u8]) -> Result<(), WardenError> {
        if word == b"bad" {
            return Err(WardenError::NotPositive(arg.name));
        }
        self.0
            .push((arg.name, String::from_utf8_lossy(word).into_owned()));
        Ok(())
    }
}

/// Parses `line` (words split on spaces, the command name added) by grammar `G`.
fn run<const G: u8>(line: &str) -> Result<Vec<(&'static str, String)>, Refused> {
    let words: Vec<&[u8]> = std::iter::once("test.cmd")
        .chain(line.split(' ').filter(|w| !w.is_empty()))
        .map(str::as_bytes)
        .collect();
    parse::<Seen<G>, _>(&words[..]).map(|s| s.0)
}

fn names(seen: &[(&'static str, String)]) -> Vec<&'static str> {
    seen.iter().map(|(n, _)| *n).collect()
}

fn syntax(at: usize) -> Result<Vec<(&'static str, String)>, Refused> {
    Err(Refused {
        at,
        error: WardenError::Syntax,
    })
}

fn arity() -> Result<Vec<(&'static str, String)>, Refused> {
    Err(Refused {
        at: 0,
        error: WardenError::WrongArity("test.cmd".into()),
    })
}

#[test]
fn options_in_any_order_and_case_each_once() {
    let seen = run::<0>("k o 100 reentrant WAIT 5 limit 3").expect("parses");
    assert_eq!(
        names(&seen),
        ["owner", "ttl_ms", "REENTRANT", "timeout_ms", "n"]
    );
    assert_eq!(
        seen[2].1, "reentrant",
        "a pure token is handed over as typed"
    );
    assert_eq!(run::<0>("k o 100 WAIT 5 WAIT 6"), syntax(6), "a repeat");
    assert_eq!(
        run::<0>("k o 100 SHARED LIMIT 3"),
        syntax(5),
        "a second choice"
    );
    assert_eq!(run::<0>("k o 100 WAIT"), syntax(4), "a missing value");
    assert_eq!(run::<0>("k o 100 NOPE"), syntax(4), "an unknown word");
    assert_eq!(run::<0>("k o"), arity(), "a missing positional");
}

#[test]
fn a_bad_value_is_reported_before_a_later_syntax_error() {
    let refused = run::<0>("k o 100 WAIT bad NOPE").expect_err("refused");
    assert_eq!(refused.at, 5);
    assert_eq!(refused.error, WardenError::NotPositive("timeout_ms"));
    // The position of a bad positional, for a command to treat it specially.
    assert_eq!(run::<0>("k o bad").expect_err("refused").at, 3);
}

#[test]
fn an_exact_tail_is_checked_whole_before_its_value() {
    assert_eq!(names(&run::<1>("k o").expect("parses")), ["owner"]);
    assert_eq!(names(&run::<1>("k o token 5").expect("parses"))[1], "t");
    assert_eq!(run::<1>("k o TOKEN bad extra"), syntax(3));
    assert_eq!(run::<1>("k o TOKEN"), syntax(3));
    assert_eq!(run::<1>("k o 5 TOKEN"), syntax(3));
    assert_eq!(
        run::<1>("k o TOKEN bad").expect_err("refused").error,
        WardenError::NotPositive("t")
    );
}

#[test]
fn repeated_groups_stop_at_a_word_that_starts_options() {
    let seen = run::<2>("k 10/s 5 inf 7 20/m 9 COST 2 MAXWAIT 3").expect("parses");
    assert_eq!(
        names(&seen),
        [
            "rate",
            "burst",
            "rate",
            "burst",
            "rate",
            "burst",
            "cost",
            "max_wait_ms"
        ]
    );
    assert_eq!(
        run::<2>("k 10/s 5 20/m"),
        syntax(4),
        "a rate without its burst"
    );
    assert_eq!(
        run::<2>("k 10/s 5 foo 3"),
        syntax(4),
        "a word is an option, not a rate"
    );
    assert_eq!(run::<2>("k 10/s"), arity());
    assert_eq!(run::<2>("k 10/s 5 COST 1 COST 2"), syntax(6));
}

#[test]
fn a_choice_may_be_positional_or_tokened() {
    let last = |line: &str| run::<3>(line).map(|s| s.last().cloned());
    assert_eq!(
        last("k 1 2 3").expect("parses").map(|l| l.0),
        Some("period_s")
    );
    assert_eq!(
        last("k 1 2 3 4").expect("parses"),
        Some(("quantity", "4".into()))
    );
    assert_eq!(
        last("k 1 2 3 quantity 4").expect("parses"),
        Some(("quantity", "4".into()))
    );
    assert_eq!(run::<3>("k 1 2 3 bad 5"), syntax(5), "checked whole first");
    assert_eq!(run::<3>("k 1 2 3 QUANTITY"), syntax(5));
    assert_eq!(run::<3>("k 1 2 3 QUANTITY 4 5"), syntax(5));
}

#[test]
fn a_token_that_takes_the_rest() {
    let seen = run::<4>("k CAPACITY 5 ITEMS a NONSCALING ITEMS").expect("parses");
    assert_eq!(
        seen.iter().filter(|(n, _)| *n == "item").count(),
        3,
        "every word after ITEMS is an item: {seen:?}"
    );
    assert_eq!(run::<4>("k CAPACITY 5"), arity(), "no ITEMS");
    assert_eq!(run::<4>("k ITEMS"), arity(), "ITEMS with no item");
}

#[test]
fn a_block_needs_its_words_and_inner_tokens() {
    let seen = run::<5>("k HOT 1 2 extend 3 MINVERSION 4").expect("parses");
    assert_eq!(names(&seen), ["reads", "window_ms", "ttl_ms", "version"]);
    assert_eq!(run::<5>("k HOT 1 2 FOO 3"), syntax(2));
    assert_eq!(run::<5>("k HOT 1 2 EXTEND"), syntax(2));
    assert_eq!(run::<5>("k HOT 1 bad EXTEND 3").expect_err("refused").at, 4);
}

#[test]
fn optional_positionals_and_leftover_words() {
    assert_eq!(names(&run::<6>("k").expect("parses")), [] as [&str; 0]);
    assert_eq!(names(&run::<6>("k f").expect("parses")), ["field"]);
    assert_eq!(run::<6>("k f g"), arity(), "no options: a word too many");
    assert_eq!(
        run::<6>("k bad g"),
        arity(),
        "a word too many is found before a bad value, as Redis's arity check would"
    );
    let seen = run::<8>("k SET a b c").expect("parses");
    assert_eq!(names(&seen), ["command", "arg", "arg", "arg"]);
    assert_eq!(names(&run::<8>("k PING").expect("parses")), ["command"]);
}

#[test]
fn choices_checked_by_the_request_are_each_an_option() {
    let seen = run::<7>("k 0.01 EXPANSION 2 NONSCALING").expect("parses");
    assert_eq!(names(&seen), ["error_rate", "expansion", "NONSCALING"]);
    assert_eq!(run::<7>("k 0.01 EXPANSION 2 EXPANSION 3"), syntax(5));
}

#[test]
fn arity_counts_the_fewest_words() {
    assert_eq!(Grammar::new(ACQUIRE).arity(), -4);
    assert_eq!(Grammar::new(RELEASE).arity(), -3);
    assert_eq!(Grammar::new(TOKEN).arity(), -4);
    assert_eq!(Grammar::new(GCRA).arity(), -5);
    assert_eq!(Grammar::new(INSERT).arity(), -4);
    assert_eq!(Grammar::new(GET).arity(), -2);
    assert_eq!(Grammar::new(INFO).arity(), -2);
    assert_eq!(Grammar::new(GUARD).arity(), -3);
    const ADD: &[Arg] = &[key(), arg("item", Kind::Str)];
    const FENCE: &[Arg] = &[arg("floor", Kind::Int)];
    assert_eq!(Grammar::new(ADD).arity(), 3);
    assert!(Grammar::new(ACQUIRE).has_key());
    assert!(!Grammar::new(FENCE).has_key());
}

/// Counted keys take exactly as many words as the count before them, even
/// words that look like options; the options follow them.
#[test]
fn counted_keys_take_their_count() {
    let g = Grammar::new(&MERGE_OPTIONAL);
    assert_eq!(g.arity(), -4);
    assert_eq!(g.counted_keys_at(), Some(2));
    assert_eq!(Grammar::new(GUARD).counted_keys_at(), None);
    assert_eq!(
        run::<9>("dest 2 WEIGHTS b").map(|s| names(&s)),
        Ok(vec!["numkeys"])
    );
    assert_eq!(
        run::<9>("dest 2 a b WEIGHTS 1 -1").unwrap(),
        vec![
            ("numkeys", "2".to_string()),
            ("weight", "1".to_string()),
            ("weight", "-1".to_string())
        ]
    );
    assert_eq!(run::<9>("dest 3 a b"), arity());
    assert_eq!(run::<9>("dest 1 a b"), syntax(4));
    assert_eq!(run::<9>("dest 0 a"), syntax(2));
    assert_eq!(run::<9>("dest x a"), syntax(2));
    assert_eq!(run::<9>("dest -1 a"), syntax(2));
    assert_eq!(run::<9>("dest 1 a WEIGHTS"), arity());
}

/// An optional block of positionals before options: all of it or none,
/// never the options' words.
#[test]
fn an_optional_block_takes_all_its_words_or_none() {
    assert_eq!(Grammar::new(RESERVE_K).arity(), -3);
    assert_eq!(run::<10>("key 5").map(|s| names(&s)), Ok(vec!["k"]));
    assert_eq!(
        run::<10>("key 5 8 7 0.9 WINDOW 100").map(|s| names(&s)),
        Ok(vec!["k", "width", "depth", "decay", "window_ms"])
    );
    assert_eq!(
        run::<10>("key 5 window 100").map(|s| names(&s)),
        Ok(vec!["k", "window_ms"])
    );
    assert_eq!(run::<10>("key 5 8 7"), arity());
    assert_eq!(
        run::<10>("key 5 bad 7 1"),
        Err(Refused {
            at: 3,
            error: WardenError::NotPositive("width")
        })
    );
    // Words that fill it are its values, whatever they look like (the
    // request refuses `WINDOW` as a depth).
    assert_eq!(
        run::<10>("key 5 8 WINDOW 100").map(|s| names(&s)),
        Ok(vec!["k", "width", "depth", "decay"])
    );
}
