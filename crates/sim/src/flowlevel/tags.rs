//! QCLIMB's and RAX's tags replayed at the flow level (qclimb, rax, rax-plus): a flow's queue as a step
//! function of its bytes sent, by the packet level's rules (`policy`: QCLIMB's Algorithm 1, RAX's queue of its
//! remaining time), and the byte count at which it may change next. Also the classes of the schemes whose
//! class is fixed by the flow's size (QJump's level, HyLine's first or second class) and Homa's two phases
//! (unscheduled, then scheduled).

use crate::config::{Config, QclimbInfo, SchemeName, SizeInfo};
use crate::flows::{FlowError, FlowSet};
use crate::net::Network;
use crate::transport::homa::{fabric_rtt_bytes, HomaParams};
use crate::policy::rax::RaxParams;
use crate::policy::{Bounds, Tagging};

/// QCLIMB's and RAX's tags, functions of a flow's bytes sent (the packet level's rules, `policy`): the tag of
/// the bytes sent so far and the next byte count at which it may change. RAX's remaining time is exact at the
/// flow level when the flow's bytes are all written at its start (no generation rate, which the flow level
/// refuses, and an unbounded send buffer): RAX+'s is its unsent bytes at line rate, RAX's estimate
/// (the copy rate stays at the line rate it starts from: no write is ever sampled) its size plus its unsent
/// bytes at line rate.
pub(super) enum Tags {
    None,
    /// (`per_byte`: wire bits per payload byte: a segment's headers ride with its payload)
    Qclimb {
        tagging: Tagging,
        thresholds: Vec<u64>,
        slack: u64,
        bounds: Vec<Bounds>,
        per_byte: f64,
    },
    Rax {
        rax: RaxParams,
        size: Vec<u64>,
        per_byte: f64,
    },
    /// A class per flow, fixed at its start (QJump's level by the size it knows, `queues` past the first;
    /// HyLine's class: 0 up to `hyline_threshold_bytes`, 1 above).
    Fixed { class: Vec<u8>, queues: usize },
    /// Homa: a message's first RTTbytes (`unsched`: their wire bits, per flow) are class 0, blind; a message
    /// larger than RTTbytes is class 1 (sent only against grants) from there.
    Homa { unsched: Vec<f64> },
}

impl Tags {
    pub(super) fn new(cfg: &Config, flows: &FlowSet, net: &Network) -> Result<Self, FlowError> {
        let sc = &cfg.scheme;
        let (mss, header) = (cfg.transport.mss_bytes as f64, cfg.transport.header_bytes as f64);
        let per_byte = 8.0 * (mss + header) / mss;
        Ok(match sc.name {
            SchemeName::Qjump => {
                // the packet level's level (`engine::family::qjump`): by the size the host knows at the flow's
                // start; knowing none, the last level
                let th = &sc.qjump_size_thresholds_bytes;
                let info = sc.size_view();
                let class = (0..flows.len())
                    .map(|i| match info {
                        SizeInfo::None => th.len() as u8,
                        _ => {
                            let size = flows.known_at_start(i, info);
                            th.iter().take_while(|&&t| size > t).count() as u8
                        }
                    })
                    .collect();
                Tags::Fixed { class, queues: th.len() }
            }
            SchemeName::Hyline => {
                let class =
                    flows.size_bytes.iter().map(|&s| u8::from(s > sc.hyline_threshold_bytes)).collect();
                Tags::Fixed { class, queues: 1 }
            }
            SchemeName::Homa => {
                // RTTbytes as the packet level takes it (whole segments), and each message's unscheduled part:
                // min(size, RTTbytes) with its segments' headers
                let p = HomaParams::from_config(cfg, &flows.size_bytes, fabric_rtt_bytes(net, cfg));
                let (rtt, m) = (p.rtt_bytes(), cfg.transport.mss_bytes as u64);
                let unsched = flows
                    .size_bytes
                    .iter()
                    .map(|&size| {
                        if size <= rtt {
                            f64::INFINITY
                        } else {
                            (rtt + rtt.div_ceil(m) * cfg.transport.header_bytes as u64) as f64 * 8.0
                        }
                    })
                    .collect();
                Tags::Homa { unsched }
            }
            SchemeName::Qclimb => {
                let n = flows.len();
                let bounds = (0..n)
                    .map(|i| {
                        let size = flows.size_bytes[i];
                        let estimate = flows.estimate_bytes.get(i).copied().unwrap_or(size);
                        let (lower, upper) = match sc.qclimb_variant() {
                            Some(QclimbInfo::Bounds) => (flows.lower_bytes[i], flows.upper_bytes[i]),
                            Some(QclimbInfo::Precise) => (size, size),
                            _ => (estimate, estimate),
                        };
                        Bounds { lower, upper, estimate, pias: flows.qclimb.get(i) == Some(&false) }
                    })
                    .collect();
                let tagging = Tagging::from_config(cfg);
                let slack = match tagging {
                    Tagging::Qclimb { slack, .. } => slack,
                    _ => 0,
                };
                Tags::Qclimb { tagging, thresholds: sc.thresholds_bytes.clone(), slack, bounds, per_byte }
            }
            SchemeName::Rax | SchemeName::RaxPlus => {
                // (a bounded send buffer is refused with the config: validate's flow-level checks)
                let rax = RaxParams::from_config(cfg, sc.name == SchemeName::RaxPlus);
                Tags::Rax { rax, size: flows.size_bytes.clone(), per_byte }
            }
            _ => Tags::None,
        })
    }

    /// The number of queues past the first that a tag may name.
    pub(super) fn queues(&self) -> usize {
        match self {
            Tags::None | Tags::Homa { .. } => 0,
            Tags::Fixed { queues, .. } => *queues,
            Tags::Qclimb { thresholds, .. } => thresholds.len(),
            Tags::Rax { rax, .. } => rax.thresholds_ps.len(),
        }
    }

    /// The tag of flow `id` after `sent_wire` bits sent, and the wire bits at which it is due again.
    pub(super) fn at(&self, id: u32, sent_wire: f64) -> (u8, f64) {
        let i = id as usize;
        match self {
            Tags::None => (0, f64::INFINITY),
            Tags::Fixed { class, .. } => (class[i], f64::INFINITY),
            // (a message within RTTbytes is never granted: class 0 to its end)
            Tags::Homa { unsched } => {
                if sent_wire < unsched[i] {
                    (0, unsched[i])
                } else {
                    (1, f64::INFINITY)
                }
            }
            Tags::Qclimb { tagging, thresholds, slack, bounds, per_byte } => {
                let b = (sent_wire / per_byte) as u64;
                let bd = &bounds[i];
                let tag = tagging.priority(0, b, bd);
                // the byte counts where Algorithm 1's tag can change: each threshold passed (alpha + 1), the
                // remaining L - B falling to a threshold, L, L + S, U
                let mut next = u64::MAX;
                let mut see = |c: u64| {
                    if c > b && c < next {
                        next = c;
                    }
                };
                for &a in thresholds {
                    see(a.saturating_add(1));
                    see(bd.lower.saturating_sub(a));
                }
                see(bd.lower);
                see(bd.lower.saturating_add(*slack));
                see(bd.upper);
                let at = if next == u64::MAX { f64::INFINITY } else { next as f64 * per_byte };
                (tag, at)
            }
            Tags::Rax { rax, size, per_byte } => {
                let b = ((sent_wire / per_byte) as u64).min(size[i]);
                let t = |b: u64| {
                    if rax.plus {
                        rax.true_remaining_ps(size[i], size[i], b, 0)
                    } else {
                        rax.estimate_ps(size[i], b, rax.line_rate_bps)
                    }
                };
                let tag = rax.priority(t(b));
                // the remaining time falls at line rate as bytes are sent: the next threshold below it is
                // crossed once T(b) < Q, at b > (T(0) - Q) C / 8e12
                let now_t = t(b);
                let mut next = f64::INFINITY;
                for &q in &rax.thresholds_ps {
                    if q <= now_t {
                        let c = ((t(0) - q) * rax.line_rate_bps / 8e12).floor() + 1.0;
                        if c > b as f64 && c <= size[i] as f64 {
                            next = next.min(c);
                        }
                    }
                }
                (tag, next * per_byte)
            }
        }
    }
}
