//! The path most scheme tests run on: `s —100 Mb/s, 1 ms— r1 —bottleneck— r2 —100 Mb/s,
//! 1 ms— d`, every queue but the bottleneck's a 1000-packet DropTail.

use crate::aqm::{DropTail, Limit, Qdisc};
use crate::net::{LinkSpec, NodeId, PortId, Sim};
use crate::time::MS;

pub(crate) struct Line {
    pub s: NodeId,
    pub d: NodeId,
    /// r1's port towards r2.
    pub bottleneck: PortId,
}

pub(crate) fn droptail(packets: u32) -> Box<dyn Qdisc> {
    Box::new(DropTail::new(Limit::Packets(packets)))
}

pub(crate) fn line(sim: &mut Sim, bottleneck: &LinkSpec, queue: Box<dyn Qdisc>) -> Line {
    let (s, r1, r2, d) = (
        sim.add_host("s"),
        sim.add_router("r1"),
        sim.add_router("r2"),
        sim.add_host("d"),
    );
    let access = LinkSpec::new(100_000_000, MS);
    sim.connect(s, r1, &access, droptail(1000), droptail(1000));
    let (bottleneck, _) = sim.connect(r1, r2, bottleneck, queue, droptail(1000));
    sim.connect(r2, d, &access, droptail(1000), droptail(1000));
    Line { s, d, bottleneck }
}

/// [`line`] with two senders: `s1`, `s2 —100 Mb/s, 1 ms— r1`.
pub(crate) struct Fork {
    pub s1: NodeId,
    pub s2: NodeId,
    pub d: NodeId,
    /// r1's port towards r2, and r2's towards d.
    pub bottleneck: PortId,
    pub egress: PortId,
}

pub(crate) fn fork(sim: &mut Sim, bottleneck: &LinkSpec, queue: Box<dyn Qdisc>) -> Fork {
    let (s1, s2, r1, r2, d) = (
        sim.add_host("s1"),
        sim.add_host("s2"),
        sim.add_router("r1"),
        sim.add_router("r2"),
        sim.add_host("d"),
    );
    let access = LinkSpec::new(100_000_000, MS);
    sim.connect(s1, r1, &access, droptail(1000), droptail(1000));
    sim.connect(s2, r1, &access, droptail(1000), droptail(1000));
    let (bottleneck, _) = sim.connect(r1, r2, bottleneck, queue, droptail(1000));
    let (egress, _) = sim.connect(r2, d, &access, droptail(1000), droptail(1000));
    Fork {
        s1,
        s2,
        d,
        bottleneck,
        egress,
    }
}

/// What [`two_flows`] measured.
pub(crate) struct TwoFlows {
    /// Bottleneck busy fraction from 10 s to 40 s.
    pub busy: f64,
    /// Bottleneck drops in the first 10 s, and after.
    pub start_drops: u64,
    pub drops: u64,
    /// Goodput of each flow from 10 s to 40 s, bits per second.
    pub goodput: [f64; 2],
}

impl TwoFlows {
    pub fn jain(&self) -> f64 {
        let [a, b] = self.goodput;
        (a + b).powi(2) / (2.0 * (a * a + b * b))
    }

    /// After the start: the link more than 80 % busy, no drop, Jain's index above 0.8.
    pub fn assert_full_lossless_and_shared(&self) {
        eprintln!(
            "busy {:.3} drops {} then {} goodput {:.2}/{:.2} Mb/s",
            self.busy,
            self.start_drops,
            self.drops,
            self.goodput[0] / 1e6,
            self.goodput[1] / 1e6
        );
        assert!(self.busy > 0.8, "busy {}", self.busy);
        assert_eq!(self.drops, 0);
        assert!(self.jain() > 0.8, "Jain {}", self.jain());
    }
}

/// Two bulk TCP flows from two hosts through `s_i —100 Mb/s, 1 ms— r1 —10 Mb/s, 18 ms— r2
/// —100 Mb/s, 1 ms— d` (40 ms RTT, a 50-packet DropTail bottleneck: one BDP) under
/// `marker`, the second starting 5 s after the first, an ACK per segment; 40 s.
pub(crate) fn two_flows(
    marker: Box<dyn crate::marker::Marker>,
    flow: impl Fn(
        u32,
    ) -> (
        Box<dyn crate::cc::Controller>,
        Box<dyn crate::tcp::codec::Codec>,
        Box<dyn crate::tcp::codec::Codec>,
    ),
) -> TwoFlows {
    use crate::tcp::{add_tcp_flow, TcpConfig, TcpFlowSpec};
    use crate::time::SEC;
    let mut sim = Sim::new(5);
    let Fork {
        s1,
        s2,
        d,
        bottleneck,
        ..
    } = fork(&mut sim, &LinkSpec::new(10_000_000, 18 * MS), droptail(50));
    sim.set_marker(bottleneck, marker);
    for (name, src, start) in [("a", s1, 0), ("b", s2, 5 * SEC)] {
        let config = TcpConfig {
            initial_window: 2,
            delayed_ack: false,
            ..Default::default()
        };
        let (cc, tx, rx) = flow(config.mss);
        let spec = TcpFlowSpec {
            name: name.into(),
            src,
            dst: d,
            size: None,
            start,
            client_initiated: false,
            config,
        };
        add_tcp_flow(&mut sim, &spec, cc, tx, rx).unwrap();
    }
    let delivered = |sim: &Sim| -> Vec<u64> {
        sim.flow_records()
            .iter()
            .map(|f| f.bytes_delivered.unwrap_or(0))
            .collect()
    };
    sim.run_until(10 * SEC);
    let c = &sim.ports[bottleneck as usize].counters;
    let (busy0, start_drops) = (c.busy_time, c.dropped());
    let delivered0 = delivered(&sim);
    sim.run_until(40 * SEC);
    sim.conservation().unwrap();
    let delivered1 = delivered(&sim);
    let c = &sim.ports[bottleneck as usize].counters;
    TwoFlows {
        busy: (c.busy_time - busy0) as f64 / (30 * SEC) as f64,
        start_drops,
        drops: c.dropped() - start_drops,
        goodput: [0, 1].map(|i| (delivered1[i] - delivered0[i]) as f64 * 8.0 / 30.0),
    }
}
