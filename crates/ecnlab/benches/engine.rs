//! Engine micro-benchmark: UDP packets through a chain of routers. Prints events/s,
//! packet-hops/s and heap allocations per packet in steady state (counted by a wrapping global
//! allocator). Run: `cargo bench -p ecnlab --bench engine`.

use ecnlab::scenario::{self, RunOptions};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};

struct Counting;
static ALLOCS: AtomicU64 = AtomicU64::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        System.alloc(l)
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        System.dealloc(p, l)
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        System.realloc(p, l, n)
    }
}

#[global_allocator]
static A: Counting = Counting;

fn scenario(duration: &str) -> String {
    format!(
        r#"
duration = "{duration}"
[topology]
kind = "chain"
hops = 4
end_hosts = 4
link = {{ rate = "10Gbps", delay = "1ms" }}
access = {{ rate = "10Gbps", delay = "10us" }}
queue = {{ kind = "droptail", limit = 1000 }}
[measure]
interval = "100ms"
sample_flows = false
[[flows]]
kind = "udp"
src = "l0"
dst = "r0"
rate = "2Gbps"
packet_size = 1000
count = 4
stagger = "1us"
"#
    )
}

fn main() {
    // Warm-up run of 0.1 s, then a run 10× longer: the difference in allocations is what the
    // extra 0.9 s of steady state cost.
    let mut results = Vec::new();
    for dur in ["0.1s", "1s"] {
        let s = scenario::parse_toml(&scenario(dur)).expect("scenario");
        let before = ALLOCS.load(Ordering::Relaxed);
        let out = scenario::run(&s, RunOptions::default()).expect("run");
        let allocs = ALLOCS.load(Ordering::Relaxed) - before;
        results.push((out.meta.clone(), allocs));
        // Packet-hops: every dequeue from a port is one hop.
        let hops: f64 = (0..out.ports.rows())
            .map(|r| out.ports.f64("dequeued_pkts", r).unwrap())
            .sum();
        println!(
            "{dur:>5}: {:>10} events in {:.3} s = {:.2} M events/s; {:.0} packet-hops = {:.2} M hops/s; {} packets; {} allocations",
            out.meta.events,
            out.meta.wall_s,
            out.meta.events as f64 / out.meta.wall_s / 1e6,
            hops,
            hops / out.meta.wall_s / 1e6,
            out.meta.packets_created,
            allocs
        );
    }
    let (m0, a0) = &results[0];
    let (m1, a1) = &results[1];
    let extra_pkts = (m1.packets_created - m0.packets_created) as f64;
    println!(
        "steady-state allocations per packet: {:.4}",
        (*a1 as f64 - *a0 as f64) / extra_pkts
    );
}
