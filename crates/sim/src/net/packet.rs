//! The packet that moves through the fabric, by value (`Copy`, never allocated): common fields, plus a
//! header `H` that a transport family may add ([`Header`]; `()` for the TCP family, which keeps the packet at
//! 24 bytes, and the explicit-rate family's rate fields for RCP, D3 and PDQ).
//!
//! Size matters: every packet queued or in flight sits in a wire slot (the packet and its arrival time), and
//! at the reference load those slots are the engine's largest working set (about a megabyte at 20,000 flows,
//! more than a core's L2 cache). At 24 bytes a slot is 32 and two share a cache line; at 32 bytes a slot was
//! 40 and often straddled two. Two fields were cut for that, each a documented choice:
//! - the send-time stamp is in nanoseconds in 32 bits (see [`Packet::ts`]);
//! - the packet carries no 5-tuple hash: ECMP hashes the flow id and direction ([`crate::net::flow_hash`]).

/// Flag bits of [`Packet::flags`].
pub mod flags {
    /// An acknowledgement (otherwise a data segment).
    pub const ACK: u8 = 1 << 0;
    /// ECN-capable transport: a switch may mark it instead of only dropping.
    pub const ECT: u8 = 1 << 1;
    /// Congestion experienced: a switch marked it.
    pub const CE: u8 = 1 << 2;
    /// ECN echo (on an ACK): the data segment it acknowledges carried CE.
    pub const ECE: u8 = 1 << 3;
    /// Retransmitted data segment (on data), or echo of that (on the ACK it triggered): Karn's rule.
    pub const RETX: u8 = 1 << 4;
    /// A probe (probe mode), or the ACK answering one: no payload to deliver.
    pub const PROBE: u8 = 1 << 5;
    /// QCLIMB customized ACK: reordered data, update the scoreboard only.
    pub const QC_UPDATE: u8 = 1 << 6;
    /// QCLIMB customized ACK: the gap at the cumulative ACK is a loss, retransmit it.
    pub const QC_RETX: u8 = 1 << 7;
    /// QCLIMB customized ACK, both flags (`every_gap` repair): the gap just below the SACKed segment is a loss.
    pub const QC_GAP: u8 = QC_UPDATE | QC_RETX;
}

use crate::units::Ps;

/// No SACK information on this ACK.
pub const NO_SACK: u32 = u32::MAX;

/// What a transport family's packets carry beyond the common fields (see `engine::family`): switches of that
/// family read and rewrite it. `()` for the TCP family.
pub trait Header: Copy + Default + std::fmt::Debug + PartialEq + Send + Sync + 'static {}

impl Header for () {}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Packet<H: Header = ()> {
    /// Flow id (index into the run's flows).
    pub flow: u32,
    /// Data: the segment index. ACK: the cumulative acknowledgement (next segment expected).
    pub seq: u32,
    /// ACK: the segment whose arrival triggered it when that segment is above the cumulative ACK (a one-segment
    /// SACK block), else [`NO_SACK`]. Data: the packet's scheduling rank for rank-based switch queues (pFabric:
    /// remaining bytes; LAS: bytes sent before it), lower is more urgent; read it with [`Packet::rank`]. One
    /// field for both keeps the packet small.
    pub sack: u32,
    /// Destination host (routing key).
    pub dst: u32,
    /// Bytes on the wire (payload + headers).
    pub wire: u16,
    /// Priority, 0 is the highest. A switch maps it to queue min(prio, queues - 1).
    pub prio: u8,
    pub flags: u8,
    /// Data: the time the segment was sent, as a [`stamp`] (ns, wrapping at 2^32 ns = 4.29 s). ACK: that
    /// stamp, echoed; the sender's RTT sample is [`since`] it, to the nanosecond (ns-2's and htsim's clocks
    /// are finer, but RTT samples only feed the RTO estimate, and a nanosecond is far below any RTO the papers
    /// use: tens of microseconds and up). A sample is right as long as the RTT is under 4.29 s.
    pub ts: u32,
    /// The family's own header (nothing for the TCP family).
    pub hdr: H,
}

/// The send-time stamp of time `now` for [`Packet::ts`]: whole nanoseconds, modulo 2^32.
#[inline]
pub fn stamp(now: Ps) -> u32 {
    (now / 1000) as u32
}

/// The time from stamp `ts` to `now`, in picoseconds, to the nanosecond (right when it is under 2^32 ns).
#[inline]
pub fn since(now: Ps, ts: u32) -> Ps {
    stamp(now).wrapping_sub(ts) as Ps * 1000
}

impl<H: Header> Packet<H> {
    #[inline]
    pub fn is_ack(&self) -> bool {
        self.flags & flags::ACK != 0
    }

    /// Scheduling rank for rank-based queues: the data packet's own, 0 (most urgent) for ACKs.
    #[inline]
    pub fn rank(&self) -> u32 {
        if self.is_ack() {
            0
        } else {
            self.sack
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packet_is_small() {
        assert_eq!(std::mem::size_of::<Packet>(), 24);
        assert_eq!(std::mem::size_of::<Packet<()>>(), 24);
        // with its arrival time, a wire slot is half a cache line
        assert_eq!(std::mem::size_of::<(Ps, Packet)>(), 32);
    }

    #[test]
    fn stamps_measure_intervals_to_the_nanosecond_across_the_wrap() {
        assert_eq!(since(5_000_999, stamp(1_000_000)), 4_000_000);
        assert_eq!(since(1_000_000, stamp(1_000_000)), 0);
        // sent just before the stamp wraps (2^32 ns = 4.294967296 s), acknowledged just after
        let sent: Ps = 4_294_967_295_000 - 250_000;
        assert_eq!(stamp(sent), u32::MAX - 250);
        assert_eq!(since(sent + 90_000_000, stamp(sent)), 90_000_000);
        // and many wraps into a long run
        let sent: Ps = 7 * 4_294_967_296_000 + 123_456_789;
        assert_eq!(since(sent + 2_000_000_000, stamp(sent)), 2_000_000_000);
    }
}
