//! NewReno's response to loss (RFC 5681 §3.1–3.2, RFC 6582) for controllers that keep their
//! window in segments and only differ from TCP in how they grow and react to explicit
//! feedback (the load-factor family: VCP, UCP, HFCC, MLCP, BMCC).
//!
//! A reduction halves the smaller of the flight size and the window (ns-2's `TcpAgent::slowdown`
//! halves `windowd()`, the window; Linux's `tcp_reno_ssthresh` halves `snd_cwnd`; RFC 5681
//! eq. 4 is a bound, "no more than" FlightSize/2). The flight size SND.MAX − SND.UNA can exceed
//! the window: after a NewReno recovery that lasted several round trips, the inflation has let
//! new data into the network beyond it (two or three windows), and halving the flight *raised*
//! the window at the next fast retransmit. On the HFCC seven-link chain (seed 2) one 360-ms
//! flow went through 24 spurious recoveries in a row, its window growing 1.19 times per
//! recovery on average (59.5 → 3956.5 segments of 960 bytes in 8 s, with the link's code `11`
//! ignored throughout, since a controller in fast recovery does not react to codes), until its
//! 11.4 MB outstanding overflowed the first link.

/// The [`Controller`](crate::cc::Controller) methods of loss and window for a controller with
/// fields `loss: RenoLoss`, `cwnd` (segments, f64), `mss` (bytes, f64) and `cap` (segments):
/// `on_loss`, `on_recovery_end`, `on_rto`, `window`, `ssthresh`.
macro_rules! reno_loss_methods {
    () => {
        fn on_loss(&mut self, _now: $crate::time::Time, bytes_in_flight: u64) {
            self.loss
                .on_loss(&mut self.cwnd, bytes_in_flight, self.mss, self.cap);
        }

        fn on_recovery_end(&mut self, _now: $crate::time::Time) {
            self.loss.on_recovery_end(&mut self.cwnd, self.cap);
        }

        fn on_rto(&mut self, _now: $crate::time::Time, bytes_in_flight: u64) {
            self.loss.on_rto(&mut self.cwnd, bytes_in_flight, self.mss);
        }

        fn window(&self) -> u64 {
            (self.cwnd.max(1.0) * self.mss) as u64
        }

        fn ssthresh(&self) -> u64 {
            self.loss.ssthresh_bytes(self.mss)
        }
    };
}
pub(crate) use reno_loss_methods;

#[derive(Clone, Debug)]
pub struct RenoLoss {
    /// Fast recovery, from `on_loss` to `on_recovery_end`.
    pub in_fast_recovery: bool,
    /// The last event was a timeout and no new data has been acknowledged since.
    rto_without_progress: bool,
    /// Slow-start threshold in segments (infinite until the first loss).
    pub ssthresh: f64,
    pub losses: u64,
    pub timeouts: u64,
}

impl Default for RenoLoss {
    fn default() -> Self {
        RenoLoss {
            in_fast_recovery: false,
            rto_without_progress: false,
            ssthresh: f64::INFINITY,
            losses: 0,
            timeouts: 0,
        }
    }
}

impl RenoLoss {
    /// RFC 5681 eq. 4 in segments, max(FlightSize/2, 2), with the flight size counted at most
    /// as the window `cwnd` (segments): a reduction never raises the window.
    fn halved(bytes_in_flight: u64, mss: f64, cwnd: f64) -> f64 {
        ((bytes_in_flight as f64 / mss).min(cwnd) / 2.0).max(2.0)
    }

    /// An ACK acknowledged `acked_bytes` of new data.
    pub fn on_ack(&mut self, acked_bytes: u64) {
        if acked_bytes > 0 {
            self.rto_without_progress = false;
        }
    }

    /// Fast retransmit: halve the flight size once per recovery.
    pub fn on_loss(&mut self, cwnd: &mut f64, bytes_in_flight: u64, mss: f64, cap: f64) {
        if self.in_fast_recovery {
            return;
        }
        self.in_fast_recovery = true;
        self.losses += 1;
        self.ssthresh = Self::halved(bytes_in_flight, mss, *cwnd);
        *cwnd = self.ssthresh.min(cap);
    }

    /// RFC 6582 §3.2 step 6, full acknowledgment: cwnd = ssthresh.
    pub fn on_recovery_end(&mut self, cwnd: &mut f64, cap: f64) {
        if self.in_fast_recovery {
            self.in_fast_recovery = false;
            *cwnd = self.ssthresh.min(cap);
        }
    }

    /// Timeout: one segment; RFC 5681 §3.1: a timeout of an already retransmitted segment
    /// keeps ssthresh.
    pub fn on_rto(&mut self, cwnd: &mut f64, bytes_in_flight: u64, mss: f64) {
        self.timeouts += 1;
        self.in_fast_recovery = false;
        if !self.rto_without_progress {
            self.ssthresh = Self::halved(bytes_in_flight, mss, *cwnd);
        }
        *cwnd = 1.0;
        self.rto_without_progress = true;
    }

    /// ssthresh in bytes (u64::MAX while unset).
    pub fn ssthresh_bytes(&self, mss: f64) -> u64 {
        if self.ssthresh.is_finite() {
            (self.ssthresh * mss) as u64
        } else {
            u64::MAX
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Fast retransmit halves the smaller of flight size and window. The case of the HFCC
    /// chain's 360-ms flow at 14.687 s: a window of 3089 segments (960 bytes) and 7 596 480
    /// bytes outstanding (7913 segments, let in by the previous recovery's inflation)
    /// gives ssthresh = cwnd = 3089/2 = 1544.5, not 7913/2 = 3956.5 (a window 1.28 times
    /// larger). A flight below the window is halved as before: 20 segments in flight, window
    /// 30 → 10; and never below 2.
    #[test]
    fn a_loss_halves_the_smaller_of_flight_and_window() {
        let mss = 960.0;
        for (cwnd, flight, want) in [
            (3089.0, 7_596_480, 1544.5),
            (30.0, 20 * 960, 10.0),
            (3.0, 10 * 960, 2.0),
        ] {
            let mut loss = RenoLoss::default();
            let mut w = cwnd;
            loss.on_loss(&mut w, flight, mss, f64::INFINITY);
            assert_eq!(
                (w, loss.ssthresh),
                (want, want),
                "cwnd {cwnd}, flight {flight}"
            );
            loss.on_recovery_end(&mut w, f64::INFINITY);
            assert_eq!(w, want);
        }
        // A timeout: the same bound on ssthresh, the window to one segment.
        let mut loss = RenoLoss::default();
        let mut w = 100.0;
        loss.on_rto(&mut w, 300 * 960, mss);
        assert_eq!((w, loss.ssthresh), (1.0, 50.0));
    }
}
