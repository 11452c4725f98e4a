//! Measurement: histograms, time series, per-flow records, and columnar tables that leave the
//! core ready for Arrow/Parquet.

pub mod table;

pub use table::{Column, ColumnData, Table};

use crate::time::Time;

/// Log-linear histogram of non-negative integers (HdrHistogram-like): values below 64 are
/// exact; above, each power of two is split into 32 buckets, so quantiles are within 1/32
/// (3.1 %) relative error. Only the span of buckets between the smallest and the largest
/// value seen is stored (an RTT histogram of one flow covers a few dozen buckets, not the
/// 2048 of the whole range), so one per flow stays small; it grows rarely, never per value
/// once the range is established.
#[derive(Clone, Debug)]
pub struct Histogram {
    /// Counts of buckets `lo .. lo + buckets.len()`.
    buckets: Vec<u32>,
    lo: usize,
    pub count: u64,
    pub sum: f64,
    pub min: u64,
    pub max: u64,
}

const SUB: u32 = 32;

impl Default for Histogram {
    fn default() -> Self {
        Histogram {
            buckets: Vec::new(),
            lo: 0,
            count: 0,
            sum: 0.0,
            min: u64::MAX,
            max: 0,
        }
    }
}

impl Histogram {
    #[inline]
    fn index(v: u64) -> usize {
        if v < 2 * SUB as u64 {
            return v as usize;
        }
        let exp = 63 - v.leading_zeros(); // >= 6
        let shift = exp - 5;
        let mant = (v >> shift) as u32 - SUB; // 0..32
        ((exp - 4) * SUB + mant) as usize
    }

    #[inline]
    fn lower_bound(i: usize) -> u64 {
        let i = i as u32;
        if i < 2 * SUB {
            return i as u64;
        }
        let exp = i / SUB + 4;
        let mant = i % SUB;
        ((SUB + mant) as u64) << (exp - 5)
    }

    #[inline]
    pub fn record(&mut self, v: u64) {
        let i = Self::index(v);
        match self.buckets.get_mut(i.wrapping_sub(self.lo)) {
            Some(c) => *c += 1,
            None => self.widen_to(i),
        }
        self.count += 1;
        self.sum += v as f64;
        self.min = self.min.min(v);
        self.max = self.max.max(v);
    }

    /// Extends the stored span to bucket `i` and counts one value there.
    #[cold]
    fn widen_to(&mut self, i: usize) {
        if self.buckets.is_empty() {
            self.lo = i;
            self.buckets.push(1);
        } else if i < self.lo {
            let extra = self.lo - i;
            self.buckets.splice(0..0, std::iter::repeat(0).take(extra));
            self.lo = i;
            self.buckets[0] = 1;
        } else {
            self.buckets.resize(i - self.lo + 1, 0);
            self.buckets[i - self.lo] = 1;
        }
    }

    pub fn mean(&self) -> Option<f64> {
        (self.count > 0).then(|| self.sum / self.count as f64)
    }

    /// Value at quantile `q` in [0, 1] (bucket midpoint, clamped to the observed range).
    pub fn quantile(&self, q: f64) -> Option<u64> {
        if self.count == 0 {
            return None;
        }
        let rank = ((q * self.count as f64).ceil() as u64).clamp(1, self.count);
        let mut seen = 0u64;
        for (j, &c) in self.buckets.iter().enumerate() {
            let i = self.lo + j;
            seen += c as u64;
            if seen >= rank {
                let lo = Self::lower_bound(i);
                let hi = Self::lower_bound(i + 1).max(lo + 1);
                let mid = lo + (hi - lo - 1) / 2;
                return Some(mid.clamp(self.min, self.max));
            }
        }
        Some(self.max)
    }
}

/// Long-format time series: (time, kind, entity, value), with kinds and entities interned.
#[derive(Default, Clone, Debug)]
pub struct TimeSeries {
    pub time: Vec<Time>,
    pub kind: Vec<u16>,
    pub entity: Vec<u32>,
    pub value: Vec<f64>,
    kinds: Vec<String>,
    entities: Vec<String>,
    /// Index of `entities`: a run samples every port of a router with 65 536 hosts, and a
    /// scan per name would cost as many steps as names.
    entity_index: std::collections::HashMap<String, u32>,
}

impl TimeSeries {
    pub fn kind_id(&mut self, name: &str) -> u16 {
        match self.kinds.iter().position(|k| k == name) {
            Some(i) => i as u16,
            None => {
                self.kinds.push(name.to_string());
                (self.kinds.len() - 1) as u16
            }
        }
    }

    pub fn entity_id(&mut self, name: &str) -> u32 {
        if let Some(&i) = self.entity_index.get(name) {
            return i;
        }
        let i = self.entities.len() as u32;
        self.entities.push(name.to_string());
        self.entity_index.insert(name.to_string(), i);
        i
    }

    #[inline]
    pub fn push(&mut self, t: Time, kind: u16, entity: u32, value: f64) {
        self.time.push(t);
        self.kind.push(kind);
        self.entity.push(entity);
        self.value.push(value);
    }

    pub fn len(&self) -> usize {
        self.time.len()
    }
    pub fn is_empty(&self) -> bool {
        self.time.is_empty()
    }

    pub fn to_table(&self) -> Table {
        let mut t = Table::new("timeseries");
        t.push(
            "time_s",
            ColumnData::F64(
                self.time
                    .iter()
                    .map(|&x| Some(crate::time::to_secs(x)))
                    .collect(),
            ),
        );
        t.push(
            "kind",
            ColumnData::Str(
                self.kind
                    .iter()
                    .map(|&k| self.kinds[k as usize].clone())
                    .collect(),
            ),
        );
        t.push(
            "entity",
            ColumnData::Str(
                self.entity
                    .iter()
                    .map(|&e| self.entities[e as usize].clone())
                    .collect(),
            ),
        );
        t.push(
            "value",
            ColumnData::F64(self.value.iter().map(|&v| Some(v)).collect()),
        );
        t
    }

    /// Values of one (kind, entity) series, for tests and quick analysis.
    pub fn series(&self, kind: &str, entity: &str) -> Vec<(Time, f64)> {
        let (Some(k), Some(e)) = (
            self.kinds.iter().position(|x| x == kind),
            self.entities.iter().position(|x| x == entity),
        ) else {
            return vec![];
        };
        (0..self.len())
            .filter(|&i| self.kind[i] as usize == k && self.entity[i] as usize == e)
            .map(|i| (self.time[i], self.value[i]))
            .collect()
    }
}

/// One row of the flows table. Each side of a flow fills the fields it knows; what neither
/// knows stays `None` (a null in the table).
#[derive(Clone, Debug, Default)]
pub struct FlowRecord {
    pub id: u32,
    pub name: String,
    /// "tcp" or "udp".
    pub transport: String,
    /// Congestion controller / feedback scheme label (e.g. "newreno+ecn", "cbr").
    pub scheme: String,
    pub src: String,
    pub dst: String,
    /// When the application started (s).
    pub start_s: Option<f64>,
    /// Bytes the application asked to send (None: unlimited).
    pub size_bytes: Option<u64>,
    pub bytes_sent: Option<u64>,
    /// Application bytes delivered in order to the receiver.
    pub bytes_delivered: Option<u64>,
    pub packets_sent: Option<u64>,
    pub packets_received: Option<u64>,
    /// Data segments that arrived already received (spurious retransmissions), TCP only.
    pub duplicate_segments: Option<u64>,
    /// Flow completion time (s): application start → last byte delivered to the receiving
    /// application. None if the flow did not finish.
    pub fct_s: Option<f64>,
    /// Goodput (bit/s): bytes delivered × 8 over (last delivery − start), or over
    /// (end of run − start) for unfinished flows.
    pub goodput_bps: Option<f64>,
    pub retransmissions: Option<u64>,
    pub rtos: Option<u64>,
    /// Fast recoveries entered (duplicate ACKs, SACK or RACK found a loss), TCP only.
    pub recoveries: Option<u64>,
    /// Tail loss probes sent (TCP with SACK).
    pub loss_probes: Option<u64>,
    /// Congestion signals the sender acted on, by level (level 1 = ECN/CL1/incipient, 2 =
    /// CL2/moderate); schemes with one level use level 1.
    pub signals_l1: Option<u64>,
    pub signals_l2: Option<u64>,
    pub rtt_min_s: Option<f64>,
    pub rtt_mean_s: Option<f64>,
    pub rtt_p95_s: Option<f64>,
    /// One-way delay of delivered packets (UDP) or of every data segment that reached the
    /// receiver, retransmissions included (TCP): from leaving the sending host to arriving.
    pub owd_mean_s: Option<f64>,
    pub owd_p95_s: Option<f64>,
    pub owd_max_s: Option<f64>,
    /// Initial congestion window (segments) chosen at connection setup.
    pub init_cwnd: Option<u64>,
    /// Schemes that assemble feedback over several ACKs (UNO): decisions the sender made and
    /// their mean delay (s) from the first contributing ACK to the decision.
    pub feedback_decisions: Option<u64>,
    pub feedback_delay_mean_s: Option<f64>,
}

impl FlowRecord {
    pub fn table(rows: &[FlowRecord]) -> Table {
        let mut t = Table::new("flows");
        macro_rules! col {
            ($name:literal, $kind:ident, $f:expr) => {
                t.push($name, ColumnData::$kind(rows.iter().map($f).collect()));
            };
        }
        col!("flow", I64, |r| Some(r.id as i64));
        col!("name", Str, |r| r.name.clone());
        col!("transport", Str, |r| r.transport.clone());
        col!("scheme", Str, |r| r.scheme.clone());
        col!("src", Str, |r| r.src.clone());
        col!("dst", Str, |r| r.dst.clone());
        col!("start_s", F64, |r| r.start_s);
        col!("size_bytes", I64, |r| r.size_bytes.map(|x| x as i64));
        col!("bytes_sent", I64, |r| r.bytes_sent.map(|x| x as i64));
        col!("bytes_delivered", I64, |r| r
            .bytes_delivered
            .map(|x| x as i64));
        col!("packets_sent", I64, |r| r.packets_sent.map(|x| x as i64));
        col!("packets_received", I64, |r| r
            .packets_received
            .map(|x| x as i64));
        col!("duplicate_segments", I64, |r| r
            .duplicate_segments
            .map(|x| x as i64));
        col!("fct_s", F64, |r| r.fct_s);
        col!("goodput_bps", F64, |r| r.goodput_bps);
        col!("retransmissions", I64, |r| r
            .retransmissions
            .map(|x| x as i64));
        col!("rtos", I64, |r| r.rtos.map(|x| x as i64));
        col!("recoveries", I64, |r| r.recoveries.map(|x| x as i64));
        col!("loss_probes", I64, |r| r.loss_probes.map(|x| x as i64));
        col!("signals_l1", I64, |r| r.signals_l1.map(|x| x as i64));
        col!("signals_l2", I64, |r| r.signals_l2.map(|x| x as i64));
        col!("rtt_min_s", F64, |r| r.rtt_min_s);
        col!("rtt_mean_s", F64, |r| r.rtt_mean_s);
        col!("rtt_p95_s", F64, |r| r.rtt_p95_s);
        col!("owd_mean_s", F64, |r| r.owd_mean_s);
        col!("owd_p95_s", F64, |r| r.owd_p95_s);
        col!("owd_max_s", F64, |r| r.owd_max_s);
        col!("init_cwnd", I64, |r| r.init_cwnd.map(|x| x as i64));
        col!("feedback_decisions", I64, |r| r
            .feedback_decisions
            .map(|x| x as i64));
        col!("feedback_delay_mean_s", F64, |r| r.feedback_delay_mean_s);
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_quantiles_within_bucket_error() {
        let mut h = Histogram::default();
        for v in 1..=100_000u64 {
            h.record(v * 1000);
        }
        for q in [0.5, 0.95, 0.99] {
            let got = h.quantile(q).unwrap() as f64;
            let exact = q * 100_000.0 * 1000.0;
            assert!(
                (got - exact).abs() / exact < 1.0 / 32.0,
                "q{q}: {got} vs {exact}"
            );
        }
        assert_eq!(h.min, 1000);
        assert_eq!(h.max, 100_000_000);
        assert!((h.mean().unwrap() - 50_000_500.0).abs() < 1.0);
    }

    #[test]
    fn histogram_stores_only_the_span_it_saw() {
        let mut h = Histogram::default();
        assert!(h.buckets.is_empty() && h.quantile(0.5).is_none());
        for v in [44_000_000u64, 45_000_000, 70_000_000] {
            h.record(v);
        }
        assert!(h.buckets.len() <= 64, "{}", h.buckets.len());
        // Growing downwards keeps earlier counts in their buckets.
        h.record(3);
        h.record(3);
        assert_eq!(h.quantile(0.0), Some(3));
        assert_eq!(h.quantile(0.4), Some(3));
        let q = h.quantile(1.0).unwrap();
        assert!((q as f64 - 70e6).abs() / 70e6 < 1.0 / 32.0);
        assert_eq!(h.count, 5);
        assert_eq!(h.buckets.iter().map(|&c| c as u64).sum::<u64>(), 5);
    }

    #[test]
    fn histogram_small_values_exact() {
        let mut h = Histogram::default();
        for v in [0, 1, 2, 63] {
            h.record(v);
        }
        assert_eq!(h.quantile(0.0), Some(0));
        assert_eq!(h.quantile(1.0), Some(63));
        for v in [64u64, 100, 1 << 40, u64::MAX / 2] {
            let i = Histogram::index(v);
            assert!(
                Histogram::lower_bound(i) <= v && v < Histogram::lower_bound(i + 1),
                "{v}"
            );
        }
    }
}
