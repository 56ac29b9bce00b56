//! The engine's configuration: every section of an experiment except the workload (flows arrive as arrays).
//!
//! Parse, don't validate: [`Config::from_json`] reads JSON with unknown keys rejected, fills every default, and
//! checks ranges once; the rest of the engine trusts the result. Errors name the key path
//! (`topology.k: must be an even number >= 2 (got 7)`). These defaults are the single source of truth: the
//! Python front asks the engine for them (`fctlab._core.defaults()`) instead of restating them.
//!
//! The sections live by concern: [`topology`] (the fabric's shape), [`fabric`] (switches, hosts, routing, PFC,
//! ECN, buffers, link loss), [`transport`] (TCP and DCTCP's parameters, connections) and [`scheme`] (the
//! schemes, their parameters and presets). This module holds the whole [`Config`], its parser and the range
//! checks; everything is re-exported here, so `crate::config::X` names any of it. Checks that need more than the
//! config (a built fabric, a level's abilities) are in `crate::validate`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::fmt;

pub mod fabric;
pub mod scheme;
pub mod topology;
pub mod transport;

pub use fabric::*;
pub use scheme::*;
pub use topology::*;
pub use transport::*;

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

/// Where, in the range checks ([`Config::validate_with`]), the checks that need more than the config
/// (`crate::validate`) run, so that the first fault reported does not depend on which module checks what.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckPoint {
    /// After the topology's ranges: checks of the built topology (Jellyfish's graph).
    Topology,
    /// At the flow level (`run.level = "flow"`), before its other refusals: does it have a model of the scheme.
    FlowLevelScheme,
    /// At the flow level, after its other refusals: can it hold the topology's paths.
    FlowLevelPaths,
}

/// Whole engine configuration. Every field has a default.
#[derive(Debug, Clone, Serialize, Deserialize, Default, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    /// Seed of the run's one random generator (ECMP salts, packet spraying).
    pub seed: u64,
    /// The fabric's shape: its `kind` and that kind's parameters.
    pub topology: TopologyConfig,
    /// The switch ports: queues, buffers, ECN, PFC.
    pub switch: SwitchConfig,
    /// The hosts' NIC queue.
    pub host: HostConfig,
    /// How packets choose among equal-cost paths.
    pub routing: RoutingConfig,
    /// TCP's and DCTCP's parameters, and which flows share a connection.
    pub transport: TransportConfig,
    /// The scheme and its own parameters.
    pub scheme: SchemeConfig,
    /// The run itself: time limit, level of detail, where completion is measured, monitoring.
    pub run: RunConfig,
    /// Random packet loss on host links.
    pub link_loss: LinkLossConfig,
}

/// The JSON Schema (draft 2020-12) of the config, derived from the types the parser reads: every key's doc
/// comment is its `description`, its `default` is [`Config::default`]'s value (a scheme's preset may fill other
/// values, [`scheme_defaults`]), and an enum's variants are its allowed values. The range checks
/// ([`Config::validate`]) are not in it. The key reference (docs/reference/keys.md) is generated from it.
pub fn config_schema() -> serde_json::Value {
    serde_json::to_value(schemars::schema_for!(Config)).expect("the config schema serializes")
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

/// The keys stated in the fabric's own terms (base RTTs, BDPs) and the absolute keys they resolve to, as
/// (section, absolute key, relative key): `net::scale` fills the absolute key from the relative one before a run.
pub const FABRIC_RELATIVE_KEYS: [(&str, &str, &str); 4] = [
    ("transport", "rto_min_us", "rto_min_rtts"),
    ("transport", "init_cwnd_packets", "init_cwnd_bdp"),
    ("transport", "max_cwnd_packets", "max_cwnd_bdp"),
    ("switch", "buffer_bytes", "buffer_bdp"),
];

/// An absolute key the config gives explicitly always wins over its relative key: wherever the config `value`
/// sets the absolute key (a null value, as a resolved config writes an unused relative key, is not a setting),
/// the relative key is removed from the preset's `defaults` and from the config itself (a config that sets both
/// runs with the absolute value: once parsed, the engine can no longer tell which of the two was written).
fn drop_relative_where_absolute_given(value: &mut serde_json::Value, defaults: &mut serde_json::Value) {
    for (section, absolute, relative) in FABRIC_RELATIVE_KEYS {
        let given = value.get(section).and_then(|s| s.get(absolute)).is_some_and(|v| !v.is_null());
        if !given {
            continue;
        }
        if let Some(d) = defaults.get_mut(section).and_then(|s| s.as_object_mut()) {
            d.remove(relative);
        }
        if let Some(v) = value.get_mut(section).and_then(|s| s.as_object_mut()) {
            v.remove(relative);
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
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
    /// Sampling interval of the `monitor_host` time series, in us.
    pub monitor_interval_us: f64,
    /// `"packet"` (the default) or `"flow"`: rates from the scheme's allocation rule instead of packets
    /// (`flowlevel`; tcp, dctcp, l2dct and rcp as max-min fair shares, pfabric as SRPT, pias as MLFQ, d3 as
    /// first-come-first-served grants of desired rates, the pdq variants in criticality order).
    pub level: Level,
    /// Where a flow's completion is measured (`finish_ps`, and so its FCT and slowdown): see [`FctAt`].
    pub fct_at: FctAt,
    /// The flow level's model of the TCP family: see [`FlowModel`]. No effect at the packet level.
    pub flow_model: FlowModel,
    /// The windowed model's step (`flow_model = "window"`), in ns: the queues and windows advance by it. 1,000 by
    /// default: a full segment of 1,500 bytes at 12 Gbps, so that a flow at 10 Gbps moves about a segment per step.
    pub flow_step_ns: f64,
    /// How the windowed model (`flow_model = "window"`) spreads a flow over the ports of a hop under packet
    /// spraying: see [`FlowSpray`]. No effect under ECMP or in the rate model.
    pub flow_spray: FlowSpray,
    /// The flow level's queueing delay: see [`FlowQueueing`]. No effect at the packet level.
    pub flow_queueing: FlowQueueing,
    /// The flow level's retransmission timer: see [`FlowTimeouts`]. No effect at the packet level.
    pub flow_timeouts: FlowTimeouts,
    /// Measure each flow's time in queues at the packet level (the TCP family; the results' `queue_delay_ns`
    /// and `data_arrivals`): the receiving host sums its data packets' one-way delays from their send stamps,
    /// and the idle fabric's way is taken off at the end. Off by default: the per-packet sum is a second random
    /// write per data packet, which cost DCTCP 7-12% of its wall time on the reference flows (quiet machine,
    /// `benchmarks/ab.py`); off, the columns are empty (NaN in the flow table). Results are the same either way.
    pub queue_delay: bool,
}

/// How the flow level (`run.level = "flow"`) runs the TCP family (`run.flow_model`).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FlowModel {
    /// The default: rates from each scheme's allocation rule (max-min for tcp, dctcp, l2dct), with slow start's
    /// rounds, the standing queues of `flow_queueing` and the timer of `flow_timeouts` (`flowlevel`).
    Rates,
    /// tcp, dctcp and pias only: each flow keeps the packet level's window (slow start, DCTCP's alpha and cuts,
    /// halving on a loss found by duplicate ACKs, tail losses and lost retransmissions left to the RFC 6298
    /// timer) and sends against it into fluid queues, one per port (per port and priority level for pias), stepped
    /// every `flow_step_ns` (`flowlevel::window`). `flow_queueing` and `flow_timeouts` do not apply (its queues
    /// and its timer are its own). On the 144-host leaf-spine with a 10-packet window, ECMP and RTOmin 200 us
    /// (8,000 flows of web search at 0.6) every size bin's mean and p99 FCT is within 10% of the packet level for
    /// DCTCP, PIAS and TCP, where the rate model's are up to 10.5%, 37% and 35% off. Under spraying each chunk's
    /// way is drawn as a packet's (`flow_spray`), so that it meets the packet level's reordering. It costs
    /// several times the rate model's time, and about the packet level's to 1.6 times less (docs/flow-level.md).
    Window,
}

/// How the windowed model (`run.flow_model = "window"`) takes packet spraying (`run.flow_spray`).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FlowSpray {
    /// The default: every chunk (what one step sends of a flow) takes, at each hop, one of the ports its packets
    /// may take, drawn at random as the packet level draws one per packet, with a queue per port; and its ACK
    /// its own way back. Chunks that cross queues of different lengths arrive out of order, and the sender reads
    /// the SACKs as the packet level's scoreboard does: a chunk with `transport.dupack_threshold` segments' worth
    /// SACKed above it is taken for lost and sent again (a spurious fast recovery when it was only late). On the
    /// k = 8 fat-tree's 16 paths of 10 Gbps that is what holds the packet level's long flows back
    /// (docs/flow-level.md).
    Ports,
    /// Each hop's ports pooled into one queue (the rate model's resources), and no reordering: to compare with.
    Pooled,
}

/// What queueing delay the flow level (`run.level = "flow"`) adds to a flow's round trips (`run.flow_queueing`).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FlowQueueing {
    /// None: a slow-start round lasts one base RTT and the last bit's way is the idle path's.
    None,
    /// The standing queue of a congested port delays slow start's rounds (tcp, dctcp and l2dct: the max-min
    /// schemes with windows; no effect on the others). A port whose capacity the allocation uses up and which
    /// carries a flow past slow start (its window no longer binds, so it keeps the port's queue standing) holds
    /// the queue of the transport's operating point: the ECN threshold where the port marks (DCTCP, L2DCT: the
    /// queue oscillates about K), else what its buffer lets one port hold (TCP fills it). A flow still in slow
    /// start waits for its ACKs behind those queues: each of its rounds lasts the base RTT plus the delays (bytes
    /// / port rate) of the congested ports on its data's path and its ACKs' path, as they stand when the round
    /// starts. The last bit's way is not lengthened: the flow's data already moves at its share of the congested
    /// port, which is the fluid form of its wait there (adding the queue's delay to it too made small flows 50%
    /// slower than the packet level on the reference fabric). Measured (docs/flow-level.md): with a 10-packet
    /// initial window, small flows' mean FCT error -44% without it, -12% with it; with 70 packets no change.
    /// A flow past slow start is paced by its share, not its round trips, and is not delayed.
    Standing,
}

/// Which schemes' flows the flow level's retransmission timer times out (`run.flow_timeouts`; `flowlevel::rto`).
/// Each flow keeps the packet level's RTO estimator (RFC 6298, within `transport.rto_min_us` and `rto_max_us`,
/// `rto_init_us` before the first sample), fed with its modelled round trips (the set-up's, and each slow-start
/// round's: the base RTT plus the standing queues of `flow_queueing`). A round whose round trip exceeds the RTO
/// times out as at the packet level: the next round's window is half the round's (ssthresh), it also carries the
/// round's window again (the spurious retransmissions, which the flow sends but which deliver nothing), and the
/// window doubles again from there. Without standing queues a round lasts the base RTT and does not fire at the
/// engine's RTO floor. On the 144-host leaf-spine with the engine's 200 us floor, the packet level's timeouts are
/// 99.7% spurious: a round trip behind two DCTCP standing queues (85 + 2 x 78 us) exceeds an RTO learnt from the
/// set-up's 82 us.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FlowTimeouts {
    /// No timer: no flow times out.
    None,
    /// The default: dctcp and l2dct, whose standing queue is the ECN threshold, the queue their round trips keep.
    /// Not tcp: its standing queue is the buffer a port holds, the peak of its sawtooth, not what a round trip
    /// meets; behind two of them a round (661 us on the reference fabric) fires for 85% of the small flows with
    /// a 10-packet window (the packet level: 54%), which made them 48-242% slower than the packet level's in
    /// the calibration matrix, where without the timer they were within -33% to +56%.
    Marking,
    /// tcp as well (see `Marking` for what that does to its small flows; its medium flows come 6-11 points closer).
    All,
}

/// Where a flow's completion is taken (`run.fct_at`).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FctAt {
    /// When the receiver holds every byte in order (the default; DESIGN.md's FCT). The ideal FCT is the last
    /// byte's arrival with the flow alone in the idle fabric.
    Receiver,
    /// When the sender learns it is done: the cumulative ACK of the last byte reaches it (`sender_done_ps`), as
    /// the ns-2 scripts of HyLine, pFabric, PIAS and QJump measure it (`TCP_pair`'s `fin_notify`, called from
    /// the sending agent's `done_data`). The ideal FCT then adds that ACK's return on the idle reverse path (the
    /// reverse ECMP path's serialization of `transport.ack_bytes` and propagation, hop by hop), so a lone flow's
    /// slowdown stays 1; `finish_ps` equals `sender_done_ps`, and a flow whose last ACK never came back is
    /// unfinished. The simulation itself is unchanged (flows that wait for another still start when the
    /// receiver of the other holds its bytes). Built for the TCP family's schemes and HyLine and QJump (their
    /// hosts run the TCP code); refused for the explicit-rate schemes, Homa (their senders learn of completion
    /// from control packets of their own) and the flow level (no ACKs).
    Sender,
}

/// The level of detail of a run.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Level {
    /// Every packet simulated through queues and links (the default).
    Packet,
    /// Flows as fluid rates from the scheme's allocation rule, without packets (`flowlevel`).
    Flow,
}

impl Default for RunConfig {
    fn default() -> Self {
        RunConfig {
            time_limit_ms: 60_000.0,
            monitor_host: None,
            monitor_interval_us: 100.0,
            level: Level::Packet,
            fct_at: FctAt::Receiver,
            flow_model: FlowModel::Rates,
            flow_step_ns: 1000.0,
            flow_spray: FlowSpray::Ports,
            flow_queueing: FlowQueueing::Standing,
            flow_timeouts: FlowTimeouts::Marking,
            queue_delay: false,
        }
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
        if self.scheme.ranked_ports() {
            return err(
                "switch.pfc",
                format!(
                    "is not supported with scheme {}{}: its rank queue has no priority queues to pause (PFC needs a \
                     strict-priority scheme)",
                    sc.as_str(),
                    if sc.rank_queue() { "" } else { " and scheme.qjump_queue = \"ranked\"" }
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

    /// Parse JSON text into a range-checked config; the error names the key. Keys the text leaves out take the
    /// scheme's published values ([`scheme_defaults`]), then the engine's defaults. The checks that need more
    /// than the config (the built fabric, a level's abilities) are not run: `crate::validate::config_from_json`
    /// runs them too, and is what reads a user's config.
    pub fn from_json(text: &str) -> Result<Config, ConfigError> {
        Config::from_json_with(text, |_, _| Ok(()))
    }

    /// [`Config::from_json`], with `deeper` run at each [`CheckPoint`] of the range checks
    /// ([`Config::validate_with`]).
    pub fn from_json_with(
        text: &str,
        deeper: impl FnMut(&Config, CheckPoint) -> Result<(), ConfigError>,
    ) -> Result<Config, ConfigError> {
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
        let mut defaults = scheme_defaults(name, preset);
        drop_relative_where_absolute_given(&mut value, &mut defaults);
        fill_missing(&mut value, &defaults);
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
        cfg.validate_with(deeper)?;
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
        // (the families with a transport of their own never read TCP's kind)
        self.transport.kind.or(self.scheme.name.row().protocol.tcp_kind()).unwrap_or(TransportKind::Tcp)
    }

    /// Range checks, once. Structural problems (unknown keys, wrong types) were caught by the parser. The checks
    /// that need more than the config are left to `crate::validate`.
    pub fn validate(&self) -> Result<(), ConfigError> {
        self.validate_with(|_, _| Ok(()))
    }

    /// The range checks, with `deeper` run at each [`CheckPoint`]: a config with several faults reports the
    /// same first one as when every check lived here.
    pub fn validate_with(
        &self,
        mut deeper: impl FnMut(&Config, CheckPoint) -> Result<(), ConfigError>,
    ) -> Result<(), ConfigError> {
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
            }
        }
        deeper(self, CheckPoint::Topology)?;
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
        for (key, v) in [
            ("transport.rto_min_rtts", t.rto_min_rtts),
            ("transport.init_cwnd_bdp", t.init_cwnd_bdp),
            ("transport.max_cwnd_bdp", t.max_cwnd_bdp),
            ("switch.buffer_bdp", self.switch.buffer_bdp),
        ] {
            if let Some(v) = v {
                check_pos(key, v, 1000.0)?;
            }
        }
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
        check_pos("run.flow_step_ns", self.run.flow_step_ns, 1e9)?;
        if self.run.level == Level::Flow
            && self.run.flow_model == FlowModel::Window
            && !matches!(self.scheme.name, SchemeName::Tcp | SchemeName::Dctcp | SchemeName::Pias)
        {
            return err(
                "run.flow_model",
                format!(
                    "\"window\" models tcp, dctcp and pias, not {} (\"rates\", the default, models the others)",
                    self.scheme.name.as_str()
                ),
            );
        }
        if let Some(h) = self.run.monitor_host {
            let hosts = self.topology.hosts();
            if h >= hosts {
                return err("run.monitor_host", format!("host {h} does not exist (the topology has {hosts} hosts)"));
            }
        }
        let sc = &self.scheme;
        if sc.ranked_ports() && s.buffer == BufferMode::Shared {
            let with = if sc.name.rank_queue() { String::new() } else { " and scheme.qjump_queue = \"ranked\"".into() };
            return err(
                "switch.buffer",
                format!(
                    "\"shared\" is not supported with scheme {}{with}: its rank queue has a per-port buffer",
                    sc.name.as_str()
                ),
            );
        }
        if sc.qjump_queue != QjumpQueue::PriorityFifos && sc.name != SchemeName::Qjump {
            return err(
                "scheme.qjump_queue",
                format!("chooses QJump's switch queue: scheme {} does not read it (leave it out)", sc.name.as_str()),
            );
        }
        let th = &sc.thresholds_bytes;
        if th.windows(2).any(|w| w[0] >= w[1]) || th.first() == Some(&0) {
            return err("scheme.thresholds_bytes", format!("must be positive and strictly increasing (got {th:?})"));
        }
        let tagged = sc.name.row().needs_thresholds;
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
        check_pos("scheme.rcp_init_rate_fraction", sc.rcp_init_rate_fraction, 1.0)?;
        check_pos("scheme.rate_rto_rtts", sc.rate_rto_rtts, 1e6)?;
        check_int("scheme.homa_rtt_bytes", sc.homa_rtt_bytes, 0, 1 << 40)?;
        // (at least one level is left for scheduled packets)
        let most = self.switch.queues as u64 - 1;
        check_int("scheme.homa_unscheduled_levels", sc.homa_unscheduled_levels as u64, 0, most)?;
        check_int("scheme.homa_overcommit", sc.homa_overcommit as u64, 0, 1 << 16)?;
        check_pos("scheme.homa_resend_timeout_us", sc.homa_resend_timeout_us, 1e9)?;
        if let Err((key, why)) = sc.check_size_info(self.run.level == Level::Flow) {
            return err(key, why);
        }
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
        if self.run.fct_at == FctAt::Sender {
            if self.run.level == Level::Flow {
                return err(
                    "run.fct_at",
                    "\"sender\" needs the packet level: the flow level has no ACKs (run.level = \"flow\")",
                );
            }
            let tcp_hosts = |f: FamilyName| matches!(f, FamilyName::Tcp | FamilyName::Hyline | FamilyName::Qjump);
            if !tcp_hosts(sc.name.family()) {
                let built: Vec<&str> = SCHEMES.iter().filter(|r| tcp_hosts(r.family)).map(|r| r.name).collect();
                return err(
                    "run.fct_at",
                    format!(
                        "\"sender\" is built for the schemes whose hosts run TCP ({}); scheme {} learns of \
                         completion from control packets of its own: use \"receiver\"",
                        built.join(", "),
                        sc.name.as_str()
                    ),
                );
            }
        }
        if self.run.level == Level::Flow {
            deeper(self, CheckPoint::FlowLevelScheme)?;
            if self.run.monitor_host.is_some() {
                return err("run.monitor_host", "the flow level has no queues to monitor");
            }
            if self.link_loss.probability > 0.0 {
                return err("link_loss.probability", "the flow level has no packets to lose");
            }
            deeper(self, CheckPoint::FlowLevelPaths)?;
        }
        if !(sc.rax_q1_us.is_finite() && (0.0..=1e9).contains(&sc.rax_q1_us)) {
            return err("scheme.rax_q1_us", format!("must be between 0 and 1e9 us (got {})", sc.rax_q1_us));
        }
        if !(sc.rax_base.is_finite() && sc.rax_base > 1.0 && sc.rax_base <= 1000.0) {
            return err("scheme.rax_base", format!("must be > 1 and <= 1000 (got {})", sc.rax_base));
        }
        check_pos("scheme.rax_alpha", sc.rax_alpha, 1.0)?;
        if sc.rax_state == RaxState::PerConnection && self.transport.connections == Connections::PerFlow {
            return err("scheme.rax_state", "\"per_connection\" needs connections that carry several flows: set \
                transport.connections (per_host_pair or trace)");
        }
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
        assert_eq!(bad(r#""homa_unscheduled_priority": "packet""#), "scheme.homa_unscheduled_priority");
        assert_eq!(bad(r#""homa_tail_boost": 1"#), "scheme.homa_tail_boost");
        assert_eq!((c.scheme.homa_unscheduled_priority, c.scheme.homa_tail_boost), (HomaUnschedPrio::Message, false));
        let c = Config::from_json(
            r#"{"scheme": {"name": "homa", "homa_unscheduled_priority": "remaining", "homa_tail_boost": true}}"#)
            .unwrap();
        assert_eq!((c.scheme.homa_unscheduled_priority, c.scheme.homa_tail_boost), (HomaUnschedPrio::Remaining, true));
        let e = Config::from_json(r#"{"scheme": {"name": "homa"}, "transport": {"connections": "per_host_pair"}}"#)
            .unwrap_err();
        assert_eq!(e.key, "transport.connections");
        // spraying is fine: the receiver takes segments in any order
        Config::from_json(r#"{"scheme": {"name": "homa"}, "routing": {"mode": "spray"}}"#).unwrap();
    }

    #[test]
    fn rax_threshold_readings_are_named() {
        let c = Config::from_json(r#"{"scheme": {"name": "rax", "rax_thresholds": "span"}}"#).unwrap();
        assert_eq!(c.scheme.rax_thresholds, RaxThresholds::Span);
        assert_eq!(Config::from_json(r#"{"scheme": {"name": "rax"}}"#).unwrap().scheme.rax_thresholds,
                   RaxThresholds::Literal);
        let e = Config::from_json(r#"{"scheme": {"name": "rax", "rax_thresholds": "wide"}}"#).unwrap_err();
        assert_eq!(e.key, "scheme.rax_thresholds", "{e}");
        assert!(e.to_string().contains("span"), "{e}");
        let e = Config::from_json(r#"{"scheme": {"name": "rax", "rax_state": "per_connection"}}"#).unwrap_err();
        assert_eq!(e.key, "scheme.rax_state", "{e}");
        Config::from_json(r#"{"scheme": {"name": "rax", "rax_state": "per_connection"},
                              "transport": {"connections": "per_host_pair"}}"#).unwrap();
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
        // the native preset in the fabric's terms (resolved before the run, `net::scale`)
        let t = &c.transport;
        assert_eq!((t.rto_min_rtts, t.init_cwnd_bdp, t.max_cwnd_bdp, c.switch.buffer_bdp), (Some(3.0), Some(1.0), Some(1.25), Some(2.0)));
        let c = Config::from_json(r#"{"scheme": {"name": "pfabric", "preset": "pfabric_ns2"}}"#).unwrap();
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
        assert_eq!((c.scheme.pdq_probe_factor, c.scheme.pdq_list_max, c.scheme.pdq_list_min), (0.5, 16, 8));
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
