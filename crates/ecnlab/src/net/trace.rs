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

/// The fastest rate a bin of a trace may give: the fastest a scenario's `rate` may be.
pub const MAX_TRACE_BPS: u128 = 1_000_000_000_000_000;

/// A parsed trace: the distinct opportunity times of one period (ms, increasing), how many
/// opportunities fall at or before each, and the period.
#[derive(Clone, Debug, PartialEq)]
pub struct MahimahiTrace {
    times_ms: Vec<u64>,
    /// `cumulative[i]`: opportunities at times up to and including `times_ms[i]`.
    cumulative: Vec<u64>,
    pub period_ms: u64,
}

impl MahimahiTrace {
    /// Parses the text of a trace file. Blank lines are ignored; every other line must be a
    /// non-negative integer, never smaller than the line before; the last must be positive.
    /// A bad line is named by its number only: a path given by mistake (a file of secrets,
    /// read by an emulation running as root) is never echoed.
    pub fn parse(text: &str) -> Result<Self, String> {
        let mut times_ms: Vec<u64> = Vec::new();
        let mut cumulative: Vec<u64> = Vec::new();
        let mut n = 0u64;
        let mut last = 0u64;
        for (i, line) in text.lines().enumerate() {
            let l = line.trim();
            if l.is_empty() {
                continue;
            }
            let t: u64 = l.parse().map_err(|_| {
                format!(
                    "line {}: expected a time in whole milliseconds (an integer from 0 to {})",
                    i + 1,
                    u64::MAX
                )
            })?;
            if t < last {
                return Err(format!(
                    "line {}: times must not decrease ({t} after {last})",
                    i + 1
                ));
            }
            last = t;
            n += 1;
            if times_ms.last() == Some(&t) {
                *cumulative.last_mut().expect("one per time") = n;
            } else {
                times_ms.push(t);
                cumulative.push(n);
            }
        }
        if n == 0 {
            return Err("the trace has no delivery opportunities".into());
        }
        if last == 0 {
            return Err("the last time must be positive (it is the trace's period)".into());
        }
        Ok(MahimahiTrace {
            times_ms,
            cumulative,
            period_ms: last,
        })
    }

    /// Delivery opportunities in one period.
    pub fn opportunities(&self) -> u64 {
        self.cumulative.last().copied().unwrap_or(0)
    }

    /// Mean rate over one period, in bits per second.
    pub fn mean_bps(&self, mtu: u32) -> f64 {
        self.opportunities() as f64 * mtu as f64 * 8.0 / (self.period_ms as f64 / 1e3)
    }

    /// Opportunities of one period at times (ps from the period's start) below `y`.
    fn before_in_period(&self, y: u128) -> u64 {
        // t·MS < y  ⟺  t < ⌈y / MS⌉
        let bound = y.div_ceil(MS as u128);
        let k = self.times_ms.partition_point(|&t| (t as u128) < bound);
        if k == 0 {
            0
        } else {
            self.cumulative[k - 1]
        }
    }

    /// Opportunities of every repetition at times below `x` ps. Repetition `k` puts its
    /// opportunity `t` at `k·period + t`; with times in `[0, period]`, repetitions before
    /// `q − 1` (q = ⌊x / period⌋) lie wholly below `x`, and `q − 1` and `q` partly.
    /// Exact in 128 bits for any 64-bit time, so a trace whose period spans months neither
    /// wraps nor costs a loop over its repetitions.
    fn before(&self, x: u128) -> u128 {
        let period = self.period_ms as u128 * MS as u128;
        let (q, r) = (x / period, x % period);
        let n = self.opportunities() as u128;
        let mut count = self.before_in_period(r) as u128;
        if q >= 1 {
            count += (q - 1) * n + self.before_in_period(period + r) as u128;
        }
        count
    }

    /// The rate schedule over `[0, until)`: opportunities counted per `bin`, repeated with
    /// the trace's period. Opportunity `t` ms of repetition `k` falls at `t + k·period` ms; an
    /// opportunity at exactly the period belongs to the next repetition's time 0 bin. The
    /// work is one count per bin whatever the trace's length and the run's repetitions.
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
        let bits_per_op = mtu as u128 * 8 * SEC as u128;
        let mut steps: Vec<(Time, u64)> = Vec::new();
        let mut below = 0u128;
        for i in 0..bins {
            let from = i as u128 * bin as u128;
            let to = (from + bin as u128).min(until.max(1) as u128);
            let upto = self.before(to);
            let count = upto - below;
            below = upto;
            let bps = count * bits_per_op / bin as u128;
            if bps > MAX_TRACE_BPS {
                return Err(format!(
                    "file: {count} opportunities of {mtu} bytes in the {} ms bin at {} s give {:.3e} bit/s, beyond the 1 Pbit/s a link may carry",
                    bin as f64 / MS as f64,
                    crate::time::to_secs(from as Time),
                    bps as f64
                ));
            }
            let bps = bps as u64;
            if steps.last().map(|s| s.1) != Some(bps) {
                steps.push((from as Time, bps));
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
        assert_eq!(tr.opportunities(), 12);
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

    /// The expansion as it was first written: every opportunity of every repetition, one by
    /// one (with checked arithmetic here, so it can serve as the reference).
    fn by_enumeration(text: &str, bin: Time, mtu: u32, until: Time) -> Vec<(Time, u64)> {
        let ops: Vec<u64> = text.lines().filter_map(|l| l.trim().parse().ok()).collect();
        let period = *ops.last().unwrap() * MS;
        let bins = until.div_ceil(bin).max(1);
        let mut counts = vec![0u64; bins as usize];
        let mut k = 0u64;
        'outer: loop {
            for &t in &ops {
                let at = k * period + t * MS;
                if at >= until {
                    break 'outer;
                }
                counts[(at / bin) as usize] += 1;
            }
            k += 1;
        }
        let mut steps: Vec<(Time, u64)> = Vec::new();
        for (i, &c) in counts.iter().enumerate() {
            let bps = (c as u128 * mtu as u128 * 8 * SEC as u128 / bin as u128) as u64;
            if steps.last().map(|s| s.1) != Some(bps) {
                steps.push((i as Time * bin, bps));
            }
        }
        steps
    }

    #[test]
    fn counting_agrees_with_enumerating_every_opportunity() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_pcg::Pcg64::seed_from_u64(7);
        for case in 0..300 {
            let n = rng.gen_range(1..40);
            let mut t = rng.gen_range(0..3u64);
            let mut lines = String::new();
            for _ in 0..n {
                t += rng.gen_range(0..4u64);
                lines += &format!("{t}\n");
            }
            if t == 0 {
                lines += "1\n";
            }
            let bin = [US * 100, MS, 3 * MS, 7 * MS + 1][case % 4];
            let until = rng.gen_range(1..200) * MS + rng.gen_range(0..MS);
            let got = MahimahiTrace::parse(&lines)
                .unwrap()
                .schedule(bin, 1500, until)
                .unwrap();
            assert_eq!(
                got.steps(),
                by_enumeration(&lines, bin, 1500, until).as_slice(),
                "trace {lines:?}, bin {bin}, until {until}"
            );
        }
    }

    /// A period of 18 446 744 074 ms times 10^9 ps/ms is beyond 2^64: the expansion wrapped
    /// and gave a 1-s run an 82.6 Mb/s link. One opportunity in 213 days carries 1500 bytes.
    #[test]
    fn a_period_beyond_64_bits_of_picoseconds_does_not_wrap() {
        let tr = MahimahiTrace::parse("1\n18446744074\n").unwrap();
        let s = tr.schedule(MS, 1500, SEC).unwrap();
        assert_eq!(s.capacity_bits(SEC), 12_000.0);
        assert_eq!(s.steps(), &[(0, 0), (MS, 12_000_000), (2 * MS, 0)]);
    }

    /// One million opportunities a millisecond, repeated over ten seconds: ten thousand
    /// million to enumerate; counted, ten thousand bins.
    #[test]
    fn the_work_does_not_grow_with_opportunities_times_repetitions() {
        let text = "1\n".repeat(1_000_000);
        let tr = MahimahiTrace::parse(&text).unwrap();
        let s = tr.schedule(MS, 1500, 10 * SEC).unwrap();
        assert_eq!(s.steps(), &[(0, 0), (MS, 12_000_000_000_000)]);
        // 200 kB per opportunity: 1.6 Pbit/s.
        let e = tr.schedule(MS, 200_000, SEC).unwrap_err();
        assert!(e.contains("beyond the 1 Pbit/s"), "{e}");
    }

    #[test]
    fn a_bad_line_is_named_but_not_echoed() {
        let e = MahimahiTrace::parse("root:$6$secret:19000:0:99999:7:::\n").unwrap_err();
        assert!(e.starts_with("line 1"), "{e}");
        assert!(!e.contains("root") && !e.contains("secret"), "{e}");
    }
}
