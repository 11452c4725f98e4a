use super::*;
use crate::time::US;
use crate::wire::{Ipv4Repr, UdpRepr};

/// RFC 8289 §5's pseudo-code, transcribed line by line (drops only), over a FIFO of
/// (id, arrival, bytes): the reference our [`Codel`] must agree with.
struct RfcCodel {
    q: std::collections::VecDeque<(u32, Time, u32)>,
    bytes: u64,
    first_above_time: Time,
    drop_next: Time,
    count: u32,
    lastcount: u32,
    dropping: bool,
    dropped: Vec<(Time, u32)>,
}

const TARGET: Time = 5 * MS;
const INTERVAL: Time = 100 * MS;
const MAXPACKET: u64 = 1514;

impl RfcCodel {
    fn control_law(&self, t: Time) -> Time {
        t + (INTERVAL as f64 / (self.count as f64).sqrt()) as Time
    }
    fn dodequeue(&mut self, now: Time) -> (Option<u32>, bool) {
        let Some((id, ts, len)) = self.q.pop_front() else {
            self.first_above_time = 0;
            return (None, false);
        };
        self.bytes -= len as u64;
        let sojourn_time = now - ts;
        let mut ok_to_drop = false;
        if sojourn_time < TARGET || self.bytes <= MAXPACKET {
            self.first_above_time = 0;
        } else if self.first_above_time == 0 {
            self.first_above_time = now + INTERVAL;
        } else if now >= self.first_above_time {
            ok_to_drop = true;
        }
        (Some(id), ok_to_drop)
    }
    fn dequeue(&mut self, now: Time) -> Option<u32> {
        let mut r = self.dodequeue(now);
        if self.dropping {
            if !r.1 {
                self.dropping = false;
            }
            while now >= self.drop_next && self.dropping {
                self.dropped.push((now, r.0.unwrap()));
                self.count += 1;
                r = self.dodequeue(now);
                if !r.1 {
                    self.dropping = false;
                } else {
                    self.drop_next = self.control_law(self.drop_next);
                }
            }
        } else if r.1 {
            self.dropped.push((now, r.0.unwrap()));
            r = self.dodequeue(now);
            self.dropping = true;
            let delta = self.count - self.lastcount;
            if delta > 1 && now.saturating_sub(self.drop_next) < 16 * INTERVAL {
                self.count = delta;
            } else {
                self.count = 1;
            }
            self.drop_next = self.control_law(now);
            self.lastcount = self.count;
        }
        r.0
    }
}

fn udp(ecn: Ecn) -> Packet {
    Packet::new_udp(
        Ipv4Repr {
            ecn,
            ..Default::default()
        },
        UdpRepr::default(),
        1472,
    )
}

/// (time, packet id) of each drop or mark.
type Drops = Vec<(Time, u32)>;

/// A 1500-byte packet leaves every `service` while packets arrive at `arrivals`; returns
/// ours and the reference's (time, id) drops, and how many ours marked.
fn drive(arrivals: &[Time], service: Time, ecn: bool) -> (Drops, Drops, u32) {
    let cfg = CodelConfig {
        target: Duration(TARGET),
        interval: Duration(INTERVAL),
        limit: 1_000_000,
        mtu: MAXPACKET as u32,
        ecn,
    };
    let mut ours = Codel::new(&cfg).unwrap();
    let mut rfc = RfcCodel {
        q: Default::default(),
        bytes: 0,
        first_above_time: 0,
        drop_next: 0,
        count: 0,
        lastcount: 0,
        dropping: false,
        dropped: Vec::new(),
    };
    let mut pool = PacketPool::new();
    let (mut got, mut dropped, mut marked) = (Vec::new(), Vec::new(), 0);
    let (mut now, mut next) = (0, 0);
    let end = *arrivals.last().unwrap() + 10 * INTERVAL;
    while now <= end {
        while next < arrivals.len() && arrivals[next] <= now {
            let mut p = udp(if ecn { Ecn::ECT0 } else { Ecn::NOT_ECT });
            p.meta.enqueued_at = arrivals[next];
            let id = pool.alloc(p);
            assert_eq!(id.0 as usize, next, "ids follow arrivals (nothing freed)");
            ours.enqueue(arrivals[next], id, pool.get_mut(id));
            rfc.q.push_back((next as u32, arrivals[next], 1500));
            rfc.bytes += 1500;
            next += 1;
        }
        let a = ours.dequeue(now, &mut pool, &mut dropped);
        for (d, why) in dropped.drain(..) {
            assert_eq!(why, DropReason::Sojourn);
            got.push((now, d.0));
        }
        if let Some(id) = a {
            if pool.get(id).ip.ecn == Ecn::CE {
                got.push((now, id.0));
                marked += 1;
            }
        }
        let b = rfc.dequeue(now);
        if !ecn {
            assert_eq!(a.map(|i| i.0), b, "at {now}");
        }
        now = match a {
            Some(_) => now + service,
            None if next < arrivals.len() => arrivals[next],
            None => break,
        };
    }
    (got, rfc.dropped, marked)
}

#[test]
fn first_drops_follow_the_control_law_by_hand() {
    // Arrivals every 0.5 ms, one departure per ms: packet k leaves at k ms having waited
    // k/2 ms. Packet 10 waits 5 ms (not below target): first_above_time = 110 ms. Drops at
    // 110, then 110 + 100 = 210, then 210 + 100/√2 = 280.71 → the departure at 281, then
    // + 100/√3 = 338.45 → 339, then + 50 = 388.45 → 389 ms.
    let arrivals: Vec<Time> = (0..2000).map(|k| k * 500 * US).collect();
    let (ours, rfc, _) = drive(&arrivals, MS, false);
    let times: Vec<Time> = ours.iter().take(5).map(|d| d.0).collect();
    assert_eq!(
        times,
        vec![110 * MS, 210 * MS, 281 * MS, 339 * MS, 389 * MS]
    );
    assert_eq!(ours, rfc);
}

#[test]
fn agrees_with_the_rfc_pseudo_code_through_bursts_and_idle() {
    // Overload, a pause that drains the queue (CoDel leaves dropping), overload again soon
    // after (count resumes from the last cycle's rate), a long idle, a last burst.
    let mut arrivals = Vec::new();
    let mut t = 0;
    for (n, gap) in [
        (1500, 400 * US),
        (200, 3 * MS),
        (1500, 350 * US),
        (100, 20 * MS),
        (3000, 300 * US),
    ] {
        for _ in 0..n {
            arrivals.push(t);
            t += gap;
        }
    }
    let (ours, rfc, _) = drive(&arrivals, MS, false);
    assert!(ours.len() > 30, "{} drops", ours.len());
    assert_eq!(ours, rfc);
}

#[test]
fn ecn_marks_instead_of_dropping_at_the_same_instants() {
    let arrivals: Vec<Time> = (0..2000).map(|k| k * 500 * US).collect();
    let (marks, _, n) = drive(&arrivals, MS, true);
    assert!(n > 5);
    // The first mark where the first drop was; a marked packet is sent, so the schedule
    // that follows is the control law from there.
    assert_eq!(marks[0].0, 110 * MS);
    assert_eq!(marks[1].0, 210 * MS);
    assert_eq!(marks.len() as u32, n);
}
