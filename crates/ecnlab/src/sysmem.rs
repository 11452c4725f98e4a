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

/// The global allocator of `ecnlab-run`: the system's (`malloc`), which, while a run builds
/// and runs its simulation
/// ([`RunHeap`]), marks the memory it takes from the kernel for transparent huge pages
/// (`madvise(MADV_HUGEPAGE)`). Where the system's setting is `madvise`, the common default,
/// the heap is otherwise on 4 KiB pages: with thousands of flows, whose state is touched a few
/// times per round trip each, most of those touches then also miss the processor's address
/// translation cache. It marks:
/// - the heap's growth: after each allocation it compares the heap's end (`sbrk(0)`, which
///   reads a variable of the C library) with the end it last saw, and marks what was added;
/// - blocks of 2 MiB or more, the whole pages they cover (all of a block `malloc` mapped
///   apart, so that the mapping stays one and can still grow in place).
///
/// The heap is the main thread's: threads of their own allocate from heaps of their own,
/// which it does not mark; there only blocks of 2 MiB or more are on huge pages. The Python
/// module does not use it: a run on one thread then stalled the interpreter's main thread for
/// 0.13-0.25 s (the test that runs release the GIL failed in 3 of 4 tries), so runs from
/// Python (`run`, `sweep`, `reproduce`) keep the plain allocator. A heap's growth missed (it
/// shrank and grew again between two allocations) stays on small pages: slower, never
/// different.
///
/// glibc 2.35's own tunable for this (`glibc.malloc.hugetlb=1`) was tried first: glibc 2.36
/// reads the system's setting into a buffer it compares without ending it, and took the
/// setting for unsupported in about half of the runs here.
///
/// Measured with `ecnlab-run` against the plain allocator (loop CPU, medians of 7-11
/// alternating runs): 10,000 flows 0.70 (whole process 0.80), 1000 flows 0.87, dt1g 0.98,
/// red100 1.01, for 7 % and 2 % more peak memory at 10,000 and 1000 flows and 1-5 MB more on
/// small runs (whole huge pages). A million flows: loop 0.79-0.92, but the whole process took
/// 9-22 % longer here, in system time spent clearing fresh huge pages (this machine is a
/// virtual one, whose host backs memory when first touched). It changes where memory is,
/// never what is computed. Elsewhere than Linux with glibc it is the system's allocator
/// unchanged.
pub struct HugePageHeap;

/// Blocks from this size on are marked (the size of a huge page on x86-64 and arm64 with
/// 4 KiB pages; a smaller block would not hold one).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const HUGE_PAGE: usize = 2 << 20;

/// The heap's end when the allocator last looked (0 before it first did).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
static HEAP_END_SEEN: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// [`HugePageHeap`] has handed out memory: it is the program's allocator.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
static IN_USE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Open [`RunHeap`] sections, and whether the first set the pad (false: the user's stands).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
static RUN_HEAPS: std::sync::Mutex<(usize, bool)> = std::sync::Mutex::new((0, false));

/// Whether [`HugePageHeap`] marks what it takes (a [`RunHeap`] section is open).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
static MARKING: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

impl HugePageHeap {
    #[inline]
    fn advise(p: *mut u8, size: usize) {
        #[cfg(all(target_os = "linux", target_env = "gnu"))]
        {
            use std::sync::atomic::Ordering::Relaxed;
            if !IN_USE.load(Relaxed) {
                IN_USE.store(true, Relaxed);
            }
            if !MARKING.load(Relaxed) || p.is_null() {
                return;
            }
            let page = page_size();
            if size >= HUGE_PAGE {
                let start = p as usize & !(page - 1);
                let end = (p as usize + size).next_multiple_of(page);
                // SAFETY: MADV_HUGEPAGE changes no byte of memory and only asks for a kind
                // of page; the pages are the block's, just handed out.
                unsafe { libc::madvise(start as *mut _, end - start, libc::MADV_HUGEPAGE) };
            }
            // SAFETY: sbrk(0) returns the current break and changes nothing.
            let end = unsafe { libc::sbrk(0) } as usize;
            let seen = HEAP_END_SEEN.load(Relaxed);
            if end == seen {
                return;
            }
            HEAP_END_SEEN.store(end, Relaxed);
            // The heap grew since: mark what it gained (threads racing here mark a range
            // twice, or one no longer mapped, at worst). When it shrank, what it gains again
            // is marked then.
            if seen != 0 && end > seen {
                let start = seen & !(page - 1);
                // SAFETY: as above; a range partly unmapped is refused, nothing else.
                unsafe { libc::madvise(start as *mut _, end - start, libc::MADV_HUGEPAGE) };
            }
        }
        #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
        let _ = (p, size);
    }
}

/// The system's page size, read at the first call (a run's section reads it at every
/// allocation; threads racing on the first call each ask the system, for the same answer).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn page_size() -> usize {
    use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
    static PAGE: AtomicUsize = AtomicUsize::new(0);
    match PAGE.load(Relaxed) {
        0 => {
            // SAFETY: sysconf reads a constant of the system.
            let page = (unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).max(4096) as usize;
            PAGE.store(page, Relaxed);
            page
        }
        page => page,
    }
}

// SAFETY: every call is the system allocator's, with the same arguments; `advise` only marks
// memory the allocator has just handed out or added to its heap, and changes no byte of it.
unsafe impl std::alloc::GlobalAlloc for HugePageHeap {
    unsafe fn alloc(&self, l: std::alloc::Layout) -> *mut u8 {
        let p = unsafe { std::alloc::System.alloc(l) };
        Self::advise(p, l.size());
        p
    }

    unsafe fn alloc_zeroed(&self, l: std::alloc::Layout) -> *mut u8 {
        let p = unsafe { std::alloc::System.alloc_zeroed(l) };
        Self::advise(p, l.size());
        p
    }

    unsafe fn dealloc(&self, p: *mut u8, l: std::alloc::Layout) {
        unsafe { std::alloc::System.dealloc(p, l) }
    }

    unsafe fn realloc(&self, p: *mut u8, l: std::alloc::Layout, new_size: usize) -> *mut u8 {
        let q = unsafe { std::alloc::System.realloc(p, l, new_size) };
        Self::advise(q, new_size);
        q
    }
}

/// While a value of this lives (a run builds and runs its simulation), [`HugePageHeap`] marks
/// what `malloc` takes for huge pages, and `malloc` grows its heap by at least 64 MiB at a
/// time (address space: a page becomes resident when touched). With the default 128 KiB the
/// heap would grow in steps `malloc` writes into before they can be marked, each leaving a
/// small page in every huge page's place, and on huge pages its top would shrink and grow
/// again as blocks are freed and taken, each growth clearing a fresh 2 MiB page. The pad is
/// put back to glibc's default when the last section ends, so that memory freed afterwards
/// goes back to the system as before (setting it also fixes glibc's threshold for mapping a
/// block apart at 128 KiB, which otherwise rises as such blocks are freed; no run measured
/// changed by it). A pad the user set (`MALLOC_TOP_PAD_`, `glibc.malloc.top_pad`) is left
/// alone. Nothing is done where [`HugePageHeap`] is not the program's allocator (tests, other
/// programs using this library). Sections may overlap (runs on several threads): the first to
/// begin starts, the last to end stops.
pub struct RunHeap(());

/// glibc's default `top_pad` (`DEFAULT_TOP_PAD`).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const DEFAULT_TOP_PAD: std::ffi::c_int = 128 << 10;

impl RunHeap {
    pub fn begin() -> Self {
        #[cfg(all(target_os = "linux", target_env = "gnu"))]
        {
            use std::sync::atomic::Ordering::Relaxed;
            let mut s = RUN_HEAPS.lock().unwrap_or_else(|e| e.into_inner());
            if s.0 == 0 && IN_USE.load(Relaxed) {
                let user_pad = std::env::var_os("MALLOC_TOP_PAD_").is_some()
                    || glibc_tunable("glibc.malloc.top_pad").is_some();
                s.1 = !user_pad;
                if s.1 {
                    // SAFETY: mallopt changes one of malloc's parameters; any thread may.
                    unsafe { libc::mallopt(libc::M_TOP_PAD, 64 << 20) };
                }
                MARKING.store(true, Relaxed);
            }
            s.0 += 1;
        }
        RunHeap(())
    }
}

impl Drop for RunHeap {
    fn drop(&mut self) {
        #[cfg(all(target_os = "linux", target_env = "gnu"))]
        {
            let mut s = RUN_HEAPS.lock().unwrap_or_else(|e| e.into_inner());
            s.0 -= 1;
            if s.0 == 0 {
                MARKING.store(false, std::sync::atomic::Ordering::Relaxed);
                if s.1 {
                    // SAFETY: as in `begin`.
                    unsafe { libc::mallopt(libc::M_TOP_PAD, DEFAULT_TOP_PAD) };
                    s.1 = false;
                }
            }
        }
    }
}

/// While a value of this lives, memory the process touches for the first time is on small
/// pages (Linux's `PR_SET_THP_DISABLE`; what is on huge pages stays there). A run's end frees
/// its connections and hands their pages back ([`return_free_memory`]) while it builds its
/// tables in their place: on huge pages every such reuse would clear a fresh 2 MiB page, and
/// with a million flows the end of the run took 3-4 s more system time than the whole run
/// saved. Sections may overlap (runs on several threads): the first to begin sets the flag,
/// the last to end puts back what it found. The flag is the process's: while a section is
/// open, other threads' runs also touch new memory on small pages, and a process started
/// then inherits it. A section does nothing where the heap cannot be on huge pages: the
/// system's setting is `never` for every size, or it is `madvise` and nothing asks for them
/// ([`HugePageHeap`] is not the allocator, nor does glibc's `glibc.malloc.hugetlb` tunable
/// ask); with the plain allocator under `madvise` (the Python module on most systems) the
/// flag would be set and put back for nothing.
pub struct SmallPagesOnly(#[cfg_attr(not(target_os = "linux"), allow(dead_code))] bool);

/// The system's setting for transparent huge pages, as it applies to a process that asks for
/// none.
#[cfg(target_os = "linux")]
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum HugePageSetting {
    /// Some size is on huge pages wherever it can be.
    Always,
    /// Only where a process asks (`MADV_HUGEPAGE`).
    Madvise,
    /// No size at all (or a kernel without them).
    Never,
}

/// The system's setting, read once: the top-level one, and since Linux 6.8 each size's own,
/// which may say `always` (or `inherit` the top level's) where the top level does not.
#[cfg(target_os = "linux")]
fn huge_page_setting() -> HugePageSetting {
    static SETTING: std::sync::OnceLock<HugePageSetting> = std::sync::OnceLock::new();
    *SETTING.get_or_init(|| {
        const DIR: &str = "/sys/kernel/mm/transparent_hugepage";
        let chosen = |text: &str| {
            let (_, rest) = text.split_once('[')?;
            Some(rest.split_once(']')?.0.to_owned())
        };
        let top = std::fs::read_to_string(format!("{DIR}/enabled"))
            .ok()
            .and_then(|t| chosen(&t));
        let mut sizes = Vec::new();
        if let Ok(dir) = std::fs::read_dir(DIR) {
            for size in dir.flatten() {
                if size.file_name().to_string_lossy().starts_with("hugepages-") {
                    sizes.extend(
                        std::fs::read_to_string(size.path().join("enabled"))
                            .ok()
                            .and_then(|t| chosen(&t)),
                    );
                }
            }
        }
        classify(&in_force(top, sizes))
    })
}

/// The settings in force, from the top-level one and each size's own (`sizes`, empty before
/// Linux 6.8): with sizes of their own, the top level counts only where a size inherits it.
#[cfg(target_os = "linux")]
fn in_force(top: Option<String>, sizes: Vec<String>) -> Vec<String> {
    if sizes.is_empty() {
        return top.into_iter().collect();
    }
    sizes
        .into_iter()
        .filter_map(|s| if s == "inherit" { top.clone() } else { Some(s) })
        .collect()
}

/// The setting of a system whose sizes say `settings` (`always`, `madvise` or `never` each).
#[cfg(target_os = "linux")]
fn classify(settings: &[String]) -> HugePageSetting {
    if settings.iter().any(|s| s == "always") {
        HugePageSetting::Always
    } else if settings.iter().any(|s| s == "madvise") {
        HugePageSetting::Madvise
    } else {
        HugePageSetting::Never
    }
}

/// The value the process's `GLIBC_TUNABLES` gives the tunable `name`, if any (glibc reads
/// them when the process starts; the variable as it is now is read).
#[cfg(target_os = "linux")]
fn glibc_tunable(name: &str) -> Option<String> {
    tunable_in(&std::env::var("GLIBC_TUNABLES").ok()?, name).map(str::to_owned)
}

/// The value `tunables` (`GLIBC_TUNABLES`' form: `name=value` joined by `:`) gives `name`:
/// its last, as glibc sets each in turn.
#[cfg(target_os = "linux")]
fn tunable_in<'a>(tunables: &'a str, name: &str) -> Option<&'a str> {
    tunables
        .split(':')
        .filter_map(|kv| kv.split_once('='))
        .filter(|(k, _)| *k == name)
        .last()
        .map(|(_, v)| v)
}

/// glibc's own `malloc` asks for transparent huge pages (`glibc.malloc.hugetlb=1`, glibc
/// 2.35 on; `2` maps hugetlbfs pages instead, which the process's flag does not govern).
#[cfg(target_os = "linux")]
fn glibc_asks_huge_pages() -> bool {
    glibc_tunable("glibc.malloc.hugetlb").is_some_and(|v| v == "1")
}

/// The heap may be on huge pages: the system puts memory on them unasked, or it does where
/// asked and the allocator asks ([`HugePageHeap`], or glibc's tunable). [`SmallPagesOnly`]
/// acts only then.
#[cfg(target_os = "linux")]
pub fn heap_may_be_huge() -> bool {
    match huge_page_setting() {
        HugePageSetting::Always => true,
        HugePageSetting::Never => false,
        HugePageSetting::Madvise => {
            #[cfg(target_env = "gnu")]
            if IN_USE.load(std::sync::atomic::Ordering::Relaxed) {
                return true;
            }
            glibc_asks_huge_pages()
        }
    }
}

#[cfg(target_os = "linux")]
static SMALL_PAGE_SECTIONS: std::sync::Mutex<(usize, std::ffi::c_int)> =
    std::sync::Mutex::new((0, 0));

impl SmallPagesOnly {
    pub fn begin() -> Self {
        #[cfg(target_os = "linux")]
        if heap_may_be_huge() {
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
            return SmallPagesOnly(true);
        }
        SmallPagesOnly(false)
    }
}

impl Drop for SmallPagesOnly {
    fn drop(&mut self) {
        #[cfg(target_os = "linux")]
        if self.0 {
            let mut s = SMALL_PAGE_SECTIONS
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            s.0 -= 1;
            if s.0 == 0 {
                // What `PR_GET_THP_DISABLE` gave: bit 0 disabled, the higher bits the flags
                // it was set with (Linux 6.18: disabled except where advised).
                let (disabled, flags) = (s.1 & 1, s.1 & !1);
                // SAFETY: as in `begin`.
                unsafe { libc::prctl(libc::PR_SET_THP_DISABLE, disabled, flags, 0, 0) };
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

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::{classify, in_force, tunable_in, HugePageSetting::*};

    #[test]
    fn a_glibc_tunable_is_found_by_its_whole_name() {
        let t = "glibc.malloc.hugetlbx=0:glibc.malloc.hugetlb=1:glibc.malloc.top_pad=0";
        assert_eq!(tunable_in(t, "glibc.malloc.hugetlb"), Some("1"));
        assert_eq!(tunable_in(t, "glibc.malloc.top_pad"), Some("0"));
        assert_eq!(
            tunable_in("glibc.malloc.hugetlbx=2", "glibc.malloc.hugetlb"),
            None
        );
        assert_eq!(tunable_in("", "glibc.malloc.hugetlb"), None);
        // Set twice: the last one holds.
        assert_eq!(
            tunable_in(
                "glibc.malloc.hugetlb=1:glibc.malloc.hugetlb=0",
                "glibc.malloc.hugetlb"
            ),
            Some("0")
        );
    }

    #[test]
    fn a_size_on_huge_pages_unasked_makes_the_system_always() {
        let of = |v: &[&str]| classify(&v.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        assert_eq!(of(&["madvise", "never", "always"]), Always);
        assert_eq!(of(&["madvise", "never"]), Madvise);
        assert_eq!(of(&["never", "never"]), Never);
        assert_eq!(of(&[]), Never);
    }

    #[test]
    fn the_top_level_setting_counts_only_where_a_size_inherits_it() {
        let v = |x: &[&str]| x.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let top = Some("always".to_string());
        // Before Linux 6.8: the top level alone.
        assert_eq!(in_force(top.clone(), vec![]), v(&["always"]));
        // Every size set on its own: the top level's `always` applies to none.
        assert_eq!(
            classify(&in_force(top.clone(), v(&["never", "madvise"]))),
            Madvise
        );
        assert_eq!(
            in_force(top.clone(), v(&["never", "inherit"])),
            v(&["never", "always"])
        );
        assert_eq!(in_force(None, v(&["inherit", "never"])), v(&["never"]));
    }
}
