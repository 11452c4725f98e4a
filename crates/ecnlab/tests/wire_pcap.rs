//! The pcap writer, read back by an independent reader: the pcap headers are parsed by hand
//! here and each record is decoded by etherparse (and by tshark when it is installed).

use ecnlab::packet::pcap::PcapWriter;
use ecnlab::packet::{Packet, L4};
use ecnlab::time::{Time, MS, NS, SEC, US};
use ecnlab::wire::{Ecn, Ipv4Repr, TcpFlags, TcpRepr, UdpRepr};
use etherparse::{NetSlice, SlicedPacket, TransportSlice};

fn ip(src: u32, dst: u32, ecn: Ecn, ident: u16) -> Ipv4Repr {
    Ipv4Repr {
        src,
        dst,
        dscp: 0,
        ecn,
        ident,
        ttl: 64,
        ..Ipv4Repr::default()
    }
}

/// The packets and the picosecond times they are written at.
fn sample() -> Vec<(Time, Packet)> {
    let a = 0x0a00_0001;
    let b = 0x0a00_0102;
    let syn = TcpRepr {
        src_port: 40000,
        dst_port: 5201,
        seq: 1000,
        flags: TcpFlags(TcpFlags::SYN | TcpFlags::ECE | TcpFlags::CWR),
        window: 65535,
        mss: Some(1460),
        window_scale: Some(7),
        sack_permitted: true,
        timestamp: Some((77, 0)),
        ..TcpRepr::default()
    };
    let data = TcpRepr {
        seq: 1001,
        ack: 5001,
        flags: TcpFlags(TcpFlags::ACK | TcpFlags::PSH),
        window: 502,
        mss: None,
        window_scale: None,
        sack_permitted: false,
        timestamp: Some((78, 99)),
        ..syn
    };
    let mut sack_ack = TcpRepr {
        src_port: 5201,
        dst_port: 40000,
        seq: 5001,
        ack: 1001,
        flags: TcpFlags(TcpFlags::ACK | TcpFlags::ECE | TcpFlags::AE),
        window: 1024,
        timestamp: Some((100, 78)),
        ..TcpRepr::default()
    };
    sack_ack.set_sack_blocks(&[(2449, 3897), (5345, 6793)]);
    let udp = UdpRepr {
        src_port: 9000,
        dst_port: 9001,
    };
    vec![
        (0, Packet::new_tcp(ip(a, b, Ecn::NOT_ECT, 1), syn, 0)),
        // Sub-nanosecond parts are truncated: 1.234999 µs is written as 1234 ns.
        (
            1_234_999,
            Packet::new_tcp(ip(a, b, Ecn::ECT0, 2), data, 1448),
        ),
        (
            SEC + 500 * MS + 7 * NS + 999,
            Packet::new_tcp(ip(b, a, Ecn::CE, 0xfffe), sack_ack, 0),
        ),
        (
            3600 * SEC + 123 * US,
            Packet::new_udp(ip(a, b, Ecn::ECT1, 7), udp, 1200),
        ),
        (
            3600 * SEC + 124 * US,
            Packet::new_udp(ip(b, a, Ecn::NOT_ECT, 8), udp, 0),
        ),
    ]
}

fn u32le(b: &[u8]) -> u32 {
    u32::from_le_bytes([b[0], b[1], b[2], b[3]])
}

struct Record<'a> {
    sec: u32,
    nsec: u32,
    orig_len: u32,
    data: &'a [u8],
}

/// Parses a little-endian nanosecond pcap file with LINKTYPE_RAW (checked).
fn read_pcap(file: &[u8]) -> Vec<Record<'_>> {
    assert!(file.len() >= 24, "global header");
    assert_eq!(u32le(&file[0..4]), 0xa1b2_3c4d, "nanosecond magic");
    assert_eq!(u16::from_le_bytes([file[4], file[5]]), 2, "major version");
    assert_eq!(u16::from_le_bytes([file[6], file[7]]), 4, "minor version");
    assert_eq!(u32le(&file[8..12]), 0, "thiszone");
    assert_eq!(u32le(&file[12..16]), 0, "sigfigs");
    assert_eq!(u32le(&file[16..20]), 65535, "snaplen");
    assert_eq!(u32le(&file[20..24]), 101, "LINKTYPE_RAW");
    let mut out = Vec::new();
    let mut i = 24;
    while i < file.len() {
        assert!(file.len() >= i + 16, "record header");
        let sec = u32le(&file[i..]);
        let nsec = u32le(&file[i + 4..]);
        let incl = u32le(&file[i + 8..]) as usize;
        let orig_len = u32le(&file[i + 12..]);
        assert!(nsec < 1_000_000_000);
        let data = &file[i + 16..i + 16 + incl];
        out.push(Record {
            sec,
            nsec,
            orig_len,
            data,
        });
        i += 16 + incl;
    }
    out
}

fn write_sample(name: &str) -> std::path::PathBuf {
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let mut w = PcapWriter::create(&path).unwrap();
    for (t, p) in sample() {
        w.write(t, &p);
    }
    w.finish().unwrap();
    drop(w);
    path
}

#[test]
fn pcap_records_read_back_with_etherparse() {
    let path = write_sample("wire_pcap_etherparse.pcap");
    let file = std::fs::read(&path).unwrap();
    let records = read_pcap(&file);
    let packets = sample();
    assert_eq!(records.len(), packets.len());
    for (r, (t, p)) in records.iter().zip(&packets) {
        let ns = t / 1000;
        assert_eq!(r.sec as u64, ns / 1_000_000_000);
        assert_eq!(r.nsec as u64, ns % 1_000_000_000);
        assert_eq!(r.data.len(), p.wire_len() as usize);
        assert_eq!(r.orig_len, p.wire_len());

        let s = SlicedPacket::from_ip(r.data).expect("etherparse reads the record");
        let Some(NetSlice::Ipv4(v4)) = &s.net else {
            panic!("not IPv4")
        };
        let h = v4.header();
        assert_eq!(h.ecn().value(), p.ip.ecn.bits());
        assert_eq!(h.identification(), p.ip.ident);
        assert_eq!(h.ttl(), 64);
        assert_eq!(u32::from_be_bytes(h.source()), p.ip.src);
        assert_eq!(u32::from_be_bytes(h.destination()), p.ip.dst);
        assert_eq!(h.total_len() as u32, p.wire_len());
        let ip_hdr = h.to_header();
        assert_eq!(ip_hdr.header_checksum, ip_hdr.calc_header_checksum());
        match (&p.l4, &s.transport) {
            (L4::Tcp(t), Some(TransportSlice::Tcp(ts))) => {
                assert_eq!(ts.source_port(), t.src_port);
                assert_eq!(ts.destination_port(), t.dst_port);
                assert_eq!(ts.sequence_number(), t.seq);
                assert_eq!(ts.acknowledgment_number(), t.ack);
                assert_eq!(ts.syn(), t.flags.has(TcpFlags::SYN));
                assert_eq!(ts.ack(), t.flags.has(TcpFlags::ACK));
                assert_eq!(ts.psh(), t.flags.has(TcpFlags::PSH));
                assert_eq!(ts.ece(), t.flags.has(TcpFlags::ECE));
                assert_eq!(ts.cwr(), t.flags.has(TcpFlags::CWR));
                assert_eq!(ts.ns(), t.flags.has(TcpFlags::AE));
                assert_eq!(ts.window_size(), t.window);
                assert_eq!(ts.payload().len(), p.payload_len as usize);
                let th = ts.to_header();
                assert_eq!(
                    th.checksum,
                    th.calc_checksum_ipv4(&ip_hdr, ts.payload()).unwrap()
                );
                let opts: Vec<_> = th.options_iterator().map(|o| o.unwrap()).collect();
                if t.flags.has(TcpFlags::SYN) {
                    use etherparse::TcpOptionElement::*;
                    assert!(opts.contains(&MaximumSegmentSize(1460)));
                    assert!(opts.contains(&WindowScale(7)));
                    assert!(opts.contains(&SelectiveAcknowledgementPermitted));
                    assert!(opts.contains(&Timestamp(77, 0)));
                }
                if !t.sack_blocks().is_empty() {
                    assert!(opts.contains(
                        &etherparse::TcpOptionElement::SelectiveAcknowledgement(
                            (2449, 3897),
                            [Some((5345, 6793)), None, None]
                        )
                    ));
                }
            }
            (L4::Udp(u), Some(TransportSlice::Udp(us))) => {
                assert_eq!(us.source_port(), u.src_port);
                assert_eq!(us.destination_port(), u.dst_port);
                assert_eq!(us.length() as usize, 8 + p.payload_len as usize);
                assert_eq!(us.payload().len(), p.payload_len as usize);
                let uh = us.to_header();
                assert_eq!(
                    uh.checksum,
                    uh.calc_checksum_ipv4(&ip_hdr, us.payload()).unwrap()
                );
            }
            _ => panic!("transport mismatch"),
        }
        // And our own parser reads the record back to the same packet.
        assert_eq!(&ecnlab::packet::parse_packet(r.data).unwrap(), p);
    }
    // The times: 0, 1234 ns, 1.500000007 s, 3600.000123 s, 3600.000124 s.
    let times: Vec<(u32, u32)> = records.iter().map(|r| (r.sec, r.nsec)).collect();
    assert_eq!(
        times,
        [
            (0, 0),
            (0, 1234),
            (1, 500_000_007),
            (3600, 123_000),
            (3600, 124_000)
        ]
    );
}

/// Cross-check with tshark when it is installed (skipped otherwise).
#[test]
fn pcap_reads_with_tshark_if_installed() {
    let Ok(probe) = std::process::Command::new("tshark")
        .arg("--version")
        .output()
    else {
        eprintln!("tshark not installed: skipped");
        return;
    };
    if !probe.status.success() {
        eprintln!("tshark not usable: skipped");
        return;
    }
    let path = write_sample("wire_pcap_tshark.pcap");
    let out = std::process::Command::new("tshark")
        .arg("-r")
        .arg(&path)
        .args([
            "-T",
            "fields",
            "-E",
            "separator=,",
            "-e",
            "frame.len",
            "-e",
            "ip.dsfield.ecn",
            "-e",
            "tcp.srcport",
            "-e",
            "udp.srcport",
            "-e",
            "frame.time_epoch",
        ])
        .output()
        .expect("run tshark");
    assert!(out.status.success(), "tshark failed: {out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let packets = sample();
    assert_eq!(lines.len(), packets.len(), "{text}");
    for (line, (t, p)) in lines.iter().zip(&packets) {
        let f: Vec<&str> = line.split(',').collect();
        assert_eq!(f[0].parse::<u32>().unwrap(), p.wire_len(), "{line}");
        assert_eq!(f[1].parse::<u8>().unwrap(), p.ip.ecn.bits(), "{line}");
        let port = match &p.l4 {
            L4::Tcp(t) => (f[2], t.src_port),
            L4::Udp(u) => (f[3], u.src_port),
        };
        assert_eq!(port.0.parse::<u16>().unwrap(), port.1, "{line}");
        // frame.time_epoch is seconds with a fraction in plain notation on current versions.
        if let Ok(secs) = f[4].parse::<f64>() {
            let want = (t / 1000) as f64 * 1e-9;
            assert!((secs - want).abs() < 1e-6, "{line}");
        }
    }
}
