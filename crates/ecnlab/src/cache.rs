//! Cache hints for the per-packet path. A packet, its place in a queue and its place in a
//! pipe are touched again only after a queueing or a propagation delay, long enough for them
//! to leave the processor's caches; where the next one to be touched is known in advance, it
//! is fetched ahead, and the run no longer stalls on it. A hint changes no state.

/// Asks the processor to bring the `bytes` bytes from `p` into its cache (a line at a time).
/// Any address will do: a prefetch never faults.
#[inline(always)]
pub fn prefetch<T>(p: *const T, bytes: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let first = p.cast::<i8>();
        let mut off = 0;
        while off < bytes {
            // SAFETY: SSE is part of every x86_64 target, and a prefetch reads nothing the
            // program sees and never faults, whatever the address.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(first.wrapping_add(off)) };
            off += 64;
        }
        // The last line, when the range straddles one more line than its length fills.
        if bytes > 0 {
            // SAFETY: as above.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(first.wrapping_add(bytes - 1)) };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (p, bytes);
}
