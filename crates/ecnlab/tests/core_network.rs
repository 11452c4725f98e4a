//! The network core against results we did not write: exact link timing, queueing theory
//! (M/D/1), a CBR source's utilisation, DropTail's overflow arithmetic, determinism and packet
//! conservation.

use ecnlab::aqm::{DropTail, Limit};
use ecnlab::net::{Ctx, Endpoint, LinkSpec, NodeId, Sim};
use ecnlab::packet::Packet;
use ecnlab::scenario;
use ecnlab::stats::FlowRecord;
use ecnlab::time::{tx_time, Time, MS, NEVER, SEC, US};
use ecnlab::wire::{Ipv4Repr, UdpRepr};
use std::cell::RefCell;
use std::rc::Rc;

/// Sends one packet of `size` bytes at each of the given times.
struct Burst {
    times: Vec<Time>,
    next: usize,
    src: u32,
    dst: u32,
    dst_ep: u32,
    size: u32,
}

impl Endpoint for Burst {
    fn on_packet(&mut self, _: &mut Ctx, _: &Packet) {}
    fn on_timer(&mut self, ctx: &mut Ctx) {
        while self.next < self.times.len() && self.times[self.next] <= ctx.now {
            let ip = Ipv4Repr {
                src: self.src,
                dst: self.dst,
                ttl: 64,
                ident: ctx.next_ip_id(self.dst, 0),
                ..Default::default()
            };
            let mut p = Packet::new_udp(
                ip,
                UdpRepr {
                    src_port: 1,
                    dst_port: 2,
                },
                self.size - 28,
            );
            p.meta.dst_ep = self.dst_ep;
            ctx.send(p);
            self.next += 1;
        }
    }
    fn deadline(&self) -> Time {
        self.times.get(self.next).copied().unwrap_or(NEVER)
    }
    fn record(&self, _: Time, _: &mut FlowRecord) {}
}

/// Records arrival times.
struct Recorder(Rc<RefCell<Vec<(Time, Time)>>>);

impl Endpoint for Recorder {
    fn on_packet(&mut self, ctx: &mut Ctx, p: &Packet) {
        self.0.borrow_mut().push((p.meta.sent_at, ctx.now));
    }
    fn on_timer(&mut self, _: &mut Ctx) {}
    fn deadline(&self) -> Time {
        NEVER
    }
    fn record(&self, _: Time, _: &mut FlowRecord) {}
}

fn fifo(n: u32) -> Box<DropTail> {
    Box::new(DropTail::new(Limit::Packets(n)))
}

/// Host → router → router → host with three different rates and delays: each packet's arrival
/// is the sum of serialisation and propagation per hop, to the picosecond, and back-to-back
/// packets are spaced by the slowest link.
#[test]
fn link_timing_is_exact_to_the_picosecond() {
    let rates = [1_000_000_000u64, 3_000_000, 155_520_000];
    let delays = [1 * US, 7 * MS + 3, 333 * US + 1];
    let mut sim = Sim::new(1);
    let h0 = sim.add_host("h0");
    let r1 = sim.add_router("r1");
    let r2 = sim.add_router("r2");
    let h3 = sim.add_host("h3");
    sim.connect(
        h0,
        r1,
        &LinkSpec::new(rates[0], delays[0]),
        fifo(100),
        fifo(100),
    );
    sim.connect(
        r1,
        r2,
        &LinkSpec::new(rates[1], delays[1]),
        fifo(100),
        fifo(100),
    );
    sim.connect(
        r2,
        h3,
        &LinkSpec::new(rates[2], delays[2]),
        fifo(100),
        fifo(100),
    );
    let log = Rc::new(RefCell::new(Vec::new()));
    let size = 1000u32;
    let (a0, a3) = (sim.nodes[h0 as usize].addr, sim.nodes[h3 as usize].addr);
    let rec_id = sim.next_endpoint_id() + 1;
    let s = sim.add_endpoint(
        h0,
        Box::new(Burst {
            times: vec![5 * MS, 5 * MS, 5 * MS],
            next: 0,
            src: a0,
            dst: a3,
            dst_ep: rec_id,
            size,
        }),
    );
    let r = sim.add_endpoint(h3, Box::new(Recorder(log.clone())));
    sim.add_flow("f", s, r);
    sim.run_until(SEC);
    let log = log.borrow();
    assert_eq!(log.len(), 3);
    let one: Time = (0..3).map(|i| tx_time(size, rates[i]) + delays[i]).sum();
    assert_eq!(log[0].1, 5 * MS + one);
    // The 3 Mbps link is the bottleneck: followers are spaced by its serialisation time.
    let gap = tx_time(size, rates[1]);
    assert_eq!(log[1].1 - log[0].1, gap);
    assert_eq!(log[2].1 - log[1].1, gap);
    sim.conservation().unwrap();
    assert_eq!(sim.delivered, 3);
}

fn run_toml(text: &str) -> scenario::RunOutput {
    scenario::run_toml(text).unwrap_or_else(|e| panic!("{e}"))
}

fn port_row(out: &scenario::RunOutput, port: &str) -> usize {
    out.port_row(port).expect("port")
}

const DUMBBELL_1X1: &str = r#"
duration = "{dur}"
seed = {seed}
[topology]
kind = "dumbbell"
left = 1
right = 1
access = { rate = "100Gbps", delay = "1us" }
bottleneck = { rate = "10Mbps", delay = "5ms" }
bottleneck_queue = { kind = "droptail", limit = {limit} }
access_queue = { kind = "droptail", limit = 100000 }
[[flows]]
kind = "udp"
src = "l0"
dst = "r0"
rate = "{rate}"
pattern = "{pattern}"
packet_size = 1000
"#;

fn dumbbell(dur: &str, seed: u64, limit: u64, rate: &str, pattern: &str) -> String {
    DUMBBELL_1X1
        .replace("{dur}", dur)
        .replace("{seed}", &seed.to_string())
        .replace("{limit}", &limit.to_string())
        .replace("{rate}", rate)
        .replace("{pattern}", pattern)
}

/// A CBR source at 6 Mbps keeps a 10 Mbps link busy exactly 60 % of the time and never queues.
#[test]
fn cbr_utilisation_equals_its_rate() {
    let out = run_toml(&dumbbell("10s", 1, 100, "6Mbps", "cbr"));
    let r = port_row(&out, "rl->rr");
    let util = out.ports.f64("utilization", r).unwrap();
    // 7500 packets of 0.8 ms; the last one may still be on the wire at the end.
    assert!((util - 0.6).abs() < 1e-4, "utilisation {util}");
    assert_eq!(out.ports.f64("dropped_pkts", r), Some(0.0));
    assert_eq!(out.ports.f64("max_queue_pkts", r), Some(0.0));
    let thr = out.flows.f64("goodput_bps", 0).unwrap();
    assert!((thr - 6e6).abs() / 6e6 < 0.002, "throughput {thr}");
}

/// 20 Mbps of CBR into 10 Mbps with a 50-packet buffer for 2 s: every arrival beyond what the
/// link sends and the buffer holds is dropped — arithmetic, not statistics.
#[test]
fn droptail_overflow_counts_under_known_overload() {
    let out = run_toml(&dumbbell("2s", 1, 50, "20Mbps", "cbr"));
    let r = port_row(&out, "rl->rr");
    let arrived = out.ports.f64("arrived_pkts", r).unwrap() as i64;
    let sent = out.ports.f64("dequeued_pkts", r).unwrap() as i64;
    let dropped = out.ports.f64("dropped_overflow", r).unwrap() as i64;
    // Arrivals every 0.4 ms from t = 0 (+ access delay) until 2 s: 5000 packets.
    assert_eq!(arrived, 5000);
    // The link sends one packet per 0.8 ms: 2500 started by t = 2 s.
    assert!((sent - 2500).abs() <= 1, "sent {sent}");
    // What remains: 50 queued at the end.
    assert_eq!(arrived - sent - dropped, 50);
    assert_eq!(out.ports.f64("max_queue_pkts", r), Some(50.0));
}

/// Poisson arrivals of fixed-size packets: M/D/1. Mean waiting time in queue is
/// ρ / (2µ(1 − ρ)) (Pollaczek–Khinchine).
#[test]
fn poisson_through_a_bottleneck_is_md1() {
    let mu = 10e6 / 8000.0; // packets per second
    for (rho, rate) in [(0.5, "5Mbps"), (0.8, "8Mbps")] {
        let expect = rho / (2.0 * mu * (1.0 - rho));
        let mut sum = 0.0;
        let seeds = [1u64, 2, 3];
        for &seed in &seeds {
            let out = run_toml(&dumbbell("200s", seed, 1_000_000, rate, "poisson"));
            let r = port_row(&out, "rl->rr");
            sum += out.ports.f64("mean_sojourn_s", r).unwrap();
        }
        let got = sum / seeds.len() as f64;
        eprintln!("M/D/1 rho {rho}: mean wait {got:.6} s, analytic {expect:.6} s");
        assert!(
            (got - expect).abs() / expect < 0.05,
            "rho {rho}: mean wait {got} vs M/D/1 {expect}"
        );
    }
}

/// Same scenario and seed: identical tables; another seed: different.
#[test]
fn same_seed_gives_bit_identical_results() {
    let text = dumbbell("3s", 7, 20, "12Mbps", "poisson").replace(
        r#"bottleneck_queue = { kind = "droptail", limit = 20 }"#,
        r#"bottleneck_queue = { kind = "red", limit = 20, min_th = 5, max_th = 15, max_p = 0.1 }"#,
    );
    let a = run_toml(&text);
    let b = run_toml(&text);
    assert_eq!(a.flows, b.flows);
    assert_eq!(a.ports, b.ports);
    assert_eq!(a.timeseries, b.timeseries);
    assert_eq!(a.meta.events, b.meta.events);
    let c = run_toml(&text.replace("seed = 7", "seed = 8"));
    assert_ne!(a.ports, c.ports);
    let r = port_row(&a, "rl->rr");
    assert!(
        a.ports.f64("dropped_early", r).unwrap() > 0.0,
        "RED should drop early under 120 % load"
    );
}

/// Slices of simulated time fixed by the caller (`RunOptions::slice`: one per 250 ms, one per
/// 7 µs, one for the whole run) give the tables the wall-clock slicing gives, on TCP flows
/// (NewReno with and without ECN, short flows started by timers) through a RED queue that
/// marks, sampled every 10 ms.
#[test]
fn fixed_slices_give_the_same_results() {
    let s = scenario::read_toml(include_str!("../../../scenarios/dumbbell_ecn.toml")).unwrap();
    let a = scenario::run(&s, scenario::RunOptions::default()).unwrap();
    let r = port_row(&a, "rl->rr");
    assert!(
        a.ports.f64("marked_ce", r).unwrap() > 0.0,
        "the RED queue marks"
    );
    for slice in [250 * MS, 7 * US, 10 * SEC] {
        let opts = scenario::RunOptions {
            slice: Some(slice),
            ..Default::default()
        };
        let b = scenario::run(&s, opts).unwrap();
        assert_eq!(a.flows, b.flows, "slice {slice}");
        assert_eq!(a.ports, b.ports, "slice {slice}");
        assert_eq!(a.timeseries, b.timeseries, "slice {slice}");
        assert_eq!(a.meta.events, b.meta.events, "slice {slice}");
    }
}

/// The guard against a runaway backlog looks at the slices' ends: the wall-clock slices (10 µs
/// of simulated time to start with) see a queue that a burst builds and that drains before the
/// run ends; one slice for the whole run looks only at the end, when it has drained. So the
/// caller's slice is the one the run takes.
#[test]
fn a_fixed_slice_is_the_one_the_run_takes() {
    // 20 Mb/s into 10 Mb/s for 1 s, then nothing: about 1250 packets queued at 1 s, drained
    // by 2 s.
    let text = dumbbell("3s", 1, 100_000, "20Mbps", "cbr") + "stop = \"1s\"\n";
    let s = scenario::read_toml(&text).unwrap();
    let guarded = |slice| scenario::RunOptions {
        max_live_packets: Some(500),
        slice,
        ..Default::default()
    };
    assert!(matches!(
        scenario::run(&s, guarded(None)),
        Err(scenario::RunError::Invalid(_))
    ));
    assert!(scenario::run(&s, guarded(Some(3 * SEC))).is_ok());
    assert!(matches!(
        scenario::run(&s, guarded(Some(100 * MS))),
        Err(scenario::RunError::Invalid(_))
    ));
}

/// Link-layer framing (2 bytes of PPP, as ns-3's point-to-point links) adds to serialisation
/// only.
#[test]
fn framing_bytes_add_to_serialisation() {
    let mut sim = Sim::new(1);
    let h0 = sim.add_host("h0");
    let h1 = sim.add_host("h1");
    let spec = LinkSpec {
        framing: 2,
        ..LinkSpec::new(100_000_000, 10 * MS)
    };
    sim.connect(h0, h1, &spec, fifo(10), fifo(10));
    let log = Rc::new(RefCell::new(Vec::new()));
    let (a0, a1) = (sim.nodes[h0 as usize].addr, sim.nodes[h1 as usize].addr);
    let rec = sim.next_endpoint_id() + 1;
    let s = sim.add_endpoint(
        h0,
        Box::new(Burst {
            times: vec![0],
            next: 0,
            src: a0,
            dst: a1,
            dst_ep: rec,
            size: 1040,
        }),
    );
    let r = sim.add_endpoint(h1, Box::new(Recorder(log.clone())));
    sim.add_flow("f", s, r);
    sim.run_until(SEC);
    // 1042 bytes at 100 Mbps = 83.36 us.
    assert_eq!(log.borrow()[0].1, 83_360 * 1000 + 10 * MS);
    sim.conservation().unwrap();
}

/// Six 1000-byte packets sent at t = 0 from h0 to h1 over a 100 Mb/s, 1 ms link with batched
/// service `batch`: the simulation (run for a second) and the packets' arrival times.
fn burst_through_batches(batch: ecnlab::net::Batch) -> (Sim, Vec<Time>) {
    let mut sim = Sim::new(1);
    let h0 = sim.add_host("h0");
    let h1 = sim.add_host("h1");
    let spec = LinkSpec {
        batch: Some(batch),
        ..LinkSpec::new(100_000_000, MS)
    };
    sim.connect(h0, h1, &spec, fifo(100), fifo(100));
    let log = burst_to_recorder(&mut sim, h0, h1, vec![0; 6]);
    sim.run_until(SEC);
    let at = log.borrow().iter().map(|x| x.1).collect();
    (sim, at)
}

/// 1000-byte packets sent from h0 at `times` to a recorder on h1, as one flow: the
/// recorder's log of (sent, arrived).
fn burst_to_recorder(
    sim: &mut Sim,
    h0: NodeId,
    h1: NodeId,
    times: Vec<Time>,
) -> Rc<RefCell<Vec<(Time, Time)>>> {
    let log = Rc::new(RefCell::new(Vec::new()));
    let (a0, a1) = (sim.nodes[h0 as usize].addr, sim.nodes[h1 as usize].addr);
    let rec = sim.next_endpoint_id() + 1;
    let s = sim.add_endpoint(
        h0,
        Box::new(Burst {
            times,
            next: 0,
            src: a0,
            dst: a1,
            dst_ep: rec,
            size: 1000,
        }),
    );
    let r = sim.add_endpoint(h1, Box::new(Recorder(log.clone())));
    sim.add_flow("f", s, r);
    log
}

/// Batched service (802.11 aggregation): a packet that finds the link idle goes alone after
/// the per-batch overhead; what queues behind it leaves as one batch of at most `max_pkts`,
/// every packet of a batch arriving when the batch ends.
#[test]
fn batched_service_sends_what_is_queued_as_one_transmission() {
    use ecnlab::net::Batch;
    let (sim, at) = burst_through_batches(Batch {
        max_pkts: 4,
        max_bytes: 1 << 20,
        max_airtime: 0,
        overhead: 100 * US,
    });
    // The first packet finds the link idle: 100 + 80 us. Then four together: 100 + 4·80 us
    // later. Then the last one: 100 + 80 us.
    let b1 = 180 * US;
    let b2 = b1 + 420 * US;
    let b3 = b2 + 180 * US;
    assert_eq!(
        at,
        vec![b1 + MS, b2 + MS, b2 + MS, b2 + MS, b2 + MS, b3 + MS]
    );
    let c = &sim.ports[0].counters;
    assert_eq!(c.transmissions, 3);
    assert_eq!(c.busy_time, b3);
    sim.conservation().unwrap();
}

/// A byte budget closes a batch at the packet that reaches it; an airtime budget likewise.
#[test]
fn batch_budgets_in_bytes_and_airtime() {
    use ecnlab::net::Batch;
    for (budget, expect) in [
        // 2500 bytes: the third 1000-byte packet crosses it and is the batch's last.
        (
            Batch {
                max_pkts: 64,
                max_bytes: 2500,
                max_airtime: 0,
                overhead: 0,
            },
            vec![1, 3, 2],
        ),
        // 200 us at 100 Mb/s: the third packet brings the batch to 240 us.
        (
            Batch {
                max_pkts: 64,
                max_bytes: u64::MAX,
                max_airtime: 200 * US,
                overhead: 0,
            },
            vec![1, 3, 2],
        ),
    ] {
        let (_, at) = burst_through_batches(budget);
        let mut sizes: Vec<usize> = Vec::new();
        let mut last = 0;
        for t in at {
            if t != last {
                sizes.push(0);
                last = t;
            }
            *sizes.last_mut().unwrap() += 1;
        }
        assert_eq!(sizes, expect, "{budget:?}");
    }
}

/// A marker's timer moves only at the marker's own timer (the port re-arms it then, not at
/// every packet): a marker whose arrival hook asks for an earlier wake-up is refused in debug
/// builds, where tests run, instead of never being woken.
#[test]
#[cfg(debug_assertions)]
#[should_panic(expected = "the marker's timer moved")]
fn a_marker_timer_moved_by_a_packet_is_refused() {
    use ecnlab::marker::{Marker, PortState};
    struct WakeAfterArrival(Time);
    impl Marker for WakeAfterArrival {
        fn feedback(&self) -> &'static str {
            "ce"
        }
        fn on_arrival(&mut self, port: &dyn PortState, _: &mut Packet) {
            self.0 = port.now() + MS;
        }
        fn next_timer(&self) -> Time {
            self.0
        }
    }
    let mut sim = Sim::new(1);
    let h0 = sim.add_host("h0");
    let h1 = sim.add_host("h1");
    let (port, _) = sim.connect(h0, h1, &LinkSpec::new(1_000_000, MS), fifo(10), fifo(10));
    sim.set_marker(port, Box::new(WakeAfterArrival(NEVER)));
    let (a0, a1) = (sim.nodes[h0 as usize].addr, sim.nodes[h1 as usize].addr);
    let rec_id = sim.next_endpoint_id() + 1;
    let s = sim.add_endpoint(
        h0,
        Box::new(Burst {
            times: vec![5 * MS],
            next: 0,
            src: a0,
            dst: a1,
            dst_ep: rec_id,
            size: 1000,
        }),
    );
    let r = sim.add_endpoint(h1, Box::new(Recorder(Rc::new(RefCell::new(Vec::new())))));
    sim.add_flow("f", s, r);
    sim.run_until(SEC);
}

/// A transmission that ends with nothing queued behind it, on a link still carrying an earlier
/// packet, costs no event: its packet enters the pipe when it starts (arriving when it would
/// have). 50 packets spaced 100 µs on a 1 Gbps, 10 ms link: one timer and one delivery each,
/// and one transmission end (the first, which finds the link empty).
#[test]
fn a_transmission_ending_with_nothing_queued_costs_no_event() {
    let mut sim = Sim::new(1);
    let h0 = sim.add_host("h0");
    let h1 = sim.add_host("h1");
    let (port, _) = sim.connect(
        h0,
        h1,
        &LinkSpec::new(1_000_000_000, 10 * MS),
        fifo(10),
        fifo(10),
    );
    let times: Vec<Time> = (0..50).map(|i| i * 100 * US).collect();
    let log = burst_to_recorder(&mut sim, h0, h1, times.clone());
    sim.run_until(SEC);
    let tx = tx_time(1000, 1_000_000_000);
    let want: Vec<(Time, Time)> = times.iter().map(|&t| (t, t + tx + 10 * MS)).collect();
    assert_eq!(*log.borrow(), want);
    assert_eq!(sim.events.executed, 50 + 50 + 1);
    let c = &sim.ports[port as usize].counters;
    assert_eq!((c.transmissions, c.busy_time), (50, 50 * tx));
    sim.conservation().unwrap();
}

/// Two hosts into a router whose port is transmitting packet A (its link still carrying an
/// earlier packet, so A's end is no event unless something waits) when packet B arrives at
/// the very picosecond A's transmission ends. Simultaneous events run in the order they were
/// scheduled: B's arrival scheduled before A's transmission started (a long link from h1)
/// finds the port busy and waits, with a sojourn of 0; scheduled after it (a short link) it
/// finds the port idle. Either way B leaves when A ends. Run whole and in 1 µs slices.
#[test]
fn a_packet_arriving_as_a_transmission_ends_waits_as_the_event_order_says() {
    let tx = tx_time(1000, 1_000_000_000);
    // (h1's link delay, when h1 sends B, B waits behind A)
    for (d1, sent, waits) in [(500 * US, 608 * US, true), (US, 1107 * US, false)] {
        for sliced in [false, true] {
            let mut sim = Sim::new(1);
            let h0 = sim.add_host("h0");
            let h1 = sim.add_host("h1");
            let r = sim.add_router("r");
            let h3 = sim.add_host("h3");
            let g = 1_000_000_000;
            sim.connect(h0, r, &LinkSpec::new(g, MS), fifo(10), fifo(10));
            sim.connect(h1, r, &LinkSpec::new(g, d1), fifo(10), fifo(10));
            let (out, _) = sim.connect(r, h3, &LinkSpec::new(g, MS), fifo(10), fifo(10));
            let log = Rc::new(RefCell::new(Vec::new()));
            let a3 = sim.nodes[h3 as usize].addr;
            let rec = sim.next_endpoint_id() + 2;
            // P at 0 (still on r→h3 when A's transmission ends), A at 100 µs.
            for (h, times) in [(h0, vec![0, 100 * US]), (h1, vec![sent])] {
                let src = sim.nodes[h as usize].addr;
                let s = sim.add_endpoint(
                    h,
                    Box::new(Burst {
                        times,
                        next: 0,
                        src,
                        dst: a3,
                        dst_ep: rec,
                        size: 1000,
                    }),
                );
                assert!(s < rec);
            }
            let rcv = sim.add_endpoint(h3, Box::new(Recorder(log.clone())));
            assert_eq!(rcv, rec);
            if sliced {
                let mut t = 0;
                while t < 3 * MS {
                    t += US;
                    sim.run_until(t);
                    sim.conservation().unwrap();
                }
            }
            sim.run_until(SEC);
            // A reaches r at 100 µs + tx + 1 ms and ends there tx later, as B arrives.
            let a_end = 100 * US + 2 * tx + MS;
            assert_eq!(sent + tx + d1, a_end);
            let arrivals: Vec<Time> = log.borrow().iter().map(|x| x.1).collect();
            assert_eq!(arrivals, vec![2 * tx + 2 * MS, a_end + MS, a_end + tx + MS]);
            let c = &sim.ports[out as usize].counters;
            assert_eq!(c.max_backlog, waits as u32, "d1 {d1} sliced {sliced}");
            assert_eq!(
                (c.transmissions, c.busy_time, c.sojourn_max),
                (3, 3 * tx, 0)
            );
            sim.conservation().unwrap();
        }
    }
}
