//! What a run hands back, whichever level simulated it: the per-flow results ([`FlowResults`]) and the run's
//! counters ([`RunStats`], with the optional [`Monitor`] series). The packet level (`engine`) and the flow level
//! (`flowlevel`) both fill these; the summary keys are their serialized field names.

use crate::flows::FlowResults;
use crate::units::Ps;
use serde::Serialize;
use std::sync::atomic::{AtomicU64, Ordering};

/// What a running simulation has done so far, for a progress display polled from another thread: the flows
/// finished and the simulated time reached. Both levels update it (the packet level as flows finish, the flow
/// level at each of its events); relaxed stores, read as a snapshot.
#[derive(Debug, Default)]
pub struct Progress {
    /// Flows whose receiver holds every byte so far.
    pub flows_done: AtomicU64,
    /// The simulated time reached (ps).
    pub sim_time_ps: AtomicU64,
}

impl Progress {
    /// Record `flows_done` flows finished at simulated time `now`.
    #[inline]
    pub fn set(&self, flows_done: u64, now: Ps) {
        self.flows_done.store(flows_done, Ordering::Relaxed);
        self.sim_time_ps.store(now, Ordering::Relaxed);
    }
}

/// Counters of a whole run (the simulator's part of the summary).
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct RunStats {
    pub flows: u64,
    pub flows_finished: u64,
    /// Events popped from the event queue.
    pub events: u64,
    /// Packet transmissions on links (a packet crossing 4 links counts 4). htsim spends two events per
    /// packet-hop (queue service, then the pipe), so 2 x `packet_hops` is the event count at htsim's
    /// granularity.
    pub packet_hops: u64,
    pub htsim_equivalent_events: u64,
    /// Simulated time of the last event.
    pub sim_time_ps: Ps,
    pub wall_seconds: f64,
    pub events_per_second: f64,
    pub htsim_equivalent_events_per_second: f64,
    pub data_packets_sent: u64,
    pub ack_packets_sent: u64,
    /// Packets dropped in the fabric (data and ACKs), and per queue index.
    pub drops: u64,
    pub drops_per_queue: Vec<u64>,
    /// Packets dropped, by where the dropping port sits (`Network::classify_tiers`: `host_nic`, `leaf_up`,
    /// `spine_down`, `leaf_down` on a leaf-spine fabric), in path order; serialized as an object.
    #[serde(serialize_with = "pairs_as_map")]
    pub drops_per_tier: Vec<(String, u64)>,
    /// Of those, probes (pFabric's and PIAS's probe mode) and ACKs, by tier (same order as `drops_per_tier`).
    #[serde(serialize_with = "pairs_as_map")]
    pub probe_drops_per_tier: Vec<(String, u64)>,
    #[serde(serialize_with = "pairs_as_map")]
    pub ack_drops_per_tier: Vec<(String, u64)>,
    pub ecn_marks: u64,
    pub marks_per_queue: Vec<u64>,
    /// Largest occupancy any switch port reached.
    pub max_port_occupancy_bytes: u64,
    /// Largest number of flows open at once.
    pub max_concurrent_flows: u64,
    /// TCP connections opened (one per flow with `transport.connections = "per_flow"`), and flows that ran on
    /// a connection an earlier flow had used.
    pub connections_opened: u64,
    pub connections_reused: u64,
    /// Packets lost at random on lossy links (`[link_loss]`; also counted in `drops`).
    pub link_losses: u64,
    /// The run stopped at `run.time_limit_ms` with flows still open.
    pub hit_time_limit: bool,
    /// The largest number of entries the event queue held (two threads: the larger of their two queues).
    pub max_event_queue_len: u64,
    /// Threads the engine ran on: 1, or as many as asked when the fabric could be split that far
    /// (`engine::parallel`: one for the hosts, one per group of switches).
    pub threads: u64,
    /// Why the run used fewer threads than asked (empty when it used them all, or was asked for one).
    pub threads_note: String,
    /// Split runs: the wall-clock seconds each thread (the hosts' first, then each group of switches') spent
    /// waiting for the others (a measure of how evenly the work was split); empty on one thread.
    pub thread_wait_seconds: Vec<f64>,
    /// Payload bytes each receiving host held out of order (indexed by host): the most at once, the
    /// time-weighted mean over the run (from t = 0 to the last event), and the mean of the values right after
    /// each out-of-order segment was stored (what a kernel's out-of-order queue length averages to when
    /// sampled on insertion).
    pub ooo_host_max_bytes: Vec<u64>,
    pub ooo_host_mean_bytes: Vec<f64>,
    pub ooo_host_insert_mean_bytes: Vec<f64>,
    /// RAX: times flows' priorities rose, and fast retransmits suppressed while a priority rose (reorderings
    /// the duplicate ACKs stood for; section III-B of the RAX paper).
    pub rax_priority_rises: u64,
    pub rax_reorderings: u64,
    /// HyLine's manager: requests (RTS) received, flows let in (first CTS or a later one), flows preempted, and
    /// STS signals sent (to preempted flows and to new ones that must wait).
    pub hyline_requests: u64,
    pub hyline_admissions: u64,
    pub hyline_preemptions: u64,
    pub hyline_stops: u64,
    /// Packets a host's rate limiter dropped before its NIC (QJump; also counted in `drops`).
    pub host_limiter_drops: u64,
    /// PFC (`switch.pfc`; `net::pfc`): PAUSE and RESUME frames the switches sent (one per upstream port and
    /// priority per transition).
    pub pfc_pause_frames: u64,
    pub pfc_resume_frames: u64,
    /// PFC: picoseconds ports held a queue paused, by where the paused port sits (the tiers of
    /// `drops_per_tier`): for every (port, queue) from the PAUSE's arrival to the RESUME's, or to the last
    /// event of the run, summed over the tier's ports and their queues. Zeros without PFC. In
    /// `switch.pfc_mode = "next_queue"` (no frames): the time the paused queues themselves were paused, by the
    /// tier of their own ports.
    #[serde(serialize_with = "pairs_as_map")]
    pub pfc_paused_ps_per_tier: Vec<(String, u64)>,
    /// `run.monitor_host`: the time series (absent otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub monitor: Option<Monitor>,
}

/// Time series of one host's last hop (`run.monitor_host`), one entry per sample.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct Monitor {
    pub host: u32,
    pub interval_ps: Ps,
    pub time_ps: Vec<Ps>,
    /// Bytes waiting in the switch port facing the host (not counting the packet being sent).
    pub queue_bytes: Vec<u64>,
    /// Payload bytes delivered to the host so far (all flows; duplicates included).
    pub delivered_bytes: Vec<u64>,
    /// The flows whose destination is the host (ids ascending), and each one's delivered payload bytes so far
    /// at every sample (`flow_delivered_bytes[k][i]`: flow `flows[k]` at sample i).
    pub flows: Vec<u32>,
    pub flow_delivered_bytes: Vec<Vec<u64>>,
}

/// Serialize (name, count) pairs as a JSON object, keeping their order.
fn pairs_as_map<S: serde::Serializer>(pairs: &[(String, u64)], ser: S) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap;
    let mut m = ser.serialize_map(Some(pairs.len()))?;
    for (k, v) in pairs {
        m.serialize_entry(k, v)?;
    }
    m.end()
}

/// Everything a run returns.
#[derive(Debug, Clone)]
pub struct RunOutput {
    pub results: FlowResults,
    pub stats: RunStats,
}

/// Where a run hands its per-flow results over while it runs, in flow-id order, rather than returning them when it
/// ends (`crate::run_batches`): `each(first, batch)` gets the rows of flows `first..first + len`, in batches of
/// `rows` flows (the last one shorter; one empty batch for a run without flows). An error from `each` ends the
/// run with that error.
pub struct Batches<'a> {
    pub rows: usize,
    pub each: &'a mut dyn FnMut(usize, FlowResults) -> Result<(), crate::flows::FlowError>,
}
