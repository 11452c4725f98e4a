//! The process's memory as the system sees it.

/// Hands the allocator's free pages back to the system. glibc keeps freed small blocks in its
/// heap, where the large, fresh allocations of a run's results cannot use them: without this,
/// results built after the connections are freed would add to the process's peak.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub fn return_free_memory() {
    extern "C" {
        fn malloc_trim(pad: usize) -> std::ffi::c_int;
    }
    // SAFETY: malloc_trim only releases free memory of the allocator the process uses.
    unsafe {
        malloc_trim(0);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub fn return_free_memory() {}
