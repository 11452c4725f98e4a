//! The parser and the in-place rewrite against hostile bytes: structured random packets
//! (real layouts: options in any order with padding, payloads, IP options, UDP) mutated by
//! bit flips, byte overwrites, truncation, extension and length-field lies. Every input must
//! either parse or be refused with a reason — never panic — and every packet that parses
//! must, after any change a router may make, be rewritten into bytes that parse back to
//! exactly the changed headers with the payload untouched.
//!
//! `ECNLAB_FUZZ_INPUTS` sets the number of inputs (default 200 000; the emulation's
//! acceptance run uses 10 000 000: `ECNLAB_FUZZ_INPUTS=10000000 cargo test --release
//! --test wire_fuzz -- --nocapture`).

use ecnlab::emu::{parse_real, RxDrop};
use ecnlab::packet::rewrite::rewrite;
use ecnlab::wire::checksum;
use ecnlab::wire::{Ecn, TcpFlags};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;

fn put_checksum(b: &mut [u8], at: usize, pseudo: u16, from: usize) {
    b[at..at + 2].fill(0);
    let c = checksum::finish(checksum::combine(pseudo, checksum::sum(&b[from..])));
    b[at..at + 2].copy_from_slice(&c.to_be_bytes());
}

/// A well-formed IPv4 packet as a real stack might lay it out.
fn random_packet(rng: &mut Pcg64) -> Vec<u8> {
    let ip_opts = if rng.gen_bool(0.1) {
        4 * rng.gen_range(1..=10)
    } else {
        0
    };
    let ihl = 20 + ip_opts;
    let udp = rng.gen_bool(0.2);
    let mut l4 = Vec::new();
    if udp {
        l4.extend_from_slice(&rng.gen::<u16>().to_be_bytes());
        l4.extend_from_slice(&rng.gen::<u16>().to_be_bytes());
        l4.extend_from_slice(&[0, 0, 0, 0]);
    } else {
        let mut opts = Vec::new();
        let kinds = rng.gen_range(0..6);
        for _ in 0..kinds {
            let mut o: Vec<u8> = Vec::new();
            match rng.gen_range(0..7) {
                0 => o.push(1),
                1 => o.extend_from_slice(&[2, 4, 5, 0xb4]),
                2 => o.extend_from_slice(&[3, 3, rng.gen_range(0..15)]),
                3 => o.extend_from_slice(&[4, 2]),
                4 => {
                    o.extend_from_slice(&[8, 10]);
                    o.extend_from_slice(&rng.gen::<[u8; 8]>());
                }
                5 => {
                    let n = rng.gen_range(1..=3);
                    o.extend_from_slice(&[5, 2 + 8 * n]);
                    for _ in 0..8 * n {
                        o.push(rng.gen());
                    }
                }
                _ => o.extend_from_slice(&[254, 4, rng.gen(), rng.gen()]),
            }
            // Options never run past the 40 bytes a header holds.
            if opts.len() + o.len() <= 40 {
                opts.extend_from_slice(&o);
            }
        }
        while opts.len() % 4 != 0 {
            opts.push(0);
        }
        let off = (20 + opts.len()) / 4;
        l4.extend_from_slice(&rng.gen::<[u8; 12]>());
        let flags: u16 = rng.gen::<u16>() & 0x01ff;
        l4.extend_from_slice(&(((off as u16) << 12) | flags).to_be_bytes());
        l4.extend_from_slice(&rng.gen::<u16>().to_be_bytes());
        l4.extend_from_slice(&[0, 0, 0, 0]);
        l4.extend_from_slice(&opts);
    }
    let payload = if rng.gen_bool(0.3) {
        0
    } else {
        rng.gen_range(1..1460)
    };
    for _ in 0..payload {
        l4.push(rng.gen());
    }
    let total = ihl + l4.len();
    let mut b = vec![0u8; ihl];
    b[0] = 0x40 | (ihl / 4) as u8;
    b[1] = rng.gen();
    b[2..4].copy_from_slice(&(total as u16).to_be_bytes());
    b[4..6].copy_from_slice(&rng.gen::<u16>().to_be_bytes());
    b[6] = 0x40;
    b[8] = rng.gen_range(1..=255);
    b[9] = if udp { 17 } else { 6 };
    b[12..16].copy_from_slice(&[10, 0, 0, rng.gen_range(1..200)]);
    b[16..20].copy_from_slice(&[10, 0, 0, rng.gen_range(1..200)]);
    for x in &mut b[20..ihl] {
        *x = 1; // NOP options
    }
    put_checksum(&mut b, 10, 0, 0);
    let (src, dst) = (
        u32::from_be_bytes([b[12], b[13], b[14], b[15]]),
        u32::from_be_bytes([b[16], b[17], b[18], b[19]]),
    );
    let proto = b[9];
    b.extend_from_slice(&l4);
    let pseudo = checksum::pseudo_header_v4(src, dst, proto, l4.len() as u16);
    put_checksum(&mut b, ihl + if udp { 6 } else { 16 }, pseudo, ihl);
    if udp {
        b[ihl + 4..ihl + 6].copy_from_slice(&(l4.len() as u16).to_be_bytes());
        put_checksum(&mut b, ihl + 6, pseudo, ihl);
    }
    b
}

/// Recomputes both checksums where the lengths allow, so a mutation inside the headers reaches
/// the field and option parsers instead of failing the checksum.
fn fix_checksums(b: &mut [u8]) {
    if b.len() < 20 {
        return;
    }
    let ihl = (b[0] & 0x0f) as usize * 4;
    if ihl < 20 || ihl > b.len() {
        return;
    }
    let mut h = b[..ihl].to_vec();
    put_checksum(&mut h, 10, 0, 0);
    b[..ihl].copy_from_slice(&h);
    let total = u16::from_be_bytes([b[2], b[3]]) as usize;
    if total < ihl + 20 || total > b.len() {
        return;
    }
    let src = u32::from_be_bytes([b[12], b[13], b[14], b[15]]);
    let dst = u32::from_be_bytes([b[16], b[17], b[18], b[19]]);
    let proto = b[9];
    let at = match proto {
        6 => 16,
        17 => 6,
        _ => return,
    };
    let seg = &mut b[ihl..total];
    let pseudo = checksum::pseudo_header_v4(src, dst, proto, seg.len() as u16);
    put_checksum(seg, at, pseudo, 0);
}

fn mutate(rng: &mut Pcg64, b: &mut Vec<u8>) {
    for _ in 0..rng.gen_range(1..=4) {
        match rng.gen_range(0..8) {
            0 if !b.is_empty() => {
                let i = rng.gen_range(0..b.len());
                b[i] ^= 1 << rng.gen_range(0..8);
            }
            1 if !b.is_empty() => {
                let i = rng.gen_range(0..b.len());
                b[i] = rng.gen();
            }
            2 => {
                let n = rng.gen_range(0..=b.len());
                b.truncate(n);
            }
            3 => {
                for _ in 0..rng.gen_range(1..64) {
                    b.push(rng.gen());
                }
            }
            // Lie about a length field: IP total length, IHL, TCP data offset.
            4 if b.len() >= 4 => {
                let v: u16 = rng.gen();
                b[2..4].copy_from_slice(&v.to_be_bytes());
            }
            5 if !b.is_empty() => b[0] = (b[0] & 0xf0) | rng.gen_range(0..16),
            6 if b.len() > 40 => {
                let ihl = ((b[0] & 0x0f) as usize * 4).min(b.len() - 13);
                b[ihl + 12] = rng.gen();
            }
            _ => {
                // A mutation followed by fixed checksums, so it reaches the option parser.
                if b.len() >= 20 && b.len() < 4096 {
                    let i = rng.gen_range(0..b.len());
                    b[i] = rng.gen();
                    fix_checksums(b);
                }
            }
        }
    }
}

#[test]
fn hostile_bytes_never_panic_and_parsed_packets_rewrite_exactly() {
    let n: u64 = std::env::var("ECNLAB_FUZZ_INPUTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200_000);
    let mut rng = Pcg64::seed_from_u64(0x5eed_f022);
    let mut parsed = 0u64;
    let mut refused = [0u64; RxDrop::ALL.len()];
    let mut rewritten = 0u64;
    for k in 0..n {
        let mut b = random_packet(&mut rng);
        let valid = k % 4 == 0;
        if !valid {
            mutate(&mut rng, &mut b);
            // Half the mutants carry valid checksums, so they reach the parsers behind them.
            if k % 4 == 1 {
                fix_checksums(&mut b);
            }
        }
        let p = match parse_real(&b) {
            Ok(p) => p,
            Err(why) => {
                assert!(
                    !valid,
                    "a well-formed packet was refused ({why:?}): {b:02x?}"
                );
                refused[why as usize] += 1;
                continue;
            }
        };
        parsed += 1;
        let mut after = p;
        after.ip.ecn = Ecn(rng.gen_range(0..4));
        after.ip.ident = rng.gen();
        after.ip.ttl = after.ip.ttl.saturating_sub(rng.gen_range(0..3));
        if let Some(t) = after.tcp_mut() {
            t.window = rng.gen();
            t.flags.set(TcpFlags::ECE, rng.gen());
        }
        let total = u16::from_be_bytes([b[2], b[3]]) as usize;
        let mut out = b[..total].to_vec();
        rewrite(&mut out, &p, &after).expect("a parsed packet rewrites");
        let back = parse_real(&out).expect("a rewritten packet parses (checksums valid)");
        assert_eq!(back.ip, after.ip);
        assert_eq!(back.l4, after.l4);
        let ihl = (b[0] & 0x0f) as usize * 4;
        let hdr = ihl + if p.tcp().is_some() { 20 } else { 8 };
        assert_eq!(out[hdr..], b[hdr..total], "payload and options untouched");
        rewritten += 1;
    }
    let names: Vec<String> = RxDrop::ALL
        .iter()
        .zip(refused)
        .map(|(w, c)| format!("{} {c}", w.name()))
        .collect();
    println!(
        "{n} inputs: {parsed} parsed and rewritten ({rewritten}), refused: {}",
        names.join(", ")
    );
    assert!(parsed >= n / 4);
}
