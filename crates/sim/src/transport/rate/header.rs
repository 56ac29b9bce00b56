//! What the family's packets carry beyond the common fields: 28 bytes.
//!
//! PDQ's header (Hong et al.) is the rate R_H, the pausing switch P_H, the deadline D_H, the
//! expected transmission time T_H, the sender's RTT_H and the inter-probing time I_H; RCP's (Dukkipati 2007)
//! the rate and the RTT; D3's (Wilson et al.) the desired rate, the previous desired rate and the
//! previous allocation, with the allocation coming back in the rate field. To keep the packet small, fields
//! a scheme does not use carry another scheme's value: D3 sends its desired rate in `crit` and its previous
//! desired rate in `pauseby` (use the `d3_*` accessors). D3's allocation vector (one previous allocation per
//! router) is not carried whole: the packet carries its index, `hop`, and the engine keeps the vector per flow
//! (`engine::family::rate`), handing each port its own entry in `prev`.

use crate::net::packet::{Header, Packet};

/// `RateHdr::deadline_us` of a flow without a deadline (it sorts after every deadline).
pub const NO_DEADLINE_US: u32 = u32::MAX;

/// `RateHdr::bits`: `crit` is the expected transmission time in ns (PDQ with criticality from the size), which
/// Early Start may use; otherwise it is only a rank.
pub const BIT_T_KNOWN: u8 = 1 << 0;
/// `RateHdr::bits`: this packet is a D3 rate request (switches allocate; the allocation returns in its ACK).
pub const BIT_REQ: u8 = 1 << 1;
/// `RateHdr::bits`, on an ACK: the receiver holds every byte of the flow (PDQ switches drop the flow's entry).
pub const BIT_DONE: u8 = 1 << 2;

/// `RateHdr::kind`: what a packet is (an ACK echoes the kind of the packet it acknowledges).
pub mod kind {
    /// The flow's opening request (no payload).
    pub const SYN: u8 = 1;
    pub const DATA: u8 = 2;
    /// A header-only probe of a paused flow (PDQ), or a header-only rate request (D3 at rate 0).
    pub const PROBE: u8 = 3;
    /// The sender holds every acknowledgement: switches release the flow's state (not acknowledged).
    pub const FIN: u8 = 4;
    /// The sender gave up (Early Termination, quenching): switches release the flow's state (not acknowledged).
    pub const TERM: u8 = 5;
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RateHdr {
    /// kbit/s. Forward: the sender's request (its line rate), lowered by each switch to what it grants
    /// (R_H). On an ACK: the echo, i.e. the path's decision.
    pub rate: u32,
    /// PDQ's D_H in whole microseconds of absolute time ([`NO_DEADLINE_US`]: none). Switches only compare
    /// it, so microseconds (4,295 s of simulated time) are enough.
    pub deadline_us: u32,
    /// PDQ: the criticality within equal deadlines, lower is more critical: T_H in ns when `BIT_T_KNOWN`,
    /// else the sender's rank (random draw, or bytes-sent estimate). D3: the desired rate in kbit/s.
    pub crit: u32,
    /// The sender's smoothed RTT in ns (0: no sample yet).
    pub rtt_ns: u32,
    /// PDQ's P_H: id of the agent that paused the flow (0: none). D3: the previous desired rate in kbit/s.
    pub pauseby: u32,
    /// D3: the allocation the sender holds (kbit/s), returned by a request or a FIN / termination. PDQ: the rate
    /// the sender paces at when it sends the packet (kbit/s; 0 while paused), which Early Start uses.
    pub prev: u32,
    /// PDQ's I_H: probe every this many RTTs while paused (0 or 1: every RTT).
    pub probe_rtts: u8,
    /// One of [`kind`].
    pub kind: u8,
    /// `BIT_*` flags.
    pub bits: u8,
    /// D3: the ports this packet has crossed towards the receiver, i.e. the index of the next port's entry in
    /// the flow's allocation vector (the sender sends 0).
    pub hop: u8,
}

impl Header for RateHdr {}

pub type RPacket = Packet<RateHdr>;

impl RateHdr {
    #[inline]
    pub fn d3_desired(&self) -> u32 {
        self.crit
    }
    #[inline]
    pub fn d3_prev_desired(&self) -> u32 {
        self.pauseby
    }
    #[inline]
    pub fn is_req(&self) -> bool {
        self.bits & BIT_REQ != 0
    }
    #[inline]
    pub fn t_known(&self) -> bool {
        self.bits & BIT_T_KNOWN != 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_is_small() {
        assert!(std::mem::size_of::<RateHdr>() <= 32);
        assert_eq!(std::mem::size_of::<RateHdr>(), 28);
    }
}
