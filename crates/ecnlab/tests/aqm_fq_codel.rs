//! FQ-CoDel's flow isolation (RFC 8290 §1): a sparse flow beside a bulk TCP flow keeps a
//! low delay, where behind a FIFO it waits behind the bulk flow's queue; CoDel alone keeps
//! the shared queue near its target.

use ecnlab::scenario::{self, RunOutput};

fn run(queue: &str) -> RunOutput {
    let text = format!(
        r#"
duration = "20s"
[topology]
kind = "dumbbell"
left = 2
right = 2
access = {{ rate = "100Mbps", delay = "1ms" }}
bottleneck = {{ rate = "10Mbps", delay = "5ms" }}
bottleneck_queue = {queue}
[[flows]]
name = "bulk"
src = "l0"
dst = "r0"
cc = "cubic"
[[flows]]
name = "sparse"
kind = "udp"
src = "l1"
dst = "r1"
rate = "40kbps"
packet_size = 100
"#
    );
    scenario::run_toml(&text).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn a_sparse_flows_delay_stays_low_beside_a_bulk_flow() {
    let fifo = run(r#"{ kind = "droptail", limit = 1000 }"#);
    let codel = run(r#"{ kind = "codel" }"#);
    let fq = run(r#"{ kind = "fq_codel" }"#);
    let owd = |o: &RunOutput| o.flows.f64("owd_mean_s", 1).unwrap();
    let bulk = |o: &RunOutput| o.flows.f64("goodput_bps", 0).unwrap();
    let (d_fifo, d_codel, d_fq) = (owd(&fifo), owd(&codel), owd(&fq));
    eprintln!(
        "sparse one-way delay: FIFO {:.1} ms, CoDel {:.2} ms, FQ-CoDel {:.2} ms; bulk {:.2} / {:.2} / {:.2} Mb/s",
        d_fifo * 1e3,
        d_codel * 1e3,
        d_fq * 1e3,
        bulk(&fifo) / 1e6,
        bulk(&codel) / 1e6,
        bulk(&fq) / 1e6
    );
    // Propagation 7 ms; a 100-byte packet's serialisation is negligible; at most one bulk
    // packet (1.2 ms at 10 Mb/s) ahead of a sparse one under FQ-CoDel.
    assert!(d_fifo > 0.1, "FIFO {d_fifo}");
    assert!(
        d_codel > 7e-3 + 2e-3 && d_codel < 7e-3 + 20e-3,
        "CoDel {d_codel}"
    );
    assert!(d_fq < 7e-3 + 1.5e-3, "FQ-CoDel {d_fq}");
    assert!(bulk(&fq) > 9e6 && bulk(&codel) > 9e6);
}
