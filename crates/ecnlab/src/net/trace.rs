//! Link capacity from a mahimahi packet-delivery trace.
//!
//! A mahimahi trace has one line per delivery opportunity: a time in milliseconds at which
//! the link may deliver one MTU-sized packet. The trace repeats with a period equal to its
//! last time. We turn it into a piecewise-constant [`RateSchedule`]: opportunities are
//! counted per `bin` and each bin's rate is `count · mtu · 8 / bin`. The fluid reading keeps
//! one pending event per port (mahimahi's own shell serves whole opportunities instead; with
//! a 1 ms bin the two agree over any window of a few milliseconds).

use super::RateSchedule;
use crate::time::{Time, MS, SEC};

/// A parsed trace: opportunity times in one period, in milliseconds, and the period.
#[derive(Clone, Debug, PartialEq)]
pub struct MahimahiTrace {
    pub opportunities_ms: Vec<u64>,
    pub period_ms: u64,
}

impl MahimahiTrace {
    /// Parses the text of a trace file. Blank lines are ignored; every other line must be a
    /// non-negative integer, never smaller than the line before; the last must be positive.
    pub fn parse(text: &str) -> Result<Self, String> {
        let mut ops = Vec::new();
        let mut last = 0u64;
        for (i, line) in text.lines().enumerate() {
            let l = line.trim();
            if l.is_empty() {
                continue;
            }
            let t: u64 = l.parse().map_err(|_| {
                format!(
                    "line {}: expected a time in whole milliseconds, got \"{l}\"",
                    i + 1
                )
            })?;
            if t < last {
                return Err(format!(
                    "line {}: times must not decrease ({t} after {last})",
                    i + 1
                ));
            }
            last = t;
            ops.push(t);
        }
        if ops.is_empty() {
            return Err("the trace has no delivery opportunities".into());
        }
        if last == 0 {
            return Err("the last time must be positive (it is the trace's period)".into());
        }
        Ok(MahimahiTrace {
            opportunities_ms: ops,
            period_ms: last,
        })
    }

    /// Mean rate over one period, in bits per second.
    pub fn mean_bps(&self, mtu: u32) -> f64 {
        self.opportunities_ms.len() as f64 * mtu as f64 * 8.0 / (self.period_ms as f64 / 1e3)
    }

    /// The rate schedule over `[0, until)`: opportunities counted per `bin`, repeated with
    /// the trace's period. Opportunity `t` ms of repetition `k` falls at `t + k·period` ms; an
    /// opportunity at exactly the period belongs to the next repetition's time 0 bin.
    pub fn schedule(&self, bin: Time, mtu: u32, until: Time) -> Result<RateSchedule, String> {
        if bin == 0 {
            return Err("bin: must be positive".into());
        }
        let bins = until.div_ceil(bin).max(1);
        if bins > 10_000_000 {
            return Err(format!(
                "bin: {bins} bins over the run are too many; use a wider bin"
            ));
        }
        let mut counts = vec![0u32; bins as usize];
        let period = self.period_ms * MS;
        let mut k = 0u64;
        'outer: loop {
            let base = k * period;
            for &t in &self.opportunities_ms {
                let at = base + t * MS;
                if at >= until {
                    break 'outer;
                }
                counts[(at / bin) as usize] += 1;
            }
            k += 1;
        }
        let bits_per_op = mtu as u128 * 8 * SEC as u128;
        let mut steps: Vec<(Time, u64)> = Vec::new();
        for (i, &c) in counts.iter().enumerate() {
            let bps = (c as u128 * bits_per_op / bin as u128) as u64;
            if steps.last().map(|s| s.1) != Some(bps) {
                steps.push((i as Time * bin, bps));
            }
        }
        RateSchedule::new(steps)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::US;

    #[test]
    fn a_known_trace_gives_its_rate_and_wraps() {
        // 12 opportunities in a 4 ms period: 1 at 1 ms, 2 at 2, 3 at 3, 6 at 4 (= next 0).
        let text = "1\n2\n2\n3\n3\n3\n4\n4\n4\n4\n4\n4\n";
        let tr = MahimahiTrace::parse(text).unwrap();
        assert_eq!(tr.period_ms, 4);
        // 12 × 1500 B per 4 ms = 36 Mb/s.
        assert!((tr.mean_bps(1500) - 36e6).abs() < 1e-6);
        let mut s = tr.schedule(MS, 1500, 12 * MS).unwrap();
        // One opportunity is 1500·8 bits per 1 ms bin = 12 Mb/s.
        let per_op = 12_000_000;
        let expect = [0, 1, 2, 3, 6, 1, 2, 3, 6, 1, 2, 3];
        for (i, &n) in expect.iter().enumerate() {
            assert_eq!(s.rate_at(i as Time * MS + US), n * per_op, "bin {i}");
        }
        // Over any whole period after the first the link carries the trace's mean rate.
        let bits = s.capacity_bits(12 * MS) - s.capacity_bits(4 * MS);
        assert!((bits - 36e6 * 0.008).abs() < 1.0);
    }

    #[test]
    fn wider_bins_average_the_opportunities() {
        let tr = MahimahiTrace::parse("1\n2\n2\n3\n3\n3\n4\n4\n4\n4\n4\n4\n").unwrap();
        let mut s = tr.schedule(4 * MS, 1500, 12 * MS).unwrap();
        // First 4 ms: opportunities at 1, 2, 2, 3, 3, 3 (the six at 4 ms open the next bin).
        assert_eq!(s.rate_at(0), 6 * 1500 * 8 * 250);
        assert_eq!(s.rate_at(5 * MS), 12 * 1500 * 8 * 250);
    }

    #[test]
    fn bad_traces_say_which_line() {
        assert!(MahimahiTrace::parse("")
            .unwrap_err()
            .contains("no delivery"));
        assert!(MahimahiTrace::parse("0\n0\n")
            .unwrap_err()
            .contains("period"));
        let e = MahimahiTrace::parse("1\n3\n2\n").unwrap_err();
        assert!(e.starts_with("line 3"), "{e}");
        let e = MahimahiTrace::parse("1\nx\n").unwrap_err();
        assert!(e.starts_with("line 2"), "{e}");
    }
}
