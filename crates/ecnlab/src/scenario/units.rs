//! How scenario files write the quantities of [`crate::units`]: durations ("10ms", or a number
//! of seconds), rates ("100Mbps", or bits per second), sizes ("9KB", "1Gb", "64KiB", or bytes):
//! parsing with errors that say what was expected, and serde in both directions (written back
//! in the `Display` form).

use crate::time::{Time, SEC};
use crate::units::{Duration, Rate, Size};
use serde::{de, Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

fn split_number(s: &str) -> Option<(f64, &str)> {
    let s = s.trim();
    let end = s
        .find(|c: char| {
            !(c.is_ascii_digit() || c == '.' || c == 'e' || c == 'E' || c == '-' || c == '+')
        })
        .unwrap_or(s.len());
    // "e" might start a unit only in none of ours; guard "1e3ms" vs a bare unit.
    let (num, unit) = s.split_at(end);
    num.parse::<f64>().ok().map(|v| (v, unit.trim()))
}

/// The longest duration a scenario may give (10^6 s, 11.6 days): the simulator adds
/// durations to times (a start and its stagger, a packet's departure and its link's delay),
/// and a few sums of values this large still fit the 64-bit picosecond clock (18.4 · 10^6 s).
pub const MAX_DURATION: Time = 1_000_000 * SEC;

impl Duration {
    pub fn parse(s: &str) -> Result<Duration, String> {
        let (v, unit) = split_number(s)
            .ok_or_else(|| format!("expected a duration like \"10ms\", got {s:?}"))?;
        let scale = match unit {
            "" | "s" => 1e12,
            "ms" => 1e9,
            "us" | "µs" => 1e6,
            "ns" => 1e3,
            "ps" => 1.0,
            "min" => 60e12,
            _ => {
                return Err(format!(
                    "unknown time unit {unit:?} in {s:?}; use s, ms, us, ns or ps"
                ))
            }
        };
        Self::from_f64(v * scale, s)
    }

    fn from_f64(ps: f64, src: &str) -> Result<Duration, String> {
        if ps.is_nan() {
            return Err(format!("duration must be a number, got {src}"));
        }
        if ps < 0.0 {
            return Err(format!("duration must be non-negative, got {src}"));
        }
        if ps > MAX_DURATION as f64 {
            return Err(format!(
                "duration {src} is too long (at most 1000000 s, 11.6 days)"
            ));
        }
        if ps > 0.0 && ps < 0.5 {
            return Err(format!(
                "duration {src} is below the simulator's resolution of 1 ps"
            ));
        }
        Ok(Duration(ps.round() as Time))
    }
}

impl Rate {
    pub fn parse(s: &str) -> Result<Rate, String> {
        let (v, unit) = split_number(s)
            .ok_or_else(|| format!("expected a rate like \"100Mbps\", got {s:?}"))?;
        let scale = match unit {
            "" | "bps" => 1.0,
            "kbps" | "Kbps" => 1e3,
            "Mbps" => 1e6,
            "Gbps" => 1e9,
            "Tbps" => 1e12,
            _ => {
                return Err(format!(
                    "unknown rate unit {unit:?} in {s:?}; use bps, kbps, Mbps, Gbps"
                ))
            }
        };
        let bps = v * scale;
        if bps.is_nan() {
            return Err(format!("rate must be a number, got {s}"));
        }
        if bps <= 0.0 {
            return Err(format!("rate must be positive, got {s}"));
        }
        if bps < 0.5 {
            return Err(format!("rate {s} is below 1 bps"));
        }
        if bps > 1e15 {
            return Err(format!("rate {s} is beyond 1 Pbps"));
        }
        Ok(Rate(bps.round() as u64))
    }
}

impl Size {
    /// "KB", "MB", "GB" are decimal bytes, "KiB"... binary, "Kb", "Mb", "Gb" are bits (1 Gb =
    /// 125,000,000 bytes).
    pub fn parse(s: &str) -> Result<Size, String> {
        let (v, unit) =
            split_number(s).ok_or_else(|| format!("expected a size like \"16KB\", got {s:?}"))?;
        let scale = match unit {
            "" | "B" => 1.0,
            "KB" | "kB" => 1e3,
            "MB" => 1e6,
            "GB" => 1e9,
            "KiB" => 1024.0,
            "MiB" => 1048576.0,
            "GiB" => 1073741824.0,
            "b" => 0.125,
            "Kb" | "kb" => 125.0,
            "Mb" => 125e3,
            "Gb" => 125e6,
            _ => {
                return Err(format!(
                "unknown size unit {unit:?} in {s:?}; use B, KB, MB, GB, KiB, MiB, GiB, Kb, Mb, Gb"
            ))
            }
        };
        let b = v * scale;
        if !b.is_finite() || b < 0.0 || b > 1e18 {
            return Err(format!("size must be between 0 and 1e18 bytes, got {s}"));
        }
        Ok(Size(b.round() as u64))
    }
}

macro_rules! serde_unit {
    ($t:ident, $what:literal, $from_num:expr) => {
        impl Serialize for $t {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(&self.to_string())
            }
        }
        impl<'de> Deserialize<'de> for $t {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl<'de> de::Visitor<'de> for V {
                    type Value = $t;
                    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                        f.write_str($what)
                    }
                    fn visit_str<E: de::Error>(self, v: &str) -> Result<$t, E> {
                        $t::parse(v).map_err(E::custom)
                    }
                    fn visit_f64<E: de::Error>(self, v: f64) -> Result<$t, E> {
                        let f: fn(f64) -> Result<$t, String> = $from_num;
                        f(v).map_err(E::custom)
                    }
                    fn visit_i64<E: de::Error>(self, v: i64) -> Result<$t, E> {
                        self.visit_f64(v as f64)
                    }
                    fn visit_u64<E: de::Error>(self, v: u64) -> Result<$t, E> {
                        self.visit_f64(v as f64)
                    }
                }
                d.deserialize_any(V)
            }
        }
    };
}

serde_unit!(
    Duration,
    "a duration: a string like \"10ms\" or a number of seconds",
    |v| Duration::from_f64(v * 1e12, &v.to_string())
);
serde_unit!(
    Rate,
    "a rate: a string like \"100Mbps\" or a number of bits per second",
    |v| Rate::parse(&v.to_string())
);
serde_unit!(
    Size,
    "a size: a string like \"16KB\" or a number of bytes",
    |v| Size::parse(&v.to_string())
);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::{MS, SEC, US};

    #[test]
    fn parse_units() {
        assert_eq!(Duration::parse("10ms").unwrap().0, 10 * MS);
        assert_eq!(Duration::parse("2.5us").unwrap().0, 2500 * 1000);
        assert_eq!(Duration::parse("1").unwrap().0, SEC);
        assert_eq!(Rate::parse("100Mbps").unwrap().0, 100_000_000);
        assert_eq!(Rate::parse("1.5Mbps").unwrap().0, 1_500_000);
        assert_eq!(Size::parse("9KB").unwrap().0, 9000);
        assert_eq!(Size::parse("1Gb").unwrap().0, 125_000_000);
        assert_eq!(Size::parse("64KiB").unwrap().0, 65536);
        assert!(Rate::parse("-5Mbps").is_err());
        assert!(Rate::parse("5 furlongs").is_err());
        assert!(Duration::parse("-1s").is_err());
        assert_eq!(Duration(80 * US).to_string(), "80us");
    }

    #[test]
    fn durations_stop_where_sums_of_them_still_fit_the_clock() {
        assert_eq!(Duration::parse("1000000s").unwrap().0, MAX_DURATION);
        assert!(Duration::parse("1000001s")
            .unwrap_err()
            .contains("at most 1000000 s"));
        assert!(Duration::parse("1e7s").is_err());
        // Three of the longest still fit.
        assert!(MAX_DURATION.checked_mul(3).is_some());
    }
}
