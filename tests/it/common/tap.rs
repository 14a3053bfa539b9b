//! The replication stream as tests read it: a raw replication link to a master
//! (`ReplicationTap`) and commands in RESP for bare sockets.

use super::*;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// A raw replication link to a master: reads the commands it propagates.
pub struct ReplicationTap {
    reader: BufReader<TcpStream>,
}

impl ReplicationTap {
    pub(super) fn connect(port: u16) -> ReplicationTap {
        let mut s = TcpStream::connect(("127.0.0.1", port)).expect("connect tap");
        s.set_read_timeout(Some(Duration::from_secs(10)))
            .expect("timeout");
        s.write_all(b"*1\r\n$4\r\nSYNC\r\n").expect("send SYNC");
        let mut reader = BufReader::new(s);
        // Skip newlines the master sends while preparing the RDB, then read the payload.
        let mut line = String::new();
        loop {
            line.clear();
            reader.read_line(&mut line).expect("read sync header");
            if line.starts_with('$') {
                break;
            }
        }
        let header = line.trim_end();
        if let Some(mark) = header.strip_prefix("$EOF:") {
            let mark = mark.as_bytes().to_vec();
            let mut tail: Vec<u8> = Vec::new();
            let mut byte = [0u8; 1];
            while !tail.ends_with(&mark) {
                reader.read_exact(&mut byte).expect("read rdb");
                tail.push(byte[0]);
                if tail.len() > 4096 {
                    tail.drain(..2048);
                }
            }
        } else {
            let len: usize = header[1..].parse().expect("rdb length");
            let mut buf = vec![0u8; len];
            reader.read_exact(&mut buf).expect("read rdb");
        }
        ReplicationTap { reader }
    }

    /// Next propagated command, skipping PING and SELECT; None on timeout.
    pub fn next_command(&mut self, timeout: Duration) -> Option<Vec<String>> {
        self.reader.get_mut().set_read_timeout(Some(timeout)).ok()?;
        loop {
            let cmd = self.read_command()?;
            let name = cmd[0].to_ascii_uppercase();
            if name == "PING" || name == "SELECT" || name == "REPLCONF" {
                continue;
            }
            return Some(cmd);
        }
    }

    /// Every command propagated within `window` (MULTI/EXEC included).
    pub fn drain(&mut self, window: Duration) -> Vec<Vec<String>> {
        let mut out = Vec::new();
        let deadline = Instant::now() + window;
        while let Some(left) = deadline.checked_duration_since(Instant::now()) {
            match self.next_command(left.max(Duration::from_millis(1))) {
                Some(c) => out.push(c),
                None => break,
            }
        }
        out
    }

    /// Every command propagated before `SET key value` (MULTI/EXEC included), each
    /// waited for up to 10 s; fails if that `SET` never comes.
    pub fn until_set(&mut self, key: &str, value: &str) -> Vec<Vec<String>> {
        let mut out = Vec::new();
        loop {
            let c = self
                .next_command(Duration::from_secs(10))
                .unwrap_or_else(|| {
                    panic!("SET {key} {value} never reached the stream; before it: {out:?}")
                });
            if c.len() == 3 && c[0].eq_ignore_ascii_case("SET") && c[1] == key && c[2] == value {
                return out;
            }
            out.push(c);
        }
    }

    /// Writes the marker `SET key label` on `con` (a connection to the tapped master)
    /// and returns every command propagated before it (MULTI/EXEC included).
    pub fn until_marker(
        &mut self,
        con: &mut Connection,
        key: &str,
        label: &str,
    ) -> Vec<Vec<String>> {
        let _: () = query!(con, "SET", key, label);
        self.until_set(key, label)
    }

    fn read_command(&mut self) -> Option<Vec<String>> {
        let mut line = String::new();
        loop {
            line.clear();
            self.reader.read_line(&mut line).ok()?;
            if line.is_empty() {
                return None;
            }
            if line.trim().is_empty() {
                continue;
            }
            break;
        }
        let n: usize = line.trim_end().strip_prefix('*')?.parse().ok()?;
        let mut parts = Vec::with_capacity(n);
        for _ in 0..n {
            line.clear();
            self.reader.read_line(&mut line).ok()?;
            let len: usize = line.trim_end().strip_prefix('$')?.parse().ok()?;
            let mut buf = vec![0u8; len + 2];
            self.reader.read_exact(&mut buf).ok()?;
            buf.truncate(len);
            parts.push(String::from_utf8_lossy(&buf).into_owned());
        }
        Some(parts)
    }
}
/// Appends one command in RESP (an array of bulk strings) to `buf`.
pub fn pack(buf: &mut Vec<u8>, args: &[&[u8]]) {
    buf.extend_from_slice(format!("*{}\r\n", args.len()).as_bytes());
    for a in args {
        buf.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
        buf.extend_from_slice(a);
        buf.extend_from_slice(b"\r\n");
    }
}

/// One command in RESP, for a bare socket.
pub fn resp(args: &[&str]) -> Vec<u8> {
    let args: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
    let mut out = Vec::new();
    pack(&mut out, &args);
    out
}

/// Whether a propagated command is a transaction's MULTI or EXEC.
pub fn is_multi_exec(c: &[String]) -> bool {
    c[0].eq_ignore_ascii_case("MULTI") || c[0].eq_ignore_ascii_case("EXEC")
}

/// Propagated commands without MULTI/EXEC.
pub fn without_multi_exec(cmds: Vec<Vec<String>>) -> Vec<Vec<String>> {
    cmds.into_iter().filter(|c| !is_multi_exec(c)).collect()
}
