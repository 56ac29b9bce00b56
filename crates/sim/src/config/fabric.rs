//! The sections that describe the fabric's devices: `switch` (queues, buffers, ECN, PFC), `host` (the NIC's
//! queue), `routing`, and `link_loss`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Where a switch port's buffer comes from.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum BufferMode {
    /// Each port owns `buffer_bytes`, shared by its priority queues.
    Port,
    /// Each switch has one pool of `shared_buffer_bytes`; a queue may grow while its occupancy is below
    /// `dt_alpha` x (free pool bytes) (Choudhury-Hahne dynamic thresholds, per priority queue).
    Shared,
}

/// What a PFC pause holds back (`switch.pfc_mode`; see `net::pfc`).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, JsonSchema)]
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
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum EcnMode {
    /// Mark when the port's total occupancy exceeds the threshold (PIAS, DCTCP).
    Port,
    /// Mark when the packet's own priority queue exceeds the threshold.
    Queue,
    /// No ECN marking.
    Off,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct SwitchConfig {
    /// Number of strict-priority FIFO queues per port; priority p goes to queue min(p, queues - 1).
    pub queues: u32,
    /// Where a port's buffer comes from (see [`BufferMode`]): `"port"`, each port its own `buffer_bytes`, or
    /// `"shared"`, one pool of `shared_buffer_bytes` per switch.
    pub buffer: BufferMode,
    /// Per-port buffer (buffer = "port"): 240 x 1500 B, the PIAS ns-2 value.
    pub buffer_bytes: u64,
    /// The per-port buffer in BDPs of the fabric the run builds, instead of bytes: when set, `buffer_bytes`
    /// becomes this many BDPs of the longest base path, rounded up to whole full-size packets (`net::scale`).
    /// For presets whose paper states the queue in BDPs (pFabric's native preset: 2, "about twice the BDP").
    /// An explicit `buffer_bytes` wins: the preset's relative value is then dropped; setting both is refused.
    pub buffer_bdp: Option<f64>,
    /// Per-switch pool (buffer = "shared").
    pub shared_buffer_bytes: u64,
    /// Shared buffer (buffer = "shared"): the dynamic thresholds' alpha; a priority queue may grow while its
    /// occupancy is below `dt_alpha` x the pool's free bytes.
    pub dt_alpha: f64,
    /// What ECN marking compares with `ecn_threshold_bytes` (see [`EcnMode`]): the port's total occupancy, the
    /// packet's own queue, or no marking.
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
    /// Bytes a protected queue of a switch port or a bounded host NIC may hold beyond its buffer (per-port
    /// buffers only): the lossless class's headroom, which the other queues cannot take, so that a full port
    /// still admits what the upstream sends before a pause reaches it, and a paused NIC keeps its host's
    /// protected packets. 0 by default (all queues share the port's buffer); the HyLine authors' ns-2 scripts
    /// give the protected queue of every port, the hosts' too, 100 packets more with PFC on.
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
            buffer_bdp: None,
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
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
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

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RoutingMode {
    /// Per-flow ECMP: a hash of the flow's 5-tuple with a per-switch salt picks among equal-cost next hops.
    Ecmp,
    /// Packet spraying: every packet picks a uniformly random equal-cost next hop at every switch.
    Spray,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct RoutingConfig {
    /// How packets pick among equal-cost next hops (see [`RoutingMode`]): per-flow ECMP or per-packet spraying.
    pub mode: RoutingMode,
}

impl Default for RoutingConfig {
    fn default() -> Self {
        RoutingConfig { mode: RoutingMode::Ecmp }
    }
}

/// Random loss on host links (the PDQ paper's loss experiment drops packets at random on the bottleneck link in
/// both directions): every packet that crosses a link of one of `hosts`, either way, is lost with probability
/// `probability`, independently. The packet takes its serialization time on the link, then never reaches the
/// far end. Each lossy port draws from a generator of its own, seeded from the run's seed (the run's other
/// random choices are the same with and without loss); lossy ports are event-driven. An empty `hosts` list means
/// every host. Off (probability 0) by default.
#[derive(Debug, Clone, Serialize, Deserialize, Default, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct LinkLossConfig {
    /// Probability that a packet crossing a lossy host link (either way) is lost, independently of the others; 0
    /// (the default) turns loss off.
    pub probability: f64,
    /// The hosts whose links are lossy; empty (the default) means every host.
    pub hosts: Vec<u32>,
}
