//! Kathleen Nichols' windowed maximum, as Linux keeps BBR's bottleneck bandwidth
//! (`lib/win_minmax.c`): three samples — the best, and the best of the later parts of the
//! window — in constant space, almost always equal to the exact maximum over the window, but
//! not always: when the best sample ages out, the second choice may be older or smaller than
//! the exact maximum of what remains. That approximation is part of how Linux BBR behaves
//! (its estimate falls in steps), so it is modelled rather than replaced by an exact filter.
//!
//! Times are in the caller's unit (BBR: round trips); `window` in the same unit.

#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Sample {
    t: u64,
    v: f64,
}

#[derive(Clone, Debug, Default)]
pub struct WindowedMax {
    s: [Sample; 3],
}

impl WindowedMax {
    /// A filter whose first sample is `v` at `t`.
    pub fn starting_at(t: u64, v: f64) -> Self {
        WindowedMax {
            s: [Sample { t, v }; 3],
        }
    }

    /// The current maximum (0 before any sample).
    pub fn get(&self) -> f64 {
        self.s[0].v
    }

    fn reset(&mut self, t: u64, v: f64) -> f64 {
        self.s = [Sample { t, v }; 3];
        v
    }

    /// Adds `v` measured at `t` and returns the windowed maximum.
    pub fn update(&mut self, window: u64, t: u64, v: f64) -> f64 {
        let new = Sample { t, v };
        if v >= self.s[0].v || t.saturating_sub(self.s[2].t) > window {
            return self.reset(t, v);
        }
        if v >= self.s[1].v {
            self.s[2] = new;
            self.s[1] = new;
        } else if v >= self.s[2].v {
            self.s[2] = new;
        }
        self.age(window, new)
    }

    /// Moves the choices along as the window passes over them.
    fn age(&mut self, window: u64, new: Sample) -> f64 {
        let dt = new.t.saturating_sub(self.s[0].t);
        if dt > window {
            // The best is out of the window: promote the others (twice if the second is
            // out too; the third is in the window, checked on entry).
            self.s[0] = self.s[1];
            self.s[1] = self.s[2];
            self.s[2] = new;
            if new.t.saturating_sub(self.s[0].t) > window {
                self.s[0] = self.s[1];
                self.s[1] = self.s[2];
                self.s[2] = new;
            }
        } else if self.s[1].t == self.s[0].t && dt > window / 4 {
            // A quarter of the window without a second choice: take one from here.
            self.s[2] = new;
            self.s[1] = new;
        } else if self.s[2].t == self.s[1].t && dt > window / 2 {
            // Half the window without a third choice.
            self.s[2] = new;
        }
        self.s[0].v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(window: u64, xs: &[(u64, f64)]) -> Vec<f64> {
        let mut m = WindowedMax::default();
        xs.iter().map(|&(t, v)| m.update(window, t, v)).collect()
    }

    /// Worked by hand over a window of 8 (a quarter is 2, a half 4).
    #[test]
    fn promotes_later_choices_as_the_best_ages_out() {
        let xs = [
            (0, 10.0), // reset: every choice is (0, 10)
            (3, 6.0),  // a quarter window without a second choice: (3, 6) is 2nd and 3rd
            (5, 7.0),  // above the 2nd: (5, 7) is 2nd and 3rd
            (7, 3.0),  // half a window since the best, 3rd == 2nd: (7, 3) is 3rd
            (9, 2.0),  // the best is 9 old: (5, 7) leads, then (7, 3), (9, 2)
            (14, 1.0), // (5, 7) is 9 old: (7, 3), (9, 2), (14, 1)
            (16, 1.0), // (7, 3) is 9 old: (9, 2) leads
            (30, 0.5), // nothing left in the window: reset
        ];
        assert_eq!(run(8, &xs), [10.0, 10.0, 10.0, 10.0, 7.0, 3.0, 2.0, 0.5]);
    }

    /// The approximation Linux lives with: a sample below the best that arrives within the
    /// first quarter of its window is forgotten, so the filter can fall below the exact
    /// maximum of the window.
    #[test]
    fn can_fall_below_the_exact_maximum() {
        let xs: Vec<(u64, f64)> = [(0, 10.0), (1, 9.0)]
            .into_iter()
            .chain((2..=9).map(|t| (t, 1.0)))
            .collect();
        let got = run(8, &xs);
        // At t = 9 the 10 is 9 old; the exact maximum of t in [1, 9] is 9 (t = 1).
        assert_eq!(got[8], 10.0);
        assert_eq!(got[9], 1.0);
    }
}
