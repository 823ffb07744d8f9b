//! kix's allocator settings at run time: the one call into mimalloc that the `mimalloc` crate does not
//! wrap, and so the workspace's one `unsafe` (issue 20's lint row, docs/performance.md "Lint's memory,
//! fourth step").
//!
//! mimalloc gives freed memory back to the OS only after a delay (`purge_delay`, 1000 ms for its arenas in
//! v3: `options.c`), so that memory freed and soon allocated again costs no page faults. A lint parses
//! every document into a tree and drops it at once; with the delay, the pages of trees already freed are
//! still resident at the run's peak. The delay is read whenever a purge is scheduled (`arena.c`
//! `mi_arena_purge_delay`), so setting it after the allocator started takes effect for everything freed
//! from then on. mimalloc has no compile-time setting for it, and the environment
//! (`MIMALLOC_PURGE_DELAY`) is the user's, so kix sets it through `mi_option_set`.

// The library that defines `mi_option_set` (the `mimalloc` crate links the same one into the binary): named
// so that it is linked wherever this crate is, its tests included.
extern crate libmimalloc_sys as _;

/// mimalloc's `mi_option_purge_delay`: the 16th entry of `mi_option_t` in v3's `include/mimalloc.h`
/// (libmimalloc-sys 0.1.49 with mimalloc 0.1.52; `mi_option_use_numa_nodes`, the next, is 16 in its
/// bindings). The test reads it back through `mi_option_get`.
const PURGE_DELAY: i32 = 15;

/// From now on, memory the allocator frees goes back to the OS when it is freed, not after mimalloc's
/// purge delay: for `kix lint`, whose peak is what it holds plus what it freed but mimalloc had not yet
/// given back. Builds keep the delay (purging at once costs page faults when memory is reused).
#[allow(unsafe_code)]
pub fn free_at_once() {
    // Declared here, not with the crate's other items, so that the one `allow` covers all of it.
    unsafe extern "C" {
        /// `void mi_option_set(mi_option_t option, long value)` (`include/mimalloc.h`).
        fn mi_option_set(option: i32, value: std::ffi::c_long);
    }
    // SAFETY: `mi_option_set` takes an option by value and a long; it stores the value in mimalloc's
    // option table (an atomic store) and touches nothing of the caller's. `PURGE_DELAY` is a valid
    // `mi_option_t` (below `_mi_option_last`), and 0 is a valid purge delay ("use 0 for immediate
    // purging"). The function is linked from the same libmimalloc the binary allocates with.
    unsafe { mi_option_set(PURGE_DELAY, 0) }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The purge delay as mimalloc reads it.
    #[allow(unsafe_code)]
    fn purge_delay() -> std::ffi::c_long {
        unsafe extern "C" {
            /// `long mi_option_get(mi_option_t option)` (`include/mimalloc.h`).
            fn mi_option_get(option: i32) -> std::ffi::c_long;
        }
        // SAFETY: as in `free_at_once`: an option passed by value, its value read from mimalloc's table.
        unsafe { mi_option_get(PURGE_DELAY) }
    }

    /// The option set is the purge delay: the value read back through mimalloc is the one set, and the
    /// environment's `MIMALLOC_PURGE_DELAY` (which names the same option) is what it was before.
    #[test]
    fn sets_the_purge_delay() {
        let before = purge_delay();
        let expected_before = std::env::var("MIMALLOC_PURGE_DELAY").ok().and_then(|v| v.parse().ok()).unwrap_or(1000);
        assert_eq!(before, expected_before, "option {PURGE_DELAY} is not the purge delay (default 1000 ms)");
        free_at_once();
        assert_eq!(purge_delay(), 0);
    }
}
