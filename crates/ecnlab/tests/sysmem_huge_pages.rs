//! The simulator's allocator (`sysmem::HugePageHeap`) as this program's, on its main thread
//! (no test harness, whose tests run on threads of their own): while a run's section is open,
//! memory the heap gains and large blocks end up on transparent huge pages where the system
//! gives them on request.

#[global_allocator]
static ALLOCATOR: ecnlab::sysmem::HugePageHeap = ecnlab::sysmem::HugePageHeap;

/// Why huge pages cannot be expected here, if they cannot.
fn unavailable() -> Option<String> {
    if !cfg!(all(target_os = "linux", target_env = "gnu")) {
        return Some("huge pages are asked for on Linux with glibc only".into());
    }
    let thp = "/sys/kernel/mm/transparent_hugepage";
    let Ok(mode) = std::fs::read_to_string(format!("{thp}/enabled")) else {
        return Some("the kernel has no transparent huge pages".into());
    };
    if !mode.contains("[madvise]") {
        return Some(format!(
            "transparent huge pages are not given on request here ({})",
            mode.trim()
        ));
    }
    let size = std::fs::read_to_string(format!("{thp}/hpage_pmd_size")).unwrap_or_default();
    if size.trim() != "2097152" {
        return Some(format!("huge pages here are not 2 MiB ({})", size.trim()));
    }
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    if status
        .lines()
        .any(|l| l.starts_with("THP_enabled:") && l.ends_with('0'))
    {
        return Some("this process was started with transparent huge pages off".into());
    }
    if ecnlab::sysmem::huge_pages_kb().is_none() {
        return Some("the system does not tell the memory on huge pages".into());
    }
    None
}

/// Memory on huge pages (KiB) in the mappings that overlap [start, end).
fn huge_kb_in(start: usize, end: usize) -> u64 {
    let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap_or_default();
    let (mut inside, mut kb) = (false, 0);
    for l in smaps.lines() {
        let first = l.split_whitespace().next().unwrap_or("");
        if let Some((a, b)) = first.split_once('-') {
            if let (Ok(a), Ok(b)) = (usize::from_str_radix(a, 16), usize::from_str_radix(b, 16)) {
                inside = a < end && start < b;
                continue;
            }
        }
        if inside && l.starts_with("AnonHugePages:") {
            kb += l
                .split_whitespace()
                .nth(1)
                .and_then(|v| v.parse::<u64>().ok())
                .unwrap_or(0);
        }
    }
    kb
}

fn main() {
    if let Some(why) = unavailable() {
        println!("skipped: {why}");
        return;
    }
    let before = ecnlab::sysmem::huge_pages_kb().unwrap_or(0);
    let run = ecnlab::sysmem::RunHeap::begin();
    // 48 MiB in small blocks (from the heap) and one 16 MiB block, written.
    let small: Vec<Box<[u64; 8]>> = (0..(48 << 20) / 64)
        .map(|i| Box::new([i as u64; 8]))
        .collect();
    let large = vec![1u8; 16 << 20];
    let after = ecnlab::sysmem::huge_pages_kb().unwrap_or(0);
    drop(run);
    assert!(small[1000][3] == 1000 && large[12345] == 1);
    let (p, n) = (large.as_ptr() as usize, large.len());
    let large_kb = huge_kb_in(p, p + n);
    // All but the partial huge pages at the edges of each growth and of the large block.
    assert!(
        large_kb >= 12 * 1024,
        "the 16 MiB block has {large_kb} KiB on huge pages"
    );
    assert!(
        after >= before + 48 * 1024,
        "{after} KiB on huge pages after 64 MiB written, {before} KiB before"
    );
    // Outside a run's section nothing is marked: the heap's new memory stays on small pages.
    let before_more = ecnlab::sysmem::huge_pages_kb().unwrap_or(0);
    let more: Vec<Box<[u64; 8]>> = (0..(32 << 20) / 64)
        .map(|i| Box::new([i as u64; 8]))
        .collect();
    let after_more = ecnlab::sysmem::huge_pages_kb().unwrap_or(0);
    assert!(more[7][0] == 7);
    assert!(
        after_more < before_more + 8 * 1024,
        "{} KiB more on huge pages outside a run's section",
        after_more.saturating_sub(before_more)
    );
    println!("ok: {} KiB more on huge pages after 64 MiB written, {large_kb} KiB of them in the large block", after - before);
}
