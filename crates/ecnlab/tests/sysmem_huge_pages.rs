//! The simulator's allocator (`sysmem::HugePageHeap`) as this program's, on its main thread
//! (no test harness, whose tests run on threads of their own): memory the heap gains and
//! large blocks end up on transparent huge pages where the system gives them on request.

#[global_allocator]
static ALLOCATOR: ecnlab::sysmem::HugePageHeap = ecnlab::sysmem::HugePageHeap;

fn main() {
    if !cfg!(all(target_os = "linux", target_env = "gnu")) {
        println!("skipped: huge pages are asked for on Linux with glibc only");
        return;
    }
    let Ok(mode) = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled") else {
        println!("skipped: the kernel has no transparent huge pages");
        return;
    };
    if mode.contains("[never]") {
        println!("skipped: transparent huge pages are off on this system");
        return;
    }
    ecnlab::sysmem::prepare_heap();
    let before = ecnlab::sysmem::huge_pages_kb().unwrap_or(0);
    // 48 MiB in small blocks (from the heap) and one 16 MiB block (mapped apart), written.
    let small: Vec<Box<[u64; 8]>> = (0..(48 << 20) / 64)
        .map(|i| Box::new([i as u64; 8]))
        .collect();
    let large = vec![1u8; 16 << 20];
    let after = ecnlab::sysmem::huge_pages_kb().unwrap_or(0);
    assert!(small[1000][3] == 1000 && large[12345] == 1);
    // All but the partial huge pages at the edges of each growth and of the large block.
    assert!(
        after >= before + 48 * 1024,
        "{after} KiB on huge pages after 64 MiB written, {before} KiB before"
    );
    println!(
        "ok: {} KiB more on huge pages after 64 MiB written",
        after - before
    );
}
