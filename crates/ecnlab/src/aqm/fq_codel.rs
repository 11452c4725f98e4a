//! FQ-CoDel (RFC 8290): packets hashed by 5-tuple into `flows` queues, each run by its own
//! CoDel; deficit round robin with a quantum of bytes between them, flows that just became
//! active ("new", sparse) served before the old ones. At the buffer limit the head of the
//! queue holding the most bytes is dropped. This is the queue Linux's Wi-Fi stack runs per
//! station (the "P-Scheduler" APCC compares with).
//!
//! The dequeue loop follows Linux's `fq_codel_dequeue`: a new flow that empties moves to the
//! old list when there is one (so it cannot come back as new at once and starve the rest),
//! else leaves.

use super::codel::{CodelParams, CodelQueue, CodelVars};
use super::{DropReason, Limit, Qdisc, Verdict};
use crate::marker::flows::FlowKey;
use crate::packet::{Packet, PacketPool, PktId};
use crate::scenario::units::Duration;
use crate::time::Time;
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
    evicted: Option<(PktId, DropReason)>,
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
            evicted: None,
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

    /// Drops the head of the flow holding the most bytes.
    fn drop_from_fattest(&mut self) -> Option<PktId> {
        let (i, _) = self
            .flows
            .iter()
            .enumerate()
            .max_by_key(|(i, f)| (f.bytes, std::cmp::Reverse(*i)))?;
        let f = &mut self.flows[i];
        let (id, len) = f.q.pop_front()?;
        f.bytes -= len as u64;
        self.pkts -= 1;
        self.bytes -= len as u64;
        Some(id)
    }
}

impl Qdisc for FqCodel {
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
            self.evicted = self.drop_from_fattest().map(|d| (d, DropReason::Overflow));
        }
        Verdict::Enqueued
    }

    fn evicted(&mut self) -> Option<(PktId, DropReason)> {
        self.evicted.take()
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
    fn for_each(&self, f: &mut dyn FnMut(PktId)) {
        for fl in &self.flows {
            fl.q.iter().for_each(|e| f(e.0));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fattest_flows_head_goes_at_the_limit() {
        let cfg = FqCodelConfig {
            limit: 3,
            ..serde_json::from_str("{}").unwrap()
        };
        let mut q = FqCodel::new(&cfg, 1).unwrap();
        let mk = |port: u16| {
            Packet::new_udp(
                Default::default(),
                crate::wire::UdpRepr {
                    src_port: port,
                    dst_port: 9,
                },
                972,
            )
        };
        let mut a = mk(1);
        let mut b = mk(2);
        for id in 0..3 {
            q.enqueue(0, PktId(id), &mut a);
            assert!(q.evicted().is_none());
        }
        q.enqueue(0, PktId(9), &mut b);
        assert_eq!(q.evicted(), Some((PktId(0), DropReason::Overflow)));
        assert_eq!(q.len(), 3);
    }
}
