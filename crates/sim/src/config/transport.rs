//! The `transport` section: TCP and DCTCP's parameters, and how flows map to connections.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TransportKind {
    /// TCP NewReno with SACK-based loss recovery; ECN off.
    Tcp,
    /// DCTCP: TCP plus ECN with the alpha estimator and proportional window cuts.
    Dctcp,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct TransportConfig {
    /// Transport; when absent, the scheme's own (tcp for "tcp", dctcp for "dctcp").
    pub kind: Option<TransportKind>,
    /// Maximum segment size: payload bytes of a full data packet.
    pub mss_bytes: u32,
    /// Header bytes every data packet carries on the wire besides its payload (a full packet is `mss_bytes +
    /// header_bytes`).
    pub header_bytes: u32,
    /// Bytes of an ACK on the wire (a header without payload).
    pub ack_bytes: u32,
    /// Initial congestion window, in full-size segments.
    pub init_cwnd_packets: u32,
    /// Upper bound on the window in packets; 0 means none.
    pub max_cwnd_packets: u32,
    /// The initial window in bandwidth-delay products of the fabric the run builds, instead of packets: when
    /// set, `init_cwnd_packets` becomes this many BDPs of the longest base path, in full-size packets, rounded,
    /// at least 1 (`net::scale`; the BDP is the longest base RTT times the sender's host link rate). For
    /// presets whose paper states the window as "the BDP" (pFabric's native preset: 1). An explicit
    /// `init_cwnd_packets` wins: the preset's relative value is then dropped; setting both is refused.
    pub init_cwnd_bdp: Option<f64>,
    /// The window cap in BDPs of the fabric the run builds (as `init_cwnd_bdp`; pFabric's native preset: 1.25,
    /// the ns-2 scripts' 15 packets on their 12-packet BDP). An explicit `max_cwnd_packets` wins.
    pub max_cwnd_bdp: Option<f64>,
    /// The receiver's advertised window in bytes (flow control); 0 (the default) means none, as in the ns-2
    /// simulations of the papers (whose `window_` was set far above any window reached). The sender never sends
    /// a new segment whose last byte lies beyond the cumulative ACK plus this many bytes (RFC 9293's
    /// SND.UNA + SND.WND); retransmissions of segments already sent are allowed. Modelled as a receive buffer
    /// of this size whose in-order part the application reads at once, so the window's right edge is always
    /// `rcv_nxt + rwnd_bytes` and everything held out of order counts against it: a receiver never holds more
    /// than `rwnd_bytes - mss` bytes out of order. Fixed for the flow's life (no autotuning, no window
    /// scaling granularity). Must be 0 or at least `mss_bytes`.
    pub rwnd_bytes: u64,
    /// Floor of the retransmission timeout (RFC 6298's RTO = max(rto_min, SRTT + 4 RTTVAR)).
    pub rto_min_us: f64,
    /// The RTO floor (with `rto_fixed`: the RTO) in base RTTs of the fabric the run builds, instead of us: when
    /// set, `rto_min_us` becomes this many times the longest base RTT (`net::scale`: a full-size packet out and
    /// an ACK back on the idle fabric, store and forward at every hop, on the longest path). For presets whose
    /// paper states the RTO as a number of RTTs (pFabric's native preset: 3, the paper's "about 3 RTTs"). An
    /// explicit `rto_min_us` wins: the preset's relative value is then dropped; setting both is refused.
    pub rto_min_rtts: Option<f64>,
    /// RTO before the first RTT sample; when absent, `rto_min_us` (as data-center simulations set it).
    pub rto_init_us: Option<f64>,
    /// Ceiling of the backed-off RTO.
    pub rto_max_us: f64,
    /// A fixed retransmission timeout: always `rto_min_us`, from the first segment on, whatever the RTT
    /// samples say, and never backed off (`rto_init_us` and `rto_max_us` are then ignored). What the ns-2 TCP
    /// of the pFabric and PIAS simulations did (`MinTCP`: its timeout is always `minrto_`) and what pFabric's
    /// rate control asks for (§4.2: a fixed timeout of about three RTTs). Off (the default): RFC 6298.
    pub rto_fixed: bool,
    /// Duplicate ACKs that start fast recovery; the scoreboard also marks a segment lost once this many
    /// segments above it are SACKed. 0: no loss detection from duplicate ACKs or SACKs at all (timeouts only,
    /// as the ns-2 scripts of pFabric and PIAS ran it: `dynamic_dupack_ 1000000`); SACKed segments are still
    /// skipped when retransmitting after a timeout.
    pub dupack_threshold: u32,
    /// DCTCP's EWMA gain g.
    pub dctcp_g: f64,
    /// DCTCP's alpha before any feedback: 0 as in the ns-2 DCTCP code the PIAS and pFabric simulations used
    /// (Linux starts at 1).
    pub dctcp_alpha_init: f64,
    /// Priority of ACKs (0 is the highest).
    pub ack_priority: u8,
    /// Open each connection with a handshake before its data: a SYN (`ack_bytes` on the wire, the priority
    /// and rank of the first segment) and its SYN-ACK (an ACK), one round trip; the SYN is retransmitted after
    /// `rto_init_us` with back-off if either is lost. Off by default (the papers' simulators start
    /// with data); the ideal FCT then includes the handshake's round trip on the idle fabric.
    pub handshake: bool,
    /// Delayed ACKs: the receiver acknowledges every `delayed_ack_segments`-th in-order segment, or when
    /// `delayed_ack_timeout_us` has passed since the first unacknowledged one; out-of-order segments, hole
    /// fills, the flow's last segment and probes are acknowledged at once, and a DCTCP receiver acknowledges
    /// at once when the CE mark of arriving segments changes (the DCTCP paper's two-state machine). 1 (the
    /// default) acknowledges every segment.
    pub delayed_ack_segments: u32,
    /// Longest wait before a delayed ACK (Linux's minimum delayed-ACK timeout, 40 ms, by default).
    pub delayed_ack_timeout_us: f64,
    /// Which flows share a TCP connection (see [`Connections`]); a connection's state outlives its flows.
    pub connections: Connections,
    /// The application model's per-flow send buffer in bytes (Linux's per-socket `SO_SNDBUF` / `tcp_wmem`):
    /// the application writes a flow's bytes into it, at once or at the flow's generation rate
    /// (`gen_rate_bps`), and the transport sends only bytes written. It holds the bytes not yet acknowledged
    /// (cumulatively); a full buffer blocks the application, whose generation pauses until ACKs free space.
    /// 0 (the default) means unbounded: every byte a flow's application has produced is written at once, and a
    /// flow without a generation rate has all its bytes ready at its start, as before the application model.
    /// Must be 0 or at least `mss_bytes`.
    pub send_buffer_bytes: u64,
}

/// How flows map to TCP connections. Every flow has its own sequence space, scoreboards and counters whatever
/// the model; what a reused connection carries from the flows before it is its congestion state.
///
/// On a reused connection, carried over: DCTCP's alpha, ssthresh, the RTT estimator (SRTT, RTTVAR, and the RTO
/// computed from them, without any back-off), and PIAS's per-connection byte count when
/// `scheme.pias_count = "per_connection"`. Reset for every flow: cwnd (to `init_cwnd_packets`: the PIAS ns-2
/// code's `advance_bytes` sets `cwnd_ = initial_window()` for each new flow), the window bookkeeping and the
/// timeout counters. A connection opens no handshake again (with `transport.handshake`, only its first flow
/// has one).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Connections {
    /// A fresh connection for every flow (alpha = `dctcp_alpha_init`, ssthresh unbounded): the default.
    PerFlow,
    /// A pool of persistent connections per (source, destination) pair, as the PIAS ns-2 scripts keep them
    /// (tcp-common-opt.tcl: `connections_per_pair` connections per pair; a flow that arrives when all of its
    /// pair's connections are busy opens a new one, which then stays in the pool). A new flow takes the
    /// pair's connection that has been idle longest (the scripts hand the next arrival to the connection whose
    /// flow finished first); a connection is idle once its flow's every byte is acknowledged.
    PerHostPair,
    /// Connections named by the trace (its `conn` column, e.g. numbered from the flows' 5-tuples): flows with
    /// the same id reuse one connection, as a request/response loop on a persistent socket does. A socket may
    /// write its next message once the previous one is all sent, before its last ACK: a flow that starts while
    /// an earlier flow of its connection has sent every segment takes the connection over from it (its state
    /// as it is then); one that starts while the earlier flow still has data unsent opens a new connection of
    /// that id (which then joins the id's pool). Needs the trace's connection ids.
    Trace,
}

impl Default for TransportConfig {
    fn default() -> Self {
        TransportConfig {
            kind: None,
            mss_bytes: 1460,
            header_bytes: 40,
            ack_bytes: 40,
            init_cwnd_packets: 10,
            max_cwnd_packets: 0,
            init_cwnd_bdp: None,
            max_cwnd_bdp: None,
            rwnd_bytes: 0,
            rto_min_us: 200.0,
            rto_min_rtts: None,
            rto_init_us: None,
            rto_max_us: 1_000_000.0,
            rto_fixed: false,
            dupack_threshold: 3,
            dctcp_g: 1.0 / 16.0,
            dctcp_alpha_init: 0.0,
            ack_priority: 0,
            handshake: false,
            delayed_ack_segments: 1,
            delayed_ack_timeout_us: 40_000.0,
            connections: Connections::PerFlow,
            send_buffer_bytes: 0,
        }
    }
}
