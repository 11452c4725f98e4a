//! The small-page section of a run's end (`sysmem::SmallPagesOnly`), alone in its process:
//! the flag it sets is the process's. Its allocator is `ecnlab-run`'s: a section acts only
//! where the heap may be on huge pages.

#[global_allocator]
static HEAP: ecnlab::sysmem::HugePageHeap = ecnlab::sysmem::HugePageHeap;

#[cfg(target_os = "linux")]
#[test]
fn overlapping_small_page_sections_put_back_what_the_first_found() {
    use ecnlab::sysmem::{heap_may_be_huge, SmallPagesOnly};
    if !heap_may_be_huge() {
        // A section acts only where the heap may be on huge pages (not under `never`).
        println!("skipped: the system gives no huge pages, so a section does nothing");
        return;
    }
    // SAFETY: reads one flag of the process.
    let flag = || unsafe { libc::prctl(libc::PR_GET_THP_DISABLE, 0, 0, 0, 0) };
    // Off; on; on except where advised (Linux 6.18 on: flag 2, PR_THP_DISABLE_EXCEPT_ADVISED).
    for (disable, flags) in [(0, 0), (1, 0), (1, 2)] {
        // SAFETY: sets one flag of the process.
        if unsafe { libc::prctl(libc::PR_SET_THP_DISABLE, disable, flags, 0, 0) } != 0 {
            continue; // a kernel without that flag
        }
        let before = flag();
        let a = SmallPagesOnly::begin();
        assert_eq!(flag(), 1);
        let b = SmallPagesOnly::begin();
        drop(a);
        assert_eq!(flag(), 1, "a section still open keeps small pages");
        drop(b);
        assert_eq!(
            flag(),
            before,
            "the last section out puts back the flag it found"
        );
    }
}
