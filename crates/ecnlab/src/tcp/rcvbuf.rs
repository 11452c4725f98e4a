//! Linux's receive-buffer autotuning ("dynamic right-sizing", `tcp_rcv_space_adjust` and
//! `tcp_rcvbuf_grow` of Linux 6.18, `tcp_grow_window`, `tcp_rcv_rtt_measure[_ts]`): the
//! receiver does not advertise its whole buffer from the start. The window it offers is the
//! smaller of `rcv_ssthresh`, which grows by two segments per segment received in order, and
//! the window clamp, which starts at the initial buffer (`tcp_rmem[1]`, 128 KiB) times the
//! window-to-buffer ratio and, once per receiver-measured round trip, grows with what the
//! application read (rule below). It stays ahead of a sender in slow start.
//!
//! Readings:
//! - The application reads everything in order at once (as elsewhere in this TCP), so "read
//!   in the last round trip" is "delivered in order" and the receive queue is empty.
//! - The growth: with `c` bytes read in the period and `s` in the one before, the window
//!   becomes 2c + 2·(2c·(c − s)/s) — twice what was read, plus twice its growth, so that a
//!   sender in slow start can double — without the older kernels' 16-segment cushion. This is
//!   what the kernel's `tcp:tcp_rcvbuf_grow` tracepoint shows Linux 6.18.44 doing behind the
//!   emulation's TUN device: (c, s) = (28720, 15796) → 151431, (57440, 28720) → 344639,
//!   (116316, 57440) → 709525, (193860, 116316) → 904679 (each within a byte of the
//!   formula).
//! - The window-to-buffer ratio (Linux's `scaling_ratio`, payload over the buffers' true size)
//!   depends on the receiving device; `rcv_space_ratio` gives it (0.62: 159/256 on the
//!   emulation's TUN devices).
//! - The receiver's RTT: with timestamps, each data segment echoing a new TSval gives the time
//!   since that value was sent, smoothed by 1/8, a smaller sample replacing the estimate;
//!   without, the time to receive one advertised window, keeping the minimum.
//!
//! - Out-of-order data (Linux 6.16 and later): each segment queued beyond a hole grows the
//!   buffer to twice the last period's reading plus the span held out of order, so the
//!   window a sender repairing losses sees is not used up by what it sent beyond them.
//!   Without it, a sender whose retransmission is lost again can be left with nothing it may
//!   send, no SACK to find the loss by, and only the timer.
//! - The data held out of order occupies the buffer: the window offered is the clamp less
//!   what is held, at most `rcv_ssthresh` (`tcp_space` in `__tcp_select_window`), and the
//!   connection never moves the right edge of an earlier offer back. After a slow-start
//!   overshoot with a hundred losses this is what stops a sender from adding new data behind
//!   its repairs, as Linux's does.
//!
//! Checked against a capture of a Linux 6.18 receiver (`scenarios/emulate_mecn_classic.toml`,
//! emulated): its first six windows were 68, 81, 83, 151, 344, 591 KB; this model's, in the
//! same scenario simulated, 70, 80, 84, 154, 350, 592 KB. On by default, as on Linux; the
//! paper experiments and the ns-3 benchmark scenarios, whose hosts have no autotuning, turn
//! it off.

use crate::time::Time;

/// Linux's initial `rcv_ssthresh` (the unscaled window of the handshake).
const INITIAL_SSTHRESH: u64 = 65_535;

#[derive(Clone, Debug)]
pub struct RcvAutotune {
    ratio: f64,
    /// The most the buffer may grow to (`tcp_rmem[2]`).
    max_buf: u64,
    /// `sk_rcvbuf`, `window_clamp`, `rcv_ssthresh` (bytes).
    rcvbuf: u64,
    clamp: u64,
    ssthresh: u64,
    /// `rcvq_space`: bytes read in the last measured period, and where and when the current
    /// period started.
    space: u64,
    space_seq: u64,
    space_time: Time,
    /// `rcv_rtt_est` (0: no estimate yet) and the per-window measurement without timestamps.
    rtt: Time,
    rtt_seq: u64,
    rtt_time: Time,
    last_tsecr: Option<u32>,
    /// The right edge of the window last advertised (relative sequence): the window never
    /// moves it back.
    pub right_edge: u64,
}

impl RcvAutotune {
    /// A receiver with buffer `initial_buf`, growing to `max_buf`, for segments of `mss`
    /// bytes, established at `now`.
    pub fn new(initial_buf: u64, max_buf: u64, ratio: f64, mss: u64, now: Time) -> Self {
        let initial_buf = initial_buf.min(max_buf);
        let clamp = (initial_buf as f64 * ratio) as u64;
        let ssthresh = INITIAL_SSTHRESH.min(clamp);
        RcvAutotune {
            ratio,
            max_buf,
            rcvbuf: initial_buf,
            clamp,
            ssthresh,
            space: ssthresh.min(10 * mss),
            space_seq: 0,
            space_time: now,
            rtt: 0,
            rtt_seq: 0,
            rtt_time: 0,
            last_tsecr: None,
            right_edge: 0,
        }
    }

    /// The window to advertise (bytes).
    pub fn window(&self) -> u64 {
        self.ssthresh.min(self.clamp)
    }

    /// The window to advertise while `held` bytes wait out of order: they occupy the buffer
    /// (Linux's `tcp_space`, with the buffer's overhead in the window-to-buffer ratio).
    pub fn window_holding(&self, held: u64) -> u64 {
        self.ssthresh.min(self.clamp.saturating_sub(held))
    }

    /// The receiver's RTT estimate (0 before the first sample).
    pub fn rtt(&self) -> Time {
        self.rtt
    }

    fn rtt_update(&mut self, sample: Time, window_based: bool) {
        if sample == 0 {
            return;
        }
        if self.rtt == 0 || sample < self.rtt {
            self.rtt = sample;
        } else if !window_based {
            self.rtt = self.rtt - self.rtt / 8 + sample / 8;
        }
    }

    /// A data segment of `len` bytes arrived; `echo` is, with timestamps, the TSecr it carries
    /// and the time this side sent that TSval.
    pub fn on_segment(&mut self, now: Time, len: u64, mss: u64, echo: Option<(u32, Time)>) {
        if let Some((tsecr, sent)) = echo {
            if self.last_tsecr != Some(tsecr) && len >= mss {
                self.last_tsecr = Some(tsecr);
                self.rtt_update(now.saturating_sub(sent), false);
            }
        }
    }

    /// In-order data now reaches `delivered` bytes (read by the application at once); `mss`
    /// is the segment size, `timestamps` whether the RTT comes from them.
    pub fn on_delivered(&mut self, now: Time, delivered: u64, mss: u64, timestamps: bool) {
        self.grow_window(mss);
        if !timestamps {
            if self.rtt_time != 0 && delivered >= self.rtt_seq {
                self.rtt_update(now.saturating_sub(self.rtt_time), true);
            }
            if self.rtt_time == 0 || delivered >= self.rtt_seq {
                self.rtt_seq = delivered + self.window();
                self.rtt_time = now;
            }
        }
        // tcp_rcv_space_adjust / tcp_rcvbuf_grow.
        if self.rtt == 0 || now.saturating_sub(self.space_time) < self.rtt {
            return;
        }
        let copied = delivered.saturating_sub(self.space_seq);
        if copied > self.space {
            // Twice what was read, plus twice the growth over the last period again: a sender
            // in slow start doubles (6.18's `tcp_rcvbuf_grow`, without the old 16-segment
            // cushion).
            let grow = 2 * copied * (copied - self.space) / self.space.max(1);
            self.space = copied;
            self.grow_buffer(2 * copied + 2 * grow);
        }
        self.space_seq = delivered;
        self.space_time = now;
    }

    /// A segment was queued out of order (Linux's `tcp_data_queue_ofo`); `span` is from
    /// rcv_nxt to the end of the highest out-of-order data. With SACK the offered window grows
    /// as for in-order data (`tcp_grow_window`); either way the buffer grows to hold twice
    /// the last period's reading plus that span (`tcp_rcvbuf_grow` with no new reading, Linux
    /// 6.16 and later), so that a sender repairing holes is not held back by the data it
    /// already sent beyond them.
    pub fn on_out_of_order(&mut self, mss: u64, span: u64, sack: bool) {
        if sack {
            self.grow_window(mss);
        }
        self.grow_buffer(2 * self.space + span);
    }

    /// Linux's `tcp_grow_window`: two segments per segment received, up to the clamp.
    fn grow_window(&mut self, mss: u64) {
        self.ssthresh = (self.ssthresh + 2 * mss).min(self.clamp);
    }

    /// Raises the buffer (and the window clamp with it) to hold a window of `rcvwin` bytes,
    /// never beyond `max_buf`, never lowering it.
    fn grow_buffer(&mut self, rcvwin: u64) {
        let rcvbuf = ((rcvwin as f64 / self.ratio) as u64).min(self.max_buf);
        if rcvbuf > self.rcvbuf {
            self.rcvbuf = rcvbuf;
            self.clamp = (rcvbuf as f64 * self.ratio) as u64;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::MS;

    const MSS: u64 = 1448;

    /// `n` segments after the first `from`, 0.1 ms apart from `t`, echoing a TSval sent at
    /// `t − 20 ms`.
    fn round(a: &mut RcvAutotune, t: Time, from: u64, n: u64) {
        for i in 0..n {
            let now = t + i * 100_000_000;
            a.on_segment(now, MSS, MSS, Some(((t / MS) as u32, t - 20 * MS)));
            a.on_delivered(now, (from + i + 1) * MSS, MSS, true);
        }
    }

    #[test]
    fn the_window_starts_small_and_grows_with_what_was_read() {
        let mut a = RcvAutotune::new(131_072, 32 << 20, 0.62, MSS, 0);
        // 131072 × 0.62 = 81264 clamp; the handshake's 65535 first.
        assert_eq!(a.window(), 65_535);
        // Slow start's rounds of 10, 20, 40 and 80 segments, 20 ms apart. The window grows
        // two segments per segment, to the clamp; the RTT is 20 ms from the first echo.
        round(&mut a, 20 * MS, 0, 10);
        assert_eq!(a.rtt(), 20 * MS);
        assert_eq!(a.window(), 81_264);
        // Each round's first segment closes the measuring period. 10 segments read: not more
        // than the initial 10 × MSS, nothing changes.
        round(&mut a, 40 * MS, 10, 20);
        assert_eq!(a.window(), 81_264);
        // 20 segments (28960 bytes) read: grow = 2 × 28960 × (28960 − 14480) / 14480 = 57920,
        // window 2 × 28960 + 2 × 57920 = 173760 → buffer 173760 / 0.62, clamp that × 0.62.
        // The offered window climbs to it two segments per segment received.
        let clamp = |win: u64| (((win as f64 / 0.62) as u64) as f64 * 0.62) as u64;
        round(&mut a, 60 * MS, 30, 1);
        assert_eq!(a.window(), 81_264);
        round(&mut a, 60 * MS + 100_000_000, 31, 1);
        assert_eq!(a.window(), 81_264 + 2 * MSS);
        round(&mut a, 61 * MS, 32, 38);
        assert_eq!(a.window(), clamp(173_760));
        // 40 segments (57920) read: grow = 2 × 57920 × 28960 / 28960 = 115840, window
        // 115840 + 231680 = 347520.
        round(&mut a, 80 * MS, 70, 80);
        assert_eq!(a.window(), clamp(347_520));
        // A quiet round trip and a trickle: it never shrinks.
        round(&mut a, 200 * MS, 150, 1);
        assert_eq!(a.window(), clamp(347_520));
    }

    #[test]
    fn data_held_out_of_order_grows_the_buffer_by_its_span() {
        let mut a = RcvAutotune::new(131_072, 32 << 20, 0.62, MSS, 0);
        let clamp = |win: u64| (((win as f64 / 0.62) as u64) as f64 * 0.62) as u64;
        // Before any reading: space = 10 MSS. 100 segments held beyond a hole: the buffer
        // must hold 2 × 14480 + 144800 = 173760 of window.
        a.on_out_of_order(MSS, 100 * MSS, true);
        assert_eq!(a.clamp, clamp(173_760));
        // With SACK the offered window grew two segments, from the handshake's 65535.
        assert_eq!(a.window(), 65_535 + 2 * MSS);
        // Without SACK it does not (Linux keeps it, to force duplicate ACKs).
        let mut b = RcvAutotune::new(131_072, 32 << 20, 0.62, MSS, 0);
        b.on_out_of_order(MSS, 100 * MSS, false);
        assert_eq!(b.window(), 65_535);
        // A smaller span later never shrinks it.
        a.on_out_of_order(MSS, 10 * MSS, true);
        assert_eq!(a.clamp, clamp(173_760));
    }

    #[test]
    fn without_timestamps_the_rtt_is_the_time_to_receive_a_window() {
        let mut a = RcvAutotune::new(131_072, 32 << 20, 0.62, MSS, 0);
        a.on_delivered(10 * MS, MSS, MSS, false);
        // The first window (65535 + 2 MSS after the first segment) is complete at 35 ms.
        let w = 65_535 + 2 * MSS;
        a.on_delivered(30 * MS, MSS + w - 1, MSS, false);
        assert_eq!(a.rtt(), 0);
        a.on_delivered(35 * MS, MSS + w, MSS, false);
        assert_eq!(a.rtt(), 25 * MS);
    }

    #[test]
    fn data_held_out_of_order_uses_up_the_window() {
        // 131072 × 0.62 = 81264 of window clamp; the handshake's 65535 of rcv_ssthresh.
        let a = RcvAutotune::new(131_072, 32 << 20, 0.62, MSS, 0);
        assert_eq!(a.window_holding(0), 65_535);
        assert_eq!(a.window_holding(20_000), 61_264);
        assert_eq!(a.window_holding(90_000), 0);
    }
}
