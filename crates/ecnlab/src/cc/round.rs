//! Round-trip counting from delivery counts (draft-cheng-iccrg-delivery-rate-estimation,
//! used as BBR counts rounds): a round ends when an ACK covers a packet that was sent after the
//! previous round ended, i.e. when the packet's `prior_delivered` reaches the connection's
//! `delivered` at the end of the previous round. Needs the connection to fill
//! [`AckEvent::delivered`] and [`AckEvent::prior_delivered`].

use super::AckEvent;

#[derive(Clone, Debug, Default)]
pub struct RoundCounter {
    next_round_delivered: u64,
    count: u64,
}

impl RoundCounter {
    /// Notes one ACK; true if it starts a new round.
    #[inline]
    pub fn on_ack(&mut self, ev: &AckEvent) -> bool {
        if ev.prior_delivered >= self.next_round_delivered {
            self.next_round_delivered = ev.delivered;
            self.count += 1;
            true
        } else {
            false
        }
    }

    /// Ends the current round at the connection's present `delivered` (BBR's ProbeRTT and
    /// other "start counting from now" points).
    pub fn restart_at(&mut self, delivered: u64) {
        self.next_round_delivered = delivered;
    }

    /// Rounds completed so far.
    pub fn count(&self) -> u64 {
        self.count
    }
}
