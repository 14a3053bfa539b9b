//! Redis Cluster facts a module needs without a slot API on Redis 7.0: the
//! hash slot of a key, and who serves a slot according to `CLUSTER NODES`.

/// Number of hash slots.
pub const SLOTS: u16 = 16384;

/// CRC16/XMODEM, the checksum Redis Cluster hashes keys with.
fn crc16(data: &[u8]) -> u16 {
    let mut crc: u16 = 0;
    for &b in data {
        crc ^= u16::from(b) << 8;
        for _ in 0..8 {
            crc = if crc & 0x8000 != 0 {
                (crc << 1) ^ 0x1021
            } else {
                crc << 1
            };
        }
    }
    crc
}

/// The hash slot of a key, honoring `{hash tags}` as Redis does.
pub fn key_slot(key: &[u8]) -> u16 {
    let tagged = key.iter().position(|b| *b == b'{').and_then(|open| {
        let rest = &key[open + 1..];
        let close = rest.iter().position(|b| *b == b'}')?;
        (close > 0).then(|| &rest[..close])
    });
    crc16(tagged.unwrap_or(key)) % SLOTS
}

/// Who serves a slot, from this node's point of view.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SlotOwner {
    /// This node serves it (and is not migrating it away).
    Me,
    /// Another node serves it: `ip:port`.
    Elsewhere(String),
    /// This node is migrating it to `ip:port` (keys already moved live there).
    Migrating(String),
    /// Nobody known (slot unassigned, or the text could not be read).
    Unknown,
}

/// Columns of a `CLUSTER NODES` line: node id, address (`ip:port@bus`),
/// flags (`myself,master`, …); slot ranges start at `SLOTS_COLUMN`.
const ID_COLUMN: usize = 0;
const ADDRESS_COLUMN: usize = 1;
const FLAGS_COLUMN: usize = 2;
const SLOTS_COLUMN: usize = 8;

/// Reads `CLUSTER NODES` output for the owner of `slot`.
pub fn slot_owner(nodes: &str, slot: u16) -> SlotOwner {
    let mut mine = false;
    let mut owner: Option<String> = None;
    let mut migrating_to: Option<String> = None;
    let address_of = |id: &str| {
        nodes.lines().find_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.get(ID_COLUMN) == Some(&id)).then(|| {
                f.get(ADDRESS_COLUMN)
                    .map(|a| a.split('@').next().unwrap_or(a).to_string())
            })?
        })
    };
    for line in nodes.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.len() < SLOTS_COLUMN {
            continue;
        }
        let myself = fields[FLAGS_COLUMN].split(',').any(|f| f == "myself");
        for range in &fields[SLOTS_COLUMN..] {
            if let Some(inner) = range.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
                // "[slot->-target]" on the source while it migrates the slot away.
                if let Some((s, target)) = inner.split_once("->-") {
                    if myself && s.parse::<u16>() == Ok(slot) {
                        migrating_to = address_of(target);
                    }
                }
                continue;
            }
            let (lo, hi) = match range.split_once('-') {
                Some((a, b)) => (a.parse::<u16>(), b.parse::<u16>()),
                None => (range.parse::<u16>(), range.parse::<u16>()),
            };
            if let (Ok(lo), Ok(hi)) = (lo, hi) {
                if (lo..=hi).contains(&slot) {
                    if myself {
                        mine = true;
                    } else {
                        owner = fields
                            .get(1)
                            .map(|a| a.split('@').next().unwrap_or(a).to_string());
                    }
                }
            }
        }
    }
    match (mine, migrating_to, owner) {
        (true, None, _) => SlotOwner::Me,
        (true, Some(target), _) => SlotOwner::Migrating(target),
        (false, _, Some(addr)) => SlotOwner::Elsewhere(addr),
        _ => SlotOwner::Unknown,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_match_redis() {
        // Values from CLUSTER KEYSLOT.
        assert_eq!(key_slot(b"foo"), 12182);
        assert_eq!(key_slot(b"bar"), 5061);
        assert_eq!(key_slot(b"{user1000}.following"), key_slot(b"user1000"));
        assert_eq!(key_slot(b"foo{}{bar}"), key_slot(b"foo{}{bar}"));
        assert_eq!(
            key_slot(b"foo{}{bar}"),
            crc16(b"foo{}{bar}") % SLOTS,
            "empty tag: whole key"
        );
        assert_eq!(key_slot(b""), 0);
    }

    const NODES: &str = "\
07c37dfeb235213a872192d90877d0cd55635b91 127.0.0.1:30004@40004 slave e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca 0 1426238317239 4 connected
67ed2db8d677e59ec4a4cefb06858cf2a1a89fa1 127.0.0.1:30002@40002 master - 0 1426238316232 2 connected 5461-10922
292f8b365bb7edb5e285caf0b7e6ddc7265d2f4f 127.0.0.1:30003@40003 master - 0 1426238318243 3 connected 10923-16383
e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca 127.0.0.1:30001@40001 myself,master - 0 0 1 connected 0-5460 [100->-67ed2db8d677e59ec4a4cefb06858cf2a1a89fa1]
";

    #[test]
    fn reads_owners_from_cluster_nodes() {
        assert_eq!(slot_owner(NODES, 0), SlotOwner::Me);
        assert_eq!(slot_owner(NODES, 5460), SlotOwner::Me);
        assert_eq!(
            slot_owner(NODES, 5461),
            SlotOwner::Elsewhere("127.0.0.1:30002".into())
        );
        assert_eq!(
            slot_owner(NODES, 16383),
            SlotOwner::Elsewhere("127.0.0.1:30003".into())
        );
        assert_eq!(
            slot_owner(NODES, 100),
            SlotOwner::Migrating("127.0.0.1:30002".into())
        );
        assert_eq!(slot_owner("garbage", 1), SlotOwner::Unknown);
    }
}
