use super::*;
use crate::aqm::Limit;
use crate::time::US;
use crate::wire::TcpFlags;

const WIRED: usize = 0;
const AIR: usize = 1;

fn cfg() -> ZhugeConfig {
    let mut c: ZhugeConfig = serde_json::from_str(r#"{"port": "ap->wlan"}"#).unwrap();
    c.aggregation_wait = Duration(0);
    c
}

use crate::ap::test_segment as pkt;

/// The AP's ports at `now`: the air port has released 75 000 bytes per ms so far (600 Mb/s)
/// and holds `backlog` bytes.
fn views(now: Time, backlog: u64) -> [PortView; 2] {
    let air = || {
        PortView::new(
            now,
            (backlog / 1500) as u32,
            backlog,
            600_000_000,
            Limit::Bytes(12_000_000),
            75_000 * (now / MS),
        )
    };
    [air(), air()]
}

fn forward(z: &mut Zhuge, now: Time, out: usize, p: &mut Packet, backlog: u64) -> Forward {
    z.on_forward(now, out, p, &views(now, backlog))
}

/// A Zhuge that ten busy milliseconds have taught the 600 Mb/s dequeue rate.
fn taught() -> Zhuge {
    let mut z = Zhuge::new(cfg(), AIR, crate::engine::rng::stream(1, 7, 0)).unwrap();
    for ms in 0..=10 {
        forward(
            &mut z,
            ms * MS,
            WIRED,
            &mut pkt(false, TcpFlags::SYN, 0),
            1500,
        );
    }
    z
}

#[test]
fn acks_are_delayed_by_the_growth_of_the_predicted_queueing_delay() {
    let mut z = taught();
    assert!((z.rate.rate_bps - 600e6).abs() < 1.0, "{}", z.rate.rate_bps);
    // Two data packets find 15 000 then 30 000 bytes queued: the prediction grows by
    // 15 000·8 bits / 600 Mb/s = 200 µs.
    let t = 10 * MS + 100 * US;
    let data = |z: &mut Zhuge, at, q| forward(z, at, AIR, &mut pkt(true, TcpFlags::ACK, 1448), q);
    data(&mut z, t, 15_000);
    data(&mut z, t + 10 * US, 30_000);
    let ack = |z: &mut Zhuge, at| forward(z, at, WIRED, &mut pkt(false, TcpFlags::ACK, 0), 30_000);
    // The flow's first ACK sets its clock and passes.
    assert_eq!(ack(&mut z, t + 20 * US), Forward::Pass);
    // A later ACK (a new burst) is held for the 200 µs growth.
    let a = t + 100 * US;
    assert_eq!(ack(&mut z, a), Forward::HoldUntil(a + 200 * US));
    // One that comes 50 µs later, while the previous is still held, keeps the spacing and
    // adds the growth again: 50 + 200 + 200 µs after the first.
    assert_eq!(ack(&mut z, a + 50 * US), Forward::HoldUntil(a + 450 * US));
    // The queue shrinks by 7 500 bytes: a 100 µs token, which the next delay pays from.
    data(&mut z, t + 30 * US, 22_500);
    let b = a + 2 * MS;
    assert_eq!(ack(&mut z, b), Forward::HoldUntil(b + 100 * US));
    // The token is spent.
    let c = b + MS;
    assert_eq!(ack(&mut z, c), Forward::HoldUntil(c + 200 * US));
    // 40 ms later the history is empty: ACKs pass.
    let d = c + 41 * MS;
    assert_eq!(ack(&mut z, d), Forward::Pass);
}

#[test]
fn no_ack_is_held_longer_than_max_delay() {
    let mut z = taught();
    // A jump of 3 MB queued: 40 ms of growth, recorded as the 10 ms cap.
    let t = 10 * MS + 100 * US;
    forward(&mut z, t, AIR, &mut pkt(true, TcpFlags::ACK, 1448), 1500);
    forward(
        &mut z,
        t + US,
        AIR,
        &mut pkt(true, TcpFlags::ACK, 1448),
        3_001_500,
    );
    let ack = |z: &mut Zhuge, at| forward(z, at, WIRED, &mut pkt(false, TcpFlags::ACK, 0), 0);
    ack(&mut z, t + 2 * US);
    let a = t + 10 * US;
    assert_eq!(ack(&mut z, a), Forward::HoldUntil(a + 10 * MS));
    // Back to back: the spacing would put it past the cap; it leaves at the cap.
    assert_eq!(ack(&mut z, a + US), Forward::HoldUntil(a + US + 10 * MS));
}

/// The chain of `no_ack_is_held_longer_than_max_delay` (ACKs 50 µs apart, each held the
/// 10 ms cap) outlives the only history entry: from then on the reference's sampler returns
/// its floor (the previous ACK's departure), so each ACK leaves right after the one before
/// and the hold shrinks by 50 µs per ACK until ACKs pass (200 ACKs, 10 ms, later).
#[test]
fn a_held_chain_drains_once_the_history_is_empty() {
    let mut z = taught();
    let t = 10 * MS + 100 * US;
    forward(&mut z, t, AIR, &mut pkt(true, TcpFlags::ACK, 1448), 1500);
    forward(
        &mut z,
        t + US,
        AIR,
        &mut pkt(true, TcpFlags::ACK, 1448),
        3_001_500,
    );
    let ack = |z: &mut Zhuge, at| forward(z, at, WIRED, &mut pkt(false, TcpFlags::ACK, 0), 0);
    ack(&mut z, t + 2 * US);
    let gap = 50 * US;
    let aged = t + US + 40 * MS; // the 10 ms entry leaves the history after this
    let mut at = t + 10 * US;
    while at <= aged {
        assert_eq!(ack(&mut z, at), Forward::HoldUntil(at + 10 * MS), "at {at}");
        at += gap;
    }
    let mut last_sent = at - gap + 10 * MS;
    for k in 0..200 {
        let f = ack(&mut z, at);
        if last_sent > at {
            assert_eq!(
                f,
                Forward::HoldUntil(last_sent),
                "ACK {k} after the history emptied"
            );
        } else {
            assert_eq!(f, Forward::Pass, "ACK {k} after the history emptied");
        }
        last_sent = last_sent.max(at);
        at += gap;
    }
    assert_eq!(ack(&mut z, at), Forward::Pass);
}

/// A token spent whole leaves the pool: with one 200 µs increase and one 100 µs token, the
/// first ACK pays 100 µs from the token and every later one is held the full 200 µs (a
/// spent token left as a zero delay would let about half of them pass unheld).
#[test]
fn a_spent_token_is_no_zero_delay() {
    let mut z = taught();
    let t = 10 * MS + 100 * US;
    let data = |z: &mut Zhuge, at, q| forward(z, at, AIR, &mut pkt(true, TcpFlags::ACK, 1448), q);
    data(&mut z, t, 15_000);
    data(&mut z, t + 10 * US, 30_000); // +200 µs
    data(&mut z, t + 20 * US, 22_500); // −100 µs: a token
    let ack = |z: &mut Zhuge, at| forward(z, at, WIRED, &mut pkt(false, TcpFlags::ACK, 0), 0);
    ack(&mut z, t + 30 * US);
    let a = t + MS;
    assert_eq!(ack(&mut z, a), Forward::HoldUntil(a + 100 * US));
    for k in 1..=30 {
        let at = a + k * MS;
        assert_eq!(
            ack(&mut z, at),
            Forward::HoldUntil(at + 200 * US),
            "ACK {k}"
        );
    }
}

/// The aggregation rule (the reference's A-MPDU wait, 5 ms): a packet that finds less than
/// 5 ms of the dequeue rate queued, the queue not shrinking, is predicted no queueing delay.
/// At 600 Mb/s that is 375 000 bytes. Queues met by successive packets, and the history the
/// rule gives (tx is the same for every packet and cancels):
/// 15 000 → 30 000: both aggregate, 0; → 450 000: 6 ms queued, +6 ms;
/// → 300 000: below 5 ms but shrinking, 4 ms, −2 ms; → 330 000: growing again, 0, −4 ms.
#[test]
fn the_aggregation_rule_predicts_no_queueing_below_five_ms_of_a_growing_queue() {
    let mut c = cfg();
    c.aggregation_wait = default_aggregation_wait();
    let mut z = Zhuge::new(c, AIR, crate::engine::rng::stream(1, 7, 0)).unwrap();
    for ms in 0..=10 {
        forward(
            &mut z,
            ms * MS,
            WIRED,
            &mut pkt(false, TcpFlags::SYN, 0),
            1500,
        );
    }
    let t = 10 * MS + 100 * US;
    for (i, q) in [15_000u64, 30_000, 450_000, 300_000, 330_000]
        .into_iter()
        .enumerate()
    {
        forward(
            &mut z,
            t + i as Time * US,
            AIR,
            &mut pkt(true, TcpFlags::ACK, 1448),
            q,
        );
    }
    let c = &z.clocks[0];
    let delays: Vec<i64> = c.delays.iter().map(|e| e.1).collect();
    let tokens: Vec<i64> = c.tokens.iter().map(|e| e.1).collect();
    assert_eq!(delays, vec![0, 6 * MS as i64]);
    assert_eq!(tokens, vec![2 * MS as i64, 4 * MS as i64]);
}
