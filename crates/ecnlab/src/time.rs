//! Simulated time: integer picoseconds, so that serialisation and propagation add up exactly.

/// A point in simulated time or a duration, in picoseconds. `u64` covers 213 days.
pub type Time = u64;

pub const PS: Time = 1;
pub const NS: Time = 1_000;
pub const US: Time = 1_000_000;
pub const MS: Time = 1_000_000_000;
pub const SEC: Time = 1_000_000_000_000;
/// "No deadline": later than any real event.
pub const NEVER: Time = Time::MAX;

/// Seconds (f64) to picoseconds, rounded to the nearest picosecond.
pub fn from_secs(s: f64) -> Time {
    (s * SEC as f64).round() as Time
}

pub fn to_secs(t: Time) -> f64 {
    t as f64 / SEC as f64
}

/// Time to serialise `bytes` at `bps` bits per second, rounded up to the next picosecond
/// (a transmitter never finishes early). Exact whenever 10^12·8·bytes is a multiple of `bps`.
#[inline]
pub fn tx_time(bytes: u32, bps: u64) -> Time {
    let bits = bytes as u128 * 8 * SEC as u128;
    let bps = bps as u128;
    ((bits + bps - 1) / bps) as Time
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serialisation_is_exact() {
        assert_eq!(tx_time(1000, 100_000_000), 80 * US);
        assert_eq!(tx_time(1500, 1_000_000_000), 12 * US);
        assert_eq!(tx_time(1040, 10_000_000_000), 832 * NS);
        assert_eq!(tx_time(1000, 1_500_000), 5_333_333_334); // 5.333... ms, rounded up
        assert_eq!(tx_time(40, 3), 106_666_666_666_667);
    }

    #[test]
    fn seconds_round_trip() {
        assert_eq!(from_secs(0.1), 100 * MS);
        assert_eq!(to_secs(2 * SEC), 2.0);
    }
}
