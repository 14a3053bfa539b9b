//! The TCP liveness options of a client connection's socket: how soon the
//! kernel gives up on a peer that stopped answering (keepalive probes, and
//! `TCP_USER_TIMEOUT` for data left unacknowledged). A connection whose
//! host vanishes sends no FIN and no RST; only these options end it, and the
//! server frees the client once the kernel reports the error.

use std::ffi::{c_int, c_uint, c_void};

use crate::glue::host::{api, CallReply, Ctx};

/// A socket's liveness options, as read before they are changed (to be put
/// back) or as they are to be set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TcpLiveness {
    /// `SO_KEEPALIVE`: 0 or 1.
    pub keepalive: c_int,
    /// `TCP_KEEPIDLE`: seconds of silence before the first probe.
    pub idle_s: c_int,
    /// `TCP_KEEPINTVL`: seconds between probes.
    pub interval_s: c_int,
    /// `TCP_KEEPCNT`: unanswered probes before giving up (without a user
    /// timeout).
    pub probes: c_int,
    /// `TCP_USER_TIMEOUT`: ms data (or a probe) may stay unacknowledged
    /// before the connection is given up; 0 for the kernel's default.
    pub user_timeout_ms: c_uint,
}

/// The socket of client connection `id` (`CLIENT LIST ID`'s `fd`), if it
/// has one: not for a script's or a module's client.
pub fn client_socket(ctx: Ctx, id: u64) -> Option<c_int> {
    let id = id as std::ffi::c_longlong;
    // SAFETY: `ctx` is live; the `ccl` format takes two C strings and an
    // integer, all readable during the call.
    let reply = unsafe {
        api!(RedisModule_Call)(
            ctx.as_ptr(),
            c"CLIENT".as_ptr(),
            c"ccl".as_ptr(),
            c"LIST".as_ptr(),
            c"ID".as_ptr(),
            id,
        )
    };
    let reply = CallReply::from_raw(reply)?;
    let line = reply.node().bytes();
    let fd = line
        .split(|b| *b == b' ')
        .find_map(|field| field.strip_prefix(b"fd="))?;
    std::str::from_utf8(fd)
        .ok()?
        .parse()
        .ok()
        .filter(|fd| *fd >= 0)
}

/// Reads the liveness options of socket `fd`; `None` when it is not a TCP
/// socket (a Unix socket's peer cannot vanish apart from this host).
pub fn read_liveness(fd: c_int) -> Option<TcpLiveness> {
    Some(TcpLiveness {
        keepalive: get(fd, libc::SOL_SOCKET, libc::SO_KEEPALIVE)?,
        idle_s: get(fd, libc::IPPROTO_TCP, libc::TCP_KEEPIDLE)?,
        interval_s: get(fd, libc::IPPROTO_TCP, libc::TCP_KEEPINTVL)?,
        probes: get(fd, libc::IPPROTO_TCP, libc::TCP_KEEPCNT)?,
        user_timeout_ms: get(fd, libc::IPPROTO_TCP, libc::TCP_USER_TIMEOUT)?,
    })
}

/// Sets the liveness options of socket `fd`; false if any was refused.
pub fn set_liveness(fd: c_int, to: &TcpLiveness) -> bool {
    set(fd, libc::SOL_SOCKET, libc::SO_KEEPALIVE, to.keepalive)
        & set(fd, libc::IPPROTO_TCP, libc::TCP_KEEPIDLE, to.idle_s)
        & set(fd, libc::IPPROTO_TCP, libc::TCP_KEEPINTVL, to.interval_s)
        & set(fd, libc::IPPROTO_TCP, libc::TCP_KEEPCNT, to.probes)
        & set(
            fd,
            libc::IPPROTO_TCP,
            libc::TCP_USER_TIMEOUT,
            to.user_timeout_ms,
        )
}

/// One integer socket option.
fn get<T: Copy + Default>(fd: c_int, level: c_int, name: c_int) -> Option<T> {
    let mut value = T::default();
    let mut len = std::mem::size_of::<T>() as libc::socklen_t;
    // SAFETY: `value` is a live integer of `len` bytes the kernel writes into.
    let rc = unsafe {
        libc::getsockopt(
            fd,
            level,
            name,
            (&mut value as *mut T).cast::<c_void>(),
            &mut len,
        )
    };
    (rc == 0).then_some(value)
}

/// Sets one integer socket option; false if the kernel refused it.
fn set<T: Copy>(fd: c_int, level: c_int, name: c_int, value: T) -> bool {
    let len = std::mem::size_of::<T>() as libc::socklen_t;
    // SAFETY: `value` is a live integer of `len` bytes the kernel reads.
    let rc =
        unsafe { libc::setsockopt(fd, level, name, (&value as *const T).cast::<c_void>(), len) };
    rc == 0
}
