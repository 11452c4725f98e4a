//! DCTCP-style step marking (RFC 8257 §3.1): CE on every ECT packet that finds at least K
//! packets (or bytes) queued on arrival.

use super::{Marker, PortState};
use crate::packet::Packet;
use crate::wire::Ecn;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StepConfig {
    /// Threshold K.
    pub k: u64,
    /// K in bytes rather than packets.
    #[serde(default)]
    pub bytes: bool,
}

pub struct StepMarker {
    cfg: StepConfig,
}

impl StepMarker {
    pub fn new(cfg: StepConfig) -> Self {
        StepMarker { cfg }
    }
}

impl Marker for StepMarker {
    fn feedback(&self) -> &'static str {
        "ce"
    }

    fn fits(&self, limit: crate::aqm::Limit) -> Result<(), String> {
        use crate::aqm::Limit;
        let (cap, unit) = match (limit, self.cfg.bytes) {
            (Limit::Packets(n), false) => (n as u64, "packets"),
            (Limit::Bytes(b), true) => (b, "bytes"),
            _ => return Ok(()),
        };
        if self.cfg.k >= cap {
            return Err(format!(
                "k: {} {unit} is not below the buffer limit ({cap} {unit}): a packet would be dropped before it could be marked",
                self.cfg.k
            ));
        }
        Ok(())
    }

    #[inline]
    fn on_arrival(&mut self, v: &dyn PortState, pkt: &mut Packet) {
        if !pkt.ip.ecn.is_ect() {
            return;
        }
        let q = if self.cfg.bytes {
            v.backlog_bytes()
        } else {
            v.backlog_pkts() as u64
        };
        // The marker owns the decision for ECT packets: the discipline below only limits.
        pkt.meta.marker_owned = true;
        if q >= self.cfg.k {
            pkt.ip.ecn = Ecn::CE;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aqm::Limit;
    use crate::marker::PortView;
    use crate::wire::{Ipv4Repr, UdpRepr};

    #[test]
    fn marks_at_and_above_k_only_ect() {
        let mut m = StepMarker::new(StepConfig {
            k: 20,
            bytes: false,
        });
        let view = |q| PortView::new(0, q, q as u64 * 1000, 1, Limit::Packets(100), 0);
        let mk = |ecn| {
            Packet::new_udp(
                Ipv4Repr {
                    ecn,
                    ..Default::default()
                },
                UdpRepr::default(),
                10,
            )
        };
        let mut p = mk(Ecn::ECT0);
        m.on_arrival(&view(19), &mut p);
        assert_eq!(p.ip.ecn, Ecn::ECT0);
        m.on_arrival(&view(20), &mut p);
        assert_eq!(p.ip.ecn, Ecn::CE);
        let mut n = mk(Ecn::NOT_ECT);
        m.on_arrival(&view(50), &mut n);
        assert_eq!(n.ip.ecn, Ecn::NOT_ECT);
        assert!(!n.meta.marker_owned);
    }
}
