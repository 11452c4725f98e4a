//! Sequence-number helpers: 64-bit unwrapped sequence numbers inside the connection (a flow
//! may exceed 4 GiB), 32-bit on the wire; and a sorted set of half-open intervals for
//! out-of-order data (receiver) and SACKed segments (sender).

/// The 64-bit value closest to `reference` whose low 32 bits are `v` (never below 0).
#[inline]
pub fn unwrap32(reference: u64, v: u32) -> u64 {
    let diff = v.wrapping_sub(reference as u32) as i32 as i64;
    let r = reference as i64 + diff;
    r.max(0) as u64
}

/// Wrap-aware "a is at or after b" for 32-bit timestamps (RFC 7323 §5.2 comparisons).
#[inline]
pub fn ts_geq(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) >= 0
}

/// Disjoint, non-adjacent half-open intervals `[start, end)` in increasing order. The vector
/// is reused, so steady-state insertions allocate nothing.
#[derive(Clone, Debug, Default)]
pub struct IntervalSet {
    v: Vec<(u64, u64)>,
}

impl IntervalSet {
    pub const fn new() -> Self {
        IntervalSet { v: Vec::new() }
    }

    pub fn is_empty(&self) -> bool {
        self.v.is_empty()
    }

    pub fn len(&self) -> usize {
        self.v.len()
    }

    pub fn clear(&mut self) {
        self.v.clear();
    }

    pub fn as_slice(&self) -> &[(u64, u64)] {
        &self.v
    }

    pub fn first(&self) -> Option<(u64, u64)> {
        self.v.first().copied()
    }

    pub fn last(&self) -> Option<(u64, u64)> {
        self.v.last().copied()
    }

    /// Total length covered.
    pub fn covered(&self) -> u64 {
        self.v.iter().map(|&(s, e)| e - s).sum()
    }

    /// Index of the first interval whose end is after `x` (the one containing `x`, or the next).
    #[inline]
    fn lower(&self, x: u64) -> usize {
        self.v.partition_point(|&(_, e)| e <= x)
    }

    /// The interval containing `x`, if any.
    pub fn containing(&self, x: u64) -> Option<(u64, u64)> {
        let i = self.lower(x);
        self.v.get(i).copied().filter(|&(s, _)| s <= x)
    }

    pub fn contains(&self, x: u64) -> bool {
        self.containing(x).is_some()
    }

    /// Adds `[s, e)`, merging with overlapping or adjacent intervals. Returns the merged
    /// interval that now contains it.
    pub fn insert(&mut self, s: u64, e: u64) -> (u64, u64) {
        if s >= e {
            return (s, e);
        }
        // First interval that overlaps or touches [s, e): its end >= s.
        let i = self.v.partition_point(|&(_, ie)| ie < s);
        let mut j = i;
        let (mut ns, mut ne) = (s, e);
        while j < self.v.len() && self.v[j].0 <= e {
            ns = ns.min(self.v[j].0);
            ne = ne.max(self.v[j].1);
            j += 1;
        }
        if j == i {
            self.v.insert(i, (ns, ne));
        } else {
            self.v[i] = (ns, ne);
            self.v.drain(i + 1..j);
        }
        (ns, ne)
    }

    /// Calls `f` for each part of `[s, e)` not yet covered, in order.
    pub fn for_each_gap(&self, s: u64, e: u64, mut f: impl FnMut(u64, u64)) {
        let mut cur = s;
        let mut i = self.lower(s);
        while cur < e {
            match self.v.get(i) {
                Some(&(is, ie)) if is < e => {
                    if is > cur {
                        f(cur, is);
                    }
                    cur = cur.max(ie);
                    i += 1;
                }
                _ => {
                    f(cur, e);
                    break;
                }
            }
        }
    }

    /// Forgets everything below `x` (trimming an interval that straddles it).
    pub fn remove_below(&mut self, x: u64) {
        let i = self.lower(x);
        if i > 0 {
            self.v.drain(..i);
        }
        if let Some(first) = self.v.first_mut() {
            if first.0 < x {
                first.0 = x;
            }
        }
    }

    /// Removes and returns the first interval if it starts at or below `x`.
    pub fn pop_front_if_starts_by(&mut self, x: u64) -> Option<(u64, u64)> {
        match self.v.first() {
            Some(&(s, _)) if s <= x => Some(self.v.remove(0)),
            _ => None,
        }
    }

    /// The smallest `y` such that at least `n` covered units lie at or above `y` (the start of
    /// the `n`-th highest covered unit), if `n` units are covered.
    pub fn nth_highest(&self, n: u64) -> Option<u64> {
        let mut need = n;
        for &(s, e) in self.v.iter().rev() {
            let len = e - s;
            if len >= need {
                return Some(e - need);
            }
            need -= len;
        }
        None
    }

    pub fn iter_rev(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.v.iter().rev().copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unwrap_across_the_32_bit_boundary() {
        assert_eq!(unwrap32(5, 7), 7);
        assert_eq!(unwrap32(0xFFFF_FFF0, 0x10), 0x1_0000_0010);
        assert_eq!(unwrap32(0x1_0000_0010, 0xFFFF_FFF0), 0xFFFF_FFF0);
        assert_eq!(unwrap32(0x5_0000_0000, 3), 0x5_0000_0003);
        assert_eq!(unwrap32(2, 0xFFFF_FFFF), 0); // would be negative: clamped
    }

    #[test]
    fn interval_insert_merges_and_gaps() {
        let mut s = IntervalSet::new();
        s.insert(10, 20);
        s.insert(30, 40);
        s.insert(20, 25); // adjacent: merges
        assert_eq!(s.as_slice(), &[(10, 25), (30, 40)]);
        let mut gaps = vec![];
        s.for_each_gap(5, 45, |a, b| gaps.push((a, b)));
        assert_eq!(gaps, vec![(5, 10), (25, 30), (40, 45)]);
        assert_eq!(s.insert(24, 31), (10, 40));
        assert_eq!(s.as_slice(), &[(10, 40)]);
        assert_eq!(s.containing(39), Some((10, 40)));
        assert_eq!(s.containing(40), None);
        s.insert(50, 52);
        assert_eq!(s.nth_highest(2), Some(50));
        assert_eq!(s.nth_highest(3), Some(39));
        assert_eq!(s.nth_highest(33), None);
        s.remove_below(35);
        assert_eq!(s.as_slice(), &[(35, 40), (50, 52)]);
        assert_eq!(s.pop_front_if_starts_by(34), None);
        assert_eq!(s.pop_front_if_starts_by(35), Some((35, 40)));
    }
}
