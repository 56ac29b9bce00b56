//! Host-side tagging: what each data packet carries for the switches to schedule by. A switch maps a packet's
//! priority to one of its strict-priority queues, or (pFabric, LAS) orders its rank queue by the packet's rank;
//! tagging and queueing are separate concerns.
//!
//! - Fixed: one priority per flow (from the trace's `priority` column, else `scheme.priority`).
//! - PIAS (Bai et al., HotNets 2014, section 2): a multi-level feedback queue over the switch's priority
//!   queues. A packet sent after its flow has already sent more than alpha_j bytes goes below queue j - 1, so a
//!   flow stays in queue i while the bytes it has sent are <= alpha_i (the demotion rule of the PIAS ns-2
//!   scripts as written in shared/REFERENCE-PARAMETERS.md). "Bytes sent" is the packet's byte offset in the
//!   flow, so a retransmission carries the priority of its original transmission.
//! - Ranks (lower is more urgent): pFabric's remaining size (bytes not yet acknowledged when the packet is
//!   sent), the same from an estimated size (estimate minus bytes acknowledged, floored at 0), and LAS's bytes
//!   sent (the flow's bytes sent before this packet).

use crate::config::{Config, RankBy, SchemeName};

/// How a flow's data packets are given their priority.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Tagging {
    /// One priority per flow.
    Fixed,
    /// Demote by bytes sent over these thresholds (bytes, strictly increasing).
    Pias { thresholds: Vec<u64> },
}

/// What a data packet's rank (for rank-based switch queues) measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rank {
    /// No rank: the switches use strict priority.
    None,
    RemainingSize,
    RemainingEstimate,
    BytesSent,
}

impl Tagging {
    pub fn from_config(cfg: &Config) -> Self {
        match cfg.scheme.name {
            SchemeName::Pias => Tagging::Pias { thresholds: cfg.scheme.thresholds_bytes.clone() },
            _ => Tagging::Fixed,
        }
    }

    /// Priority of a data packet that starts at byte `offset` of a flow whose own priority is `flow_prio`.
    #[inline]
    pub fn priority(&self, flow_prio: u8, offset: u64) -> u8 {
        match self {
            Tagging::Fixed => flow_prio,
            Tagging::Pias { thresholds } => thresholds.iter().take_while(|&&a| offset > a).count() as u8,
        }
    }
}

impl Rank {
    pub fn from_config(cfg: &Config) -> Self {
        match cfg.scheme.name {
            SchemeName::Pfabric => match cfg.scheme.rank {
                RankBy::RemainingSize => Rank::RemainingSize,
                RankBy::Estimate => Rank::RemainingEstimate,
            },
            SchemeName::Las => Rank::BytesSent,
            _ => Rank::None,
        }
    }

    /// The rank of a data packet, from its flow's state when it is sent (saturating at u32::MAX).
    #[inline]
    pub fn of(&self, size: u64, estimate: u64, bytes_acked: u64, bytes_sent: u64) -> u32 {
        let r = match self {
            Rank::None => 0,
            Rank::RemainingSize => size.saturating_sub(bytes_acked),
            Rank::RemainingEstimate => estimate.saturating_sub(bytes_acked),
            Rank::BytesSent => bytes_sent,
        };
        r.min(u32::MAX as u64 - 1) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pias_demotes_exactly_past_each_threshold() {
        let t = Tagging::Pias { thresholds: vec![14_600, 29_200, 100_000] };
        assert_eq!(t.priority(5, 0), 0);
        assert_eq!(t.priority(5, 14_600), 0, "bytes sent == alpha_1: still in queue 0");
        assert_eq!(t.priority(5, 14_601), 1);
        assert_eq!(t.priority(5, 29_200), 1);
        assert_eq!(t.priority(5, 29_201), 2);
        assert_eq!(t.priority(5, 100_001), 3);
        assert_eq!(t.priority(5, u64::MAX), 3);
        assert_eq!(Tagging::Fixed.priority(5, 1 << 40), 5);
    }

    #[test]
    fn ranks() {
        assert_eq!(Rank::RemainingSize.of(10_000, 0, 4_000, 6_000), 6_000);
        assert_eq!(Rank::RemainingEstimate.of(10_000, 3_000, 4_000, 6_000), 0);
        assert_eq!(Rank::BytesSent.of(10_000, 0, 4_000, 6_000), 6_000);
        assert_eq!(Rank::RemainingSize.of(u64::MAX, 0, 0, 0), u32::MAX - 1);
    }
}
