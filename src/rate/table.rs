//! The rate family's commands (`RL.*`), one row each: name, handler,
//! flags, the docs `COMMAND DOCS` shows, and the grammar that gives the
//! arity and arguments and reads calls (`common::grammar`).

use crate::common::grammar::Request;
use crate::glue::commands::docs::Doc;
use crate::glue::commands::{command_fn, Alias, AliasSet, Command};
use crate::rate::commands as rate;
use crate::rate::requests as req;

/// `RL.*`: every command of the family, internal ones included.
pub const COMMANDS: &[Command] = &[
    Command {
        name: <req::Token as Request>::NAME,
        func: command_fn!(rate::token),
        alias: None,
        flags: "write deny-oom fast",
        doc: Doc {
            summary: "Token bucket (golang.org/x/time/rate) on up to 8 limits at once: [allowed, remaining, wait_ms, reset_ms] of the tightest. MAXWAIT reserves tokens that will be there in time. A changed rate or burst keeps the tokens (capped at the new burst).",
            complexity: "O(N) where N is the number of limits",
            grammar: <req::Token as Request>::GRAMMAR,
            since: "0.1.0",
        },
    },
    Command {
        name: <req::Leaky as Request>::NAME,
        func: command_fn!(rate::leaky),
        alias: None,
        flags: "write deny-oom fast",
        doc: Doc {
            summary: "Leaky bucket as a meter: [allowed, remaining, wait_ms, reset_ms]. A changed rate or capacity keeps the level.",
            complexity: "O(1)",
            grammar: <req::Leaky as Request>::GRAMMAR,
            since: "0.1.0",
        },
    },
    Command {
        name: <req::Window as Request>::NAME,
        func: command_fn!(rate::window),
        alias: None,
        flags: "write deny-oom fast",
        doc: Doc {
            summary: "Sliding-window counter on up to 8 limits at once: [allowed, remaining, wait_ms, reset_ms] of the tightest. A changed limit or window keeps the counts.",
            complexity: "O(N) where N is the number of limits",
            grammar: <req::Window as Request>::GRAMMAR,
            since: "0.1.0",
        },
    },
    Command {
        name: <req::Gcra as Request>::NAME,
        func: command_fn!(rate::gcra),
        alias: Some(Alias {
            set: AliasSet::RedisCell,
            name: "cl.throttle",
        }),
        flags: "write deny-oom fast",
        doc: Doc {
            summary: "GCRA with redis-cell's CL.THROTTLE arguments and reply: [limited, limit, remaining, retry_after_s, reset_after_s]. The quantity (default 1) is positional as in CL.THROTTLE, or QUANTITY n.",
            complexity: "O(1)",
            grammar: <req::Gcra as Request>::GRAMMAR,
            since: "0.1.0",
        },
    },
    Command {
        name: <req::SetState as Request>::NAME,
        func: command_fn!(rate::set_state),
        alias: None,
        flags: "write deny-oom",
        doc: Doc {
            summary: "Internal: sets a rate limiter's state (kind:n:limits:pxat_ms, every limit) with an absolute expiry (replication and AOF).",
            complexity: "O(1)",
            grammar: <req::SetState as Request>::GRAMMAR,
            since: "0.1.0",
        },
    },
];
