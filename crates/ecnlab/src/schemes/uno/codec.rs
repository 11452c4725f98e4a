//! UNO feedback: the receiver copies the IP-ID and UNO bits of the data it gets into its
//! ACKs; the sender rebuilds the path's highest load level from a block of ACKs that covers
//! every IP-ID residue, and (two bits) the routers' `t_ρ` code from the residues with bit 3
//! set. The idealised VCP3 header skips all that: its exact level is echoed on every ACK.

use super::{t_rho_code, Encoding, NO_ROUTER, OVERLOAD, T_RHO_SET_MS};
use crate::cc::Signal;
use crate::packet::Packet;
use crate::schemes::vcp::codec::LoadSetup;
use crate::tcp::codec::{Codec, TcpInfo};
use crate::time::{Time, MS};
use crate::wire::{Ecn, TcpFlags};
use std::collections::VecDeque;

/// What an ACK tells about the data it covers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Report {
    ident: u16,
    load: bool,
    rtt: bool,
}

impl Report {
    /// Which of two reports an ACK covering both keeps: the higher set load residue, else a
    /// router's RTT code, else the later one.
    fn keep(self, later: Report) -> Report {
        let rank = |r: Report| {
            if r.load {
                (2, r.ident & 0b111)
            } else if r.rtt && r.ident & 0b1000 != 0 {
                (1, 0)
            } else {
                (0, 0)
            }
        };
        if rank(self) > rank(later) {
            self
        } else {
            later
        }
    }
}

/// Full blocks in a row without any router's bit after which a sender that has heard a UNO
/// router on its path concludes the router is gone. A router's level is constant within its
/// load interval, so a router that is there sets one residue of every block that does not
/// straddle one of its level changes; a block that does carries no level and is skipped.
/// Four blocks in a row each straddling a level change need at least three load intervals
/// (≥ 240 ms) to pass in 32 packets: fewer than 8 packets per interval, where the level
/// would be stale anyway.
pub const ROUTER_FORGOTTEN_AFTER: u8 = 4;

/// A block being collected: which residues its ACKs covered and what they said.
#[derive(Clone, Copy, Debug, Default)]
struct Block {
    covered: u8,
    max_level: Option<u8>,
    ce: bool,
    started: Option<Time>,
}

pub struct UnoCodec {
    encoding: Encoding,
    setup: LoadSetup,
    // ---- data sender
    /// Each data segment in flight: its end sequence number (wire space) and IP-ID.
    sent: VecDeque<(u32, u16)>,
    block: Block,
    /// RTT channel: residues 8…15 covered, highest router code seen.
    rtt_covered: u8,
    rtt_max: Option<u8>,
    /// The routers' `t_ρ` code, once learnt.
    t_rho_code: Option<u8>,
    /// The connection's count of loss reductions when last seen: a change means a loss.
    reductions: u32,
    /// Level of the last decision (the idealised header: of the last ACK).
    last_level: Option<u8>,
    /// A UNO router's bit has come back on this path (§II-C: the sender detects UNO routers
    /// by the bits they flip).
    router_heard: bool,
    /// Full blocks in a row without a bit since a router was heard.
    silent_blocks: u8,
    /// Blocks skipped because a heard router's level changed inside them.
    pub skipped_blocks: u64,
    /// Decisions made and the sum of their delays (first covering ACK → decision), seconds.
    pub decisions: u64,
    delay_sum_s: f64,
    // ---- data receiver
    pending: Option<Report>,
    last: Report,
    pending_ce: bool,
    pending_ideal: u8,
    last_ideal: u8,
}

impl UnoCodec {
    pub fn new(encoding: Encoding) -> Self {
        UnoCodec {
            encoding,
            setup: LoadSetup::default(),
            sent: VecDeque::with_capacity(64),
            block: Block::default(),
            rtt_covered: 0,
            rtt_max: None,
            t_rho_code: None,
            reductions: 0,
            last_level: None,
            router_heard: false,
            silent_blocks: 0,
            skipped_blocks: 0,
            decisions: 0,
            delay_sum_s: 0.0,
            pending: None,
            last: Report::default(),
            pending_ce: false,
            pending_ideal: 0,
            last_ideal: 0,
        }
    }

    /// The routers' `t_ρ` the sender learnt, if any (two bits).
    pub fn learnt_t_rho(&self) -> Option<Time> {
        self.t_rho_code
            .map(|c| T_RHO_SET_MS[c as usize] as Time * MS)
    }

    /// Level of the latest decision.
    pub fn level(&self) -> Option<u8> {
        self.last_level
    }

    /// Mean delay from the first ACK of a block to its decision, in seconds.
    pub fn mean_delay_s(&self) -> Option<f64> {
        (self.decisions > 0).then(|| self.delay_sum_s / self.decisions as f64)
    }

    fn forget_block(&mut self) {
        self.sent.clear();
        self.block = Block::default();
        self.rtt_covered = 0;
        self.rtt_max = None;
    }

    /// Loss overrides load: a block that was in flight when the window was reduced for a
    /// loss is discarded (its segments were sent under the old window, and the lost ones
    /// will never be reported).
    fn note_losses(&mut self, info: &TcpInfo) {
        if info.loss_reductions != self.reductions {
            self.reductions = info.loss_reductions;
            self.forget_block();
        }
    }

    /// The code of the RTT this sender tells the routers (§II-B): its minimum RTT, the
    /// flow's RTT without queueing, as the paper's experiments name a flow's RTT ("flows
    /// with RTTs ranging from 40 ms to 156 ms", §IV-C). The smoothed RTT carries the
    /// bottleneck's queue, which moves with the load: with flows whose RTTs straddle the
    /// midpoint of two elements of S it pushed their codes, and the routers' mean with
    /// them, back and forth across it, and `t_ρ` flapped between 80 and 200 ms — against
    /// §III-B's "avoids any fluctuations in t_ρ due to minor variations in flows' RTT".
    fn own_rtt_code(&self, info: &TcpInfo) -> Option<u8> {
        let rtt = if info.min_rtt > 0 {
            info.min_rtt
        } else {
            info.srtt
        };
        (rtt > 0).then(|| t_rho_code(crate::time::to_secs(rtt) * 1e3))
    }

    fn signal(&self, code: u8) -> Signal {
        match self.learnt_t_rho() {
            Some(t_rho) => Signal::LoadInterval { code, t_rho },
            None => Signal::Load(code),
        }
    }

    /// The decision of a full block, or None when the block carries no level: on a path
    /// where a UNO router has been heard, a block without any bit straddled a change of the
    /// router's level (the residue of the old level passed before the change, that of the
    /// new one after it) and says nothing about the load; the controller keeps acting on
    /// the last level, and the next block decides. Only a path that has never set a bit
    /// (or has gone [`ROUTER_FORGOTTEN_AFTER`] blocks without one) has no UNO router.
    fn decide(&mut self, now: Time) -> Option<Signal> {
        let b = std::mem::take(&mut self.block);
        if b.max_level.is_some() {
            self.router_heard = true;
            self.silent_blocks = 0;
        }
        let level = if b.ce {
            OVERLOAD
        } else if let Some(l) = b.max_level {
            l
        } else if self.router_heard && self.silent_blocks + 1 < ROUTER_FORGOTTEN_AFTER {
            self.silent_blocks += 1;
            self.skipped_blocks += 1;
            return None;
        } else {
            self.router_heard = false;
            self.silent_blocks = 0;
            NO_ROUTER
        };
        self.decisions += 1;
        if let Some(t0) = b.started {
            self.delay_sum_s += crate::time::to_secs(now - t0);
        }
        self.last_level = Some(level);
        Some(self.signal(level))
    }
}

impl Codec for UnoCodec {
    fn name(&self) -> &'static str {
        match self.encoding {
            Encoding::OneBit => "uno",
            Encoding::TwoBit => "uno2",
            Encoding::Header => "vcp3",
        }
    }

    crate::tcp::codecs::negotiation_via_setup!();

    fn data_out(&mut self, pkt: &mut Packet, retransmission: bool, info: &TcpInfo) {
        if !self.negotiated() {
            pkt.ip.ecn = Ecn::NOT_ECT;
            return;
        }
        self.note_losses(info);
        let ident = pkt.ip.ident;
        pkt.ip.ecn = match self.encoding {
            Encoding::OneBit | Encoding::Header => Ecn::ECT1,
            Encoding::TwoBit => {
                let own = self.own_rtt_code(info);
                let says = ident & 0b1000 == 0 && Some((ident & 0b111) as u8) == own;
                Ecn(says as u8)
            }
        };
        pkt.meta.ideal_load = 0;
        // Retransmissions count too: their fresh IP-IDs are stamped like any other.
        let _ = retransmission;
        if self.encoding != Encoding::Header {
            if let Some(t) = pkt.tcp() {
                self.sent
                    .push_back((t.seq.wrapping_add(pkt.payload_len), ident));
            }
        }
    }

    fn ack_in(&mut self, pkt: &Packet, info: &TcpInfo) -> Option<Signal> {
        if !self.negotiated() {
            return None;
        }
        self.note_losses(info);
        let t = pkt.tcp()?;
        if self.encoding == Encoding::Header {
            if info.acked_bytes == 0 {
                return None;
            }
            let level = pkt.meta.ideal_load.checked_sub(1)?;
            self.decisions += 1;
            self.last_level = Some(level);
            return Some(Signal::Load(level));
        }
        // Every ACK's report enters the block, duplicates included: behind a hole the
        // receiver reports each arriving packet on a duplicate ACK, and the cumulative ACK
        // that fills the hole covers those packets' residues at once, with one report.
        let ident = pkt.ip.ident;
        let b = &mut self.block;
        if t.flags.has(TcpFlags::ECE) {
            b.max_level = b.max_level.max(Some((ident & 0b111) as u8));
        }
        b.ce |= t.flags.has(TcpFlags::AE);
        if self.encoding == Encoding::TwoBit && t.flags.has(TcpFlags::CWR) && ident & 0b1000 != 0 {
            self.rtt_max = self.rtt_max.max(Some((ident & 0b111) as u8));
        }
        if info.acked_bytes == 0 {
            return None;
        }
        let mut covered = 0u8;
        let mut rtt_covered = 0u8;
        while let Some(&(end, ident)) = self.sent.front() {
            // Wrapping comparison: `end` at or before the cumulative ACK.
            if (t.ack.wrapping_sub(end) as i32) < 0 {
                break;
            }
            self.sent.pop_front();
            covered |= 1 << (ident & 0b111);
            if ident & 0b1000 != 0 {
                rtt_covered |= 1 << (ident & 0b111);
            }
        }
        if covered == 0 {
            return None;
        }
        let b = &mut self.block;
        b.started.get_or_insert(info.now);
        b.covered |= covered;
        if self.encoding == Encoding::TwoBit {
            self.rtt_covered |= rtt_covered;
            if self.rtt_covered == 0xff {
                if let Some(c) = self.rtt_max.take() {
                    self.t_rho_code = Some(c);
                }
                self.rtt_covered = 0;
            }
        }
        if self.block.covered == 0xff {
            self.decide(info.now)
        } else {
            None
        }
    }

    fn data_in(&mut self, pkt: &Packet) -> bool {
        if !self.negotiated() {
            return false;
        }
        let bits = pkt.ip.ecn.bits();
        let r = match self.encoding {
            Encoding::Header => {
                self.pending_ideal = self.pending_ideal.max(pkt.meta.ideal_load);
                self.last_ideal = pkt.meta.ideal_load;
                return false;
            }
            Encoding::OneBit => {
                self.pending_ce |= pkt.ip.ecn == Ecn::CE;
                Report {
                    ident: pkt.ip.ident,
                    load: pkt.ip.ecn == Ecn::ECT0,
                    rtt: false,
                }
            }
            Encoding::TwoBit => Report {
                ident: pkt.ip.ident,
                load: bits & 0b10 != 0,
                rtt: bits & 0b01 != 0,
            },
        };
        self.pending = Some(match self.pending {
            Some(p) => p.keep(r),
            None => r,
        });
        self.last = r;
        false
    }

    fn ack_out(&mut self, pkt: &mut Packet) {
        if !self.negotiated() {
            return;
        }
        if self.encoding == Encoding::Header {
            let l = std::mem::take(&mut self.pending_ideal);
            pkt.meta.ideal_load = if l > 0 { l } else { self.last_ideal };
            return;
        }
        // Only pure ACKs of a receiver carry the report: a data segment's own IP-ID is
        // information for the routers it crosses (a report riding on data is not sent).
        if pkt.payload_len > 0 || (self.pending.is_none() && self.last == Report::default()) {
            return;
        }
        let r = self.pending.take().unwrap_or(self.last);
        let ce = std::mem::take(&mut self.pending_ce);
        pkt.ip.ident = r.ident;
        if let Some(t) = pkt.tcp_mut() {
            t.flags.set(TcpFlags::ECE, r.load);
            t.flags.set(TcpFlags::CWR, r.rtt);
            t.flags.set(TcpFlags::AE, ce);
        }
    }

    fn load_top_code(&self) -> Option<u8> {
        Some(OVERLOAD)
    }

    fn feedback_delay(&self) -> Option<(u64, f64)> {
        Some((self.decisions, self.mean_delay_s().unwrap_or(0.0)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schemes::uno::HIGH;
    use crate::tcp::codec::Handshake;
    use crate::wire::{Ipv4Repr, TcpRepr};

    const MSS: u32 = 1000;

    fn seg(ident: u16, seq: u32, payload: u32, flags: u16) -> Packet {
        Packet::new_tcp(
            Ipv4Repr {
                ident,
                ..Default::default()
            },
            TcpRepr {
                seq,
                flags: TcpFlags(flags),
                ..Default::default()
            },
            payload,
        )
    }

    fn pair(enc: Encoding) -> (UnoCodec, UnoCodec) {
        let (mut a, mut b) = (UnoCodec::new(enc), UnoCodec::new(enc));
        let mut syn = seg(0, 0, 0, TcpFlags::SYN);
        a.handshake_out(Handshake::Syn, &mut syn);
        b.handshake_in(Handshake::Syn, &syn);
        let mut sa = seg(0, 0, 0, TcpFlags::SYN | TcpFlags::ACK);
        b.handshake_out(Handshake::SynAck, &mut sa);
        a.handshake_in(Handshake::SynAck, &sa);
        assert!(a.negotiated() && b.negotiated());
        (a, b)
    }

    /// Drives a sender and a receiver: packets go out with given IP-IDs, a path function
    /// rewrites their ECN field, the receiver ACKs every `per_ack` packets.
    struct Link {
        tx: UnoCodec,
        rx: UnoCodec,
        seq: u32,
        now: Time,
        srtt: Time,
        /// The connection has reduced its window for a loss once.
        after_loss: bool,
    }

    impl Link {
        fn new(enc: Encoding) -> Link {
            let (tx, rx) = pair(enc);
            Link {
                tx,
                rx,
                seq: 1,
                now: 0,
                srtt: 40 * MS,
                after_loss: false,
            }
        }

        fn info(&self, acked: u64, after_loss: bool) -> TcpInfo {
            TcpInfo {
                now: self.now,
                srtt: self.srtt,
                acked_bytes: acked,
                in_recovery: after_loss,
                loss_reductions: after_loss as u32,
                mss: MSS,
                ..Default::default()
            }
        }

        /// Sends one segment per IP-ID through `path`; the receiver ACKs every `per_ack`
        /// arrivals. Returns the signals the sender decoded.
        fn run(
            &mut self,
            idents: &[u16],
            per_ack: usize,
            path: impl Fn(&mut Packet),
        ) -> Vec<Signal> {
            let mut out = Vec::new();
            let mut arrived = 0;
            for &id in idents {
                let mut p = seg(id, self.seq, MSS, TcpFlags::ACK);
                self.seq = self.seq.wrapping_add(MSS);
                let info = self.info(0, self.after_loss);
                self.tx.data_out(&mut p, false, &info);
                path(&mut p);
                self.rx.data_in(&p);
                arrived += 1;
                if arrived % per_ack == 0 {
                    self.now += MS;
                    let mut a = seg(0, 0, 0, TcpFlags::ACK);
                    a.tcp_mut().unwrap().ack = self.seq;
                    self.rx.ack_out(&mut a);
                    let info = self.info((per_ack as u32 * MSS) as u64, self.after_loss);
                    out.extend(self.tx.ack_in(&a, &info));
                }
            }
            out
        }
    }

    /// A 1-bit router at `level`, stamping on residue equality.
    fn router(level: u8) -> impl Fn(&mut Packet) {
        move |p: &mut Packet| {
            if p.ip.ecn == Ecn::ECT1 && (p.ip.ident & 7) as u8 == level {
                p.ip.ecn = Ecn::ECT0;
            }
        }
    }

    #[test]
    fn sequential_ip_ids_decide_every_eight_packets() {
        let mut l = Link::new(Encoding::OneBit);
        let ids: Vec<u16> = (100..132).collect();
        let got = l.run(&ids, 1, router(3));
        assert_eq!(got, vec![Signal::Load(3); 4]);
        assert_eq!(l.tx.decisions, 4);
        // Eight ACKs 1 ms apart: each decision 7 ms after its block's first ACK.
        assert!((l.tx.mean_delay_s().unwrap() - 0.007).abs() < 1e-12);
    }

    #[test]
    fn random_ip_ids_wait_until_every_residue_is_covered() {
        let mut l = Link::new(Encoding::OneBit);
        // Residues 0,1,1,2,3,3,3,4,5,6 and only then 7.
        let ids = [8, 1, 9, 2, 3, 11, 19, 4, 5, 6, 7, 0];
        let got = l.run(&ids, 1, router(5));
        assert_eq!(got, vec![Signal::Load(5)]);
        // The twelfth packet starts the next block.
        assert_eq!(l.tx.block.covered, 1);
    }

    #[test]
    fn delayed_acks_keep_the_highest_of_two_levels() {
        let mut l = Link::new(Encoding::OneBit);
        // Two routers at levels 2 and 6; an ACK every two packets. Residue 2 and 6 share ACKs
        // with 3 and 7: the reports keep the set bits.
        let both = |p: &mut Packet| {
            router(2)(p);
            router(6)(p);
        };
        let got = l.run(&(0..16).collect::<Vec<_>>(), 2, both);
        assert_eq!(got, vec![Signal::Load(6); 2]);
        // Pairs (6, 7) and (2, 3) with the set bit on the first packet of the pair.
        let mut l = Link::new(Encoding::OneBit);
        let ids = [6, 7, 2, 3, 0, 1, 4, 5];
        let got = l.run(&ids, 2, both);
        assert_eq!(got, vec![Signal::Load(6)]);
    }

    #[test]
    fn a_loss_inside_a_block_discards_it() {
        let mut l = Link::new(Encoding::OneBit);
        let r4 = router(4);
        // Eight segments; the fourth (IP-ID 3) is lost.
        let mut arrived = Vec::new();
        for id in 0..8u16 {
            let mut p = seg(id, 1 + id as u32 * MSS, MSS, TcpFlags::ACK);
            l.tx.data_out(&mut p, false, &l.info(0, false));
            r4(&mut p);
            if id != 3 {
                arrived.push(p);
            }
        }
        let ack = |l: &mut Link, p: &Packet, ack: u32, acked: u64, after_loss: bool| {
            l.rx.data_in(p);
            let mut a = seg(0, 0, 0, TcpFlags::ACK);
            a.tcp_mut().unwrap().ack = ack;
            l.rx.ack_out(&mut a);
            l.tx.ack_in(&a, &l.info(acked, after_loss))
        };
        // Three new ACKs, then duplicates while the hole stays.
        for (i, p) in arrived.iter().enumerate() {
            let got = if i < 3 {
                ack(&mut l, p, 1 + (i as u32 + 1) * MSS, MSS as u64, false)
            } else {
                ack(&mut l, p, 1 + 3 * MSS, 0, false)
            };
            assert_eq!(got, None);
        }
        // Fast retransmit: the window is reduced; the retransmission's ACK covers the rest,
        // but the block it would complete predates the reduction and is dropped.
        let mut rtx = seg(8, 1 + 3 * MSS, MSS, TcpFlags::ACK);
        l.tx.data_out(&mut rtx, true, &l.info(0, true));
        assert!(l.tx.sent.len() == 1);
        assert_eq!(ack(&mut l, &rtx, 1 + 8 * MSS, 5 * MSS as u64, true), None);
        assert_eq!(l.tx.decisions, 0);
        // After it, a fresh block decides on its own packets.
        l.seq = 1 + 8 * MSS;
        l.after_loss = true;
        let got = l.run(&(9..17).collect::<Vec<_>>(), 1, router(1));
        assert_eq!(got, vec![Signal::Load(1)]);
    }

    #[test]
    fn reports_on_duplicate_acks_enter_the_block() {
        // IP-IDs 0…7 through a router at level 3; segment 1 is reordered behind 2, 3 and 4,
        // so the reports of 2, 3 and 4 come back on duplicate ACKs and the ACK that fills
        // the hole covers residues 1…4 with segment 1's (unset) report.
        let mut l = Link::new(Encoding::OneBit);
        let r3 = router(3);
        let mut segs = Vec::new();
        for id in 0..8u16 {
            let mut p = seg(id, 1 + id as u32 * MSS, MSS, TcpFlags::ACK);
            l.tx.data_out(&mut p, false, &l.info(0, false));
            r3(&mut p);
            segs.push(p);
        }
        let mut got = Vec::new();
        let mut ack_no = 1;
        for (i, id) in [0usize, 2, 3, 4, 1, 5, 6, 7].into_iter().enumerate() {
            l.rx.data_in(&segs[id]);
            let next = match i {
                0 => 1 + MSS,
                1..=3 => 1 + MSS,
                4 => 1 + 5 * MSS,
                _ => 1 + (id as u32 + 1) * MSS,
            };
            let acked = (next - ack_no) as u64;
            ack_no = next;
            let mut a = seg(0, 0, 0, TcpFlags::ACK);
            a.tcp_mut().unwrap().ack = next;
            l.rx.ack_out(&mut a);
            got.extend(l.tx.ack_in(&a, &l.info(acked, false)));
        }
        // Before: Load(NO_ROUTER) — the only set residue's report had been dropped.
        assert_eq!(got, vec![Signal::Load(3)]);
    }

    #[test]
    fn a_block_without_any_bit_means_no_uno_router_and_ce_means_overload() {
        let mut l = Link::new(Encoding::OneBit);
        let got = l.run(&(0..8).collect::<Vec<_>>(), 1, |_| {});
        assert_eq!(got, vec![Signal::Load(NO_ROUTER)]);
        let legacy = |p: &mut Packet| {
            router(2)(p);
            if p.ip.ident == 12 {
                p.ip.ecn = Ecn::CE;
            }
        };
        let got = l.run(&(8..16).collect::<Vec<_>>(), 1, legacy);
        assert_eq!(got, vec![Signal::Load(OVERLOAD)]);
    }

    /// A 1-bit router whose level is `before` until the packet with IP-ID `change_at`
    /// arrives, and `after` from it on.
    fn changing_router(before: u8, after: u8, change_at: u16) -> impl Fn(&mut Packet) {
        move |p: &mut Packet| {
            let level = if p.ip.ident < change_at {
                before
            } else {
                after
            };
            router(level)(p)
        }
    }

    #[test]
    fn a_level_change_inside_a_block_is_not_read_as_no_router() {
        // Blocks of sequential IP-IDs 7…14, 15…22, 23…30 (residues 7, 0, …, 6). The router
        // goes from level 6 to overload after IP-ID 15 passed: residue 7 passed at level 6,
        // residues 0…6 at level 7, so the second block carries no bit at all.
        let mut l = Link::new(Encoding::OneBit);
        let got = l.run(
            &(7..31).collect::<Vec<_>>(),
            1,
            changing_router(HIGH, OVERLOAD, 16),
        );
        // Before: [Load(6), Load(NO_ROUTER), Load(7)] — the sender grew additively on a
        // router it had just heard, and the decrease came a block late.
        assert_eq!(got, vec![Signal::Load(HIGH), Signal::Load(OVERLOAD)]);
        assert_eq!(l.tx.skipped_blocks, 1);
        assert_eq!(l.tx.decisions, 2);
        // The other way (overload to level 6 between residues 6 and 7): skipped too.
        let mut l = Link::new(Encoding::OneBit);
        let got = l.run(
            &(0..24).collect::<Vec<_>>(),
            1,
            changing_router(OVERLOAD, HIGH, 15),
        );
        assert_eq!(got, vec![Signal::Load(OVERLOAD), Signal::Load(HIGH)]);
    }

    #[test]
    fn a_router_that_stays_silent_for_four_blocks_is_gone() {
        let mut l = Link::new(Encoding::OneBit);
        // Heard at level 2, then the path loses its UNO router.
        let got = l.run(&(0..8).collect::<Vec<_>>(), 1, router(2));
        assert_eq!(got, vec![Signal::Load(2)]);
        let got = l.run(&(8..40).collect::<Vec<_>>(), 1, |_| {});
        assert_eq!(got, vec![Signal::Load(NO_ROUTER)]);
        assert_eq!(l.tx.skipped_blocks, 3);
        // From then on every silent block decides at once.
        let got = l.run(&(40..48).collect::<Vec<_>>(), 1, |_| {});
        assert_eq!(got, vec![Signal::Load(NO_ROUTER)]);
    }

    #[test]
    fn the_rtt_channel_round_trips() {
        let mut l = Link::new(Encoding::TwoBit);
        // The sender's RTT (40 ms) is code 0: it sets the RTT bit on IP-IDs ≡ 0 mod 16.
        let mut p = seg(32, 1, MSS, TcpFlags::ACK);
        l.tx.data_out(&mut p, false, &l.info(0, false));
        assert_eq!(p.ip.ecn.bits(), 0b01);
        let mut p = seg(40, 1, MSS, TcpFlags::ACK);
        l.tx.data_out(&mut p, false, &l.info(0, false));
        assert_eq!(p.ip.ecn.bits(), 0b00);
        // A 2-bit router at load level 4 announcing t_ρ code 2 (400 ms).
        let path = |p: &mut Packet| {
            let r = p.ip.ident & 0b111;
            let mut b = p.ip.ecn.bits();
            if r == 4 {
                b |= 0b10;
            }
            if p.ip.ident & 0b1000 != 0 && r == 2 {
                b |= 0b01;
            }
            p.ip.ecn = Ecn(b);
        };
        let got = l.run(&(0..16).collect::<Vec<_>>(), 1, path);
        // The first block (0…7) decides before the RTT residues are covered; the second
        // (8…15) carries the learnt t_ρ.
        assert_eq!(
            got,
            vec![
                Signal::Load(4),
                Signal::LoadInterval {
                    code: 4,
                    t_rho: 400 * MS
                }
            ]
        );
        assert_eq!(l.tx.learnt_t_rho(), Some(400 * MS));
    }

    #[test]
    fn the_sender_tells_its_rtt_without_the_queue() {
        // A 100 ms path behind a 50 ms queue: the smoothed RTT (150 ms) is nearer 200 ms,
        // the path's RTT nearer 80 ms. The code told is 80 ms (code 0) however the queue
        // moves; before, it followed the smoothed RTT across the 140 ms midpoint.
        let l = Link::new(Encoding::TwoBit);
        let mut tx = l.tx;
        for srtt_ms in [110, 150, 190, 130] {
            let info = TcpInfo {
                srtt: srtt_ms * MS,
                min_rtt: 100 * MS,
                ..Default::default()
            };
            let said: Vec<u16> = (0..16u16)
                .filter(|&id| {
                    let mut p = seg(id, 1, MSS, TcpFlags::ACK);
                    tx.data_out(&mut p, false, &info);
                    p.ip.ecn.bits() & 0b01 != 0
                })
                .collect();
            assert_eq!(said, vec![0], "srtt {srtt_ms} ms");
        }
        // Before the first RTT sample ends there is no minimum: the smoothed RTT stands in.
        let info = TcpInfo {
            srtt: 400 * MS,
            ..Default::default()
        };
        let mut p = seg(2, 1, MSS, TcpFlags::ACK);
        tx.data_out(&mut p, false, &info);
        assert_eq!(p.ip.ecn.bits(), 0b01);
    }

    #[test]
    fn the_idealised_header_is_echoed_on_every_ack() {
        let mut l = Link::new(Encoding::Header);
        let path = |p: &mut Packet| p.meta.ideal_load = 3 + 1;
        let got = l.run(&[0, 1, 2], 1, path);
        assert_eq!(got, vec![Signal::Load(3); 3]);
    }
}
