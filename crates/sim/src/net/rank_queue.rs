//! pFabric's switch queue (Alizadeh et al., "pFabric: Minimal Near-Optimal Datacenter Transport", SIGCOMM 2013,
//! §4.1), also used for LAS: a small buffer where every packet carries a rank (lower is more urgent).
//!
//! - Dequeue: find the most urgent packet (lowest rank), then send the *earliest-arrived* packet of that
//!   packet's flow, so that a flow's packets leave in order and a flow whose rank improved while its older
//!   packets wait is not reordered (the pFabric paper's starvation-prevention rule).
//! - Enqueue when the buffer is full: drop the least urgent packet (highest rank; among equals the latest
//!   arrival), which may be the arriving packet itself.
//!
//! ACKs are the most urgent packets (rank 0), as in pFabric. The buffer is small (24 packets in the pFabric
//! paper, 140 in the PIAS comparison), so linear scans over arrival order are cheaper than any index.

use super::packet::Packet;

/// What happened to an arriving packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RankAdmission {
    /// Queued; nothing dropped.
    Queued,
    /// Queued, and this other (less urgent) packet was pushed out.
    Evicted(Packet),
    /// The arriving packet itself was the least urgent: dropped.
    Rejected,
}

#[derive(Debug, Clone, Default)]
pub struct RankQueue {
    /// Packets in arrival order.
    pkts: Vec<Packet>,
    bytes: u64,
}

impl RankQueue {
    pub fn new() -> Self {
        RankQueue { pkts: Vec::with_capacity(64), bytes: 0 }
    }

    pub fn len(&self) -> usize {
        self.pkts.len()
    }

    pub fn is_empty(&self) -> bool {
        self.pkts.is_empty()
    }

    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Add `pkt` to a buffer of `limit` bytes (0 = unbounded), evicting the least urgent packet if needed.
    pub fn push(&mut self, pkt: Packet, limit: u64) -> RankAdmission {
        let w = pkt.wire as u64;
        if limit == 0 || self.bytes + w <= limit {
            self.pkts.push(pkt);
            self.bytes += w;
            return RankAdmission::Queued;
        }
        // Full. Find the least urgent waiting packet (latest among equal ranks).
        let mut worst: Option<usize> = None;
        for (i, p) in self.pkts.iter().enumerate() {
            if worst.is_none_or(|j| p.rank() >= self.pkts[j].rank()) {
                worst = Some(i);
            }
        }
        match worst {
            Some(j) if self.pkts[j].rank() > pkt.rank() && self.bytes - self.pkts[j].wire as u64 + w <= limit => {
                let out = self.pkts.remove(j);
                self.bytes -= out.wire as u64;
                self.pkts.push(pkt);
                self.bytes += w;
                RankAdmission::Evicted(out)
            }
            _ => RankAdmission::Rejected,
        }
    }

    /// Take the next packet to send: the earliest packet of the flow that holds the most urgent packet.
    pub fn pop(&mut self) -> Option<Packet> {
        let mut best: Option<usize> = None;
        for (i, p) in self.pkts.iter().enumerate() {
            if best.is_none_or(|j| p.rank() < self.pkts[j].rank()) {
                best = Some(i);
            }
        }
        let b = best?;
        let target = &self.pkts[b];
        let (flow, is_ack) = (target.flow, target.is_ack());
        // earliest packet of the same flow and direction (arrival order is the vector order)
        let first = self.pkts.iter().position(|p| p.flow == flow && p.is_ack() == is_ack).unwrap_or(b);
        let out = self.pkts.remove(first);
        self.bytes -= out.wire as u64;
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::packet::{flags, NO_SACK};

    fn data(flow: u32, seq: u32, rank: u32) -> Packet {
        Packet { flow, seq, sack: rank, dst: 0, hash: 0, wire: 1500, prio: 0, flags: 0, ts: 0 }
    }

    #[test]
    fn serves_most_urgent_flow_earliest_packet_first() {
        let mut q = RankQueue::new();
        // flow 1's older packet has a worse rank than its newer one (its remaining size shrank)
        for p in [data(1, 0, 50), data(2, 0, 30), data(1, 1, 10), data(2, 1, 20)] {
            assert_eq!(q.push(p, 0), RankAdmission::Queued);
        }
        let order: Vec<(u32, u32)> = std::iter::from_fn(|| q.pop()).map(|p| (p.flow, p.seq)).collect();
        // rank 10 belongs to flow 1 -> its earliest packet (seq 0) goes first, then seq 1; then flow 2
        assert_eq!(order, vec![(1, 0), (1, 1), (2, 0), (2, 1)]);
        assert_eq!(q.bytes(), 0);
    }

    #[test]
    fn full_buffer_drops_the_least_urgent_packet() {
        let mut q = RankQueue::new();
        q.push(data(1, 0, 100), 3000);
        q.push(data(2, 0, 5), 3000);
        // more urgent arrival evicts rank 100
        match q.push(data(3, 0, 7), 3000) {
            RankAdmission::Evicted(p) => assert_eq!((p.flow, p.rank()), (1, 100)),
            other => panic!("{other:?}"),
        }
        // less urgent arrival is itself dropped
        assert_eq!(q.push(data(4, 0, 9), 3000), RankAdmission::Rejected);
        // equal rank: the arrival loses (the latest among equals is dropped)
        assert_eq!(q.push(data(5, 0, 7), 3000), RankAdmission::Rejected);
        assert_eq!(q.len(), 2);
    }

    #[test]
    fn acks_are_most_urgent() {
        let mut q = RankQueue::new();
        q.push(data(1, 0, 1), 0);
        let ack = Packet { flow: 9, seq: 0, sack: NO_SACK, dst: 0, hash: 0, wire: 40, prio: 0, flags: flags::ACK, ts: 0 };
        q.push(ack, 0);
        assert!(q.pop().unwrap().is_ack());
    }
}
