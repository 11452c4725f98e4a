//! Round trips of simulated packets through real bytes, cross-checked with an independent
//! parser and writer (etherparse).

use ecnlab::packet::{emit_packet, parse_packet, Packet, L4};
use ecnlab::wire::{
    ipv4, tcp::MAX_OPTIONS_LEN, Ecn, Ipv4Repr, TcpFlags, TcpRepr, UdpRepr, WireError,
};
use etherparse::{IpNumber, Ipv4Dscp, Ipv4Ecn, Ipv4Header, TcpHeader, TcpOptionElement, UdpHeader};
use proptest::prelude::*;

fn ip_strategy() -> impl Strategy<Value = Ipv4Repr> {
    (
        any::<u32>(),
        any::<u32>(),
        0u8..64,
        0u8..4,
        any::<u16>(),
        any::<u8>(),
    )
        .prop_map(|(src, dst, dscp, ecn, ident, ttl)| Ipv4Repr {
            src,
            dst,
            dscp,
            ecn: Ecn(ecn),
            ident,
            ttl,
            ..Ipv4Repr::default()
        })
}

/// A TCP header with random fields and options. SACK blocks are stored through
/// `set_sack_blocks`, so unused entries are zero and the count respects the 40-byte limit.
fn tcp_strategy() -> impl Strategy<Value = TcpRepr> {
    (
        (any::<u16>(), any::<u16>(), any::<u32>(), any::<u32>()),
        (0u16..=TcpFlags::ALL, any::<u16>()),
        (
            proptest::option::of(any::<u16>()),
            proptest::option::of(any::<u8>()),
            any::<bool>(),
            proptest::option::of((any::<u32>(), any::<u32>())),
        ),
        proptest::collection::vec((any::<u32>(), any::<u32>()), 0..=4),
    )
        .prop_map(
            |((sp, dp, seq, ack), (flags, window), (mss, ws, sackp, ts), blocks)| {
                let mut t = TcpRepr {
                    src_port: sp,
                    dst_port: dp,
                    seq,
                    ack,
                    flags: TcpFlags(flags),
                    window,
                    mss,
                    window_scale: ws,
                    sack_permitted: sackp,
                    timestamp: ts,
                    ..TcpRepr::default()
                };
                t.set_sack_blocks(&blocks);
                t
            },
        )
}

fn packet_strategy() -> impl Strategy<Value = Packet> {
    prop_oneof![
        (ip_strategy(), tcp_strategy(), 0u32..=1500)
            .prop_map(|(ip, t, n)| Packet::new_tcp(ip, t, n)),
        (ip_strategy(), any::<u16>(), any::<u16>(), 0u32..=1500).prop_map(|(ip, sp, dp, n)| {
            Packet::new_udp(
                ip,
                UdpRepr {
                    src_port: sp,
                    dst_port: dp,
                },
                n,
            )
        }),
    ]
}

/// The options etherparse reads from a header, in the order they appear (NOPs dropped).
fn etherparse_options(h: &TcpHeader) -> Vec<TcpOptionElement> {
    h.options_iterator()
        .map(|o| o.expect("etherparse rejects an option"))
        .filter(|o| *o != TcpOptionElement::Noop)
        .collect()
}

/// The options we expect etherparse to see, in our documented emission order.
fn expected_options(t: &TcpRepr) -> Vec<TcpOptionElement> {
    let mut v = Vec::new();
    if let Some(m) = t.mss {
        v.push(TcpOptionElement::MaximumSegmentSize(m));
    }
    if let Some(s) = t.window_scale {
        v.push(TcpOptionElement::WindowScale(s));
    }
    if t.sack_permitted {
        v.push(TcpOptionElement::SelectiveAcknowledgementPermitted);
    }
    if let Some((a, b)) = t.timestamp {
        v.push(TcpOptionElement::Timestamp(a, b));
    }
    if let Some(&first) = t.sack_blocks().first() {
        let mut rest = [None; 3];
        for (r, &b) in rest.iter_mut().zip(&t.sack_blocks()[1..]) {
            *r = Some(b);
        }
        v.push(TcpOptionElement::SelectiveAcknowledgement(first, rest));
    }
    v
}

/// Checks every field of our emitted bytes with etherparse, and that etherparse's checksums
/// equal ours.
fn cross_check(p: &Packet, bytes: &[u8]) -> Result<(), TestCaseError> {
    let (ip, rest) = Ipv4Header::from_slice(bytes).expect("etherparse: IPv4");
    prop_assert_eq!(ip.header_len(), 20);
    prop_assert_eq!(ip.ecn.value(), p.ip.ecn.bits());
    prop_assert_eq!(ip.dscp.value(), p.ip.dscp);
    prop_assert_eq!(ip.identification, p.ip.ident);
    prop_assert_eq!(ip.time_to_live, p.ip.ttl);
    prop_assert_eq!(ip.total_len as usize, bytes.len());
    prop_assert!(ip.dont_fragment && !ip.more_fragments);
    prop_assert_eq!(ip.fragment_offset.value(), 0);
    prop_assert_eq!(u32::from_be_bytes(ip.source), p.ip.src);
    prop_assert_eq!(u32::from_be_bytes(ip.destination), p.ip.dst);
    prop_assert_eq!(ip.header_checksum, ip.calc_header_checksum());
    let l4 = &rest[..ip.payload_len().unwrap() as usize];
    match &p.l4 {
        L4::Tcp(t) => {
            prop_assert_eq!(ip.protocol, IpNumber::TCP);
            let (h, payload) = TcpHeader::from_slice(l4).expect("etherparse: TCP");
            prop_assert_eq!(h.source_port, t.src_port);
            prop_assert_eq!(h.destination_port, t.dst_port);
            prop_assert_eq!(h.sequence_number, t.seq);
            prop_assert_eq!(h.acknowledgment_number, t.ack);
            let f = t.flags;
            prop_assert_eq!(h.ns, f.has(TcpFlags::AE));
            prop_assert_eq!(h.cwr, f.has(TcpFlags::CWR));
            prop_assert_eq!(h.ece, f.has(TcpFlags::ECE));
            prop_assert_eq!(h.urg, f.has(TcpFlags::URG));
            prop_assert_eq!(h.ack, f.has(TcpFlags::ACK));
            prop_assert_eq!(h.psh, f.has(TcpFlags::PSH));
            prop_assert_eq!(h.rst, f.has(TcpFlags::RST));
            prop_assert_eq!(h.syn, f.has(TcpFlags::SYN));
            prop_assert_eq!(h.fin, f.has(TcpFlags::FIN));
            prop_assert_eq!(h.window_size, t.window);
            prop_assert_eq!(h.urgent_pointer, 0);
            prop_assert_eq!(h.header_len(), t.header_len());
            prop_assert!(h.options.len() <= MAX_OPTIONS_LEN);
            prop_assert_eq!(etherparse_options(&h), expected_options(t));
            prop_assert_eq!(payload.len(), p.payload_len as usize);
            prop_assert_eq!(h.checksum, h.calc_checksum_ipv4(&ip, payload).unwrap());
        }
        L4::Udp(u) => {
            prop_assert_eq!(ip.protocol, IpNumber::UDP);
            let (h, payload) = UdpHeader::from_slice(l4).expect("etherparse: UDP");
            prop_assert_eq!(h.source_port, u.src_port);
            prop_assert_eq!(h.destination_port, u.dst_port);
            prop_assert_eq!(h.length as usize, l4.len());
            prop_assert_eq!(payload.len(), p.payload_len as usize);
            // etherparse also maps a computed 0 to 0xffff.
            prop_assert_eq!(h.checksum, h.calc_checksum_ipv4(&ip, payload).unwrap());
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn parse_emit_roundtrip_and_etherparse_agrees(p in packet_strategy()) {
        let mut bytes = Vec::new();
        emit_packet(&p, &mut bytes);
        prop_assert_eq!(bytes.len(), p.wire_len() as usize);
        let back = parse_packet(&bytes).expect("parse_packet");
        prop_assert_eq!(back.ip, p.ip);
        prop_assert_eq!(back.l4, p.l4);
        prop_assert_eq!(back.payload_len, p.payload_len);
        prop_assert_eq!(back, p);
        cross_check(&p, &bytes)?;
    }

    /// Any single-bit corruption of a header byte is caught by our parser (checksum, or a
    /// structural error when a length or version field is hit), except a UDP checksum turned
    /// into 0, which means "no checksum". Whenever we report a checksum error, etherparse's
    /// recomputed
    /// checksums disagree with the transmitted ones whenever we report a checksum error.
    #[test]
    fn corruption_is_detected(p in packet_strategy(), pos in any::<prop::sample::Index>(), bit in 0u8..8) {
        let mut bytes = Vec::new();
        emit_packet(&p, &mut bytes);
        let header_len = bytes.len() - p.payload_len as usize;
        let i = pos.index(header_len);
        // etherparse rebuilds headers from its fields before summing, so bits it does not model
        // (the IPv4 reserved flag, the TCP reserved bits) cannot be compared; we still detect
        // them.
        let reserved = (i == 6 && bit == 7)
            || (matches!(p.l4, L4::Tcp(_)) && i == 32 && (1..=3).contains(&bit));
        bytes[i] ^= 1 << bit;
        // A UDP checksum that becomes 0 reads as "not computed" (RFC 768): undetectable.
        let udp_unchecked = matches!(p.l4, L4::Udp(_)) && bytes[26] == 0 && bytes[27] == 0;
        prop_assume!(!udp_unchecked);
        let ours = parse_packet(&bytes);
        prop_assert!(ours.is_err(), "corrupted byte {} bit {} accepted", i, bit);
        if ours == Err(WireError::Checksum) {
            let (ip, rest) = Ipv4Header::from_slice(&bytes).unwrap();
            let ip_ok = ip.header_checksum == ip.calc_header_checksum();
            // Only when the IP header is intact do its lengths locate the transport header.
            let l4_ok = ip_ok && {
                let l4 = &rest[..ip.payload_len().unwrap() as usize];
                match p.l4 {
                    L4::Tcp(_) => match TcpHeader::from_slice(l4) {
                        Ok((h, payload)) => h.checksum == h.calc_checksum_ipv4(&ip, payload).unwrap(),
                        Err(_) => false,
                    },
                    L4::Udp(_) => {
                        let (h, payload) = UdpHeader::from_slice(l4).unwrap();
                        h.checksum == h.calc_checksum_ipv4(&ip, payload).unwrap()
                    }
                }
            };
            prop_assert!(reserved || !(ip_ok && l4_ok), "etherparse finds both checksums valid");
        }
    }

    /// `sack_count` set by hand beyond the capacity (with stale entries): the header length,
    /// the option bytes and the parse all agree on the capped block list.
    #[test]
    fn sack_count_beyond_capacity_is_capped(
        mut t in tcp_strategy(),
        blocks in proptest::array::uniform4((any::<u32>(), any::<u32>())),
        count in 0u8..=8,
    ) {
        t.sack = blocks;
        t.sack_count = count;
        let n = t.sack_blocks().len();
        prop_assert_eq!(n, (count as usize).min(t.sack_capacity()));
        prop_assert!(t.options_len() <= MAX_OPTIONS_LEN);
        let p = Packet::new_tcp(Ipv4Repr::default(), t, 10);
        let mut bytes = Vec::new();
        emit_packet(&p, &mut bytes);
        let back = parse_packet(&bytes).unwrap();
        let bt = back.tcp().unwrap();
        prop_assert_eq!(bt.sack_blocks(), t.sack_blocks());
        prop_assert_eq!(bt.header_len(), t.header_len());
        cross_check(&p, &bytes)?;
    }

    /// The reverse direction: etherparse writes the packet, with options in a random order and
    /// NOP alignment as real stacks lay them out, and our parser reads every field back.
    #[test]
    fn we_parse_what_etherparse_writes(
        ip in ip_strategy(),
        t in tcp_strategy(),
        payload in proptest::collection::vec(any::<u8>(), 0..64),
        order in Just(vec![0usize, 1, 2, 3, 4]).prop_shuffle(),
        nops in proptest::collection::vec(0usize..3, 5),
    ) {
        let all = expected_options(&t);
        let mut elements = Vec::new();
        for (k, &which) in order.iter().enumerate() {
            let kind = match which {
                0 => t.mss.map(|_| 2),
                1 => t.window_scale.map(|_| 3),
                2 => t.sack_permitted.then_some(4),
                3 => t.timestamp.map(|_| 8),
                _ => (!t.sack_blocks().is_empty()).then_some(5),
            };
            let Some(kind) = kind else { continue };
            let e = all.iter().find(|e| {
                matches!(
                    (kind, e),
                    (2, TcpOptionElement::MaximumSegmentSize(_))
                        | (3, TcpOptionElement::WindowScale(_))
                        | (4, TcpOptionElement::SelectiveAcknowledgementPermitted)
                        | (8, TcpOptionElement::Timestamp(..))
                        | (5, TcpOptionElement::SelectiveAcknowledgement(..))
                )
            });
            elements.extend(std::iter::repeat_n(TcpOptionElement::Noop, nops[k]));
            elements.push(e.unwrap().clone());
        }
        let mut h = TcpHeader::new(t.src_port, t.dst_port, t.seq, t.window);
        h.acknowledgment_number = t.ack;
        let f = t.flags;
        h.ns = f.has(TcpFlags::AE);
        h.cwr = f.has(TcpFlags::CWR);
        h.ece = f.has(TcpFlags::ECE);
        h.urg = f.has(TcpFlags::URG);
        h.ack = f.has(TcpFlags::ACK);
        h.psh = f.has(TcpFlags::PSH);
        h.rst = f.has(TcpFlags::RST);
        h.syn = f.has(TcpFlags::SYN);
        h.fin = f.has(TcpFlags::FIN);
        // The NOPs may push the options past 40 bytes: then write without them.
        let with_nops = h.set_options(&elements).is_ok();
        if !with_nops {
            let plain: Vec<_> = elements
                .iter()
                .filter(|e| **e != TcpOptionElement::Noop)
                .cloned()
                .collect();
            h.set_options(&plain).unwrap();
        }
        let mut iph = Ipv4Header::new(
            (h.header_len() + payload.len()) as u16,
            ip.ttl,
            IpNumber::TCP,
            ip.src.to_be_bytes(),
            ip.dst.to_be_bytes(),
        )
        .unwrap();
        iph.identification = ip.ident;
        iph.dscp = Ipv4Dscp::try_new(ip.dscp).unwrap();
        iph.ecn = Ipv4Ecn::try_new(ip.ecn.bits()).unwrap();
        iph.dont_fragment = ip.ident % 2 == 0; // either way is accepted
        h.checksum = h.calc_checksum_ipv4(&iph, &payload).unwrap();
        let mut bytes = Vec::new();
        iph.write(&mut bytes).unwrap();
        h.write(&mut bytes).unwrap();
        bytes.extend_from_slice(&payload);

        let back = parse_packet(&bytes).expect("parse_packet on etherparse bytes");
        let want = t;
        prop_assert_eq!(back.tcp(), Some(&want));
        prop_assert_eq!(back.payload_len as usize, payload.len());
        prop_assert_eq!(back.ip.src, ip.src);
        prop_assert_eq!(back.ip.dst, ip.dst);
        prop_assert_eq!(back.ip.ecn, ip.ecn);
        prop_assert_eq!(back.ip.dscp, ip.dscp);
        prop_assert_eq!(back.ip.ident, ip.ident);
        prop_assert_eq!(back.ip.ttl, ip.ttl);
        prop_assert_eq!(back.ip.protocol, ipv4::PROTO_TCP);
        // Lengths are those of our own layout, consistent for re-emission.
        prop_assert_eq!(back.wire_len() as usize, 20 + want.header_len() + payload.len());
    }

    #[test]
    fn we_parse_etherparse_udp(
        ip in ip_strategy(),
        sp in any::<u16>(),
        dp in any::<u16>(),
        payload in proptest::collection::vec(any::<u8>(), 0..64),
    ) {
        let mut iph = Ipv4Header::new(
            (8 + payload.len()) as u16,
            ip.ttl,
            IpNumber::UDP,
            ip.src.to_be_bytes(),
            ip.dst.to_be_bytes(),
        )
        .unwrap();
        iph.identification = ip.ident;
        iph.ecn = Ipv4Ecn::try_new(ip.ecn.bits()).unwrap();
        iph.dscp = Ipv4Dscp::try_new(ip.dscp).unwrap();
        let h = UdpHeader::with_ipv4_checksum(sp, dp, &iph, &payload).unwrap();
        let mut bytes = Vec::new();
        iph.write(&mut bytes).unwrap();
        h.write(&mut bytes).unwrap();
        bytes.extend_from_slice(&payload);
        let back = parse_packet(&bytes).unwrap();
        prop_assert_eq!(back.l4, L4::Udp(UdpRepr { src_port: sp, dst_port: dp }));
        prop_assert_eq!(back.payload_len as usize, payload.len());
        prop_assert_eq!(back.ip, Ipv4Repr { protocol: ipv4::PROTO_UDP, payload_len: (8 + payload.len()) as u16, ..ip });
    }
}

#[test]
fn syn_with_every_option_and_max_sack_ack() {
    // A SYN with every handshake option, and an ACK with timestamps and the maximum of 3
    // SACK blocks, both checked field by field by etherparse.
    let ip = Ipv4Repr {
        src: 0x0a00_0001,
        dst: 0x0a00_0002,
        ecn: Ecn::ECT0,
        ttl: 64,
        ..Ipv4Repr::default()
    };
    let syn = TcpRepr {
        src_port: 40000,
        dst_port: 5001,
        seq: 1,
        flags: TcpFlags(TcpFlags::SYN | TcpFlags::ECE | TcpFlags::CWR | TcpFlags::AE),
        window: 65535,
        mss: Some(1460),
        window_scale: Some(14),
        sack_permitted: true,
        timestamp: Some((1, 0)),
        ..TcpRepr::default()
    };
    let mut ack = TcpRepr {
        flags: TcpFlags(TcpFlags::ACK | TcpFlags::ECE),
        timestamp: Some((5, 6)),
        ..syn
    };
    ack.mss = None;
    ack.window_scale = None;
    ack.sack_permitted = false;
    assert_eq!(
        ack.set_sack_blocks(&[(10, 20), (30, 40), (50, 60), (70, 80)]),
        3
    );
    for t in [syn, ack] {
        let p = Packet::new_tcp(ip, t, 0);
        let mut bytes = Vec::new();
        emit_packet(&p, &mut bytes);
        cross_check(&p, &bytes).unwrap();
        assert_eq!(parse_packet(&bytes).unwrap(), p);
    }
}
