//! Host-side tagging: what each data packet carries for the switches to schedule by. A switch maps a packet's
//! priority to one of its strict-priority queues, or (pFabric, LAS) orders its rank queue by the packet's rank;
//! tagging and queueing are separate concerns.
//!
//! - Fixed: one priority per flow (from the trace's `priority` column, else `scheme.priority`).
//! - PIAS (Bai et al., HotNets 2014, section 2): a multi-level feedback queue over the switch's priority
//!   queues. A packet sent after its flow has already sent more than alpha_j bytes goes below queue j - 1, so a
//!   flow stays in queue i while the bytes it has sent are <= alpha_i (the demotion rule of the PIAS ns-2
//!   scripts as written in docs/reference-parameters.md). "Bytes sent" is the packet's byte offset in the
//!   flow, so a retransmission carries the priority of its original transmission.
//! - QCLIMB (Algorithm 1 of the QCLIMB paper, appendix C): with B the bytes the flow has sent before the packet,
//!   L and U its predicted lower and upper bounds, S the slack: while B < L the priority of the remaining
//!   L - B bytes (queue-climbing-up: the flow enters the queue its lower bound maps to and climbs as it nears
//!   L); while B < L + S the highest priority (delay demoting); while B < U the priority of B (demotion by bytes
//!   sent, like PIAS); after U the lowest. A size v maps to the queue whose range holds it: queue j for
//!   alpha_j < v <= alpha_{j+1} (the appendix's example: <= 2, [3, 5], >= 6). Variants: precise size (PS:
//!   climb by the true remaining size, L = U = size), point estimate (PP: climb by the estimate, then the lowest
//!   priority; FP: one priority from the estimate for the whole flow).
//! - Ranks (lower is more urgent): pFabric's remaining size, the same from an estimated size (floored at 0),
//!   and LAS's bytes sent. Measured at the packet's own offset by default (remaining = size - offset, bytes
//!   sent = offset: the ns-2 code), or at the sender's state (`scheme.rank_at = "ack"`: remaining = size -
//!   bytes acknowledged, bytes sent = the highest byte sent); the caller passes the two positions.
//! - Remaining time (pFabric by remaining time, the RAX paper's section II-B): the remaining size divided by the
//!   flow's generation rate (at most the line rate), in ns; the caller passes the flow's ns per byte.
//! - RAX (`rax`): one priority per flow that the transport recomputes from the flow's estimated remaining time
//!   before each data packet (see [`rax`]).

pub mod rax;

use crate::config::{Config, HostTagging, QclimbInfo, RankBy, RankQueue, SizeInfo};

/// How a flow's data packets are given their priority.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Tagging {
    /// One priority per flow.
    Fixed,
    /// Demote by bytes sent over these thresholds (bytes, strictly increasing).
    Pias { thresholds: Vec<u64> },
    /// QCLIMB's Algorithm 1 over these thresholds with slack `slack` bytes.
    Qclimb { thresholds: Vec<u64>, slack: u64 },
    /// One priority for the whole flow, from its point estimate (QCLIMB-FP).
    PointFixed { thresholds: Vec<u64> },
    /// RAX and RAX+: the flow's priority, which the transport keeps up to date from its remaining time.
    Rax,
}

/// The queue whose size range holds `v`: queue j for alpha_j < v <= alpha_{j+1} (alpha_0 = 0).
#[inline]
fn queue_for(thresholds: &[u64], v: u64) -> u8 {
    thresholds.iter().take_while(|&&a| v > a).count() as u8
}

/// What QCLIMB knows of a flow: lower and upper bounds (bytes). QCLIMB-PS passes (size, size); QCLIMB-PP
/// passes (estimate, estimate), which climbs by the estimate and then drops to the lowest priority.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bounds {
    pub lower: u64,
    pub upper: u64,
    pub estimate: u64,
    /// The flow is scheduled as PIAS (by bytes sent) although the scheme is QCLIMB: QCLIMB knows nothing of it.
    pub pias: bool,
}

/// What a data packet's rank (for rank-based switch queues) measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rank {
    /// No rank: the switches use strict priority.
    None,
    RemainingSize,
    RemainingEstimate,
    BytesSent,
    RemainingTime,
    /// The known remaining bytes by a bound or both (`scheme.size_info` = `"lower"`, `"upper"`, `"bounds"`:
    /// [`SizeInfo::remaining`] of the flow's bounds).
    Known(SizeInfo),
}

impl Tagging {
    /// The tagging the scheme's row names (`SchemeRow::tagging`), filled from the scheme's keys. Tagging by size
    /// is the family's choice of each flow's own priority, so it is `Fixed` here.
    pub fn from_config(cfg: &Config) -> Self {
        match cfg.scheme.name.row().tagging {
            HostTagging::Pias => Tagging::Pias { thresholds: cfg.scheme.thresholds_bytes.clone() },
            HostTagging::Qclimb => {
                let thresholds = cfg.scheme.thresholds_bytes.clone();
                match cfg.scheme.qclimb_variant() {
                    Some(QclimbInfo::PointFixed) => Tagging::PointFixed { thresholds },
                    // PP climbs by the estimate and then goes straight to the lowest queue: no slack
                    Some(QclimbInfo::PointClimb) => Tagging::Qclimb { thresholds, slack: 0 },
                    Some(QclimbInfo::Bounds | QclimbInfo::Precise) => {
                        Tagging::Qclimb { thresholds, slack: cfg.scheme.slack_bytes }
                    }
                    // `size_info = "none"`: every flow is PIAS's (the flows themselves are marked so)
                    None => Tagging::Pias { thresholds },
                }
            }
            HostTagging::Rax | HostTagging::RaxPlus => Tagging::Rax,
            HostTagging::Fixed | HostTagging::BySize => Tagging::Fixed,
        }
    }

    /// Priority of a data packet that starts at byte `offset` of a flow whose own priority is `flow_prio` and
    /// whose bounds are `b` (used by QCLIMB only).
    #[inline]
    pub fn priority(&self, flow_prio: u8, offset: u64, b: &Bounds) -> u8 {
        match self {
            Tagging::Fixed | Tagging::Rax => flow_prio,
            Tagging::Pias { thresholds } => queue_for(thresholds, offset),
            Tagging::Qclimb { thresholds, .. } | Tagging::PointFixed { thresholds } if b.pias => {
                queue_for(thresholds, offset)
            }
            Tagging::Qclimb { thresholds, slack } => {
                let lowest = thresholds.len() as u8;
                if offset < b.lower {
                    queue_for(thresholds, b.lower - offset)
                } else if offset < b.lower.saturating_add(*slack) {
                    0
                } else if offset < b.upper {
                    queue_for(thresholds, offset)
                } else {
                    lowest
                }
            }
            Tagging::PointFixed { thresholds } => queue_for(thresholds, b.estimate),
        }
    }
}

impl Rank {
    /// The rank the scheme's rank queue orders by (`SchemeRow::rank_queue`); `None` for strict-priority FIFOs,
    /// and for a queue ranked by the priority field (QJump's `"ranked"` queue reads the priority the packet
    /// carries anyway: `net::rank_queue`).
    pub fn from_config(cfg: &Config) -> Self {
        match cfg.scheme.switch_rank_queue() {
            RankQueue::Pfabric => match (cfg.scheme.size_info, cfg.scheme.rank) {
                (None | Some(SizeInfo::Exact), RankBy::RemainingSize) => Rank::RemainingSize,
                (None | Some(SizeInfo::Exact), RankBy::RemainingTime) => Rank::RemainingTime,
                (None, RankBy::Estimate) | (Some(SizeInfo::Estimate), _) => Rank::RemainingEstimate,
                // (an exact size_info with rank = "estimate" is refused by the range checks)
                (Some(SizeInfo::Exact), RankBy::Estimate) => Rank::RemainingSize,
                (Some(info @ (SizeInfo::Lower | SizeInfo::Upper | SizeInfo::Bounds)), _) => Rank::Known(info),
                // pFabric without sizes: its queue ranked by bytes sent, as LAS
                (Some(SizeInfo::None), _) => Rank::BytesSent,
            },
            RankQueue::Las => Rank::BytesSent,
            RankQueue::None | RankQueue::Priority => Rank::None,
        }
    }

    /// The rank of a data packet, from its flow's state when it is sent (saturating at u32::MAX); `ns_per_byte`
    /// is the flow's time per byte at the smaller of its generation rate and the line rate (remaining time only).
    #[inline]
    pub fn of(&self, size: u64, estimate: u64, b: &Bounds, bytes_acked: u64, bytes_sent: u64, ns_per_byte: f64) -> u32 {
        let r = match self {
            Rank::None => 0,
            Rank::RemainingSize => size.saturating_sub(bytes_acked),
            Rank::RemainingEstimate => estimate.saturating_sub(bytes_acked),
            Rank::Known(info) => info.remaining(size, estimate, b.lower, b.upper, bytes_acked),
            Rank::BytesSent => bytes_sent,
            // (the cast saturates)
            Rank::RemainingTime => (size.saturating_sub(bytes_acked) as f64 * ns_per_byte) as u64,
        };
        r.min(u32::MAX as u64 - 1) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NO_BOUNDS: Bounds = Bounds { lower: 0, upper: 0, estimate: 0, pias: false };

    #[test]
    fn pias_demotes_exactly_past_each_threshold() {
        let t = Tagging::Pias { thresholds: vec![14_600, 29_200, 100_000] };
        let p = |off| t.priority(5, off, &NO_BOUNDS);
        assert_eq!(p(0), 0);
        assert_eq!(p(14_600), 0, "bytes sent == alpha_1: still in queue 0");
        assert_eq!(p(14_601), 1);
        assert_eq!(p(29_200), 1);
        assert_eq!(p(29_201), 2);
        assert_eq!(p(100_001), 3);
        assert_eq!(p(u64::MAX), 3);
        assert_eq!(Tagging::Fixed.priority(5, 1 << 40, &NO_BOUNDS), 5);
    }

    #[test]
    fn qclimb_follows_algorithm_1() {
        // the appendix's queues: <= 2, [3, 5], >= 6 (units), slack 1
        let t = Tagging::Qclimb { thresholds: vec![2, 5], slack: 1 };
        let b = Bounds { lower: 6, upper: 9, estimate: 7, pias: false };
        let tags: Vec<u8> = (0..11).map(|off| t.priority(9, off, &b)).collect();
        // climb: L-B = 6,5,4,3,2,1 -> Q3,Q2,Q2,Q2,Q1,Q1; slack: B=6 -> Q1; demote by B: 7,8 -> Q3; B >= U -> lowest
        assert_eq!(tags, vec![2, 1, 1, 1, 0, 0, 0, 2, 2, 2, 2]);
        // the two-flow example: f1 (L = 6) enters Q3, f2 (L = 3) enters Q2 and climbs to Q1 after one unit
        let s0 = Tagging::Qclimb { thresholds: vec![2, 5], slack: 0 };
        let f1 = Bounds { lower: 6, upper: 100, estimate: 2, pias: false };
        let f2 = Bounds { lower: 3, upper: 100, estimate: 4, pias: false };
        assert_eq!(s0.priority(0, 0, &f1), 2);
        assert_eq!(s0.priority(0, 0, &f2), 1);
        assert_eq!(s0.priority(0, 1, &f2), 0);
        assert_eq!(s0.priority(0, 3, &f2), 1, "back to the queue it entered once its lower bound is sent");
        // FP: one priority from the estimate
        let fp = Tagging::PointFixed { thresholds: vec![2, 5] };
        assert_eq!((0..6).map(|o| fp.priority(0, o, &f2)).collect::<Vec<_>>(), vec![1; 6]);
        // a flow handed to PIAS ignores its bounds and is demoted by bytes sent, in either variant
        let pias = Bounds { pias: true, ..b };
        let want: Vec<u8> = vec![0, 0, 0, 1, 1, 1, 2, 2, 2, 2, 2];
        assert_eq!((0..11).map(|off| t.priority(9, off, &pias)).collect::<Vec<_>>(), want);
        assert_eq!((0..11).map(|off| fp.priority(9, off, &pias)).collect::<Vec<_>>(), want);
    }

    /// The row decides which schemes tag and rank, and how: PIAS and QCLIMB by thresholds, RAX and RAX+ by
    /// remaining time, pFabric by `scheme.rank`, LAS by bytes sent; every other scheme neither.
    #[test]
    fn tagging_and_rank_follow_the_scheme_row() {
        use crate::config::{SchemeName, SCHEMES};
        for row in &SCHEMES {
            let mut cfg = Config::default();
            cfg.scheme.name = row.scheme;
            cfg.scheme.thresholds_bytes = vec![10, 20];
            cfg.scheme.qclimb_info = QclimbInfo::Bounds;
            cfg.scheme.rank = RankBy::Estimate;
            let tagging = match row.scheme {
                SchemeName::Pias => Tagging::Pias { thresholds: vec![10, 20] },
                SchemeName::Qclimb => Tagging::Qclimb { thresholds: vec![10, 20], slack: cfg.scheme.slack_bytes },
                SchemeName::Rax | SchemeName::RaxPlus => Tagging::Rax,
                _ => Tagging::Fixed,
            };
            assert_eq!(Tagging::from_config(&cfg), tagging, "{}", row.name);
            let rank = match row.scheme {
                SchemeName::Pfabric => Rank::RemainingEstimate,
                SchemeName::Las => Rank::BytesSent,
                _ => Rank::None,
            };
            assert_eq!(Rank::from_config(&cfg), rank, "{}", row.name);
        }
    }

    #[test]
    fn ranks() {
        assert_eq!(Rank::RemainingSize.of(10_000, 0, &NO_BOUNDS, 4_000, 6_000, 0.0), 6_000);
        assert_eq!(Rank::RemainingEstimate.of(10_000, 3_000, &NO_BOUNDS, 4_000, 6_000, 0.0), 0);
        assert_eq!(Rank::BytesSent.of(10_000, 0, &NO_BOUNDS, 4_000, 6_000, 0.0), 6_000);
        assert_eq!(Rank::RemainingSize.of(u64::MAX, 0, &NO_BOUNDS, 0, 0, 0.0), u32::MAX - 1);
        // 6,000 bytes left at 5 Gbit/s (1.6 ns per byte): 9.6 us
        assert_eq!(Rank::RemainingTime.of(10_000, 0, &NO_BOUNDS, 4_000, 6_000, 1.6), 9_600);
        // bounds [5,000, 40,000]: the lower bound's remainder until it is acknowledged, then the upper bound's
        let b = Bounds { lower: 5_000, upper: 40_000, estimate: 0, pias: false };
        assert_eq!(Rank::Known(SizeInfo::Bounds).of(10_000, 0, &b, 4_000, 6_000, 0.0), 1_000);
        assert_eq!(Rank::Known(SizeInfo::Bounds).of(10_000, 0, &b, 5_000, 6_000, 0.0), 35_000);
        assert_eq!(Rank::Known(SizeInfo::Lower).of(10_000, 0, &b, 6_000, 6_000, 0.0), 0);
        assert_eq!(Rank::Known(SizeInfo::Upper).of(10_000, 0, &b, 6_000, 6_000, 0.0), 34_000);
    }
}
