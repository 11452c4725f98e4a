//! MLCP feedback: data carries the sender's smoothed RTT and collects the path's highest
//! level with its router's `t_p`; the receiver echoes the highest of the segments an ACK
//! covers; the sender turns each ACK of new data into [`Signal::LoadInterval`].

use super::TOP_CODE;
use crate::cc::Signal;
use crate::marker::load::INTERVAL_SET_MS;
use crate::packet::Packet;
use crate::schemes::vcp::codec::LoadSetup;
use crate::tcp::codec::{Codec, TcpInfo};
use crate::time::{Time, MS, US};
use crate::wire::Ecn;

/// The level and interval fields of one packet (0: absent).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Fields {
    load: u8,
    interval: u8,
}

impl Fields {
    fn of(pkt: &Packet) -> Fields {
        if pkt.ip.ecn == Ecn::CE {
            // A classic ECN router on the path: the deepest overload.
            return Fields {
                load: TOP_CODE,
                interval: pkt.meta.ideal_interval,
            };
        }
        Fields {
            load: pkt.meta.ideal_load,
            interval: pkt.meta.ideal_interval,
        }
    }

    /// The fields an ACK covering both reports: the higher level.
    fn max(self, other: Fields) -> Fields {
        if other.load >= self.load {
            other
        } else {
            self
        }
    }
}

#[derive(Default)]
pub struct MlcpCodec {
    setup: LoadSetup,
    // ---- data receiver
    pending: Option<Fields>,
    last: Fields,
}

impl MlcpCodec {
    pub fn new() -> Self {
        Self::default()
    }
}

impl Codec for MlcpCodec {
    fn name(&self) -> &'static str {
        "mlcp"
    }

    crate::tcp::codecs::negotiation_via_setup!();

    fn data_out(&mut self, pkt: &mut Packet, _retransmission: bool, info: &TcpInfo) {
        pkt.meta.ideal_load = 0;
        pkt.meta.ideal_interval = 0;
        if !self.negotiated() {
            pkt.ip.ecn = Ecn::NOT_ECT;
            return;
        }
        pkt.ip.ecn = Ecn::ECT1;
        pkt.meta.rtt_hint_us = (info.srtt / US).min(u32::MAX as Time) as u32;
    }

    fn ack_in(&mut self, pkt: &Packet, info: &TcpInfo) -> Option<Signal> {
        if !self.negotiated() || info.acked_bytes == 0 {
            return None;
        }
        let code = pkt.meta.ideal_load.min(TOP_CODE);
        let interval = pkt.meta.ideal_interval as usize;
        Some(match INTERVAL_SET_MS.get(interval.wrapping_sub(1)) {
            Some(&ms) if code > 0 => Signal::LoadInterval {
                code,
                t_rho: ms as Time * MS,
            },
            _ => Signal::Load(code),
        })
    }

    fn data_in(&mut self, pkt: &Packet) -> bool {
        if self.negotiated() {
            let f = Fields::of(pkt);
            self.pending = Some(self.pending.map_or(f, |p| p.max(f)));
            self.last = f;
        }
        false
    }

    fn ack_out(&mut self, pkt: &mut Packet) {
        if !self.negotiated() {
            return;
        }
        let f = self.pending.take().unwrap_or(self.last);
        pkt.meta.ideal_load = f.load;
        pkt.meta.ideal_interval = f.interval;
    }

    fn is_overload(&self, code: u8) -> bool {
        matches!(super::law_of(code), Some(super::Law::Md { .. }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::{Ipv4Repr, TcpRepr};

    fn negotiated() -> MlcpCodec {
        let mut c = MlcpCodec::new();
        c.setup = LoadSetup::done();
        c
    }

    fn data(load: u8, interval: u8, ecn: Ecn) -> Packet {
        let mut p = Packet::new_tcp(
            Ipv4Repr {
                ecn,
                ..Default::default()
            },
            TcpRepr::default(),
            960,
        );
        p.meta.ideal_load = load;
        p.meta.ideal_interval = interval;
        p
    }

    #[test]
    fn the_receiver_echoes_the_highest_level_covered() {
        let mut rx = negotiated();
        rx.data_in(&data(3, 2, Ecn::ECT1));
        rx.data_in(&data(12, 1, Ecn::ECT1));
        rx.data_in(&data(5, 4, Ecn::ECT1));
        let mut ack = data(0, 0, Ecn::NOT_ECT);
        rx.ack_out(&mut ack);
        assert_eq!((ack.meta.ideal_load, ack.meta.ideal_interval), (12, 1));
        // An ACK that covers nothing new repeats the last segment's fields.
        let mut ack = data(0, 0, Ecn::NOT_ECT);
        rx.ack_out(&mut ack);
        assert_eq!((ack.meta.ideal_load, ack.meta.ideal_interval), (5, 4));
        // CE from a classic ECN router is the deepest overload.
        rx.data_in(&data(2, 2, Ecn::CE));
        let mut ack = data(0, 0, Ecn::NOT_ECT);
        rx.ack_out(&mut ack);
        assert_eq!(ack.meta.ideal_load, TOP_CODE);
    }

    #[test]
    fn the_sender_decodes_level_and_interval() {
        let mut tx = negotiated();
        let info = TcpInfo {
            acked_bytes: 960,
            srtt: 80 * MS,
            ..Default::default()
        };
        let mut d = data(7, 7, Ecn::NOT_ECT);
        tx.data_out(&mut d, false, &info);
        assert_eq!(d.ip.ecn, Ecn::ECT1);
        assert_eq!((d.meta.ideal_load, d.meta.ideal_interval), (0, 0));
        assert_eq!(d.meta.rtt_hint_us, 80_000);
        assert_eq!(
            tx.ack_in(&data(11, 3, Ecn::NOT_ECT), &info),
            Some(Signal::LoadInterval {
                code: 11,
                t_rho: 400 * MS
            })
        );
        assert_eq!(
            tx.ack_in(&data(0, 0, Ecn::NOT_ECT), &info),
            Some(Signal::Load(0))
        );
        let dup = TcpInfo {
            acked_bytes: 0,
            ..info
        };
        assert_eq!(tx.ack_in(&data(11, 3, Ecn::NOT_ECT), &dup), None);
        assert!(tx.is_overload(11) && tx.is_overload(TOP_CODE) && !tx.is_overload(10));
    }
}
