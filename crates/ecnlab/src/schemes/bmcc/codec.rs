//! BMCC feedback: data goes ECT(0); the receiver copies each data packet's IP-ID and mark
//! into a pure ACK (IP-ID field, ECE, and CWR saying "a report is here"); the sender feeds
//! the reports to [`Adpm`] and signals the bounds with every ACK of new data.

use super::{probe_threshold, Adpm};
use crate::cc::Signal;
use crate::packet::Packet;
use crate::schemes::vcp::codec::LoadSetup;
use crate::tcp::codec::{Codec, TcpInfo};
use crate::wire::{Ecn, TcpFlags};

/// One data packet's probe: its IP-ID and whether it arrived marked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Report {
    ident: u16,
    marked: bool,
}

#[derive(Default)]
pub struct BmccCodec {
    setup: LoadSetup,
    // ---- data sender
    adpm: Adpm,
    /// Reports received.
    pub reports: u64,
    // ---- data receiver
    pending: Option<Report>,
    /// Which of a marked and an unmarked report the next ACK keeps.
    keep_marked: bool,
}

impl BmccCodec {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn estimate(&self) -> Adpm {
        self.adpm
    }

    /// The report an ACK covering `a` then `b` carries: the one that bounds the load more
    /// tightly, and when they bound it from both sides, each side in turn.
    fn keep(&mut self, a: Report, b: Report) -> Report {
        let (ta, tb) = (probe_threshold(a.ident), probe_threshold(b.ident));
        match (a.marked, b.marked) {
            (true, true) => {
                if ta > tb {
                    a
                } else {
                    b
                }
            }
            (false, false) => {
                if ta < tb {
                    a
                } else {
                    b
                }
            }
            _ => {
                self.keep_marked = !self.keep_marked;
                if a.marked == self.keep_marked {
                    a
                } else {
                    b
                }
            }
        }
    }
}

impl Codec for BmccCodec {
    fn name(&self) -> &'static str {
        "bmcc"
    }

    crate::tcp::codecs::negotiation_via_setup!();

    fn data_out(&mut self, pkt: &mut Packet, _retransmission: bool, _info: &TcpInfo) {
        pkt.ip.ecn = if self.negotiated() {
            Ecn::ECT0
        } else {
            Ecn::NOT_ECT
        };
    }

    fn ack_in(&mut self, pkt: &Packet, info: &TcpInfo) -> Option<Signal> {
        if !self.negotiated() {
            return None;
        }
        let t = pkt.tcp()?;
        if t.flags.has(TcpFlags::CWR) {
            self.adpm
                .observe(probe_threshold(pkt.ip.ident), t.flags.has(TcpFlags::ECE));
            self.reports += 1;
        }
        if info.acked_bytes == 0 {
            return None;
        }
        let (low, high) = self.adpm.load_bounds();
        Some(Signal::LoadFactor {
            low_milli: (low * 1e3) as u32,
            high_milli: (high * 1e3).ceil() as u32,
        })
    }

    fn data_in(&mut self, pkt: &Packet) -> bool {
        if self.negotiated() && pkt.ip.ecn != Ecn::NOT_ECT {
            let r = Report {
                ident: pkt.ip.ident,
                marked: pkt.ip.ecn == Ecn::CE,
            };
            self.pending = Some(match self.pending {
                Some(p) => self.keep(p, r),
                None => r,
            });
        }
        false
    }

    fn ack_out(&mut self, pkt: &mut Packet) {
        // Only pure ACKs carry a report: a data segment's own IP-ID is a probe for the routers
        // it crosses.
        if !self.negotiated() || pkt.payload_len > 0 {
            return;
        }
        let r = self.pending.take();
        if let Some(r) = r {
            pkt.ip.ident = r.ident;
        }
        if let Some(t) = pkt.tcp_mut() {
            t.flags.set(TcpFlags::CWR, r.is_some());
            t.flags.set(TcpFlags::ECE, r.is_some_and(|r| r.marked));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::{Ipv4Repr, TcpRepr};

    fn negotiated() -> BmccCodec {
        let mut c = BmccCodec::new();
        c.setup = LoadSetup::done();
        c
    }

    fn data(ident: u16, ecn: Ecn) -> Packet {
        Packet::new_tcp(
            Ipv4Repr {
                ecn,
                ident,
                ..Default::default()
            },
            TcpRepr::default(),
            960,
        )
    }

    fn ack_of(rx: &mut BmccCodec) -> Packet {
        let mut a = data(9999, Ecn::NOT_ECT);
        a.payload_len = 0;
        rx.ack_out(&mut a);
        a
    }

    fn report(a: &Packet) -> Option<(u16, bool)> {
        let f = a.tcp().unwrap().flags;
        f.has(TcpFlags::CWR)
            .then(|| (a.ip.ident, f.has(TcpFlags::ECE)))
    }

    #[test]
    fn the_receiver_reports_the_most_telling_probe() {
        let mut rx = negotiated();
        // One segment per ACK: its own report.
        rx.data_in(&data(1, Ecn::CE));
        assert_eq!(report(&ack_of(&mut rx)), Some((1, true)));
        // No new data: no report.
        assert_eq!(report(&ack_of(&mut rx)), None);
        // Two marked: the higher threshold (IP-ID 1 probes 0x8000, 2 probes 0x4000).
        rx.data_in(&data(2, Ecn::CE));
        rx.data_in(&data(1, Ecn::CE));
        assert_eq!(report(&ack_of(&mut rx)), Some((1, true)));
        // Two unmarked: the lower.
        rx.data_in(&data(2, Ecn::ECT0));
        rx.data_in(&data(1, Ecn::ECT0));
        assert_eq!(report(&ack_of(&mut rx)), Some((2, false)));
        // Marked and unmarked: each in turn.
        let mut kept = Vec::new();
        for _ in 0..4 {
            rx.data_in(&data(2, Ecn::CE));
            rx.data_in(&data(1, Ecn::ECT0));
            kept.push(report(&ack_of(&mut rx)).unwrap().1);
        }
        assert_eq!(kept, [true, false, true, false]);
        // A data segment carries no report.
        rx.data_in(&data(3, Ecn::CE));
        let mut d = data(77, Ecn::ECT0);
        rx.ack_out(&mut d);
        assert_eq!(d.ip.ident, 77);
    }

    #[test]
    fn the_sender_bounds_the_load_from_the_reports() {
        let mut tx = negotiated();
        let info = TcpInfo {
            acked_bytes: 960,
            ..Default::default()
        };
        let mut d = data(5, Ecn::NOT_ECT);
        tx.data_out(&mut d, false, &info);
        assert_eq!(d.ip.ecn, Ecn::ECT0);
        // Load 0.9 (0x7333 units): IP-ID 1 (threshold 1.0) unmarked, 2 (0.5) marked,
        // 3 (1.5) unmarked.
        let mut rx = negotiated();
        let mut last = None;
        for (ident, ecn) in [(1u16, Ecn::ECT0), (2, Ecn::CE), (3, Ecn::ECT0)] {
            rx.data_in(&data(ident, ecn));
            last = tx.ack_in(&ack_of(&mut rx), &info);
        }
        assert_eq!(
            last,
            Some(Signal::LoadFactor {
                low_milli: 500,
                high_milli: 1001
            })
        );
        assert_eq!(tx.reports, 3);
    }
}
