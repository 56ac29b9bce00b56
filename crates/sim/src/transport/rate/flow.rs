//! Both ends of one explicit-rate flow.
//!
//! Where a rule comes from: the PDQ paper (Hong, Caesar, Godfrey, SIGCOMM 2012; sections 5.4 and 5.6 are quoted
//! from the copy in shared/papers), the D3 paper (Wilson et al., SIGCOMM 2011), RCP (Dukkipati 2007); "chosen"
//! marks what the papers leave open.
//!
//! Sender (all three schemes):
//! - `start` sends a SYN (header only, `ack_bytes` on the wire) carrying the request; its SYN-ACK echoes the
//!   path's answer, and data starts then (PDQ section 5.4: "one RTT latency for the sender to receive the
//!   SYN-ACK"; D3 and RCP likewise learn their first rate from the SYN). A lost SYN or SYN-ACK is repeated
//!   after the retransmission timeout (chosen: without back-off; the request is small).
//! - Pacing: a segment leaves `tx_time(wire, rate)` after the previous one (rate capped at the NIC's line rate);
//!   [`RateFlow::deadline`] is the next send time while there is something to send.
//! - Every data packet asks for the line rate; each switch lowers the rate field to what it grants, and the
//!   ACK brings the decision back. RCP and PDQ apply every ACK's rate (RCP: the source takes the rate its ACKs
//!   carry; PDQ: the sender follows R_H and P_H of each ACK). D3 asks once per RTT: the first
//!   data packet after a round trip carries the request, and only that packet's ACK changes the allocation.
//! - Rate 0 (PDQ paused, D3 nothing granted): the sender sends a header-only probe every I_H RTTs (PDQ, I_H
//!   from the switch that paused it, at least one RTT) or a header-only request every RTT (D3). PDQ counts the
//!   I_H RTTs from the last request that left, the SYN included: a flow paused at its SYN probes as soon as
//!   the SYN-ACK says so when I_H is one RTT (it waited one RTT more before). Chosen: one probe at a time; the
//!   next leaves when the last one's answer came back (or a retransmission timeout after it, if it or its
//!   answer was lost), I_H RTTs after the last one left. With the interval exactly one smoothed RTT, the timer
//!   used to fire just before the answer arrived, and the switch saw a second probe of a flow it had just
//!   accepted as one still waiting (Early Start projects such a flow from its acceptance, see `agent.rs`).
//! - Rate refresh (chosen): a flow whose next segment is more than one smoothed RTT after its last packet sends
//!   a header-only probe (D3: request) at that RTT, so that a flow slowed to a trickle still learns a new rate,
//!   and the switches a fresh view of it, once per RTT (see `refresh_at`).
//! - RTT_H: the headers carry the sender's latest RTT sample (chosen; the smoothed RTT lags for many round
//!   trips after a queue drains, and the switches average the samples themselves). The sender's own timers
//!   (probe interval, request period, retransmission timeout) use the smoothed RTT (gain 1/8).
//! - T_H (PDQ's expected transmission time) is the unsent bytes, headers included, at the sender's line rate.
//!   Where the NIC is faster than the bottleneck this underestimates the time left, and Early Start starts the
//!   next flow early.
//! - PDQ's headers also carry the rate the sender paces at when the packet leaves (chosen, in the field D3
//!   uses for its allocation): a switch then knows which of its grants a flow already follows, which Early
//!   Start's projection of the finishing flows needs (see `agent.rs`).
//! - Termination (only flows with a deadline):
//!   PDQ with Early Termination gives up when (1) the deadline has passed, (2) the time to send its unsent
//!   bytes at line rate exceeds the time left, or (3) it is paused and that time plus one RTT (to be accepted
//!   again) exceeds the time left. Conditions (2) and (3) need the flow's size, so with a criticality other
//!   than `size` (the flow-size-unaware variants of section 5.6) only (1) applies.
//!   D3 quenches when the deadline has passed or the desired rate exceeds the line rate (the flow could not
//!   make it even alone).
//!   A terminated sender sends one TERM packet that releases the switches' state, and nothing more.
//! - Done: when every byte is acknowledged, a FIN (header only, unacknowledged) releases D3's allocation and
//!   PDQ's list entries along the path (RCP keeps no per-flow state and sends none).
//! - Losses: see the module docs of `transport::rate` (SACK scoreboard, 3 SACKs above a hole, timeout).
//!
//! Receiver: acknowledges every data packet, probe and SYN at once (ACK of `ack_bytes`), with the cumulative
//! ACK, the one-segment SACK of `transport::tcp`, the send stamp and RETX flag echoed, and the packet's header echoed;
//! once it holds every byte, its ACKs carry `BIT_DONE` (PDQ switches drop the flow from their lists on the
//! reverse path: the entry is released half an RTT before the sender knows). FIN and TERM get no ACK.

use super::header::{kind, RPacket, RateHdr, BIT_DONE, BIT_REQ, BIT_T_KNOWN, NO_DEADLINE_US};
use super::{from_kbps, to_kbps, RateCounters, RateOutcome, RateParams, RateScheme};
use crate::config::{Criticality, SizeInfo};
use crate::flows::NO_DEADLINE;
use crate::net::packet::{flags, since, stamp, NO_SACK};
use crate::transport::bitset::BitSet;
use crate::transport::scoreboard::{Marks, Scoreboard, Tally};
use crate::units::{tx_time, Ps, NEVER, PS_PER_US};

/// The sequence number of a SYN and of its SYN-ACK (as in `transport::tcp`).
pub const SYN_SEQ: u32 = u32::MAX;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// SYN sent, waiting for the SYN-ACK.
    Syn,
    Open,
    /// Every byte acknowledged.
    Done,
    /// Gave up.
    Terminated,
}

/// One flow, both ends.
#[derive(Debug, Clone)]
pub struct RateFlow {
    pub flow: u32,
    pub src: u32,
    pub dst: u32,
    /// Time of this flow's timer entry in the engine's event queue (NEVER when none), owned by the engine.
    pub timer_queued_at: Ps,
    pub counters: RateCounters,

    phase: Phase,
    size: u64,
    n_segs: u32,
    last_payload: u32,
    /// Absolute deadline or NO_DEADLINE.
    deadline_at: Ps,
    line_bps: u64,

    // --- sender: sequence and scoreboard ---
    snd_una: u32,
    snd_nxt: u32,
    /// The SACK scoreboard, shared with TCP: its counts, its scan positions and its bits.
    tally: Tally,
    marks: Marks,
    board: Scoreboard,

    // --- sender: rate, timers ---
    /// The rate in use (bits/s, at most the line rate); 0 when paused / nothing granted.
    rate_bps: u64,
    last_send: Ps,
    next_send: Ps,
    /// Next probe (rate 0) or D3 zero-rate request.
    probe_at: Ps,
    rto_at: Ps,
    /// Smoothed RTT (0: no sample yet), for the sender's own timers.
    srtt: Ps,
    /// The latest RTT sample, which the headers carry (RTT_H): the switches average them over many packets
    /// themselves, and a sender's smoothed RTT lags for many round trips after a queue drains (a slow flow
    /// takes few samples), which would slow RCP's and PDQ's control loops for as long.
    last_rtt: Ps,
    /// PDQ: I_H of the last pause.
    probe_rtts: u8,
    /// PDQ: the criticality rank the sender states with `Criticality::Random` (drawn once).
    crit_random: u32,
    /// The flow has a deadline and its scheme gives up on deadlines (PDQ with Early Termination, D3).
    can_terminate: bool,
    /// Something left the sender (a TERM is then due when it gives up).
    sent_any: bool,
    /// Wire bytes of the last packet sent (the pacing gap after it).
    last_wire: u32,
    /// When the last header-only probe or request left.
    last_probe: Ps,
    /// D3: the allocation held (kbit/s), the desired rate of the last request (kbit/s), when the next request
    /// is due, and when an unanswered one is presumed lost (NEVER: answered).
    alloc_kbps: u32,
    desired_kbps: u32,
    req_due: Ps,
    req_retry: Ps,
    /// The scheme is D3.
    d3: bool,
    /// What the sender knows of its size (`scheme.size_info`) and the trace's estimate and bounds
    /// ([`RateFlow::set_known`]; exact by default).
    known: SizeInfo,
    known_cols: [u64; 3],

    // --- receiver ---
    rcv_nxt: u32,
    rcvd: BitSet,
    rx_done: bool,
}

impl RateFlow {
    /// A new flow of `size` bytes (a zero-byte flow is one empty segment) that should finish by `deadline`
    /// (absolute, or `NO_DEADLINE`), sent from a NIC of `line_rate_bps`; `random` is a draw from the run's
    /// generator (the criticality of `Criticality::Random`). Allocates its scoreboards once.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        p: &RateParams,
        flow: u32,
        src: u32,
        dst: u32,
        size: u64,
        deadline: Ps,
        line_rate_bps: u64,
        random: u64,
    ) -> Self {
        assert!(line_rate_bps > 0, "flow {flow}: line rate 0");
        let n = size.div_ceil(p.mss as u64).max(1);
        assert!(n < u32::MAX as u64 - 1, "flow {flow} has too many segments ({n})");
        let n_segs = n as u32;
        let last_payload = (size - (n - 1) * p.mss as u64) as u32;
        let can_terminate = deadline != NO_DEADLINE
            && match p.scheme {
                RateScheme::Rcp => false,
                RateScheme::D3 => true,
                RateScheme::Pdq => p.early_termination,
            };
        RateFlow {
            flow,
            src,
            dst,
            timer_queued_at: NEVER,
            counters: RateCounters::default(),
            phase: Phase::Syn,
            size,
            n_segs,
            last_payload,
            deadline_at: deadline,
            line_bps: line_rate_bps,
            snd_una: 0,
            snd_nxt: 0,
            tally: Tally::default(),
            marks: Marks::default(),
            board: Scoreboard::new(n_segs),
            rate_bps: 0,
            last_send: 0,
            next_send: NEVER,
            probe_at: NEVER,
            rto_at: NEVER,
            srtt: 0,
            last_rtt: 0,
            probe_rtts: 1,
            crit_random: (random >> 32) as u32,
            can_terminate,
            sent_any: false,
            last_wire: p.mss + p.header,
            last_probe: 0,
            alloc_kbps: 0,
            desired_kbps: 0,
            req_due: 0,
            req_retry: NEVER,
            d3: p.scheme == RateScheme::D3,
            known: SizeInfo::Exact,
            known_cols: [size; 3],
            rcv_nxt: 0,
            rcvd: BitSet::new(n_segs),
            rx_done: false,
        }
    }

    // ------------------------------------------------------------------ queries

    /// The rate the sender uses now (bits/s; 0 while paused or granted nothing).
    pub fn rate_bps(&self) -> u64 {
        self.rate_bps
    }

    /// The sender's smoothed RTT (0 before the first sample).
    pub fn srtt(&self) -> Ps {
        self.srtt
    }

    /// The sender is open and sends nothing but probes (PDQ paused, D3 granted nothing).
    pub fn paused(&self) -> bool {
        self.phase == Phase::Open && self.rate_bps == 0
    }

    pub fn sender_done(&self) -> bool {
        self.phase == Phase::Done
    }

    pub fn terminated(&self) -> bool {
        self.phase == Phase::Terminated
    }

    pub fn receiver_done(&self) -> bool {
        self.rx_done
    }

    pub fn snd_una(&self) -> u32 {
        self.snd_una
    }

    /// The next new segment.
    pub fn snd_nxt(&self) -> u32 {
        self.snd_nxt
    }

    pub fn n_segs(&self) -> u32 {
        self.n_segs
    }

    /// PDQ: the inter-probing time (in RTTs) of the last pause.
    pub fn probe_rtts(&self) -> u8 {
        self.probe_rtts
    }

    /// D3: the allocation held, in kbit/s.
    pub fn d3_allocation_kbps(&self) -> u32 {
        self.alloc_kbps
    }

    /// The earliest instant the flow needs `on_timer` (NEVER if none): the retransmission timer (the SYN's
    /// before the flow is open), the next send time while it may send and has something to send, the next
    /// probe while its rate is 0, and its deadline when it would give up there.
    pub fn deadline(&self) -> Ps {
        match self.phase {
            Phase::Done | Phase::Terminated => NEVER,
            Phase::Syn => self.rto_at.min(self.give_up_at()),
            Phase::Open => {
                let mut d = self.rto_at.min(self.give_up_at());
                if self.rate_bps == 0 {
                    d = d.min(self.probe_at);
                } else if self.has_work() {
                    d = d.min(self.next_send);
                    // the next segment is more than a round trip away: a header-only refresh is due first
                    if self.refresh_at() < self.next_send {
                        d = d.min(self.refresh_at());
                    }
                }
                d
            }
        }
    }

    #[inline]
    fn has_work(&self) -> bool {
        self.tally.lost_unsent() > 0 || self.snd_nxt < self.n_segs
    }

    #[inline]
    fn give_up_at(&self) -> Ps {
        if self.can_terminate {
            self.deadline_at
        } else {
            NEVER
        }
    }

    #[inline]
    fn payload_of(&self, p: &RateParams, seg: u32) -> u32 {
        if seg + 1 == self.n_segs {
            self.last_payload
        } else {
            p.mss
        }
    }

    /// Payload bytes sent once so far (new data).
    #[inline]
    fn sent_new_bytes(&self, p: &RateParams) -> u64 {
        (self.snd_nxt as u64 * p.mss as u64).min(self.size)
    }

    /// Bytes not yet sent once (new data), headers included.
    fn unsent_wire_bytes(&self, p: &RateParams) -> u64 {
        if self.snd_nxt >= self.n_segs {
            return 0;
        }
        let segs = (self.n_segs - self.snd_nxt) as u64;
        self.size - self.sent_new_bytes(p) + segs * p.header as u64
    }

    /// What the sender knows of its size: `info` (`scheme.size_info`) and the trace's estimate and bounds.
    pub fn set_known(&mut self, info: SizeInfo, estimate: u64, lower: u64, upper: u64) {
        self.known = info;
        self.known_cols = [estimate, lower, upper];
    }

    /// The unsent bytes as the sender knows them, headers included: the true ones with exact sizes, else the
    /// known remaining bytes past those sent once ([`SizeInfo::remaining`]) with a header per segment they would
    /// fill; 0 once every segment has been sent (the sender knows it has nothing more).
    fn known_unsent_wire_bytes(&self, p: &RateParams) -> u64 {
        if matches!(self.known, SizeInfo::Exact | SizeInfo::None) || self.snd_nxt >= self.n_segs {
            return self.unsent_wire_bytes(p);
        }
        let [estimate, lower, upper] = self.known_cols;
        let left = self.known.remaining(self.size, estimate, lower, upper, self.sent_new_bytes(p));
        left + left.div_ceil(p.mss as u64) * p.header as u64
    }

    /// The time to send the unsent bytes (as the sender knows them) at line rate (PDQ's T_H), in ps.
    fn t_remaining(&self, p: &RateParams) -> Ps {
        let b = self.known_unsent_wire_bytes(p) as u128;
        (b * 8 * crate::units::PS_PER_S as u128 / self.line_bps as u128) as Ps
    }

    /// D3's desired rate: the unsent bytes over the time left to the deadline, in kbit/s
    /// rounded up; 0 without a deadline (such flows ask only for a fair share); u64::MAX once it has passed.
    fn d3_desired_kbps(&self, p: &RateParams, now: Ps) -> u64 {
        if self.deadline_at == NO_DEADLINE {
            return 0;
        }
        if now >= self.deadline_at {
            return u64::MAX;
        }
        let left = (self.deadline_at - now) as u128;
        let bits = self.known_unsent_wire_bytes(p) as u128 * 8;
        // kbit/s = bits x 1e12 / ps / 1e3
        (bits * 1_000_000_000).div_ceil(left).min(u64::MAX as u128) as u64
    }

    /// The sender's RTT estimate for intervals: the smoothed RTT, or the initial RTO before any sample.
    #[inline]
    fn rtt_or(&self, p: &RateParams) -> Ps {
        if self.srtt > 0 {
            self.srtt
        } else {
            p.rto_init.max(PS_PER_US)
        }
    }

    /// Whether the sender gives up now (see the module docs for each scheme's rule).
    fn should_terminate(&self, p: &RateParams, now: Ps) -> bool {
        if !self.can_terminate {
            return false;
        }
        if now >= self.deadline_at {
            return true;
        }
        match p.scheme {
            RateScheme::Rcp => false,
            RateScheme::Pdq => {
                if p.criticality != Criticality::Size || self.snd_nxt >= self.n_segs {
                    return false;
                }
                let t = self.t_remaining(p);
                let paused = self.phase == Phase::Open && self.rate_bps == 0;
                now + t > self.deadline_at || (paused && now + t + self.rtt_or(p) > self.deadline_at)
            }
            RateScheme::D3 => self.d3_desired_kbps(p, now) > to_kbps(self.line_bps) as u64,
        }
    }

    // ------------------------------------------------------------------ packets out

    /// The header of a packet the sender sends (every kind): the request for the line rate, and the scheme's
    /// fields.
    fn fwd_hdr(&self, p: &RateParams, k: u8) -> RateHdr {
        let mut h = RateHdr {
            rate: to_kbps(self.line_bps),
            rtt_ns: (self.last_rtt / 1000).min(u32::MAX as Ps) as u32,
            kind: k,
            ..RateHdr::default()
        };
        match p.scheme {
            RateScheme::Rcp => {}
            RateScheme::Pdq => {
                h.deadline_us = if self.deadline_at == NO_DEADLINE {
                    NO_DEADLINE_US
                } else {
                    (self.deadline_at / PS_PER_US).min(NO_DEADLINE_US as Ps - 1) as u32
                };
                h.prev = to_kbps(self.rate_bps);
                match p.criticality {
                    Criticality::Size => {
                        h.crit = (self.t_remaining(p) / 1000).min(u32::MAX as Ps) as u32;
                        h.bits |= BIT_T_KNOWN;
                    }
                    Criticality::Random => h.crit = self.crit_random,
                    Criticality::BytesSent => {
                        // section 5.6: the estimate (bytes sent) changes only every `crit_update_bytes`
                        let sent = self.sent_new_bytes(p);
                        h.crit = (sent - sent % p.crit_update_bytes).min(u32::MAX as u64) as u32;
                    }
                }
            }
            RateScheme::D3 => {
                h.prev = self.alloc_kbps;
                h.crit = self.desired_kbps;
                h.pauseby = self.desired_kbps;
            }
        }
        h
    }

    /// D3: make `h` a rate request: the new desired rate, the previous one, the allocation held.
    fn d3_request(&mut self, p: &RateParams, now: Ps, h: &mut RateHdr) {
        let want = self.d3_desired_kbps(p, now).min(u32::MAX as u64) as u32;
        h.bits |= BIT_REQ;
        h.crit = want;
        h.pauseby = self.desired_kbps;
        h.prev = self.alloc_kbps;
        self.desired_kbps = want;
        self.req_due = now + self.rtt_or(p);
        self.req_retry = now + p.rto(self.srtt);
    }

    /// While sending: when the rate must be refreshed at the latest, if no segment leaves before. A rate is
    /// only as fresh as the last packet that crossed the switches, and a flow slowed to a trickle would keep its
    /// trickle for long (and the switches their stale view of it). Chosen: one packet per RTT at least, the
    /// pace at which RCP and PDQ update rates (RCP: "every RTT"; PDQ's controller period is 2 RTTs); D3 asks
    /// once per RTT anyway.
    #[inline]
    fn refresh_at(&self) -> Ps {
        if self.d3 {
            self.d3_req_at()
        } else if self.srtt == 0 {
            NEVER
        } else {
            self.last_send.max(self.last_probe) + self.srtt
        }
    }

    /// D3: when the next request is due: a round trip after the last one, and not while that one may still
    /// be answered (until a retransmission timeout has passed).
    #[inline]
    fn d3_req_at(&self) -> Ps {
        if self.req_retry == NEVER {
            self.req_due
        } else {
            self.req_due.max(self.req_retry)
        }
    }

    fn ctrl_packet(&self, p: &RateParams, now: Ps, seq: u32, h: RateHdr, f: u8) -> RPacket {
        RPacket {
            flow: self.flow,
            seq,
            sack: 0,
            dst: self.dst,
            wire: p.ctrl_wire(),
            prio: 0,
            flags: flags::PROBE | f,
            ts: stamp(now),
            hdr: h,
        }
    }

    fn send_syn(&mut self, p: &RateParams, now: Ps, retx: bool, out: &mut Vec<RPacket>) {
        let mut h = self.fwd_hdr(p, kind::SYN);
        if p.scheme == RateScheme::D3 {
            self.d3_request(p, now, &mut h);
        }
        out.push(self.ctrl_packet(p, now, SYN_SEQ, h, if retx { flags::RETX } else { 0 }));
        self.sent_any = true;
        self.last_probe = now;
        self.rto_at = now + p.rto(self.srtt);
    }

    fn send_probe(&mut self, p: &RateParams, now: Ps, out: &mut Vec<RPacket>) {
        let mut h = self.fwd_hdr(p, kind::PROBE);
        if p.scheme == RateScheme::D3 {
            self.d3_request(p, now, &mut h);
        }
        out.push(self.ctrl_packet(p, now, self.snd_una, h, 0));
        self.counters.probes += 1;
        self.last_probe = now;
        self.probe_at = now + self.probe_interval(p);
        if p.scheme == RateScheme::Pdq {
            // one probe at a time: the next goes when this one is answered (see `on_ack`), or after a
            // retransmission timeout if it or its answer was lost
            self.probe_at = self.probe_at.max(now + p.rto(self.srtt));
        }
    }

    /// While the rate is 0: PDQ probes every I_H RTTs (at least one), D3 requests every RTT.
    fn probe_interval(&self, p: &RateParams) -> Ps {
        let n = if p.scheme == RateScheme::Pdq { self.probe_rtts.max(1) as Ps } else { 1 };
        n * self.rtt_or(p)
    }

    fn send_segment(&mut self, p: &RateParams, now: Ps, seg: u32, retx: bool, out: &mut Vec<RPacket>) {
        let payload = self.payload_of(p, seg);
        let mut h = self.fwd_hdr(p, kind::DATA);
        if self.d3 && now >= self.d3_req_at() {
            self.d3_request(p, now, &mut h);
        }
        let wire = payload + p.header;
        out.push(RPacket {
            flow: self.flow,
            seq: seg,
            sack: 0,
            dst: self.dst,
            wire: wire as u16,
            prio: 0,
            flags: if retx { flags::RETX } else { 0 },
            ts: stamp(now),
            hdr: h,
        });
        self.sent_any = true;
        self.counters.bytes_sent += payload as u64;
        if retx {
            self.counters.retransmits += 1;
        }
        self.last_send = now;
        self.last_wire = wire;
        self.next_send = now + tx_time(wire, self.rate_bps.min(self.line_bps));
        if self.rto_at == NEVER {
            self.rto_at = now + p.rto(self.srtt);
        }
    }

    /// The next lost segment not yet retransmitted, if any.
    fn next_lost(&mut self) -> Option<u32> {
        if self.tally.lost_unsent() == 0 {
            return None;
        }
        let s = self.board.next_lost(&self.tally, &mut self.marks, self.snd_una);
        debug_assert!(s.is_some(), "flow {}: {} lost segments unsent, none found", self.flow, self.tally.lost_unsent());
        s
    }

    /// Send one segment if the pacing clock allows: a lost one first, else the next new one.
    fn pump(&mut self, p: &RateParams, now: Ps, out: &mut Vec<RPacket>) {
        if self.phase != Phase::Open || self.rate_bps == 0 || self.next_send > now {
            return;
        }
        if let Some(s) = self.next_lost() {
            self.board.retransmitted(&mut self.tally, s);
            self.marks.retx_ptr = s + 1;
            self.send_segment(p, now, s, true, out);
        } else if self.snd_nxt < self.n_segs {
            let s = self.snd_nxt;
            self.snd_nxt += 1;
            self.send_segment(p, now, s, false, out);
        }
    }

    /// Take rate `bps` (capped at the line rate). From 0 the flow sends at once; between positive rates the
    /// next send time is recomputed from the last send; to 0 it stops and probes.
    fn set_rate(&mut self, p: &RateParams, now: Ps, bps: u64) {
        let bps = bps.min(self.line_bps);
        if bps == self.rate_bps {
            return;
        }
        let was = self.rate_bps;
        self.rate_bps = bps;
        if bps == 0 {
            self.next_send = NEVER;
            self.probe_at = now + self.probe_interval(p);
        } else {
            self.probe_at = NEVER;
            // (a rate change does not reset the clock: the gap after the last segment is recomputed at the new
            // rate, so a flow that was paused or slow may send at once)
            let paced = if self.snd_nxt > 0 && was > 0 { self.last_send + tx_time(self.last_wire, bps) } else { now };
            self.next_send = paced.max(now);
            if self.rto_at == NEVER && self.snd_una < self.snd_nxt {
                self.rto_at = now + p.rto(self.srtt);
            }
        }
    }

    /// The rate decision an ACK (or SYN-ACK, probe ACK) echoes.
    fn apply_rate(&mut self, p: &RateParams, now: Ps, h: &RateHdr) {
        match p.scheme {
            RateScheme::Rcp => self.set_rate(p, now, from_kbps(h.rate)),
            RateScheme::Pdq => {
                if h.pauseby != 0 || h.rate == 0 {
                    self.probe_rtts = h.probe_rtts.max(1);
                    self.set_rate(p, now, 0);
                } else {
                    self.set_rate(p, now, from_kbps(h.rate));
                }
            }
            RateScheme::D3 => {
                if h.is_req() {
                    self.alloc_kbps = h.rate;
                    self.req_retry = NEVER;
                    self.set_rate(p, now, from_kbps(h.rate));
                }
            }
        }
    }

    fn terminate(&mut self, p: &RateParams, now: Ps, out: &mut Vec<RPacket>) -> RateOutcome {
        if self.sent_any && p.scheme != RateScheme::Rcp {
            let h = self.fwd_hdr(p, kind::TERM);
            out.push(self.ctrl_packet(p, now, 0, h, 0));
        }
        self.phase = Phase::Terminated;
        self.release();
        RateOutcome { terminated: true, ..RateOutcome::default() }
    }

    fn release(&mut self) {
        self.rto_at = NEVER;
        self.next_send = NEVER;
        self.probe_at = NEVER;
        self.board.release();
    }

    // ------------------------------------------------------------------ events

    /// The flow starts at `now`: its SYN carries the first request. A flow that cannot meet its deadline even
    /// at line rate (PDQ with Early Termination, D3) sends nothing and gives up at its first timer, now.
    pub fn start(&mut self, p: &RateParams, now: Ps, out: &mut Vec<RPacket>) {
        if self.should_terminate(p, now) {
            self.rto_at = now;
            return;
        }
        self.send_syn(p, now, false, out);
    }

    /// A packet of this flow reached its destination host: at the receiver when `pkt.dst == self.dst`, else
    /// (an ACK) at the sender.
    pub fn on_packet(&mut self, p: &RateParams, now: Ps, pkt: &RPacket, out: &mut Vec<RPacket>) -> RateOutcome {
        if pkt.dst == self.dst {
            self.on_receiver(p, pkt, out)
        } else {
            self.on_ack(p, now, pkt, out)
        }
    }

    fn on_receiver(&mut self, p: &RateParams, pkt: &RPacket, out: &mut Vec<RPacket>) -> RateOutcome {
        let mut outcome = RateOutcome::default();
        let mut f = flags::ACK | (pkt.flags & flags::RETX);
        let (seq, sack) = match pkt.hdr.kind {
            kind::FIN | kind::TERM => return outcome,
            kind::SYN => {
                f |= flags::PROBE;
                (SYN_SEQ, NO_SACK)
            }
            kind::PROBE => {
                f |= flags::PROBE;
                (self.rcv_nxt, NO_SACK)
            }
            _ => {
                let s = pkt.seq;
                if s < self.n_segs && !self.rcvd.get(s) {
                    self.rcvd.set(s);
                    if s == self.rcv_nxt {
                        self.rcv_nxt = self.rcvd.first_zero_from(s).min(self.n_segs);
                    }
                }
                if self.rcv_nxt == self.n_segs && !self.rx_done {
                    self.rx_done = true;
                    outcome.receiver_done = true;
                }
                (self.rcv_nxt, if s > self.rcv_nxt && s < self.n_segs { s } else { NO_SACK })
            }
        };
        let mut h = pkt.hdr;
        if self.rx_done {
            h.bits |= BIT_DONE;
        }
        out.push(RPacket {
            flow: self.flow,
            seq,
            sack,
            dst: self.src,
            wire: p.ctrl_wire(),
            prio: 0,
            flags: f,
            ts: pkt.ts,
            hdr: h,
        });
        outcome
    }

    fn rtt_sample(&mut self, r: Ps) {
        let r = r.max(1);
        self.last_rtt = r;
        self.srtt = if self.srtt == 0 { r } else { (7 * self.srtt + r) / 8 };
    }

    fn on_ack(&mut self, p: &RateParams, now: Ps, ack: &RPacket, out: &mut Vec<RPacket>) -> RateOutcome {
        let mut outcome = RateOutcome::default();
        if matches!(self.phase, Phase::Done | Phase::Terminated) {
            return outcome;
        }
        // every ACK echoes the send stamp of the very copy it answers, so retransmissions give exact samples too
        // (the ambiguity Karn's rule avoids does not arise)
        self.rtt_sample(since(now, ack.ts));
        match ack.hdr.kind {
            kind::SYN => {
                if self.phase != Phase::Syn {
                    return outcome; // a late copy
                }
                self.phase = Phase::Open;
                self.rto_at = NEVER;
                // D3: the SYN was the first request; the next is due one RTT after it, i.e. now
                self.req_due = now;
                self.apply_rate(p, now, &ack.hdr);
                if self.rate_bps == 0 && self.probe_at == NEVER {
                    // PDQ: the SYN was the first request, and the sender probes every I_H RTTs: the next goes I_H
                    // RTTs after the SYN, at once when I_H is one RTT
                    let from = if p.scheme == RateScheme::Pdq { self.last_probe } else { now };
                    self.probe_at = (from + self.probe_interval(p)).max(now);
                }
            }
            _ if self.phase != Phase::Open => return outcome,
            kind::PROBE => {
                self.apply_rate(p, now, &ack.hdr);
                if p.scheme == RateScheme::Pdq && self.rate_bps == 0 {
                    // still paused: the next probe goes I_H RTTs after this one left (at once for I_H = 1, the
                    // answer having taken about one RTT), not before it was answered
                    self.probe_at = (self.last_probe + self.probe_interval(p)).max(now);
                }
            }
            _ => {
                self.on_data_ack(p, now, ack);
                self.apply_rate(p, now, &ack.hdr);
            }
        }
        if self.snd_una == self.n_segs {
            if p.scheme != RateScheme::Rcp {
                let h = self.fwd_hdr(p, kind::FIN);
                out.push(self.ctrl_packet(p, now, self.n_segs, h, 0));
            }
            self.phase = Phase::Done;
            self.release();
            outcome.sender_done = true;
            return outcome;
        }
        if self.should_terminate(p, now) {
            return self.terminate(p, now, out);
        }
        self.pump(p, now, out);
        outcome
    }

    /// Scoreboard update for an ACK of data: the cumulative ACK, its SACK block, loss marking.
    fn on_data_ack(&mut self, p: &RateParams, now: Ps, ack: &RPacket) {
        let cum = ack.seq.min(self.n_segs);
        if ack.sack != NO_SACK && ack.sack >= cum.max(self.snd_una) && ack.sack < self.snd_nxt {
            self.board.sack(&mut self.tally, &mut self.marks, ack.sack);
        }
        if cum > self.snd_una {
            self.board.ack_upto(&mut self.tally, self.snd_una, cum);
            self.snd_una = cum;
            self.snd_nxt = self.snd_nxt.max(cum);
            self.rto_at = if self.snd_una < self.snd_nxt { now + p.rto(self.srtt) } else { NEVER };
        }
        // a segment with `dupthresh` SACKed segments above it is lost (as TCP marks them)
        if self.marks.fack > self.snd_una + p.dupthresh {
            let upto = self.marks.fack - p.dupthresh;
            self.board.mark_lost_upto(&mut self.tally, &mut self.marks, self.snd_una, upto);
        }
    }

    /// The retransmission timer fired: every outstanding un-SACKed segment is lost and goes out again (before
    /// new data) at the current rate. While the rate is 0 the timer then rests until the flow sends again.
    fn on_rto(&mut self, p: &RateParams, now: Ps) {
        if self.snd_una >= self.snd_nxt {
            self.rto_at = NEVER;
            return;
        }
        self.counters.timeouts += 1;
        self.board.mark_all_lost(&mut self.tally, &mut self.marks, self.snd_una, self.snd_nxt);
        self.rto_at = if self.rate_bps > 0 { now + p.rto(self.srtt) } else { NEVER };
    }

    /// Called by the engine when `now >= self.deadline()`.
    pub fn on_timer(&mut self, p: &RateParams, now: Ps, out: &mut Vec<RPacket>) -> RateOutcome {
        if matches!(self.phase, Phase::Done | Phase::Terminated) {
            return RateOutcome::default();
        }
        if self.should_terminate(p, now) {
            return self.terminate(p, now, out);
        }
        if self.phase == Phase::Syn {
            if now >= self.rto_at {
                // the SYN or its SYN-ACK was lost: ask again (no back-off: the request is small)
                self.counters.timeouts += 1;
                self.send_syn(p, now, true, out);
            }
            return RateOutcome::default();
        }
        if now >= self.rto_at {
            self.on_rto(p, now);
        }
        if self.rate_bps == 0 && now >= self.probe_at {
            self.send_probe(p, now, out);
        } else if self.rate_bps > 0 && self.has_work() && now >= self.refresh_at() && now < self.next_send {
            // a rate so low that no segment leaves within a round trip: refresh it with a header-only probe (D3:
            // request)
            self.send_probe(p, now, out);
        }
        self.pump(p, now, out);
        RateOutcome::default()
    }
}
