//! The module's global allocator: Redis's allocator (so `INFO memory` and
//! `maxmemory` see every byte warden holds), with the two calls the
//! `redis-module` crate's `RedisAlloc` leaves to slow defaults:
//!
//! - `alloc_zeroed` goes to `RedisModule_Calloc`, so a new filter's bit
//!   array is not written at all: large zeroed allocations are fresh pages,
//!   resident only once a bit is set (and reads of untouched pages hit the
//!   shared zero page). The default allocates and then writes every byte.
//! - `realloc` goes to `RedisModule_Realloc` instead of allocate-copy-free.
//!
//! Alignment: jemalloc (Redis's allocator) aligns every allocation to at
//! least 16 bytes; larger alignments round the size up to a multiple of the
//! alignment as `RedisAlloc` does, and are never reallocated in place.

use std::alloc::{GlobalAlloc, Layout};
use std::ffi::c_void;

use redis_module::alloc::RedisAlloc;
use redis_module::raw;

/// Alignment every Redis allocation of a multiple of 16 bytes has.
pub const NATURAL_ALIGN: usize = 16;

/// `size` rounded up to a multiple of `align` (a power of two), as
/// `RedisAlloc` does: jemalloc aligns a block to its size class.
fn rounded(size: usize, align: usize) -> usize {
    (size + align - 1) & !(align - 1)
}

/// Redis's allocator, with zeroed allocation and reallocation done by Redis.
#[derive(Default, Debug, Copy, Clone)]
pub struct WardenAlloc;

// SAFETY: every path returns memory from Redis's allocator (or null on
// failure) with at least the layout's size and alignment, and frees it there.
unsafe impl GlobalAlloc for WardenAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract (a non-zero-sized layout) is passed on.
        unsafe { RedisAlloc.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the pointer is filled in once at module load and only read.
        match unsafe { raw::RedisModule_Calloc } {
            Some(calloc) if layout.align() <= NATURAL_ALIGN => {
                // SAFETY: Redis's calloc returns the rounded size in zeroed
                // bytes, aligned like `alloc`'s blocks.
                unsafe { calloc(1, rounded(layout.size(), layout.align())).cast() }
            }
            _ => {
                // SAFETY: as in `alloc`; then zero what was allocated.
                let p = unsafe { self.alloc(layout) };
                if !p.is_null() {
                    // SAFETY: `p` points to at least `layout.size()` writable bytes.
                    unsafe { p.write_bytes(0, layout.size()) };
                }
                p
            }
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from this allocator (all of whose paths use Redis's).
        unsafe { RedisAlloc.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the pointer is filled in once at module load and only read.
        match unsafe { raw::RedisModule_Realloc } {
            Some(realloc) if layout.align() <= NATURAL_ALIGN => {
                // SAFETY: `ptr` came from Redis's allocator; Redis keeps the
                // first min(old, new) bytes, in a block aligned like `alloc`'s.
                unsafe { realloc(ptr.cast::<c_void>(), rounded(new_size, layout.align())).cast() }
            }
            _ => {
                // SAFETY: the default path: allocate, copy, free, per the contract.
                let new_layout =
                    unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
                // SAFETY: as in `alloc`.
                let p = unsafe { self.alloc(new_layout) };
                if !p.is_null() {
                    // SAFETY: both blocks are valid for the smaller size and do not overlap.
                    unsafe { std::ptr::copy_nonoverlapping(ptr, p, layout.size().min(new_size)) };
                    // SAFETY: `ptr` came from this allocator with `layout`.
                    unsafe { self.dealloc(ptr, layout) };
                }
                p
            }
        }
    }
}
