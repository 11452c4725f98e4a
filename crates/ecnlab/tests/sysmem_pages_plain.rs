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
    let section = SmallPagesOnly::begin();
    // On a system whose setting is `madvise` (the usual one), with no glibc tunable asking
    // for huge pages, nothing asks for them here: the flag stays as it was.
    assert_eq!(flag(), i32::from(heap_may_be_huge()));
    drop(section);
    assert_eq!(flag(), 0, "the flag as the section found it");
}
