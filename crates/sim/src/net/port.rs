//! An egress port: the queues in front of one direction of a link, its transmitter, and its wire.
//!
//! A port holds K strict-priority FIFO queues (priority p goes to queue min(p, K-1); queue 0 is served first),
//! a buffer limit (bytes per port, or a switch-wide shared pool with dynamic thresholds), ECN marking on the
//! instantaneous occupancy, and drop-tail. Occupancy counts the packets *waiting* in the queues, not the one
//! being serialized (as ns-2's queues do). ECN marks an ECN-capable packet when the occupancy including the
//! arriving packet exceeds the threshold (per port or per queue).
//!
//! The transmitter serializes one packet at a time at the link rate (store and forward). The wire is a FIFO
//! of packets in flight, each with its arrival time at the far end: every packet on a link has the same
//! propagation delay, so they arrive in the order they left, and the event queue needs one entry per link
//! (for the head packet), not one per packet.

use super::packet::{flags, Packet};
use crate::config::EcnMode;
use crate::units::{tx_time, Ps};
use std::collections::VecDeque;

/// Why a port refused a packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admission {
    /// Accepted; `true` if the packet now carries a fresh CE mark.
    Accepted { marked: bool },
    /// Dropped at the tail: the port or shared buffer had no room.
    Dropped,
}

/// Per-queue counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct QueueCounters {
    pub enqueued: u64,
    pub dropped: u64,
    pub marked: u64,
    pub max_bytes: u64,
}

/// One strict-priority FIFO: its packets, occupancy and counters side by side, so that an enqueue or a dequeue
/// touches one small record.
#[derive(Debug, Clone, Default)]
struct Fifo {
    pkts: VecDeque<Packet>,
    bytes: u64,
    counters: QueueCounters,
}

/// Field order is layout: `repr(C)` on a 64-byte-aligned record keeps what every packet touches in the first
/// two cache lines (line 0: wire, transmitter, occupancy; line 1: queues and admission parameters) and the
/// rarely read fields after them.
#[derive(Debug, Clone)]
#[repr(C, align(64))]
pub struct Port {
    /// Packets in flight on the wire, with their arrival time at `peer`.
    pub wire: VecDeque<(Ps, Packet)>,
    /// The transmitter is busy until then.
    pub busy_until: Ps,
    /// Bytes waiting in all queues.
    pub bytes: u64,
    /// Bit q set when queue q is non-empty.
    nonempty: u64,
    pub delay_ps: Ps,
    // --- line 1 ---
    queues: Box<[Fifo]>,
    /// Serialization delay per byte when the rate divides 8e12 exactly (the common case), else 0.
    ps_per_byte: Ps,
    /// Port buffer limit; 0 = unbounded.
    buffer_limit: u64,
    ecn_threshold: u64,
    pub max_bytes: u64,
    /// Node at the far end of the link.
    pub peer: u32,
    /// Index of the switch's shared pool, if the buffer is shared.
    pub pool: Option<u32>,
    ecn: EcnMode,
    /// A "transmitter free" event is in the event queue.
    pub tx_event_pending: bool,
    // --- cold ---
    /// Node that transmits on this port.
    pub owner: u32,
    pub rate_bps: u64,
    /// Packets put on the wire (for the events-per-packet accounting).
    pub transmitted: u64,
}

impl Port {
    pub fn new(
        owner: u32,
        peer: u32,
        rate_bps: u64,
        delay_ps: Ps,
        queues: u32,
        buffer_limit: u64,
        ecn: EcnMode,
        ecn_threshold: u64,
    ) -> Self {
        let k = queues as usize;
        let exact = 8 * crate::units::PS_PER_S;
        Port {
            wire: VecDeque::new(),
            busy_until: 0,
            bytes: 0,
            nonempty: 0,
            delay_ps,
            queues: (0..k).map(|_| Fifo::default()).collect(),
            ps_per_byte: if exact % rate_bps == 0 { exact / rate_bps } else { 0 },
            buffer_limit,
            ecn_threshold,
            max_bytes: 0,
            peer,
            pool: None,
            ecn,
            tx_event_pending: false,
            owner,
            rate_bps,
            transmitted: 0,
        }
    }

    pub fn num_queues(&self) -> usize {
        self.queues.len()
    }

    /// Serialization delay of `wire_bytes` on this port's link.
    #[inline]
    pub fn tx_time(&self, wire_bytes: u32) -> Ps {
        if self.ps_per_byte != 0 {
            wire_bytes as Ps * self.ps_per_byte
        } else {
            tx_time(wire_bytes, self.rate_bps)
        }
    }

    #[inline]
    pub fn queue_of(&self, prio: u8) -> usize {
        (prio as usize).min(self.queues.len() - 1)
    }

    /// Is the port idle with nothing waiting at time `now`? Then a packet can go straight onto the wire.
    #[inline]
    pub fn can_send_now(&self, now: Ps) -> bool {
        self.nonempty == 0 && now >= self.busy_until
    }

    /// Decide whether a packet may join its queue, given the shared pool's state when the buffer is shared
    /// (`pool_free`: bytes free in the pool, `dt_alpha`). Marks ECN; does not enqueue.
    #[inline]
    pub fn admit(&mut self, pkt: &mut Packet, pool_free: Option<(u64, f64)>) -> Admission {
        let q = self.queue_of(pkt.prio);
        let w = pkt.wire as u64;
        let fits = match pool_free {
            None => self.buffer_limit == 0 || self.bytes + w <= self.buffer_limit,
            Some((free, alpha)) => w <= free && (self.queues[q].bytes + w) as f64 <= alpha * free as f64,
        };
        let fifo = &mut self.queues[q];
        if !fits {
            fifo.counters.dropped += 1;
            return Admission::Dropped;
        }
        let mut marked = false;
        if pkt.flags & flags::ECT != 0 && pkt.flags & flags::CE == 0 {
            let occupancy = match self.ecn {
                EcnMode::Port => self.bytes + w,
                EcnMode::Queue => fifo.bytes + w,
                EcnMode::Off => 0,
            };
            if self.ecn != EcnMode::Off && occupancy > self.ecn_threshold {
                pkt.flags |= flags::CE;
                fifo.counters.marked += 1;
                marked = true;
            }
        }
        fifo.counters.enqueued += 1;
        Admission::Accepted { marked }
    }

    /// Put an admitted packet in its queue.
    #[inline]
    pub fn push(&mut self, pkt: Packet) {
        let q = self.queue_of(pkt.prio);
        let w = pkt.wire as u64;
        let fifo = &mut self.queues[q];
        fifo.pkts.push_back(pkt);
        fifo.bytes += w;
        if fifo.bytes > fifo.counters.max_bytes {
            fifo.counters.max_bytes = fifo.bytes;
        }
        self.bytes += w;
        self.nonempty |= 1 << q;
        if self.bytes > self.max_bytes {
            self.max_bytes = self.bytes;
        }
    }

    /// Take the next packet to serve: the head of the highest-priority non-empty queue.
    #[inline]
    pub fn pop(&mut self) -> Option<Packet> {
        if self.nonempty == 0 {
            return None;
        }
        let q = self.nonempty.trailing_zeros() as usize;
        let fifo = &mut self.queues[q];
        let pkt = fifo.pkts.pop_front().expect("nonempty bit set on an empty queue");
        let w = pkt.wire as u64;
        fifo.bytes -= w;
        self.bytes -= w;
        if fifo.pkts.is_empty() {
            self.nonempty &= !(1 << q);
            debug_assert_eq!(fifo.bytes, 0);
        }
        Some(pkt)
    }

    /// Start serializing `pkt` at `now` (the transmitter must be free). Returns `true` if the wire was empty,
    /// i.e. the caller must schedule the arrival of this packet at the far end.
    #[inline]
    pub fn transmit(&mut self, now: Ps, pkt: Packet) -> bool {
        debug_assert!(now >= self.busy_until);
        let done = now + self.tx_time(pkt.wire as u32);
        self.busy_until = done;
        let was_empty = self.wire.is_empty();
        self.wire.push_back((done + self.delay_ps, pkt));
        self.transmitted += 1;
        was_empty
    }

    /// Bytes waiting in queue `q`.
    pub fn queue_bytes(&self, q: usize) -> u64 {
        self.queues[q].bytes
    }

    /// Packets waiting in queue `q`.
    pub fn queue_len(&self, q: usize) -> usize {
        self.queues[q].pkts.len()
    }

    /// Counters of queue `q`.
    pub fn counters(&self, q: usize) -> &QueueCounters {
        &self.queues[q].counters
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hot_fields_fit_two_cache_lines() {
        let p = Port::new(0, 1, 10_000_000_000, 0, 8, 0, EcnMode::Off, 0);
        let base = &p as *const Port as usize;
        assert_eq!(base % 64, 0);
        assert!(&p.tx_event_pending as *const bool as usize - base < 128);
        assert!(&p.busy_until as *const Ps as usize - base < 64);
    }

    fn pkt(prio: u8, wire: u16, ect: bool) -> Packet {
        Packet {
            flow: 0,
            seq: 0,
            sack: 0,
            dst: 0,
            hash: 0,
            wire,
            prio,
            flags: if ect { flags::ECT } else { 0 },
            ts: 0,
        }
    }

    #[test]
    fn strict_priority_serves_lowest_index_first_fifo_within() {
        let mut p = Port::new(0, 1, 10_000_000_000, 0, 4, 0, EcnMode::Off, 0);
        for (i, prio) in [3u8, 1, 7, 1, 0].iter().enumerate() {
            let mut x = pkt(*prio, 100, false);
            x.seq = i as u32;
            assert!(matches!(p.admit(&mut x, None), Admission::Accepted { .. }));
            p.push(x);
        }
        let order: Vec<u32> = std::iter::from_fn(|| p.pop()).map(|x| x.seq).collect();
        // prio 0 (seq 4), prio 1 in FIFO order (seq 1, 3), prio 3 (seq 0), prio 7 -> queue 3 (seq 2, behind 0)
        assert_eq!(order, vec![4, 1, 3, 0, 2]);
        assert_eq!(p.bytes, 0);
    }

    #[test]
    fn many_queues() {
        let mut p = Port::new(0, 1, 10_000_000_000, 0, 20, 0, EcnMode::Off, 0);
        for (i, prio) in [19u8, 9, 30, 3, 8].iter().enumerate() {
            let mut x = pkt(*prio, 100 + i as u16, false);
            x.seq = i as u32;
            assert!(matches!(p.admit(&mut x, None), Admission::Accepted { .. }));
            p.push(x);
        }
        assert_eq!(p.num_queues(), 20);
        assert_eq!((p.queue_len(19), p.queue_bytes(19)), (2, 100 + 102));
        assert_eq!(p.counters(8).enqueued, 1);
        let order: Vec<u32> = std::iter::from_fn(|| p.pop()).map(|x| x.seq).collect();
        assert_eq!(order, vec![3, 4, 1, 0, 2]);
        assert_eq!(p.bytes, 0);
    }

    #[test]
    fn drop_tail_at_the_port_limit() {
        let mut p = Port::new(0, 1, 10_000_000_000, 0, 1, 3000, EcnMode::Off, 0);
        for _ in 0..2 {
            let mut x = pkt(0, 1500, false);
            assert!(matches!(p.admit(&mut x, None), Admission::Accepted { .. }));
            p.push(x);
        }
        let mut x = pkt(0, 1500, false);
        assert_eq!(p.admit(&mut x, None), Admission::Dropped);
        assert_eq!(p.counters(0).dropped, 1);
        let mut small = pkt(0, 40, false);
        assert_eq!(p.admit(&mut small, None), Admission::Dropped);
    }

    #[test]
    fn ecn_marks_above_threshold_only_ect_packets() {
        let mut p = Port::new(0, 1, 10_000_000_000, 0, 2, 0, EcnMode::Port, 3000);
        let mut marks = vec![];
        for i in 0..4 {
            let mut x = pkt((i % 2) as u8, 1500, true);
            let a = p.admit(&mut x, None);
            marks.push(matches!(a, Admission::Accepted { marked: true }));
            p.push(x);
        }
        // occupancy incl. arrival: 1500, 3000, 4500, 6000 -> marks on the 3rd and 4th
        assert_eq!(marks, vec![false, false, true, true]);
        let mut plain = pkt(0, 1500, false);
        assert_eq!(p.admit(&mut plain, None), Admission::Accepted { marked: false });
    }

    #[test]
    fn per_queue_ecn_looks_at_own_queue() {
        let mut p = Port::new(0, 1, 10_000_000_000, 0, 2, 0, EcnMode::Queue, 3000);
        for _ in 0..3 {
            let mut x = pkt(1, 1500, true);
            p.admit(&mut x, None);
            p.push(x);
        }
        let mut hi = pkt(0, 1500, true);
        assert_eq!(p.admit(&mut hi, None), Admission::Accepted { marked: false });
    }

    #[test]
    fn shared_pool_dynamic_threshold() {
        let mut p = Port::new(0, 1, 10_000_000_000, 0, 1, 0, EcnMode::Off, 0);
        let mut x = pkt(0, 1000, false);
        // free 4000, alpha 0.5 -> queue may hold up to 2000
        assert!(matches!(p.admit(&mut x, Some((4000, 0.5))), Admission::Accepted { .. }));
        p.push(x);
        let mut y = pkt(0, 1000, false);
        assert!(matches!(p.admit(&mut y, Some((3000, 0.5))), Admission::Accepted { .. }) == false);
    }

    #[test]
    fn transmit_reports_empty_wire_and_serializes() {
        let mut p = Port::new(0, 1, 10_000_000_000, 500, 1, 0, EcnMode::Off, 0);
        assert!(p.transmit(0, pkt(0, 1500, false)));
        assert_eq!(p.busy_until, 1_200_000);
        assert!(!p.transmit(1_200_000, pkt(0, 1500, false)));
        assert_eq!(p.wire.back().unwrap().0, 2_400_000 + 500);
    }
}
