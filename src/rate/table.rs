//! The rate family's commands (`RL.*`), one row each: name, handler,
//! flags, the docs `COMMAND DOCS` shows, and the grammar that gives the
//! arity and arguments and reads calls (`common::grammar`).

use crate::common::grammar::{arg, chosen, key, one_of, option, pairs, Grammar, Kind};
use crate::glue::commands::docs::Doc;
use crate::glue::commands::{command_fn, Command};
use crate::rate::commands as rate;

/// `RL.*`: every command of the family, internal ones included.
pub const COMMANDS: &[Command] = &[
    Command {
        name: "rl.token",
        func: command_fn!(rate::token),
        flags: "write deny-oom fast",
        doc: Doc {
            summary: "Token bucket (golang.org/x/time/rate) on up to 8 limits at once: [allowed, remaining, wait_ms, reset_ms] of the tightest. MAXWAIT reserves tokens that will be there in time. A changed rate or burst keeps the tokens (capped at the new burst).",
            complexity: "O(N) where N is the number of limits",
            grammar: Grammar::new(&[key(), pairs("limit", &[arg("rate", Kind::Str), arg("burst", Kind::Int)]), option("COST", "cost", Kind::Int), option("MAXWAIT", "max_wait_ms", Kind::Int)]),
            since: "0.1.0",
        },
    },
    Command {
        name: "rl.leaky",
        func: command_fn!(rate::leaky),
        flags: "write deny-oom fast",
        doc: Doc {
            summary: "Leaky bucket as a meter: [allowed, remaining, wait_ms, reset_ms]. A changed rate or capacity keeps the level.",
            complexity: "O(1)",
            grammar: Grammar::new(&[key(), arg("rate", Kind::Str), arg("capacity", Kind::Int), option("COST", "cost", Kind::Int)]),
            since: "0.1.0",
        },
    },
    Command {
        name: "rl.window",
        func: command_fn!(rate::window),
        flags: "write deny-oom fast",
        doc: Doc {
            summary: "Sliding-window counter on up to 8 limits at once: [allowed, remaining, wait_ms, reset_ms] of the tightest. A changed limit or window keeps the counts.",
            complexity: "O(N) where N is the number of limits",
            grammar: Grammar::new(&[key(), pairs("window", &[arg("limit", Kind::Int), arg("window_ms", Kind::Int)]), option("COST", "cost", Kind::Int)]),
            since: "0.1.0",
        },
    },
    Command {
        name: "rl.gcra",
        func: command_fn!(rate::gcra),
        flags: "write deny-oom fast",
        doc: Doc {
            summary: "GCRA with redis-cell's CL.THROTTLE arguments and reply: [limited, limit, remaining, retry_after_s, reset_after_s]. The quantity (default 1) is positional as in CL.THROTTLE, or QUANTITY n.",
            complexity: "O(1)",
            grammar: Grammar::new(&[
                key(),
                arg("max_burst", Kind::Int),
                arg("count", Kind::Int),
                arg("period_s", Kind::Int),
                one_of("quantity", &[chosen(arg("quantity", Kind::Int)), chosen(option("QUANTITY", "quantity", Kind::Int))]),
            ]),
            since: "0.1.0",
        },
    },
    Command {
        name: "rl._set",
        func: command_fn!(rate::set_state),
        flags: "write deny-oom",
        doc: Doc {
            summary: "Internal: sets a rate limiter's state (kind:n:limits:pxat_ms, every limit) with an absolute expiry (replication and AOF).",
            complexity: "O(1)",
            grammar: Grammar::new(&[key(), arg("state", Kind::Str)]),
            since: "0.1.0",
        },
    },
];
