//! pFabric's switch queue (Alizadeh et al., "pFabric: Minimal Near-Optimal Datacenter Transport", SIGCOMM 2013,
//! §4.1), also used for LAS: a small buffer where every packet carries a rank (lower is more urgent).
//!
//! - Dequeue: find the most urgent packet (lowest rank), then send the *earliest-arrived* packet of that
//!   packet's flow, so that a flow's packets leave in order and a flow whose rank improved while its older
//!   packets wait is not reordered (the pFabric paper's starvation-prevention rule).
//! - Enqueue when the buffer is full: drop least urgent packets (highest rank; among equals the latest arrival)
//!   until the arrival fits, each strictly less urgent than the arrival; when the packets less urgent than the
//!   arrival cannot free enough room together, the arrival itself is the one dropped and nothing else is
//!   (pFabric §4.1: a full buffer drops its lowest-priority packets to make room, the arriving packet when it is
//!   the lowest).
//!   Evicting only the single least urgent packet is not enough with unequal sizes: that packet is often a
//!   41 B probe or a short last segment, whose room does not fit a full-size arrival, which was then dropped
//!   however urgent (data mining at load 0.8: 42 small-flow timeouts). pFabric's ns-2 queue (`drop_prio_`)
//!   drops one packet, the least urgent of those whose removal alone makes room (the arrival included), so it
//!   passes over a small probe but may drop a full-size packet more urgent than other, smaller waiting ones;
//!   evicting in rank order until the arrival fits never drops a packet while a less urgent one stays.
//!
//! ACKs are the most urgent packets (rank 0), as in pFabric.
//!
//! Ranked by priority ([`RankQueue::by_priority`]; QJump's `scheme.qjump_queue = "ranked"`): a packet's rank is
//! its priority field instead, data and ACKs alike (a QJump flow's level; ACKs at `transport.ack_priority`).
//! The rules above are unchanged: the QJump authors' ns-2 queue (pFabric's `drop_prio_` and `deque_prio_` over
//! the priority) serves the earliest packet of the most urgent priority and drops the newest of the least urgent.
//!
//! Layout: the packets sit in a slab (one buffer per port, slots reused through a free list) and are linked
//! into one FIFO per flow and direction (a *group*). Each group also links its candidates for the minimum (a
//! monotone queue: the packets that no later packet of the group beats), so it always knows its most urgent
//! packet. A port rarely holds more than a handful of groups at once, even when a NIC holds a few hundred
//! packets of one host's windows, so a dequeue compares the groups' minima and unlinks the winner's head: no
//! scan over the packets, no moves. Ties compare arrival numbers, so every choice is the one a scan in
//! arrival order would make. Only a full buffer walks every packet (for the victims): once per drop.
//! The queue's record holds its first three groups itself (see [`RankQueue`]), so that a dequeue reads the
//! record and its groups at one address and then the winner's slot: two dependent steps, not three.

use super::packet::{Header, Packet};

/// What happened to an arriving packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RankAdmission {
    /// Queued; nothing dropped.
    Queued,
    /// Queued, and this many other (less urgent) packets were pushed out (handed to the caller's `evicted`).
    Evicted(u32),
    /// The arriving packet itself was the least urgent: dropped.
    Rejected,
}

/// End of a list.
const NIL: u32 = u32::MAX;

#[derive(Debug, Clone, Copy)]
#[repr(align(64))]
struct Slot<H: Header = ()> {
    pkt: Packet<H>,
    /// Arrival number in this queue (unique, increasing).
    seq: u64,
    /// Next packet of the group in arrival order (or the next free slot).
    next: u32,
    /// Next and previous candidates of the group (see [`Group`]); meaningless for other packets.
    cand: u32,
    cand_prev: u32,
}

/// The waiting packets of one flow and direction (never empty).
#[derive(Debug, Clone, Copy)]
struct Group {
    key: u32,
    head: u32,
    tail: u32,
    /// Candidates: the packets that no later packet of the group beats (strictly lower rank), linked both
    /// ways through `Slot::cand` / `Slot::cand_prev` in arrival order, ranks non-decreasing. The tail is always
    /// the last one; the first is the group's most urgent packet (earliest among equals), whose rank and
    /// arrival number are copied below so that a dequeue compares groups without reading the slab.
    cand_first: u32,
    cand_last: u32,
    min_rank: u32,
    min_seq: u64,
}

/// Groups held in the queue's record itself (the rest spill to a vector): a dequeue compares the groups' minima,
/// and these are read at a fixed offset from the record, with no pointer to follow first.
const INLINE: usize = 3;

/// Field order is layout: line 0 holds what every push and pop reads besides the groups (the slab, the counts,
/// the buffer limit), lines 1 and 2 the first [`INLINE`] groups and the spilled ones' vector. One aligned record
/// of three lines per port (an odd number, so that the records' first lines spread over every set of the L1),
/// where a record of 80 bytes with its groups in a vector of their own had a pop follow three dependent lines:
/// the record, its groups, the head packet's slot.
#[derive(Debug, Clone)]
#[repr(C, align(64))]
pub struct RankQueue<H: Header = ()> {
    // --- line 0 ---
    slots: Vec<Slot<H>>,
    /// Free slots, linked through `Slot::next`.
    free: u32,
    /// Groups: `inline[..min(n, INLINE)]`, then `spill`. In no particular order (ties are broken by arrival
    /// numbers, never by position).
    n_groups: u32,
    /// Packets waiting.
    len: u32,
    /// Rank by the priority field ([`RankQueue::by_priority`]) instead of [`Packet::rank`].
    by_prio: bool,
    /// The port's transmitter is a host's NIC ([`RankQueue::set_buffer`]).
    at_host: bool,
    bytes: u64,
    next_seq: u64,
    /// The port's buffer in bytes (0 = unbounded; [`RankQueue::set_buffer`]), so that the engine reads it here.
    limit: u64,
    // --- lines 1 and 2 ---
    inline: [Group; INLINE],
    /// Groups past the first `INLINE`.
    spill: Vec<Group>,
}

impl<H: Header> Default for RankQueue<H> {
    fn default() -> Self {
        Self::new()
    }
}

/// Flow id with the top bit set for ACKs (a flow's data and its ACKs are separate streams).
#[inline]
fn key_of<H: Header>(p: &Packet<H>) -> u32 {
    p.flow | if p.is_ack() { 1 << 31 } else { 0 }
}

const NO_GROUP: Group = Group { key: 0, head: NIL, tail: NIL, cand_first: NIL, cand_last: NIL, min_rank: 0, min_seq: 0 };

impl<H: Header> RankQueue<H> {
    pub fn new() -> Self {
        RankQueue {
            slots: Vec::with_capacity(16),
            free: NIL,
            n_groups: 0,
            len: 0,
            by_prio: false,
            at_host: false,
            bytes: 0,
            next_seq: 0,
            limit: 0,
            inline: [NO_GROUP; INLINE],
            spill: Vec::new(),
        }
    }

    /// A queue that ranks every packet, data and ACKs, by its priority field (lower is more urgent).
    pub fn by_priority() -> Self {
        RankQueue { by_prio: true, ..Self::new() }
    }

    /// The port's buffer (`limit` bytes, 0 = unbounded) and whether its transmitter is a host's NIC, kept
    /// here for the engine ([`RankQueue::limit`], [`RankQueue::at_host`]).
    pub fn set_buffer(&mut self, limit: u64, at_host: bool) {
        self.limit = limit;
        self.at_host = at_host;
    }

    /// The port's buffer in bytes (0 = unbounded), as set by [`RankQueue::set_buffer`].
    #[inline]
    pub fn limit(&self) -> u64 {
        self.limit
    }

    /// The port's transmitter is a host's NIC ([`RankQueue::set_buffer`]).
    #[inline]
    pub fn at_host(&self) -> bool {
        self.at_host
    }

    /// The rank this queue orders `p` by.
    #[inline(always)]
    fn rank_of(&self, p: &Packet<H>) -> u32 {
        if self.by_prio {
            p.prio as u32
        } else {
            p.rank()
        }
    }

    pub fn len(&self) -> usize {
        self.len as usize
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Slot `i` (in use or free). Unchecked: every slot id the queue holds (a group's ends and candidates, a
    /// slot's links, the free list's head) came from `slots`' own indices, and the slab only shrinks to empty
    /// when no packet waits; the assertion checks it where debug assertions are on (the tests' profile).
    #[inline(always)]
    fn slot(&self, i: u32) -> &Slot<H> {
        debug_assert!((i as usize) < self.slots.len());
        // SAFETY: in bounds, as said above.
        unsafe { self.slots.get_unchecked(i as usize) }
    }

    #[inline(always)]
    fn slot_mut(&mut self, i: u32) -> &mut Slot<H> {
        debug_assert!((i as usize) < self.slots.len());
        // SAFETY: as in `slot`.
        unsafe { self.slots.get_unchecked_mut(i as usize) }
    }

    /// Group `i < n_groups`.
    #[inline(always)]
    fn group(&self, i: usize) -> &Group {
        debug_assert!(i < self.n_groups as usize);
        if i < INLINE {
            &self.inline[i]
        } else {
            &self.spill[i - INLINE]
        }
    }

    #[inline(always)]
    fn group_mut(&mut self, i: usize) -> &mut Group {
        debug_assert!(i < self.n_groups as usize);
        if i < INLINE {
            &mut self.inline[i]
        } else {
            &mut self.spill[i - INLINE]
        }
    }

    /// The groups, inline ones first.
    #[inline(always)]
    fn groups(&self) -> impl Iterator<Item = &Group> {
        let n = self.n_groups as usize;
        self.inline[..n.min(INLINE)].iter().chain(self.spill.iter())
    }

    /// Index of the group of `key`, if any.
    #[inline(always)]
    fn find_group(&self, key: u32) -> Option<usize> {
        let n = self.n_groups as usize;
        if let Some(i) = self.inline[..n.min(INLINE)].iter().position(|g| g.key == key) {
            return Some(i);
        }
        self.spill.iter().position(|g| g.key == key).map(|i| i + INLINE)
    }

    #[inline(always)]
    fn push_group(&mut self, g: Group) {
        let n = self.n_groups as usize;
        if n < INLINE {
            self.inline[n] = g;
        } else {
            self.spill.push(g);
        }
        self.n_groups += 1;
    }

    /// Remove group `i`, the last group taking its place (as `Vec::swap_remove`).
    #[inline(always)]
    fn swap_remove_group(&mut self, i: usize) {
        let last = self.n_groups as usize - 1;
        let g = if last >= INLINE { self.spill.pop().expect("spilled group") } else { self.inline[last] };
        if i != last {
            *self.group_mut(i) = g;
        }
        self.n_groups -= 1;
    }

    #[inline(always)]
    fn rank(&self, i: u32) -> u32 {
        self.rank_of(&self.slot(i).pkt)
    }

    /// Add `pkt` to a buffer of `limit` bytes (0 = unbounded), evicting less urgent packets if needed; each
    /// evicted packet goes to `evicted` (called only on the cold path: no allocation, no per-packet cost).
    #[inline]
    pub fn push(&mut self, pkt: Packet<H>, limit: u64, evicted: impl FnMut(Packet<H>)) -> RankAdmission {
        if limit == 0 || self.bytes + pkt.wire as u64 <= limit {
            self.append(pkt);
            return RankAdmission::Queued;
        }
        self.push_full(pkt, limit, evicted)
    }

    /// Full. Evict the least urgent waiting packets (highest rank, latest among equals), all strictly less
    /// urgent than `pkt`, until `pkt` fits; if those less urgent than `pkt` together cannot make room, reject
    /// `pkt` and keep everything (see the module docs). One walk over the packets decides; each eviction then
    /// walks again for the next victim (evictions are rare and few: usually one, a probe and one packet at
    /// most a few).
    #[cold]
    #[inline(never)]
    fn push_full(&mut self, pkt: Packet<H>, limit: u64, mut evicted: impl FnMut(Packet<H>)) -> RankAdmission {
        let need = self.bytes + pkt.wire as u64 - limit;
        let mut freeable = 0u64;
        let rank = self.rank_of(&pkt);
        for g in self.groups() {
            let mut i = g.head;
            while i != NIL {
                let s = &self.slots[i as usize];
                if self.rank_of(&s.pkt) > rank {
                    freeable += s.pkt.wire as u64;
                }
                i = s.next;
            }
        }
        if freeable < need {
            return RankAdmission::Rejected;
        }
        let mut count = 0;
        while self.bytes + pkt.wire as u64 > limit {
            let worst = self.least_urgent();
            debug_assert!(worst != NIL && self.rank(worst) > rank);
            evicted(self.remove(worst));
            count += 1;
        }
        self.append(pkt);
        RankAdmission::Evicted(count)
    }

    /// The least urgent waiting packet (highest rank, latest among equals); NIL when empty.
    fn least_urgent(&self) -> u32 {
        let mut worst = NIL;
        let mut worst_key = (0u32, 0u64);
        for g in self.groups() {
            let mut i = g.head;
            while i != NIL {
                let s = &self.slots[i as usize];
                let k = (self.rank_of(&s.pkt), s.seq);
                if worst == NIL || k > worst_key {
                    worst = i;
                    worst_key = k;
                }
                i = s.next;
            }
        }
        worst
    }

    /// Unlink slot `x` from the middle of its group (an eviction: rare, so linear in the group).
    fn remove(&mut self, x: u32) -> Packet::<H> {
        let key = key_of(&self.slots[x as usize].pkt);
        let gi = self.find_group(key).expect("a queued packet has a group");
        let g = *self.group(gi);
        let next = self.slots[x as usize].next;
        if g.head == x {
            self.group_mut(gi).head = next;
        } else {
            let mut p = g.head;
            while self.slots[p as usize].next != x {
                p = self.slots[p as usize].next;
            }
            self.slots[p as usize].next = next;
            if g.tail == x {
                self.group_mut(gi).tail = p;
            }
        }
        let out = self.release(x);
        if self.group(gi).head == NIL {
            self.swap_remove_group(gi);
        } else {
            self.rebuild_candidates(gi);
        }
        out
    }

    /// Recompute group `gi`'s candidates from its packets.
    fn rebuild_candidates(&mut self, gi: usize) {
        let g = *self.group(gi);
        let (mut first, mut last) = (g.head, g.head);
        let mut i = self.slots[g.head as usize].next;
        while i != NIL {
            self.link_candidate(&mut first, &mut last, i);
            i = self.slots[i as usize].next;
        }
        self.set_candidates(gi, first, last);
    }

    /// Add slot `x` (the group's new tail) to the candidate list `first..=last` (non-empty), dropping the
    /// candidates it beats: a suffix, walked from the back (each candidate is dropped at most once).
    #[inline(always)]
    fn link_candidate(&mut self, first: &mut u32, last: &mut u32, x: u32) {
        let r = self.rank(x);
        let mut c = *last;
        while self.rank(c) > r {
            if c == *first {
                // beats them all (ranks that shrink along the flow, as pFabric's remaining size)
                *first = x;
                *last = x;
                return;
            }
            c = self.slot(c).cand_prev;
        }
        self.slot_mut(c).cand = x;
        self.slot_mut(x).cand_prev = c;
        *last = x;
    }

    #[inline(always)]
    fn set_candidates(&mut self, gi: usize, first: u32, last: u32) {
        let s = self.slot(first);
        let (rank, seq) = (self.rank_of(&s.pkt), s.seq);
        let g = self.group_mut(gi);
        g.cand_first = first;
        g.cand_last = last;
        g.min_rank = rank;
        g.min_seq = seq;
    }

    /// Free slot `x`, returning its packet.
    #[inline(always)]
    fn release(&mut self, x: u32) -> Packet::<H> {
        let free = self.free;
        let s = self.slot_mut(x);
        let pkt = s.pkt;
        s.next = free;
        self.free = x;
        self.len -= 1;
        self.bytes -= pkt.wire as u64;
        if self.len == 0 {
            // start over from the first slot (keeps a mostly empty queue on a few cache lines)
            self.slots.clear();
            self.free = NIL;
        }
        pkt
    }

    #[inline(always)]
    fn append(&mut self, pkt: Packet<H>) {
        let key = key_of(&pkt);
        let seq = self.next_seq;
        self.next_seq += 1;
        self.len += 1;
        self.bytes += pkt.wire as u64;
        let slot = Slot { pkt, seq, next: NIL, cand: NIL, cand_prev: NIL };
        let x = if self.free != NIL {
            let x = self.free;
            self.free = self.slot(x).next;
            *self.slot_mut(x) = slot;
            x
        } else {
            assert!(self.slots.len() < NIL as usize, "a rank queue of 2^32 - 1 packets");
            self.slots.push(slot);
            (self.slots.len() - 1) as u32
        };
        match self.find_group(key) {
            Some(gi) => {
                let g = *self.group(gi);
                self.slot_mut(g.tail).next = x;
                self.group_mut(gi).tail = x;
                let (mut first, mut last) = (g.cand_first, g.cand_last);
                self.link_candidate(&mut first, &mut last, x);
                if first != g.cand_first {
                    self.set_candidates(gi, first, last);
                } else {
                    self.group_mut(gi).cand_last = last;
                }
            }
            None => {
                let min_rank = self.rank_of(&pkt);
                self.push_group(Group {
                    key,
                    head: x,
                    tail: x,
                    cand_first: x,
                    cand_last: x,
                    min_rank,
                    min_seq: seq,
                })
            }
        }
    }

    /// Take the next packet to send: the earliest packet of the flow that holds the most urgent packet.
    #[inline]
    pub fn pop(&mut self) -> Option<Packet<H>> {
        if self.n_groups == 0 {
            return None;
        }
        // the group holding the most urgent packet (earliest among equal ranks): the inline groups, then the
        // spilled ones (plain loops: an iterator chain here cost pFabric 40 instructions per packet-hop)
        let n = self.n_groups as usize;
        let mut b = 0;
        let first = &self.inline[0];
        let mut best = (first.min_rank, first.min_seq);
        for i in 1..n.min(INLINE) {
            let g = &self.inline[i];
            if (g.min_rank, g.min_seq) < best {
                b = i;
                best = (g.min_rank, g.min_seq);
            }
        }
        if n > INLINE {
            for (j, g) in self.spill.iter().enumerate() {
                if (g.min_rank, g.min_seq) < best {
                    b = INLINE + j;
                    best = (g.min_rank, g.min_seq);
                }
            }
        }
        // its earliest packet
        let g = *self.group(b);
        let x = g.head;
        let next = self.slot(x).next;
        if next == NIL {
            self.swap_remove_group(b);
        } else {
            self.group_mut(b).head = next;
            if g.cand_first == x {
                // the head was the minimum: the next candidate takes over (there is one: the tail)
                let c = self.slot(x).cand;
                self.set_candidates(b, c, g.cand_last);
            }
        }
        Some(self.release(x))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::packet::{flags, NO_SACK};

    fn data(flow: u32, seq: u32, rank: u32) -> Packet {
        Packet { flow, seq, sack: rank, dst: 0, wire: 1500, prio: 0, flags: 0, ts: 0, hdr: () }
    }

    #[test]
    fn serves_most_urgent_flow_earliest_packet_first() {
        let mut q = RankQueue::new();
        // flow 1's older packet has a worse rank than its newer one (its remaining size shrank)
        for p in [data(1, 0, 50), data(2, 0, 30), data(1, 1, 10), data(2, 1, 20)] {
            assert_eq!(q.push(p, 0, |_| panic!()), RankAdmission::Queued);
        }
        let order: Vec<(u32, u32)> = std::iter::from_fn(|| q.pop()).map(|p| (p.flow, p.seq)).collect();
        // rank 10 belongs to flow 1 -> its earliest packet (seq 0) goes first, then seq 1; then flow 2
        assert_eq!(order, vec![(1, 0), (1, 1), (2, 0), (2, 1)]);
        assert_eq!(q.bytes(), 0);
    }

    #[test]
    fn full_buffer_drops_the_least_urgent_packet() {
        let mut q = RankQueue::new();
        let mut out = Vec::new();
        q.push(data(1, 0, 100), 3000, |p| out.push(p));
        q.push(data(2, 0, 5), 3000, |p| out.push(p));
        // more urgent arrival evicts rank 100
        assert_eq!(q.push(data(3, 0, 7), 3000, |p| out.push(p)), RankAdmission::Evicted(1));
        assert_eq!(out.iter().map(|p| (p.flow, p.rank())).collect::<Vec<_>>(), vec![(1, 100)]);
        // less urgent arrival is itself dropped
        assert_eq!(q.push(data(4, 0, 9), 3000, |p| out.push(p)), RankAdmission::Rejected);
        // equal rank: the arrival loses (the latest among equals is dropped)
        assert_eq!(q.push(data(5, 0, 7), 3000, |p| out.push(p)), RankAdmission::Rejected);
        assert_eq!((q.len(), out.len()), (2, 1));
    }

    /// A 41 B probe, the least urgent packet, at the tail of a full buffer: an urgent full-size arrival is
    /// admitted by evicting the probe and then the next least urgent packet (evicting the probe alone does not
    /// make room; the arrival used to be dropped).
    #[test]
    fn an_urgent_arrival_evicts_until_it_fits() {
        let mut q = RankQueue::new();
        let mut out = Vec::new();
        let limit = 3 * 1500 + 41;
        for (flow, rank) in [(1, 50), (2, 60), (3, 40)] {
            assert_eq!(q.push(data(flow, 0, rank), limit, |p| out.push(p)), RankAdmission::Queued);
        }
        let probe = Packet { wire: 41, flags: flags::PROBE, ..data(4, 0, 90) };
        assert_eq!(q.push(probe, limit, |p| out.push(p)), RankAdmission::Queued);
        assert_eq!(q.bytes(), limit);
        assert_eq!(q.push(data(5, 0, 10), limit, |p| out.push(p)), RankAdmission::Evicted(2));
        // least urgent first: the probe (rank 90), then flow 2 (rank 60); flow 1 (rank 50) stays
        assert_eq!(out.iter().map(|p| (p.flow, p.rank())).collect::<Vec<_>>(), vec![(4, 90), (2, 60)]);
        assert_eq!((q.len(), q.bytes()), (3, 3 * 1500));
        // an arrival that the less urgent packets cannot make room for is dropped, and nothing else is
        out.clear();
        assert_eq!(q.push(data(6, 0, 45), 3000, |p| out.push(p)), RankAdmission::Rejected);
        assert!(out.is_empty() && q.len() == 3);
        let order: Vec<u32> = std::iter::from_fn(|| q.pop()).map(|p| p.flow).collect();
        assert_eq!(order, vec![5, 3, 1]);
    }

    #[test]
    fn acks_are_most_urgent() {
        let mut q = RankQueue::new();
        q.push(data(1, 0, 1), 0, |_| ());
        let ack = Packet { flow: 9, seq: 0, sack: NO_SACK, dst: 0, wire: 40, prio: 0, flags: flags::ACK, ts: 0, hdr: () };
        q.push(ack, 0, |_| ());
        assert!(q.pop().unwrap().is_ack());
    }

    fn level(flow: u32, seq: u32, level: u8) -> Packet {
        // (a rank field that disagrees with the level: the priority-ranked queue must not read it)
        Packet { prio: level, sack: 1_000 - flow, ..data(flow, seq, 0) }
    }

    /// QJump's queue as its authors' ns-2 model has it: a full port that receives a level-0 packet drops the
    /// newest packet of the lowest level (highest number) instead; an arrival at the lowest level present is
    /// itself dropped.
    #[test]
    fn by_priority_a_full_port_drops_the_newest_packet_of_the_lowest_level() {
        let mut q = RankQueue::by_priority();
        let mut out = Vec::new();
        let limit = 4 * 1500;
        for p in [level(1, 0, 3), level(2, 0, 5), level(3, 0, 5), level(4, 0, 1)] {
            assert_eq!(q.push(p, limit, |v| out.push(v)), RankAdmission::Queued);
        }
        assert_eq!(q.push(level(5, 0, 0), limit, |v| out.push(v)), RankAdmission::Evicted(1));
        assert_eq!(out.iter().map(|p| (p.flow, p.prio)).collect::<Vec<_>>(), vec![(3, 5)]);
        // an arrival at the lowest level present (5) loses to the packet already there
        assert_eq!(q.push(level(6, 0, 5), limit, |v| out.push(v)), RankAdmission::Rejected);
        // one above it pushes out the other level-5 packet
        assert_eq!(q.push(level(7, 0, 4), limit, |v| out.push(v)), RankAdmission::Evicted(1));
        assert_eq!(out.iter().map(|p| (p.flow, p.prio)).collect::<Vec<_>>(), vec![(3, 5), (2, 5)]);
        let order: Vec<u32> = std::iter::from_fn(|| q.pop()).map(|p| p.flow).collect();
        assert_eq!(order, vec![5, 4, 1, 7]);
    }

    /// Service: the most urgent priority first, first come first served within a priority; ACKs at their own
    /// priority (here 0, tied with level 0: they take their turn by arrival), whatever their rank field says.
    #[test]
    fn by_priority_serves_the_highest_level_first_in_arrival_order() {
        let mut q = RankQueue::by_priority();
        let ack = |flow: u32, prio: u8| Packet {
            flow,
            seq: 0,
            sack: NO_SACK,
            dst: 0,
            wire: 40,
            prio,
            flags: flags::ACK,
            ts: 0,
            hdr: (),
        };
        for p in [level(1, 0, 2), level(2, 0, 0), level(3, 0, 2), ack(4, 0), level(2, 1, 0), ack(5, 3), level(1, 1, 2)] {
            assert_eq!(q.push(p, 0, |_| panic!()), RankAdmission::Queued);
        }
        let order: Vec<(u32, u32, bool)> = std::iter::from_fn(|| q.pop()).map(|p| (p.flow, p.seq, p.is_ack())).collect();
        assert_eq!(
            order,
            vec![(2, 0, false), (4, 0, true), (2, 1, false), (1, 0, false), (3, 0, false), (1, 1, false), (5, 0, true)]
        );
        // the same packets in pFabric's ranking (rank field; ACKs first) come out in another order
        let mut p = RankQueue::new();
        for x in [level(1, 0, 2), level(2, 0, 0), level(3, 0, 2), ack(4, 0), level(2, 1, 0), ack(5, 3), level(1, 1, 2)] {
            p.push(x, 0, |_| ());
        }
        assert_ne!(std::iter::from_fn(|| p.pop()).map(|x| (x.flow, x.seq, x.is_ack())).collect::<Vec<_>>(), order);
    }

    /// The straightforward implementation (one array in arrival order, linear scans), to check against.
    #[derive(Default)]
    struct Reference {
        pkts: Vec<Packet>,
        bytes: u64,
        /// Rank by the priority field (`RankQueue::by_priority`).
        by_prio: bool,
    }

    impl Reference {
        fn rank(&self, p: &Packet) -> u32 {
            if self.by_prio {
                p.prio as u32
            } else {
                p.rank()
            }
        }

        fn push(&mut self, pkt: Packet, limit: u64, out: &mut Vec<Packet>) -> RankAdmission {
            let w = pkt.wire as u64;
            if limit == 0 || self.bytes + w <= limit {
                self.bytes += w;
                self.pkts.push(pkt);
                return RankAdmission::Queued;
            }
            // evict the least urgent (highest rank, latest among equals) while the arrival does not fit, all
            // strictly less urgent than it; all or nothing
            let less: u64 = self.pkts.iter().filter(|p| self.rank(p) > self.rank(&pkt)).map(|p| p.wire as u64).sum();
            if self.bytes + w - limit > less {
                return RankAdmission::Rejected;
            }
            let mut n = 0;
            while self.bytes + w > limit {
                let j = (0..self.pkts.len()).max_by_key(|&i| (self.rank(&self.pkts[i]), i)).unwrap();
                let victim = self.pkts.remove(j);
                self.bytes -= victim.wire as u64;
                out.push(victim);
                n += 1;
            }
            self.bytes += w;
            self.pkts.push(pkt);
            RankAdmission::Evicted(n)
        }

        fn pop(&mut self) -> Option<Packet> {
            // most urgent: lowest rank, earliest among equals; then that flow's (and direction's) earliest
            let b = (0..self.pkts.len()).min_by_key(|&i| (self.rank(&self.pkts[i]), i))?;
            let first = self.pkts.iter().position(|p| key_of(p) == key_of(&self.pkts[b])).unwrap();
            let out = self.pkts.remove(first);
            self.bytes -= out.wire as u64;
            Some(out)
        }
    }

    #[test]
    fn matches_the_reference_on_random_traffic() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(7);
        // (fewer under Miri, `scripts/miri.sh`: the queue indexes its slab without bounds checks)
        let (rounds, steps) = if cfg!(miri) { (25, 300) } else { (400, 3000) };
        for round in 0..rounds {
            // every fifth round ranks by the priority field (QJump's levels; ACKs at a priority of their own)
            let by_prio = round % 5 == 4;
            let mut q = if by_prio { RankQueue::by_priority() } else { RankQueue::new() };
            let mut r = Reference { by_prio, ..Reference::default() };
            // few flows and few distinct ranks (ties), mixed sizes; bounded or unbounded buffers; ranks random,
            // or growing along each flow (LAS) or shrinking (pFabric), with a few out of line (retransmissions)
            let flows = rng.gen_range(1..8u32);
            let ranks = rng.gen_range(1..20u32);
            let trend = round % 3;
            let mut sent = [0u32; 8];
            let limit = [0, 4_500, 36_000, 210_000][round % 4];
            let push_bias = rng.gen_range(0.3..0.8);
            let mut seq = 0;
            for _ in 0..steps {
                if rng.gen_bool(push_bias) {
                    seq += 1;
                    let flow = rng.gen_range(0..flows);
                    let ack = rng.gen_bool(0.2);
                    let wire = if ack { 40 } else { [1500, 1500, 700, 64][rng.gen_range(0..4)] };
                    let p = Packet {
                        flow,
                        seq,
                        sack: if ack {
                            NO_SACK
                        } else if trend == 0 || rng.gen_bool(0.05) {
                            rng.gen_range(0..ranks)
                        } else {
                            sent[flow as usize] += rng.gen_range(0..3);
                            let s = sent[flow as usize];
                            [0, s, 1_000_000 - s][trend]
                        },
                        dst: 0,
                        wire,
                        prio: if !by_prio {
                            0
                        } else if ack {
                            rng.gen_range(0..3)
                        } else {
                            (flow % 8) as u8
                        },
                        flags: if ack { flags::ACK } else { 0 },
                        ts: 0,
                        hdr: (),
                    };
                    let (mut a, mut b) = (Vec::new(), Vec::new());
                    assert_eq!(q.push(p, limit, |v| a.push(v)), r.push(p, limit, &mut b));
                    assert_eq!(a, b);
                } else {
                    assert_eq!(q.pop(), r.pop());
                }
                assert_eq!((q.len(), q.bytes()), (r.pkts.len(), r.bytes));
            }
            while let Some(p) = r.pop() {
                assert_eq!(q.pop(), Some(p));
            }
            assert!(q.is_empty() && q.pop().is_none());
        }
    }
}
