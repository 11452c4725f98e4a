//! NewReno's response to loss (RFC 5681 §3.1–3.2, RFC 6582) for controllers that keep their
//! window in segments and only differ from TCP in how they grow and react to explicit
//! feedback (the load-factor family: VCP, UCP, HFCC, MLCP, BMCC).

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
    /// RFC 5681 eq. 4 in segments: max(FlightSize/2, 2).
    fn halved(bytes_in_flight: u64, mss: f64) -> f64 {
        (bytes_in_flight as f64 / mss / 2.0).max(2.0)
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
        self.ssthresh = Self::halved(bytes_in_flight, mss);
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
            self.ssthresh = Self::halved(bytes_in_flight, mss);
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
