//! # fctlab-sim: the packet-level engine of fctlab
//!
//! A discrete-event simulator of data-center fabrics for flow-scheduling research. Read it in this order:
//!
//! 1. [`units`]: time is an integer number of picoseconds; serialization delay = bytes x 8 / rate.
//! 2. [`config`]: everything a run needs except its flows, parsed and range-checked once.
//! 3. [`flows`]: the flows (src, dst, size, start, priority) as columns, and their per-flow results.
//! 4. [`net`]: the fabric. Nodes are hosts and switches; every directed link is a [`net::port::Port`]: a set of
//!    strict-priority FIFO queues with a buffer limit and ECN marking, a transmitter, and the packets in flight
//!    on its wire. Routing tables hold the equal-cost next hops; ECMP and packet spraying choose among them.
//! 5. [`transport`]: TCP NewReno with a SACK scoreboard, and DCTCP, as state machines: a packet in, packets out,
//!    and a deadline for the retransmission timer. They never touch the event queue.
//! 6. [`policy`]: host-side tagging: the priority each data packet carries.
//! 7. [`engine`]: the event queue (ordered by time, then by a key of the event itself), the run loop that
//!    wires the above together, and the counters that make up a run's summary. Tie rule: a packet that
//!    reaches a port at the instant its transmitter becomes free is admitted after the next waiting packet
//!    has started. [`engine::parallel`] runs the hosts and the switches on two threads.
//!
//! 8. [`record`]: what a run returns at either level: per-flow results and the run's counters.
//! 9. [`validate`]: the checks of a config that need the built fabric or a level; [`validate::config_from_json`]
//!    is how a front end reads a config.
//!
//! Two levels simulate the same config and flows: the packet level ([`engine`]) and the flow level
//! ([`flowlevel`]: fluid rates, no packets). [`run`] reads `run.level` and hands the run to one of them; neither
//! runs the other. HyLine's central manager lives in [`control`], beside the fabric.
//!
//! Determinism: one seeded generator per run, no hash maps anywhere, results in flow-id order; the same
//! config, flows and seed give bit-identical results on any machine, on one thread or two.

pub mod config;
pub mod control;
pub mod engine;
pub mod flowlevel;
pub mod flows;
pub mod net;
pub mod policy;
pub mod record;
pub mod transport;
pub mod units;
pub mod validate;

pub use config::{Config, ConfigError};
pub use flows::{FlowError, FlowResults, FlowSet};
pub use record::{RunOutput, RunStats};

use std::sync::atomic::AtomicU64;

/// Simulate `flows` on the fabric `cfg` describes, at the level `run.level` names: the packet level
/// ([`engine::run_threads`], on up to `threads` threads: 1 or 2) or the flow level ([`flowlevel::run`], on one).
/// `progress`, if given, holds the number of flows finished so far (the packet level updates it as flows
/// finish). Deterministic: same inputs, same results, whatever the number of threads.
pub fn run(cfg: &Config, flows: &FlowSet, progress: Option<&AtomicU64>, threads: usize) -> Result<RunOutput, FlowError> {
    validate::flows(cfg, flows)?;
    match cfg.run.level {
        config::Level::Packet => engine::run_threads(cfg, flows, progress, threads),
        config::Level::Flow => flowlevel::run(cfg, flows),
    }
}
