//! A port's wire: the packets in flight (and, for a FIFO-mode port, the ones committed to start later), each
//! with its arrival time at the far end, oldest first.
//!
//! A ring buffer whose capacity is a power of two, so that a position is an index masked by `capacity - 1`
//! rather than the compare-and-subtract of `VecDeque`'s wrap, and whose indexing skips the bounds check that
//! the mask makes redundant. It grows by doubling when full (rare, and never in the steady state: a wire holds
//! at most its port's buffer plus a bandwidth-delay product of packets) and never shrinks. Every packet of a
//! run crosses a wire once per hop, so these few instructions are on the hottest path of the engine.
//!
//! (Tried and dropped, to shrink the memory the slots sweep: every wire's slots in 512-byte
//! chunks from one pool per network, a chunk going back to the pool once read, and the chunk freed last reused
//! first. At 5,000 reference flows the rings of the busy wires span 3-4 MB while 10-15 thousand packets (about
//! 400 KB) are live. cachegrind, which models no hardware prefetcher, counted 90% fewer last-level misses, but
//! the runs were 5-10% slower (2,048-byte chunks too). Probably because a ring is written and read in order,
//! which the hardware prefetchers can follow, while the chunk links cost about 20 instructions per event
//! (cachegrind: 428 against 406).)
//!
//! (Also tried and dropped: a second array of the packets' sizes past the ring, 2 bytes per slot,
//! so that a FIFO port's lazy retirement (`Port::retire_slow`, which perf put at 7% of a run, half of it
//! waiting for the slot) reads a small array instead of the slots. 6% slower on 5,000 reference flows, with
//! more L1 misses in cachegrind, not fewer. And `pop_front` and `front` fused into one call for the arrival
//! path: 18 more instructions per event, from spills of the wider return value.)

use super::packet::{Header, Packet};
use crate::units::Ps;

/// Slots of a new wire (grows on demand).
const INITIAL: usize = 16;

#[derive(Debug, Clone)]
pub struct Wire<H: Header = ()> {
    /// `slots.len()` is a power of two; the entries are `slots[(head + i) & mask]` for `i < len`.
    slots: Box<[Slot<H>]>,
    head: u32,
    len: u32,
    mask: u32,
}

impl<H: Header> Default for Wire<H> {
    fn default() -> Self {
        Self::new()
    }
}

/// A packet and its arrival time: 32 bytes, aligned so that a slot never straddles two cache lines (the
/// allocator only promises 16-byte alignment).
#[derive(Debug, Clone, Copy)]
#[repr(C, align(32))]
struct Slot<H: Header = ()> {
    entry: (Ps, Packet<H>),
}


impl<H: Header> Wire<H> {
    pub fn new() -> Self {
        Wire { slots: vec![Slot { entry: (0, Packet::default()) }; INITIAL].into_boxed_slice(), head: 0, len: 0, mask: INITIAL as u32 - 1 }
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.len as usize
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[inline(always)]
    fn slot(&self, i: u32) -> &(Ps, Packet<H>) {
        let k = (self.head.wrapping_add(i) & self.mask) as usize;
        debug_assert!(k < self.slots.len());
        // SAFETY: `slots.len() == mask + 1` (a power of two), so `k <= mask` is in bounds. The assertion above
        // checks it only in builds with debug assertions (`cargo test`'s profile; not release builds).
        unsafe { &self.slots.get_unchecked(k).entry }
    }

    /// The `i`-th oldest entry (`i < len`).
    #[inline]
    pub fn get(&self, i: usize) -> &(Ps, Packet<H>) {
        assert!(i < self.len as usize, "wire index {i} out of {}", self.len);
        self.slot(i as u32)
    }

    /// Address of the slot the next `pop_front` reads (allocated even when the wire is empty), for prefetching.
    #[inline(always)]
    pub fn head_slot(&self) -> *const (Ps, Packet<H>) {
        self.slot(0)
    }

    #[inline]
    pub fn front(&self) -> Option<&(Ps, Packet<H>)> {
        (self.len > 0).then(|| self.slot(0))
    }

    #[inline]
    pub fn back(&self) -> Option<&(Ps, Packet<H>)> {
        (self.len > 0).then(|| self.slot(self.len - 1))
    }

    /// Append `entry`; returns it in its slot.
    #[inline]
    pub fn push_back(&mut self, entry: (Ps, Packet<H>)) -> &mut (Ps, Packet<H>) {
        if self.len as usize == self.slots.len() {
            self.grow();
        }
        let k = (self.head.wrapping_add(self.len) & self.mask) as usize;
        debug_assert!(k < self.slots.len());
        self.len += 1;
        // SAFETY: as in `slot`.
        let slot = unsafe { &mut self.slots.get_unchecked_mut(k).entry };
        *slot = entry;
        slot
    }

    #[inline]
    pub fn pop_front(&mut self) -> Option<(Ps, Packet<H>)> {
        if self.len == 0 {
            return None;
        }
        let e = *self.slot(0);
        self.len -= 1;
        // An emptied wire starts again at slot 0: a port whose wire empties between bursts then keeps reusing
        // its first few (cache-warm) slots instead of sweeping the whole ring.
        self.head = if self.len == 0 { 0 } else { self.head.wrapping_add(1) & self.mask };
        Some(e)
    }

    #[cold]
    #[inline(never)]
    fn grow(&mut self) {
        let n = self.slots.len();
        assert!(n <= (u32::MAX as usize + 1) / 2, "a wire of more than 2^31 packets");
        let mut slots = vec![Slot { entry: (0, Packet::default()) }; 2 * n].into_boxed_slice();
        for (i, s) in slots.iter_mut().take(n).enumerate() {
            s.entry = *self.slot(i as u32);
        }
        self.slots = slots;
        self.head = 0;
        self.mask = (2 * n - 1) as u32;
    }

    /// The entries, oldest first.
    pub fn iter(&self) -> impl Iterator<Item = &(Ps, Packet<H>)> + '_ {
        (0..self.len).map(|i| self.slot(i))
    }
}

impl<H: Header> PartialEq for Wire<H> {
    fn eq(&self, other: &Self) -> bool {
        self.len == other.len && self.iter().eq(other.iter())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;

    fn entry(i: u64) -> (Ps, Packet) {
        let mut e: (Ps, Packet) = (0, Packet::default());
        e.0 = i;
        e.1.seq = i as u32;
        e
    }

    /// Random pushes and pops, wrapping around and growing, against `VecDeque`. (Fewer under Miri, which
    /// interprets every step: scripts/miri.sh.)
    #[test]
    fn behaves_like_a_vecdeque() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(7);
        let mut w = Wire::new();
        let mut r: VecDeque<(Ps, Packet)> = VecDeque::new();
        let mut next = 0u64;
        let (steps, phase) = if cfg!(miri) { (3_000, 150) } else { (100_000, 5_000) };
        for step in 0..steps {
            // drift between mostly-pushing and mostly-popping phases, so the ring fills, wraps and empties
            let push_bias = if (step / phase) % 2 == 0 { 0.6 } else { 0.4 };
            if rng.gen_bool(push_bias) {
                w.push_back(entry(next));
                r.push_back(entry(next));
                next += 1;
            } else {
                assert_eq!(w.pop_front(), r.pop_front());
            }
            assert_eq!(w.len(), r.len());
            assert_eq!(w.front(), r.front());
            assert_eq!(w.back(), r.back());
            if !r.is_empty() {
                let i = rng.gen_range(0..r.len());
                assert_eq!(w.get(i), &r[i]);
            }
        }
        assert!(w.iter().eq(r.iter()));
        assert!(w.slots.len() > INITIAL, "the test should have made the ring grow");
    }

    #[test]
    fn slots_are_half_cache_lines() {
        assert_eq!(std::mem::size_of::<Slot>(), 32);
        let mut w = Wire::new();
        for i in 0..100 {
            w.push_back(entry(i));
        }
        assert_eq!(w.slots.as_ptr() as usize % 32, 0);
    }

    #[test]
    #[should_panic(expected = "wire index")]
    fn get_past_the_end_panics() {
        let mut w = Wire::new();
        w.push_back(entry(1));
        w.get(1);
    }
}
