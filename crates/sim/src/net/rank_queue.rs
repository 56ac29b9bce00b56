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
    /// Packets in arrival order, with two parallel columns that the scans read (4 bytes a packet instead of
    /// 32: a full 140-packet queue scans in a few cache lines).
    pkts: Vec<Packet>,
    ranks: Vec<u32>,
    /// Flow id with the top bit set for ACKs (a flow's data and its ACKs are separate streams).
    keys: Vec<u32>,
    bytes: u64,
}

#[inline]
fn key_of(p: &Packet) -> u32 {
    p.flow | if p.is_ack() { 1 << 31 } else { 0 }
}

impl RankQueue {
    pub fn new() -> Self {
        RankQueue { pkts: Vec::with_capacity(64), ranks: Vec::with_capacity(64), keys: Vec::with_capacity(64), bytes: 0 }
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
            self.append(pkt);
            return RankAdmission::Queued;
        }
        // Full. Find the least urgent waiting packet (latest among equal ranks).
        let mut worst: Option<usize> = None;
        let mut worst_rank = 0u32;
        for (i, &r) in self.ranks.iter().enumerate() {
            if worst.is_none() || r >= worst_rank {
                worst = Some(i);
                worst_rank = r;
            }
        }
        match worst {
            Some(j) if worst_rank > pkt.rank() && self.bytes - self.pkts[j].wire as u64 + w <= limit => {
                let out = self.remove(j);
                self.append(pkt);
                RankAdmission::Evicted(out)
            }
            _ => RankAdmission::Rejected,
        }
    }

    #[inline]
    fn append(&mut self, pkt: Packet) {
        self.bytes += pkt.wire as u64;
        self.ranks.push(pkt.rank());
        self.keys.push(key_of(&pkt));
        self.pkts.push(pkt);
    }

    #[inline]
    fn remove(&mut self, i: usize) -> Packet {
        self.ranks.remove(i);
        self.keys.remove(i);
        let out = self.pkts.remove(i);
        self.bytes -= out.wire as u64;
        out
    }

    /// Take the next packet to send: the earliest packet of the flow that holds the most urgent packet.
    pub fn pop(&mut self) -> Option<Packet> {
        if self.ranks.is_empty() {
            return None;
        }
        // first index of the minimum rank (a branch-free scan over a small array)
        let mut b = 0;
        let mut best_rank = self.ranks[0];
        for (i, &r) in self.ranks.iter().enumerate().skip(1) {
            let better = r < best_rank;
            b = if better { i } else { b };
            best_rank = best_rank.min(r);
        }
        // earliest packet of the same flow and direction (arrival order is the vector order)
        let key = self.keys[b];
        let first = self.keys[..b].iter().position(|&k| k == key).unwrap_or(b);
        Some(self.remove(first))
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
