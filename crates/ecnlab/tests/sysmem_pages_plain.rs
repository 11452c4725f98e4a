//! The small-page section of a run's end (`sysmem::SmallPagesOnly`) in a process whose
//! allocator is the plain one (the Python module's): it acts only where the heap may be on
//! huge pages all the same, and otherwise leaves the process's flag alone.

#[cfg(target_os = "linux")]
#[test]
fn a_section_acts_only_where_the_heap_may_be_on_huge_pages() {
    use ecnlab::sysmem::{heap_may_be_huge, SmallPagesOnly};
    // SAFETY: reads one flag of the process.
    let flag = || unsafe { libc::prctl(libc::PR_GET_THP_DISABLE, 0, 0, 0, 0) };
    // SAFETY: sets one flag of the process.
    assert_eq!(
        unsafe { libc::prctl(libc::PR_SET_THP_DISABLE, 0, 0, 0, 0) },
        0
    );
    // Read here apart from the library: no size of the system on huge pages unasked (no
    // `[always]` in any `enabled`), and no glibc tunable asking for them, so nothing in this
    // process can put its heap on them.
    let dir = "/sys/kernel/mm/transparent_hugepage";
    let always = |path: std::path::PathBuf| {
        std::fs::read_to_string(path).is_ok_and(|t| t.contains("[always]"))
    };
    let unasked = always(format!("{dir}/enabled").into())
        || std::fs::read_dir(dir).is_ok_and(|d| {
            d.flatten().any(|e| {
                e.file_name().to_string_lossy().starts_with("hugepages-")
                    && always(e.path().join("enabled"))
            })
        });
    let tunable = std::env::var("GLIBC_TUNABLES").is_ok_and(|t| t.contains("hugetlb=1"));
    if !unasked && !tunable {
        assert!(!heap_may_be_huge(), "no huge pages for a plain heap here");
    }
    let section = SmallPagesOnly::begin();
    // The section acts exactly where the heap may be on huge pages.
    assert_eq!(flag(), i32::from(heap_may_be_huge()));
    drop(section);
    assert_eq!(flag(), 0, "the flag as the section found it");
}
