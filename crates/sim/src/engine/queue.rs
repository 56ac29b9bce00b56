//! The event queue: events ordered by (time, insertion sequence), so that ties are deterministic and FIFO.
//!
//! The queue stays small by construction (DESIGN.md): one entry per link for the packet at the head of its
//! wire, one per busy transmitter with packets waiting, at most one per flow for its retransmission timer
//! (timers are lazy: moving a deadline later does not touch the queue), and one for the next flow arrival.

use crate::units::Ps;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// What happens. Small and `Copy`; the handlers find their state by id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// The packet at the head of port `0`'s wire reaches the far end.
    Arrive(u32),
    /// Port `0`'s transmitter is free: serve its next waiting packet.
    TxFree(u32),
    /// Flow `0`'s retransmission timer may be due.
    Timer(u32),
    /// The next flow (in start order) begins.
    FlowStart,
}

#[derive(Debug, Clone, Copy)]
struct Entry {
    /// (time << 64) | sequence: one integer comparison orders by time, then insertion.
    key: u128,
    event: Event,
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Entry {
    fn cmp(&self, other: &Self) -> Ordering {
        // BinaryHeap is a max-heap: reverse for earliest first
        other.key.cmp(&self.key)
    }
}

#[derive(Debug, Default)]
pub struct EventQueue {
    heap: BinaryHeap<Entry>,
    seq: u64,
}

impl EventQueue {
    pub fn new() -> Self {
        EventQueue { heap: BinaryHeap::with_capacity(1024), seq: 0 }
    }

    #[inline]
    pub fn push(&mut self, time: Ps, event: Event) {
        let key = ((time as u128) << 64) | self.seq as u128;
        self.seq += 1;
        self.heap.push(Entry { key, event });
    }

    #[inline]
    pub fn pop(&mut self) -> Option<(Ps, Event)> {
        self.heap.pop().map(|e| ((e.key >> 64) as Ps, e.event))
    }

    #[inline]
    pub fn peek_time(&self) -> Option<Ps> {
        self.heap.peek().map(|e| (e.key >> 64) as Ps)
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orders_by_time_then_insertion() {
        let mut q = EventQueue::new();
        q.push(5, Event::Timer(1));
        q.push(3, Event::Timer(2));
        q.push(5, Event::Timer(3));
        q.push(3, Event::Timer(4));
        q.push(0, Event::FlowStart);
        let got: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(
            got,
            vec![
                (0, Event::FlowStart),
                (3, Event::Timer(2)),
                (3, Event::Timer(4)),
                (5, Event::Timer(1)),
                (5, Event::Timer(3))
            ]
        );
    }
}
