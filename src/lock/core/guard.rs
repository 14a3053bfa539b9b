//! Which commands `DLOCK.GUARD` runs, decided from the flags `COMMAND INFO`
//! gives them: a guarded command runs inside another command, so it must not
//! block, administer the server, open a transaction, subscription or script,
//! or be a module's internal command. It must also name a key: a command
//! without one (`FLUSHALL`, `SWAPDB`, `KEYS`, `PUBLISH`) reaches the whole
//! database or server, past the lock's slot, which no fence can cover.
//!
//! Scripts (`EVAL`, `FCALL`, flagged `noscript`) are refused too: run from a
//! module they crash the server when the module itself was called from a
//! script (an assertion that no script is running), and a guarded script that
//! outlives `busy-reply-threshold` leaves the calling client unprotected, so
//! its disconnect frees it under the running command.

/// Commands that publish to a shard channel, which the server does not
/// declare as a key of the command: a guarded one could reach a channel of
/// another slot.
const SHARD_CHANNEL_COMMANDS: &[&[u8]] = &[b"spublish"];

/// Why the command `name` (lower case; `container|sub` for a subcommand) with
/// the `COMMAND INFO` flags `flags` and first key position `first_key` (0:
/// none, unless its keys move) cannot run guarded; `None` when it can.
pub fn refusal<'a>(
    name: &[u8],
    flags: impl IntoIterator<Item = &'a [u8]>,
    first_key: i64,
) -> Option<&'static str> {
    let last = name.rsplit(|&b| b == b'|').next().unwrap_or(name);
    if last.windows(2).any(|w| w == b"._") {
        return Some("it is a module's internal command");
    }
    if SHARD_CHANNEL_COMMANDS.contains(&name) {
        return Some("its shard channel is not declared as a key");
    }
    let (mut blocking, mut admin, mut nested, mut movable) = (false, false, false, false);
    for flag in flags {
        match flag {
            b"blocking" => blocking = true,
            b"admin" => admin = true,
            b"noscript" | b"no_multi" => nested = true,
            b"movablekeys" => movable = true,
            _ => {}
        }
    }
    if blocking {
        Some("it can block")
    } else if admin {
        Some("it is an administrative command")
    } else if nested {
        Some("it cannot run inside another command")
    } else if first_key == 0 && !movable {
        Some("it names no key")
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The verdict on a command whose first key is argument 1.
    fn verdict(name: &str, flags: &[&str]) -> Option<&'static str> {
        keyed_at(name, flags, 1)
    }

    fn keyed_at(name: &str, flags: &[&str], first_key: i64) -> Option<&'static str> {
        refusal(
            name.as_bytes(),
            flags.iter().map(|f| f.as_bytes()),
            first_key,
        )
    }

    #[test]
    fn plain_reads_and_writes_run() {
        assert_eq!(verdict("incr", &["write", "denyoom", "fast"]), None);
        assert_eq!(verdict("get", &["readonly", "fast"]), None);
        assert_eq!(verdict("object|encoding", &["readonly"]), None);
        // LMPOP numkeys key … LEFT: its keys move, so its first key is 0.
        assert_eq!(keyed_at("lmpop", &["write", "movablekeys"], 0), None);
        assert_eq!(verdict("mod.write", &["write", "denyoom", "module"]), None);
        assert_eq!(verdict("dlock.release", &["write", "module"]), None);
    }

    #[test]
    fn blocking_admin_and_transaction_commands_are_refused() {
        assert_eq!(
            verdict("blpop", &["write", "noscript", "blocking"]),
            Some("it can block")
        );
        assert_eq!(
            verdict("config|set", &["admin", "noscript", "loading"]),
            Some("it is an administrative command")
        );
        for name in ["multi", "exec", "watch", "subscribe"] {
            assert_eq!(
                verdict(name, &["noscript", "loading", "stale"]),
                Some("it cannot run inside another command"),
                "{name}"
            );
        }
        assert!(verdict("dlock.acquire", &["write", "denyoom", "blocking", "module"]).is_some());
    }

    #[test]
    fn scripts_shard_channels_and_internal_commands_are_refused() {
        for name in ["eval", "evalsha", "fcall", "fcall_ro"] {
            assert_eq!(
                verdict(name, &["noscript", "skip_monitor", "may_replicate"]),
                Some("it cannot run inside another command"),
                "{name}"
            );
        }
        assert!(verdict("spublish", &["pubsub", "loading", "stale", "fast"]).is_some());
        for name in ["dlock._set", "mod._set", "other._loadx"] {
            assert_eq!(
                verdict(name, &["write", "denyoom", "module"]),
                Some("it is a module's internal command"),
                "{name}"
            );
        }
    }

    #[test]
    fn commands_that_name_no_key_are_refused() {
        for (name, flags) in [
            ("flushall", &["write"][..]),
            ("flushdb", &["write"]),
            ("swapdb", &["write", "fast"]),
            ("keys", &["readonly"]),
            ("scan", &["readonly"]),
            ("randomkey", &["readonly"]),
            ("dbsize", &["readonly", "fast"]),
            ("publish", &["pubsub", "loading", "stale", "fast"]),
            ("ping", &["fast"]),
        ] {
            assert_eq!(keyed_at(name, flags, 0), Some("it names no key"), "{name}");
        }
    }
}
