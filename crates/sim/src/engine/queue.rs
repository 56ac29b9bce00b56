//! The event queue: events ordered by (time, event key), so that ties are deterministic.
//!
//! **Ties.** Events at the same picosecond are served in the order of their key: kind first (arrivals, then
//! "transmitter free", then timers, then flow starts), then the id (port or flow) ascending. The key depends
//! only on the event, not on when or by which handler it was pushed, so the order of a run's events does not
//! depend on how the run is divided among threads (`engine::parallel`): a two-thread run processes exactly the
//! events of the one-thread run, in the same order on each side. (An insertion-order tie rule would not have
//! that property: the order in which two threads push same-time events is a race.) The physics is no less
//! arbitrary than with insertion order: which of two packets that reach a switch in the same picosecond is
//! enqueued first has no right answer; the ports' own tie rule (a packet arriving as the transmitter frees
//! is admitted after the departure) does not depend on the event order either.
//!
//! The queue stays small by construction: one entry per link for the packet at the head of its
//! wire, one per busy transmitter with packets waiting, at most one per flow for its retransmission timer
//! (timers are lazy: moving a deadline later does not touch the queue), and one for the next flow arrival.
//!
//! It is a *calendar queue* (Brown 1988) made for the simulator's horizon: almost every event is scheduled
//! less than a few microseconds ahead (the next packet off a wire, the end of a serialization), while the
//! queue holds ~1-2k entries. A ring of `RING` buckets, each `2^SHIFT` ps wide, covers the next
//! `RING << SHIFT` ps; an event within that horizon (to be exact, less than `NEAR`, one bucket short of it, past
//! now) goes to its bucket, a later one (retransmission timers, far flow arrivals, the odd long-delay hop) to a
//! small binary heap. A push makes one comparison on the hot path: an event in the past wraps around to a huge
//! distance, so it takes the far path, which panics. Event ids are checked once, up front
//! (`EventQueue::check_ids`), not per push. A bucket's earliest entry is stored in the bucket itself, and the
//! rest, if any, in a list through a slab (no allocation in the steady state) kept in (time, key) order: a new
//! entry goes after every entry with (time, key) <= its own. With ~1 entry per bucket, most pushes find their
//! bucket empty and most pops leave it so, and the next event is one load away, not a bucket's list head and
//! then its node (392 -> 375 instructions per event in cachegrind, and 3-4% faster on 5,000 reference flows
//! than the list-only buckets; 2 ns buckets in a ring of 2048, half the memory, were 3.5% slower than 1 ns
//! ones, and 0.5 ns ones in a ring of 8192 were 4-5% faster: see `SHIFT`). A
//! bitmap of non-empty buckets finds the next one in a few word scans, once per emptied bucket: the queue
//! keeps the number of its earliest non-empty bucket (`first`), which a push can only lower, so that neither
//! a pop nor a peek at the next event scans. What `BinaryHeap` spent its time on
//! (sifting 32-byte entries through ~11 levels) becomes a store or two.
//!
//! Order between the two parts: the ring holds the events in [now, bucket(now) + RING) (every entry was
//! within the horizon when pushed, and time only moves forward), so its earliest entry is the inline entry of
//! the first non-empty bucket at or after now's bucket; the far heap is keyed by (time, key) too, and `pop`
//! compares the two heads by (time, key). The randomized test below checks the whole against a `BinaryHeap`
//! keyed by (time, key).

use crate::units::Ps;
use std::cmp::Reverse;
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
    /// A flow begins: [`NEXT_IN_ORDER`] for the next flow in start order, else the id of a flow whose parent
    /// has finished (flow dependencies).
    FlowStart(u32),
}

/// `Event::FlowStart` of the next independent flow in start order.
pub const NEXT_IN_ORDER: u32 = ID_MASK;

/// `Event::FlowStart` of a monitor sample (`run.monitor_host`): no flow has this id (see `flows::MAX_FLOWS`).
pub const SAMPLE: u32 = ID_MASK - 1;

/// Ids travel in 30 bits next to a 2-bit kind (a slab node is then 16 bytes). The encoded value is also the
/// tie key: kind in the high bits, so kinds order as listed in [`Event`], then ids ascending.
const ID_BITS: u32 = 30;
const ID_MASK: u32 = (1 << ID_BITS) - 1;

impl Event {
    #[inline]
    fn encode(self) -> u32 {
        let (kind, id) = match self {
            Event::Arrive(p) => (0, p),
            Event::TxFree(p) => (1, p),
            Event::Timer(f) => (2, f),
            Event::FlowStart(f) => (3, f),
        };
        debug_assert!(id <= ID_MASK, "event id {id} does not fit in {ID_BITS} bits (see `EventQueue::check_ids`)");
        kind << ID_BITS | id
    }

    #[inline]
    fn decode(code: u32) -> Event {
        let id = code & ID_MASK;
        match code >> ID_BITS {
            0 => Event::Arrive(id),
            1 => Event::TxFree(id),
            2 => Event::Timer(id),
            _ => Event::FlowStart(id),
        }
    }
}

/// Bucket width 2^SHIFT ps (~0.5 ns: fewer buckets with a second entry than at 1 ns; with the same horizon,
/// 4-5% faster on the reference flows than 1 ns buckets, 0.25 ns no faster than 0.5). Wider buckets (4 ns, a
/// ring of 2048) miss L1 less but walk longer lists, and ran 5-8% slower than 1 ns (before the inline entries;
/// 2 ns with them: 3.5% slower).
const SHIFT: u32 = 9;
/// Buckets in the ring (a power of two); horizon = RING << SHIFT ps (~4.2 us; 8.4 us was no faster).
const RING: usize = 8192;
/// The ring takes events less than this far past now (one bucket short of the horizon, so that an event's
/// bucket is always less than RING past now's, wherever in its bucket now is); later ones go to the far heap.
const NEAR: Ps = ((RING as Ps) - 1) << SHIFT;
const NIL: u32 = u32::MAX;

/// A ring entry: a bucket's inline earliest entry, or a slab node linked behind it.
#[derive(Debug, Clone, Copy)]
struct Node {
    time: Ps,
    next: u32,
    code: u32,
}

#[derive(Debug)]
pub struct EventQueue {
    /// Time of the last event popped: nothing is earlier.
    now: Ps,
    /// Each bucket's earliest entry (meaningful when its bit is set), whose `next` links the rest in `nodes`.
    /// Fixed-size arrays: a bucket index masked by `RING - 1` needs no bounds check.
    heads: Box<[Node; RING]>,
    /// Bit b set when bucket b is non-empty.
    bits: Box<[u64; RING / 64]>,
    nodes: Vec<Node>,
    /// Ids of the free slab nodes, the last freed on top: a stack, so that taking one reads the stack's (warm)
    /// top, not the node itself as a list through the nodes would (perf put ~15% of the slab path on that
    /// read). Its capacity covers every node, so a push never reallocates.
    free: Vec<u32>,
    ring_len: usize,
    /// Absolute number (time >> SHIFT) of the earliest non-empty ring bucket; `u64::MAX` when the ring is
    /// empty. No ring entry is in an earlier bucket.
    first: u64,
    /// The most entries there ever were (both parts).
    max_len: usize,
    /// `max_len - far.len()`: a push that makes the ring longer than this sets a new maximum.
    ring_room: usize,
    /// Events beyond the horizon, keyed by (time, code).
    far: BinaryHeap<Reverse<(Ps, u32)>>,
    /// Earliest time in `far` (NEVER when empty), so that `pop` compares without touching the heap.
    far_min: Ps,
}

impl Default for EventQueue {
    fn default() -> Self {
        Self::new()
    }
}

impl EventQueue {
    /// Panic unless ids `0..count` (ports, flows) fit in an event; `push` then needs no check of its own.
    pub fn check_ids(count: usize) {
        assert!(count <= ID_MASK as usize, "{count} ports or flows: events carry ids below {ID_MASK}");
    }

    pub fn new() -> Self {
        EventQueue {
            now: 0,
            heads: vec![Node { time: 0, next: NIL, code: 0 }; RING].into_boxed_slice().try_into().expect("RING nodes"),
            bits: Box::new([0; RING / 64]),
            nodes: Vec::with_capacity(4096),
            free: Vec::new(),
            ring_len: 0,
            first: u64::MAX,
            max_len: 0,
            ring_room: 0,
            far: BinaryHeap::with_capacity(1024),
            far_min: Ps::MAX,
        }
    }

    #[inline(always)]
    fn node(&self, n: u32) -> &Node {
        debug_assert!((n as usize) < self.nodes.len());
        // SAFETY: node ids come from `free`, which only ever holds ids below `nodes.len()` (see `grow`); `nodes`
        // never shrinks, so every id stored in `heads`, a `next` link or `free` is in bounds. The assertion above
        // checks it only in builds with debug assertions (`cargo test`'s profile; not release builds).
        unsafe { self.nodes.get_unchecked(n as usize) }
    }

    #[inline(always)]
    fn node_mut(&mut self, n: u32) -> &mut Node {
        debug_assert!((n as usize) < self.nodes.len());
        // SAFETY: as in `node`.
        unsafe { self.nodes.get_unchecked_mut(n as usize) }
    }

    /// Schedule `event` at `time`, which must not be earlier than the last event popped.
    #[inline(always)]
    pub fn push(&mut self, time: Ps, event: Event) {
        // One comparison sends both a time beyond the horizon and a time in the past (which wraps to a huge
        // distance) to the far path, which panics on the latter. The ring takes times less than `NEAR` past
        // now, so their bucket is less than RING past now's: inside the ring's horizon.
        if time.wrapping_sub(self.now) >= NEAR {
            self.push_far(time, event.encode());
            return;
        }
        let code = event.encode();
        let b = ((time >> SHIFT) as usize) & (RING - 1);
        let (w, bit) = (b >> 6, 1u64 << (b & 63));
        if self.bits[w] & bit == 0 {
            self.heads[b] = Node { time, next: NIL, code };
            self.bits[w] |= bit;
            if time >> SHIFT < self.first {
                self.first = time >> SHIFT;
            }
        } else {
            self.push_behind(b, time, code);
        }
        self.ring_len += 1;
        if self.ring_len > self.ring_room {
            self.new_max();
        }
    }

    /// Push into non-empty bucket `b` (whose inline entry is its earliest): after every entry with
    /// (time, code) <= ours, the displaced or later entries in slab nodes.
    #[inline(never)]
    fn push_behind(&mut self, b: usize, time: Ps, code: u32) {
        let n = match self.free.pop() {
            Some(n) => n,
            None => self.grow(),
        };
        let head = self.heads[b];
        if (time, code) < (head.time, head.code) {
            *self.node_mut(n) = head;
            self.heads[b] = Node { time, next: n, code };
            return;
        }
        let mut prev = NIL;
        let mut cur = head.next;
        while cur != NIL && (self.node(cur).time, self.node(cur).code) <= (time, code) {
            prev = cur;
            cur = self.node(cur).next;
        }
        *self.node_mut(n) = Node { time, next: cur, code };
        if prev == NIL {
            self.heads[b].next = n;
        } else {
            self.node_mut(prev).next = n;
        }
    }

    /// Add free nodes (the slab only grows: about as many nodes as the most events ever queued) and return
    /// one of them. `free` must be empty.
    #[cold]
    #[inline(never)]
    fn grow(&mut self) -> u32 {
        debug_assert!(self.free.is_empty());
        let start = self.nodes.len();
        let add = start.max(256);
        assert!(start + add <= NIL as usize, "more than {NIL} events queued");
        self.nodes.resize(start + add, Node { time: 0, next: NIL, code: 0 });
        self.free.reserve_exact(self.nodes.len()); // (`free` is empty: room for every node)
        self.free.extend((start as u32 + 1..(start + add) as u32).rev());
        start as u32
    }

    /// The queue is longer than ever: record it, and the ring length that would next beat it.
    #[cold]
    #[inline(never)]
    fn new_max(&mut self) {
        self.max_len = self.max_len.max(self.ring_len + self.far.len());
        self.ring_room = self.max_len - self.far.len();
    }

    #[cold]
    #[inline(never)]
    fn push_far(&mut self, time: Ps, code: u32) {
        assert!(time >= self.now, "event scheduled in the past ({time} < {})", self.now);
        debug_assert!(time < Ps::MAX, "an event at the end of time");
        self.far.push(Reverse((time, code)));
        self.far_min = self.far_min.min(time);
        self.new_max();
    }

    /// Ring index of the earliest non-empty bucket (the ring must not be empty).
    #[inline(always)]
    fn first_index(&self) -> usize {
        self.first as usize & (RING - 1)
    }

    /// Mark bucket `b` empty and return the distance (1..RING) from it to the next non-empty bucket (some
    /// other bucket must be non-empty). The rest of `b`'s word is scanned from the value just stored.
    #[inline]
    fn clear_and_find_next(&mut self, b: usize) -> usize {
        let mut w = b >> 6;
        let left = self.bits[w] & !(1 << (b & 63));
        self.bits[w] = left;
        // buckets after b in its word (those before it are a lap later: found last, by the wrap)
        let mut word = left & (!0u64 << (b & 63));
        loop {
            if word != 0 {
                let found = (w << 6) | word.trailing_zeros() as usize;
                return found.wrapping_sub(b) & (RING - 1);
            }
            w = (w + 1) & (RING / 64 - 1);
            word = self.bits[w];
        }
    }

    /// The earliest event (the smallest key among equal times). (The run loop uses [`EventQueue::pop_before`];
    /// no event is ever at `Ps::MAX`.)
    #[inline]
    pub fn pop(&mut self) -> Option<(Ps, Event)> {
        self.pop_before(Ps::MAX)
    }

    /// The earliest event if its time is before `bound`; otherwise `None`, and the queue is unchanged. (Always
    /// inlined: each family's loop calls it, and the compiler inlines a function called from several places
    /// less readily.)
    #[inline(always)]
    pub fn pop_before(&mut self, bound: Ps) -> Option<(Ps, Event)> {
        if self.ring_len == 0 {
            return if self.far_min < bound { self.pop_far() } else { None };
        }
        let b = self.first_index();
        let node = self.heads[b];
        if self.far_min <= node.time && self.far_first(node.time, node.code) {
            return if self.far_min < bound { self.pop_far() } else { None };
        }
        if node.time >= bound {
            return None;
        }
        Some(self.unlink(b, node))
    }

    /// Remove `node`, the inline entry of bucket `b` (the earliest), and make its time the current time.
    #[inline(always)]
    fn unlink(&mut self, b: usize, node: Node) -> (Ps, Event) {
        self.ring_len -= 1;
        if node.next != NIL {
            // the bucket's next entry moves inline
            let n = node.next;
            self.heads[b] = *self.node(n);
            self.free.push(n);
        } else {
            // every other entry is in a later bucket within the horizon of this one
            self.first = if self.ring_len == 0 {
                self.bits[b >> 6] &= !(1 << (b & 63));
                u64::MAX
            } else {
                self.first + self.clear_and_find_next(b) as u64
            };
        }
        self.now = node.time;
        (node.time, Event::decode(node.code))
    }

    /// Does the far heap's head come before the ring entry (time, code)? (`far_min <= time`.)
    #[cold]
    #[inline(never)]
    fn far_first(&self, time: Ps, code: u32) -> bool {
        self.far.peek().is_some_and(|r| r.0 < (time, code))
    }

    #[cold]
    #[inline(never)]
    fn pop_far(&mut self) -> Option<(Ps, Event)> {
        let Reverse((time, code)) = self.far.pop()?;
        self.far_min = self.far.peek().map_or(Ps::MAX, |r| r.0 .0);
        self.ring_room = self.max_len - self.far.len();
        self.now = time;
        Some((time, Event::decode(code)))
    }

    /// The port of the arrival that is probably next (the head of the first non-empty ring bucket: what the
    /// next `pop` returns unless an earlier event is pushed first or the far heap's head is earlier), so that
    /// the run loop can ask for its memory early; `None` when that event is not an arrival or the ring is
    /// empty.
    #[inline(always)]
    pub fn next_arrival_hint(&self) -> Option<u32> {
        if self.ring_len == 0 {
            return None;
        }
        let code = self.heads[self.first_index()].code;
        (code >> ID_BITS == 0).then_some(code)
    }

    /// Time of the earliest event, if any.
    pub fn peek_time(&self) -> Option<Ps> {
        let ring = if self.ring_len > 0 { self.heads[self.first_index()].time } else { Ps::MAX };
        let t = ring.min(self.far_min);
        (!self.is_empty()).then_some(t)
    }

    pub fn len(&self) -> usize {
        self.ring_len + self.far.len()
    }

    /// Entries beyond the ring's horizon (timers, far flow arrivals).
    #[inline]
    pub fn far_len(&self) -> usize {
        self.far.len()
    }

    /// Drop the entries beyond the ring's horizon for which `keep` is false: entries the caller knows will do
    /// nothing (a finished flow's timer), so that they neither deepen the heap nor set the run's end. The
    /// other entries keep their order (it is their (time, key)).
    pub fn retain_far(&mut self, mut keep: impl FnMut(Ps, Event) -> bool) {
        self.far.retain(|r| keep(r.0 .0, Event::decode(r.0 .1)));
        self.far_min = self.far.peek().map_or(Ps::MAX, |r| r.0 .0);
        self.ring_room = self.max_len - self.far.len();
    }

    /// The largest number of entries the queue ever held.
    pub fn max_len(&self) -> usize {
        self.max_len
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    #[test]
    fn orders_by_time_then_event_key() {
        let mut q = EventQueue::new();
        q.push(5, Event::Timer(3));
        q.push(3, Event::FlowStart(2));
        q.push(5, Event::Timer(1));
        q.push(3, Event::Arrive(9));
        q.push(3, Event::TxFree(4));
        q.push(3, Event::Arrive(4));
        q.push(0, Event::FlowStart(NEXT_IN_ORDER));
        assert_eq!(q.peek_time(), Some(0));
        let got: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(
            got,
            vec![
                (0, Event::FlowStart(NEXT_IN_ORDER)),
                (3, Event::Arrive(4)),
                (3, Event::Arrive(9)),
                (3, Event::TxFree(4)),
                (3, Event::FlowStart(2)),
                (5, Event::Timer(1)),
                (5, Event::Timer(3))
            ]
        );
        assert!(q.is_empty());
        assert_eq!(q.pop(), None);
    }

    #[test]
    fn equal_times_pushed_while_serving_that_time_take_their_key_order() {
        let mut q = EventQueue::new();
        for i in [1, 3, 5, 7] {
            q.push(10, Event::Arrive(i));
        }
        q.push(11, Event::Arrive(0));
        assert_eq!(q.pop(), Some((10, Event::Arrive(1))));
        q.push(10, Event::Arrive(4)); // same time as the one being served: by key, before 5 and 7
        q.push(10, Event::TxFree(0)); // after every arrival of that time
        let got: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(
            got,
            vec![
                (10, Event::Arrive(3)),
                (10, Event::Arrive(4)),
                (10, Event::Arrive(5)),
                (10, Event::Arrive(7)),
                (10, Event::TxFree(0)),
                (11, Event::Arrive(0))
            ]
        );
    }

    #[test]
    fn far_future_timers_and_extreme_times() {
        let mut q = EventQueue::new();
        q.push(u64::MAX - 1, Event::Timer(4));
        q.push(2_000_000_000, Event::Timer(5));
        q.push(1, Event::Arrive(3));
        q.push(u64::MAX - 1, Event::Timer(1));
        q.push(2_000_000_000, Event::Timer(2));
        let got: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(
            got,
            vec![
                (1, Event::Arrive(3)),
                (2_000_000_000, Event::Timer(2)),
                (2_000_000_000, Event::Timer(5)),
                (u64::MAX - 1, Event::Timer(1)),
                (u64::MAX - 1, Event::Timer(4))
            ]
        );
    }

    #[test]
    fn pop_before_leaves_later_events_in_place() {
        let mut q = EventQueue::new();
        q.push(100, Event::Arrive(1));
        q.push(50_000_000_000, Event::Timer(2)); // far
        assert_eq!(q.pop_before(100), None);
        assert_eq!(q.len(), 2);
        assert_eq!(q.pop_before(101), Some((100, Event::Arrive(1))));
        assert_eq!(q.pop_before(50_000_000_000), None);
        assert_eq!(q.peek_time(), Some(50_000_000_000));
        assert_eq!(q.pop_before(50_000_000_001), Some((50_000_000_000, Event::Timer(2))));
        assert_eq!(q.pop_before(Ps::MAX), None);
    }

    #[test]
    #[should_panic(expected = "event scheduled in the past")]
    fn an_event_in_the_past_panics_even_within_the_current_bucket() {
        let mut q = EventQueue::new();
        q.push(5_000, Event::Arrive(1));
        q.push(5_100, Event::Arrive(2));
        assert_eq!(q.pop(), Some((5_000, Event::Arrive(1))));
        q.push(4_999, Event::Arrive(3)); // same 1,024 ps bucket as now
    }

    #[test]
    #[should_panic(expected = "events carry ids below")]
    fn ids_that_do_not_fit_an_event_are_refused_up_front() {
        EventQueue::check_ids(ID_MASK as usize); // ids 0..=ID_MASK - 1 fit
        EventQueue::check_ids(ID_MASK as usize + 1);
    }

    /// Both sides of the ring's reach (`NEAR`), and more entries than the slab starts with (~2.4 per bucket,
    /// so that it grows, in batches onto the free stack, several times), come out in (time, key) order with the
    /// right maximum length.
    #[test]
    fn the_ring_boundary_and_slab_growth() {
        let mut q = EventQueue::new();
        let now = 7 << SHIFT | 100;
        q.push(now, Event::Arrive(0));
        assert_eq!(q.pop(), Some((now, Event::Arrive(0))));
        let mut want = Vec::new();
        for (i, t) in [now + NEAR - 1, now + NEAR, now + NEAR + 1, now + NEAR - 1].into_iter().enumerate() {
            q.push(t, Event::TxFree(i as u32));
            want.push((t, Event::TxFree(i as u32).encode()));
        }
        for i in 0..10_000u32 {
            let t = now + (i as u64 * 7_919) % (NEAR + 5_000);
            q.push(t, Event::Arrive(i));
            want.push((t, Event::Arrive(i).encode()));
        }
        assert_eq!(q.max_len(), want.len());
        want.sort_unstable();
        let got: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        let want: Vec<_> = want.into_iter().map(|(t, c)| (t, Event::decode(c))).collect();
        assert_eq!(got, want);
    }

    /// Drive the queue and a `BinaryHeap` keyed by (time, key) with the same random operations, shaped like a
    /// simulation: mostly near-future events on a coarse lattice (many exact ties, between the ring and the
    /// far heap too), events of every kind with few ids (many ties of the key's parts), some far timers,
    /// pushes interleaved with pops at the current time, some pops bounded. (Fewer under Miri, which
    /// interprets every step: scripts/miri.sh.)
    #[test]
    fn matches_a_binary_heap_keyed_by_time_and_event() {
        let (seeds, steps) = if cfg!(miri) { (2, 2_000) } else { (20, 20_000) };
        for seed in 0..seeds {
            let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(seed);
            let mut q = EventQueue::new();
            let mut reference: BinaryHeap<Reverse<(u64, u32)>> = BinaryHeap::new();
            let mut now = 0u64;
            let mut max_len = 0;
            for _ in 0..steps {
                let pushes = rng.gen_range(0..3);
                for _ in 0..pushes {
                    // absolute lattices make exact ties common, also between a far entry and a ring entry
                    let lattice = |step: u64, k: u64| (now.div_ceil(step) + k) * step;
                    let t = match rng.gen_range(0..10) {
                        0 => now,                                              // same time as now
                        1 => lattice(1000, 2_000_000 + rng.gen_range(0..3)),   // a far timer
                        2..=4 => lattice(32_000, rng.gen_range(0..8)),         // near, many ties
                        5 => lattice(1_000_000, rng.gen_range(0..12)),         // both sides of the horizon
                        6 => now + rng.gen_range(0..30_000_000),
                        _ => now + rng.gen_range(0..3_000_000),
                    };
                    let id = rng.gen_range(0..6);
                    let ev = match rng.gen_range(0..4) {
                        0 => Event::Arrive(id),
                        1 => Event::TxFree(id),
                        2 => Event::Timer(id),
                        _ => Event::FlowStart(id),
                    };
                    q.push(t, ev);
                    reference.push(Reverse((t, ev.encode())));
                }
                assert_eq!(q.len(), reference.len());
                max_len = max_len.max(reference.len());
                assert_eq!(q.max_len(), max_len);
                assert_eq!(q.peek_time(), reference.peek().map(|r| r.0 .0));
                let bound = if rng.gen_bool(0.2) { now + rng.gen_range(0..2_000_000) } else { Ps::MAX };
                let a = q.pop_before(bound);
                let b = match reference.peek() {
                    Some(r) if r.0 .0 < bound => reference.pop().map(|Reverse((t, c))| (t, Event::decode(c))),
                    _ => None,
                };
                assert_eq!(a, b, "seed {seed}");
                if let Some((t, _)) = a {
                    now = t;
                }
            }
            while let Some(Reverse((t, c))) = reference.pop() {
                assert_eq!(q.pop(), Some((t, Event::decode(c))));
            }
            assert_eq!(q.pop(), None);
        }
    }
}
