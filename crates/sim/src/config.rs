//! The engine's configuration: every section of an experiment except the workload (flows arrive as arrays).
//!
//! Parse, don't validate: [`Config::from_json`] reads JSON with unknown keys rejected, fills every default, and
//! checks ranges once; the rest of the engine trusts the result. Errors name the key path
//! (`topology.k: must be an even number >= 2 (got 7)`). These defaults are the single source of truth: the
//! Python front asks the engine for them (`fctlab._core.defaults()`) instead of restating them.

use serde::{Deserialize, Serialize};
use std::fmt;

/// A configuration error: the dotted key path and what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    pub key: String,
    pub message: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.key.is_empty() {
            write!(f, "{}", self.message)
        } else {
            write!(f, "{}: {}", self.key, self.message)
        }
    }
}

impl std::error::Error for ConfigError {}

fn err<T>(key: &str, message: impl Into<String>) -> Result<T, ConfigError> {
    Err(ConfigError { key: key.to_string(), message: message.into() })
}

/// Whole engine configuration. Every field has a default.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    /// Seed of the run's one random generator (ECMP salts, packet spraying).
    pub seed: u64,
    pub topology: TopologyConfig,
    pub switch: SwitchConfig,
    pub host: HostConfig,
    pub routing: RoutingConfig,
    pub transport: TransportConfig,
    pub scheme: SchemeConfig,
    pub run: RunConfig,
    pub link_loss: LinkLossConfig,
}

/// Random loss on host links (the PDQ paper's loss experiment drops packets at random on the bottleneck link in
/// both directions): every packet that crosses a link of one of `hosts`, either way, is lost with probability
/// `probability`, independently. The packet takes its serialization time on the link, then never reaches the
/// far end. Each lossy port draws from a generator of its own, seeded from the run's seed (the run's other
/// random choices are the same with and without loss); lossy ports are event-driven. An empty `hosts` list means
/// every host. Off (probability 0) by default.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields, default)]
pub struct LinkLossConfig {
    pub probability: f64,
    pub hosts: Vec<u32>,
}

/// The fabric, built from parameters. Rates in Gbit/s, one-way propagation delays in ns.
/// Every kind has host links (host <-> first switch); kinds with more than one switch also have core links.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TopologyConfig {
    /// N hosts on one switch (the QCLIMB and RAX testbeds).
    SingleSwitch(SingleSwitch),
    /// `senders` hosts on a left switch, `receivers` on a right switch, one core (bottleneck) link between them.
    Dumbbell(Dumbbell),
    /// Two-tier leaf-spine: every leaf connects to every spine by one core link.
    LeafSpine(LeafSpine),
    /// Three-tier k-ary fat-tree (k pods, k/2 edge and k/2 aggregation switches per pod, (k/2)^2 cores,
    /// k^3/4 hosts).
    FatTree(FatTree),
    /// BCube(n, k) (Guo et al., SIGCOMM 2009): n^(k+1) servers with k+1 ports each, k+1 levels of n^k n-port
    /// switches; servers relay (see [`Bcube`]).
    Bcube(Bcube),
    /// Jellyfish (Singla et al., NSDI 2012): a random regular graph of `switches` switches (see [`Jellyfish`]).
    Jellyfish(Jellyfish),
}

impl Default for TopologyConfig {
    fn default() -> Self {
        TopologyConfig::LeafSpine(LeafSpine::default())
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SingleSwitch {
    pub hosts: u32,
    pub host_link_gbps: f64,
    pub host_link_delay_ns: f64,
}

impl Default for SingleSwitch {
    /// The QCLIMB testbed: 8 hosts at 25 Gbps. The paper gives no propagation delay; 1 us per link is a
    /// short rack cable plus NIC latency.
    fn default() -> Self {
        SingleSwitch { hosts: 8, host_link_gbps: 25.0, host_link_delay_ns: 1000.0 }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Dumbbell {
    pub senders: u32,
    pub receivers: u32,
    pub host_link_gbps: f64,
    pub core_link_gbps: f64,
    pub host_link_delay_ns: f64,
    pub core_link_delay_ns: f64,
}

impl Default for Dumbbell {
    fn default() -> Self {
        Dumbbell {
            senders: 4,
            receivers: 1,
            host_link_gbps: 10.0,
            core_link_gbps: 10.0,
            host_link_delay_ns: 1000.0,
            core_link_delay_ns: 1000.0,
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LeafSpine {
    pub leaves: u32,
    pub hosts_per_leaf: u32,
    pub spines: u32,
    pub host_link_gbps: f64,
    pub core_link_gbps: f64,
    pub host_link_delay_ns: f64,
    pub core_link_delay_ns: f64,
}

impl Default for LeafSpine {
    /// The 144-host fabric of the pFabric, PIAS, RAX and QCLIMB simulations, with the PIAS ns-2 delays
    /// (0.2 us per link plus 20 us on each host link; HKUST-SING/PIAS-NS2 @5fb5867): 85.2 us base RTT across a
    /// spine with 1500-byte packets.
    fn default() -> Self {
        LeafSpine {
            leaves: 9,
            hosts_per_leaf: 16,
            spines: 4,
            host_link_gbps: 10.0,
            core_link_gbps: 40.0,
            host_link_delay_ns: 20_200.0,
            core_link_delay_ns: 200.0,
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FatTree {
    pub k: u32,
    /// Hosts under each edge switch; 0 means k/2 (the non-oversubscribed fat-tree). HyLine's 256-host,
    /// 8-pod fabric is k = 8 with 8 hosts per edge.
    pub hosts_per_edge: u32,
    pub host_link_gbps: f64,
    pub core_link_gbps: f64,
    pub host_link_delay_ns: f64,
    pub core_link_delay_ns: f64,
}

impl Default for FatTree {
    /// A k = 8 fat-tree (8 pods, 80 switches, 128 hosts) with HyLine's links: all 1 Gbps, 25 us per link as in
    /// its public ns-2 scripts (Soheil-ab/HyLine @f02140b), which gives the paper's 300 us cross-pod RTT.
    fn default() -> Self {
        FatTree {
            k: 8,
            hosts_per_edge: 0,
            host_link_gbps: 1.0,
            core_link_gbps: 1.0,
            host_link_delay_ns: 25_000.0,
            core_link_delay_ns: 25_000.0,
        }
    }
}

impl FatTree {
    /// Hosts under each edge switch.
    pub fn edge_hosts(&self) -> u32 {
        if self.hosts_per_edge == 0 { self.k / 2 } else { self.hosts_per_edge }
    }
}

/// BCube(n, k): servers with k+1 ports, k+1 levels of n^k switches with n ports each, n^(k+1) servers.
///
/// Wiring (the BCube paper's): server a = (a_k .. a_0) in base n connects at level i to the level-i switch
/// whose address is a's digits without a_i, on that switch's port a_i. Two servers differing in d digits are
/// d switch hops apart, through d - 1 other servers.
///
/// Servers relay packets, which the engine's hosts (one NIC, never forwarding) cannot: each server is its host
/// plus a *relay* node (a switch-kind node standing for the server's forwarding) joined by an internal link;
/// the relay owns the server's k+1 ports to the BCube switches. The internal link has no propagation delay and
/// a rate of max(8 Tbit/s, 100 x (k+1) x `host_link_gbps`), so it never limits a flow (1,500 B cross it in
/// 1.5 ns, twice per path). The relay's egress ports stand for the server's NIC queues: they take
/// `host.nic_buffer_bytes` and the NIC's ECN setting (`host.nic_ecn`), never a shared switch pool.
/// Routing is ECMP (or spraying) over all shortest server-relayed paths, not BCube's source routing (BSR).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Bcube {
    /// Ports per switch (the base of a server's address).
    pub n: u32,
    /// The highest level: k+1 levels, k+1 ports per server (1: dual-port servers).
    pub k: u32,
    pub host_link_gbps: f64,
    pub host_link_delay_ns: f64,
}

impl Default for Bcube {
    /// BCube(4, 1) with dual-port servers (the PDQ paper's BCube, §5.5): 16 servers, 8 switches. Links at
    /// 1 Gbps with 10 us of propagation each, the delay fctlab's PDQ reproduction gives every link.
    fn default() -> Self {
        Bcube { n: 4, k: 1, host_link_gbps: 1.0, host_link_delay_ns: 10_000.0 }
    }
}

impl Bcube {
    /// Number of servers, n^(k+1) (saturating: `validate` bounds it).
    pub fn servers(&self) -> u64 {
        let mut s: u64 = 1;
        for _ in 0..=self.k.min(64) {
            s = s.saturating_mul(self.n as u64);
        }
        s
    }

    /// Switches per level, n^k.
    pub fn switches_per_level(&self) -> u64 {
        self.servers() / self.n.max(1) as u64
    }

    /// Rate of a server's internal link between its host and its relay, in bit/s (see the type's docs).
    pub fn relay_link_bps(&self) -> u64 {
        let fast = 100.0 * (self.k as f64 + 1.0) * self.host_link_gbps * 1e9;
        (fast.ceil() as u64).max(8_000_000_000_000)
    }
}

/// Jellyfish: `switches` switches with `ports` ports each, `network_ports` of them wired to other switches in a
/// random `network_ports`-regular graph and the other `ports - network_ports` to hosts.
///
/// The graph is built as the Jellyfish paper does: join random pairs of switches that have free ports and are
/// not yet neighbours until no such pair is left; then a switch left with two or more free ports takes a random
/// link (x, y) apart and joins x and y (fctlab also joins two switches with one free port each this way).
/// No self-loops, no parallel links. When switches x network_ports is odd, one port stays free. The graph comes
/// from `graph_seed`, not the run's seed, so every scheme and run seed sees the same graph; a disconnected draw
/// is drawn again from the next seed derived from it. Routing is ECMP (or spraying) over all shortest paths
/// (the paper's k-shortest-path routing is not built).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Jellyfish {
    pub switches: u32,
    pub ports: u32,
    pub network_ports: u32,
    pub host_link_gbps: f64,
    pub core_link_gbps: f64,
    pub host_link_delay_ns: f64,
    pub core_link_delay_ns: f64,
    pub graph_seed: u64,
}

impl Default for Jellyfish {
    /// The PDQ paper's Jellyfish (§5.5): 24-port switches with 16 network ports (2:1 network to server ports),
    /// here 20 switches, 160 servers (its Figure 8e has about 128; 16 network ports need at least 17 switches,
    /// and 20 leave the graph some randomness). Links at 1 Gbps with 10 us of propagation each, as fctlab's PDQ
    /// reproduction.
    fn default() -> Self {
        Jellyfish {
            switches: 20,
            ports: 24,
            network_ports: 16,
            host_link_gbps: 1.0,
            core_link_gbps: 1.0,
            host_link_delay_ns: 10_000.0,
            core_link_delay_ns: 10_000.0,
            graph_seed: 1,
        }
    }
}

impl Jellyfish {
    /// Hosts under each switch.
    pub fn hosts_per_switch(&self) -> u32 {
        self.ports.saturating_sub(self.network_ports)
    }
}

impl TopologyConfig {
    /// The topology kinds, as written in configs.
    pub const KINDS: [&'static str; 6] =
        ["single_switch", "dumbbell", "leaf_spine", "fat_tree", "bcube", "jellyfish"];

    /// The kind's name, as written in configs.
    pub fn kind(&self) -> &'static str {
        match self {
            TopologyConfig::SingleSwitch(_) => "single_switch",
            TopologyConfig::Dumbbell(_) => "dumbbell",
            TopologyConfig::LeafSpine(_) => "leaf_spine",
            TopologyConfig::FatTree(_) => "fat_tree",
            TopologyConfig::Bcube(_) => "bcube",
            TopologyConfig::Jellyfish(_) => "jellyfish",
        }
    }

    /// Number of hosts the topology has.
    pub fn hosts(&self) -> u32 {
        match self {
            TopologyConfig::SingleSwitch(t) => t.hosts,
            TopologyConfig::Dumbbell(t) => t.senders + t.receivers,
            TopologyConfig::LeafSpine(t) => t.leaves * t.hosts_per_leaf,
            TopologyConfig::FatTree(t) => t.k * (t.k / 2) * t.edge_hosts(),
            TopologyConfig::Bcube(t) => t.servers().min(u32::MAX as u64) as u32,
            TopologyConfig::Jellyfish(t) => t.switches.saturating_mul(t.hosts_per_switch()),
        }
    }

    /// Host link rate in Gbit/s (the rate the load is defined on).
    pub fn host_link_gbps(&self) -> f64 {
        match self {
            TopologyConfig::SingleSwitch(t) => t.host_link_gbps,
            TopologyConfig::Dumbbell(t) => t.host_link_gbps,
            TopologyConfig::LeafSpine(t) => t.host_link_gbps,
            TopologyConfig::FatTree(t) => t.host_link_gbps,
            TopologyConfig::Bcube(t) => t.host_link_gbps,
            TopologyConfig::Jellyfish(t) => t.host_link_gbps,
        }
    }
}

/// Where a switch port's buffer comes from.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum BufferMode {
    /// Each port owns `buffer_bytes`, shared by its priority queues.
    Port,
    /// Each switch has one pool of `shared_buffer_bytes`; a queue may grow while its occupancy is below
    /// `dt_alpha` x (free pool bytes) (Choudhury-Hahne dynamic thresholds, per priority queue).
    Shared,
}

/// What a PFC pause holds back (`switch.pfc_mode`; see `net::pfc`).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum PfcMode {
    /// IEEE 802.1Qbb: PAUSE and RESUME frames travel to the upstream ports feeding the congested queue, and a
    /// paused port sends no packet of that priority, wherever it is bound (head-of-line blocking).
    Port,
    /// The HyLine authors' ns-2 model, like virtual output queues: no frames; an upstream port reads the state
    /// of the queue each packet will join at the next switch and sends the first packet of the priority whose
    /// next queue is not paused. One thread only.
    NextQueue,
}

/// What ECN marking looks at.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum EcnMode {
    /// Mark when the port's total occupancy exceeds the threshold (PIAS, DCTCP).
    Port,
    /// Mark when the packet's own priority queue exceeds the threshold.
    Queue,
    Off,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SwitchConfig {
    /// Number of strict-priority FIFO queues per port; priority p goes to queue min(p, queues - 1).
    pub queues: u32,
    pub buffer: BufferMode,
    /// Per-port buffer (buffer = "port"): 240 x 1500 B, the PIAS ns-2 value.
    pub buffer_bytes: u64,
    /// Per-switch pool (buffer = "shared").
    pub shared_buffer_bytes: u64,
    pub dt_alpha: f64,
    pub ecn: EcnMode,
    /// Marking threshold on instantaneous occupancy in bytes: 65 x 1500 B, the PIAS ns-2 value.
    pub ecn_threshold_bytes: u64,
    /// Priority Flow Control (IEEE 802.1Qbb, on/off as the HyLine paper's ns-2 version; see `net::pfc`): a
    /// switch whose egress queue of a protected priority reaches `pfc_pause_packets` pauses that priority on
    /// the upstream ports feeding it, and resumes it when every such queue is below `pfc_resume_packets`.
    pub pfc: bool,
    /// What a pause holds back ([`PfcMode`]): the whole priority at the upstream port (IEEE 802.1Qbb, the
    /// default), or only the packets bound for the paused queue (the HyLine authors' ns-2 code).
    pub pfc_mode: PfcMode,
    /// Packets in an egress queue at which PFC pauses its priority upstream: HyLine's Table I (215 packets).
    pub pfc_pause_packets: u32,
    /// Packets below which the queue no longer holds its priority paused: HyLine's Table I (205 packets).
    pub pfc_resume_packets: u32,
    /// The queues PFC protects (lossless classes). When absent: every queue but 0 (with one queue, queue 0):
    /// in HyLine's two classes, the low-priority class (queue 1), which PFC keeps from being dropped when the
    /// high-priority class fills the buffer; the high-priority class stays lossy, as in the authors' scripts.
    pub pfc_queues: Option<Vec<u32>>,
    /// Size of a PAUSE or RESUME frame on the wire (an Ethernet control frame: 64 bytes).
    pub pfc_frame_bytes: u32,
    /// Bytes a protected queue of a switch port may hold beyond `buffer_bytes` (per-port buffers only): the
    /// lossless class's headroom, which the other queues cannot take, so that a full port still admits what
    /// the upstream sends before a pause reaches it. 0 by default (all queues share the port's buffer); the
    /// HyLine authors' ns-2 scripts give the protected queue 100 packets more with PFC on.
    pub pfc_headroom_bytes: u64,
}

impl SwitchConfig {
    /// The queues PFC protects, as a bit mask (see [`SwitchConfig::pfc_queues`]); 0 when PFC is off.
    pub fn pfc_mask(&self) -> u64 {
        if !self.pfc {
            return 0;
        }
        match &self.pfc_queues {
            Some(qs) => qs.iter().fold(0, |m, &q| m | 1u64 << q.min(63)),
            None if self.queues <= 1 => 1,
            None => ((1u128 << self.queues) - 2) as u64,
        }
    }
}

impl Default for SwitchConfig {
    fn default() -> Self {
        SwitchConfig {
            queues: 8,
            buffer: BufferMode::Port,
            buffer_bytes: 360_000,
            shared_buffer_bytes: 0,
            dt_alpha: 1.0,
            ecn: EcnMode::Port,
            ecn_threshold_bytes: 97_500,
            pfc: false,
            pfc_mode: PfcMode::Port,
            pfc_pause_packets: 215,
            pfc_resume_packets: 205,
            pfc_queues: None,
            pfc_frame_bytes: 64,
            pfc_headroom_bytes: 0,
        }
    }
}

/// The hosts' NIC egress queue.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct HostConfig {
    /// NIC buffer in bytes. When absent, the switches' per-port buffer (`switch.buffer_bytes`): the host's
    /// egress queue is a switch-like port, as the PIAS and pFabric ns-2 scripts build host links with the
    /// switches' queue (and as other packet-level simulators do), so that a host's own flows share a bounded,
    /// marking queue that DCTCP can control. 0 means unbounded (a host that back-pressures its sockets instead
    /// of dropping; fctlab's default before the switch-like NIC).
    pub nic_buffer_bytes: Option<u64>,
    /// Whether the NIC queue marks ECN as the switch ports do (`switch.ecn`, `switch.ecn_threshold_bytes`). On by
    /// default, as in the ns-2 scripts; real NICs do not mark, which `false` models.
    pub nic_ecn: bool,
}

impl Default for HostConfig {
    fn default() -> Self {
        HostConfig { nic_buffer_bytes: None, nic_ecn: true }
    }
}

impl HostConfig {
    /// The NIC's buffer in bytes (0 = unbounded), given the switches' per-port buffer.
    pub fn nic_buffer(&self, switch_buffer_bytes: u64) -> u64 {
        self.nic_buffer_bytes.unwrap_or(switch_buffer_bytes)
    }
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum RoutingMode {
    /// Per-flow ECMP: a hash of the flow's 5-tuple with a per-switch salt picks among equal-cost next hops.
    Ecmp,
    /// Packet spraying: every packet picks a uniformly random equal-cost next hop at every switch.
    Spray,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RoutingConfig {
    pub mode: RoutingMode,
}

impl Default for RoutingConfig {
    fn default() -> Self {
        RoutingConfig { mode: RoutingMode::Ecmp }
    }
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum TransportKind {
    /// TCP NewReno with SACK-based loss recovery; ECN off.
    Tcp,
    /// DCTCP: TCP plus ECN with the alpha estimator and proportional window cuts.
    Dctcp,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TransportConfig {
    /// Transport; when absent, the scheme's own (tcp for "tcp", dctcp for "dctcp").
    pub kind: Option<TransportKind>,
    pub mss_bytes: u32,
    pub header_bytes: u32,
    pub ack_bytes: u32,
    pub init_cwnd_packets: u32,
    /// Upper bound on the window in packets; 0 means none.
    pub max_cwnd_packets: u32,
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
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
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
            rwnd_bytes: 0,
            rto_min_us: 200.0,
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

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum SchemeName {
    Tcp,
    Dctcp,
    Pfabric,
    Las,
    Pias,
    L2dct,
    Qclimb,
    Rcp,
    D3,
    Pdq,
    #[serde(rename = "pdq-basic")]
    PdqBasic,
    #[serde(rename = "pdq-es")]
    PdqEs,
    #[serde(rename = "pdq-es-et")]
    PdqEsEt,
    Homa,
    Rax,
    #[serde(rename = "rax-plus")]
    RaxPlus,
    Hyline,
    Qjump,
}

/// The transport families (see `engine::family`): one run uses one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FamilyName {
    /// Window-based TCP and its variants, with host-side tagging and rank queues (`transport::tcp`).
    Tcp,
    /// Explicit-rate transports whose switches compute each flow's rate (`transport::rate`): RCP, D3, PDQ.
    Rate,
    /// Receiver-driven message transport over priority queues (`transport::homa`): Homa.
    Homa,
    /// TCP under a central manager that admits, routes and stops large flows (`engine::hyline`): HyLine.
    Hyline,
    /// TCP behind per-flow token buckets at the hosts (`engine::qjump`): QJump.
    Qjump,
}

impl SchemeName {
    /// Every scheme the engine runs, with a one-line description.
    pub const ALL: [(&'static str, &'static str); 18] = [
        ("tcp", "TCP NewReno with SACK; drop-tail strict-priority switches; one priority per flow"),
        ("dctcp", "DCTCP: ECN marking on instantaneous occupancy, alpha-proportional window cuts"),
        (
            "pfabric",
            "pFabric: packets carry remaining flow size; switches serve the most urgent flow and drop the least \
             urgent packets; senders start at line rate, fixed small RTO, timeouts only, probe mode after repeated \
             timeouts",
        ),
        ("las", "LAS: pFabric's switch queue ranked by bytes the flow has sent (least attained service first)"),
        (
            "pias",
            "PIAS: hosts tag packets by bytes sent over K strict-priority queues (MLFQ), DCTCP, probe-based \
             handling of packets trapped in low queues",
        ),
        ("l2dct", "L2DCT: DCTCP whose window increase and decrease are weighted by the bytes a flow has sent"),
        (
            "qclimb",
            "QCLIMB: tagging by predicted lower/upper bounds (queue climbing up, slack, demotion), DCTCP, \
             priority-based loss detection with customized ACKs at the receiver",
        ),
        (
            "rcp",
            "RCP: each switch port computes one fair rate per control interval from spare capacity and queue; \
             senders send at the smallest rate along their path",
        ),
        (
            "d3",
            "D3: deadline-aware rate requests once per RTT, granted greedily first come first served at each switch \
             with spare capacity shared fairly; flows without deadlines get the fair share",
        ),
        (
            "pdq",
            "PDQ (full): switches keep the most critical flows (earliest deadline, then shortest remaining time), \
             let them send at the rate controller's rate and pause the rest; Early Start, Early Termination and \
             Suppressed Probing",
        ),
        ("pdq-basic", "PDQ without Early Start, Early Termination or Suppressed Probing"),
        ("pdq-es", "PDQ with Early Start only"),
        ("pdq-es-et", "PDQ with Early Start and Early Termination (no Suppressed Probing)"),
        (
            "homa",
            "Homa: the first RTTbytes of each message sent blind at a priority chosen by its size; the rest only \
             against the receiver's grants, SRPT over a few messages at once on the scheduled priorities",
        ),
        (
            "rax",
            "RAX: hosts tag packets by the estimated remaining time (b_s + b_b) / min(r_c, C) + b_b / C, r_c being \
             the measured copy rate into the send buffer, over exponential thresholds; DCTCP; no fast retransmit \
             while a flow's priority rises",
        ),
        ("rax-plus", "RAX+: RAX tagging by the true remaining time (true size and generation rate)"),
        (
            "hyline",
            "HyLine: flows up to H bytes at line rate in the high-priority queue over ECMP; larger flows ask a \
             central manager, which admits, source-routes and stops them with path-aware preemption (TCP underneath)",
        ),
        (
            "qjump",
            "QJump: TCP with a priority level per flow by its size, each level's flows rate-limited at the host by a \
             token bucket refilled every interval (packets beyond it dropped); the smallest flows highest",
        ),
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            SchemeName::Tcp => "tcp",
            SchemeName::Dctcp => "dctcp",
            SchemeName::Pfabric => "pfabric",
            SchemeName::Las => "las",
            SchemeName::Pias => "pias",
            SchemeName::L2dct => "l2dct",
            SchemeName::Qclimb => "qclimb",
            SchemeName::Rcp => "rcp",
            SchemeName::D3 => "d3",
            SchemeName::Pdq => "pdq",
            SchemeName::PdqBasic => "pdq-basic",
            SchemeName::PdqEs => "pdq-es",
            SchemeName::PdqEsEt => "pdq-es-et",
            SchemeName::Homa => "homa",
            SchemeName::Rax => "rax",
            SchemeName::RaxPlus => "rax-plus",
            SchemeName::Hyline => "hyline",
            SchemeName::Qjump => "qjump",
        }
    }

    /// The transport family the scheme belongs to.
    pub fn family(self) -> FamilyName {
        match self {
            SchemeName::Rcp
            | SchemeName::D3
            | SchemeName::Pdq
            | SchemeName::PdqBasic
            | SchemeName::PdqEs
            | SchemeName::PdqEsEt => FamilyName::Rate,
            SchemeName::Homa => FamilyName::Homa,
            SchemeName::Hyline => FamilyName::Hyline,
            SchemeName::Qjump => FamilyName::Qjump,
            _ => FamilyName::Tcp,
        }
    }

    /// Is this one of the PDQ variants?
    pub fn is_pdq(self) -> bool {
        matches!(self, SchemeName::Pdq | SchemeName::PdqBasic | SchemeName::PdqEs | SchemeName::PdqEsEt)
    }

    /// Does the switch use pFabric's rank queue (instead of strict-priority FIFOs)?
    pub fn rank_queue(self) -> bool {
        matches!(self, SchemeName::Pfabric | SchemeName::Las)
    }
}

/// Which published parameter set fills the keys a config leaves out (see [`scheme_defaults`]).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Preset {
    /// The scheme's own paper (pFabric: its ns-2 scripts; PIAS: the PIAS ns-2 scripts).
    Native,
    /// As the PIAS paper ran the scheme (pFabric: 140-packet queue, RTO 250 us, initial window 70).
    Pias,
}

/// What QCLIMB knows of each flow's size (QCLIMB paper, section 5 and appendix A).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum QclimbInfo {
    /// Lower and upper bounds (`lower_bytes`, `upper_bytes` columns): QCLIMB.
    Bounds,
    /// The true size as both bounds: QCLIMB-PS.
    Precise,
    /// One priority from the point estimate (`estimate_bytes`): QCLIMB-FP.
    PointFixed,
    /// Climb by the point estimate, then the lowest priority: QCLIMB-PP.
    PointClimb,
}

/// How a QCLIMB receiver treats out-of-order data.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum OooHandling {
    /// Priority-based loss detection and customized ACKs (section 3.2).
    Qclimb,
    /// TCP's own: duplicate ACKs and fast retransmit.
    Tcp,
}

/// Which losses a QCLIMB receiver's priority-based detection reports (section 3.2.3).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum PriorityLossRepair {
    /// As section 3.2.3 describes it: only the gap at the cumulative ACK; the sender retransmits that hole, and
    /// the next one only on a later ACK with a higher cumulative ACK and the retransmission flag (one lost
    /// segment per round trip).
    Cumulative,
    /// fctlab's variant, not in the paper: the receiver also applies the priority test to the gap just below
    /// each out-of-order segment it receives, and the sender retransmits every segment of such a gap (window
    /// permitting), as SACK recovery repairs all the holes of a window in one round trip.
    EveryGap,
}

/// What PIAS counts its bytes sent over, for demotion.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum PiasCount {
    /// The flow's own bytes: a packet's byte offset in its flow (the PIAS ns-2 code, `seqno - startseq_`).
    PerFlow,
    /// The connection's bytes, as the PIAS kernel module counts them (HKUST-SING/PIAS-Software, pias4): the
    /// count carries over from one flow (message) of a connection to the next, and is reset to 0 only when a
    /// new message is written more than `scheme.pias_idle_us` after the previous write with nothing left
    /// unsent (jprobe.c), or after `scheme.pias_timeout_reset` consecutive timeouts (netfilter.c, "aging").
    /// A flow's write is its start. Needs `transport.connections` other than "per_flow" to matter.
    PerConnection,
}

/// How L2DCT's additive increase is weighted.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum L2dctIncrease {
    /// w_c segments per window of ACKs (the L2DCT paper: cwnd <- cwnd + w_c / cwnd per ACK).
    Weight,
    /// w_c / w_max segments per window (the PIAS ns-2 code, tcp.cc `opencwnd`: `increase_num_ =
    /// lldct_w_c_ / lldct_w_max_`), so a flow at w_max grows as TCP does and never faster.
    Normalized,
}

/// Where in its flow a packet's rank is measured (pFabric, LAS).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum RankAt {
    /// At the packet itself, as the ns-2 code of the pFabric and PIAS simulations does (tcp-full.cc `set_prio`,
    /// `prio_scheme_` 2 and 3): pFabric's rank is the flow's bytes from this packet's offset to its end
    /// (`curseq_ - seqno`), LAS's the bytes before this packet (`seqno - startseq_`), so a retransmission
    /// carries the rank of its original position.
    Packet,
    /// At the sender's state when the packet leaves: pFabric's rank is the flow's size minus the bytes
    /// acknowledged, LAS's the highest byte sent so far (a retransmission takes the flow's high-water mark).
    Ack,
}

/// What pFabric's packets are ranked by.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum RankBy {
    /// Remaining flow size: bytes not yet acknowledged when the packet is sent (pFabric).
    RemainingSize,
    /// Remaining size by the flow's estimated size (`estimate_bytes` in the trace): estimate minus bytes
    /// acknowledged, floored at 0 (pFabric with imprecise sizes, QCLIMB App. A).
    Estimate,
    /// Remaining time (the RAX paper's section II-B variant of pFabric): the remaining size (as for
    /// `remaining_size`) divided by the smaller of the flow's generation rate and the host link rate, in ns
    /// (saturating at about 4.3 s). Without a generation rate this orders flows as `remaining_size` does.
    RemainingTime,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SchemeConfig {
    pub name: SchemeName,
    /// Which parameter set fills unspecified switch/transport keys for this scheme.
    pub preset: Preset,
    /// Priority of every flow whose trace gives none ("fixed" tagging of tcp, dctcp, l2dct).
    pub priority: u8,
    /// PIAS demotion thresholds alpha_1 < ... < alpha_{K-1} in bytes: a packet sent after more than alpha_j
    /// bytes of its flow goes below queue j-1. Must have switch.queues - 1 entries (fewer is allowed: the
    /// lower queues are then unused).
    pub thresholds_bytes: Vec<u64>,
    /// After this many consecutive timeouts a flow stops retransmitting and sends probes until an ACK comes
    /// back (pFabric's probe mode; PIAS's handling of trapped packets). 0 turns it off.
    pub probe_after_timeouts: u32,
    /// pFabric's rank, and where in the flow ranks (pFabric's and LAS's) are measured.
    pub rank: RankBy,
    pub rank_at: RankAt,
    /// L2DCT weights (Munir et al., INFOCOM 2013; values from the PIAS ns-2 scripts): w_max up to
    /// `l2dct_size_min_bytes` sent, w_min from `l2dct_size_max_bytes`, linear in between.
    pub l2dct_w_min: f64,
    pub l2dct_w_max: f64,
    pub l2dct_size_min_bytes: u64,
    pub l2dct_size_max_bytes: u64,
    /// QCLIMB: what it knows of flow sizes, its slack S in bytes (100 KB in the paper), and its out-of-order
    /// handling. Its thresholds are `thresholds_bytes` (the paper uses PIAS's).
    pub qclimb_info: QclimbInfo,
    pub slack_bytes: u64,
    pub ooo_handling: OooHandling,
    /// QCLIMB: which priority-detected losses are repaired at once (see [`PriorityLossRepair`]).
    pub priority_loss_repair: PriorityLossRepair,
    /// PIAS: what bytes sent are counted over (see [`PiasCount`]); per connection, the idle time after which a
    /// new message starts from 0 (the kernel module's 500 us), and the consecutive timeouts after which the
    /// count restarts (its 3; 0 turns that off).
    pub pias_count: PiasCount,
    pub pias_idle_us: f64,
    pub pias_timeout_reset: u32,
    /// L2DCT: how the additive increase is weighted (see [`L2dctIncrease`]).
    pub l2dct_increase: L2dctIncrease,
    /// Explicit-rate schemes (RCP, D3, PDQ): the switches' control interval in us, over which a port measures
    /// its input rate and updates its rate; 0 (the default) means the average RTT the port reads from the
    /// headers of the flows that cross it (RCP's d0; PDQ updates its rate controller every 2 such RTTs).
    pub rate_interval_us: f64,
    /// RCP's gains (Dukkipati, "Rate Control Protocol", 2007: alpha = 0.1, beta = 1).
    pub rcp_alpha: f64,
    pub rcp_beta: f64,
    /// PDQ's three optimizations; the scheme names pdq-basic, pdq-es, pdq-es-et and pdq set them (explicit
    /// keys win).
    pub pdq_early_start: bool,
    pub pdq_early_termination: bool,
    pub pdq_suppressed_probing: bool,
    /// PDQ's Early Start threshold K in RTTs: flows that will finish within K RTTs do not hold back the next.
    pub pdq_early_start_k: f64,
    /// What PDQ's criticality is computed from (see [`Criticality`]).
    pub pdq_criticality: Criticality,
    /// Criticality `bytes_sent`: the sender updates its estimate every this many bytes (the paper's 50 KB).
    pub pdq_criticality_update_bytes: u64,
    /// PDQ's choices where the paper gives no number (`transport::rate`): Suppressed Probing's X (a flow with i
    /// flows ahead probes every max(1, ceil(X i)) RTTs; 0.2), dampening in average RTTs (1; 0 turns it off), and
    /// the flow list's bounds (at most max(2 kappa, min) entries, never more than max; 8 and 64).
    pub pdq_probe_factor: f64,
    pub pdq_dampening_rtts: f64,
    pub pdq_list_min: u32,
    pub pdq_list_max: u32,
    /// RCP's lowest rate, in full-size packets per average RTT (0.01, as RCP's reference code's `min_pprtt_`).
    pub rcp_min_packets_per_rtt: f64,
    /// Explicit-rate senders' retransmission timeout, in smoothed RTTs (at least `transport.rto_min_us`; 3).
    pub rate_rto_rtts: f64,
    /// Homa (`transport::homa`): RTTbytes, the unscheduled bytes of every message and how far ahead of arrivals a
    /// granted message is kept (0: from the fabric, the bytes a host link carries while a full packet reaches
    /// the farthest host and a control packet comes back).
    pub homa_rtt_bytes: u64,
    /// Homa: how many of the `switch.queues` levels carry unscheduled packets (0: from the run's message sizes,
    /// in proportion to the unscheduled bytes), and their size cutoffs in bytes (empty: each level carries an
    /// equal share of the unscheduled bytes; given, they also set the number of unscheduled levels).
    pub homa_unscheduled_levels: u32,
    pub homa_unscheduled_cutoffs_bytes: Vec<u64>,
    /// Homa: how many messages a receiver grants to at once, the degree of overcommitment (0: the number of
    /// scheduled levels, as the paper does).
    pub homa_overcommit: u32,
    /// Homa: the time without news of a message after which its receiver asks for missing data again (RESEND)
    /// and its sender checks on it, in us. Chosen: 10 ms (Homa's are "a few milliseconds"), long enough that
    /// granted data waiting in a low-priority queue behind a few more urgent messages is not asked for again.
    pub homa_resend_timeout_us: f64,
    /// Homa: what the sender announces as a message's length (see [`HomaSizes`]).
    pub homa_sizes: HomaSizes,
    /// RAX's first threshold Q_1 in us: a flow whose estimated remaining time is below it is in the top queue.
    /// 0 (the default) takes the paper's value for the host link rate: 1,280 us up to 1 Gbps, 160 us above.
    pub rax_q1_us: f64,
    /// RAX's threshold base E: Q_i = Q_1 E^(i-1) for i = 1 .. switch.queues - 1 (the paper's 2).
    pub rax_base: f64,
    /// RAX's EWMA gain for the copy rate (the paper's alpha = 0.25): r_c <- alpha sample + (1 - alpha) r_c.
    pub rax_alpha: f64,
    /// RAX's copy-rate sampling interval in us. The paper's kernel hook takes a sample at each call that copies
    /// data into the send buffer (bytes copied over the time since the previous call); the simulated
    /// application writes continuously, so a sample is taken at the first of the flow's data packets at least
    /// this long after the previous sample, over the time since it, while the application has bytes left to
    /// write. 100 us: a few samples per Q_1 at 10 Gbps, a dozen at 1 Gbps.
    pub rax_rate_interval_us: f64,
    /// HyLine (`engine::hyline`): the threshold H in bytes; flows larger than H are second-class (the manager
    /// schedules them), the others first-class (the paper's 1 MB, from its §IV-E band).
    pub hyline_threshold_bytes: u64,
    /// HyLine: T_cost in us, the time from a second-class flow's arrival to its request's decision at the manager
    /// (network and computation delay of reaching the MAN; the paper's 100 us, which the authors' ns-2 agent
    /// waits before it calls the manager).
    pub hyline_tcost_us: f64,
    /// HyLine: the time the manager's signals (CTS, STS) take to reach the hosts, and a FIN the manager, in us
    /// (0: instantaneous, as in the authors' ns-2 code, where T_cost covers the whole exchange).
    pub hyline_signal_us: f64,
    /// HyLine: second-class flows' initial window in packets (also the window they restart from at each CTS),
    /// RTO floor in us (Table I: 25 packets, 1 s) and window cap in packets (the authors' scripts: the queue size
    /// less one, 225); first-class flows use `transport.*`.
    pub hyline_large_init_cwnd_packets: f64,
    pub hyline_large_rto_min_us: f64,
    pub hyline_large_max_cwnd_packets: f64,
    /// QJump (`engine::qjump`): a flow of at most `qjump_size_thresholds_bytes[i]` bytes (and more than the one
    /// before) is at level i, priority i; larger ones at the last level. Each level's flows may send
    /// `qjump_bucket_bytes[i]` wire bytes per `qjump_interval_us` (one more bucket than thresholds). Defaults:
    /// the QJump authors' ns-2 scripts (camsas/qjump-ns2 @2a37e60, `tcp-common-opt.tcl`), whose buckets (72,000
    /// to 10,500,000 bits per 1.05 ms on 10 Gbps hosts) hold each level's largest flow, the last being line rate.
    pub qjump_size_thresholds_bytes: Vec<u64>,
    pub qjump_bucket_bytes: Vec<u64>,
    /// QJump: the buckets' refill interval in us (0: the scripts' 1.05 ms at 10 Gbps, scaled to the host link rate,
    /// so that every level keeps its share of the link and its flows still fit one bucket: 10.5 ms at 1 Gbps).
    pub qjump_interval_us: f64,
}

/// What a Homa sender announces as its message's length (QCLIMB paper, App. D: Homa with imprecise sizes). The
/// announced length sets the unscheduled priority, the sender's and the receiver's SRPT order.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum HomaSizes {
    /// The true size (Homa).
    Exact,
    /// The trace's `estimate_bytes`.
    Estimate,
    /// The trace's `lower_bytes`.
    Lower,
    /// The trace's `upper_bytes`.
    Upper,
}

/// How a PDQ sender states its flow's criticality (PDQ paper, section 5.6, "Resilience to Inaccurate Flow
/// Information").
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Criticality {
    /// From the flow's true remaining size (the expected transmission time).
    Size,
    /// A random value drawn at the flow's start and kept.
    Random,
    /// From the bytes sent so far (fewer sent is more critical), updated every `pdq_criticality_update_bytes`.
    BytesSent,
}

impl Default for SchemeConfig {
    fn default() -> Self {
        SchemeConfig {
            name: SchemeName::Dctcp,
            preset: Preset::Native,
            priority: 0,
            thresholds_bytes: Vec::new(),
            probe_after_timeouts: 0,
            rank: RankBy::RemainingSize,
            rank_at: RankAt::Packet,
            l2dct_w_min: 0.125,
            l2dct_w_max: 2.5,
            l2dct_size_min_bytes: 204_800,
            l2dct_size_max_bytes: 1_048_576,
            qclimb_info: QclimbInfo::Bounds,
            slack_bytes: 100_000,
            ooo_handling: OooHandling::Qclimb,
            priority_loss_repair: PriorityLossRepair::Cumulative,
            pias_count: PiasCount::PerFlow,
            pias_idle_us: 500.0,
            pias_timeout_reset: 3,
            l2dct_increase: L2dctIncrease::Weight,
            rate_interval_us: 0.0,
            rcp_alpha: 0.1,
            rcp_beta: 1.0,
            pdq_early_start: true,
            pdq_early_termination: true,
            pdq_suppressed_probing: true,
            pdq_early_start_k: 2.0,
            pdq_criticality: Criticality::Size,
            pdq_criticality_update_bytes: 50_000,
            pdq_probe_factor: 0.2,
            pdq_dampening_rtts: 1.0,
            pdq_list_min: 8,
            pdq_list_max: 64,
            rcp_min_packets_per_rtt: 0.01,
            rate_rto_rtts: 3.0,
            homa_rtt_bytes: 0,
            homa_unscheduled_levels: 0,
            homa_unscheduled_cutoffs_bytes: Vec::new(),
            homa_overcommit: 0,
            homa_resend_timeout_us: 10_000.0,
            homa_sizes: HomaSizes::Exact,
            rax_q1_us: 0.0,
            rax_base: 2.0,
            rax_alpha: 0.25,
            rax_rate_interval_us: 100.0,
            hyline_threshold_bytes: 1_000_000,
            hyline_tcost_us: 100.0,
            hyline_signal_us: 0.0,
            hyline_large_init_cwnd_packets: 25.0,
            hyline_large_rto_min_us: 1_000_000.0,
            hyline_large_max_cwnd_packets: 225.0,
            qjump_size_thresholds_bytes: vec![8_760, 18_980, 27_740, 48_180, 77_380, 194_180, 973_820],
            qjump_bucket_bytes: vec![9_000, 19_500, 28_500, 49_500, 79_500, 199_500, 1_000_500, 1_312_500],
            qjump_interval_us: 0.0,
        }
    }
}

/// The keys a scheme sets when the config leaves them out, as a partial config. Explicit keys always win.
///
/// - pfabric, native: the pFabric ns-2 scripts (PlatformLab/HomaSimulation @e13e9cd): 24-packet (36,000 B)
///   queues, initial window 12; window capped at 15 packets as in YAPS (NetSys/simulator @179b64e); no ECN.
///   Rate control as the paper's §4.2 describes it, which is also what its ns-2 TCP (`MinTCP`) did:
///   - a fixed RTO of 45 us (`rto_fixed`: no RTT estimate, no exponential back-off), about three RTTs of the
///     scripts' fabric (host links 2.5 + 0.2 us, core links 0.2 us: ~14.7 us idle for a full-size packet and
///     its ACK across the spine, the paper's ~14.6 us); on a fabric with a longer RTT (the default leaf-spine's
///     20.2 us host links give ~85 us) set `rto_min_us` to about three of its RTTs;
///   - no loss detection from duplicate ACKs (`dupack_threshold = 0`; the scripts' `dynamic_dupack_ 1000000`):
///     losses are found by the timer alone, and the retransmission after a timeout skips SACKed segments;
///   - probe mode after 5 consecutive timeouts (the scripts' `prob_cap_`, YAPS): one minimum-size probe
///     (header and one byte) per RTO instead of retransmissions, and slow start from one segment once an ACK
///     returns (`transport::tcp`). With the rank queue's eviction of several packets for one arrival
///     (`net::rank_queue`), probes no longer cost other flows their packets.
/// - pfabric, preset "pias" (and las, which the PIAS paper ran on pFabric's switch): 140 packets (210,000 B),
///   initial window 70, window capped at queue size - 1 = 139 packets (`maxcwnd_` in the PIAS ns-2 scripts,
///   HKUST-SING/PIAS-NS2 @5fb5867); the same `MinTCP` rate control as the scripts ran it: a fixed 250 us RTO
///   (`minrto_`, about three RTTs of the PIAS fabric's ~85 us), no duplicate-ACK retransmission (the scripts
///   spray packets, `perflowMP = 0`, which leaves `dynamic_dupack_ 1000000` in force), probe mode after 5
///   consecutive timeouts (`prob_cap_`).
/// - Both pfabric presets and las give the hosts' NICs the switches' pFabric queue size: the ns-2 scripts build
///   host links with the switch discipline (`duplex-link ... $switchAlg`), so a host's own flows share one small
///   priority-dropping queue.
/// - pias: probe mode after 2 consecutive timeouts (the PIAS paper, section 2: "e.g., two").
/// - l2dct, preset "pias": the additive increase as the PIAS ns-2 code has it (w_c / w_max per window, see
///   [`L2dctIncrease`]); preset "native" follows the L2DCT paper (w_c per window).
/// - tcp, dctcp, l2dct: nothing beyond the engine's defaults (RFC 6298 timers, 3 duplicate ACKs).
pub fn scheme_defaults(name: SchemeName, preset: Preset) -> serde_json::Value {
    use serde_json::json;
    match (name, preset) {
        (SchemeName::Pfabric, Preset::Native) => json!({
            "switch": {"buffer_bytes": 36_000, "ecn": "off"},
            "host": {"nic_buffer_bytes": 36_000},
            "transport": {
                "init_cwnd_packets": 12, "max_cwnd_packets": 15, "rto_min_us": 45.0, "rto_fixed": true,
                "dupack_threshold": 0,
            },
            "scheme": {"probe_after_timeouts": 5},
        }),
        (SchemeName::Pfabric, Preset::Pias) | (SchemeName::Las, _) => json!({
            "switch": {"buffer_bytes": 210_000, "ecn": "off"},
            "host": {"nic_buffer_bytes": 210_000},
            "transport": {
                "init_cwnd_packets": 70, "max_cwnd_packets": 139, "rto_min_us": 250.0, "rto_fixed": true,
                "dupack_threshold": 0,
            },
            "scheme": {"probe_after_timeouts": 5},
        }),
        (SchemeName::Pias, _) => json!({"scheme": {"probe_after_timeouts": 2}}),
        (SchemeName::L2dct, Preset::Pias) => json!({"scheme": {"l2dct_increase": "normalized"}}),
        (SchemeName::PdqBasic, _) => json!({"scheme": {
            "pdq_early_start": false, "pdq_early_termination": false, "pdq_suppressed_probing": false,
        }}),
        (SchemeName::PdqEs, _) => json!({"scheme": {
            "pdq_early_start": true, "pdq_early_termination": false, "pdq_suppressed_probing": false,
        }}),
        (SchemeName::PdqEsEt, _) => json!({"scheme": {
            "pdq_early_start": true, "pdq_early_termination": true, "pdq_suppressed_probing": false,
        }}),
        // Homa reads no ECN marks and has no window to cut
        (SchemeName::Homa, _) => json!({"switch": {"ecn": "off"}}),
        // HyLine's Table I (first class: initial window 25, RTO floor 4 ms) and the authors' scripts (first-class
        // window cap 50 packets); TCP NewReno with SACK, no ECN
        // QJump in HyLine's Table I: initial window 25, RTO floor 4 ms; TCP with SACK, no ECN (the QJump
        // scripts' `Sack` source)
        (SchemeName::Qjump, _) => json!({
            "switch": {"ecn": "off"},
            "transport": {"init_cwnd_packets": 25, "rto_min_us": 4000.0},
        }),
        (SchemeName::Hyline, _) => json!({
            "switch": {"ecn": "off"},
            "transport": {"init_cwnd_packets": 25, "max_cwnd_packets": 50, "rto_min_us": 4000.0},
        }),
        _ => json!({}),
    }
}

/// Insert into `into` every key of `from` that `into` lacks (recursively through objects).
fn fill_missing(into: &mut serde_json::Value, from: &serde_json::Value) {
    if let (Some(dst), Some(src)) = (into.as_object_mut(), from.as_object()) {
        for (k, v) in src {
            match dst.get_mut(k) {
                None => {
                    dst.insert(k.clone(), v.clone());
                }
                Some(existing) => fill_missing(existing, v),
            }
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RunConfig {
    /// Simulated-time limit in ms; flows still open then are reported unfinished.
    pub time_limit_ms: f64,
    /// Time series of one host's last hop (the PDQ paper's Figures 6 and 7): every `monitor_interval_us`, the
    /// queue of the switch port facing this host, and the payload bytes delivered to it, in all and per flow
    /// (the flows whose destination it is). Written to the summary (`engine.monitor`). The run then uses one
    /// engine thread, and that port is event-driven (its occupancy exact at every sample). For small
    /// experiments: the series holds one entry per sample for each flow to the host.
    pub monitor_host: Option<u32>,
    pub monitor_interval_us: f64,
    /// `"packet"` (the default) or `"flow"`: rates from the scheme's allocation rule instead of packets
    /// (`flowlevel`; tcp, dctcp, l2dct and rcp as max-min fair shares, pfabric as SRPT, pias as MLFQ, d3 as
    /// first-come-first-served grants of desired rates, the pdq variants in criticality order).
    pub level: Level,
}

/// The level of detail of a run.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Level {
    Packet,
    Flow,
}

impl Default for RunConfig {
    fn default() -> Self {
        RunConfig { time_limit_ms: 60_000.0, monitor_host: None, monitor_interval_us: 100.0, level: Level::Packet }
    }
}

fn check_pos(key: &str, v: f64, max: f64) -> Result<(), ConfigError> {
    if !(v.is_finite() && v > 0.0 && v <= max) {
        return err(key, format!("must be > 0 and <= {max} (got {v})"));
    }
    Ok(())
}

fn check_delay(key: &str, v: f64) -> Result<(), ConfigError> {
    if !(v.is_finite() && (0.0..=1e9).contains(&v)) {
        return err(key, format!("must be between 0 and 1e9 ns (got {v})"));
    }
    Ok(())
}

/// The field of a topology section that fails to parse, found by parsing the section as its kind's struct
/// (the tagged enum's own error names only the section).
fn topology_field_in_error(topology: &serde_json::Value) -> Option<String> {
    fn field<T: serde::de::DeserializeOwned>(v: serde_json::Value) -> Option<String> {
        let e = serde_path_to_error::deserialize::<_, T>(v).err()?;
        let path = e.path().to_string();
        (path != ".").then_some(path)
    }
    let mut section = topology.as_object()?.clone();
    let kind = section.remove("kind")?;
    let v = serde_json::Value::Object(section);
    match kind.as_str()? {
        "single_switch" => field::<SingleSwitch>(v),
        "dumbbell" => field::<Dumbbell>(v),
        "leaf_spine" => field::<LeafSpine>(v),
        "fat_tree" => field::<FatTree>(v),
        "bcube" => field::<Bcube>(v),
        "jellyfish" => field::<Jellyfish>(v),
        _ => None,
    }
}

fn check_int(key: &str, v: u64, min: u64, max: u64) -> Result<(), ConfigError> {
    if v < min || v > max {
        return err(key, format!("must be between {min} and {max} (got {v})"));
    }
    Ok(())
}

impl Config {
    /// The `switch.pfc*` keys (see [`SwitchConfig::pfc`]); `mtu`: a full packet's bytes on the wire.
    fn validate_pfc(&self, mtu: u64) -> Result<(), ConfigError> {
        let s = &self.switch;
        check_int("switch.pfc_pause_packets", s.pfc_pause_packets as u64, 1, 1 << 24)?;
        if s.pfc_resume_packets == 0 || s.pfc_resume_packets >= s.pfc_pause_packets {
            return err(
                "switch.pfc_resume_packets",
                format!(
                    "must be at least 1 and below switch.pfc_pause_packets ({}) (got {})",
                    s.pfc_pause_packets, s.pfc_resume_packets
                ),
            );
        }
        check_int("switch.pfc_frame_bytes", s.pfc_frame_bytes as u64, 1, 65_535)?;
        check_int("switch.pfc_headroom_bytes", s.pfc_headroom_bytes, 0, 1 << 40)?;
        if s.pfc_headroom_bytes > 0 && s.buffer != BufferMode::Port {
            return err(
                "switch.pfc_headroom_bytes",
                "extends a port's own buffer: it needs switch.buffer = \"port\" (a shared pool has no headroom here)",
            );
        }
        if let Some(qs) = &s.pfc_queues {
            if qs.is_empty() {
                return err("switch.pfc_queues", "must name at least one queue (leave it out for every queue but 0)");
            }
            if let Some(&q) = qs.iter().find(|&&q| q >= s.queues) {
                return err(
                    "switch.pfc_queues",
                    format!("queue {q} does not exist (switch.queues = {}: queues 0 to {})", s.queues, s.queues - 1),
                );
            }
            if (1..qs.len()).any(|i| qs[..i].contains(&qs[i])) {
                return err("switch.pfc_queues", format!("names a queue twice (got {qs:?})"));
            }
        }
        if !s.pfc {
            return Ok(());
        }
        if s.pfc_mode == PfcMode::NextQueue && self.routing.mode == RoutingMode::Spray {
            return err(
                "switch.pfc_mode",
                "\"next_queue\" needs the next switch's choice of egress port ahead of time, which packet spraying \
                 draws at random on arrival (routing.mode = \"spray\"): use routing.mode = \"ecmp\" or \
                 pfc_mode = \"port\"",
            );
        }
        let sc = self.scheme.name;
        if sc.rank_queue() {
            return err(
                "switch.pfc",
                format!(
                    "is not supported with scheme {}: its rank queue has no priority queues to pause (PFC needs a \
                     strict-priority scheme)",
                    sc.as_str()
                ),
            );
        }
        if sc.family() == FamilyName::Homa {
            return err(
                "switch.pfc",
                "is not supported with scheme homa: its senders put a packet on the NIC only when the NIC is idle, \
                 which a paused NIC queue would stall",
            );
        }
        if self.run.level == Level::Flow {
            return err("switch.pfc", "the flow level has no queues to pause (run.level = \"flow\")");
        }
        if s.pfc_mode == PfcMode::NextQueue && sc.family() == FamilyName::Rate {
            return err(
                "switch.pfc_mode",
                format!(
                    "\"next_queue\" is not supported with scheme {}: its ACKs retrace their data's path, a choice \
                     the next-queue check cannot read ahead (use pfc_mode = \"port\")",
                    sc.as_str()
                ),
            );
        }
        let (key, buffer) = match s.buffer {
            BufferMode::Port if s.pfc_headroom_bytes > 0 => {
                ("switch.buffer_bytes + pfc_headroom_bytes", s.buffer_bytes + s.pfc_headroom_bytes)
            }
            BufferMode::Port => ("switch.buffer_bytes", s.buffer_bytes),
            BufferMode::Shared => ("switch.shared_buffer_bytes", s.shared_buffer_bytes),
        };
        let room = buffer / mtu;
        if s.pfc_pause_packets as u64 > room {
            return err(
                "switch.pfc_pause_packets",
                format!(
                    "is {} packets, more than {key} holds ({buffer} bytes: {room} full packets of {mtu} bytes): the \
                     queue would drop before it pauses",
                    s.pfc_pause_packets
                ),
            );
        }
        Ok(())
    }

    /// Parse JSON text into a validated config; the error names the key. Keys the text leaves out take the
    /// scheme's published values ([`scheme_defaults`]), then the engine's defaults.
    pub fn from_json(text: &str) -> Result<Config, ConfigError> {
        let mut value: serde_json::Value = serde_json::from_str(text).map_err(|e| {
            let mut message = e.to_string();
            if let Some(at) = message.rfind(" at line ") {
                message.truncate(at);
            }
            ConfigError { key: String::new(), message: format!("not valid JSON: {message}") }
        })?;
        if !value.is_object() {
            return err("", "the config must be a JSON object");
        }
        // peek at the scheme to fill its defaults; a bad name or preset is reported by the typed parse below
        let scheme = value.get("scheme");
        let name = scheme.and_then(|s| s.get("name")).cloned().map(serde_json::from_value::<SchemeName>);
        let preset = scheme.and_then(|s| s.get("preset")).cloned().map(serde_json::from_value::<Preset>);
        let name = match &name {
            Some(Ok(n)) => *n,
            _ => SchemeConfig::default().name,
        };
        let preset = match &preset {
            Some(Ok(p)) => *p,
            _ => Preset::Native,
        };
        fill_missing(&mut value, &scheme_defaults(name, preset));
        let topology = value.get("topology").cloned();
        let cfg: Config = serde_path_to_error::deserialize(value).map_err(|e| {
            let path = e.path().to_string();
            let mut key = if path == "." { String::new() } else { path };
            let message = e.into_inner().to_string();
            // an internally tagged enum (topology) reports a bad value at the section: find the field
            if key == "topology" {
                if let Some(field) = topology.as_ref().and_then(topology_field_in_error) {
                    key = format!("topology.{field}");
                }
            }
            // an internally tagged enum (topology) reports unknown fields at the section: name the field
            if let Some(field) = message.strip_prefix("unknown field `").and_then(|r| r.split('`').next()) {
                if !key.ends_with(field) {
                    key = if key.is_empty() { field.to_string() } else { format!("{key}.{field}") };
                }
            }
            ConfigError { key, message }
        })?;
        cfg.validate()?;
        Ok(cfg)
    }

    /// The defaults of one scheme (what `from_json` fills for `{"scheme": {"name": ..., "preset": ...}}`), not
    /// yet validated: a scheme may need keys that have no default (PIAS's thresholds).
    pub fn for_scheme(name: SchemeName, preset: Preset) -> Config {
        let mut value = serde_json::json!({"scheme": {"name": name, "preset": preset}});
        fill_missing(&mut value, &scheme_defaults(name, preset));
        serde_json::from_value(value).expect("scheme defaults parse")
    }

    /// The transport a run uses: the explicit one, or the scheme's.
    pub fn transport_kind(&self) -> TransportKind {
        self.transport.kind.unwrap_or(match self.scheme.name {
            SchemeName::Tcp | SchemeName::Pfabric | SchemeName::Las => TransportKind::Tcp,
            SchemeName::Dctcp | SchemeName::Pias | SchemeName::L2dct | SchemeName::Qclimb => TransportKind::Dctcp,
            SchemeName::Rax | SchemeName::RaxPlus => TransportKind::Dctcp,
            // (the explicit-rate family has its own transport; TCP's kind is not used)
            _ => TransportKind::Tcp,
        })
    }

    /// Range checks, once. Structural problems (unknown keys, wrong types) were caught by the parser.
    pub fn validate(&self) -> Result<(), ConfigError> {
        const MAX_GBPS: f64 = 10_000.0;
        const MAX_HOSTS: u64 = 1 << 20;
        const MAX_BCUBE_SERVERS: u64 = 4096;
        match &self.topology {
            TopologyConfig::SingleSwitch(t) => {
                check_int("topology.hosts", t.hosts as u64, 2, MAX_HOSTS)?;
                check_pos("topology.host_link_gbps", t.host_link_gbps, MAX_GBPS)?;
                check_delay("topology.host_link_delay_ns", t.host_link_delay_ns)?;
            }
            TopologyConfig::Dumbbell(t) => {
                check_int("topology.senders", t.senders as u64, 1, MAX_HOSTS)?;
                check_int("topology.receivers", t.receivers as u64, 1, MAX_HOSTS)?;
                check_pos("topology.host_link_gbps", t.host_link_gbps, MAX_GBPS)?;
                check_pos("topology.core_link_gbps", t.core_link_gbps, MAX_GBPS)?;
                check_delay("topology.host_link_delay_ns", t.host_link_delay_ns)?;
                check_delay("topology.core_link_delay_ns", t.core_link_delay_ns)?;
            }
            TopologyConfig::LeafSpine(t) => {
                check_int("topology.leaves", t.leaves as u64, 1, 4096)?;
                check_int("topology.hosts_per_leaf", t.hosts_per_leaf as u64, 1, 4096)?;
                check_int("topology.spines", t.spines as u64, 1, 4096)?;
                if t.leaves as u64 * t.hosts_per_leaf as u64 <= 1 {
                    return err("topology.hosts_per_leaf", "the fabric needs at least 2 hosts");
                }
                check_pos("topology.host_link_gbps", t.host_link_gbps, MAX_GBPS)?;
                check_pos("topology.core_link_gbps", t.core_link_gbps, MAX_GBPS)?;
                check_delay("topology.host_link_delay_ns", t.host_link_delay_ns)?;
                check_delay("topology.core_link_delay_ns", t.core_link_delay_ns)?;
            }
            TopologyConfig::FatTree(t) => {
                if t.k < 2 || t.k % 2 != 0 || t.k > 64 {
                    return err("topology.k", format!("must be an even number between 2 and 64 (got {})", t.k));
                }
                check_int("topology.hosts_per_edge", t.hosts_per_edge as u64, 0, 4096)?;
                check_pos("topology.host_link_gbps", t.host_link_gbps, MAX_GBPS)?;
                check_pos("topology.core_link_gbps", t.core_link_gbps, MAX_GBPS)?;
                check_delay("topology.host_link_delay_ns", t.host_link_delay_ns)?;
                check_delay("topology.core_link_delay_ns", t.core_link_delay_ns)?;
            }
            TopologyConfig::Bcube(t) => {
                check_int("topology.n", t.n as u64, 2, 4096)?;
                check_int("topology.k", t.k as u64, 0, 11)?;
                // every server is a destination of its own in the routing tables (servers x nodes entries)
                if t.servers() > MAX_BCUBE_SERVERS {
                    return err(
                        "topology.n",
                        format!(
                            "BCube(n = {}, k = {}) has n^(k+1) = {} servers; at most {MAX_BCUBE_SERVERS} are supported \
                             (the routing tables grow as the square of the servers)",
                            t.n,
                            t.k,
                            t.servers()
                        ),
                    );
                }
                // the routing tables hold an entry per (relay or switch, server): BCube(64, 1)'s 4,224 x 4,096 take
                // about 270 MB and 2 s to build; BCube(2, 11), also 4,096 servers, would take 1.3 GB and 100 s
                const MAX_BCUBE_ENTRIES: u64 = 4224 * 4096;
                let nodes = t.servers() + (u64::from(t.k) + 1) * t.switches_per_level();
                if nodes * t.servers() > MAX_BCUBE_ENTRIES {
                    return err(
                        "topology.k",
                        format!(
                            "BCube(n = {}, k = {}) has {} servers and {} relays and switches, whose routing tables \
                             ({} entries) exceed the {MAX_BCUBE_ENTRIES} supported (BCube(64, 1)'s, about 270 MB): \
                             use a smaller k or n",
                            t.n,
                            t.k,
                            t.servers(),
                            nodes - t.servers(),
                            nodes * t.servers()
                        ),
                    );
                }
                check_pos("topology.host_link_gbps", t.host_link_gbps, MAX_GBPS)?;
                check_delay("topology.host_link_delay_ns", t.host_link_delay_ns)?;
            }
            TopologyConfig::Jellyfish(t) => {
                check_int("topology.ports", t.ports as u64, 2, 1024)?;
                if t.network_ports == 0 || t.network_ports >= t.ports {
                    return err(
                        "topology.network_ports",
                        format!(
                            "must be at least 1 and below topology.ports ({}), so every switch has hosts (got {})",
                            t.ports, t.network_ports
                        ),
                    );
                }
                if t.switches <= t.network_ports || t.switches > 2048 {
                    return err(
                        "topology.switches",
                        format!(
                            "must be above topology.network_ports ({}; a switch needs that many distinct neighbours) \
                             and at most 2048, since the routing tables grow as the square of the switches (got {})",
                            t.network_ports, t.switches
                        ),
                    );
                }
                let hosts = t.switches as u64 * t.hosts_per_switch() as u64;
                if hosts > MAX_HOSTS {
                    return err(
                        "topology.switches",
                        format!(
                            "{} switches x {} host ports each = {hosts} hosts; at most {MAX_HOSTS} are supported",
                            t.switches,
                            t.hosts_per_switch()
                        ),
                    );
                }
                check_pos("topology.host_link_gbps", t.host_link_gbps, MAX_GBPS)?;
                check_pos("topology.core_link_gbps", t.core_link_gbps, MAX_GBPS)?;
                check_delay("topology.host_link_delay_ns", t.host_link_delay_ns)?;
                check_delay("topology.core_link_delay_ns", t.core_link_delay_ns)?;
                if let Err(message) = crate::net::jellyfish::graph(t) {
                    return err("topology.network_ports", message);
                }
            }
        }
        let s = &self.switch;
        check_int("switch.queues", s.queues as u64, 1, 64)?;
        let mtu = (self.transport.mss_bytes + self.transport.header_bytes) as u64;
        match s.buffer {
            BufferMode::Port => {
                if s.buffer_bytes < mtu {
                    return err(
                        "switch.buffer_bytes",
                        format!("must hold at least one full packet ({mtu} bytes) (got {})", s.buffer_bytes),
                    );
                }
            }
            BufferMode::Shared => {
                if s.shared_buffer_bytes < mtu {
                    return err(
                        "switch.shared_buffer_bytes",
                        format!(
                            "must hold at least one full packet ({mtu} bytes) when switch.buffer = \"shared\" (got {})",
                            s.shared_buffer_bytes
                        ),
                    );
                }
                check_pos("switch.dt_alpha", s.dt_alpha, 1e6)?;
            }
        }
        self.validate_pfc(mtu)?;
        let t = &self.transport;
        check_int("transport.mss_bytes", t.mss_bytes as u64, 1, 65_000)?;
        check_int("transport.header_bytes", t.header_bytes as u64, 0, 1_000)?;
        check_int("transport.ack_bytes", t.ack_bytes as u64, 1, 1_000)?;
        check_int("transport.init_cwnd_packets", t.init_cwnd_packets as u64, 1, 1 << 20)?;
        check_int("transport.max_cwnd_packets", t.max_cwnd_packets as u64, 0, 1 << 24)?;
        if t.rwnd_bytes != 0 && t.rwnd_bytes < t.mss_bytes as u64 {
            return err(
                "transport.rwnd_bytes",
                format!("must be 0 (no receive window) or at least mss_bytes ({}) (got {})", t.mss_bytes, t.rwnd_bytes),
            );
        }
        check_pos("transport.rto_min_us", t.rto_min_us, 1e9)?;
        if let Some(v) = t.rto_init_us {
            check_pos("transport.rto_init_us", v, 1e9)?;
        }
        check_pos("transport.rto_max_us", t.rto_max_us, 1e10)?;
        if t.rto_max_us < t.rto_min_us && !t.rto_fixed {
            return err("transport.rto_max_us", format!("must be >= rto_min_us ({})", t.rto_min_us));
        }
        // (0 or a huge threshold turns fast retransmit off, as the PIAS ns-2 scripts do under packet spraying)
        check_int("transport.dupack_threshold", t.dupack_threshold as u64, 0, u32::MAX as u64)?;
        check_pos("transport.dctcp_g", t.dctcp_g, 1.0)?;
        check_int("transport.delayed_ack_segments", t.delayed_ack_segments as u64, 1, 64)?;
        check_pos("transport.delayed_ack_timeout_us", t.delayed_ack_timeout_us, 1e9)?;
        if !(0.0..=1.0).contains(&t.dctcp_alpha_init) {
            return err("transport.dctcp_alpha_init", format!("must be between 0 and 1 (got {})", t.dctcp_alpha_init));
        }
        if t.send_buffer_bytes != 0 && t.send_buffer_bytes < t.mss_bytes as u64 {
            return err(
                "transport.send_buffer_bytes",
                format!("must be 0 (unbounded) or at least mss_bytes ({}) (got {})", t.mss_bytes, t.send_buffer_bytes),
            );
        }
        check_pos("run.time_limit_ms", self.run.time_limit_ms, 1e12)?;
        check_pos("run.monitor_interval_us", self.run.monitor_interval_us, 1e9)?;
        if let Some(h) = self.run.monitor_host {
            let hosts = self.topology.hosts();
            if h >= hosts {
                return err("run.monitor_host", format!("host {h} does not exist (the topology has {hosts} hosts)"));
            }
        }
        let sc = &self.scheme;
        if sc.name.rank_queue() && s.buffer == BufferMode::Shared {
            return err(
                "switch.buffer",
                format!("\"shared\" is not supported with scheme {}: its rank queue has a per-port buffer", sc.name.as_str()),
            );
        }
        let th = &sc.thresholds_bytes;
        if th.windows(2).any(|w| w[0] >= w[1]) || th.first() == Some(&0) {
            return err("scheme.thresholds_bytes", format!("must be positive and strictly increasing (got {th:?})"));
        }
        let tagged = matches!(sc.name, SchemeName::Pias | SchemeName::Qclimb);
        if th.len() >= s.queues as usize && tagged {
            return err(
                "scheme.thresholds_bytes",
                format!("has {} thresholds but switch.queues = {} allows at most {}", th.len(), s.queues, s.queues - 1),
            );
        }
        if tagged && th.is_empty() && s.queues > 1 {
            return err(
                "scheme.thresholds_bytes",
                format!(
                    "{} needs its queue thresholds (switch.queues - 1 values in bytes; `fctlab thresholds` derives \
                     them, `fctlab thresholds --preset` lists PIAS's)",
                    sc.name.as_str()
                ),
            );
        }
        check_pos("scheme.l2dct_w_min", sc.l2dct_w_min, 100.0)?;
        check_pos("scheme.l2dct_w_max", sc.l2dct_w_max, 100.0)?;
        if sc.l2dct_size_max_bytes <= sc.l2dct_size_min_bytes {
            return err("scheme.l2dct_size_max_bytes", "must be larger than scheme.l2dct_size_min_bytes");
        }
        if !(sc.pias_idle_us.is_finite() && (0.0..=1e9).contains(&sc.pias_idle_us)) {
            return err("scheme.pias_idle_us", format!("must be between 0 and 1e9 us (got {})", sc.pias_idle_us));
        }
        if !(sc.rate_interval_us.is_finite() && (0.0..=1e9).contains(&sc.rate_interval_us)) {
            return err("scheme.rate_interval_us", format!("must be between 0 and 1e9 us (got {})", sc.rate_interval_us));
        }
        check_pos("scheme.rcp_alpha", sc.rcp_alpha, 10.0)?;
        if !(sc.rcp_beta.is_finite() && (0.0..=10.0).contains(&sc.rcp_beta)) {
            return err("scheme.rcp_beta", format!("must be between 0 and 10 (got {})", sc.rcp_beta));
        }
        if !(sc.pdq_early_start_k.is_finite() && (0.0..=1000.0).contains(&sc.pdq_early_start_k)) {
            return err("scheme.pdq_early_start_k", format!("must be between 0 and 1000 (got {})", sc.pdq_early_start_k));
        }
        check_int("scheme.pdq_criticality_update_bytes", sc.pdq_criticality_update_bytes, 1, 1 << 40)?;
        check_pos("scheme.pdq_probe_factor", sc.pdq_probe_factor, 255.0)?;
        if !(sc.pdq_dampening_rtts.is_finite() && (0.0..=1000.0).contains(&sc.pdq_dampening_rtts)) {
            return err("scheme.pdq_dampening_rtts", format!("must be between 0 and 1000 (got {})", sc.pdq_dampening_rtts));
        }
        check_int("scheme.pdq_list_min", sc.pdq_list_min as u64, 1, 1 << 16)?;
        check_int("scheme.pdq_list_max", sc.pdq_list_max as u64, sc.pdq_list_min as u64, 1 << 16)?;
        check_pos("scheme.rcp_min_packets_per_rtt", sc.rcp_min_packets_per_rtt, 1e6)?;
        check_pos("scheme.rate_rto_rtts", sc.rate_rto_rtts, 1e6)?;
        check_int("scheme.homa_rtt_bytes", sc.homa_rtt_bytes, 0, 1 << 40)?;
        // (at least one level is left for scheduled packets)
        let most = self.switch.queues as u64 - 1;
        check_int("scheme.homa_unscheduled_levels", sc.homa_unscheduled_levels as u64, 0, most)?;
        check_int("scheme.homa_overcommit", sc.homa_overcommit as u64, 0, 1 << 16)?;
        check_pos("scheme.homa_resend_timeout_us", sc.homa_resend_timeout_us, 1e9)?;
        check_int("scheme.hyline_threshold_bytes", sc.hyline_threshold_bytes, 1, 1 << 50)?;
        for (key, v) in [("scheme.hyline_tcost_us", sc.hyline_tcost_us), ("scheme.hyline_signal_us", sc.hyline_signal_us)] {
            if !(v.is_finite() && (0.0..=1e9).contains(&v)) {
                return err(key, format!("must be between 0 and 1e9 us (got {v})"));
            }
        }
        check_pos("scheme.hyline_large_init_cwnd_packets", sc.hyline_large_init_cwnd_packets, 1e6)?;
        check_pos("scheme.hyline_large_rto_min_us", sc.hyline_large_rto_min_us, 1e9)?;
        check_pos("scheme.hyline_large_max_cwnd_packets", sc.hyline_large_max_cwnd_packets, 1e9)?;
        let (qt, qb) = (&sc.qjump_size_thresholds_bytes, &sc.qjump_bucket_bytes);
        if qt.windows(2).any(|w| w[0] >= w[1]) || qt.first() == Some(&0) {
            return err("scheme.qjump_size_thresholds_bytes", "must be positive and strictly ascending");
        }
        if qb.len() != qt.len() + 1 {
            return err("scheme.qjump_bucket_bytes", format!(
                "needs one bucket per level: {} thresholds make {} levels, got {} buckets", qt.len(), qt.len() + 1,
                qb.len()));
        }
        if qb.iter().any(|&b| b < (self.transport.mss_bytes + self.transport.header_bytes) as u64) {
            return err("scheme.qjump_bucket_bytes", "every bucket must hold one full packet at least");
        }
        if !(sc.qjump_interval_us.is_finite() && (0.0..=1e9).contains(&sc.qjump_interval_us)) {
            return err("scheme.qjump_interval_us", format!("must be between 0 and 1e9 us (got {})", sc.qjump_interval_us));
        }
        if sc.name == SchemeName::Hyline {
            if self.switch.queues < 2 {
                return err("switch.queues", "hyline needs 2 queues at least: first-class flows in queue 0, second-class in 1");
            }
            if self.routing.mode != RoutingMode::Ecmp {
                return err("routing.mode", "hyline: first-class flows use flow-based ECMP (the paper's setting), and \
                    the manager routes the others; only \"ecmp\" is allowed");
            }
        }
        let c = &sc.homa_unscheduled_cutoffs_bytes;
        if c.windows(2).any(|w| w[0] >= w[1]) || c.first() == Some(&0) {
            return err("scheme.homa_unscheduled_cutoffs_bytes", "must be positive and strictly ascending");
        }
        if !c.is_empty() && c.len() + 1 >= self.switch.queues as usize {
            return err("scheme.homa_unscheduled_cutoffs_bytes", format!(
                "{} cutoffs make {} unscheduled levels: leave at least one of the {} switch queues for scheduled \
                 packets", c.len(), c.len() + 1, self.switch.queues));
        }
        if sc.name.family() != FamilyName::Tcp && self.transport.connections != Connections::PerFlow {
            return err("transport.connections", format!(
                "scheme {} opens one flow per connection: only \"per_flow\" is allowed", sc.name.as_str()));
        }
        if sc.name.family() == FamilyName::Rate && self.routing.mode != RoutingMode::Ecmp {
            return err("routing.mode", format!(
                "scheme {}'s switches keep per-flow state on the flow's path: only \"ecmp\" is allowed",
                sc.name.as_str()));
        }
        if self.run.level == Level::Flow {
            if !crate::flowlevel::supports(sc.name) {
                let have: Vec<&str> = crate::flowlevel::SCHEMES.iter().map(|s| s.0).collect();
                return err("run.level", format!(
                    "scheme {} has no flow-level model yet (the flow level has: {})", sc.name.as_str(),
                    have.join(", ")));
            }
            if self.run.monitor_host.is_some() {
                return err("run.monitor_host", "the flow level has no queues to monitor");
            }
            if self.link_loss.probability > 0.0 {
                return err("link_loss.probability", "the flow level has no packets to lose");
            }
            if let TopologyConfig::Bcube(t) = &self.topology {
                // a path crosses up to k + 1 switches: 2 (k + 1) ports, and the two internal links
                let ports = 2 * (t.k as usize + 1) + 2;
                if ports > crate::flowlevel::MAX_HOPS {
                    return err("topology.k", format!(
                        "BCube paths cross up to {ports} ports at k = {}; the flow level takes at most {} \
                         (k <= 2), see run.level", t.k, crate::flowlevel::MAX_HOPS));
                }
            }
        }
        if !(sc.rax_q1_us.is_finite() && (0.0..=1e9).contains(&sc.rax_q1_us)) {
            return err("scheme.rax_q1_us", format!("must be between 0 and 1e9 us (got {})", sc.rax_q1_us));
        }
        if !(sc.rax_base.is_finite() && sc.rax_base > 1.0 && sc.rax_base <= 1000.0) {
            return err("scheme.rax_base", format!("must be > 1 and <= 1000 (got {})", sc.rax_base));
        }
        check_pos("scheme.rax_alpha", sc.rax_alpha, 1.0)?;
        check_pos("scheme.rax_rate_interval_us", sc.rax_rate_interval_us, 1e9)?;
        if sc.rank == RankBy::RemainingTime && sc.name != SchemeName::Pfabric {
            return err("scheme.rank", format!(
                "\"remaining_time\" ranks pFabric's packets: scheme {} has no rank queue", sc.name.as_str()));
        }
        let ll = &self.link_loss;
        if !(ll.probability.is_finite() && (0.0..1.0).contains(&ll.probability)) {
            return err("link_loss.probability", format!("must be >= 0 and < 1 (got {})", ll.probability));
        }
        let hosts = self.topology.hosts();
        if let Some(&h) = ll.hosts.iter().find(|&&h| h >= hosts) {
            return err("link_loss.hosts", format!("host {h} does not exist (the topology has {hosts} hosts)"));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_object_gives_defaults() {
        let c = Config::from_json("{}").unwrap();
        assert_eq!(c.topology.hosts(), 144);
        assert_eq!(c.switch.queues, 8);
        assert_eq!(c.transport_kind(), TransportKind::Dctcp);
    }

    #[test]
    fn unknown_key_is_named() {
        let e = Config::from_json(r#"{"switch": {"queus": 3}}"#).unwrap_err();
        assert_eq!(e.key, "switch.queus");
        assert!(e.message.contains("unknown field"), "{e}");
        let e = Config::from_json(r#"{"topology": {"kind": "fat_tree", "hosts": 3}}"#).unwrap_err();
        assert_eq!(e.key, "topology.hosts", "{e}");
        assert!(!e.message.contains("line 1"), "{e}");
        let e = Config::from_json(r#"{"bogus": 1}"#).unwrap_err();
        assert_eq!(e.key, "bogus", "{e}");
    }

    #[test]
    fn unknown_kind_lists_the_allowed_values() {
        let e = Config::from_json(r#"{"topology": {"kind": "torus"}}"#).unwrap_err();
        assert!(e.to_string().contains("leaf_spine"), "{e}");
    }

    #[test]
    fn homa_keys_are_checked() {
        let c = Config::from_json(r#"{"scheme": {"name": "homa"}}"#).unwrap();
        assert_eq!(c.scheme.name.family(), FamilyName::Homa);
        assert_eq!(c.switch.ecn, EcnMode::Off, "Homa's preset: no ECN");
        assert_eq!((c.scheme.homa_rtt_bytes, c.scheme.homa_overcommit, c.scheme.homa_sizes), (0, 0, HomaSizes::Exact));
        let bad = |extra: &str| {
            Config::from_json(&format!(r#"{{"scheme": {{"name": "homa", {extra}}}}}"#)).unwrap_err().key
        };
        assert_eq!(bad(r#""homa_unscheduled_cutoffs_bytes": [100, 100]"#), "scheme.homa_unscheduled_cutoffs_bytes");
        let seven = r#""homa_unscheduled_cutoffs_bytes": [1, 2, 3, 4, 5, 6, 7]"#;
        assert_eq!(bad(seven), "scheme.homa_unscheduled_cutoffs_bytes", "no level left for scheduled packets");
        assert_eq!(bad(r#""homa_unscheduled_levels": 8"#), "scheme.homa_unscheduled_levels", "none left to schedule");
        assert_eq!(bad(r#""homa_resend_timeout_us": 0"#), "scheme.homa_resend_timeout_us");
        assert_eq!(bad(r#""homa_sizes": "guess""#), "scheme.homa_sizes");
        let e = Config::from_json(r#"{"scheme": {"name": "homa"}, "transport": {"connections": "per_host_pair"}}"#)
            .unwrap_err();
        assert_eq!(e.key, "transport.connections");
        // spraying is fine: the receiver takes segments in any order
        Config::from_json(r#"{"scheme": {"name": "homa"}, "routing": {"mode": "spray"}}"#).unwrap();
    }

    #[test]
    fn ranges_are_checked() {
        let e = Config::from_json(r#"{"topology": {"kind": "fat_tree", "k": -1}}"#).unwrap_err();
        assert_eq!(e.key, "topology.k", "{e}");
        let e = Config::from_json(r#"{"topology": {"kind": "jellyfish", "graph_seed": "x"}}"#).unwrap_err();
        assert_eq!(e.key, "topology.graph_seed", "{e}");
        let e = Config::from_json(r#"{"topology": {"kind": "fat_tree", "k": 7}}"#).unwrap_err();
        assert_eq!(e.key, "topology.k");
        let e = Config::from_json(r#"{"switch": {"queues": 0}}"#).unwrap_err();
        assert_eq!(e.key, "switch.queues");
        let e = Config::from_json(r#"{"topology": {"kind": "single_switch", "host_link_gbps": -1}}"#).unwrap_err();
        assert_eq!(e.key, "topology.host_link_gbps");
        let e = Config::from_json(r#"{"switch": {"buffer": "shared"}}"#).unwrap_err();
        assert_eq!(e.key, "switch.shared_buffer_bytes");
    }

    #[test]
    fn scheme_defaults_fill_only_missing_keys() {
        let c = Config::from_json(r#"{"scheme": {"name": "pfabric"}}"#).unwrap();
        assert_eq!(c.switch.buffer_bytes, 36_000);
        assert_eq!(c.transport.init_cwnd_packets, 12);
        assert_eq!(c.switch.ecn, EcnMode::Off);
        assert_eq!(c.scheme.probe_after_timeouts, 5);
        // pFabric's rate control: a fixed RTO of ~3 RTTs, timeouts only
        assert_eq!((c.transport.rto_min_us, c.transport.rto_fixed, c.transport.dupack_threshold), (45.0, true, 0));
        let c = Config::from_json(r#"{"scheme": {"name": "pfabric", "preset": "pias"}, "transport": {"rto_min_us": 99}}"#)
            .unwrap();
        assert_eq!(c.switch.buffer_bytes, 210_000);
        assert_eq!(c.transport.rto_min_us, 99.0, "explicit keys win");
        assert_eq!(c.transport.init_cwnd_packets, 70);
        assert!(c.transport.rto_fixed && c.transport.dupack_threshold == 0);
        let c = Config::from_json(r#"{"scheme": {"name": "las"}}"#).unwrap();
        assert!(c.transport.rto_fixed && c.transport.dupack_threshold == 0 && c.transport.rto_min_us == 250.0);
        let c = Config::from_json(r#"{"scheme": {"name": "dctcp"}}"#).unwrap();
        assert_eq!(c.switch.buffer_bytes, 360_000);
        assert!(!c.transport.rto_fixed && c.transport.dupack_threshold == 3, "RFC 6298 and 3 dupacks by default");
        let e = Config::from_json(r#"{"scheme": {"name": "pias"}}"#).unwrap_err();
        assert_eq!(e.key, "scheme.thresholds_bytes");
        let e = Config::from_json(r#"{"scheme": {"name": "pias", "thresholds_bytes": [5, 3]}}"#).unwrap_err();
        assert_eq!(e.key, "scheme.thresholds_bytes");
        let e = Config::from_json(r#"{"scheme": {"name": "fifo"}}"#).unwrap_err();
        assert_eq!(e.key, "scheme.name");
        assert!(e.message.contains("pias"), "{e}");
    }

    #[test]
    fn pdq_variants_set_their_switches_and_choices_are_keys() {
        let c = Config::from_json(r#"{"scheme": {"name": "pdq-es"}}"#).unwrap();
        let s = &c.scheme;
        assert!(s.pdq_early_start && !s.pdq_early_termination && !s.pdq_suppressed_probing);
        let c = Config::from_json(r#"{"scheme": {"name": "pdq-basic", "pdq_early_start": true}}"#).unwrap();
        assert!(c.scheme.pdq_early_start, "explicit keys win");
        let c = Config::from_json(r#"{"scheme": {"name": "pdq", "pdq_probe_factor": 0.5, "pdq_list_max": 16}}"#).unwrap();
        let p = crate::transport::rate::RateParams::from_config(&c);
        assert_eq!((p.probe_factor, p.list_max, p.list_min), (0.5, 16, 8));
        let e = Config::from_json(r#"{"scheme": {"name": "pdq", "pdq_list_min": 9, "pdq_list_max": 4}}"#).unwrap_err();
        assert_eq!(e.key, "scheme.pdq_list_max");
        let e = Config::from_json(r#"{"scheme": {"name": "rcp"}, "routing": {"mode": "spray"}}"#).unwrap_err();
        assert_eq!(e.key, "routing.mode");
        let e = Config::from_json(r#"{"link_loss": {"probability": 1.5}}"#).unwrap_err();
        assert_eq!(e.key, "link_loss.probability");
    }

    #[test]
    fn defaults_round_trip_through_json() {
        let text = serde_json::to_string(&Config::default()).unwrap();
        let c = Config::from_json(&text).unwrap();
        assert_eq!(serde_json::to_string(&c).unwrap(), text);
    }
}
