//! What a run needed of its ports' buffer limits (net::port::BufferNeed): the largest
//! backlog-plus-arrival any arrival asked for, against DropTail's overflow arithmetic worked
//! by hand, and the flag that a limit was read for a decision (a marker reading it per packet
//! or at its timer, a discipline that does not say it leaves it alone).

use ecnlab::aqm::{DropReason, DropTail, Limit, Qdisc, Verdict};
use ecnlab::marker::{Marker, PortState, PortView};
use ecnlab::net::{Ctx, Endpoint, LinkSpec, Sim};
use ecnlab::packet::{Packet, PacketPool, PktId};
use ecnlab::scenario;
use ecnlab::stats::FlowRecord;
use ecnlab::time::{Time, MS, NEVER, SEC};
use ecnlab::wire::{Ipv4Repr, UdpRepr};

/// Sends `count` packets of `size` bytes at t = 1 ms.
struct Burst {
    count: usize,
    sent: usize,
    src: u32,
    dst: u32,
    size: u32,
}

impl Endpoint for Burst {
    fn on_packet(&mut self, _: &mut Ctx, _: &Packet) {}
    fn on_timer(&mut self, ctx: &mut Ctx) {
        while self.sent < self.count {
            let ip = Ipv4Repr {
                src: self.src,
                dst: self.dst,
                ttl: 64,
                ..Default::default()
            };
            ctx.send(Packet::new_udp(ip, UdpRepr::default(), self.size - 28));
            self.sent += 1;
        }
    }
    fn deadline(&self) -> Time {
        if self.sent < self.count {
            MS
        } else {
            NEVER
        }
    }
    fn record(&self, _: Time, _: &mut FlowRecord) {}
}

/// A burst of `count` packets of `size` bytes from h0 over a 1 Mb/s link whose h0 port has
/// discipline `q` (and marker `m`): the simulation after a second.
fn burst(q: Box<dyn Qdisc>, m: Option<Box<dyn Marker>>, count: usize, size: u32) -> Sim {
    let mut sim = Sim::new(1);
    let h0 = sim.add_host("h0");
    let h1 = sim.add_host("h1");
    let spare = Box::new(DropTail::new(Limit::Packets(100)));
    let (port, _) = sim.connect(h0, h1, &LinkSpec::new(1_000_000, MS), q, spare);
    if let Some(m) = m {
        sim.set_marker(port, m);
    }
    let (src, dst) = (sim.nodes[h0 as usize].addr, sim.nodes[h1 as usize].addr);
    sim.add_endpoint(
        h0,
        Box::new(Burst {
            count,
            sent: 0,
            src,
            dst,
            size,
        }),
    );
    sim.run_until(SEC);
    sim
}

/// Five 1000-byte packets at once into a 2500-byte DropTail, by hand: the first finds the
/// link idle and nothing queued (it asks for 1000 B, 1 packet) and goes on the wire; the
/// second finds nothing queued (1000 B, 1), the third one packet (2000 B, 2), the fourth and
/// fifth two (3000 B, 3: over 2500, dropped). The record is 3000 B and 3 packets. Under a
/// 3000-byte limit the fourth fits and the fifth asks 4000 B (4); under 4000 B every packet
/// fits and the asks top at 4000 B, which any larger limit leaves as it is.
#[test]
fn drop_tail_records_the_largest_ask_in_bytes() {
    let run = |limit: u64| {
        let sim = burst(Box::new(DropTail::new(Limit::Bytes(limit))), None, 5, 1000);
        let p = &sim.ports[0];
        assert!(p.need.tracks_bytes);
        assert!(
            !p.need.limit_read.get(),
            "DropTail reads no limit beyond the overflow check"
        );
        (
            p.need.pkts,
            p.need.bytes,
            p.counters.drop(DropReason::Overflow),
            sim.delivered,
        )
    };
    // The second packet finds the first on the wire (not queued): 0 + 1000 B.
    assert_eq!(run(2500), (3, 3000, 2, 3));
    assert_eq!(run(3000), (4, 4000, 1, 4));
    assert_eq!(run(4000), (4, 4000, 0, 5));
    // Needed 4000 B at 4000 B: the same run at any larger limit.
    assert_eq!(run(1_000_000), run(4000));
}

/// The same in packets: a 2-packet DropTail takes the first (on the wire) and two queued; the
/// fourth and fifth ask for a third place and are dropped. Bytes are not tracked.
#[test]
fn drop_tail_records_the_largest_ask_in_packets() {
    let sim = burst(Box::new(DropTail::new(Limit::Packets(2))), None, 5, 1000);
    let p = &sim.ports[0];
    assert!(!p.need.tracks_bytes);
    assert_eq!(p.need.pkts, 3);
    assert_eq!(p.counters.drop(DropReason::Overflow), 2);
    let roomy = burst(Box::new(DropTail::new(Limit::Packets(4))), None, 5, 1000);
    assert_eq!(roomy.ports[0].need.pkts, 4);
    assert_eq!(roomy.ports[0].counters.dropped(), 0);
}

/// A marker that reads the port (backlog only, or the limit too) per packet or at its timer.
struct Reader {
    limit_per_packet: bool,
    limit_at_timer: bool,
    timer: Time,
}

impl Marker for Reader {
    fn feedback(&self) -> &'static str {
        "ce"
    }
    fn on_arrival(&mut self, port: &dyn PortState, _: &mut Packet) {
        let _ = port.backlog_pkts();
        if self.limit_per_packet {
            let _ = port.limit();
        }
    }
    fn next_timer(&self) -> Time {
        self.timer
    }
    fn on_timer(&mut self, v: &PortView) {
        let _ = v.backlog_bytes;
        if self.limit_at_timer {
            let _ = v.limit();
        }
        self.timer = NEVER;
    }
}

#[test]
fn a_marker_reading_the_limit_sets_the_flag() {
    for (per_packet, at_timer) in [(false, false), (true, false), (false, true)] {
        let m = Reader {
            limit_per_packet: per_packet,
            limit_at_timer: at_timer,
            timer: 2 * MS,
        };
        let q = Box::new(DropTail::new(Limit::Packets(100)));
        let sim = burst(q, Some(Box::new(m)), 3, 1000);
        assert_eq!(
            sim.ports[0].need.limit_read.get(),
            per_packet || at_timer,
            "limit read per packet {per_packet}, at the timer {at_timer}"
        );
        // The other direction's port has no marker and DropTail: never read.
        assert!(!sim.ports[1].need.limit_read.get());
    }
}

/// A discipline that does not say whether its decisions read its limit counts as reading it.
struct Unsaid(DropTail);

impl Qdisc for Unsaid {
    fn enqueue(&mut self, now: Time, id: PktId, pkt: &mut Packet) -> Verdict {
        self.0.enqueue(now, id, pkt)
    }
    fn dequeue(
        &mut self,
        now: Time,
        pool: &mut PacketPool,
        d: &mut Vec<(PktId, DropReason)>,
    ) -> Option<PktId> {
        self.0.dequeue(now, pool, d)
    }
    fn len(&self) -> usize {
        self.0.len()
    }
    fn bytes(&self) -> u64 {
        self.0.bytes()
    }
    fn limit(&self) -> Limit {
        self.0.limit()
    }
    fn for_each(&self, f: &mut dyn FnMut(PktId)) {
        self.0.for_each(f)
    }
}

#[test]
fn a_discipline_that_does_not_say_reads_its_limit() {
    let sim = burst(
        Box::new(Unsaid(DropTail::new(Limit::Packets(100)))),
        None,
        1,
        1000,
    );
    assert!(sim.ports[0].need.limit_read.get());
}

const DUMBBELL: &str = r#"
duration = "3s"
seed = 1
[topology]
kind = "dumbbell"
left = 1
right = 1
access = { rate = "1Gbps", delay = "1ms" }
bottleneck = { rate = "10Mbps", delay = "10ms" }
bottleneck_queue = QUEUE
MARKER
[[flows]]
src = "l0"
dst = "r0"
ECN
"#;

fn buffers(queue: &str, marker: &str, ecn: &str) -> scenario::RunOutput {
    let text = DUMBBELL
        .replace("QUEUE", queue)
        .replace("MARKER", marker)
        .replace("ECN", ecn);
    scenario::run_toml(&text).unwrap_or_else(|e| panic!("{e}"))
}

fn port<'a>(out: &'a scenario::RunOutput, name: &str) -> &'a scenario::PortBuffer {
    out.meta.buffers.iter().find(|b| b.port == name).unwrap()
}

/// In a run's meta: a TCP flow into a 20-packet DropTail asks for more than 20 (it overflows);
/// RED's thresholds are its own parameters (no read); EECN's router divides by Q_limit (Eq.
/// (1) of its paper), so a port under its marker has its limit read.
#[test]
fn a_runs_meta_says_what_each_port_needed() {
    let out = buffers("{ kind = \"droptail\", limit = 20 }", "", "");
    let b = port(&out, "rl->rr");
    assert_eq!(b.limits, vec![Limit::Packets(20)]);
    assert_eq!(
        b.needed_pkts, 21,
        "slow start overflows the 20-packet buffer"
    );
    assert_eq!(b.needed_bytes, None);
    assert!(!b.limit_read);
    let red = "{ kind = \"red\", limit = 40000, byte_mode = true, min_th = 5, max_th = 15, mean_pkt_size = 1000, ecn = true }";
    let out = buffers(red, "", "ecn = \"ecn\"");
    let b = port(&out, "rl->rr");
    assert_eq!(b.limits, vec![Limit::Bytes(40_000)]);
    assert!(b.needed_bytes.is_some_and(|n| n > 0));
    assert!(!b.limit_read);
    let out = buffers(
        "{ kind = \"red\", limit = 100, min_th = 30, max_th = 60, ecn = true }",
        "bottleneck_marker = { kind = \"eecn\" }",
        "cc = \"eecn\"\necn = \"eecn\"",
    );
    assert!(port(&out, "rl->rr").limit_read);
    assert!(!port(&out, "rr->rl").limit_read);
}
