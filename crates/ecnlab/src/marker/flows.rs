//! Per-flow state at a router port, keyed by the 5-tuple of real headers ([`FlowKey`], not the
//! simulator's flow index), so the same marker works on packets from a real network. Slots are dense and
//! reused; a table allocates only when it holds more flows than ever before.

use crate::packet::FlowKey;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// A multiply-rotate hash of the key's few integers (FxHash's step). The table is looked up
/// on every packet at the port and its keys are the simulation's own, so SipHash's defence
/// against chosen keys buys nothing and costs most of a lookup. Nothing iterates the map
/// (slots are dense vectors), so the hash cannot change what a scheme computes.
#[derive(Default)]
pub struct KeyHasher(u64);

impl KeyHasher {
    const K: u64 = 0x517c_c1b7_2722_0a95;

    #[inline]
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(Self::K);
    }
}

impl Hasher for KeyHasher {
    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.add(b as u64);
        }
    }
    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.add(i as u64);
    }
    #[inline]
    fn write_u16(&mut self, i: u16) {
        self.add(i as u64);
    }
    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.add(i as u64);
    }
    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }
    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }
}

/// A [`FlowKey`] as the table's index holds it: its five fields packed into two words, so a
/// lookup hashes and compares two words, not five fields. The key's own `Hash` stays as it is
/// (FQ-CoDel's buckets are chosen by it).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct Packed(u64, u64);

impl Packed {
    #[inline]
    fn of(k: &FlowKey) -> Packed {
        Packed(
            (k.src as u64) << 32 | k.dst as u64,
            (k.src_port as u64) << 24 | (k.dst_port as u64) << 8 | k.protocol as u64,
        )
    }
}

pub struct FlowTable<V> {
    index: HashMap<Packed, u32, BuildHasherDefault<KeyHasher>>,
    keys: Vec<FlowKey>,
    values: Vec<V>,
}

impl<V: Default> Default for FlowTable<V> {
    fn default() -> Self {
        FlowTable {
            index: HashMap::default(),
            keys: Vec::new(),
            values: Vec::new(),
        }
    }
}

impl<V: Default> FlowTable<V> {
    /// The slot of `key`, made (with a default value) when the flow is new.
    #[inline]
    pub fn slot(&mut self, key: FlowKey) -> usize {
        let packed = Packed::of(&key);
        if let Some(&i) = self.index.get(&packed) {
            return i as usize;
        }
        let i = self.keys.len();
        self.index.insert(packed, i as u32);
        self.keys.push(key);
        self.values.push(V::default());
        i
    }

    /// The slot of `key` if the table holds it.
    #[inline]
    pub fn find(&self, key: &FlowKey) -> Option<usize> {
        self.index.get(&Packed::of(key)).map(|&i| i as usize)
    }

    pub fn len(&self) -> usize {
        self.keys.len()
    }

    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    #[inline]
    pub fn value(&self, slot: usize) -> &V {
        &self.values[slot]
    }

    #[inline]
    pub fn value_mut(&mut self, slot: usize) -> &mut V {
        &mut self.values[slot]
    }

    pub fn values(&self) -> &[V] {
        &self.values
    }

    pub fn values_mut(&mut self) -> &mut [V] {
        &mut self.values
    }

    /// Drops the flows `keep` rejects; slots of the remaining flows may move.
    pub fn retain(&mut self, mut keep: impl FnMut(&V) -> bool) {
        let mut i = 0;
        while i < self.values.len() {
            if keep(&self.values[i]) {
                i += 1;
                continue;
            }
            self.index.remove(&Packed::of(&self.keys[i]));
            self.keys.swap_remove(i);
            self.values.swap_remove(i);
            if i < self.keys.len() {
                self.index.insert(Packed::of(&self.keys[i]), i as u32);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(n: u16) -> FlowKey {
        FlowKey {
            src: 1,
            dst: 2,
            src_port: n,
            dst_port: 80,
            protocol: 6,
        }
    }

    #[test]
    fn slots_are_stable_until_flows_expire() {
        let mut t: FlowTable<u32> = FlowTable::default();
        for n in 0..5 {
            assert_eq!(t.slot(key(n)), n as usize);
            *t.value_mut(n as usize) = n as u32 * 10;
        }
        assert_eq!(t.slot(key(3)), 3);
        t.retain(|&v| v != 10 && v != 40);
        assert_eq!(t.len(), 3);
        for n in [0u16, 2, 3] {
            let s = t.find(&key(n)).unwrap();
            assert_eq!(*t.value(s), n as u32 * 10);
        }
        assert_eq!(t.find(&key(1)), None);
        assert_eq!(t.find(&key(4)), None);
        assert_eq!(t.slot(key(9)), 3);
    }
}
