use super::*;
use crate::aqm::Limit;
use crate::wire::TcpFlags;

fn cfg() -> ApccConfig {
    serde_json::from_str(r#"{"port": "ap->wlan"}"#).unwrap()
}

#[test]
fn target_rate_by_hand() {
    let c = cfg();
    // Below K the AP offers η·B.
    assert!((target_rate(&c, 600e6, 10.0, 1448) - 570e6).abs() < 1e-3);
    // 220 packets: 200 over K, 200·1448·8 bits to drain in 80 ms = 28.96 Mb/s less.
    assert!((target_rate(&c, 600e6, 220.0, 1448) - 541.04e6).abs() < 1e-3);
    // A queue no rate can drain in δ: nothing, never negative.
    assert_eq!(target_rate(&c, 600e6, 1e6, 1448), 0.0);
}

#[test]
fn window_floors_and_keeps_two_segments() {
    let c = cfg();
    // 285 Mb/s over 20 ms in 1448-byte segments: 492.1 → 492.
    assert_eq!(window_segments(&c, 285e6, 20 * MS, 1448), 492);
    assert_eq!(window_segments(&c, 0.0, 20 * MS, 1448), 2);
}

/// Server 1, clients 2 and 3; the AP's port 0 faces the wire, port 1 the air.
const WIRED: usize = 0;
const AIR: usize = 1;

fn pkt(src: u32, dst: u32, flags: u16, payload: u32, window: u16) -> Packet {
    let ws = (flags & TcpFlags::SYN != 0).then_some(7);
    crate::ap::tcp_segment(src, dst, flags, payload, window, ws)
}

fn views(now: Time, backlog_pkts: u32) -> [PortView; 2] {
    let air = PortView::new(
        now,
        backlog_pkts,
        backlog_pkts as u64 * 1500,
        600_000_000,
        Limit::Bytes(12_000_000),
        0,
    );
    let wired = PortView::new(now, 0, 0, 1_000_000_000, Limit::Bytes(12_000_000), 0);
    [wired, air]
}

/// Opens the client's connection (SYN up at `t`, SYN-ACK down 20 ms later) and sends one
/// full segment down.
fn open(ap: &mut Apcc, client: u32, t: Time) {
    let v = views(t, 0);
    let syn = TcpFlags::SYN;
    let synack = TcpFlags::SYN | TcpFlags::ACK;
    ap.on_forward(t, WIRED, &mut pkt(client, 1, syn, 0, 65535), &v);
    ap.on_forward(t + 20 * MS, AIR, &mut pkt(1, client, synack, 0, 65535), &v);
    let ack = TcpFlags::ACK;
    ap.on_forward(t + 21 * MS, AIR, &mut pkt(1, client, ack, 1448, 512), &v);
}

/// The window an ACK from `client` leaves the AP with, at `now` with `backlog` packets.
fn ack_window(ap: &mut Apcc, client: u32, now: Time, backlog: u32, offered: u16) -> u16 {
    let mut a = pkt(client, 1, TcpFlags::ACK, 0, offered);
    ap.on_forward(now, WIRED, &mut a, &views(now, backlog));
    match a.l4 {
        L4::Tcp(t) => t.window,
        _ => unreachable!(),
    }
}

#[test]
fn two_flows_get_half_the_target_each_in_the_clients_units() {
    let mut ap = Apcc::new(cfg(), AIR).unwrap();
    open(&mut ap, 2, 0);
    open(&mut ap, 3, 0);
    let now = 21 * MS + 500 * US;
    // 10 packets queued: R = 570 Mb/s, 285 each. RTT = 20 ms wired + 15 000·8/600e6 s
    // (200 µs) + 100 µs + 1448·8/600e6 s (19.3 µs) = 20.3193 ms: 499.91 → 499 segments,
    // 722 552 bytes, in 128-byte units (shift 7) rounded up: 5645.
    assert_eq!(ack_window(&mut ap, 2, now, 10, 65535), 5645);
    // 220 packets: R = 541.04 Mb/s, RTT 24.5193 ms: 572.6 → 572 segments, 6471 units.
    assert_eq!(ack_window(&mut ap, 3, now + 2 * MS, 220, 65535), 6471);
    assert_eq!(ap.counters.rewritten, 2);
    // A receiver that already offers less keeps its own window.
    assert_eq!(ack_window(&mut ap, 2, now + 4 * MS, 10, 100), 100);
    assert_eq!(ap.counters.receiver_lower, 1);
}

#[test]
fn an_idle_flow_expires_after_one_rtt_and_its_share_goes_to_the_others() {
    let mut ap = Apcc::new(cfg(), AIR).unwrap();
    open(&mut ap, 2, 0);
    open(&mut ap, 3, 0);
    // Flow 2 keeps sending; flow 3's last data was at 21 ms.
    let t = 21 * MS + 30 * MS;
    ap.on_forward(
        t,
        AIR,
        &mut pkt(1, 2, TcpFlags::ACK, 1448, 512),
        &views(t, 10),
    );
    // 30 ms later flow 3 is silent for more than its 20.3 ms RTT: flow 2 gets all 570 Mb/s,
    // 999.8 → 999 segments, 1 446 552 bytes → 11 301.2 → 11 302 units.
    assert_eq!(ack_window(&mut ap, 2, t, 10, 65535), 11302);
}

#[test]
fn rtt_proportional_shares_follow_eq_2() {
    let mut c = cfg();
    c.allocation = Allocation::Rtt;
    let mut ap = Apcc::new(c, AIR).unwrap();
    open(&mut ap, 2, 0);
    // Client 3's SYN-ACK comes 60 ms after its SYN: wired RTT 60 ms.
    let v = views(0, 0);
    ap.on_forward(0, WIRED, &mut pkt(3, 1, TcpFlags::SYN, 0, 65535), &v);
    let synack = TcpFlags::SYN | TcpFlags::ACK;
    ap.on_forward(60 * MS, AIR, &mut pkt(1, 3, synack, 0, 65535), &v);
    ap.on_forward(61 * MS, AIR, &mut pkt(1, 3, TcpFlags::ACK, 1448, 512), &v);
    ap.on_forward(61 * MS, AIR, &mut pkt(1, 2, TcpFlags::ACK, 1448, 512), &v);
    // Empty queue: RTTs 20.1193 and 60.1193 ms; flow 3's share is R·60.1193/80.2386.
    let now = 61 * MS + 100 * US;
    let w3 = ack_window(&mut ap, 3, now, 0, 65535) as f64 * 128.0 / 1448.0;
    let (r1, r3): (f64, f64) = (0.0201193, 0.0601193);
    let expect = (570e6 * r3 / (r1 + r3) * r3 / (8.0 * 1448.0)).floor();
    assert!((w3 - expect).abs() < 0.1, "{w3} segments vs {expect}");
}

#[test]
fn connections_opened_before_the_ap_are_left_alone() {
    let mut ap = Apcc::new(cfg(), AIR).unwrap();
    let v = views(0, 0);
    ap.on_forward(0, AIR, &mut pkt(1, 2, TcpFlags::ACK, 1448, 512), &v);
    assert_eq!(ack_window(&mut ap, 2, MS, 0, 65535), 65535);
    assert_eq!(ap.counters.unknown_scale, 1);
}
