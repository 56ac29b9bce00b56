//! The explicit-rate family: RCP, D3 and PDQ, whose switches compute each flow's sending rate and write it into
//! the packets' headers. Two pure state machines, driven by the engine:
//! - [`RateFlow`]: both ends of one flow. The sender opens with a SYN-like request, learns its rate from the
//!   header its SYN-ACK echoes (one RTT before the first data, as the PDQ paper counts it), then paces its
//!   segments at that rate (the next one leaves `wire bits / rate` after the previous one, never faster than its
//!   NIC), learns new rates from the ACKs, and repairs losses. The receiver acknowledges every packet and
//!   echoes the header of the packet it acknowledges.
//! - [`RateAgent`]: the state of one egress port (RCP's rate R(t); D3's counters; PDQ's flow list and rate
//!   controller). It sees every packet entering the port ([`RateAgent::forward`]) and the ACKs of the flows whose
//!   data leaves through it ([`RateAgent::reverse`]).
//!
//! Switches compute the rates; senders obey. By default only switch ports run an agent: RCP's rate is computed
//! at routers (Dukkipati's router, `Queue/DropTail/RCP` in its ns-2 code), D3's allocations at routers, and
//! PDQ's arbitration at switches (the sender only states its criticality and obeys the path's answer). A
//! host's own flows share its NIC through the NIC's queue, each paced at the rate the path granted it. With
//! `scheme.rate_nic_agents` a host's NIC port runs an agent like a switch port (fctlab's earlier model): the
//! NIC arbitrates among the host's flows (PDQ pauses the host's less critical flows before any switch sees
//! them, RCP shares the NIC's rate among them, D3 grants them from the NIC's capacity). That kept the PDQ
//! switches' lists to a few flows, so Suppressed Probing never slowed a probe (measured: PDQ(Full) and
//! PDQ(ES+ET) within 0.5% of each other at every point of the PDQ paper's Figures 3, 4 and 9).
//!
//! Rates travel in headers in kbit/s (u32: up to 4.29 Tbit/s) and are wire rates (headers included): a rate
//! of R lets the sender put R bits per second on the wire, so the pacing gap is wire bits / R and a link's
//! capacity is its line rate, the same unit on both sides.
//!
//! Loss recovery (the loss experiment drops packets both ways) follows `transport::tcp`'s conventions: a
//! cumulative ACK plus a one-segment SACK ([`crate::net::packet::Packet::sack`]), TCP's scoreboard of SACKed,
//! lost and retransmitted segments (`transport::scoreboard`), a segment is lost once 3 segments above it are
//! SACKed, and a retransmission timer (see [`RateParams::rto`]) that marks every outstanding un-SACKed segment
//! lost. Lost segments go out before new data, at the flow's current rate (there is no window: the rate alone
//! limits the sender). Lost control packets (SYN, probes, D3 requests) are repeated by their own timers.
//!
//! What the engine does with these (the contract): it sends each packet a flow pushes from host `src` when
//! `pkt.dst == flow.dst`, else from host `dst`, and fills in nothing (the flow sets flow, seq, dst, wire bytes,
//! prio 0, flags, send stamp and header). ACKs carry `flags::ACK` (the engine calls [`RateAgent::reverse`] for
//! them at every port whose data direction they answer, the sender's NIC included, before delivering them);
//! header-only packets (SYN, probe, FIN, TERM) carry `flags::PROBE` and are `ack_bytes` long. The call that
//! reports `sender_done` or `terminated` may also push one last packet (the FIN or TERM that releases the
//! switches' state): send it, then free the flow. Every port of a run gets a [`RateAgent`] whose `id` is unique
//! and non-zero (the constructor draws one from a process-wide counter; the engine may overwrite it).

mod agent;
mod flow;
mod header;
#[cfg(test)]
mod tests;

pub use agent::{PdqEntry, RateAgent};
pub use flow::{RateFlow, SYN_SEQ};
pub use header::{kind, RPacket, RateHdr, BIT_DONE, BIT_REQ, BIT_T_KNOWN, NO_DEADLINE_US};

use crate::config::{Config, Criticality, Preset, SchemeName, SizeInfo};
use crate::units::{Ps, PS_PER_US};

/// Which of the family's schemes a run uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RateScheme {
    Rcp,
    D3,
    Pdq,
}

/// Parameters shared by every flow and every agent of a run.
#[derive(Debug, Clone)]
pub struct RateParams {
    pub mss: u32,
    pub header: u32,
    pub ack_bytes: u32,
    pub scheme: RateScheme,
    /// Floor of the retransmission timeout (`transport.rto_min_us`), and the timeout before the first RTT
    /// sample (`transport.rto_init_us` when given, else the floor).
    pub rto_min: Ps,
    pub rto_init: Ps,
    /// The retransmission timeout in smoothed RTTs above the floor (see [`RateParams::rto`]).
    pub rto_rtts: f64,
    /// SACKed segments above a hole that make it lost (3, as TCP's duplicate-ACK threshold).
    pub dupthresh: u32,
    /// The switches' control interval (`scheme.rate_interval_us`); 0: from the average RTT of the headers a
    /// port sees (RCP updates every such RTT, PDQ's and D3's controller every two).
    pub interval: Ps,
    /// Gain of a port's moving average of the RTTs its packets carry (RCP's d0; the average RTT of PDQ's rate
    /// controller). Chosen: 1/16, a few round trips' worth of packets of a busy link.
    pub rtt_gain: f64,
    /// RCP's gains alpha and beta (`scheme.rcp_alpha`, `scheme.rcp_beta`).
    pub rcp_alpha: f64,
    pub rcp_beta: f64,
    /// RCP's lowest rate, in full-size packets per average RTT d0. Chosen: 0.01 (RCP's reference code clips R
    /// below at `min_pprtt_` packets per RTT, and a port of it to ns-3 defaults that to 0.01). RCP never stops
    /// a flow, and the rate must stay positive for the multiplicative update to recover.
    pub rcp_min_pprtt: f64,
    /// RCP's R(0) as a fraction of the link rate (`scheme.rcp_init_rate_fraction`, RCP's reference code's
    /// `init_rate_fact_`, 0.05).
    pub rcp_init_frac: f64,
    /// Host NICs run an agent too (`scheme.rate_nic_agents`; default false: switches alone compute rates).
    pub nic_agents: bool,
    /// PDQ's Early Start, Early Termination and Suppressed Probing, and Early Start's K (in RTTs).
    pub early_start: bool,
    pub early_termination: bool,
    pub suppressed_probing: bool,
    pub early_start_k: f64,
    /// How Early Start leaves nearly completed flows out (`scheme.pdq_early_start_rule`), and what a flow the
    /// full list has no room for gets (`scheme.pdq_outside_list`).
    pub early_start_rule: crate::config::EarlyStartRule,
    pub outside_list: crate::config::OutsideList,
    /// PDQ's criticality (`scheme.pdq_criticality`; by bytes sent with `scheme.size_info = "none"`).
    pub criticality: Criticality,
    /// What senders know of their flows' sizes (`scheme.size_info`): PDQ's criticality and Early Termination,
    /// D3's desired rate read the known remaining bytes (`RateFlow::set_known`).
    pub size_info: SizeInfo,
    /// Criticality `bytes_sent`: the estimate is refreshed every this many bytes sent.
    pub crit_update_bytes: u64,
    /// Suppressed Probing: a switch that pauses a flow with `i` more critical flows ahead of it in its list
    /// asks it to probe every max(1, ceil(factor x i)) RTTs (see `agent.rs`). 0.2: PDQ's X (I_H = max(I_H, X i));
    /// a public re-implementation of PDQ (SymbioticLab/Aequitas, `ext/pdq_queue.cpp`) uses the same 0.2. The
    /// flows next in line (the first five) then probe every RTT and are there when Early Start lets them in; with
    /// 1.0 a flow at position i probed every i RTTs and the link idled until its probe came (measured on the
    /// paper's Figure 7 burst: 50 short flows done at 27.5 ms with 1.0, 21.7 ms with 0.2, as PDQ(ES) alone).
    pub probe_factor: f64,
    /// PDQ's dampening: after accepting a flow that was not sending, a switch accepts no other paused flow
    /// for this many average RTTs (chosen: 1.0; 0 turns dampening off). Brand-new flows (SYNs) are exempt.
    pub dampening_rtts: f64,
    /// PDQ's flow list holds at most max(2 kappa, `list_min`) flows, kappa being the number of sending flows
    /// in it (the paper's 2 kappa bound), and never more than `list_max` (the storage allocated per port).
    pub list_min: usize,
    pub list_max: usize,
}

impl RateParams {
    pub fn from_config(cfg: &Config) -> Self {
        let t = &cfg.transport;
        let s = &cfg.scheme;
        let us = |x: f64| (x * PS_PER_US as f64).round() as Ps;
        let scheme = match s.name {
            SchemeName::Rcp => RateScheme::Rcp,
            SchemeName::D3 => RateScheme::D3,
            n if n.is_pdq() => RateScheme::Pdq,
            n => panic!("scheme {} is not of the explicit-rate family", n.as_str()),
        };
        RateParams {
            mss: t.mss_bytes,
            header: t.header_bytes,
            ack_bytes: t.ack_bytes,
            scheme,
            rto_min: us(t.rto_min_us),
            rto_init: us(t.rto_init_us.unwrap_or(t.rto_min_us)),
            rto_rtts: s.rate_rto_rtts,
            dupthresh: 3,
            interval: us(s.rate_interval_us),
            rtt_gain: 1.0 / 16.0,
            rcp_alpha: s.rcp_alpha,
            rcp_beta: s.rcp_beta,
            rcp_min_pprtt: s.rcp_min_packets_per_rtt,
            rcp_init_frac: s.rcp_init_rate_fraction,
            nic_agents: s.rate_nic_agents,
            early_start: s.pdq_early_start,
            early_termination: s.pdq_early_termination,
            suppressed_probing: s.pdq_suppressed_probing,
            early_start_k: s.pdq_early_start_k,
            early_start_rule: s.pdq_early_start_rule,
            outside_list: s.pdq_outside_list,
            criticality: s.pdq_criticality_used(),
            size_info: s.size_view(),
            crit_update_bytes: s.pdq_criticality_update_bytes.max(1),
            probe_factor: s.pdq_probe_factor,
            dampening_rtts: s.pdq_dampening_rtts,
            list_min: s.pdq_list_min as usize,
            list_max: s.pdq_list_max as usize,
        }
    }

    /// Parameters of a scheme with its default keys (tests, benchmarks).
    pub fn for_scheme(name: SchemeName) -> Self {
        Self::from_config(&Config::for_scheme(name, Preset::Native))
    }

    /// The retransmission timeout: max(rto_min, `rto_rtts` x SRTT), and `rto_init` before any RTT sample.
    /// Chosen: no RFC 6298 variance term and no back-off. These schemes keep queues short (the rate is
    /// explicit), so RTT samples vary little, and a lost segment is resent at the flow's rate, which already
    /// keeps the sender from adding load; three RTTs leave room for the pacing gap of a slow flow.
    /// Never below 1 us (a zero timer would spin).
    #[inline]
    pub fn rto(&self, srtt: Ps) -> Ps {
        let t = if srtt == 0 { self.rto_init } else { ((srtt as f64 * self.rto_rtts) as Ps).max(self.rto_min) };
        t.max(PS_PER_US)
    }

    /// Wire bytes of a control packet (SYN, probe, FIN, termination, ACK).
    #[inline]
    pub fn ctrl_wire(&self) -> u16 {
        self.ack_bytes as u16
    }
}

/// What one call into a [`RateFlow`] produced besides packets.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RateOutcome {
    /// The receiver now holds every byte (first time only).
    pub receiver_done: bool,
    /// Every byte is acknowledged (first time only): the engine frees the flow.
    pub sender_done: bool,
    /// The sender gave up (PDQ's Early Termination, D3's quenching; first time only): it sends nothing more.
    pub terminated: bool,
}

/// Per-flow counters the engine copies into the results.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RateCounters {
    pub retransmits: u32,
    pub timeouts: u32,
    /// Payload bytes sent, retransmissions included.
    pub bytes_sent: u64,
    /// Header-only probes (PDQ's paused flows, D3's zero-rate requests).
    pub probes: u32,
}

/// bits/s to the header's kbit/s, rounded down (a granted rate is never exceeded), saturating.
#[inline]
pub fn to_kbps(bps: u64) -> u32 {
    (bps / 1000).min(u32::MAX as u64) as u32
}

/// The header's kbit/s to bits/s.
#[inline]
pub fn from_kbps(kbps: u32) -> u64 {
    kbps as u64 * 1000
}
