//! No ECN: Not-ECT on every packet, no ECN flags, no signals.

use crate::cc::Signal;
use crate::packet::Packet;
use crate::tcp::codec::{Codec, Handshake, TcpInfo};
use crate::wire::{Ecn, TcpFlags};

use super::set_flag;

#[derive(Clone, Copy, Debug, Default)]
pub struct NoEcn;

impl Codec for NoEcn {
    fn name(&self) -> &'static str {
        "none"
    }
    fn handshake_out(&mut self, _kind: Handshake, pkt: &mut Packet) {
        pkt.ip.ecn = Ecn::NOT_ECT;
        set_flag(pkt, TcpFlags::ECE | TcpFlags::CWR | TcpFlags::AE, false);
    }
    fn handshake_in(&mut self, _kind: Handshake, _pkt: &Packet) {}
    fn negotiated(&self) -> bool {
        false
    }
    fn data_out(&mut self, pkt: &mut Packet, _retransmission: bool, _info: &TcpInfo) {
        pkt.ip.ecn = Ecn::NOT_ECT;
    }
    fn ack_in(&mut self, _pkt: &Packet, _info: &TcpInfo) -> Option<Signal> {
        None
    }
    fn data_in(&mut self, _pkt: &Packet) -> bool {
        false
    }
    fn ack_out(&mut self, _pkt: &mut Packet) {}
}
