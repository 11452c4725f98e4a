//! ADPM's estimate of the path's load from single-bit marks: bounds `[lo, hi]` (in 2⁻¹⁶ of
//! the load scale) that every report since the load last moved agrees with.

/// The sender's bounds on the marking routers' highest load, in threshold units.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Adpm {
    lo: u32,
    hi: u32,
}

const TOP: u32 = u16::MAX as u32;

impl Default for Adpm {
    fn default() -> Self {
        Adpm { lo: 0, hi: TOP }
    }
}

impl Adpm {
    /// A packet that probed `threshold` came back `marked` (load > threshold) or not
    /// (load ≤ threshold). A report outside the bounds means the load moved: the bound it
    /// contradicts starts over.
    pub fn observe(&mut self, threshold: u16, marked: bool) {
        let t = threshold as u32;
        if marked {
            if t + 1 > self.hi {
                self.hi = TOP;
            }
            self.lo = self.lo.max(t + 1);
        } else {
            if t < self.lo {
                self.lo = 0;
            }
            self.hi = self.hi.min(t);
        }
    }

    /// The load in threshold units lies in `[lo, hi]`.
    pub fn bounds(&self) -> (u16, u16) {
        (self.lo as u16, self.hi as u16)
    }

    /// The bounds as load factors: a load quantised to `u` stands for `[u, u + 1)` units.
    pub fn load_bounds(&self) -> (f64, f64) {
        let unit = super::LOAD_SCALE / 65536.0;
        (self.lo as f64 * unit, (self.hi + 1) as f64 * unit)
    }
}

#[cfg(test)]
mod tests {
    use super::super::{load_units, probe_threshold};
    use super::*;

    /// Reports of `n` packets with IP-IDs from `first` through a router at load `rho`.
    fn feed(a: &mut Adpm, rho: f64, first: u16, n: u16) {
        let p = load_units(rho);
        for i in first..first + n {
            let t = probe_threshold(i);
            a.observe(t, p > t);
        }
    }

    #[test]
    fn sixteen_sequential_packets_bound_the_load_within_one_sixteenth() {
        for rho in [0.0, 0.3, 0.79, 0.97, 1.0, 1.31, 1.999] {
            let mut a = Adpm::default();
            feed(&mut a, rho, 4321, 16);
            let (lo, hi) = a.load_bounds();
            assert!(lo <= rho && rho < hi, "{rho}: [{lo}, {hi})");
            assert!(hi - lo <= 2.0 / 16.0 + 1e-9, "{rho}: [{lo}, {hi})");
        }
        // 256 packets: within 2/256.
        let mut a = Adpm::default();
        feed(&mut a, 0.9, 7, 256);
        let (lo, hi) = a.load_bounds();
        assert!(lo <= 0.9 && 0.9 < hi && hi - lo <= 2.0 / 256.0 + 1e-9);
    }

    #[test]
    fn a_contradicting_report_restarts_the_bound_it_breaks() {
        let mut a = Adpm::default();
        feed(&mut a, 0.5, 0, 64);
        let (lo, hi) = a.bounds();
        assert!(lo <= load_units(0.5) && load_units(0.5) <= hi);
        // The load rises to 1.2: the first mark above `hi` resets it, and 64 more packets
        // find the new load.
        feed(&mut a, 1.2, 64, 64);
        let (lo, hi) = a.load_bounds();
        assert!(
            lo <= 1.2 && 1.2 < hi && hi - lo <= 2.0 / 64.0 + 1e-9,
            "[{lo}, {hi})"
        );
        // And falls to 0.2.
        feed(&mut a, 0.2, 128, 64);
        let (lo, hi) = a.load_bounds();
        assert!(
            lo <= 0.2 && 0.2 < hi && hi - lo <= 2.0 / 64.0 + 1e-9,
            "[{lo}, {hi})"
        );
        // By hand: lo 0, hi max; a mark at 0x4000 → lo 0x4001; no mark at 0x3000 contradicts
        // lo → lo 0, hi 0x3000.
        let mut a = Adpm::default();
        a.observe(0x4000, true);
        assert_eq!(a.bounds(), (0x4001, 0xFFFF));
        a.observe(0x3000, false);
        assert_eq!(a.bounds(), (0, 0x3000));
        a.observe(0x3000, true);
        assert_eq!(a.bounds(), (0x3001, 0xFFFF));
    }
}
