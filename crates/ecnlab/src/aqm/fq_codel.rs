//! FQ-CoDel (RFC 8290): packets hashed by 5-tuple into `flows` queues, each run by its own
//! CoDel; deficit round robin with a quantum of bytes between them, flows that just became
//! active ("new", sparse) served before the old ones.
//!
//! The dequeue loop follows Linux's `fq_codel_dequeue`: a new flow that empties moves to the
//! old list when there is one (so it cannot come back as new at once and starve the rest),
//! else leaves.
//!
//! Above the packet limit a batch goes from the head of the flow holding the most bytes,
//! by one of two Linux rules (`overflow`):
//!
//! - `qdisc` (net/sched/sch_fq_codel.c, `fq_codel_drop`; ns-3's FqCoDelQueueDisc the same):
//!   heads until half of that flow's bytes are gone or `drop_batch` packets (64) have
//!   been, at least one; the flow's CoDel count rises by the number dropped.
//! - `mac80211` (include/net/fq_impl.h, `fq_flow_drop`, the queue Linux's Wi-Fi stack runs
//!   per station): min(`drop_batch`, half the flow's packets) heads, at least one (mac80211
//!   passes no batch size: its 32 is fixed); CoDel's state is left alone.
//!
//! The whole-discipline memory limits (32 MB of the qdisc, 16 MB of mac80211, counted in
//! the kernel's buffer truesize) are not modelled: at 1500-byte packets the packet limits
//! (10 240 and 8 192) are 15.4 and 12.3 MB of wire bytes.

use super::codel::{CodelParams, CodelQueue, CodelVars};
use super::{DropReason, Limit, Qdisc, Verdict};
use crate::packet::{FlowKey, Packet, PacketPool, PktId};
use crate::time::Time;
use crate::units::Duration;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;
use std::hash::{Hash, Hasher};

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FqCodelConfig {
    #[serde(default = "super::codel::default_target")]
    pub target: Duration,
    #[serde(default = "super::codel::default_interval")]
    pub interval: Duration,
    /// Buffer limit in packets, over all flows (Linux's default 10240).
    #[serde(default = "default_limit")]
    pub limit: u32,
    /// Number of flow queues (hash buckets).
    #[serde(default = "default_flows")]
    pub flows: u32,
    /// Bytes a flow may send per round.
    #[serde(default = "default_quantum")]
    pub quantum: u32,
    #[serde(default = "super::codel::default_mtu")]
    pub mtu: u32,
    /// CE-mark ECN-capable packets instead of dropping them (Linux's default: on).
    #[serde(default = "default_ecn")]
    pub ecn: bool,
    /// What goes at the limit: `qdisc` (Linux's fq_codel qdisc) or `mac80211`.
    #[serde(default)]
    pub overflow: Overflow,
    /// Most packets dropped at once at the limit (Linux's drop_batch_size, 64).
    #[serde(default = "default_drop_batch")]
    pub drop_batch: u32,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Overflow {
    #[default]
    Qdisc,
    Mac80211,
}

fn default_limit() -> u32 {
    10240
}
fn default_flows() -> u32 {
    1024
}
fn default_quantum() -> u32 {
    1514
}
fn default_ecn() -> bool {
    true
}
fn default_drop_batch() -> u32 {
    64
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum List {
    None,
    New,
    Old,
}

struct Flow {
    q: VecDeque<(PktId, u32)>,
    bytes: u64,
    deficit: i64,
    vars: CodelVars,
    list: List,
}

pub struct FqCodel {
    flows: Vec<Flow>,
    new_flows: VecDeque<u32>,
    old_flows: VecDeque<u32>,
    params: CodelParams,
    quantum: i64,
    limit: u32,
    perturbation: u64,
    pkts: usize,
    bytes: u64,
    overflow: Overflow,
    drop_batch: u32,
    /// The last overflow's drops, handed out by `evicted` (capacity `drop_batch`, reused).
    evicted: VecDeque<(PktId, DropReason)>,
}

/// One flow's FIFO as CoDel sees it; MAXPACKET reads the whole discipline's bytes.
struct FlowQueue<'a> {
    flow: &'a mut VecDeque<(PktId, u32)>,
    flow_bytes: &'a mut u64,
    pkts: &'a mut usize,
    bytes: &'a mut u64,
}

impl CodelQueue for FlowQueue<'_> {
    fn pop(&mut self) -> Option<PktId> {
        let (id, len) = self.flow.pop_front()?;
        *self.flow_bytes -= len as u64;
        *self.pkts -= 1;
        *self.bytes -= len as u64;
        Some(id)
    }
    fn backlog_bytes(&self) -> u64 {
        *self.bytes
    }
}

impl FqCodel {
    pub fn new(cfg: &FqCodelConfig, perturbation: u64) -> Result<Self, String> {
        if cfg.flows == 0 || cfg.flows > 65536 {
            return Err(format!("flows: must be 1 to 65536, got {}", cfg.flows));
        }
        if cfg.quantum == 0 {
            return Err("quantum: must be positive".into());
        }
        if cfg.limit == 0 {
            return Err("limit: must be positive".into());
        }
        if cfg.drop_batch == 0 {
            return Err("drop_batch: must be positive".into());
        }
        if cfg.interval.0 == 0 || cfg.target.0 == 0 {
            return Err("target: target and interval must be positive".into());
        }
        Ok(FqCodel {
            flows: (0..cfg.flows)
                .map(|_| Flow {
                    q: VecDeque::new(),
                    bytes: 0,
                    deficit: 0,
                    vars: CodelVars::default(),
                    list: List::None,
                })
                .collect(),
            new_flows: VecDeque::new(),
            old_flows: VecDeque::new(),
            params: CodelParams {
                target: cfg.target.0,
                interval: cfg.interval.0,
                mtu: cfg.mtu,
                ecn: cfg.ecn,
            },
            quantum: cfg.quantum as i64,
            limit: cfg.limit,
            perturbation,
            pkts: 0,
            bytes: 0,
            overflow: cfg.overflow,
            drop_batch: cfg.drop_batch,
            evicted: VecDeque::with_capacity(cfg.drop_batch as usize),
        })
    }

    fn bucket(&self, pkt: &Packet) -> usize {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        self.perturbation.hash(&mut h);
        FlowKey::of(pkt).hash(&mut h);
        (h.finish() % self.flows.len() as u64) as usize
    }

    fn pop_head(&mut self, from_new: bool) {
        if from_new {
            self.new_flows.pop_front();
        } else {
            self.old_flows.pop_front();
        }
    }

    /// Drops a batch from the head of the flow holding the most bytes (the lowest-numbered
    /// of equals, as Linux's scan), by the `overflow` rule, onto `evicted`.
    fn drop_from_fattest(&mut self) {
        let Some((i, _)) = self
            .flows
            .iter()
            .enumerate()
            .max_by_key(|(i, f)| (f.bytes, std::cmp::Reverse(*i)))
        else {
            return;
        };
        let f = &mut self.flows[i];
        let (most, until_bytes) = match self.overflow {
            Overflow::Qdisc => (self.drop_batch as usize, f.bytes / 2),
            Overflow::Mac80211 => (
                (self.drop_batch as usize).min(f.q.len() / 2).max(1),
                u64::MAX,
            ),
        };
        let (mut n, mut len) = (0usize, 0u64);
        while let Some((id, l)) = f.q.pop_front() {
            n += 1;
            len += l as u64;
            self.evicted.push_back((id, DropReason::Overflow));
            if n >= most || len >= until_bytes {
                break;
            }
        }
        f.bytes -= len;
        self.pkts -= n;
        self.bytes -= len;
        if self.overflow == Overflow::Qdisc {
            f.vars.count_drops(n as u32);
        }
    }
}

impl Qdisc for FqCodel {
    fn feedback(&self) -> Option<&'static str> {
        self.params.ecn.then_some("ce")
    }

    fn enqueue(&mut self, _now: Time, id: PktId, pkt: &mut Packet) -> Verdict {
        let i = self.bucket(pkt);
        let len = pkt.wire_len();
        let f = &mut self.flows[i];
        f.q.push_back((id, len));
        f.bytes += len as u64;
        if f.list == List::None {
            f.list = List::New;
            f.deficit = self.quantum;
            self.new_flows.push_back(i as u32);
        }
        self.pkts += 1;
        self.bytes += len as u64;
        if self.pkts > self.limit as usize {
            self.drop_from_fattest();
        }
        Verdict::Enqueued
    }

    fn evicted(&mut self) -> Option<(PktId, DropReason)> {
        self.evicted.pop_front()
    }

    fn evicts(&self) -> bool {
        true
    }

    fn dequeue(
        &mut self,
        now: Time,
        pool: &mut PacketPool,
        dropped: &mut Vec<(PktId, DropReason)>,
    ) -> Option<PktId> {
        loop {
            let from_new = !self.new_flows.is_empty();
            let i = if from_new {
                self.new_flows[0]
            } else {
                *self.old_flows.front()?
            };
            let f = &mut self.flows[i as usize];
            if f.deficit <= 0 {
                f.deficit += self.quantum;
                f.list = List::Old;
                self.pop_head(from_new);
                self.old_flows.push_back(i);
                continue;
            }
            let mut q = FlowQueue {
                flow: &mut f.q,
                flow_bytes: &mut f.bytes,
                pkts: &mut self.pkts,
                bytes: &mut self.bytes,
            };
            if let Some(id) = f.vars.dequeue(now, &self.params, &mut q, pool, dropped) {
                f.deficit -= pool.get(id).wire_len() as i64;
                return Some(id);
            }
            let to_old = from_new && !self.old_flows.is_empty();
            f.list = if to_old { List::Old } else { List::None };
            self.pop_head(from_new);
            if to_old {
                self.old_flows.push_back(i);
            }
        }
    }

    fn len(&self) -> usize {
        self.pkts
    }
    fn bytes(&self) -> u64 {
        self.bytes
    }
    fn limit(&self) -> Limit {
        Limit::Packets(self.limit)
    }
    /// The limit is read only where an arrival brings the packets held above it (the
    /// fattest flow then gives up a batch).
    fn reads_limit(&self) -> bool {
        false
    }
    fn for_each(&self, f: &mut dyn FnMut(PktId)) {
        for fl in &self.flows {
            fl.q.iter().for_each(|e| f(e.0));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A UDP packet of 1000 bytes on the wire from source port `port`.
    fn udp(port: u16) -> Packet {
        Packet::new_udp(
            Default::default(),
            crate::wire::UdpRepr {
                src_port: port,
                dst_port: 9,
            },
            972,
        )
    }

    /// Fills flow 1 with `fat` packets and flow 2 with `thin`, one more to flow 2 going over
    /// `limit`; returns the ids evicted (flow 1's are 0.., flow 2's 100 000..).
    fn overflow(cfg: &str, limit: u32, fat: u32, thin: u32) -> (FqCodel, Vec<u32>) {
        let cfg = FqCodelConfig {
            limit,
            ..serde_json::from_str(cfg).unwrap()
        };
        let mut q = FqCodel::new(&cfg, 1).unwrap();
        let (mut a, mut b) = (udp(1), udp(2));
        for id in 0..fat {
            q.enqueue(0, PktId(id), &mut a);
        }
        for id in 0..=thin {
            q.enqueue(0, PktId(100_000 + id), &mut b);
        }
        let mut out = Vec::new();
        while let Some((id, why)) = q.evicted() {
            assert_eq!(why, DropReason::Overflow);
            out.push(id.0);
        }
        (q, out)
    }

    /// Linux's fq_codel_drop on hand-computed cases: flow 1 holds 90 packets (90 000 bytes),
    /// so the batch stops once 45 000 bytes, 45 packets, are gone; holding 200 (200 000
    /// bytes), it stops at the 64-packet batch; the oldest go first.
    #[test]
    fn the_qdisc_drops_half_the_fattest_flows_bytes_at_most_64_packets() {
        let (q, dropped) = overflow("{}", 100, 90, 10);
        assert_eq!(dropped, (0..45).collect::<Vec<_>>());
        assert_eq!((q.len(), q.bytes()), (56, 56_000));
        let (q, dropped) = overflow("{}", 210, 200, 10);
        assert_eq!(dropped, (0..64).collect::<Vec<_>>());
        assert_eq!(q.len(), 211 - 64);
    }

    /// mac80211's fq_flow_drop: min(32, half the flow's packets), at least one.
    #[test]
    fn mac80211_drops_half_the_fattest_flows_packets_at_most_32() {
        let cfg = r#"{"overflow": "mac80211", "drop_batch": 32}"#;
        let (_, dropped) = overflow(cfg, 100, 90, 10);
        assert_eq!(dropped, (0..32).collect::<Vec<_>>());
        let (_, dropped) = overflow(cfg, 30, 20, 10);
        assert_eq!(dropped, (0..10).collect::<Vec<_>>());
        // Three packets over a limit of two: the fat flow's two give min(32, 1) = 1.
        let (q, dropped) = overflow(cfg, 2, 2, 0);
        assert_eq!((dropped, q.len()), (vec![0], 2));
    }
}
