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

/// The glibc tunables (glibc 2.35 on; older versions and other C libraries ignore them) that
/// put `malloc`'s heap on transparent huge pages:
/// - `hugetlb=1`: `malloc` asks the kernel for them (`madvise(MADV_HUGEPAGE)`) on the memory
///   it takes from the system, and grows its heap in whole huge pages. Where the system's
///   setting is `madvise`, the common default, the heap is otherwise on 4 KiB pages: with
///   thousands of flows, whose state is touched a few times per round trip each, most of
///   those touches then also miss the processor's address translation cache.
/// - `top_pad` of 64 MiB: the heap grows by at least that much at a time (address space, not
///   memory: a page is resident once touched). With the default 128 KiB, the heap's top
///   shrinks and grows again as blocks are freed and taken, and every growth clears a fresh
///   2 MiB page: building a million flows took 3 s more system time than without huge pages.
///
/// Measured with `ecnlab-run` (loop CPU, medians of 7 alternating runs, against both off):
/// 10,000 flows 0.70, 1000 flows 0.87, for 6 % and 2 % more peak memory; a million flows 0.83
/// of the loop and 0.85 of the whole process's wall time; runs of a few dozen flows (red100,
/// HFCC's dumbbell and chain) unchanged. They change where memory is, never what is computed.
pub const HUGE_PAGE_TUNABLES: [&str; 2] =
    ["glibc.malloc.hugetlb=1", "glibc.malloc.top_pad=67108864"];

/// The variable glibc reads its tunables from, once, when a process starts.
pub const TUNABLES_VAR: &str = "GLIBC_TUNABLES";

/// `GLIBC_TUNABLES` with [`HUGE_PAGE_TUNABLES`] added to `current` (its value now, if set),
/// each unless `current` sets it already; `None` when `current` sets `glibc.malloc.hugetlb`:
/// a value the user chose stands.
pub fn tunables_with_huge_pages(current: Option<&str>) -> Option<String> {
    let current = current.unwrap_or("");
    let name = |t: &str| t.split('=').next().unwrap_or("").to_string();
    let names: Vec<String> = current.split(':').map(name).collect();
    if names.contains(&name(HUGE_PAGE_TUNABLES[0])) {
        return None;
    }
    let mut out: Vec<&str> = current.split(':').filter(|t| !t.is_empty()).collect();
    for t in HUGE_PAGE_TUNABLES {
        if !names.contains(&name(t)) {
            out.push(t);
        }
    }
    Some(out.join(":"))
}

/// Starts this program again, with the same arguments, with [`HUGE_PAGE_TUNABLES`] in its
/// environment, unless they are there already (glibc reads them only when a process starts).
/// Returns only when nothing is to be done or the new start failed; the program then runs
/// as it is, on the pages it has.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub fn restart_with_huge_page_heap() {
    use std::os::unix::process::CommandExt;
    // A value that is not UTF-8 is the user's, and left alone.
    let current = match std::env::var(TUNABLES_VAR) {
        Ok(v) => Some(v),
        Err(std::env::VarError::NotPresent) => None,
        Err(std::env::VarError::NotUnicode(_)) => return,
    };
    let Some(tunables) = tunables_with_huge_pages(current.as_deref()) else {
        return;
    };
    let Ok(exe) = std::env::current_exe() else {
        return;
    };
    let mut args = std::env::args_os();
    let mut cmd = std::process::Command::new(exe);
    if let Some(arg0) = args.next() {
        cmd.arg0(arg0);
    }
    let _failed = cmd.args(args).env(TUNABLES_VAR, tunables).exec();
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub fn restart_with_huge_page_heap() {}

/// While a value of this lives, memory the process touches for the first time is on small
/// pages (Linux's `PR_SET_THP_DISABLE`; what is on huge pages stays there). A run's end frees
/// its connections and hands their pages back ([`return_free_memory`]) while it builds its
/// tables in their place: on huge pages every such reuse would clear a fresh 2 MiB page, and
/// with a million flows the end of the run took 3-4 s more system time than the whole run
/// saved. Sections may overlap (runs on several threads): the first to begin sets the flag,
/// the last to end puts back what it found.
pub struct SmallPagesOnly(());

#[cfg(target_os = "linux")]
static SMALL_PAGE_SECTIONS: std::sync::Mutex<(usize, std::ffi::c_int)> =
    std::sync::Mutex::new((0, 0));

impl SmallPagesOnly {
    pub fn begin() -> Self {
        #[cfg(target_os = "linux")]
        {
            let mut s = SMALL_PAGE_SECTIONS
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            if s.0 == 0 {
                // SAFETY: these prctl calls read and set one flag of the process; they take
                // no pointers.
                s.1 = unsafe { libc::prctl(libc::PR_GET_THP_DISABLE, 0, 0, 0, 0) }.max(0);
                unsafe { libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0) };
            }
            s.0 += 1;
        }
        SmallPagesOnly(())
    }
}

impl Drop for SmallPagesOnly {
    fn drop(&mut self) {
        #[cfg(target_os = "linux")]
        {
            let mut s = SMALL_PAGE_SECTIONS
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            s.0 -= 1;
            if s.0 == 0 {
                // SAFETY: as in `begin`.
                unsafe { libc::prctl(libc::PR_SET_THP_DISABLE, s.1, 0, 0, 0) };
            }
        }
    }
}

/// Memory of the process backed by transparent huge pages (`AnonHugePages`, KiB), on Linux.
pub fn huge_pages_kb() -> Option<u64> {
    let rollup = std::fs::read_to_string("/proc/self/smaps_rollup").ok()?;
    let line = rollup.lines().find(|l| l.starts_with("AnonHugePages:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_huge_page_tunables_are_added_unless_one_is_chosen() {
        let both = "glibc.malloc.hugetlb=1:glibc.malloc.top_pad=67108864";
        assert_eq!(tunables_with_huge_pages(None).as_deref(), Some(both));
        assert_eq!(tunables_with_huge_pages(Some("")).as_deref(), Some(both));
        assert_eq!(
            tunables_with_huge_pages(Some("glibc.malloc.arena_max=2")).as_deref(),
            Some("glibc.malloc.arena_max=2:glibc.malloc.hugetlb=1:glibc.malloc.top_pad=67108864")
        );
        // The user's own pad stands.
        assert_eq!(
            tunables_with_huge_pages(Some("glibc.malloc.top_pad=0")).as_deref(),
            Some("glibc.malloc.top_pad=0:glibc.malloc.hugetlb=1")
        );
        assert_eq!(
            tunables_with_huge_pages(Some("glibc.malloc.hugetlb=0")),
            None
        );
        assert_eq!(
            tunables_with_huge_pages(Some("a=1:glibc.malloc.hugetlb=2")),
            None
        );
        // A name that only starts like it is another tunable.
        assert!(tunables_with_huge_pages(Some("glibc.malloc.hugetlbx=0")).is_some());
    }
}
