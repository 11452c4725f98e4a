//! Byte-stream integrity under random loss, duplication and reordering: every byte is
//! delivered exactly once and in order, the flow completes, and packets are conserved, for
//! NewReno and SACK recovery over many seeds.
//!
//! An independent oracle wraps the receiving endpoint: it records which payload bytes really
//! arrived and checks after every packet that the connection's in-order delivery count is
//! exactly the length of the contiguous prefix of arrived bytes (never ahead of the data,
//! never behind it, never decreasing).

use ecnlab::aqm::{DropTail, Limit};
use ecnlab::cc::newreno::{NewReno, NewRenoConfig};
use ecnlab::cc::Controller;
use ecnlab::net::{node_addr, Ctx, Endpoint, LinkSpec, Samples};
use ecnlab::packet::Packet;
use ecnlab::stats::FlowRecord;
use ecnlab::tcp::codecs::NoEcn;
use ecnlab::tcp::testing::{Impairment, Reno};
use ecnlab::tcp::{ConnParams, TcpConfig, TcpConn};
use ecnlab::time::{Time, MS, SEC};
use ecnlab::Sim;
use std::cell::RefCell;
use std::rc::Rc;

/// Bytes that arrived (index = relative sequence number − 1) and the checks' results.
#[derive(Default)]
struct Oracle {
    arrived: Vec<bool>,
    prefix: usize,
    last_delivered: u64,
    violations: Vec<String>,
}

struct Checked {
    inner: TcpConn,
    irs: Option<u32>,
    oracle: Rc<RefCell<Oracle>>,
}

impl Endpoint for Checked {
    fn on_packet(&mut self, ctx: &mut Ctx, pkt: &Packet) {
        let t = *pkt.tcp().unwrap();
        if t.flags.has(ecnlab::wire::TcpFlags::SYN) {
            self.irs = Some(t.seq);
        }
        if let (Some(irs), true) = (self.irs, pkt.payload_len > 0) {
            let start = t.seq.wrapping_sub(irs) as usize - 1;
            let mut o = self.oracle.borrow_mut();
            let end = start + pkt.payload_len as usize;
            if o.arrived.len() < end {
                o.arrived.resize(end, false);
            }
            o.arrived[start..end].iter_mut().for_each(|b| *b = true);
            while o.prefix < o.arrived.len() && o.arrived[o.prefix] {
                o.prefix += 1;
            }
        }
        self.inner.on_packet(ctx, pkt);
        let d = self.inner.bytes_delivered();
        let mut o = self.oracle.borrow_mut();
        if d != o.prefix as u64 || d < o.last_delivered {
            let msg = format!("delivered {d}, contiguous prefix {}", o.prefix);
            o.violations.push(msg);
        }
        o.last_delivered = d;
    }
    fn on_timer(&mut self, ctx: &mut Ctx) {
        self.inner.on_timer(ctx)
    }
    fn deadline(&self) -> Time {
        self.inner.deadline()
    }
    fn record(&self, now: Time, rec: &mut FlowRecord) {
        self.inner.record(now, rec)
    }
    fn sample(&self, now: Time, out: &mut Samples) {
        self.inner.sample(now, out)
    }
    fn finished(&self) -> bool {
        self.inner.finished()
    }
}

struct Outcome {
    delivered: u64,
    finished: bool,
    retransmissions: u64,
    rtos: u64,
}

fn run(seed: u64, sack: bool, timestamps: bool, size: u64, impair: (f64, f64, f64)) -> Outcome {
    let mut sim = Sim::new(seed);
    let a = sim.add_host("a");
    let r = sim.add_router("r");
    let b = sim.add_host("b");
    let q = || Box::new(DropTail::new(Limit::Packets(100)));
    sim.connect(a, r, &LinkSpec::new(50_000_000, 2 * MS), q(), q());
    sim.connect(r, b, &LinkSpec::new(20_000_000, 8 * MS), q(), q());
    let (drop, dup, delay) = impair;
    sim.set_element(
        r,
        Box::new(Impairment::new(seed, drop, dup, delay, 15 * MS)),
    );
    let cfg = TcpConfig {
        sack,
        timestamps,
        delayed_ack: seed.is_multiple_of(2),
        ..Default::default()
    };
    // The two endpoints as `add_tcp_flow` builds them, with the receiver wrapped.
    let ci = seed.is_multiple_of(3);
    let params = |snd: bool| ConnParams {
        cfg: std::sync::Arc::new(cfg.clone()),
        local_addr: node_addr(if snd { a } else { b }),
        remote_addr: node_addr(if snd { b } else { a }),
        local_port: if snd { 5001 } else { 49152 },
        remote_port: if snd { 49152 } else { 5001 },
        peer_ep: if snd { 1 } else { 0 },
        flow: 0,
        iss: (seed as u32)
            .wrapping_mul(0x9E37_79B9)
            .wrapping_add(snd as u32),
        active_open_at: (snd != ci).then_some(0),
        app_start: 0,
        send_bytes: if snd { Some(size) } else { Some(0) },
        // Odd seeds use the library's NewReno, even ones the reference Reno of the test kit.
        cc: snd.then(|| -> Box<dyn Controller> {
            if seed % 2 == 1 {
                Box::new(NewReno::new(cfg.mss, NewRenoConfig::default()).unwrap())
            } else {
                Box::new(Reno::new(cfg.mss))
            }
        }),
        codec: Box::new(NoEcn),
    };
    let oracle = Rc::new(RefCell::new(Oracle::default()));
    sim.add_endpoint(a, Box::new(TcpConn::new(params(true))));
    sim.add_endpoint(
        b,
        Box::new(Checked {
            inner: TcpConn::new(params(false)),
            irs: None,
            oracle: oracle.clone(),
        }),
    );
    sim.add_flow("f", 0, 1);
    let mut t = 0;
    while t < 600 * SEC && !sim.endpoints.iter().all(|e| e.finished()) {
        t += SEC;
        sim.run_until(t);
    }
    sim.conservation().unwrap();
    let rec = &sim.flow_records()[0];
    let o = oracle.borrow();
    assert!(
        o.violations.is_empty(),
        "seed {seed}: {:?}",
        &o.violations[..1]
    );
    assert_eq!(o.prefix as u64, rec.bytes_delivered.unwrap());
    Outcome {
        delivered: rec.bytes_delivered.unwrap(),
        finished: sim.endpoints.iter().all(|e| e.finished()),
        retransmissions: rec.retransmissions.unwrap(),
        rtos: rec.rtos.unwrap(),
    }
}

fn check_many(sack: bool) {
    let mut total_rtx = 0;
    let mut total_rtos = 0;
    for seed in 0..60u64 {
        // Size not a multiple of the MSS: the last segment is short.
        let size = 150_000 + seed * 137;
        let impair = match seed % 3 {
            0 => (0.05, 0.02, 0.1),
            1 => (0.01, 0.05, 0.3),
            _ => (0.15, 0.0, 0.05),
        };
        let o = run(seed, sack, seed % 4 == 1, size, impair);
        assert_eq!(o.delivered, size, "seed {seed} sack {sack}");
        assert!(o.finished, "seed {seed} sack {sack}: not finished");
        total_rtx += o.retransmissions;
        total_rtos += o.rtos;
    }
    // The impairments really exercised recovery.
    assert!(total_rtx > 500, "retransmissions {total_rtx}");
    assert!(total_rtos > 10, "timeouts {total_rtos}");
}

#[test]
fn integrity_newreno_recovery() {
    check_many(false);
}

#[test]
fn integrity_sack_recovery() {
    check_many(true);
}
