//! The open flows' next own events, one per flow slot, in an indexed binary heap.

use crate::units::Ps;

/// The open flows' next own events: a binary heap of (time, slot), at most one entry per slot, with each slot's
/// place in it, so that rescheduling a flow moves its entry (a heap of stamped entries, before, kept the stale ones
/// until they came up, up to four times the open flows, and paid a push per reschedule and a pop per stale entry).
/// Entries at the same time come out in order of slot, as they did.
#[derive(Default)]
pub(super) struct Timers {
    pub(super) heap: Vec<(Ps, u32)>,
    pos: Vec<u32>,
}

impl Timers {
    pub(super) fn peek(&self) -> Option<(Ps, u32)> {
        self.heap.first().copied()
    }

    /// Slot `k`'s next event at `at` (its entry added or moved).
    pub(super) fn set(&mut self, k: u32, at: Ps) {
        let ku = k as usize;
        if self.pos.len() <= ku {
            self.pos.resize(ku + 1, u32::MAX);
        }
        let i = self.pos[ku];
        if i == u32::MAX {
            self.heap.push((at, k));
            self.place(self.heap.len() - 1);
        } else {
            self.heap[i as usize].0 = at;
            self.place(i as usize);
        }
    }

    /// Slot `k` has no pending event (nothing if it had none).
    pub(super) fn remove(&mut self, k: u32) {
        let Some(&i) = self.pos.get(k as usize) else { return };
        if i == u32::MAX {
            return;
        }
        self.pos[k as usize] = u32::MAX;
        let last = self.heap.pop().expect("an entry of a slot with a place");
        if (i as usize) < self.heap.len() {
            self.heap[i as usize] = last;
            self.place(i as usize);
        }
    }

    /// Move the entry at `i` up or down to its place, and record the places of the entries it passes.
    fn place(&mut self, mut i: usize) {
        let e = self.heap[i];
        while i > 0 {
            let parent = (i - 1) / 2;
            if self.heap[parent] <= e {
                break;
            }
            self.heap[i] = self.heap[parent];
            self.pos[self.heap[i].1 as usize] = i as u32;
            i = parent;
        }
        loop {
            let mut c = 2 * i + 1;
            if c >= self.heap.len() {
                break;
            }
            if c + 1 < self.heap.len() && self.heap[c + 1] < self.heap[c] {
                c += 1;
            }
            if self.heap[c] >= e {
                break;
            }
            self.heap[i] = self.heap[c];
            self.pos[self.heap[i].1 as usize] = i as u32;
            i = c;
        }
        self.heap[i] = e;
        self.pos[e.1 as usize] = i as u32;
    }
}
