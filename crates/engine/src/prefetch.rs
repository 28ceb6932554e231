//! A hint to the CPU to start loading a value's cache line before it is read.
//!
//! The event loop knows the next event before it handles the current one. On a large fabric
//! the state that next event reads (a packet's descriptor, the port it reaches) was last
//! touched microseconds of simulated time and thousands of events ago, so it is a cache miss:
//! on the 1024-host fat tree the descriptor read at each arrival was the most expensive line
//! of the whole run. Asking for those lines one event ahead overlaps their load with the
//! current event's work. A prefetch changes no result: it only moves a load earlier.

/// Starts loading the cache line that holds `*r` into every cache level. A no-op where there
/// is no prefetch instruction.
#[inline(always)]
pub fn prefetch<T>(r: &T) {
    #[cfg(target_arch = "x86_64")]
    {
        let p = (r as *const T).cast::<i8>();
        // SAFETY: PREFETCHT0 is a hint: it never faults, whatever the address, and has no
        // effect the program can observe except timing. SSE, which provides it, is part of the
        // x86-64 baseline.
        #[allow(unsafe_code)]
        unsafe {
            core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(p);
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = r;
}
