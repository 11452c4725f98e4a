//! The small-page section of a run's end (`sysmem::SmallPagesOnly`), alone in its process:
//! the flag it sets is the process's.

#[cfg(target_os = "linux")]
#[test]
fn overlapping_small_page_sections_put_back_what_the_first_found() {
    use ecnlab::sysmem::SmallPagesOnly;
    // SAFETY: reads one flag of the process.
    let flag = || unsafe { libc::prctl(libc::PR_GET_THP_DISABLE, 0, 0, 0, 0) };
    for before in [0, 1] {
        // SAFETY: sets one flag of the process.
        unsafe { libc::prctl(libc::PR_SET_THP_DISABLE, before, 0, 0, 0) };
        let a = SmallPagesOnly::begin();
        assert_eq!(flag(), 1);
        let b = SmallPagesOnly::begin();
        drop(a);
        assert_eq!(flag(), 1, "a section still open keeps small pages");
        drop(b);
        assert_eq!(
            flag(),
            before as i32,
            "the last section out puts back the flag it found"
        );
    }
}
