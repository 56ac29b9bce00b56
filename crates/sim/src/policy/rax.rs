//! RAX's tagging (Wang et al., "RAX: Rate-Aware Flow Scheduling", section III): a flow's priority comes from its
//! estimated remaining time, not its remaining size.
//!
//! - Remaining time (Eq. 2): T_est = (b_s + b_b) / min(r_c, C) + b_b / C, with b_s the bytes sent into the
//!   network, b_b the bytes written into the send buffer and not yet sent, r_c the copy rate into the send
//!   buffer (the estimate of the generation rate r_g) and C the line rate. b_s + b_b, the bytes the application
//!   has written, stands for the remaining bytes (the heavy-tailed size distributions make bytes sent a
//!   predictor of bytes to come).
//! - RAX+ (the paper's information-aware variant, section V-B): the true remaining time of Eq. 1,
//!   T_r = b_r / min(r_g, C) + b_b / C, with b_r the bytes the application has still to write.
//! - Copy rate: a sample tau = bytes copied / elapsed time; r_c <- alpha tau + (1 - alpha) r_c (alpha = 0.25),
//!   starting from the line rate.
//! - Priorities (Eq. 3): priority i (0-based here: the number of thresholds at or below T) when
//!   Q_{i-1} <= T < Q_i, Q_i = Q_1 E^(i-1), one threshold fewer than the switch has queues
//!   (`scheme.rax_thresholds = "literal"`), or the same series started one step later, Q_1 E .. Q_1 E^(K-1)
//!   (`"span"`: the reading under which E = 2 spans the paper's 154x; see [`RaxThresholds`]).

use crate::config::{Config, RaxState, RaxThresholds, SizeInfo};
use crate::units::{Ps, PS_PER_US};

/// RAX's parameters, shared by every flow of a run.
#[derive(Debug, Clone, PartialEq)]
pub struct RaxParams {
    /// RAX+: the true remaining time instead of the estimate (false for RAX+ with `scheme.size_info = "none"`:
    /// RAX's own estimate).
    pub plus: bool,
    /// RAX+: what it knows of the flow's size (`scheme.size_info`; [`RaxParams::known_total`]).
    pub info: SizeInfo,
    /// The state runs on over a reused connection's flows (`scheme.rax_state = "per_connection"`).
    pub per_connection: bool,
    /// Thresholds Q_1 < Q_2 < ... in picoseconds (`switch.queues - 1` of them).
    pub thresholds_ps: Vec<f64>,
    pub alpha: f64,
    pub interval_ps: Ps,
    /// The line rate C (the host link's), bit/s.
    pub line_rate_bps: f64,
}

impl RaxParams {
    pub fn from_config(cfg: &Config, plus: bool) -> Self {
        let sc = &cfg.scheme;
        let gbps = cfg.topology.host_link_gbps();
        let q1_us = if sc.rax_q1_us > 0.0 {
            sc.rax_q1_us
        } else if gbps <= 1.0 {
            1_280.0
        } else {
            160.0
        };
        let k = cfg.switch.queues.saturating_sub(1) as i32;
        // the exponent of the first threshold: Q_1 itself (Eq. 3 as printed) or Q_1 E (see `RaxThresholds`)
        let first = match sc.rax_thresholds {
            RaxThresholds::Literal => 0,
            RaxThresholds::Span => 1,
        };
        let info = sc.size_view();
        RaxParams {
            plus: plus && info != SizeInfo::None,
            info,
            per_connection: sc.rax_state == RaxState::PerConnection,
            thresholds_ps: (first..first + k).map(|i| q1_us * PS_PER_US as f64 * sc.rax_base.powi(i)).collect(),
            alpha: sc.rax_alpha,
            interval_ps: ((sc.rax_rate_interval_us * PS_PER_US as f64).round() as Ps).max(1),
            line_rate_bps: gbps * 1e9,
        }
    }

    /// The priority (0 is the highest) of a flow whose remaining time is `t_ps`.
    #[inline]
    pub fn priority(&self, t_ps: f64) -> u8 {
        self.thresholds_ps.iter().take_while(|&&q| t_ps >= q).count() as u8
    }

    /// Eq. 2: the estimated remaining time in ps of a flow that has written `written` bytes and sent `sent` of
    /// them, copying at `copy_rate_bps`.
    #[inline]
    pub fn estimate_ps(&self, written: u64, sent: u64, copy_rate_bps: f64) -> f64 {
        let backlog = written.saturating_sub(sent) as f64;
        let r = copy_rate_bps.min(self.line_rate_bps).max(1.0);
        (written as f64 * 8e12 / r) + backlog * 8e12 / self.line_rate_bps
    }

    /// Eq. 1: the true remaining time in ps of a flow of `size` bytes generated at `gen_rate_bps` (0: at once)
    /// that has written `written` bytes and sent `sent` of them.
    #[inline]
    pub fn true_remaining_ps(&self, size: u64, written: u64, sent: u64, gen_rate_bps: u64) -> f64 {
        let to_write = size.saturating_sub(written) as f64;
        let backlog = written.saturating_sub(sent) as f64;
        let r = if gen_rate_bps == 0 {
            self.line_rate_bps
        } else {
            (gen_rate_bps as f64).min(self.line_rate_bps)
        };
        to_write * 8e12 / r + backlog * 8e12 / self.line_rate_bps
    }

    /// RAX+: the flow's size as it believes it once `sent` bytes are sent: the bytes sent plus the known
    /// remaining bytes (`SizeInfo::remaining`). With exact sizes, the size.
    #[inline]
    pub fn known_total(&self, size: u64, estimate: u64, lower: u64, upper: u64, sent: u64) -> u64 {
        sent + self.info.remaining(size, estimate, lower, upper, sent)
    }

    /// One EWMA step of the copy rate with a sample of `bytes` copied over `dt_ps`.
    #[inline]
    pub fn smooth(&self, rate_bps: f64, bytes: u64, dt_ps: Ps) -> f64 {
        let sample = bytes as f64 * 8e12 / dt_ps as f64;
        self.alpha * sample + (1.0 - self.alpha) * rate_bps
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Config, SingleSwitch, TopologyConfig};

    fn params(gbps: f64) -> RaxParams {
        let topology = TopologyConfig::SingleSwitch(SingleSwitch { hosts: 2, host_link_gbps: gbps, host_link_delay_ns: 0.0 });
        RaxParams::from_config(&Config { topology, ..Config::default() }, false)
    }

    #[test]
    fn thresholds_are_exponential_from_the_papers_q1() {
        let p = params(1.0);
        let us = |x: f64| x * PS_PER_US as f64;
        assert_eq!(p.thresholds_ps.len(), 7, "8 queues: 7 thresholds");
        assert_eq!(p.thresholds_ps[0], us(1_280.0));
        assert_eq!(p.thresholds_ps[6], us(1_280.0 * 64.0));
        assert_eq!(params(10.0).thresholds_ps[0], us(160.0));
        assert_eq!(p.priority(0.0), 0);
        assert_eq!(p.priority(us(1_279.0)), 0);
        assert_eq!(p.priority(us(1_280.0)), 1, "Q_1 <= T < Q_2: the second queue");
        assert_eq!(p.priority(us(2_560.0)), 2);
        assert_eq!(p.priority(1e30), 7);
    }

    #[test]
    fn the_span_reading_reaches_the_papers_200_ms_with_e_2() {
        let topology = TopologyConfig::SingleSwitch(SingleSwitch { hosts: 2, host_link_gbps: 1.0, host_link_delay_ns: 0.0 });
        let mut cfg = Config { topology, ..Config::default() };
        cfg.scheme.rax_thresholds = RaxThresholds::Span;
        let p = RaxParams::from_config(&cfg, false);
        let ms: Vec<f64> = p.thresholds_ps.iter().map(|q| q / 1e9).collect();
        // 1.28 ms x 2, 4, ..., 128: the last is 163.84 ms, the text's "more than 200 ms, 154x the fast ones" (to
        // within one step of E), where Eq. 3 as printed stops at 81.92 ms
        assert_eq!(ms, vec![2.56, 5.12, 10.24, 20.48, 40.96, 81.92, 163.84]);
        assert!(ms[6] / 1.28 > 100.0 && params(1.0).thresholds_ps[6] / 1.28e9 < 100.0);
        // the same thresholds as Eq. 3 as printed with Q_1 doubled
        cfg.scheme.rax_thresholds = RaxThresholds::Literal;
        cfg.scheme.rax_q1_us = 2_560.0;
        assert_eq!(RaxParams::from_config(&cfg, false).thresholds_ps, p.thresholds_ps);
        // a flow at 100 ms is in the second-lowest queue under the span reading, in the lowest as printed
        assert_eq!((p.priority(100e9), params(1.0).priority(100e9)), (6, 7));
    }

    #[test]
    fn remaining_time_estimates() {
        let p = params(1.0);
        // 125 KB written at a copy rate of 100 Mbit/s, 25 KB of it not yet sent: 10 ms + 0.2 ms
        let t = p.estimate_ps(125_000, 100_000, 1e8);
        assert!((t - 10.2e9).abs() < 1.0, "{t}");
        // the copy rate is capped by the line rate
        assert!((p.estimate_ps(125_000, 125_000, 5e9) - 1e9).abs() < 1.0);
        // RAX+: 1 MB still to write at 500 Mbit/s, nothing backlogged: 16 ms
        assert!((p.true_remaining_ps(2_000_000, 1_000_000, 1_000_000, 500_000_000) - 16e9).abs() < 1.0);
        // EWMA: from 1 Gbit/s with a 200 Mbit/s sample (2,500 B in 100 us) -> 800 Mbit/s
        assert!((p.smooth(1e9, 2_500, 100 * PS_PER_US) - 8e8).abs() < 1e-3);
    }
}
