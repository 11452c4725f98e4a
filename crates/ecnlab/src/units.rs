//! Quantities with units that configuration and simulation share: a [`Duration`] (integer
//! picoseconds, as [`crate::time`]), a [`Rate`] (bits per second) and a [`Size`] (bytes).
//! Their written form ("10ms", "100Mbps", "9KB") is what `Display` prints; reading it back is
//! the scenario file's business, one floor up.

use crate::time::{Time, SEC};
use std::fmt;

/// A duration, stored in picoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Duration(pub Time);

impl Duration {
    pub fn secs(self) -> f64 {
        self.0 as f64 / SEC as f64
    }
}

impl fmt::Display for Duration {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        let ps = self.0;
        if ps % SEC == 0 {
            write!(f, "{}s", ps / SEC)
        } else if ps % 1_000_000_000 == 0 {
            write!(f, "{}ms", ps / 1_000_000_000)
        } else if ps % 1_000_000 == 0 {
            write!(f, "{}us", ps / 1_000_000)
        } else if ps % 1000 == 0 {
            write!(f, "{}ns", ps / 1000)
        } else {
            write!(f, "{ps}ps")
        }
    }
}

/// A rate in bits per second.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Rate(pub u64);

impl fmt::Display for Rate {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        let b = self.0;
        if b % 1_000_000_000 == 0 {
            write!(f, "{}Gbps", b / 1_000_000_000)
        } else if b % 1_000_000 == 0 {
            write!(f, "{}Mbps", b / 1_000_000)
        } else if b % 1000 == 0 {
            write!(f, "{}kbps", b / 1000)
        } else {
            write!(f, "{b}bps")
        }
    }
}

/// A size in bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Size(pub u64);

impl fmt::Display for Size {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{}B", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::{MS, US};

    #[test]
    fn written_forms() {
        assert_eq!(Duration(80 * US).to_string(), "80us");
        assert_eq!(Duration(2 * SEC).to_string(), "2s");
        assert_eq!(Duration(10 * MS).to_string(), "10ms");
        assert_eq!(Duration(1500).to_string(), "1500ps");
        assert_eq!(Rate(100_000_000).to_string(), "100Mbps");
        assert_eq!(Rate(1_500).to_string(), "1500bps");
        assert_eq!(Size(9000).to_string(), "9000B");
        assert_eq!(Duration(1500 * MS).secs(), 1.5);
    }
}
