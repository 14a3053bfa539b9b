//! What a client blocked in `DLOCK.ACQUIRE … WAIT` costs, measured as
//! `used_memory` over a few hundred waiters against clients blocked in BLPOP.
//! Redis's `RedisModule_BlockClient` takes two temporary clients per blocked
//! client; what is left is warden's own share, which must stay under 2 KB.

use crate::common::*;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

const CLIENTS: usize = 300;

/// `used_memory` growth per client when each of `CLIENTS` connected clients
/// sends `command(i)` and blocks (the connections exist before the baseline).
fn per_blocked_client(
    server: &Server,
    con: &mut Connection,
    command: impl Fn(usize) -> Vec<u8>,
) -> f64 {
    let mut socks: Vec<TcpStream> = (0..CLIENTS)
        .map(|_| TcpStream::connect(("127.0.0.1", server.port)).expect("connect"))
        .collect();
    for s in &mut socks {
        s.write_all(&resp(&["PING"])).expect("ping");
    }
    // Every client's PONG read: the server has accepted and served each one
    // (on a loaded machine it may accept them long after they connect).
    for s in &mut socks {
        s.set_read_timeout(Some(Duration::from_secs(10)))
            .expect("timeout");
        let mut pong = [0u8; 7];
        s.read_exact(&mut pong).expect("PONG");
        assert_eq!(&pong, b"+PONG\r\n");
    }
    std::thread::sleep(Duration::from_millis(300));
    let before = used_memory(con);
    let blocked_before = info_field(con, "clients", "blocked_clients")
        .and_then(|v| v.parse::<usize>().ok())
        .unwrap_or(0);
    for (i, s) in socks.iter_mut().enumerate() {
        s.write_all(&command(i)).expect("send");
    }
    let all_blocked = wait_until(Duration::from_secs(10), || {
        info_field(con, "clients", "blocked_clients").and_then(|v| v.parse::<usize>().ok())
            == Some(blocked_before + CLIENTS)
    });
    assert!(all_blocked, "not every client blocked");
    std::thread::sleep(Duration::from_millis(200));
    let after = used_memory(con);
    drop(socks);
    let gone = wait_until(Duration::from_secs(10), || {
        info_field(con, "clients", "blocked_clients").and_then(|v| v.parse::<usize>().ok())
            == Some(blocked_before)
    });
    assert!(gone, "blocked clients did not go away on disconnect");
    (after - before) as f64 / CLIENTS as f64
}

/// The memory of one client object without its query buffer: what each of
/// Redis's temporary clients costs (struct plus reply buffer). The reply
/// buffer is counted at the 16 KiB a new client gets, not at the size the
/// server's cron has since shrunk this connection's to (`rbs`).
fn client_base(con: &mut Connection) -> f64 {
    let list: String = query!(con, "CLIENT", "INFO");
    let field = |name: &str| -> f64 {
        list.split_whitespace()
            .find_map(|kv| kv.strip_prefix(&format!("{name}=")))
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("{name} in {list}"))
    };
    let reply_buffer = if list.contains(" rbs=") {
        16_384.0 - field("rbs")
    } else {
        0.0
    };
    field("tot-mem") - field("qbuf") - field("qbuf-free") - field("argv-mem") + reply_buffer
}

/// `used_memory` per client blocked by `command(i)` on a fresh server (Redis
/// keeps released temporary clients for reuse, so a second round on the same
/// server would not pay for them), and the size of one client object there.
fn fresh_server_cost(command: impl Fn(usize) -> Vec<u8>) -> (f64, f64) {
    let (server, mut con) = Server::start_conn();
    let _: i64 = query!(&mut con, "DLOCK.ACQUIRE", "held", "holder", 600_000);
    let cost = per_blocked_client(&server, &mut con, command);
    assert_eq!(warden_stat(&mut con, "locks_waiting"), 0);
    (cost, client_base(&mut con))
}

/// warden's own share of a waiter (minus a BLPOP waiter, minus Redis's two
/// temporary clients) is under 2 KB, with a WAIT timeout (a timer each) and
/// without; and the waiters are gone, all of them, once they disconnect.
#[test]
fn a_waiter_costs_the_module_under_2_kb() {
    let (blpop, _) = fresh_server_cost(|_| resp(&["BLPOP", "nolist", "0"]));
    for wait in ["0", "500000"] {
        let (waiter, client) = fresh_server_cost(|i| {
            let owner = format!("waiter-{i:04}");
            resp(&["DLOCK.ACQUIRE", "held", &owner, "1000", "WAIT", wait])
        });
        let temp_clients = 2.0 * client;
        let module_share = waiter - blpop - temp_clients;
        eprintln!(
            "WAIT {wait}: waiter {waiter:.0} B, BLPOP {blpop:.0} B, two temporary clients \
             {temp_clients:.0} B: module share {module_share:.0} B"
        );
        assert!(
            module_share < 2048.0,
            "WAIT {wait}: a waiter costs the module {module_share:.0} B \
             (waiter {waiter:.0}, BLPOP {blpop:.0}, temporary clients {temp_clients:.0})"
        );
        assert!(
            module_share > -2048.0,
            "the estimate of Redis's share is off: {module_share:.0} B"
        );
    }
}
