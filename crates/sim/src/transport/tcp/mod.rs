//! TCP NewReno with a SACK scoreboard, and DCTCP, as one state machine per flow (both ends of the flow).
//!
//! What is modelled (RFC 5681, 6675, 6298, 8257; the DCTCP paper, SIGCOMM 2010):
//! - Sequence space in whole segments of `mss` payload bytes (the last may be shorter). By default every data
//!   segment is acknowledged at once (no delayed ACKs) and the data starts without a handshake; both are
//!   options (`transport.delayed_ack_segments`, `transport.handshake`, see `config/transport.rs`). An ACK
//!   carries the cumulative ACK (next segment expected), the segment that triggered it when that segment is
//!   above the cumulative ACK (a one-segment SACK block),
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
//!
//! Where things are: `Conn`, its parameters and constructor here; the sender's output (next segment, windows,
//! packets) in `send.rs`; ACKs, recovery, timeouts and window cuts in `ack.rs`; the receiver and delayed ACKs in
//! `recv.rs`; the application model, connection reuse and HyLine's stop in `app.rs`; the tagging hooks (QCLIMB,
//! PIAS in QCLIMB, RAX) in `tagging.rs`. Each file adds an `impl Conn` block; the fields stay here, in one struct,
//! because their order is the cache layout.

use super::bitset::BitSet;
use super::scoreboard::{Marks, Scoreboard, Tally};
use crate::config::{
    Config, L2dctIncrease, OooHandling, PiasCount, PriorityLossRepair, RankAt, SchemeName, TransportKind,
};
use crate::policy::rax::RaxParams;
use crate::policy::{Bounds, Rank, Tagging};
use crate::net::packet::Packet;
use crate::units::{Ps, NEVER, PS_PER_US};

mod ack;
mod app;
mod recv;
mod send;
mod tagging;
#[cfg(test)]
mod tests;

pub use app::{time_to_generate, App, ConnState};

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
    /// The scoreboard's counts (three u32, where they have always been).
    tally: Tally,

    // --- line 2: the sender's recovery and window bookkeeping, flags ---
    /// The scoreboard's fack, loss-marking and retransmission scan positions (three u32).
    marks: Marks,
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
    /// SACKed, lost and retransmitted segments (three bit sets).
    board: Scoreboard,
    rcvd: BitSet,
    size: u64,
    /// Estimated size (pFabric ranked by estimate).
    estimate: u64,
    /// Predicted bounds and estimate (QCLIMB's tagging; pFabric and RAX+ by bounds).
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
                carried: 0,
            },
            prio,
            snd_una: 0,
            snd_nxt: 0,
            cwnd: p.init_cwnd.min(p.max_cwnd),
            ssthresh: f64::INFINITY,
            dupacks: 0,
            recovery: None,
            recover: 0,
            board: Scoreboard::new(n_segs),
            tally: Tally::default(),
            marks: Marks::default(),
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

    /// Segments in flight by the RFC 6675 estimate.
    #[inline]
    pub fn pipe(&self) -> u32 {
        self.tally.pipe(self.snd_una, self.snd_nxt)
    }

    pub fn sender_done(&self) -> bool {
        self.snd_una == self.n_segs
    }

    /// The earliest of the flow's timers (retransmission, delayed ACK); `NEVER` when none runs.
    #[inline]
    pub fn deadline(&self) -> Ps {
        self.rto_deadline.min(self.delack_deadline).min(self.app_deadline)
    }

    /// Free the scoreboards once the flow is over.
    fn release(&mut self) {
        self.board.release();
    }

    /// Segments currently marked lost / SACKed / retransmitted (for tests and invariants).
    pub fn scoreboard(&self) -> (u32, u32, u32) {
        (self.tally.lost, self.tally.sacked, self.tally.retx)
    }
}
