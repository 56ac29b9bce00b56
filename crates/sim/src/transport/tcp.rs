//! TCP NewReno with a SACK scoreboard, and DCTCP, as one state machine per flow (both ends of the flow).
//!
//! What is modelled (RFC 5681, 6675, 6298, 8257; the DCTCP paper, SIGCOMM 2010):
//! - Sequence space in whole segments of `mss` payload bytes (the last may be shorter). By default every data
//!   segment is acknowledged at once (no delayed ACKs) and the data starts without a handshake; both are
//!   options (`transport.delayed_ack_segments`, `transport.handshake`, see `config.rs`). An ACK carries the cumulative ACK (next segment expected), the
//!   segment that triggered it when that segment is above the cumulative ACK (a one-segment SACK block),
//!   the echo of the segment's send time (to the ns, see `Packet::ts`) and retransmission flag (for RTT
//!   samples under Karn's rule), and
//!   the ECN echo of that one segment (DCTCP's per-packet echo, exact because ACKs are not delayed; with
//!   delayed ACKs, the receiver's CE state, acknowledged at once whenever it changes, and the sender counts an
//!   ACK for every segment it acknowledges).
//!   Deviation, written down: real SACK options repeat up to 3-4 blocks so that a lost ACK costs nothing;
//!   here a lost ACK loses its one block, which at worst makes the sender retransmit that segment again.
//! - Slow start and congestion avoidance in segments (cwnd += newly acked segments below ssthresh, else
//!   cwnd += newly acked / cwnd), optional window cap.
//! - Flow control (`transport.rwnd_bytes`, off by default): a fixed receive window. A new segment goes out only
//!   if its last byte lies within the cumulative ACK plus the window (SND.UNA + SND.WND); retransmissions
//!   are not limited. SACKed data leaves `pipe` but not the window, so a hole at the cumulative ACK stops the
//!   sender once the window is used up, and the receiver never holds more than the window out of order.
//! - Loss recovery: `dupack_threshold` duplicate ACKs start fast recovery (ssthresh = cwnd / 2, cwnd =
//!   ssthresh, fast retransmit of the first hole). The scoreboard marks a segment lost once `dupack_threshold`
//!   segments above it are SACKed (FACK-style), and a partial ACK marks the new first hole lost (NewReno)
//!   when a SACKed segment lies above it.
//!   While recovering, the sender keeps `pipe` (RFC 6675: outstanding - SACKed - lost + retransmitted) below
//!   cwnd, sending lost segments first, then new data. Recovery ends when the cumulative ACK reaches the
//!   highest segment sent when it began.
//! - Retransmission timer: RTO = max(rto_min, SRTT + 4 RTTVAR) (RFC 6298; alpha 1/8, beta 1/4), restarted on
//!   every ACK that advances the cumulative ACK, doubled on every timeout up to `rto_max` (exponential
//!   back-off), and recomputed only from samples of segments that were not retransmitted (Karn). On a
//!   timeout every outstanding un-SACKed segment is marked lost (SACK information is kept, as Linux does),
//!   ssthresh = cwnd / 2, cwnd = 1, and the sender slow-starts through the retransmissions.
//! - DCTCP: data is ECN-capable; alpha <- (1 - g) alpha + g F once per window of data, F being the fraction
//!   of ACKs in that window that echoed a mark; on an echoed mark, at most once per window of data,
//!   cwnd <- cwnd (1 - alpha / 2) and ssthresh <- cwnd. A loss is handled as TCP handles it.
//! - The application model (the RAX paper, section II): a flow's application may generate its bytes at a rate
//!   r_g (`gen_rate_bps`), after a part available at once (`cached_bytes`), and writes them into a send buffer
//!   of `transport.send_buffer_bytes` that holds the bytes not yet cumulatively acknowledged. A full buffer
//!   blocks the application: its generation pauses until ACKs free space (Linux's blocking `send()`), and the
//!   written bytes then grow at the smaller of r_g and the rate ACKs free space. The transport sends only
//!   whole segments whose every byte is written (`avail_segs`), except the flow's last; when it runs out of
//!   written data with its windows open it sets a timer for the instant the next segment will be written,
//!   or waits for an ACK when the buffer blocks. The generation is computed exactly in integers (bytes =
//!   floor(rate x elapsed)), lazily: at each timer, at every ACK that moves the cumulative ACK (before the
//!   buffer's bound moves with it), and when the sender runs out of written data. A flow without a rate whose
//!   bytes fit the buffer has `avail_segs = n_segs` from its start and never takes these paths.
//! - RAX (`policy::rax`): before each data segment a RAX flow brings its written bytes up to date, samples its
//!   copy rate when the interval has passed, and sets its priority from its remaining time. While a segment
//!   sent before the latest priority rise is unacknowledged (the segments sent after it, at a higher
//!   priority, may overtake it), duplicate ACKs do not start fast recovery (the paper, section III-B); each
//!   such suppressed fast retransmit is counted as a reordering.

use super::bitset::BitSet;
use crate::config::{
    Config, L2dctIncrease, OooHandling, PiasCount, PriorityLossRepair, RankAt, SchemeName, TransportKind,
};
use crate::policy::rax::RaxParams;
use crate::policy::{Bounds, Rank, Tagging};
use crate::net::packet::{flags, since, stamp, Packet, NO_SACK};
use crate::units::{Ps, NEVER, PS_PER_US};

/// The sequence number of a SYN and of its SYN-ACK (no data segment has it: flows have fewer segments).
pub const SYN_SEQ: u32 = u32::MAX;

/// Transport parameters shared by every flow of a run.
#[derive(Debug, Clone)]
pub struct TcpParams {
    pub mss: u32,
    pub header: u32,
    pub ack_bytes: u32,
    pub init_cwnd: f64,
    /// Window cap in segments (f64::INFINITY when none).
    pub max_cwnd: f64,
    /// The receiver's advertised window in bytes (u64::MAX when none): no new segment ends beyond
    /// snd_una + rwnd.
    pub rwnd: u64,
    pub rto_min: Ps,
    pub rto_init: Ps,
    pub rto_max: Ps,
    /// Duplicate ACKs (and SACKed segments above a hole) that signal a loss; 0: none (timeouts only).
    pub dupack_threshold: u32,
    pub dctcp: bool,
    pub g: f64,
    pub alpha_init: f64,
    pub ack_priority: u8,
    /// How data packets get their priority (fixed, PIAS).
    pub tagging: Tagging,
    /// What data packets carry as their rank (pFabric, LAS), if anything, and whether it is measured at the
    /// packet's own offset (`scheme.rank_at = "packet"`) or at the sender's acknowledged / sent state.
    pub rank: Rank,
    pub rank_at_packet: bool,
    /// PIAS counts bytes per connection (`scheme.pias_count = "per_connection"`): a flow's tag adds the count its
    /// connection carried in; the count restarts after `pias_timeout_reset` consecutive timeouts (0: never).
    pub pias_per_connection: bool,
    pub pias_timeout_reset: u32,
    /// PIAS per connection: a message written more than this long after the previous one starts from 0.
    pub pias_idle: Ps,
    /// Whether loss recovery after duplicate ACKs halves the window (TCP, DCTCP) or only repairs the holes
    /// (pFabric's minimal rate control, which reacts to timeouts only).
    pub loss_cuts_window: bool,
    /// Consecutive timeouts after which the flow probes instead of retransmitting (0 = never).
    pub probe_after: u32,
    /// L2DCT's weighting of increase and decrease by bytes sent, when the scheme is L2DCT.
    pub l2dct: Option<L2dct>,
    /// QCLIMB's out-of-order handling (section 3.2): priority-based loss detection at the receiver, customized
    /// ACKs (scoreboard update or retransmit), no duplicate ACKs for reordered data.
    pub qclimb_ooo: bool,
    /// QCLIMB's receiver also reports a same-priority gap just below each out-of-order segment, and the sender
    /// repairs all of it (`scheme.priority_loss_repair = "every_gap"`; off: only the gap at the cumulative ACK).
    pub qclimb_every_gap: bool,
    /// Retransmissions travel at the highest priority (QCLIMB).
    pub retx_top_priority: bool,
    /// A SYN / SYN-ACK round trip before the data (`transport.handshake`).
    pub handshake: bool,
    /// Delayed ACKs: acknowledge every this many in-order segments (1: every segment), or after `delack_timeout`.
    pub delack_segments: u32,
    pub delack_timeout: Ps,
    /// The application model's per-flow send buffer in bytes (u64::MAX when unbounded).
    pub send_buffer: u64,
    /// The host link rate in bit/s (the line rate C of ranks by remaining time and of RAX).
    pub line_rate_bps: f64,
    /// RAX's (and RAX+'s) tagging, when the scheme is one of them.
    pub rax: Option<RaxParams>,
}

/// L2DCT's weight w_c of a flow as a function of the bytes it has sent: w_max up to `size_min`, w_min from
/// `size_max`, linear in between (the PIAS ns-2 scripts' lldct_* parameters). The window grows by w_c segments
/// per window of ACKs and an ECN-marked window is cut by the factor (1 - alpha^w_c / 2), so short flows grow
/// faster and back off less than long ones (Munir et al., "Minimizing Flow Completion Times in Data Centers",
/// INFOCOM 2013).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct L2dct {
    pub w_min: f64,
    pub w_max: f64,
    pub size_min: u64,
    pub size_max: u64,
    /// The increase is w_c / w_max segments per window (the PIAS ns-2 code) instead of w_c (the paper).
    pub normalized: bool,
}

impl L2dct {
    pub fn weight(&self, bytes_sent: u64) -> f64 {
        if bytes_sent <= self.size_min {
            self.w_max
        } else if bytes_sent >= self.size_max {
            self.w_min
        } else {
            let f = (bytes_sent - self.size_min) as f64 / (self.size_max - self.size_min) as f64;
            self.w_max + f * (self.w_min - self.w_max)
        }
    }

    /// Segments the window grows by per window of ACKs in congestion avoidance.
    pub fn increase(&self, bytes_sent: u64) -> f64 {
        let w = self.weight(bytes_sent);
        if self.normalized {
            w / self.w_max
        } else {
            w
        }
    }
}

impl TcpParams {
    pub fn from_config(cfg: &Config) -> Self {
        let t = &cfg.transport;
        let us = |x: f64| (x * PS_PER_US as f64).round() as Ps;
        TcpParams {
            mss: t.mss_bytes,
            header: t.header_bytes,
            ack_bytes: t.ack_bytes,
            init_cwnd: t.init_cwnd_packets as f64,
            max_cwnd: if t.max_cwnd_packets == 0 { f64::INFINITY } else { t.max_cwnd_packets as f64 },
            rwnd: if t.rwnd_bytes == 0 { u64::MAX } else { t.rwnd_bytes },
            // a fixed RTO: the clamp of every RTT sample and the ceiling of every back-off are the floor
            rto_min: us(t.rto_min_us),
            rto_init: us(if t.rto_fixed { t.rto_min_us } else { t.rto_init_us.unwrap_or(t.rto_min_us) }),
            rto_max: us(if t.rto_fixed { t.rto_min_us } else { t.rto_max_us }),
            dupack_threshold: t.dupack_threshold,
            dctcp: cfg.transport_kind() == TransportKind::Dctcp,
            g: t.dctcp_g,
            alpha_init: t.dctcp_alpha_init,
            ack_priority: t.ack_priority,
            tagging: Tagging::from_config(cfg),
            rank: Rank::from_config(cfg),
            rank_at_packet: cfg.scheme.rank_at == RankAt::Packet,
            pias_per_connection: cfg.scheme.name == SchemeName::Pias
                && cfg.scheme.pias_count == PiasCount::PerConnection,
            pias_timeout_reset: cfg.scheme.pias_timeout_reset,
            pias_idle: us(cfg.scheme.pias_idle_us),
            loss_cuts_window: !cfg.scheme.name.rank_queue(),
            probe_after: cfg.scheme.probe_after_timeouts,
            qclimb_ooo: cfg.scheme.name == SchemeName::Qclimb && cfg.scheme.ooo_handling == OooHandling::Qclimb,
            qclimb_every_gap: cfg.scheme.priority_loss_repair == PriorityLossRepair::EveryGap,
            // (QCLIMB with TCP's own out-of-order handling abandons section 3.2 whole: plain retransmissions)
            retx_top_priority: cfg.scheme.name == SchemeName::Qclimb && cfg.scheme.ooo_handling == OooHandling::Qclimb,
            handshake: t.handshake,
            delack_segments: t.delayed_ack_segments,
            delack_timeout: us(t.delayed_ack_timeout_us),
            send_buffer: if t.send_buffer_bytes == 0 { u64::MAX } else { t.send_buffer_bytes },
            line_rate_bps: cfg.topology.host_link_gbps() * 1e9,
            rax: match cfg.scheme.name {
                SchemeName::Rax => Some(RaxParams::from_config(cfg, false)),
                SchemeName::RaxPlus => Some(RaxParams::from_config(cfg, true)),
                _ => None,
            },
            l2dct: (cfg.scheme.name == SchemeName::L2dct).then(|| L2dct {
                w_min: cfg.scheme.l2dct_w_min,
                w_max: cfg.scheme.l2dct_w_max,
                size_min: cfg.scheme.l2dct_size_min_bytes,
                size_max: cfg.scheme.l2dct_size_max_bytes,
                normalized: cfg.scheme.l2dct_increase == L2dctIncrease::Normalized,
            }),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recovery {
    /// Fast recovery after duplicate ACKs: cwnd stays at ssthresh.
    Fast,
    /// After a timeout: slow start through the lost segments.
    Timeout,
}

/// Per-flow counters the engine copies into the results.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ConnCounters {
    pub retransmits: u32,
    pub timeouts: u32,
    pub fast_recoveries: u32,
    pub bytes_sent: u64,
    pub ecn_marked: u32,
    /// DCTCP window reductions on ECN echoes.
    pub ecn_cuts: u32,
    /// Probe packets sent in probe mode.
    pub probes: u32,
    /// Loss events found by QCLIMB's priority-based detection (retransmissions they triggered).
    pub priority_losses: u32,
    /// Data segments that reached the receiver when it already held them (spurious retransmissions).
    pub duplicate_data: u32,
    /// Most segments the receiver held out of order at once.
    pub ooo_max_segments: u32,
    /// RAX: times the flow's priority rose, and fast retransmits suppressed meanwhile (reorderings).
    pub priority_rises: u32,
    pub reorderings: u32,
}

/// `x.round() as Ps` for x >= 0 (half away from zero) without the libm call that baseline x86-64 makes for
/// `round`: the cast truncates, and `x - trunc(x)` is exact.
#[inline]
fn round_ps(x: f64) -> Ps {
    let t = x as Ps;
    if x - t as f64 >= 0.5 {
        t + 1
    } else {
        t
    }
}

/// Both ends of one flow.
///
/// Field order is layout (`repr(C)`, cache-line aligned): line 0 holds what every packet of the flow reads at
/// either end (ids, sequence state, deadlines), line 1 the sender's per-ACK window and RTT state, line 2 its
/// recovery bookkeeping and flags; the scoreboards, the receiver's out-of-order state and the counters follow.
/// Rust's default layout sorts fields by alignment instead, which spread one ACK's work over six lines.
#[derive(Debug, Clone)]
#[repr(C, align(64))]
pub struct Conn {
    // --- line 0: both ends, every packet ---
    pub flow: u32,
    pub src: u32,
    pub dst: u32,
    pub n_segs: u32,
    pub snd_una: u32,
    /// Next new segment.
    pub snd_nxt: u32,
    /// When the retransmission timer expires (NEVER when it is not running).
    pub rto_deadline: Ps,
    /// Time of this flow's timer entry in the engine's event queue (NEVER when none): lazy timers.
    pub timer_queued_at: Ps,
    pub delack_deadline: Ps,
    pub rcv_nxt: u32,
    ooo_held: u32,
    /// When the application will have written the next segment (NEVER when no such timer runs).
    pub app_deadline: Ps,

    // --- line 1: the sender, every ACK ---
    pub cwnd: f64,
    pub ssthresh: f64,
    srtt: f64,
    rttvar: f64,
    pub rto: Ps,
    pub alpha: f64,
    dupacks: u32,
    sacked_out: u32,
    lost_out: u32,
    retrans_out: u32,

    // --- line 2: the sender's recovery and window bookkeeping, flags ---
    /// One past the highest SACKed segment.
    fack: u32,
    /// Segments below this have been examined for loss marking.
    lost_mark_upto: u32,
    /// Lost segments below this have been retransmitted in the current recovery.
    retx_ptr: u32,
    recover: u32,
    win_end: u32,
    win_acks: u32,
    win_marks: u32,
    cut_end: u32,
    /// QCLIMB: highest cumulative ACK whose hole was retransmitted on a priority-detected loss (+1; 0 = none),
    /// and the end of the window in which the window was last halved for such a loss.
    prio_retx_upto: u32,
    prio_cut_end: u32,
    /// Timeouts since the last ACK that advanced the cumulative ACK (or answered a probe). ns-2's MinTCP counts
    /// differently: any ACK received resets its count (`prob_count_`), so a flow whose duplicate ACKs keep
    /// coming enters probe mode later there than here.
    consecutive_timeouts: u32,
    /// Bytes of the last segment.
    last_payload: u32,
    /// New segments the application has written whole (the flow's last counts once written): `n_segs` from
    /// the start for a flow whose bytes are all ready and fit the send buffer; below it while the application
    /// model limits the sender.
    avail_segs: u32,
    pub recovery: Option<Recovery>,
    have_rtt: bool,
    /// In probe mode: retransmissions are held; probes go out every RTO until an ACK comes back.
    pub probing: bool,
    /// The flow's own priority (fixed tagging; PIAS computes per packet).
    pub prio: u8,
    /// The handshake is done (always, when there is none).
    established: bool,
    /// This flow uses QCLIMB's out-of-order handling and top-priority retransmissions (the scheme's setting,
    /// unless the flow was handed to PIAS with [`Conn::use_pias`]).
    qclimb_ooo: bool,
    retx_top: bool,
    ack_pending_retx: bool,
    ce_state: bool,
    /// HyLine: the manager stopped this flow (STS). It sends nothing, retransmissions included, and a
    /// retransmission timeout that falls due meanwhile is held (the paper's change to TCP: a stopped flow does
    /// not time out), until the next CTS ([`Conn::go`]).
    stopped: bool,

    // --- the scoreboards (sender), then the receiver ---
    sacked: BitSet,
    lost: BitSet,
    retx: BitSet,
    rcvd: BitSet,
    size: u64,
    /// Estimated size (pFabric ranked by estimate).
    estimate: u64,
    /// Predicted bounds and estimate (QCLIMB's tagging).
    bounds: Bounds,
    /// QCLIMB: the priority each received segment carried (how many are held out of order: `ooo_held`).
    rx_prio: Vec<u8>,
    /// Payload bytes held out of order.
    pub ooo_bytes: u64,
    /// Delayed ACKs: in-order segments not yet acknowledged, the send time echoed by their ACK (the first's)
    /// and whether any was a retransmission (`ack_pending_retx`); the receiver's DCTCP CE state (`ce_state`);
    /// when the ACK is due (`delack_deadline`).
    ack_pending: u32,
    ack_pending_ts: u32,

    pub counters: ConnCounters,
    /// PIAS per connection: the count the connection carried into this flow, and the flow byte offset from which
    /// this flow counts (raised to the high-water mark when consecutive timeouts restart the count).
    pias_base: u64,
    pias_reset_at: u64,

    // --- last, so that the fields above keep their places: the application model's ---
    /// ns per byte at the smaller of the generation rate and the line rate (pFabric ranked by remaining time).
    ns_per_byte: f64,
    /// The application model (unused while `avail_segs == n_segs` from the start).
    app: App,
}

/// A flow's application (the application model): what it has written into the send buffer, and RAX's measure of
/// the copy rate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct App {
    /// Generation rate in bit/s (0: everything at once).
    pub rate_bps: u64,
    /// Bytes available at once, written before the generation at `rate_bps` starts.
    pub cached: u64,
    /// The generation's reference point: `base` bytes written at `t0`; at a later time t, base + floor(rate
    /// (t - t0)) unless the buffer blocked it.
    base: u64,
    t0: Ps,
    /// Bytes written so far (as of the last update).
    pub written: u64,
    /// When the last byte was written (NEVER until then).
    pub done_ps: Ps,
    /// RAX: the copy rate (bit/s), and the time and written bytes of the last sample.
    pub copy_rate_bps: f64,
    rc_t: Ps,
    rc_written: u64,
    /// RAX: new segments below this were sent before the latest rise of the flow's priority.
    rise_upto: u32,
}

/// Bytes generated in `dt` ps at `rate_bps` bit/s (rounded down).
#[inline]
fn bytes_in(dt: Ps, rate_bps: u64) -> u64 {
    let b = dt as u128 * rate_bps as u128 / 8_000_000_000_000u128;
    b.min(u64::MAX as u128) as u64
}

/// Time in ps to generate `bytes` at `rate_bps` bit/s (rounded up: the instant the last byte exists).
#[inline]
pub fn time_to_generate(bytes: u64, rate_bps: u64) -> Ps {
    let t = (bytes as u128 * 8_000_000_000_000u128).div_ceil(rate_bps as u128);
    t.min(Ps::MAX as u128) as Ps
}

/// What a connection carries from one flow to the next (`transport.connections` other than "per_flow"; see
/// [`crate::config::Connections`] for what is kept and what is reset, and why).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ConnState {
    pub alpha: f64,
    pub ssthresh: f64,
    srtt: f64,
    rttvar: f64,
    have_rtt: bool,
    /// PIAS per connection: the bytes counted when the last flow ended, and when that flow was written.
    pias_count: u64,
    last_write: Ps,
}

/// What one call into the state machine produced besides packets.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Outcome {
    /// The receiver now holds every byte in order (first time only).
    pub receiver_done: bool,
    /// Every byte is acknowledged (first time only).
    pub sender_done: bool,
}

impl Conn {
    /// A new flow of `size` bytes. Allocates its scoreboards (three bits per segment at the sender, one at
    /// the receiver): once per flow, never per packet.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        p: &TcpParams,
        flow: u32,
        src: u32,
        dst: u32,
        size: u64,
        estimate: u64,
        prio: u8,
    ) -> Self {
        let n = size.div_ceil(p.mss as u64);
        assert!(n < u32::MAX as u64 - 1, "flow {flow} has too many segments ({n})");
        let n_segs = n as u32;
        let last_payload = (size - (n - 1) * p.mss as u64) as u32;
        Conn {
            flow,
            src,
            dst,
            n_segs,
            last_payload,
            size,
            estimate,
            bounds: Bounds { lower: estimate, upper: estimate, estimate, pias: false },
            ns_per_byte: 8e9 / p.line_rate_bps,
            avail_segs: n_segs,
            app_deadline: NEVER,
            app: App {
                rate_bps: 0,
                cached: size,
                base: size,
                t0: 0,
                written: size,
                done_ps: NEVER,
                copy_rate_bps: p.line_rate_bps,
                rc_t: 0,
                rc_written: 0,
                rise_upto: 0,
            },
            prio,
            snd_una: 0,
            snd_nxt: 0,
            cwnd: p.init_cwnd.min(p.max_cwnd),
            ssthresh: f64::INFINITY,
            dupacks: 0,
            recovery: None,
            recover: 0,
            sacked: BitSet::new(n_segs),
            lost: BitSet::new(n_segs),
            retx: BitSet::new(n_segs),
            sacked_out: 0,
            lost_out: 0,
            retrans_out: 0,
            fack: 0,
            lost_mark_upto: 0,
            retx_ptr: 0,
            srtt: 0.0,
            rttvar: 0.0,
            have_rtt: false,
            rto: p.rto_init,
            rto_deadline: NEVER,
            timer_queued_at: NEVER,
            alpha: p.alpha_init,
            consecutive_timeouts: 0,
            probing: false,
            win_end: 0,
            win_acks: 0,
            win_marks: 0,
            cut_end: 0,
            prio_retx_upto: 0,
            prio_cut_end: 0,
            rcv_nxt: 0,
            rcvd: BitSet::new(n_segs),
            rx_prio: if p.qclimb_ooo { vec![0; n_segs as usize] } else { Vec::new() },
            ooo_held: 0,
            ooo_bytes: 0,
            ack_pending: 0,
            ack_pending_ts: 0,
            ack_pending_retx: false,
            ce_state: false,
            stopped: false,
            delack_deadline: NEVER,
            established: !p.handshake,
            qclimb_ooo: p.qclimb_ooo,
            retx_top: p.retx_top_priority,
            counters: ConnCounters::default(),
            pias_base: 0,
            pias_reset_at: 0,
        }
    }

    /// This flow runs on a connection that carried earlier flows, whose state is `st`; the flow is written at
    /// `now`. Call before [`Conn::start`]. cwnd stays at the initial window; see [`ConnState`].
    pub fn resume(&mut self, p: &TcpParams, st: &ConnState, now: Ps) {
        self.alpha = st.alpha;
        self.ssthresh = st.ssthresh;
        if st.have_rtt {
            self.srtt = st.srtt;
            self.rttvar = st.rttvar;
            self.have_rtt = true;
            self.rto = round_ps(st.srtt + 4.0 * st.rttvar).clamp(p.rto_min, p.rto_max);
        }
        // the connection was open already: no second handshake
        self.established = true;
        // the PIAS kernel module's idle rule: a message written more than the idle time after the previous write
        // (the send buffer being empty: the connection is idle) starts counting from 0
        if p.pias_per_connection && now.saturating_sub(st.last_write) <= p.pias_idle {
            self.pias_base = st.pias_count;
        }
    }

    /// The application model: the flow's application starts writing at `now`, its bytes generated at
    /// `rate_bps` (0: all at once) after `cached` bytes available at once. Call before [`Conn::start`]. A flow
    /// whose bytes are all ready and fit the send buffer is not limited at all (and writes at `now`).
    pub fn set_app(&mut self, p: &TcpParams, rate_bps: u64, cached: u64, now: Ps) {
        let size = self.size;
        let cached = if rate_bps == 0 { size } else { cached.min(size) };
        self.app = App { rate_bps, cached, base: 0, t0: now, written: 0, rc_t: now, ..self.app };
        if rate_bps > 0 {
            self.ns_per_byte = 8e9 / (rate_bps as f64).min(p.line_rate_bps);
        }
        if rate_bps == 0 && size <= p.send_buffer {
            self.app.base = size;
            self.app.written = size;
            self.app.done_ps = now;
            return;
        }
        self.avail_segs = 0;
        self.app_advance(p, now);
    }

    /// The flow's application so far.
    pub fn app(&self) -> &App {
        &self.app
    }

    /// The most bytes the send buffer lets the application have written: the bytes acknowledged plus the buffer.
    #[inline]
    fn app_bound(&self, p: &TcpParams) -> u64 {
        let acked = (self.snd_una as u64 * p.mss as u64).min(self.size);
        acked.saturating_add(p.send_buffer).min(self.size)
    }

    /// Bring the application's written bytes up to `now` under the send buffer's current bound (call before the
    /// bound moves), and the segments available to the sender with them. (Out of line and cold: only
    /// application-limited flows come here, and the per-packet paths of the others stay as small as they were.)
    #[cold]
    #[inline(never)]
    fn app_advance(&mut self, p: &TcpParams, now: Ps) {
        let bound = self.app_bound(p);
        let a = &mut self.app;
        if a.base < a.cached {
            // the cached bytes are written as fast as the buffer takes them; the generation starts after them
            let w = a.cached.min(bound);
            a.base = w;
            a.t0 = now;
            a.written = w;
            if w == self.size && a.done_ps == NEVER {
                a.done_ps = now;
            }
            if w < a.cached {
                self.refresh_avail(p);
                return;
            }
        }
        let generated =
            if a.rate_bps == 0 { self.size } else { a.base.saturating_add(bytes_in(now - a.t0, a.rate_bps)) };
        if generated >= bound {
            if bound == self.size && a.done_ps == NEVER {
                // the last byte was written when it was generated (the buffer had room for it)
                a.done_ps = if a.rate_bps == 0 {
                    now
                } else {
                    (a.t0 + time_to_generate(self.size - a.base, a.rate_bps)).min(now)
                };
            }
            // blocked (or done): nothing more is generated until the bound moves, from then on
            a.base = bound;
            a.t0 = now;
            a.written = bound;
        } else {
            a.written = generated;
        }
        self.refresh_avail(p);
    }

    #[inline]
    fn refresh_avail(&mut self, p: &TcpParams) {
        self.avail_segs =
            if self.app.written >= self.size { self.n_segs } else { (self.app.written / p.mss as u64) as u32 };
    }

    /// The sender has sent every written segment and its windows would allow more: whether the application has
    /// written more since; if not, set the timer for the instant it will have.
    #[cold]
    #[inline(never)]
    fn app_refill(&mut self, p: &TcpParams, now: Ps) -> bool {
        let before = self.avail_segs;
        self.app_advance(p, now);
        if self.avail_segs > before {
            return true;
        }
        self.app_schedule(p);
        false
    }

    /// When will the next segment be written? (No timer while the buffer blocks the application: an ACK will
    /// free space.)
    fn app_schedule(&mut self, p: &TcpParams) {
        let target = ((self.avail_segs as u64 + 1) * p.mss as u64).min(self.size);
        let a = &self.app;
        self.app_deadline = if target > self.app_bound(p) || a.base < a.cached || a.rate_bps == 0 {
            NEVER
        } else {
            a.t0 + time_to_generate(target - a.base, a.rate_bps)
        };
    }

    /// The application timer fired: send what has been written since.
    pub fn on_app_timer(&mut self, p: &TcpParams, now: Ps, out: &mut Vec<Packet>) {
        self.app_deadline = NEVER;
        if !self.established || self.sender_done() || self.avail_segs >= self.n_segs {
            return;
        }
        self.app_advance(p, now);
        self.send_more(p, now, out);
    }

    /// RAX, before a data segment: the written bytes up to date, a copy-rate sample if the interval has passed
    /// (while the application writes), and the priority from the remaining time.
    #[inline(never)]
    fn rax_update(&mut self, p: &TcpParams, r: &RaxParams, now: Ps) {
        if self.avail_segs < self.n_segs {
            self.app_advance(p, now);
        }
        let a = &mut self.app;
        // (no sample once everything is written: as the kernel hook, which samples at the application's writes)
        if now >= a.rc_t + r.interval_ps && a.written < self.size {
            a.copy_rate_bps = r.smooth(a.copy_rate_bps, a.written - a.rc_written, now - a.rc_t);
            a.rc_t = now;
            a.rc_written = a.written;
        }
        let sent = (self.snd_nxt as u64 * p.mss as u64).min(self.size);
        let t = if r.plus {
            r.true_remaining_ps(self.size, a.written, sent, a.rate_bps)
        } else {
            r.estimate_ps(a.written, sent, a.copy_rate_bps)
        };
        let prio = r.priority(t);
        if prio < self.prio && self.snd_nxt > 0 {
            self.counters.priority_rises += 1;
            a.rise_upto = self.snd_nxt;
        }
        self.prio = prio;
    }

    /// The state this connection hands to the next flow on it (the flow started at `started`).
    pub fn carry(&self, p: &TcpParams, started: Ps) -> ConnState {
        let hwm = (self.snd_nxt as u64 * p.mss as u64).min(self.size);
        ConnState {
            alpha: self.alpha,
            ssthresh: self.ssthresh,
            srtt: self.srtt,
            rttvar: self.rttvar,
            have_rtt: self.have_rtt,
            pias_count: self.pias_base + hwm.saturating_sub(self.pias_reset_at),
            last_write: started,
        }
    }

    #[inline]
    fn payload(&self, seg: u32) -> u32 {
        if seg + 1 == self.n_segs {
            self.last_payload
        } else {
            u32::MAX // replaced below; keeps the branch cheap
        }
    }

    #[inline]
    fn payload_of(&self, p: &TcpParams, seg: u32) -> u32 {
        let x = self.payload(seg);
        if x == u32::MAX {
            p.mss
        } else {
            x
        }
    }

    /// Payload bytes of data packet `pkt` of this flow.
    #[inline]
    pub fn payload_bytes(&self, p: &TcpParams, pkt: &Packet) -> u32 {
        pkt.wire as u32 - p.header
    }

    /// Give the flow its predicted bounds (QCLIMB); by default both are the estimate.
    pub fn set_bounds(&mut self, lower: u64, upper: u64) {
        self.bounds.lower = lower;
        self.bounds.upper = upper;
    }

    /// Schedule this flow as PIAS inside a QCLIMB run (a flow QCLIMB has no bounds for, section 5.2.2): tagged
    /// by bytes sent over the same thresholds, TCP's own out-of-order handling (duplicate ACKs), retransmissions
    /// at the priority of the original transmission.
    pub fn use_pias(&mut self) {
        self.bounds.pias = true;
        self.qclimb_ooo = false;
        self.retx_top = false;
        self.rx_prio = Vec::new();
    }

    /// Segments in flight by the RFC 6675 estimate.
    #[inline]
    pub fn pipe(&self) -> u32 {
        (self.snd_nxt - self.snd_una) + self.retrans_out - self.sacked_out - self.lost_out
    }

    pub fn sender_done(&self) -> bool {
        self.snd_una == self.n_segs
    }

    /// The earliest of the flow's timers (retransmission, delayed ACK); `NEVER` when none runs.
    #[inline]
    pub fn deadline(&self) -> Ps {
        self.rto_deadline.min(self.delack_deadline).min(self.app_deadline)
    }

    /// The SYN: no payload, the priority and rank of the first segment, `ack_bytes` on the wire.
    fn syn_packet(&self, p: &TcpParams, now: Ps, retx: bool) -> Packet {
        let mut pkt = self.data_packet(p, 0, now, retx);
        pkt.seq = SYN_SEQ;
        pkt.wire = p.ack_bytes as u16;
        pkt.flags |= flags::PROBE;
        pkt
    }

    fn data_packet(&self, p: &TcpParams, seg: u32, now: Ps, retx: bool) -> Packet {
        let payload = self.payload_of(p, seg);
        let mut f = if p.dctcp { flags::ECT } else { 0 };
        if retx {
            f |= flags::RETX;
        }
        let mss = p.mss as u64;
        let offset = seg as u64 * mss;
        let (acked, sent) = if p.rank_at_packet {
            (offset, offset)
        } else {
            ((self.snd_una as u64 * mss).min(self.size), (self.snd_nxt as u64 * mss).min(self.size))
        };
        // PIAS per connection: the bytes the connection counted before this flow, since its last reset
        let count = if p.pias_per_connection {
            self.pias_base + offset.saturating_sub(self.pias_reset_at)
        } else {
            offset
        };
        Packet {
            flow: self.flow,
            seq: seg,
            sack: p.rank.of(self.size, self.estimate, acked, sent, self.ns_per_byte),
            dst: self.dst,
            wire: (payload + p.header) as u16,
            prio: if retx && self.retx_top { 0 } else { p.tagging.priority(self.prio, count, &self.bounds) },
            flags: f,
            ts: stamp(now),
            hdr: (),
        }
    }

    /// A probe (probe mode): one byte of payload that the receiver only acknowledges, carrying the priority
    /// and rank the flow's next segment would have, so that it waits where that segment would wait.
    fn probe_packet(&self, p: &TcpParams, now: Ps) -> Packet {
        let mut pkt = self.data_packet(p, self.snd_una.min(self.n_segs - 1), now, true);
        pkt.wire = (p.header + 1) as u16;
        pkt.flags |= flags::PROBE;
        pkt
    }

    fn send_segment(&mut self, p: &TcpParams, seg: u32, now: Ps, retx: bool, out: &mut Vec<Packet>) {
        if let Some(r) = &p.rax {
            self.rax_update(p, r, now);
        }
        let pkt = self.data_packet(p, seg, now, retx);
        self.counters.bytes_sent += (pkt.wire as u32 - p.header) as u64;
        if retx {
            self.counters.retransmits += 1;
            if !self.retx.get(seg) {
                self.retx.set(seg);
                self.retrans_out += 1;
            }
        }
        out.push(pkt);
        if self.rto_deadline == NEVER {
            self.rto_deadline = now + self.rto;
        }
    }

    /// The next lost segment not yet retransmitted in this recovery, if any.
    fn next_lost(&mut self) -> Option<u32> {
        if self.lost_out == 0 {
            return None;
        }
        self.retx_ptr = self.retx_ptr.max(self.snd_una);
        while self.retx_ptr < self.lost_mark_upto {
            let s = self.retx_ptr;
            if self.lost.get(s) && !self.retx.get(s) && !self.sacked.get(s) {
                return Some(s);
            }
            self.retx_ptr += 1;
        }
        None
    }

    /// Whether the receive window lets new segment `seg` go out: its last byte lies within snd_una + rwnd.
    /// (Segments below `seg` are whole, so the byte offsets are `seg * mss`; always true for `seg == snd_una`,
    /// since rwnd >= mss.)
    #[inline]
    fn rwnd_allows(&self, p: &TcpParams, seg: u32) -> bool {
        let mss = p.mss as u64;
        let end = ((seg as u64 + 1) * mss).min(self.size);
        end <= (self.snd_una as u64 * mss).saturating_add(p.rwnd)
    }

    /// Send what the windows allow: lost segments first (congestion window only), then new data (congestion
    /// window and receive window).
    fn send_more(&mut self, p: &TcpParams, now: Ps, out: &mut Vec<Packet>) {
        if self.stopped {
            return;
        }
        // cwnd >= 1 > 0, so the truncating cast is floor (without a libm call on baseline x86-64)
        let window = (self.cwnd as u32).max(1);
        while self.pipe() < window {
            if let Some(s) = self.next_lost() {
                self.send_segment(p, s, now, true, out);
                self.retx_ptr = s + 1;
            } else if self.snd_nxt < self.avail_segs && self.rwnd_allows(p, self.snd_nxt) {
                let s = self.snd_nxt;
                self.snd_nxt += 1;
                self.send_segment(p, s, now, false, out);
            } else {
                // application-limited: take what has been written since, else wait for it
                if self.avail_segs < self.n_segs && self.snd_nxt >= self.avail_segs && self.app_refill(p, now) {
                    continue;
                }
                break;
            }
        }
    }

    /// The flow starts: send the initial window, or the SYN when there is a handshake.
    pub fn start(&mut self, p: &TcpParams, now: Ps, out: &mut Vec<Packet>) {
        if !self.established {
            out.push(self.syn_packet(p, now, false));
            self.rto_deadline = now + self.rto;
            return;
        }
        self.send_more(p, now, out);
        self.win_end = self.snd_nxt;
    }

    /// HyLine's STS: stop sending (see `stopped`). Packets already sent are still acknowledged.
    pub fn stop(&mut self) {
        self.stopped = true;
    }

    /// Is the flow stopped (HyLine)?
    pub fn is_stopped(&self) -> bool {
        self.stopped
    }

    /// HyLine's CTS to a flow that [`Conn::stop`] stopped: send again, from the initial window (the authors' ns-2
    /// agent resets its window to the initial one on every CTS), with the retransmission timer restarted if data
    /// is outstanding.
    pub fn go(&mut self, p: &TcpParams, now: Ps, out: &mut Vec<Packet>) {
        self.stopped = false;
        if !self.established {
            return; // the handshake goes on; its SYN-ACK starts the data
        }
        self.cwnd = p.init_cwnd.min(p.max_cwnd);
        if self.snd_una < self.snd_nxt && self.rto_deadline == NEVER {
            self.rto_deadline = now + self.rto;
        }
        self.send_more(p, now, out);
    }

    /// Mark un-SACKed segments below `upto` lost (never below `snd_una`, never twice).
    fn mark_lost_upto(&mut self, upto: u32) {
        let mut s = self.lost_mark_upto.max(self.snd_una);
        while s < upto {
            if !self.sacked.get(s) && !self.lost.get(s) {
                self.lost.set(s);
                self.lost_out += 1;
            }
            s += 1;
        }
        if upto > self.lost_mark_upto {
            self.lost_mark_upto = upto;
        }
    }

    fn rtt_sample(&mut self, p: &TcpParams, rtt: Ps) {
        let r = rtt as f64;
        if !self.have_rtt {
            self.srtt = r;
            self.rttvar = r / 2.0;
            self.have_rtt = true;
        } else {
            self.rttvar = 0.75 * self.rttvar + 0.25 * (self.srtt - r).abs();
            self.srtt = 0.875 * self.srtt + 0.125 * r;
        }
        let rto = round_ps(self.srtt + 4.0 * self.rttvar);
        self.rto = rto.clamp(p.rto_min, p.rto_max);
    }

    /// Sender side: an ACK arrived. (Always inlined: with several families calling it the compiler stopped
    /// inlining it into the TCP family's run loop, which cost 6% more instructions per run.)
    #[inline(always)]
    pub fn on_ack(&mut self, p: &TcpParams, now: Ps, ack: &Packet, out: &mut Vec<Packet>) -> Outcome {
        let mut outcome = Outcome::default();
        if self.sender_done() {
            return outcome;
        }
        if ack.seq == SYN_SEQ {
            // a SYN-ACK: the connection is open (a late copy, for a retransmitted SYN, changes nothing)
            if !self.established {
                self.established = true;
                if ack.flags & flags::RETX == 0 {
                    self.rtt_sample(p, since(now, ack.ts));
                }
                self.rto_deadline = NEVER;
                self.start(p, now, out);
            }
            return outcome;
        }
        if !self.established {
            return outcome;
        }
        let cum = ack.seq.min(self.n_segs);
        let ece = ack.flags & flags::ECE != 0;
        if self.probing {
            // An ACK is back. If it acknowledges data the packets were trapped, not lost: carry on (the held
            // retransmissions are dropped). If not, they were lost: release the retransmissions now.
            self.probing = false;
            self.consecutive_timeouts = 0;
            if cum <= self.snd_una {
                self.mark_all_outstanding_lost();
                self.send_more(p, now, out);
                self.rto_deadline = now + self.rto;
            }
        }

        // Karn: only segments sent once give RTT samples; a valid sample also ends the back-off.
        if ack.flags & flags::RETX == 0 {
            self.rtt_sample(p, since(now, ack.ts));
        }

        // SACK information: one segment above the cumulative ACK.
        let mut new_sack = false;
        // (ACKs may arrive out of order under spraying: a block below snd_una is old news)
        if ack.sack != NO_SACK
            && ack.sack >= cum.max(self.snd_una)
            && ack.sack < self.snd_nxt
            && !self.sacked.get(ack.sack)
        {
            let s = ack.sack;
            self.sacked.set(s);
            self.sacked_out += 1;
            if self.lost.get(s) {
                self.lost.clear(s);
                self.lost_out -= 1;
            }
            if self.retx.get(s) {
                self.retx.clear(s);
                self.retrans_out -= 1;
            }
            self.fack = self.fack.max(s + 1);
            new_sack = true;
        }

        // DCTCP: every ACK stands for one delivered segment; a delayed ACK for the segments it acknowledges
        if p.dctcp {
            let n = if p.delack_segments > 1 { cum.saturating_sub(self.snd_una).max(1) } else { 1 };
            self.win_acks += n;
            if ece {
                self.win_marks += n;
            }
        }

        let advanced = cum > self.snd_una;
        if advanced {
            // With no segment SACKed, marked lost or retransmitted at or above snd_una (the counters count
            // exactly those bits), every newly acknowledged segment is newly delivered: skip the scoreboard.
            let clean = self.sacked_out == 0 && self.lost_out == 0 && self.retrans_out == 0;
            debug_assert!(
                !clean || (self.snd_una..cum).all(|s| !self.sacked.get(s) && !self.lost.get(s) && !self.retx.get(s)),
                "scoreboard counters out of step with its bits"
            );
            let mut newly = if clean { cum - self.snd_una } else { 0 };
            for s in (if clean { cum } else { self.snd_una })..cum {
                if self.sacked.get(s) {
                    self.sacked_out -= 1;
                } else {
                    newly += 1;
                    if self.lost.get(s) {
                        self.lost_out -= 1;
                    }
                    if self.retx.get(s) {
                        self.retrans_out -= 1;
                    }
                }
            }
            if self.avail_segs < self.n_segs {
                // the application's writes up to now, under the buffer's bound before this ACK moves it
                self.app_advance(p, now);
            }
            self.snd_una = cum;
            let delivered = newly;
            self.dupacks = 0;
            self.consecutive_timeouts = 0;
            let was_fast = self.recovery == Some(Recovery::Fast);
            if self.snd_nxt < self.snd_una {
                self.snd_nxt = self.snd_una;
            }
            match self.recovery {
                Some(_) if cum >= self.recover => {
                    if self.recovery == Some(Recovery::Fast) && p.loss_cuts_window {
                        self.cwnd = self.ssthresh;
                    }
                    self.recovery = None;
                }
                Some(Recovery::Fast) => {
                    // partial ACK: the new first hole is lost (NewReno), if SACKs show data beyond it
                    if cum < self.fack && !self.sacked.get(cum) && !self.lost.get(cum) {
                        self.lost.set(cum);
                        self.lost_out += 1;
                        self.lost_mark_upto = self.lost_mark_upto.max(cum + 1);
                    }
                }
                _ => {}
            }
            // no growth during fast recovery, nor on the ACK that ends it
            if !was_fast {
                self.grow(p, delivered.max(1));
            }
            self.rto_deadline = if self.snd_una < self.snd_nxt { now + self.rto } else { NEVER };
        } else if new_sack && self.snd_una < self.snd_nxt && ack.flags & (flags::QC_UPDATE | flags::QC_RETX) == 0 {
            // (QCLIMB's customized ACKs for reordered data are not duplicate ACKs)
            self.dupacks += 1;
            self.grow_on_sack(p);
        }
        let qc = ack.flags & (flags::QC_RETX | flags::QC_UPDATE);
        if qc == flags::QC_RETX && !self.sender_done() {
            self.priority_detected_loss(p, now, cum, out);
        } else if qc == flags::QC_GAP && new_sack && !self.sender_done() {
            self.priority_detected_gap(ack.sack);
        }

        if self.sender_done() {
            self.rto_deadline = NEVER;
            outcome.sender_done = true;
            self.release();
            return outcome;
        }

        // DCTCP window bookkeeping: alpha once per window of data (the data outstanding when the window
        // began, new window starting after this ACK's transmissions); a cut at most once per window.
        let mut new_window = false;
        if p.dctcp {
            if self.snd_una >= self.win_end && self.win_acks > 0 {
                let f = self.win_marks as f64 / self.win_acks as f64;
                self.alpha = (1.0 - p.g) * self.alpha + p.g * f;
                self.win_acks = 0;
                self.win_marks = 0;
                new_window = true;
            }
            if ece && self.recovery.is_none() && self.snd_una >= self.cut_end {
                // L2DCT: penalty alpha^w_c instead of alpha
                let b = match p.l2dct {
                    Some(l) => self.alpha.powf(l.weight(self.bytes_sent_hwm(p))),
                    None => self.alpha,
                };
                self.cwnd = (self.cwnd * (1.0 - b / 2.0)).max(1.0);
                self.ssthresh = self.cwnd;
                self.cut_end = self.snd_nxt;
                self.counters.ecn_cuts += 1;
            }
        }

        // Loss detection and recovery (none from duplicate ACKs or SACKs when `dupack_threshold` is 0: the
        // timer alone finds losses, as in the ns-2 TCP of the pFabric and PIAS simulations).
        let thresh = p.dupack_threshold;
        if thresh > 0 && self.recovery.is_some() {
            if self.fack > thresh {
                self.mark_lost_upto(self.fack - thresh);
            }
        } else if thresh > 0 && self.dupacks >= thresh {
            if self.snd_una < self.app.rise_upto {
                // RAX: the priority rose; the duplicate ACKs may come from reordering, not loss
                if self.dupacks == thresh {
                    self.counters.reorderings += 1;
                }
            } else {
                self.enter_fast_recovery(p, now, out);
            }
        }
        self.send_more(p, now, out);
        if new_window {
            self.win_end = self.snd_nxt;
        }
        outcome
    }

    /// QCLIMB (section 3.2.3): the receiver saw a gap with the same priority on both sides: the hole at the
    /// cumulative ACK is lost. Retransmit it at once (a later hole only on a later, higher cumulative ACK) and
    /// halve the window, at most once per window of data (section 4.1, rate control).
    fn priority_detected_loss(&mut self, p: &TcpParams, now: Ps, hole: u32, out: &mut Vec<Packet>) {
        if hole >= self.snd_nxt || hole + 1 <= self.prio_retx_upto || self.sacked.get(hole) {
            return;
        }
        self.prio_retx_upto = hole + 1;
        if p.qclimb_every_gap && (self.lost.get(hole) || self.retx.get(hole)) {
            return; // already reported as the gap below a SACKed segment
        }
        self.counters.priority_losses += 1;
        if !self.lost.get(hole) {
            self.lost.set(hole);
            self.lost_out += 1;
            self.lost_mark_upto = self.lost_mark_upto.max(hole + 1);
        }
        if !self.retx.get(hole) {
            self.send_segment(p, hole, now, true, out);
        }
        self.halve_for_priority_loss();
    }

    /// QCLIMB's rate control on a priority-detected loss (section 4.1): halve the window, at most once per
    /// window of data, and no DCTCP cut on top of it in that window.
    fn halve_for_priority_loss(&mut self) {
        if self.snd_una >= self.prio_cut_end {
            self.ssthresh = (self.cwnd / 2.0).max(2.0);
            self.cwnd = self.ssthresh;
            self.prio_cut_end = self.snd_nxt;
            self.cut_end = self.snd_nxt;
        }
    }

    /// QCLIMB, `every_gap` repair: the receiver saw the same priority on both sides of the gap just below
    /// SACKed segment `s`: every un-SACKed segment between the SACKed (or acknowledged) one below it and `s` is
    /// lost. Mark them lost; `send_more` retransmits them before new data, as the window allows. The window is
    /// halved as for a loss at the cumulative ACK (at most once per window of data).
    fn priority_detected_gap(&mut self, s: u32) {
        let mut h = s;
        while h > self.snd_una && !self.sacked.get(h - 1) {
            h -= 1;
        }
        if h == s {
            return;
        }
        for seg in h..s {
            if !self.lost.get(seg) && !self.retx.get(seg) {
                self.lost.set(seg);
                self.lost_out += 1;
                self.counters.priority_losses += 1;
            }
        }
        self.lost_mark_upto = self.lost_mark_upto.max(s);
        self.retx_ptr = self.retx_ptr.min(h);
        self.halve_for_priority_loss();
    }

    fn grow(&mut self, p: &TcpParams, segs: u32) {
        if self.cwnd < self.ssthresh {
            self.cwnd += segs as f64;
        } else {
            let w = p.l2dct.map_or(1.0, |l| l.increase(self.bytes_sent_hwm(p)));
            self.cwnd += w * segs as f64 / self.cwnd;
        }
        self.cwnd = self.cwnd.min(p.max_cwnd);
    }

    /// Bytes of the flow sent so far (highest new segment), for L2DCT's weight.
    #[inline]
    fn bytes_sent_hwm(&self, p: &TcpParams) -> u64 {
        (self.snd_nxt as u64 * p.mss as u64).min(self.size)
    }

    /// A SACK of new data without cumulative progress: the window opens only through `pipe`.
    #[inline]
    fn grow_on_sack(&mut self, _p: &TcpParams) {}

    fn enter_fast_recovery(&mut self, p: &TcpParams, now: Ps, out: &mut Vec<Packet>) {
        self.counters.fast_recoveries += 1;
        if p.loss_cuts_window {
            self.ssthresh = (self.cwnd / 2.0).max(2.0);
            self.cwnd = self.ssthresh;
        }
        self.recovery = Some(Recovery::Fast);
        self.recover = self.snd_nxt;
        self.retx_ptr = self.snd_una;
        self.lost_mark_upto = self.lost_mark_upto.max(self.snd_una);
        // the first hole is lost (that is what the duplicate ACKs say), and every hole with enough SACKed
        // segments above it
        let upto = self.fack.saturating_sub(p.dupack_threshold).max(self.snd_una + 1);
        self.mark_lost_upto(upto);
        // fast retransmit, whatever the window says
        if let Some(s) = self.next_lost() {
            self.send_segment(p, s, now, true, out);
            self.retx_ptr = s + 1;
        }
        self.cut_end = self.snd_nxt; // no DCTCP cut on top of the loss cut in this window
    }

    /// The retransmission timer fired (the engine checked `now >= rto_deadline`).
    pub fn on_timeout(&mut self, p: &TcpParams, now: Ps, out: &mut Vec<Packet>) {
        if self.stopped {
            // held while stopped: `go` restarts the timer
            self.rto_deadline = NEVER;
            return;
        }
        if !self.established {
            // the SYN or its SYN-ACK was lost: send the SYN again, backing off
            self.counters.timeouts += 1;
            self.rto = (self.rto.saturating_mul(2)).min(p.rto_max);
            out.push(self.syn_packet(p, now, true));
            self.rto_deadline = now + self.rto;
            return;
        }
        if self.sender_done() || self.snd_una == self.snd_nxt {
            self.rto_deadline = NEVER;
            return;
        }
        self.counters.timeouts += 1;
        self.consecutive_timeouts += 1;
        if p.pias_per_connection && p.pias_timeout_reset > 0 && self.consecutive_timeouts % p.pias_timeout_reset == 0 {
            // the PIAS kernel module's aging: after so many consecutive timeouts the count restarts from 0
            self.pias_base = 0;
            self.pias_reset_at = (self.snd_nxt as u64 * p.mss as u64).min(self.size);
        }
        if p.probe_after > 0 && self.consecutive_timeouts >= p.probe_after {
            // Probe mode: the packets may be trapped behind higher priorities rather than lost; hold the
            // retransmissions and ask the receiver with a probe, once per RTO (no further back-off).
            // pFabric (§4.2): after several consecutive timeouts, a minimum-size packet (header and one byte)
            // once per timeout instead of retransmissions, and slow start again once an ACK returns (`on_ack`:
            // window 1, the one the last timeout left). The probe carries its flow's remaining size like the
            // segment it stands for, so a long flow's probe is the least urgent packet wherever it waits and
            // stays in a busy queue; it used to cost other flows their packets because a full rank queue
            // evicted only that 41 B probe, which could not make room (see `net::rank_queue`).
            self.probing = true;
            self.counters.probes += 1;
            out.push(self.probe_packet(p, now));
            self.rto_deadline = now + self.rto;
            return;
        }
        self.ssthresh = (self.cwnd / 2.0).max(2.0);
        self.cwnd = 1.0;
        self.dupacks = 0;
        self.mark_all_outstanding_lost();
        self.cut_end = self.snd_nxt;
        self.rto = (self.rto.saturating_mul(2)).min(p.rto_max);
        self.rto_deadline = NEVER;
        self.send_more(p, now, out);
        if self.rto_deadline == NEVER {
            self.rto_deadline = now + self.rto;
        }
    }

    /// After a timeout (or a probe that found the data dropped): every outstanding un-SACKed segment is lost
    /// and earlier retransmissions are forgotten; recover by slow start through them.
    fn mark_all_outstanding_lost(&mut self) {
        self.recovery = Some(Recovery::Timeout);
        self.recover = self.snd_nxt;
        self.lost_out = 0;
        self.retrans_out = 0;
        for s in self.snd_una..self.snd_nxt {
            self.retx.clear(s);
            if self.sacked.get(s) {
                self.lost.clear(s);
            } else {
                self.lost.set(s);
                self.lost_out += 1;
            }
        }
        self.lost_mark_upto = self.snd_nxt;
        self.retx_ptr = self.snd_una;
    }

    /// Receiver side: a data segment arrived. Pushes the ACK into `out`. (Always inlined, as `on_ack`.)
    #[inline(always)]
    pub fn on_data(&mut self, p: &TcpParams, now: Ps, pkt: &Packet, out: &mut Vec<Packet>) -> Outcome {
        let _ = now;
        let mut outcome = Outcome::default();
        let s = pkt.seq;
        let ce = pkt.flags & flags::CE != 0;
        if s == SYN_SEQ {
            // a SYN: answer with a SYN-ACK (again, for a retransmitted SYN)
            out.push(Packet {
                flow: self.flow,
                seq: SYN_SEQ,
                sack: NO_SACK,
                dst: self.src,
                wire: p.ack_bytes as u16,
                prio: p.ack_priority,
                flags: flags::ACK | flags::PROBE | (pkt.flags & flags::RETX),
                ts: pkt.ts,
                hdr: (),
            });
            return outcome;
        }
        if pkt.flags & flags::PROBE != 0 {
            self.flush_delayed_ack();
            // a probe carries no data: acknowledge what is held
            out.push(Packet {
                flow: self.flow,
                seq: self.rcv_nxt,
                sack: NO_SACK,
                dst: self.src,
                wire: p.ack_bytes as u16,
                prio: p.ack_priority,
                flags: flags::ACK | flags::RETX | flags::PROBE,
                ts: pkt.ts,
                hdr: (),
            });
            return outcome;
        }
        if ce {
            self.counters.ecn_marked += 1;
        }
        let mut sack = NO_SACK;
        let mut in_order = false;
        let rcv_before = self.rcv_nxt;
        if s >= self.rcv_nxt && s < self.n_segs && !self.rcvd.get(s) {
            self.rcvd.set(s);
            if self.qclimb_ooo {
                self.rx_prio[s as usize] = pkt.prio;
            }
            if s == self.rcv_nxt {
                let before = self.rcv_nxt;
                self.rcv_nxt = self.rcvd.first_zero_from(s).min(self.n_segs);
                // segments above s that were held out of order are now delivered
                self.ooo_held -= self.rcv_nxt - before - 1;
                if self.rcv_nxt > before + 1 {
                    let mss = p.mss as u64;
                    self.ooo_bytes -= (self.rcv_nxt as u64 * mss).min(self.size) - (before as u64 + 1) * mss;
                }
                if self.rcv_nxt == self.n_segs {
                    outcome.receiver_done = true;
                }
                in_order = self.rcv_nxt == before + 1 && self.ooo_held == 0 && !outcome.receiver_done;
            } else {
                sack = s;
                self.ooo_held += 1;
                self.ooo_bytes += self.payload_bytes(p, pkt) as u64;
                self.counters.ooo_max_segments = self.counters.ooo_max_segments.max(self.ooo_held);
            }
        } else {
            self.counters.duplicate_data += 1;
        }
        if p.delack_segments > 1 && self.delay_ack(p, now, pkt, ce, in_order, rcv_before, out) {
            return outcome;
        }
        let mut f = flags::ACK | (pkt.flags & flags::RETX);
        if self.qclimb_ooo && self.ooo_held > 0 {
            f |= if p.qclimb_every_gap && sack != NO_SACK && self.gap_below_is_loss(sack) {
                flags::QC_GAP
            } else {
                self.qclimb_gap_flag()
            };
        }
        if ce {
            f |= flags::ECE;
        }
        out.push(Packet {
            flow: self.flow,
            seq: self.rcv_nxt,
            sack,
            dst: self.src,
            wire: p.ack_bytes as u16,
            prio: p.ack_priority,
            flags: f,
            ts: pkt.ts,
            hdr: (),
        });
        outcome
    }

    /// Delayed ACKs, for a data segment that just arrived: `true` if its acknowledgement is held back (it is
    /// then owed by a later segment or the delayed-ACK timer). Any other segment first flushes what is owed,
    /// and is acknowledged at once by the caller. A DCTCP receiver whose CE state changes first acknowledges
    /// what it holds with the old state (the DCTCP paper, section 3.1).
    #[allow(clippy::too_many_arguments)]
    fn delay_ack(
        &mut self,
        p: &TcpParams,
        now: Ps,
        pkt: &Packet,
        ce: bool,
        in_order: bool,
        rcv_before: u32,
        out: &mut Vec<Packet>,
    ) -> bool {
        if ce != self.ce_state {
            if self.ack_pending > 0 {
                // the owed segments all lie below this one: acknowledge exactly them, with the old state
                self.push_delayed_ack(p, rcv_before, out);
            }
            self.ce_state = ce;
            if in_order {
                // with the new state, this segment starts a new delayed ACK
                self.owe_ack(p, now, pkt);
                return self.send_owed_if_due(p, out);
            }
            return false;
        }
        if !in_order {
            self.flush_delayed_ack();
            return false;
        }
        self.owe_ack(p, now, pkt);
        self.send_owed_if_due(p, out)
    }

    fn owe_ack(&mut self, p: &TcpParams, now: Ps, pkt: &Packet) {
        if self.ack_pending == 0 {
            self.ack_pending_ts = pkt.ts;
            self.ack_pending_retx = false;
            self.delack_deadline = now + p.delack_timeout;
        }
        self.ack_pending += 1;
        self.ack_pending_retx |= pkt.flags & flags::RETX != 0;
    }

    /// Send the owed ACK once enough segments are owed; `true` either way (the segment is accounted for).
    fn send_owed_if_due(&mut self, p: &TcpParams, out: &mut Vec<Packet>) -> bool {
        if self.ack_pending >= p.delack_segments {
            self.push_delayed_ack(p, self.rcv_nxt, out);
        }
        true
    }

    /// Forget what is owed: the caller's immediate ACK (cumulative) acknowledges it too.
    fn flush_delayed_ack(&mut self) {
        self.ack_pending = 0;
        self.delack_deadline = NEVER;
    }

    fn push_delayed_ack(&mut self, p: &TcpParams, cum: u32, out: &mut Vec<Packet>) {
        let mut f = flags::ACK;
        if self.ack_pending_retx {
            f |= flags::RETX;
        }
        if self.ce_state {
            f |= flags::ECE;
        }
        out.push(Packet {
            flow: self.flow,
            seq: cum,
            sack: NO_SACK,
            dst: self.src,
            wire: p.ack_bytes as u16,
            prio: p.ack_priority,
            flags: f,
            ts: self.ack_pending_ts,
            hdr: (),
        });
        self.ack_pending = 0;
        self.delack_deadline = NEVER;
    }

    /// The delayed-ACK timer fired: acknowledge what is owed.
    pub fn on_delack_timer(&mut self, p: &TcpParams, now: Ps, out: &mut Vec<Packet>) {
        if self.delack_deadline <= now && self.ack_pending > 0 {
            self.push_delayed_ack(p, self.rcv_nxt, out);
        }
        self.delack_deadline = NEVER;
    }

    /// QCLIMB's priority-based loss detection (section 3.2.1): with data held out of order, compare the
    /// priority of the last in-order segment with that of the first held segment. The same priority on both
    /// sides of the gap means the gap is a loss (packets of one priority cross the same queues in order, on one
    /// ECMP path); different priorities mean reordering by the scheduler: only the scoreboard is updated. A
    /// gap before any in-order segment, or at a priority boundary, is left to the timeout, as in the paper.
    fn qclimb_gap_flag(&self) -> u8 {
        if self.rcv_nxt == 0 {
            return flags::QC_UPDATE;
        }
        match self.rcvd.first_one_from(self.rcv_nxt) {
            Some(first) if self.rx_prio[(self.rcv_nxt - 1) as usize] == self.rx_prio[first as usize] => flags::QC_RETX,
            _ => flags::QC_UPDATE,
        }
    }

    /// `every_gap` repair: whether segment `s`, just received out of order, has a gap right below it with the
    /// same priority on both sides (the segment received last below the gap, which may be the last in-order one).
    /// A gap with nothing received below it is left alone, as at the cumulative ACK.
    fn gap_below_is_loss(&self, s: u32) -> bool {
        if s == 0 || self.rcvd.get(s - 1) {
            return false;
        }
        let mut r = s - 1;
        while r >= self.rcv_nxt && !self.rcvd.get(r) {
            if r == 0 {
                return false;
            }
            r -= 1;
        }
        self.rx_prio[r as usize] == self.rx_prio[s as usize]
    }

    /// Free the scoreboards once the flow is over.
    fn release(&mut self) {
        self.sacked.release();
        self.lost.release();
        self.retx.release();
    }

    pub fn receiver_done(&self) -> bool {
        self.rcv_nxt == self.n_segs
    }

    /// Free the receiver's bitmap once the receiver is done (the sender may still be waiting for ACKs).
    pub fn release_receiver(&mut self) {
        self.rcvd.release();
        self.rx_prio = Vec::new();
    }

    /// Segments currently marked lost / SACKed / retransmitted (for tests and invariants).
    pub fn scoreboard(&self) -> (u32, u32, u32) {
        (self.lost_out, self.sacked_out, self.retrans_out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(dctcp: bool) -> TcpParams {
        let mut cfg = Config::default();
        cfg.transport.kind = Some(if dctcp { TransportKind::Dctcp } else { TransportKind::Tcp });
        cfg.transport.init_cwnd_packets = 4;
        TcpParams::from_config(&cfg)
    }

    fn conn(p: &TcpParams, segs: u64) -> Conn {
        Conn::new(p, 0, 0, 1, segs * p.mss as u64, 0, 0)
    }

    /// Deliver `data` to the receiver `rx` and return the ACK it produced.
    fn deliver(p: &TcpParams, rx: &mut Conn, data: &Packet) -> Packet {
        let mut out = Vec::new();
        rx.on_data(p, 0, data, &mut out);
        assert_eq!(out.len(), 1);
        out[0]
    }

    #[test]
    fn initial_window_and_slow_start() {
        let p = params(false);
        let mut c = conn(&p, 100);
        let mut rx = conn(&p, 100);
        let mut out = Vec::new();
        c.start(&p, 0, &mut out);
        assert_eq!(out.len(), 4);
        assert!(out.iter().enumerate().all(|(i, x)| x.seq == i as u32 && x.wire == 1500));
        let first: Vec<Packet> = out.drain(..).collect();
        for d in &first {
            let a = deliver(&p, &mut rx, d);
            c.on_ack(&p, 10, &a, &mut out);
        }
        // each ACK grows cwnd by one and releases two segments
        assert_eq!(c.cwnd, 8.0);
        assert_eq!(out.len(), 8);
    }

    #[test]
    fn last_segment_is_short() {
        let p = params(false);
        let mut c = Conn::new(&p, 0, 0, 1, 1460 * 2 + 100, 0, 0);
        let mut out = Vec::new();
        c.start(&p, 0, &mut out);
        assert_eq!(out.iter().map(|x| x.wire).collect::<Vec<_>>(), vec![1500, 1500, 140]);
    }

    #[test]
    fn three_dupacks_trigger_one_fast_retransmit_of_the_hole() {
        let p = params(false);
        let mut c = conn(&p, 100);
        let mut rx = conn(&p, 100);
        let mut out = Vec::new();
        c.cwnd = 8.0;
        c.start(&p, 0, &mut out);
        let sent: Vec<Packet> = out.drain(..).collect();
        assert_eq!(sent.len(), 8);
        // segment 0 is lost; 1.. arrive
        let mut retx = vec![];
        let mut fresh = vec![];
        for d in &sent[1..] {
            let a = deliver(&p, &mut rx, d);
            assert_eq!(a.seq, 0);
            c.on_ack(&p, 10, &a, &mut out);
            for x in out.drain(..) {
                if x.flags & flags::RETX != 0 { retx.push(x) } else { fresh.push(x) }
            }
        }
        assert_eq!(retx.len(), 1, "exactly one retransmission");
        assert_eq!(retx[0].seq, 0);
        assert_eq!(c.recovery, Some(Recovery::Fast));
        assert_eq!(c.ssthresh, 4.0);
        // the SACKs kept the pipe full with new data (RFC 6675)
        assert!(!fresh.is_empty() && fresh[0].seq == 8);
        // the retransmission repairs the hole: cumulative ACK jumps to 8
        let a = deliver(&p, &mut rx, &retx[0]);
        assert_eq!(a.seq, 8);
        c.on_ack(&p, 20, &a, &mut out);
        // recovery ends once everything sent before it began is acknowledged
        let recover = c.recover;
        let mut pending: Vec<Packet> = fresh.into_iter().chain(out.drain(..)).collect();
        while c.recovery.is_some() {
            let d = pending.remove(0);
            let a = deliver(&p, &mut rx, &d);
            c.on_ack(&p, 30, &a, &mut out);
            pending.extend(out.drain(..));
        }
        assert!(c.snd_una >= recover);
        assert_eq!(c.cwnd, 4.0, "cwnd = ssthresh when fast recovery ends");
        assert_eq!(c.scoreboard(), (0, 0, 0));
        assert_eq!(c.counters.retransmits, 1);
    }

    #[test]
    fn an_application_limited_sender_sends_what_is_written_and_waits_for_the_rest() {
        let p = params(false);
        let mut c = conn(&p, 10);
        let mut out = Vec::new();
        // 1 Gbit/s, two segments cached: they go at once, the third is written 11.68 us later
        c.set_app(&p, 1_000_000_000, 2 * 1460, 0);
        c.start(&p, 0, &mut out);
        assert_eq!(out.iter().map(|x| x.seq).collect::<Vec<_>>(), vec![0, 1]);
        assert_eq!(c.app_deadline, 11_680_000);
        assert_eq!(c.deadline(), c.app_deadline, "the application's timer comes before the RTO");
        out.clear();
        c.on_app_timer(&p, 11_680_000 - 1, &mut out);
        assert!(out.is_empty(), "one picosecond early: the segment is not written yet");
        c.on_app_timer(&p, 11_680_000, &mut out);
        assert_eq!(out.iter().map(|x| x.seq).collect::<Vec<_>>(), vec![2]);
        assert_eq!(c.app().done_ps, NEVER);
        // the rest, late: everything generated by now is written and sent at once, up to the window
        out.clear();
        c.on_app_timer(&p, time_to_generate(8 * 1460, 1_000_000_000), &mut out);
        assert_eq!(out.iter().map(|x| x.seq).collect::<Vec<_>>(), vec![3]);
        assert_eq!(c.app().done_ps, time_to_generate(8 * 1460, 1_000_000_000));
    }

    #[test]
    fn a_full_send_buffer_blocks_until_an_ack_frees_space() {
        let mut p = params(false);
        p.send_buffer = 3 * 1460;
        let mut c = conn(&p, 10);
        let mut rx = conn(&p, 10);
        let mut out = Vec::new();
        c.set_app(&p, 0, 0, 0);
        c.start(&p, 0, &mut out);
        assert_eq!(out.len(), 3, "the buffer holds three segments; the window would allow four");
        assert_eq!(c.app_deadline, NEVER, "blocked: no timer, the ACKs will free space");
        let first: Vec<Packet> = std::mem::take(&mut out);
        let a = deliver(&p, &mut rx, &first[0]);
        c.on_ack(&p, 1_000, &a, &mut out);
        assert_eq!(out.iter().map(|x| x.seq).collect::<Vec<_>>(), vec![3], "one acknowledged, one written");
        assert_eq!(c.app().written, 4 * 1460);
    }

    #[test]
    fn round_ps_matches_round() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(3);
        let edges = [0.0, 0.49999999999999994, 0.5, 1.5, 2.5, 1e7 + 0.5, 4503599627370495.5, 1e15 + 0.25];
        let random = (0..100_000).map(|_| rng.gen_range(0.0..1e13) * if rng.gen_bool(0.5) { 1.0 } else { 1e-6 });
        for x in edges.into_iter().chain(random) {
            assert_eq!(round_ps(x), x.round() as Ps, "{x}");
        }
    }

    #[test]
    fn the_receive_window_stops_new_data_at_the_hole_but_not_its_retransmission() {
        let mut p = params(false);
        p.rwnd = 8 * p.mss as u64;
        let mut c = conn(&p, 100);
        let mut rx = conn(&p, 100);
        c.cwnd = 50.0;
        let mut out = Vec::new();
        c.start(&p, 0, &mut out);
        let sent: Vec<Packet> = out.drain(..).collect();
        assert_eq!(sent.iter().map(|x| x.seq).collect::<Vec<_>>(), (0..8).collect::<Vec<_>>(), "one window");
        // segment 0 is lost; the SACKs of 1..7 empty the pipe, but the window's right edge stays at 8
        let mut retx = vec![];
        for d in &sent[1..] {
            let a = deliver(&p, &mut rx, d);
            c.on_ack(&p, 10, &a, &mut out);
            for x in out.drain(..) {
                assert!(x.flags & flags::RETX != 0, "no new segment beyond snd_una + rwnd (got {})", x.seq);
                retx.push(x.seq);
            }
        }
        assert_eq!(retx, vec![0], "the hole is retransmitted");
        assert_eq!(c.snd_nxt, 8);
        // the hole is filled: the window slides to 8..16
        let mut rt = sent[0];
        rt.flags |= flags::RETX;
        let a = deliver(&p, &mut rx, &rt);
        assert_eq!(a.seq, 8);
        c.on_ack(&p, 20, &a, &mut out);
        assert_eq!(out.iter().map(|x| x.seq).max(), Some(15));
        assert_eq!(c.snd_nxt, 16);
    }

    #[test]
    fn timeout_backs_off_and_retransmits_first_hole() {
        let p = params(false);
        let mut c = conn(&p, 10);
        let mut out = Vec::new();
        c.start(&p, 0, &mut out);
        assert_eq!(c.rto_deadline, p.rto_init);
        out.clear();
        c.on_timeout(&p, p.rto_init, &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].seq, 0);
        assert!(out[0].flags & flags::RETX != 0);
        assert_eq!(c.rto, 2 * p.rto_init);
        assert_eq!(c.rto_deadline, p.rto_init + 2 * p.rto_init);
        assert_eq!(c.cwnd, 1.0);
        out.clear();
        c.on_timeout(&p, 3 * p.rto_init, &mut out);
        assert_eq!(c.rto, 4 * p.rto_init);
        assert_eq!(c.counters.timeouts, 2);
    }

    #[test]
    fn karn_ignores_retransmitted_samples() {
        let p = params(false);
        let mut c = conn(&p, 10);
        let mut out = Vec::new();
        c.start(&p, 0, &mut out);
        c.on_timeout(&p, p.rto_init, &mut out);
        let rto_backed_off = c.rto;
        let mut ack = Packet { flow: 0, seq: 1, sack: NO_SACK, dst: 0, wire: 40, prio: 0, flags: flags::ACK | flags::RETX, ts: 0, hdr: () };
        c.on_ack(&p, p.rto_init + 5, &ack, &mut out);
        assert_eq!(c.rto, rto_backed_off, "a retransmitted segment's ACK gives no sample");
        ack.flags = flags::ACK;
        ack.seq = 2;
        ack.ts = stamp(p.rto_init + 5);
        c.on_ack(&p, p.rto_init + 10, &ack, &mut out);
        assert_eq!(c.rto, p.rto_min, "a clean sample ends the back-off");
    }

    #[test]
    fn dctcp_alpha_follows_ewma_and_cuts_once_per_window() {
        let p = params(true);
        let mut c = conn(&p, 10_000);
        let mut rx = conn(&p, 10_000);
        c.cwnd = 10.0;
        c.ssthresh = 10.0;
        let mut out = Vec::new();
        c.start(&p, 0, &mut out);
        let mut expected_alpha = p.alpha_init;
        for round in 0..6 {
            let window: Vec<Packet> = out.drain(..).collect();
            let n = window.len();
            let marked = (round % 3) as usize; // mark the first `marked` segments of this window
            let cwnd_before = c.cwnd;
            let cuts_before = c.counters.ecn_cuts;
            let alpha_before = c.alpha;
            for (i, d) in window.iter().enumerate() {
                let mut d = *d;
                if i < marked {
                    d.flags |= flags::CE;
                }
                let a = deliver(&p, &mut rx, &d);
                c.on_ack(&p, 1000 * (round + 1) as u64, &a, &mut out);
            }
            let cuts = c.counters.ecn_cuts - cuts_before;
            assert!(cuts <= 1, "at most one cut per window (round {round})");
            assert_eq!(cuts, u32::from(marked > 0));
            // alpha updated once, at the end of the window, from this window's fraction
            expected_alpha = (1.0 - p.g) * expected_alpha + p.g * marked as f64 / n as f64;
            assert!((c.alpha - expected_alpha).abs() < 1e-12, "round {round}: {} vs {expected_alpha}", c.alpha);
            if marked > 0 {
                // the cut used the alpha known when the first mark arrived
                assert!(c.cwnd < cwnd_before + n as f64);
                let _ = alpha_before;
            }
        }
    }

    /// QCLIMB, three losses in one priority (segments 2, 5, 7 of a 20-segment window): the paper's repair
    /// (section 3.2.3) resends only the hole at the cumulative ACK until the cumulative ACK rises; `every_gap`
    /// resends all three in the same round trip.
    fn qclimb_retransmissions(repair: PriorityLossRepair) -> (Vec<u32>, u32) {
        let mut cfg = Config::for_scheme(SchemeName::Qclimb, crate::config::Preset::Native);
        cfg.transport.init_cwnd_packets = 20;
        cfg.scheme.priority_loss_repair = repair;
        let p = TcpParams::from_config(&cfg);
        let mut tx = conn(&p, 40);
        let mut rx = conn(&p, 40);
        let mut out = Vec::new();
        tx.start(&p, 0, &mut out);
        let first: Vec<Packet> = std::mem::take(&mut out);
        assert_eq!(first.len(), 20);
        assert!(first.iter().all(|x| x.prio == first[0].prio));
        let mut retx = Vec::new();
        for d in first.iter().filter(|d| ![2, 5, 7].contains(&d.seq)) {
            let a = deliver(&p, &mut rx, d);
            let mut sent = Vec::new();
            tx.on_ack(&p, 10, &a, &mut sent);
            retx.extend(sent.iter().filter(|x| x.flags & flags::RETX != 0).map(|x| x.seq));
        }
        (retx, tx.counters.priority_losses)
    }

    #[test]
    fn qclimb_priority_detected_losses_one_hole_per_cumulative_ack_or_every_gap() {
        let (retx, n) = qclimb_retransmissions(PriorityLossRepair::Cumulative);
        assert_eq!((retx, n), (vec![2], 1));
        let (retx, n) = qclimb_retransmissions(PriorityLossRepair::EveryGap);
        assert_eq!((retx, n), (vec![2, 5, 7], 3));
    }

    #[test]
    fn receiver_holds_out_of_order_and_acks_cumulatively() {
        let p = params(false);
        let mut tx = conn(&p, 4);
        let mut rx = conn(&p, 4);
        let mut out = Vec::new();
        tx.start(&p, 0, &mut out);
        let a = deliver(&p, &mut rx, &out[2]);
        assert_eq!((a.seq, a.sack), (0, 2));
        let a = deliver(&p, &mut rx, &out[0]);
        assert_eq!((a.seq, a.sack), (1, NO_SACK));
        let a = deliver(&p, &mut rx, &out[1]);
        assert_eq!(a.seq, 3);
        assert!(!rx.receiver_done());
        let a = deliver(&p, &mut rx, &out[3]);
        assert_eq!(a.seq, 4);
        assert!(rx.receiver_done());
        // a duplicate after completion is still acknowledged
        let a = deliver(&p, &mut rx, &out[0]);
        assert_eq!((a.seq, a.sack), (4, NO_SACK));
    }

    fn on_data(p: &TcpParams, rx: &mut Conn, now: Ps, data: &Packet) -> Vec<Packet> {
        let mut out = Vec::new();
        rx.on_data(p, now, data, &mut out);
        out
    }

    #[test]
    fn handshake_sends_data_only_after_the_syn_ack_and_retransmits_a_lost_syn() {
        let mut p = params(false);
        p.handshake = true;
        let mut c = conn(&p, 10);
        let mut rx = conn(&p, 10);
        let mut out = Vec::new();
        c.start(&p, 0, &mut out);
        assert_eq!(out.len(), 1, "only the SYN");
        let syn = out.pop().unwrap();
        assert_eq!((syn.seq, syn.wire as u32, syn.flags & flags::PROBE), (SYN_SEQ, p.ack_bytes, flags::PROBE));
        assert_eq!(c.rto_deadline, p.rto_init);
        // the SYN is lost: the timer sends it again, marked as a retransmission, and backs off
        c.on_timeout(&p, p.rto_init, &mut out);
        let syn2 = out.pop().unwrap();
        assert_eq!((syn2.seq, syn2.flags & flags::RETX), (SYN_SEQ, flags::RETX));
        assert_eq!(c.counters.timeouts, 1);
        assert_eq!(c.rto_deadline, p.rto_init + 2 * p.rto_init);
        // its SYN-ACK opens the connection: the initial window goes out, no RTT sample (Karn)
        let synack = on_data(&p, &mut rx, p.rto_init + 5, &syn2).pop().unwrap();
        assert_eq!((synack.seq, synack.flags & (flags::ACK | flags::RETX)), (SYN_SEQ, flags::ACK | flags::RETX));
        c.on_ack(&p, p.rto_init + 10, &synack, &mut out);
        assert_eq!(out.iter().map(|x| x.seq).collect::<Vec<_>>(), vec![0, 1, 2, 3]);
        assert!(!c.have_rtt);
        // a late SYN-ACK for the first SYN changes nothing
        out.clear();
        let late = on_data(&p, &mut rx, p.rto_init + 20, &syn).pop().unwrap();
        c.on_ack(&p, p.rto_init + 30, &late, &mut out);
        assert!(out.is_empty());
        assert_eq!((c.snd_una, c.snd_nxt), (0, 4));
    }

    #[test]
    fn delayed_acks_cover_two_segments_and_the_last_at_once() {
        let mut p = params(false);
        p.delack_segments = 2;
        p.delack_timeout = 1_000;
        let mut c = conn(&p, 5);
        let mut rx = conn(&p, 5);
        let mut out = Vec::new();
        c.cwnd = 10.0;
        c.start(&p, 0, &mut out);
        let data: Vec<Packet> = out.drain(..).collect();
        assert!(on_data(&p, &mut rx, 100, &data[0]).is_empty(), "the first segment is owed");
        assert_eq!(rx.delack_deadline, 1_100);
        let a = on_data(&p, &mut rx, 200, &data[1]);
        assert_eq!((a.len(), a[0].seq, a[0].ts), (1, 2, data[0].ts), "one ACK for two, echoing the first's time");
        assert_eq!(rx.delack_deadline, NEVER);
        // a gap: segments 4 and 3 before 2 are acknowledged at once (duplicate ACKs with their SACK block)
        let a = on_data(&p, &mut rx, 300, &data[4]);
        assert_eq!((a[0].seq, a[0].sack), (2, 4));
        let a = on_data(&p, &mut rx, 350, &data[3]);
        assert_eq!((a[0].seq, a[0].sack), (2, 3));
        // segment 2 fills the hole and completes the flow: at once
        let a = on_data(&p, &mut rx, 400, &data[2]);
        assert_eq!(a[0].seq, 5);
        // an owed ACK is sent by the timer
        let mut rx = conn(&p, 5);
        assert!(on_data(&p, &mut rx, 0, &data[0]).is_empty());
        let mut out = Vec::new();
        rx.on_delack_timer(&p, 1_000, &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].seq, 1);
        assert_eq!(rx.delack_deadline, NEVER);
    }

    #[test]
    fn dctcp_receiver_acks_at_once_when_the_ce_state_changes() {
        let mut p = params(true);
        p.delack_segments = 2;
        p.delack_timeout = 1_000_000;
        let mut c = conn(&p, 8);
        let mut rx = conn(&p, 8);
        let mut out = Vec::new();
        c.cwnd = 10.0;
        c.start(&p, 0, &mut out);
        let mut data: Vec<Packet> = out.drain(..).collect();
        for d in &mut data[1..3] {
            d.flags |= flags::CE;
        }
        assert!(on_data(&p, &mut rx, 0, &data[0]).is_empty());
        // segment 1 is marked: segment 0 is acknowledged at once without the echo, segment 1 is owed
        let a = on_data(&p, &mut rx, 1, &data[1]);
        assert_eq!(a.len(), 1);
        assert_eq!((a[0].seq, a[0].flags & flags::ECE), (1, 0));
        // segment 2 (marked) completes the pair: both echoed
        let a = on_data(&p, &mut rx, 2, &data[2]);
        assert_eq!((a[0].seq, a[0].flags & flags::ECE), (3, flags::ECE));
        // segment 3 unmarked: segments up to 2 were all acknowledged, so nothing is owed; 3 is owed
        assert!(on_data(&p, &mut rx, 3, &data[3]).is_empty());
        // the sender counts each ACK for the segments it acknowledges: 3 of them, 2 echoed
        let mut tx = conn(&p, 8);
        tx.cwnd = 10.0;
        tx.start(&p, 0, &mut out);
        out.clear();
        let mk = |seq: u32, ece: bool| Packet { seq, flags: flags::ACK | if ece { flags::ECE } else { 0 }, ..data[0] };
        tx.on_ack(&p, 10, &mk(1, false), &mut out);
        tx.on_ack(&p, 11, &mk(3, true), &mut out);
        assert_eq!((tx.win_acks, tx.win_marks), (3, 2));
    }

    /// Run flow `c` to its end against a perfect receiver (every segment delivered, ACKed at `now`).
    fn run_to_end(p: &TcpParams, c: &mut Conn, now: Ps) {
        let mut rx = Conn::new(p, c.flow, c.src, c.dst, c.size, c.size, 0);
        let mut out = Vec::new();
        c.start(p, now, &mut out);
        while !out.is_empty() {
            let batch: Vec<Packet> = out.drain(..).collect();
            for d in &batch {
                let a = deliver(p, &mut rx, d);
                c.on_ack(p, now + 50 * PS_PER_US, &a, &mut out);
            }
        }
        assert!(c.sender_done());
    }

    #[test]
    fn a_reused_connection_carries_alpha_ssthresh_and_rtt_but_restarts_cwnd() {
        let p = params(true);
        let mut first = conn(&p, 40);
        run_to_end(&p, &mut first, 0);
        // give the first flow a congestion history
        first.alpha = 0.4;
        first.ssthresh = 7.0;
        let st = first.carry(&p, 0);
        let mut next = conn(&p, 40);
        next.resume(&p, &st, 300 * PS_PER_US);
        assert_eq!(next.alpha, 0.4);
        assert_eq!(next.ssthresh, 7.0);
        assert_eq!(next.cwnd, p.init_cwnd, "cwnd restarts at the initial window");
        assert_eq!(next.srtt, first.srtt);
        assert!(next.have_rtt);
        let mut out = Vec::new();
        next.start(&p, 300 * PS_PER_US, &mut out);
        assert_eq!(out.len(), p.init_cwnd as usize);
        assert_eq!(out[0].seq, 0, "each flow has its own sequence space");
        // a fresh flow starts from the configured alpha and no ssthresh
        let fresh = conn(&p, 40);
        assert_eq!((fresh.alpha, fresh.ssthresh), (p.alpha_init, f64::INFINITY));
    }

    fn pias_params(per_connection: bool) -> TcpParams {
        let mut cfg = Config::default();
        cfg.scheme.name = SchemeName::Pias;
        cfg.switch.queues = 4;
        cfg.scheme.thresholds_bytes = vec![10 * 1460, 50 * 1460, 100 * 1460];
        cfg.scheme.pias_count = if per_connection { PiasCount::PerConnection } else { PiasCount::PerFlow };
        TcpParams::from_config(&cfg)
    }

    #[test]
    fn pias_per_connection_counts_across_messages_until_an_idle_gap() {
        // a 30-segment message, then the next message on the same connection
        let first_prio = |p: &TcpParams, gap_us: u64| {
            let mut a = conn(p, 30);
            run_to_end(p, &mut a, 0);
            let st = a.carry(p, 0);
            let mut b = conn(p, 30);
            b.resume(p, &st, gap_us * PS_PER_US);
            let mut out = Vec::new();
            b.start(p, gap_us * PS_PER_US, &mut out);
            out[0].prio
        };
        let per_conn = pias_params(true);
        assert_eq!(first_prio(&per_conn, 200), 1, "30 segments counted: past alpha_1, the next message is in queue 1");
        assert_eq!(first_prio(&per_conn, 501), 0, "more than 500 us since the last write: the count restarts");
        assert_eq!(first_prio(&pias_params(false), 200), 0, "per flow: every message starts at the top");
    }

    #[test]
    fn pias_per_connection_restarts_after_consecutive_timeouts() {
        let p = pias_params(true);
        let mut a = conn(&p, 30);
        run_to_end(&p, &mut a, 0);
        let st = a.carry(&p, 0);
        let mut b = conn(&p, 100);
        b.resume(&p, &st, 10 * PS_PER_US);
        let mut out = Vec::new();
        b.cwnd = 40.0;
        b.start(&p, 10 * PS_PER_US, &mut out);
        assert_eq!(out[0].prio, 1);
        assert_eq!(out.last().unwrap().prio, 2, "70 segments counted: past alpha_2");
        // three timeouts in a row (nothing comes back): the count restarts at the high-water mark
        let mut t = 10 * PS_PER_US;
        for _ in 0..3 {
            t = b.rto_deadline;
            out.clear();
            b.on_timeout(&p, t, &mut out);
        }
        assert_eq!(b.pias_base, 0);
        assert_eq!(b.pias_reset_at, 40 * 1460);
        out.clear();
        b.send_segment(&p, 45, t, false, &mut out);
        assert_eq!(out[0].prio, 0, "5 segments past the reset: the top queue again");
    }

    #[test]
    fn l2dct_increase_is_w_c_or_w_c_over_w_max() {
        let mut l = L2dct { w_min: 0.125, w_max: 2.5, size_min: 204_800, size_max: 1_048_576, normalized: false };
        assert_eq!(l.increase(0), 2.5);
        assert_eq!(l.increase(2_000_000), 0.125);
        l.normalized = true;
        assert_eq!(l.increase(0), 1.0, "at w_max a flow grows as TCP does");
        assert_eq!(l.increase(2_000_000), 0.05);
    }

    #[test]
    fn ranks_are_measured_at_the_packet_or_at_the_acknowledged_state() {
        let mk = |rank_at: RankAt, las: bool| {
            let mut cfg = Config::default();
            cfg.scheme.name = if las { SchemeName::Las } else { SchemeName::Pfabric };
            cfg.scheme.rank_at = rank_at;
            cfg.transport.init_cwnd_packets = 4;
            TcpParams::from_config(&cfg)
        };
        let ranks = |p: &TcpParams| {
            let mut c = conn(p, 10);
            let mut out = Vec::new();
            c.start(p, 0, &mut out);
            out.iter().map(|x| x.sack).collect::<Vec<u32>>()
        };
        let m = 1460;
        // pFabric: remaining bytes from each packet's own offset (ns-2: curseq_ - seqno) ...
        assert_eq!(ranks(&mk(RankAt::Packet, false)), vec![10 * m, 9 * m, 8 * m, 7 * m]);
        // ... or the flow's unacknowledged bytes, the same for the whole first window
        assert_eq!(ranks(&mk(RankAt::Ack, false)), vec![10 * m; 4]);
        // LAS: the bytes before the packet, or the high-water mark including it
        assert_eq!(ranks(&mk(RankAt::Packet, true)), vec![0, m, 2 * m, 3 * m]);
        assert_eq!(ranks(&mk(RankAt::Ack, true)), vec![m, 2 * m, 3 * m, 4 * m]);
    }

    #[test]
    fn qclimb_with_tcp_out_of_order_handling_retransmits_at_the_original_priority() {
        let mk = |ooo: OooHandling| {
            let mut cfg = Config::default();
            cfg.scheme.name = SchemeName::Qclimb;
            cfg.scheme.ooo_handling = ooo;
            cfg.switch.queues = 4;
            cfg.scheme.thresholds_bytes = vec![10_000, 20_000, 30_000];
            TcpParams::from_config(&cfg)
        };
        assert!(mk(OooHandling::Qclimb).retx_top_priority);
        assert!(!mk(OooHandling::Tcp).retx_top_priority, "the default-TCP variant abandons section 3.2 whole");
    }
}
