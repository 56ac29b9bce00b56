//! Per egress-port state of the explicit-rate schemes, one [`RateAgent`] per switch port (and per host NIC with
//! `scheme.rate_nic_agents`, see the module docs of `transport::rate`).
//!
//! RCP (Dukkipati 2007): one rate R for every flow of the link, updated every
//! control interval T:
//!   R <- R (1 + (T / d0) (alpha (C - y) - beta q / d0) / C),
//! y the input rate over the interval (every byte that enters the port, any flow, ACKs included), q the
//! queue in bits at the update, d0 the moving average of the RTTs the packets carry, C the link rate. T is
//! `scheme.rate_interval_us`, or d0 when that is 0 (the paper's T <= d0 at its largest). Each forward packet's
//! rate field is lowered to R. R starts at `rcp_init_frac` x C (RCP's reference code's `init_rate_fact_`,
//! 0.05: a burst of flows arriving together starts below the link's rate and the update raises R; starting at
//! C, every flow of such a burst was sent at C, the queue drove R to the floor and R climbed back by at most
//! 1 + alpha per RTT). Chosen where the paper leaves it open: R is kept within [floor, C], the floor being `rcp_min_pprtt` full-size packets per d0 (as RCP's reference code clips it,
//! `min_pprtt_`); the update runs at the first packet after T has elapsed (T / d0 capped at 1); when packets
//! are so sparse that n >= 2 whole intervals passed, an increase is compounded n times (at most 64), as the
//! router's periodic timer would have done with the same input rate, and a decrease is applied once; before
//! any RTT sample (only SYNs seen) and without a configured interval, R stays at C.
//!
//! PDQ (Hong, Caesar, Godfrey, SIGCOMM 2012):
//! - The flow list: the most critical flows crossing the port, sorted by criticality: earlier
//!   deadline first (flows without one last), then smaller expected transmission time T (or the sender's rank
//!   in the flow-size-unaware variants), then flow id. At most 2 kappa entries, kappa being the number of
//!   sending flows (chosen: never fewer than `list_min`, never more than `list_max`); a new flow enters if
//!   there is room or it is more critical than the least critical entry (which is then dropped).
//! - Algorithm 1, forward (data, SYN, probe): a flow paused by another switch (P_H set upstream) is removed
//!   from the list and passes; a flow not admitted to the list is paused (chosen: it is less critical than
//!   every flow the list holds, so it would get nothing they leave); otherwise its entry is refreshed
//!   from the header and it is accepted at W = min(Availbw(i), R_H) if W > 0 (R_H = W), else paused
//!   (R_H = 0, P_H = this port). Chosen: the decision is also written into the entry at once (the paper
//!   writes it on the ACK, Algorithm 2), so that two requests that cross the port within one RTT do not both
//!   get the same bandwidth; the ACK then overwrites it with the path's final decision.
//! - Preemption (Algorithm 1: the more critical flow is accepted, the less critical ones are paused and learn it
//!   from their next ACK). A less critical flow accepted here while it was not sending holds a tentative grant
//!   until the answer passes back through this port on the reverse path. A flow not sending yet takes such
//!   grants back, least critical first, as far as it needs their bandwidth: the port marks them paused, and
//!   rewrites each one's answer into a pause (R_H = 0, P_H = this port) as it passes back, so those senders
//!   never start. A flow pushed out of the full list with such a grant is remembered (the newest `list_max`
//!   of them) and paused the same way. Once its answer has passed back, a grant is committed (its data is on
//!   its way). A new flow (its SYN) preempts committed grants too, least critical first, as long as the data
//!   of the flows so preempted that may still arrive (each at its grant, from its data's due time for one loop
//!   delay: its first packet here pauses it) adds up to at most the link's rate: about one bandwidth-delay
//!   product queued, the overlap the paper's rate controller absorbs. Otherwise, and for a flow that was
//!   paused (dampening's case), a flow not sending yet gets only what the committed grants behind it leave,
//!   min(W, Availbw(i) - their sum); the rest of W is its claim, which the flows behind count as taken, so
//!   their next packets pause them and the flow's next packet (a probe one RTT later if it got nothing) takes
//!   it. Accepting every flow at once whatever the flows behind hold lets them all start, and a burst of
//!   arrivals in increasing criticality (an incast's SYNs) then overflows the bottleneck's buffer (measured: 13
//!   drops, a full 150 KB queue for 20 flows into a 1 Gbps port; 0 drops and at most 6 KB queued now). A less
//!   critical flow that is sending data is not counted (the paper's rule): its next packet pauses it, and its
//!   data stops about one RTT later, when the new flow's starts. Before tentative grants could be taken
//!   back, a port counted them as committed: a sender's NIC (or a first switch) that had just accepted a less
//!   critical flow of the same host, soon to be paused downstream, paused the more critical one, and the ports
//!   downstream then dropped it from their lists (Algorithm 1: paused upstream), so a less critical flow got its
//!   turn. Measured on Figure 7's burst (one switch, 150 us RTTs): 13 of the 50 short flows started sending
//!   before a more critical one (none now), the bottleneck idled 7.8% of the burst (1.3% now) and the short
//!   flows used 0.855 of it (0.932). On the recipe's tree, the most critical flow of an 11-flow query, paused
//!   at its SYN behind a committed grant to a flow under the receiver's own leaf (a 41 us RTT, done before the
//!   first flow's data could arrive), finished at 1,241 us; 446 us when only tentative grants were taken
//!   back, 330 us with committed ones too (324 us alone). Dampening (below) holds a flow back only behind a
//!   committed grant.
//! - Availbw(i) (Algorithm 1's helper): C minus the rates of the flows ahead of i. Chosen: a flow ahead that
//!   this port holds back (paused here, or granted less than it asked for here) counts as using what it asked
//!   for. The paper's switch knows its list: bandwidth freed by a finishing flow (or by the rate controller's
//!   drift) then goes to the most critical waiting flow, not to whichever less critical probe arrives first;
//!   without this, a less critical flow got in with the crumbs, its T_H dropped below the waiting flow's, and
//!   the flows finished out of criticality order.
//! - Early Start (section 3.3.1 of the paper: a flow ahead is "nearly completed" when T_j / RTT_j < K, K =
//!   `pdq_early_start_k`, the paper's 2; the next flow then starts while it finishes, and the rate controller
//!   absorbs the queue of the overlap). The paper's Availbw leaves the nearly completed flows out altogether
//!   while their sum of T_j / RTT_j stays below K. Chosen instead: the port counts what they will still use
//!   when the new flow's data arrives. A rate written into a packet now reaches this port as the flow's data
//!   one loop delay d later (the packet's wait in this port's queue, the flow's round trip without queueing,
//!   one segment's serialization), and holds until the next packet's decision arrives, one d after that (for
//!   a paused flow, whose next packet is its next probe). The round trip without queueing is the least RTT_H
//!   the flow's headers stated at this port: RTT_H is one sample, which holds the queue it met, and the
//!   queue now is added on its own (the last sample counted a standing queue twice, d grew with the queue and
//!   let more flows overlap: on Figure 7's burst 0.932 of the link for the short flows but 18 packets queued,
//!   0.918 and 12 packets with the least sample). Each nearly completed flow ahead is projected from its header: the
//!   bits it has left (T_H at this port's rate), sent at the rate its sender paces at now (the header's
//!   current rate) until the last raise of its grant here reaches it, then at C after the flows ahead of it; a
//!   flow accepted but not sending yet starts at its data's due time, at its grant for one d. With B the time
//!   until they are all done, flow i gets (C - the rates counted) x clamp((2 d - B) / d, 0, 1): all of it if
//!   they are done within d, nothing while they fill the span from d to 2 d, the share they leave of it
//!   otherwise. The paper's rule exempts every flow shorter than K RTTs whole: flows of 1.1 RTT (Figure 7's
//!   20 KB at 1 Gbps) then ran two or three at a time at line rate, the queue they built inflated RTT_H, which
//!   let more flows count as finishing, and delayed the probes and acknowledgements of the next ones (a
//!   per-flow trace: 310-535 us from acceptance to data instead of about 160, the link idle up to 4 RTTs
//!   between completions). Measured (this change with the sender's probe timing, see `flow.rs`): Figure 7's
//!   burst on one switch with 150 us RTTs done at 19.7 ms instead of 20.8 (utilization of the short flows
//!   0.855 instead of 0.77), the queue at most 25.6 KB instead of 47.5 KB; on the recipe's tree 19.7 ms
//!   instead of 24.5; Figure 6 done at 41.6 ms with at most 10.4 KB queued instead of 23 KB.
//! - Algorithm 2, reverse (ACK): an entry of a flow paused elsewhere is removed; otherwise the entry takes
//!   the path's decision (R_H, and R_H = 0 when P_H is set). An ACK with the receiver's DONE bit removes the
//!   entry (the flow has finished), as do FIN and TERM packets on the forward path.
//! - Rate controller: C = max(0, r - q / (2 RTT)), r the line rate, q the queue, RTT the
//!   average RTT of the headers, recomputed every 2 RTTs (or every `scheme.rate_interval_us`).
//! - Suppressed Probing: a port that pauses a flow with i flows ahead of it sets
//!   I_H = max(I_H, ceil(`probe_factor` x i)) (factor X = 0.2, see [`RateParams::probe_factor`]; I_H is in
//!   whole RTTs, so the five flows next in line probe every RTT). Without it I_H = 1.
//! - Dampening: after accepting a flow that was not sending, the port accepts no other
//!   paused flow for `dampening_rtts` average RTTs (chosen: 1). New flows (not yet in the list) are exempt,
//!   so a more critical arrival preempts at once; so is a flow behind the one just accepted (chosen: that
//!   is Early Start handing over in the list's order, not the back-and-forth dampening prevents), and any flow
//!   while the grant just made is still tentative (a more critical flow takes it back, see Preemption).
//! - Stale entries (chosen, the paper is silent; a lost FIN or a flow that vanished must not hold the link
//!   forever): an entry that no packet refreshed for 4 x (RTT x max(1, I_H) + one segment's gap at its rate),
//!   and at least the sender's retransmission timeout plus an RTT (a flow waiting for its timer after a tail
//!   loss is alive), is dropped.
//!
//! D3 (Wilson et al., SIGCOMM 2011): no per-flow state; counters of the port's flows N, their
//! demand D (sum of desired rates) and the allocation A. A request (SYN, or a data packet / probe with
//! `BIT_REQ`) carries the desired rate d, the previous desired rate and, in `prev`, this port's own previous
//! allocation a_prev to the flow (its entry of D3's allocation vector, which the engine keeps per flow and
//! hop: see `engine::family::rate`): D += d - d_prev; the flow's own allocation is free for it again,
//! left = C - (A - a_prev); with fs = max(0, C - D) / N (the fair share of the spare capacity), the grant g is
//! d + min(fs, left - d) if left >= d (the desired rate, first come first served, plus a fair share of the
//! rest), else max(0, left) (greedy: whatever is left). As in D3, the port commits its own grant at once, on
//! the forward path: A += g - a_prev, and g goes back into the vector (`prev` on the way out). The rate field
//! is lowered to g; the sender uses the path's minimum, so a port ahead of the bottleneck holds more than the
//! flow uses until the next request (D3's own behaviour). Flows without a deadline ask d = 0 and so get only
//! the fair share. A FIN or TERM returns a_prev and d_prev and leaves N. (An earlier choice committed the
//! path's minimum from the request's ACK on the way back; requests crossing a port within the same half RTT
//! then all saw the same free capacity, and over-allocated it by up to 96 KB of queue in query aggregation.)
//! C is the PDQ rate controller's (the D3 paper also lowers its capacity for queued bytes).
//! Lost requests, ACKs and FINs leave the counters off by the lost amount (D3's routers keep no per-flow
//! state to notice), and an inflated A or D starves flows for good. Chosen repair, soft state: every control
//! period (2 average RTTs) a port bounds N, D and A from above by what the period's requests say. A flow
//! requests about once per RTT r (its header's RTT), so weighting each request by r / period counts each
//! requesting flow about once: N <= 1.1 x sum(r) / period, D <= 1.1 x sum(d r) / period, and
//! A <= 1.1 x sum(g r) / period with g this port's grant (what it holds for the flow).
//! Flows that stopped requesting (finished, or all data sent) fall out of the bound within a period.

use std::sync::atomic::{AtomicU32, Ordering};

use super::header::{kind, RPacket, RateHdr, BIT_DONE};
use super::{from_kbps, to_kbps, RateParams, RateScheme};
use crate::config::{EarlyStartRule, OutsideList};
use crate::units::{tx_time, Ps, NEVER, PS_PER_S, PS_PER_US};

/// Ids of agents (PDQ's P_H names one): unique within the process, never 0.
static NEXT_AGENT_ID: AtomicU32 = AtomicU32::new(1);

/// One flow in a PDQ port's list.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PdqEntry {
    pub flow: u32,
    /// The rate the flow is accepted at (0: paused).
    pub rate_bps: f64,
    /// The rate this port would give the flow but for less critical flows still sending (0: none): flows
    /// behind it count it as taken, so they are paused at their next packet, and the flow gets it at its next.
    pub claim_bps: f64,
    /// The rate the flow asked this port for at its last packet (R_H as it arrived): what a paused entry
    /// reserves ahead of less critical flows.
    pub req_bps: f64,
    /// This port holds the flow back (paused it, or granted it less than `req_bps`), and not a port behind it.
    pub held_here: bool,
    pub deadline_us: u32,
    pub crit: u32,
    pub t_known: bool,
    pub rtt_ns: u32,
    /// The least RTT_H the flow's headers stated at this port (0: none yet).
    pub rtt_min_ns: u32,
    pub probe_rtts: u8,
    /// When the entry goes stale unless refreshed.
    pub expire: Ps,
    /// When the flow's last forward packet passed this port, and the rate its sender paced at then (bits/s; 0:
    /// not sending).
    pub seen: Ps,
    pub cur_bps: f64,
    /// A flow this port accepted while it was not sending: when its data is due here (one loop delay after the
    /// acceptance).
    pub due_at: Ps,
    /// When the last raise of the flow's grant at this port reaches the port as data at the new rate.
    pub effect_at: Ps,
    /// The flow was accepted here while not sending, and the answer has not passed back through this port yet:
    /// a more critical flow may still take the grant back (see `revoked`).
    pub tentative: bool,
    /// A more critical flow took this flow's tentative grant: its answer is turned into a pause by this port
    /// as it passes back (Algorithm 1's preemption, told to the sender in its ACK).
    pub revoked: bool,
    /// A new, more critical flow took this flow's committed grant: its data may still arrive at `preempt_bps`
    /// until `preempt_until` (its first packet here pauses it, one loop delay before it stops).
    pub preempt_bps: f64,
    pub preempt_until: Ps,
}

impl PdqEntry {
    #[inline]
    fn key(&self) -> (u32, u32, u32) {
        (self.deadline_us, self.crit, self.flow)
    }
}

/// The state of one egress port.
#[derive(Debug, Clone)]
pub struct RateAgent {
    /// This port's id in PDQ's pauseby field (unique; the engine may set its own, non-zero).
    pub id: u32,
    scheme: RateScheme,
    link_bps: f64,
    /// Moving average of the RTTs in headers, in ps (0: no sample yet).
    avg_rtt: f64,
    /// PDQ's and D3's capacity C from the rate controller (bits/s).
    cap: f64,
    ctrl_next: Ps,
    // RCP
    rcp_rate: f64,
    /// `rcp_rate` in the header's unit (kbit/s), kept with it: what every request is lowered to.
    rcp_kbps: u32,
    rcp_bytes: u64,
    rcp_last: Ps,
    // D3
    d3_alloc: f64,
    d3_demand: f64,
    d3_flows: u32,
    /// D3's soft-state check (see the module docs): since `d3_win_start`, the sums over requests of RTT,
    /// desired rate x RTT and grant x RTT.
    d3_win_start: Ps,
    d3_win_n: f64,
    d3_win_d: f64,
    d3_win_a: f64,
    // PDQ
    list: Vec<PdqEntry>,
    damp_until: Ps,
    damp_flow: u32,
    next_expiry: Ps,
    /// Flows pushed out of the full list while their grant here was tentative or taken back (the newest
    /// `list_max`; `u32::MAX`: an empty slot): their answers still become pauses as they pass back.
    dropped: Vec<u32>,
    dropped_next: usize,
    /// Flows outside the full list: the sum of their requests' RTTs since `out_win_start`, and the count that
    /// sum gave over the last control period (see `OutsideList::FairShare`).
    out_win: f64,
    out_win_start: Ps,
    out_flows: f64,
    /// Constants of PDQ's per-packet work, taken from the parameters the agent was made with (`PerPacket`).
    pp: PerPacket,
}

/// What PDQ's per-packet work computes from the parameters and the link alone, once (the same expressions, so
/// the same values): the loop delay's one segment, and the RTTs up to which the retransmission timeout
/// (`RateParams::rto`) is its floor. An agent is called with the parameters it was made with (the engine's
/// `RateState` holds one set for the run; tests make their agents after setting theirs), checked in debug
/// builds (`PerPacket::of`).
#[derive(Debug, Clone, Copy)]
struct PerPacket {
    /// `mss + header` they were taken with, and `rto_min`, `rto_rtts`.
    seg_bytes: u32,
    rto_min: Ps,
    rto_rtts: f64,
    /// One full-size segment's serialization at the link's rate, as `RateAgent::loop_delay` computes it.
    seg_ps: Ps,
    /// The largest SRTT whose `rto_rtts` multiple is at most `rto_min`: up to it (from 1), `rto` is the floor.
    rto_flat_to: Ps,
}

impl PerPacket {
    fn new(p: &RateParams, link_bps: f64) -> Self {
        let seg_bytes = p.mss + p.header;
        let seg_ps = (seg_bytes as f64 * 8.0 / link_bps * PS_PER_S as f64) as Ps;
        // (srtt as f64 * rto_rtts) as Ps does not decrease as srtt grows: the last SRTT at or under the floor
        // is found by bisection
        let scaled = |srtt: Ps| (srtt as f64 * p.rto_rtts) as Ps;
        let (mut lo, mut hi) = (0 as Ps, 1 << 62);
        if scaled(hi) <= p.rto_min {
            lo = hi;
        }
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if scaled(mid) <= p.rto_min {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        PerPacket { seg_bytes, rto_min: p.rto_min, rto_rtts: p.rto_rtts, seg_ps, rto_flat_to: lo }
    }

    /// Were these taken from `p`'s values? (An agent is always called with the parameters it was made with.)
    #[inline]
    fn of(&self, p: &RateParams) -> bool {
        self.seg_bytes == p.mss + p.header && self.rto_min == p.rto_min && self.rto_rtts.to_bits() == p.rto_rtts.to_bits()
    }
}

impl RateAgent {
    pub fn new(p: &RateParams, link_rate_bps: u64) -> Self {
        let c = link_rate_bps as f64;
        RateAgent {
            id: NEXT_AGENT_ID.fetch_add(1, Ordering::Relaxed).max(1),
            scheme: p.scheme,
            link_bps: c,
            avg_rtt: 0.0,
            cap: c,
            ctrl_next: 0,
            rcp_rate: c * p.rcp_init_frac,
            rcp_kbps: to_kbps((c * p.rcp_init_frac) as u64),
            rcp_bytes: 0,
            rcp_last: NEVER,
            d3_alloc: 0.0,
            d3_demand: 0.0,
            d3_flows: 0,
            d3_win_start: NEVER,
            d3_win_n: 0.0,
            d3_win_d: 0.0,
            d3_win_a: 0.0,
            list: if p.scheme == RateScheme::Pdq { Vec::with_capacity(p.list_max + 1) } else { Vec::new() },
            damp_until: 0,
            damp_flow: u32::MAX,
            next_expiry: NEVER,
            dropped: if p.scheme == RateScheme::Pdq { vec![u32::MAX; p.list_max.max(1)] } else { Vec::new() },
            dropped_next: 0,
            out_win: 0.0,
            out_win_start: NEVER,
            out_flows: 0.0,
            pp: PerPacket::new(p, c),
        }
    }

    /// An agent that is never called (a host NIC's, when only switches compute rates): no storage for PDQ's
    /// list and its ring of pushed-out flows (`list_max` entries each otherwise); only `RateState` of the engine
    /// makes these, for ports whose agent it never calls.
    pub fn idle(p: &RateParams, link_rate_bps: u64) -> Self {
        RateAgent { list: Vec::new(), dropped: Vec::new(), ..Self::new(p, link_rate_bps) }
    }

    // ------------------------------------------------------------------ queries (tests, traces)

    /// RCP's current rate R (bits/s).
    pub fn rcp_rate_bps(&self) -> f64 {
        self.rcp_rate
    }

    /// The rate controller's capacity C (PDQ, D3), bits/s.
    pub fn capacity_bps(&self) -> f64 {
        self.cap
    }

    /// The moving average of the RTTs seen (ps; 0 before any).
    pub fn avg_rtt(&self) -> f64 {
        self.avg_rtt
    }

    /// PDQ's flow list, most critical first.
    pub fn pdq_list(&self) -> &[PdqEntry] {
        &self.list
    }

    /// D3's allocation A and demand D (bits/s) and flow count N.
    pub fn d3_state(&self) -> (f64, f64, u32) {
        (self.d3_alloc, self.d3_demand, self.d3_flows)
    }

    // ------------------------------------------------------------------ the two hooks

    /// Every packet entering this egress port, before admission; `queue_bytes` is the port's occupancy now.
    /// Rewrites the header of forward packets (SYN, data, probe) and takes FIN / TERM into account.
    pub fn forward(&mut self, p: &RateParams, now: Ps, queue_bytes: u64, pkt: &mut RPacket) {
        if self.scheme == RateScheme::Rcp {
            self.rcp_bytes += pkt.wire as u64;
        }
        if pkt.is_ack() {
            if self.scheme == RateScheme::Rcp {
                self.rcp_update(p, now, queue_bytes);
            }
            return;
        }
        let k = pkt.hdr.kind;
        let request = matches!(k, kind::SYN | kind::DATA | kind::PROBE);
        if request && pkt.hdr.rtt_ns > 0 {
            let r = pkt.hdr.rtt_ns as f64 * 1000.0;
            self.avg_rtt = if self.avg_rtt == 0.0 { r } else { self.avg_rtt + p.rtt_gain * (r - self.avg_rtt) };
        }
        match self.scheme {
            RateScheme::Rcp => {
                self.rcp_update(p, now, queue_bytes);
                if request {
                    pkt.hdr.rate = pkt.hdr.rate.min(self.rcp_kbps);
                }
            }
            RateScheme::D3 => {
                if self.ctrl_update(p, now, queue_bytes) {
                    self.d3_check(now);
                }
                self.d3_forward(&mut pkt.hdr);
            }
            RateScheme::Pdq => {
                if self.ctrl_update(p, now, queue_bytes) {
                    // the flows outside the list over the period that ended (see `OutsideList::FairShare`)
                    if self.out_win_start != NEVER && now > self.out_win_start {
                        self.out_flows = (self.out_win / (now - self.out_win_start) as f64).ceil();
                    }
                    self.out_win_start = now;
                    self.out_win = 0.0;
                }
                self.pdq_forward(p, now, queue_bytes, pkt.flow, &mut pkt.hdr);
            }
        }
    }

    /// Whether `pkt` reads and writes its flow's D3 allocation-vector entry at a port (see the module docs): a
    /// request or a FIN / TERM on its way to the receiver, under D3.
    #[inline]
    pub fn uses_d3_entry(&self, pkt: &RPacket) -> bool {
        self.scheme == RateScheme::D3
            && !pkt.is_ack()
            && (pkt.hdr.is_req() || matches!(pkt.hdr.kind, kind::FIN | kind::TERM))
    }

    /// [`RateAgent::forward`] for a packet that [`RateAgent::uses_d3_entry`]: `entry` is this port's entry of
    /// the flow's allocation vector (its previous allocation, kbit/s), handed in through `prev` and updated
    /// with the new one; the packet's `hop` then moves on to the next port's entry.
    pub fn forward_d3(&mut self, p: &RateParams, now: Ps, queue_bytes: u64, pkt: &mut RPacket, entry: &mut u32) {
        pkt.hdr.prev = *entry;
        self.forward(p, now, queue_bytes, pkt);
        *entry = pkt.hdr.prev;
        pkt.hdr.hop = pkt.hdr.hop.saturating_add(1);
    }

    /// An ACK of a flow whose data leaves through this port, on its way back to the sender.
    pub fn reverse(&mut self, p: &RateParams, now: Ps, pkt: &mut RPacket) {
        match self.scheme {
            RateScheme::Rcp => {}
            RateScheme::D3 => {} // D3 commits its allocations on the forward path
            RateScheme::Pdq => self.pdq_reverse(p, now, pkt.flow, &mut pkt.hdr),
        }
    }

    // ------------------------------------------------------------------ RCP

    fn rcp_update(&mut self, p: &RateParams, now: Ps, queue_bytes: u64) {
        if self.rcp_last == NEVER {
            self.rcp_last = now;
            return;
        }
        // (most packets find less than T elapsed: that test comes first, d0 after it; the same values as
        // d0 = avg_rtt, else the interval, and T = the interval, else d0)
        let t = if p.interval > 0 {
            p.interval as f64
        } else if self.avg_rtt > 0.0 {
            self.avg_rtt
        } else {
            0.0
        };
        if t <= 0.0 {
            return;
        }
        // (a time difference is far below 2^63 ps: as i64 it converts to the same f64, in one instruction)
        let elapsed = (now - self.rcp_last) as i64 as f64;
        if elapsed < t {
            return;
        }
        let d0 = if self.avg_rtt > 0.0 { self.avg_rtt } else { p.interval as f64 };
        let c = self.link_bps;
        let y = self.rcp_bytes as f64 * 8.0 * PS_PER_S as f64 / elapsed;
        let d0_s = d0 / PS_PER_S as f64;
        let q_bits = queue_bytes as f64 * 8.0;
        // one update per T at T / d0; intervals without packets (a link so quiet that no packet arrived for
        // several T) count as that many updates with the same input rate and queue
        let step = (t / d0).min(1.0) * (p.rcp_alpha * (c - y) - p.rcp_beta * q_bits / d0_s) / c;
        let n = (elapsed / t).floor().clamp(1.0, 64.0);
        let r = if step > 0.0 { self.rcp_rate * (1.0 + step).powf(n) } else { self.rcp_rate * (1.0 + step) };
        let floor = (p.rcp_min_pprtt * (p.mss + p.header) as f64 * 8.0 / d0_s).min(c);
        self.rcp_rate = r.clamp(floor, c);
        self.rcp_kbps = to_kbps(self.rcp_rate as u64);
        self.rcp_bytes = 0;
        self.rcp_last = now;
    }

    // ------------------------------------------------------------------ PDQ's and D3's capacity

    /// Recompute C if a control period has passed; true if it did.
    fn ctrl_update(&mut self, p: &RateParams, now: Ps, queue_bytes: u64) -> bool {
        if now < self.ctrl_next {
            return false;
        }
        let rtt = if self.avg_rtt > 0.0 { self.avg_rtt } else { p.interval as f64 };
        if rtt <= 0.0 {
            self.cap = self.link_bps;
            return false;
        }
        let drain = queue_bytes as f64 * 8.0 / (2.0 * rtt / PS_PER_S as f64);
        self.cap = (self.link_bps - drain).max(0.0);
        let every = if p.interval > 0 { p.interval } else { (2.0 * rtt) as Ps };
        self.ctrl_next = now + every.max(1);
        true
    }

    // ------------------------------------------------------------------ D3

    fn d3_forward(&mut self, h: &mut RateHdr) {
        let prev = from_kbps(h.prev) as f64;
        let prev_desired = from_kbps(h.d3_prev_desired()) as f64;
        if matches!(h.kind, kind::FIN | kind::TERM) {
            self.d3_alloc = (self.d3_alloc - prev).max(0.0);
            self.d3_demand = (self.d3_demand - prev_desired).max(0.0);
            self.d3_flows = self.d3_flows.saturating_sub(1);
            h.prev = 0;
            return;
        }
        if !h.is_req() {
            return;
        }
        if h.kind == kind::SYN {
            self.d3_flows += 1;
        }
        let desired = from_kbps(h.d3_desired()) as f64;
        self.d3_demand = (self.d3_demand + desired - prev_desired).max(0.0);
        let c = self.cap;
        let left = c - (self.d3_alloc - prev).max(0.0);
        let fs = ((c - self.d3_demand) / self.d3_flows.max(1) as f64).max(0.0);
        let grant = if left >= desired { desired + fs.min(left - desired) } else { left.max(0.0) };
        let g = to_kbps(grant as u64);
        self.d3_alloc = (self.d3_alloc + from_kbps(g) as f64 - prev).max(0.0);
        h.prev = g;
        h.rate = h.rate.min(g);
        let r = if h.rtt_ns > 0 { h.rtt_ns as f64 * 1000.0 } else { self.avg_rtt };
        self.d3_win_n += r;
        self.d3_win_d += desired * r;
        self.d3_win_a += from_kbps(g) as f64 * r;
    }

    /// End of a control period: bound N, D and A by what the period's requests say (see the module docs).
    fn d3_check(&mut self, now: Ps) {
        if self.d3_win_start != NEVER && now > self.d3_win_start {
            let el = (now - self.d3_win_start) as f64;
            let slack = 1.1;
            let n = (self.d3_win_n / el * slack).ceil();
            self.d3_flows = self.d3_flows.min(n as u32);
            self.d3_demand = self.d3_demand.min(self.d3_win_d / el * slack);
            self.d3_alloc = self.d3_alloc.min(self.d3_win_a / el * slack);
        }
        self.d3_win_start = now;
        self.d3_win_n = 0.0;
        self.d3_win_d = 0.0;
        self.d3_win_a = 0.0;
    }

    // ------------------------------------------------------------------ PDQ

    #[inline]
    fn find(&self, flow: u32) -> Option<usize> {
        self.list.iter().position(|e| e.flow == flow)
    }

    fn remove(&mut self, flow: u32) {
        if let Some(i) = self.find(flow) {
            self.list.remove(i);
        }
    }

    /// Where an entry with `key` belongs (before the first less critical one).
    #[inline]
    fn slot(&self, key: (u32, u32, u32)) -> usize {
        self.list.iter().position(|e| e.key() > key).unwrap_or(self.list.len())
    }

    /// The list's bound: 2 kappa, within [list_min, list_max].
    fn bound(&self, p: &RateParams) -> usize {
        let kappa = self.list.iter().filter(|e| e.rate_bps > 0.0).count();
        (2 * kappa).max(p.list_min).min(p.list_max)
    }

    fn expire(&mut self, now: Ps) {
        if now < self.next_expiry {
            return;
        }
        self.list.retain(|e| e.expire > now);
        self.next_expiry = self.list.iter().map(|e| e.expire).min().unwrap_or(NEVER);
    }

    /// Refresh entry `i`'s stale time: now + max(4 (RTT x I_H + one segment's gap at its rate), RTO + RTT).
    #[inline(always)]
    fn touch(&mut self, p: &RateParams, now: Ps, i: usize) {
        let e = &self.list[i];
        let rtt = if e.rtt_ns > 0 {
            e.rtt_ns as Ps * 1000
        } else if self.avg_rtt > 0.0 {
            self.avg_rtt as Ps
        } else {
            p.rto_init
        };
        // (a live flow may fall silent for a retransmission timeout after a tail loss: keep it that long)
        let span = self.stale_span(p, rtt, e.probe_rtts.max(1) as Ps, e.rate_bps);
        let exp = now + span;
        self.list[i].expire = exp;
        self.next_expiry = self.next_expiry.min(exp);
    }

    /// How long an entry refreshed now stays: max(4 (RTT x I_H + one segment's gap at the flow's rate), RTO + RTT)
    /// (`probe_rtts` >= 1; rate 0: no gap), with `RateParams::rto`. The same value as that formula, in fewer
    /// steps: the timeout is its floor up to `PerPacket::rto_flat_to`, and the gap's division is skipped where
    /// the gap cannot decide the maximum.
    #[inline(always)]
    fn stale_span(&self, p: &RateParams, rtt: Ps, probe_rtts: Ps, rate_bps: f64) -> Ps {
        debug_assert!(self.pp.of(p), "an agent is called with the parameters it was made with");
        let rto = if rtt != 0 && rtt <= self.pp.rto_flat_to { p.rto_min.max(PS_PER_US) } else { p.rto(rtt) };
        let hold = rto + rtt;
        let base = 4 * (rtt * probe_rtts);
        if rate_bps > 0.0 {
            let rate = rate_bps as u64;
            // The gap is ceil(bits x 10^12 / rate) (`tx_time`); it changes the result only if 4 (RTT x I_H + gap)
            // exceeds `hold`, i.e. if gap > (hold - 4 RTT x I_H) / 4 =: m, i.e. if bits x 10^12 > m x rate.
            // Mostly it does not (with a 2 ms floor, only below about 25 Mbit/s), and the division is skipped.
            let bits_ps = (p.mss + p.header) as u64 * 8 * PS_PER_S;
            if base <= hold && rate > 0 && bits_ps <= ((hold - base) / 4).saturating_mul(rate) {
                hold
            } else {
                let gap = tx_time(p.mss + p.header, rate);
                (4 * (rtt * probe_rtts + gap)).max(hold)
            }
        } else {
            base.max(hold)
        }
    }

    /// Availbw(i): the capacity left for the flow at position i (see the module docs).
    fn availbw(&self, p: &RateParams, now: Ps, queue_bytes: u64, i: usize) -> f64 {
        match p.early_start_rule {
            EarlyStartRule::Paper => self.availbw_paper(p, i),
            EarlyStartRule::Projection => self.availbw_projection(p, now, queue_bytes, i),
        }
    }

    /// What flow `e` ahead of another counts as using here: its rate, or what it asked for if this port holds
    /// it back (paused here, or granted less than it asked for here), and at least its claim.
    #[inline]
    fn counted(e: &PdqEntry) -> f64 {
        if e.held_here {
            e.req_bps.max(e.rate_bps).max(e.claim_bps)
        } else {
            e.rate_bps.max(e.claim_bps)
        }
    }

    /// Availbw(i) with the paper's Early Start: walking the flows ahead, one with a rate here whose expected
    /// transmission time is under K of its RTTs is left out while the sum X of those ratios is under K (X grows
    /// by its ratio); every other flow counts (see [`RateAgent::counted`]).
    fn availbw_paper(&self, p: &RateParams, i: usize) -> f64 {
        let k = p.early_start_k;
        let (mut x, mut a) = (0.0f64, 0.0f64);
        for e in &self.list[..i] {
            let rtt = self.rtt_of(e);
            if p.early_start && e.rate_bps > 0.0 && e.t_known && rtt > 0 {
                let ratio = e.crit as f64 * 1e3 / rtt as f64;
                if ratio < k && x < k {
                    x += ratio;
                    continue;
                }
            }
            a += Self::counted(e);
            if a >= self.cap {
                return 0.0;
            }
        }
        self.cap - a
    }

    /// Availbw(i) with fctlab's projection of the nearly completed flows ahead (`EarlyStartRule::Projection`).
    fn availbw_projection(&self, p: &RateParams, now: Ps, queue_bytes: u64, i: usize) -> f64 {
        let k = p.early_start_k;
        let mut a = 0.0;
        // Early Start: how long (ps from now) the nearly completed flows ahead keep the link busy
        let cap = self.cap.max(1.0);
        let mut busy = 0.0f64;
        for e in &self.list[..i] {
            let rtt = self.rtt_of(e);
            let early =
                p.early_start && e.rate_bps > 0.0 && e.t_known && rtt > 0 && e.crit as f64 * 1e3 < k * rtt as f64;
            if early {
                // its bits left (T_H is at the sender's line rate, taken as this port's); it sends at its current
                // rate until the last raise of its grant here reaches it (a flow accepted but not sending yet:
                // from its data's due time, at its grant, for one loop delay), then the rest at C after the
                // flows ahead of it
                let mut bits = e.crit as f64 * 1e-9 * self.link_bps;
                let (slow_from, slow_to, slow_bps) = if e.cur_bps > 0.0 {
                    bits = (bits - e.cur_bps * (now - e.seen) as f64 / PS_PER_S as f64).max(0.0);
                    let to = if e.cur_bps < e.rate_bps { e.effect_at.max(now) } else { now };
                    (now, to, e.cur_bps)
                } else {
                    let start = e.due_at.max(now);
                    (start, start + self.loop_delay(p, e, queue_bytes), e.rate_bps)
                };
                let slow_bits = slow_bps * (slow_to - slow_from) as f64 / PS_PER_S as f64;
                let end = if bits <= slow_bits {
                    (slow_from - now) as f64 + bits / slow_bps * PS_PER_S as f64
                } else {
                    busy.max((slow_to - now) as f64) + (bits - slow_bits) / cap * PS_PER_S as f64
                };
                busy = busy.max(end);
                continue;
            }
            // a flow this port holds back (paused here, or granted less than it asked for here) keeps what it
            // asked for: bandwidth freed here goes to the most critical flow waiting for it, whichever probe
            // arrives first, and no less critical flow slips in with the crumbs (it would then count as
            // sending, and its criticality would overtake the paused flow's)
            a += Self::counted(e);
            if a >= self.cap {
                return 0.0;
            }
        }
        if busy <= 0.0 {
            return self.cap - a;
        }
        // the rate written now reaches this port as data one loop delay d from now, and the next packet's
        // decision one d later: the flow gets the share of that second span the finishing flows leave free
        let d = self.loop_delay(p, &self.list[i], queue_bytes) as f64;
        if d <= 0.0 {
            return 0.0;
        }
        (self.cap - a) * ((2.0 * d - busy) / d).clamp(0.0, 1.0)
    }

    /// The loop delay of flow `e`: how long after one of its packets enters this port the decision written into
    /// it comes back here as data at that rate: the packet's wait in this port's queue, the flow's round trip,
    /// and one full-size segment's serialization (the RTT of a header-only probe leaves it out).
    fn loop_delay(&self, p: &RateParams, e: &PdqEntry, queue_bytes: u64) -> Ps {
        let ps = |bytes: f64| (bytes * 8.0 / self.link_bps * PS_PER_S as f64) as Ps;
        let rtt = if e.rtt_min_ns > 0 { e.rtt_min_ns as Ps * 1000 } else { self.rtt_of(e) };
        debug_assert!(self.pp.of(p), "an agent is called with the parameters it was made with");
        rtt + ps(queue_bytes as f64) + self.pp.seg_ps
    }

    /// The flow's RTT as its last header stated it, or the port's average before it has one (a SYN).
    #[inline]
    fn rtt_of(&self, e: &PdqEntry) -> Ps {
        if e.rtt_ns > 0 {
            e.rtt_ns as Ps * 1000
        } else {
            self.avg_rtt as Ps
        }
    }

    /// The flow accepted last (dampening) is in the list ahead of position `i`: accepting the flow at `i` now
    /// follows the list's order (Early Start handing over to the next flow), not a switch back and forth.
    fn damp_ahead(&self, i: usize) -> bool {
        self.list[..i].iter().any(|e| e.flow == self.damp_flow)
    }

    /// The flow accepted last (dampening) still holds only a tentative grant (its answer has not passed back
    /// through this port): a more critical flow may preempt it, and dampening does not hold that flow back.
    fn damp_tentative(&self) -> bool {
        self.list.iter().any(|e| e.flow == self.damp_flow && e.tentative)
    }

    /// Pause the flow of header `h`, which has `ahead` flows ahead of it in the list.
    fn pause(&mut self, p: &RateParams, h: &mut RateHdr, ahead: usize, entry: Option<usize>) {
        h.rate = 0;
        h.pauseby = self.id;
        let ih = if p.suppressed_probing { (p.probe_factor * ahead as f64).ceil().clamp(1.0, 255.0) as u8 } else { 1 };
        h.probe_rtts = h.probe_rtts.max(ih);
        if let Some(i) = entry {
            let e = &mut self.list[i];
            e.rate_bps = 0.0;
            e.held_here = true;
            e.probe_rtts = h.probe_rtts;
            e.tentative = false;
            e.revoked = false;
        }
    }

    fn pdq_forward(&mut self, p: &RateParams, now: Ps, queue_bytes: u64, flow: u32, h: &mut RateHdr) {
        if matches!(h.kind, kind::FIN | kind::TERM) {
            self.remove(flow);
            return;
        }
        self.expire(now);
        if h.pauseby != 0 && h.pauseby != self.id {
            // Algorithm 1: paused upstream
            self.remove(flow);
            return;
        }
        let (i, new) = match self.find(flow) {
            Some(i) => {
                // the entry takes the header's view of the flow and keeps this port's own decisions (rate,
                // I_H, due and effect times, tentative or revoked grant, preemption), in place
                let e = &mut self.list[i];
                let old_key = e.key();
                e.claim_bps = 0.0;
                e.req_bps = from_kbps(h.rate) as f64;
                e.held_here = true;
                e.deadline_us = h.deadline_us;
                e.crit = h.crit;
                e.t_known = h.t_known();
                e.rtt_ns = h.rtt_ns;
                if !(e.rtt_min_ns > 0 && (h.rtt_ns == 0 || e.rtt_min_ns < h.rtt_ns)) {
                    e.rtt_min_ns = h.rtt_ns;
                }
                e.expire = NEVER;
                e.seen = now;
                e.cur_bps = from_kbps(h.prev) as f64;
                let key = e.key();
                // (T_H falls with every packet, so the key mostly changes; the entry mostly stays where it is
                // in the order all the same: then there is nothing to move)
                if key == old_key
                    || (i == 0 || self.list[i - 1].key() <= key)
                        && self.list.get(i + 1).is_none_or(|next| next.key() > key)
                {
                    (i, false)
                } else {
                    let e = self.list.remove(i);
                    let j = self.slot(e.key());
                    self.list.insert(j, e);
                    (j, false)
                }
            }
            None => {
                let fresh = PdqEntry {
                    flow,
                    rate_bps: 0.0,
                    claim_bps: 0.0,
                    req_bps: from_kbps(h.rate) as f64,
                    held_here: true,
                    deadline_us: h.deadline_us,
                    crit: h.crit,
                    t_known: h.t_known(),
                    rtt_ns: h.rtt_ns,
                    rtt_min_ns: h.rtt_ns,
                    probe_rtts: 1,
                    expire: NEVER,
                    seen: now,
                    cur_bps: from_kbps(h.prev) as f64,
                    due_at: 0,
                    effect_at: 0,
                    tentative: false,
                    revoked: false,
                    preempt_bps: 0.0,
                    preempt_until: 0,
                };
                let bound = self.bound(p);
                let room = self.list.len() < bound || self.list.last().is_some_and(|l| fresh.key() < l.key());
                if !room {
                    if p.outside_list == OutsideList::FairShare {
                        // a fair share of what the list's flows leave, among the flows outside it
                        let r = if h.rtt_ns > 0 { h.rtt_ns as f64 * 1000.0 } else { self.avg_rtt };
                        self.out_win += r;
                        let used: f64 = self.list.iter().map(Self::counted).sum();
                        let share = (self.cap - used).max(0.0) / self.out_flows.max(1.0);
                        let w = to_kbps(share.min(from_kbps(h.rate) as f64) as u64);
                        if w > 0 {
                            h.rate = w;
                            return;
                        }
                    }
                    let ahead = self.list.len();
                    self.pause(p, h, ahead, None);
                    return;
                }
                let j = self.slot(fresh.key());
                self.list.insert(j, fresh);
                if self.list.len() > bound {
                    if let Some(last) = self.list.pop() {
                        if last.revoked || last.tentative && last.rate_bps > 0.0 {
                            // (it is less critical than every flow the list holds, so it gets nothing here)
                            self.dropped[self.dropped_next] = last.flow;
                            self.dropped_next = (self.dropped_next + 1) % self.dropped.len();
                        }
                    }
                }
                (j, true)
            }
        };
        // (a data packet shows the flow sending, whatever this port last decided: an acceptance may still have
        // been on its way back when the port paused it)
        let sending = self.list[i].rate_bps > 0.0 || h.kind == kind::DATA;
        let avail = self.availbw(p, now, queue_bytes, i);
        let want = avail.min(from_kbps(h.rate) as f64);
        // for a flow not sending yet, what less critical flows accepted here but not sending yet will use is not
        // free: their data is on its way (a sending flow keeps its rate, whatever Early Start let in behind it;
        // and a less critical flow that is sending is paused at its next packet, so its data stops about when
        // this flow's starts)
        let (mut behind, mut tentative) = (0.0, 0.0);
        if !sending {
            for e in self.list[i + 1..].iter().filter(|e| e.cur_bps == 0.0 && e.rate_bps > 0.0) {
                if e.tentative {
                    tentative += e.rate_bps;
                } else {
                    behind += e.rate_bps;
                }
            }
        }
        let mut need = want - (avail - behind - tentative);
        if want > 0.0 && need > 0.0 && (tentative > 0.0 && avail - behind > 0.0 || new && behind > 0.0) {
            // preemption (Algorithm 1): the grants of less critical flows whose answers have not passed back
            // through this port yet are taken back, least critical first, as far as this flow needs them; each
            // answer becomes a pause on its way back (see `pdq_reverse`), so those senders never start
            for j in (i + 1..self.list.len()).rev() {
                let e = &mut self.list[j];
                if need <= 0.0 {
                    break;
                }
                if e.tentative && e.cur_bps == 0.0 && e.rate_bps > 0.0 {
                    need -= e.rate_bps;
                    tentative -= e.rate_bps;
                    e.rate_bps = 0.0;
                    e.held_here = true;
                    e.revoked = true;
                    if e.flow == self.damp_flow {
                        self.damp_until = 0;
                    }
                }
            }
            // a new flow also preempts committed grants (their senders start, and their first packets here pause
            // them one loop delay later), as long as the data of preempted flows still on its way here stays
            // within one link's worth of rate: at most about a bandwidth-delay product queued, not one per flow
            // of an incast
            if new && need > 0.0 && behind > 0.0 {
                let mut overlap: f64 =
                    self.list.iter().filter(|e| e.preempt_until > now).map(|e| e.preempt_bps).sum();
                for j in (i + 1..self.list.len()).rev() {
                    if need <= 0.0 {
                        break;
                    }
                    let e = &self.list[j];
                    if !e.tentative && e.cur_bps == 0.0 && e.rate_bps > 0.0 && overlap + e.rate_bps <= self.link_bps {
                        let until = e.due_at.max(now) + self.loop_delay(p, e, queue_bytes);
                        let e = &mut self.list[j];
                        overlap += e.rate_bps;
                        need -= e.rate_bps;
                        behind -= e.rate_bps;
                        e.preempt_bps = e.rate_bps;
                        e.preempt_until = until;
                        e.rate_bps = 0.0;
                        e.held_here = true;
                        if e.flow == self.damp_flow {
                            self.damp_until = 0;
                        }
                    }
                }
            }
        }
        let behind = behind.max(0.0) + tentative.max(0.0);
        let w = want.min((avail - behind).max(0.0));
        let wk = to_kbps(w as u64);
        self.list[i].claim_bps = if wk < to_kbps(want as u64) { want } else { 0.0 };
        self.list[i].held_here = wk < h.rate;
        if wk == 0 {
            self.pause(p, h, i, Some(i));
        } else if !sending && !new && now < self.damp_until && self.damp_flow != flow && !self.damp_ahead(i)
            && !self.damp_tentative()
        {
            // dampening: another paused flow, less critical, was accepted moments ago
            self.pause(p, h, i, Some(i));
        } else {
            h.rate = wk;
            let r = from_kbps(h.rate) as f64;
            let delay = self.loop_delay(p, &self.list[i], queue_bytes);
            let e = &mut self.list[i];
            if r > e.rate_bps.max(e.cur_bps) {
                e.effect_at = now + delay;
            }
            e.rate_bps = r;
            e.tentative = !sending;
            e.revoked = false;
            if e.cur_bps == 0.0 && (!sending || e.due_at <= now) {
                // its data is due here one loop delay from now (an acceptance of an earlier probe still on its
                // way back would bring it no later)
                e.due_at = now + delay;
            }
            if !sending {
                let rtt = if self.avg_rtt > 0.0 { self.avg_rtt } else { 0.0 };
                self.damp_until = now + (p.dampening_rtts * rtt) as Ps;
                self.damp_flow = flow;
            }
        }
        self.touch(p, now, i);
    }

    fn pdq_reverse(&mut self, p: &RateParams, now: Ps, flow: u32, h: &mut RateHdr) {
        if h.bits & BIT_DONE != 0 || (h.pauseby != 0 && h.pauseby != self.id) {
            // the flow has finished, or another port paused it (Algorithm 2)
            self.remove(flow);
            return;
        }
        let found = self.find(flow);
        if let Some(i) = found {
            if self.list[i].revoked && h.pauseby == 0 {
                // a more critical flow preempted this one's grant before its answer came back: it is paused here
                self.pause(p, h, i, Some(i));
            }
            self.list[i].tentative = false;
            self.list[i].revoked = false;
        } else if h.pauseby == 0 && h.rate > 0 {
            if let Some(k) = self.dropped.iter().position(|&f| f == flow) {
                // pushed out of the list after a tentative grant here: paused here, as a flow the list has no
                // room for
                self.dropped[k] = u32::MAX;
                let ahead = self.list.len();
                self.pause(p, h, ahead, None);
            }
        }
        if h.pauseby != 0 {
            h.rate = 0;
        }
        if let Some(i) = found {
            let rate = from_kbps(h.rate) as f64;
            if rate < self.list[i].rate_bps {
                // a port further on grants less than this one did: it, not this port, holds the flow back
                self.list[i].held_here = false;
            }
            self.list[i].rate_bps = rate;
            self.touch(p, now, i);
        }
    }
}

#[cfg(test)]
mod per_packet_tests {
    use super::*;
    use crate::config::SchemeName;

    fn pdq_params(rto_min_us: u64, rto_rtts: f64) -> RateParams {
        let mut p = RateParams::for_scheme(SchemeName::Pdq);
        p.rto_min = rto_min_us * PS_PER_US;
        p.rto_rtts = rto_rtts;
        p
    }

    /// The stale time's shortcut gives the formula's value (`RateParams::rto`, `tx_time`), around the flat
    /// timeout's end, where the gap starts to count, and at the extremes.
    #[test]
    fn stale_span_is_the_formula() {
        for (rto_min_us, rto_rtts) in [(2000, 3.0), (1, 3.0), (10, 2.5), (2000, 0.0), (300, 1e-3), (2000, 7.1)] {
            let p = pdq_params(rto_min_us, rto_rtts);
            let a = RateAgent::new(&p, 10_000_000_000);
            let flat = a.pp.rto_flat_to;
            assert!(p.rto(flat) == p.rto_min.max(PS_PER_US) && (flat == 1 << 62 || p.rto(flat + 1) > p.rto_min));
            let mut rtts = vec![1, 999, 1000, 20_000_000, 150_000_000, p.rto_init, 1 << 40];
            rtts.extend([flat.saturating_sub(1), flat, flat.saturating_add(1)].into_iter().filter(|&r| r < 1 << 41));
            for rtt in rtts {
                for probe in [1, 2, 5, 255] {
                    for kbps in [0u64, 1, 7, 1000, 25_999, 26_000, 26_001, 1_000_000, 9_999_999, 10_000_000] {
                        let rate_bps = (kbps * 1000) as f64;
                        let gap = if rate_bps > 0.0 { tx_time(p.mss + p.header, rate_bps as u64) } else { 0 };
                        let want = (4 * (rtt * probe + gap)).max(p.rto(rtt) + rtt);
                        assert_eq!(a.stale_span(&p, rtt, probe, rate_bps), want, "rtt {rtt} I_H {probe} {kbps} kbit/s");
                    }
                }
            }
        }
    }

    /// The loop delay's segment is the one it computed per packet.
    #[test]
    fn segment_time_is_the_per_packet_one() {
        let p = pdq_params(2000, 3.0);
        for rate in [1_000_000_000u64, 10_000_000_000, 40_000_000_000, 100_000_000_000, 3_333_333_333] {
            let a = RateAgent::new(&p, rate);
            let once = ((p.mss + p.header) as f64 * 8.0 / rate as f64 * PS_PER_S as f64) as Ps;
            assert_eq!(a.pp.seg_ps, once);
        }
    }
}
