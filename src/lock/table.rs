//! The lock family's commands (`DLOCK.*`), one row each: name, handler,
//! flags, the docs `COMMAND DOCS` shows, and the grammar that gives the
//! arity and arguments and reads calls (`common::grammar`).

use crate::common::grammar::Request;
use crate::glue::commands::docs::Doc;
use crate::glue::commands::{command_fn, Command};
use crate::lock::commands as lock;
use crate::lock::fence;
use crate::lock::guard as lock_guard;
use crate::lock::info as lock_info;
use crate::lock::requests as req;

/// `DLOCK.*`: every command of the family, internal ones included.
pub const COMMANDS: &[Command] = &[
    Command {
        name: req::Acquire::NAME,
        func: command_fn!(lock::acquire),
        alias: None,
        flags: "write deny-oom blocking",
        doc: Doc {
            summary: "Takes a lock for ttl_ms and returns its fencing token; nil when another owner holds it. WAIT blocks until it is handed over; REENTRANT lets the holder add a hold (a plain repeat only renews the lease); KEEP renews the lease while this connection is open and releases it when the connection closes; SHARED takes a read lock, LIMIT n one of n places of a semaphore.",
            complexity: "O(1) (O(N) in the holders of a SHARED or LIMIT key)",
            grammar: req::Acquire::GRAMMAR,
            since: "0.1.0",
        },
    },
    Command {
        name: req::Release::NAME,
        func: command_fn!(lock::release),
        alias: None,
        flags: "write",
        doc: Doc {
            summary: "Drops one hold of the owner's lock (of the grant that carried token t, with TOKEN): 1 if it held it, 0 otherwise. At zero holds the lock goes to the oldest waiter.",
            complexity: "O(1)",
            grammar: req::Release::GRAMMAR,
            since: "0.1.0",
        },
    },
    Command {
        name: req::Extend::NAME,
        func: command_fn!(lock::extend),
        alias: None,
        flags: "write fast",
        doc: Doc {
            summary: "Sets the remaining lease of the owner's lock (of the grant that carried token t, with TOKEN) to ttl_ms: 1, or 0 if it does not hold it (never re-creates a lost lock).",
            complexity: "O(1)",
            grammar: req::Extend::GRAMMAR,
            since: "0.1.0",
        },
    },
    Command {
        name: req::Guard::NAME,
        func: command_fn!(lock_guard::guard),
        alias: None,
        flags: "write getkeys-api",
        doc: Doc {
            summary: "Runs command only while owner holds the lock with token, in the same atomic step (a fenced write); otherwise FENCED and nothing runs. The command's keys are declared, run with the caller's ACL and the OOM rule, and replicated as on its own.",
            complexity: "O(1) plus the command's own",
            grammar: req::Guard::GRAMMAR,
            since: "0.3.0",
        },
    },
    Command {
        name: req::Info::NAME,
        func: command_fn!(lock_info::info),
        alias: None,
        flags: "readonly fast",
        doc: Doc {
            summary: "Owner, token, ttl_ms, holds and waiters of a lock; nil when it is free.",
            complexity: "O(1)",
            grammar: req::Info::GRAMMAR,
            since: "0.1.0",
        },
    },
    Command {
        name: req::SetStates::NAME,
        func: command_fn!(lock::set_states),
        alias: None,
        flags: "write deny-oom",
        doc: Doc {
            summary: "Internal: sets the holders of a shared or limited lock (limit:floor:expiry, then owner records with absolute deadlines) for replication and AOF.",
            complexity: "O(N) where N is the number of holders",
            grammar: req::SetStates::GRAMMAR,
            since: "0.3.0",
        },
    },
    Command {
        name: req::SetState::NAME,
        func: command_fn!(lock::set_state),
        alias: None,
        flags: "write deny-oom",
        doc: Doc {
            summary: "Internal: sets a lock's state with an absolute deadline (replication and AOF).",
            complexity: "O(1)",
            grammar: req::SetState::GRAMMAR,
            since: "0.1.0",
        },
    },
    Command {
        name: fence::Fence::NAME,
        func: command_fn!(fence::set_floor),
        alias: None,
        flags: "write",
        doc: Doc {
            summary: "Internal: raises the fencing-token floor to that of a master's failover epoch (replication and AOF). Takes no key.",
            complexity: "O(1)",
            grammar: fence::Fence::GRAMMAR,
            since: "0.3.0",
        },
    },
];
