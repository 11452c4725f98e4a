//! Retransmission timer arithmetic of RFC 6298: SRTT/RTTVAR with α = 1/8, β = 1/4, K = 4,
//! a clock granularity G, bounds [min_rto, max_rto], exponential back-off that stays in force
//! until a new valid sample arrives (Karn's algorithm, RFC 6298 §5.7).

use crate::time::Time;

#[derive(Clone, Debug)]
pub struct RttEstimator {
    srtt: Time,
    rttvar: Time,
    rto: Time,
    has_sample: bool,
    min_rtt: Time,
    latest: Time,
    min_rto: Time,
    max_rto: Time,
    granularity: Time,
    /// Floor the variance term instead of the RTO (Linux; see `TcpConfig::rto_floor`).
    pub floor_on_variance: bool,
    /// Consecutive back-offs since the last sample.
    pub backoffs: u32,
}

const K: Time = 4;

impl RttEstimator {
    pub fn new(initial_rto: Time, min_rto: Time, max_rto: Time, granularity: Time) -> Self {
        RttEstimator {
            srtt: 0,
            rttvar: 0,
            rto: initial_rto.min(max_rto),
            has_sample: false,
            min_rtt: 0,
            latest: 0,
            min_rto,
            max_rto,
            granularity,
            floor_on_variance: false,
            backoffs: 0,
        }
    }

    /// RFC 6298 §2.2 (first sample) and §2.3 (later samples); §2.4–2.5 bounds. A new sample
    /// also ends any back-off (§5.7: the backed-off RTO is kept only until then).
    pub fn on_sample(&mut self, r: Time) {
        let r = r.max(1);
        if !self.has_sample {
            self.srtt = r;
            self.rttvar = r / 2;
            self.has_sample = true;
            self.min_rtt = r;
        } else {
            let dev = self.srtt.abs_diff(r);
            self.rttvar = (3 * self.rttvar + dev) / 4;
            self.srtt = (7 * self.srtt + r) / 8;
            self.min_rtt = self.min_rtt.min(r);
        }
        self.latest = r;
        self.backoffs = 0;
        self.rto = if self.floor_on_variance {
            (self.srtt + self.min_rto.max(self.granularity).max(K * self.rttvar)).min(self.max_rto)
        } else {
            (self.srtt + self.granularity.max(K * self.rttvar)).clamp(self.min_rto, self.max_rto)
        };
    }

    /// §5.5: the timer expired, double the RTO (bounded by max_rto).
    pub fn backoff(&mut self) {
        self.rto = self.rto.saturating_mul(2).min(self.max_rto);
        self.backoffs += 1;
    }

    /// Raises the RTO to at least `t` (RFC 6298 §5.7 after a SYN timeout).
    pub fn raise_to(&mut self, t: Time) {
        self.rto = self.rto.max(t.min(self.max_rto));
    }

    pub fn rto(&self) -> Time {
        self.rto
    }
    /// 0 before the first sample.
    pub fn srtt(&self) -> Time {
        self.srtt
    }
    pub fn rttvar(&self) -> Time {
        self.rttvar
    }
    pub fn min_rtt(&self) -> Time {
        self.min_rtt
    }
    pub fn latest(&self) -> Time {
        self.latest
    }
    pub fn has_sample(&self) -> bool {
        self.has_sample
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::MS;

    #[test]
    fn rfc6298_formulas() {
        let mut e = RttEstimator::new(1000 * MS, 200 * MS, 60_000 * MS, MS);
        assert_eq!(e.rto(), 1000 * MS);
        e.on_sample(100 * MS);
        // SRTT = R, RTTVAR = R/2, RTO = SRTT + max(G, 4·RTTVAR) = 300 ms.
        assert_eq!(
            (e.srtt(), e.rttvar(), e.rto()),
            (100 * MS, 50 * MS, 300 * MS)
        );
        e.on_sample(200 * MS);
        // RTTVAR = 3/4·50 + 1/4·|100 − 200| = 62.5; SRTT = 7/8·100 + 1/8·200 = 112.5.
        assert_eq!(e.rttvar(), 62_500_000_000);
        assert_eq!(e.srtt(), 112_500_000_000);
        assert_eq!(e.rto(), 112_500_000_000 + 250 * MS);
        // Tiny samples: the floor.
        for _ in 0..100 {
            e.on_sample(MS);
        }
        assert_eq!(e.rto(), 200 * MS);
    }

    #[test]
    fn linux_floor_bounds_the_variance_term() {
        let mut e = RttEstimator::new(1000 * MS, 200 * MS, 60_000 * MS, MS);
        e.floor_on_variance = true;
        e.on_sample(20 * MS);
        assert_eq!(e.rto(), 220 * MS);
    }

    #[test]
    fn backoff_doubles_up_to_the_maximum_and_a_sample_ends_it() {
        let mut e = RttEstimator::new(1000 * MS, 200 * MS, 5000 * MS, MS);
        e.backoff();
        assert_eq!(e.rto(), 2000 * MS);
        e.backoff();
        assert_eq!(e.rto(), 4000 * MS);
        e.backoff();
        assert_eq!(e.rto(), 5000 * MS);
        assert_eq!(e.backoffs, 3);
        e.on_sample(100 * MS);
        assert_eq!(e.rto(), 300 * MS);
        assert_eq!(e.backoffs, 0);
    }
}
