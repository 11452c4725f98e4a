use super::*;
use crate::packet::{emit_packet, parse_packet};
use crate::scenario::{build_for_emulation, parse_toml};
use crate::time::MS;
use crate::wire::{Ecn, Ipv4Repr, TcpFlags, TcpRepr};
use std::collections::VecDeque;

/// A scripted clock and taps: packets appear at given times, the clock advances 1 µs per
/// reading (time passes while the forwarder works) and jumps when it waits.
struct ScriptIo {
    now: u64,
    inbox: Vec<VecDeque<(u64, Vec<u8>)>>,
    sent: Vec<(u64, usize, Vec<u8>)>,
    fail_sends: bool,
}

impl ScriptIo {
    fn new(taps: usize) -> Self {
        ScriptIo {
            now: 0,
            inbox: vec![VecDeque::new(); taps],
            sent: Vec::new(),
            fail_sends: false,
        }
    }
}

impl Io for ScriptIo {
    fn recv(&mut self, tap: usize, buf: &mut [u8]) -> std::io::Result<Option<usize>> {
        match self.inbox[tap].front() {
            Some((at, _)) if *at <= self.now => {
                let (_, b) = self.inbox[tap].pop_front().unwrap();
                buf[..b.len()].copy_from_slice(&b);
                Ok(Some(b.len()))
            }
            _ => Ok(None),
        }
    }
    fn send(&mut self, tap: usize, bytes: &[u8]) -> std::io::Result<()> {
        if self.fail_sends {
            return Err(std::io::Error::other("full"));
        }
        self.sent.push((self.now, tap, bytes.to_vec()));
        Ok(())
    }
    fn now_ns(&mut self) -> u64 {
        self.now += 1_000;
        self.now
    }
    fn wait(&mut self, until_ns: u64) {
        let next_in = self
            .inbox
            .iter()
            .filter_map(|q| q.front().map(|(t, _)| *t))
            .min()
            .unwrap_or(u64::MAX);
        self.now = self.now.max(until_ns.min(next_in));
    }
}

/// h0 —10 Mb/s, 5 ms— r —10 Mb/s, 5 ms— h1; the port r->h1 marks every ECT packet CE.
const LINE: &str = r#"
duration = "1s"
[topology]
kind = "explicit"
nodes = [{ name = "h0", kind = "host" }, { name = "r", kind = "router" }, { name = "h1", kind = "host" }]
links = [
  { a = "h0", b = "r", rate = "10Mbps", delay = "5ms" },
  { a = "r", b = "h1", rate = "10Mbps", delay = "5ms" },
]
[[ports]]
port = "r->h1"
marker = { kind = "step", k = 0 }
[[flows]]
src = "h0"
dst = "h1"
cc = "cubic"
ecn = "ecn"
"#;

fn forwarder(text: &str) -> Forwarder<ScriptIo> {
    let s = parse_toml(text).unwrap();
    let (built, plan) = build_for_emulation(&s, 1, None).unwrap();
    assert_eq!(plan.len(), 1);
    let hosts: Vec<NodeId> = (0..built.sim.nodes.len() as NodeId)
        .filter(|&n| built.sim.nodes[n as usize].is_host)
        .collect();
    let io = ScriptIo::new(hosts.len());
    Forwarder::new(built.sim, io, hosts)
}

fn segment(src: u32, dst: u32, seq: u32, payload: usize) -> Vec<u8> {
    let ip = Ipv4Repr {
        src,
        dst,
        ecn: Ecn::ECT0,
        ident: seq as u16,
        ttl: 64,
        ..Default::default()
    };
    let t = TcpRepr {
        src_port: 40000,
        dst_port: 5001,
        seq,
        flags: TcpFlags(TcpFlags::ACK),
        window: 1000,
        ..Default::default()
    };
    let mut b = Vec::new();
    emit_packet(&Packet::new_tcp(ip, t, payload as u32), &mut b);
    // A real payload, which the forwarder must carry untouched.
    let n = b.len();
    for (i, x) in b[n - payload..].iter_mut().enumerate() {
        *x = (i * 31 + seq as usize) as u8;
    }
    // The TCP checksum over the new payload.
    let tcp_off = 20;
    b[tcp_off + 16..tcp_off + 18].fill(0);
    let pseudo = wire::checksum::pseudo_header_v4(src, dst, 6, (n - tcp_off) as u16);
    let c = wire::checksum::finish(wire::checksum::combine(
        pseudo,
        wire::checksum::sum(&b[tcp_off..]),
    ));
    b[tcp_off + 16..tcp_off + 18].copy_from_slice(&c.to_be_bytes());
    b
}

/// A 1040-byte packet crosses two 10 Mb/s hops of 5 ms: it leaves for h1 at 2 × 832 µs +
/// 10 ms (to within the forwarder's polling step), with TTL 63, CE from the marker, valid
/// checksums and its payload intact.
#[test]
fn a_packet_crosses_the_simulated_line_in_its_simulated_time() {
    let mut f = forwarder(LINE);
    let (h0, h1) = (f.sim.nodes[0].addr, f.sim.nodes[2].addr);
    let pkt = segment(h0, h1, 7, 1000);
    f.io.inbox[0].push_back((0, pkt.clone()));
    f.run(0, 100 * MS, &mut || false).unwrap();
    assert_eq!(f.io.sent.len(), 1);
    let (at, tap, bytes) = &f.io.sent[0];
    assert_eq!(*tap, 1);
    let want = 2 * 832 * 1000 + 10_000_000;
    assert!(
        *at >= want && *at <= want + 25_000,
        "left at {at} ns, want {want}"
    );
    let p = parse_packet(bytes).expect("checksums valid");
    assert_eq!(p.ip.ttl, 63);
    assert_eq!(p.ip.ecn, Ecn::CE);
    assert_eq!(bytes.len(), pkt.len());
    assert_eq!(bytes[bytes.len() - 1000..], pkt[pkt.len() - 1000..]);
    assert_eq!(f.stats.tx_pkts, 1);
    assert_eq!(
        f.sim.ports[2].counters.marked[3], 1,
        "r->h1 counted its mark"
    );
    f.sim.conservation().unwrap();
    assert_eq!(f.sim.pool.live(), 0);
}

/// Ten back-to-back packets leave at the bottleneck's rate: 832 µs apart.
#[test]
fn a_burst_leaves_at_the_link_rate() {
    let mut f = forwarder(LINE);
    let (h0, h1) = (f.sim.nodes[0].addr, f.sim.nodes[2].addr);
    for k in 0..10 {
        f.io.inbox[0].push_back((0, segment(h0, h1, k * 1000, 1000)));
    }
    f.run(0, 100 * MS, &mut || false).unwrap();
    assert_eq!(f.io.sent.len(), 10);
    for w in f.io.sent.windows(2) {
        let gap = w[1].0 as i64 - w[0].0 as i64;
        assert!((gap - 832_000).abs() <= 25_000, "gap {gap} ns");
    }
    // In order, and each still its own packet.
    for (k, (_, _, b)) in f.io.sent.iter().enumerate() {
        assert_eq!(parse_packet(b).unwrap().tcp().unwrap().seq, k as u32 * 1000);
    }
}

#[test]
fn bad_packets_are_counted_and_dropped() {
    let mut f = forwarder(LINE);
    let (h0, h1) = (f.sim.nodes[0].addr, f.sim.nodes[2].addr);
    let good = segment(h0, h1, 1, 100);
    let mut bad_sum = good.clone();
    let last = bad_sum.len() - 1;
    bad_sum[last] ^= 0xff;
    let mut ipv6 = good.clone();
    ipv6[0] = 0x60;
    let foreign = segment(h1, h0, 1, 100); // h1's address, sent from h0's tap
    let nowhere = segment(h0, 0x0b00_0001, 1, 100);
    let truncated = good[..good.len() - 10].to_vec();
    let mut icmp = good.clone();
    icmp[9] = 1;
    icmp[10..12].fill(0);
    let c = wire::checksum::finish(wire::checksum::sum(&icmp[..20]));
    icmp[10..12].copy_from_slice(&c.to_be_bytes());
    for b in [bad_sum, ipv6, foreign, nowhere, truncated, icmp] {
        f.io.inbox[0].push_back((0, b));
    }
    f.run(0, 50 * MS, &mut || false).unwrap();
    assert!(f.io.sent.is_empty());
    for (why, n) in [
        (RxDrop::Checksum, 1),
        (RxDrop::NotIpv4, 1),
        (RxDrop::ForeignSource, 1),
        (RxDrop::NoRoute, 1),
        (RxDrop::Truncated, 1),
        (RxDrop::Protocol, 1),
    ] {
        assert_eq!(f.stats.rx_dropped(why), n, "{why:?}");
    }
    assert_eq!(f.sim.pool.allocated, 0);
}

/// A device that refuses a packet costs that packet only; the count says so.
#[test]
fn a_refused_send_is_counted() {
    let mut f = forwarder(LINE);
    f.io.fail_sends = true;
    let (h0, h1) = (f.sim.nodes[0].addr, f.sim.nodes[2].addr);
    f.io.inbox[0].push_back((0, segment(h0, h1, 1, 100)));
    f.run(0, 50 * MS, &mut || false).unwrap();
    assert_eq!((f.stats.tx_failed, f.stats.tx_pkts), (1, 0));
    assert_eq!(f.sim.pool.live(), 0);
}

/// The stop condition ends the run early; the clock never runs past the end.
#[test]
fn stop_ends_the_run() {
    let mut f = forwarder(LINE);
    let mut calls = 0;
    f.run(0, 1000 * MS, &mut || {
        calls += 1;
        calls > 3
    })
    .unwrap();
    // Asked every 20 ms: the fourth answer comes about 60 ms in.
    assert!(f.io.now < 100_000_000, "stopped at {} ns", f.io.now);
}

#[test]
fn udp_flows_are_refused_in_emulation() {
    let text = LINE.replace(
        "cc = \"cubic\"\necn = \"ecn\"",
        "kind = \"udp\"\nrate = \"1Mbps\"",
    );
    let s = parse_toml(&text).unwrap();
    let e = build_for_emulation(&s, 1, None).err().unwrap();
    assert_eq!(e.path, "flows[0].kind");
}
