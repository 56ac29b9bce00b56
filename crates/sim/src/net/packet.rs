//! The one packet type that moves through the fabric, by value (32 bytes, `Copy`, never allocated).

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

/// No SACK information on this ACK.
pub const NO_SACK: u32 = u32::MAX;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Packet {
    /// Flow id (index into the run's flows).
    pub flow: u32,
    /// Data: the segment index. ACK: the cumulative acknowledgement (next segment expected).
    pub seq: u32,
    /// ACK: the segment whose arrival triggered it when that segment is above the cumulative ACK (a one-segment
    /// SACK block), else [`NO_SACK`]. Data: the packet's scheduling rank for rank-based switch queues (pFabric:
    /// remaining bytes; LAS: bytes sent before it), lower is more urgent; read it with [`Packet::rank`]. One
    /// field for both keeps the packet at 32 bytes.
    pub sack: u32,
    /// Destination host (routing key).
    pub dst: u32,
    /// Hash of the 5-tuple for ECMP (per direction).
    pub hash: u32,
    /// Bytes on the wire (payload + headers).
    pub wire: u16,
    /// Priority, 0 is the highest. A switch maps it to queue min(prio, queues - 1).
    pub prio: u8,
    pub flags: u8,
    /// Data: time the segment was sent. ACK: that time, echoed (RTT samples).
    pub ts: u64,
}

impl Packet {
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
    #[test]
    fn packet_is_small() {
        assert_eq!(std::mem::size_of::<super::Packet>(), 32);
    }
}
