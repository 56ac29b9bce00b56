//! # fctlab-sim: the packet-level engine of fctlab
//!
//! A discrete-event simulator of data-center fabrics for flow-scheduling research. Read it in this order:
//!
//! 1. [`units`]: time is an integer number of picoseconds; serialization delay = bytes x 8 / rate.
//! 2. [`config`]: everything a run needs except its flows, parsed and range-checked once; one row per scheme
//!    ([`config::SCHEMES`]) that the rest of the crate reads a scheme's facts from.
//! 3. [`flows`]: the flows (src, dst, size, start, priority, ...) as columns ([`flows::FLOW_COLUMNS`]), and
//!    [`record`]: what a run returns at either level (per-flow results and the run's counters).
//! 4. [`net`]: the fabric. Nodes are hosts and switches; every directed link is a [`net::port::Port`]: a set of
//!    strict-priority FIFO queues with a buffer limit and ECN marking, a transmitter, and the packets in flight
//!    on its wire. Routing tables hold the equal-cost next hops; ECMP and packet spraying choose among them.
//! 5. [`policy`]: host-side tagging: the priority or rank each data packet carries.
//! 6. [`transport`]: the hosts' per-flow state machines (TCP NewReno with a SACK scoreboard and DCTCP, the
//!    explicit-rate family, Homa): a packet in, packets out, and a deadline for the next timer. They never touch
//!    the event queue. [`control`]: HyLine's central manager.
//! 7. [`engine`]: the packet level: the event queue (ordered by time, then by a key of the event itself) and the
//!    run loop that wires the above together. Tie rule: a packet that reaches a port at the instant its
//!    transmitter becomes free is admitted after the next waiting packet has started. [`engine::parallel`] runs
//!    the hosts and the switches on two threads. [`flowlevel`]: the flow level (fluid rates, no packets).
//! 8. [`validate`]: the checks of a config that need the built fabric or a level ([`validate::config_from_json`]
//!    is how a front end reads a config), and of the flows against the scheme and the level
//!    ([`validate::flows`]).
//!
//! Two levels simulate the same config and flows: the packet level ([`engine`]) and the flow level
//! ([`flowlevel`]: fluid rates, no packets). [`run`] checks the flows, reads `run.level` and hands the run to one
//! of them; neither runs the other. Each module imports only from those listed before it (engine and flowlevel
//! not from each other): `tests/layering.rs` checks it.
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
pub use record::{Batches, Progress, RunOutput, RunStats};

/// Simulate `flows` on the fabric `cfg` describes, at the level `run.level` names: the packet level
/// ([`engine::run_threads`], on up to `threads` threads: 1 or 2) or the flow level ([`flowlevel::run`], on one).
/// `progress`, if given, holds the flows finished so far and the simulated time reached (the packet level updates
/// it as flows finish, the flow level at each event). Deterministic: same inputs, same results, whatever the number of threads. Keys in the fabric's
/// terms still set in `cfg` are resolved first ([`net::scale::resolve`]).
pub fn run(cfg: &Config, flows: &FlowSet, progress: Option<&Progress>, threads: usize) -> Result<RunOutput, FlowError> {
    run_to(cfg, flows, progress, threads, None)
}

/// [`run`], handing the per-flow results to `out` in batches of flow-id order rather than returning them (the
/// returned `results` are then empty). The flow level hands each batch over as soon as its flows and every
/// flow before them are done (finished or given up), so it holds only the rows from that watermark on, about
/// the flows in flight; the packet level keeps its whole columns until the run ends, then cuts them into the
/// same batches. Either way the batches, put end to end, are the columns [`run`] returns.
pub fn run_batches(
    cfg: &Config,
    flows: &FlowSet,
    progress: Option<&Progress>,
    threads: usize,
    out: Batches<'_>,
) -> Result<RunOutput, FlowError> {
    run_to(cfg, flows, progress, threads, Some(out))
}

fn run_to(
    cfg: &Config,
    flows: &FlowSet,
    progress: Option<&Progress>,
    threads: usize,
    out: Option<Batches<'_>>,
) -> Result<RunOutput, FlowError> {
    let resolved;
    let cfg = if net::scale::needs_resolving(cfg) {
        let mut c = cfg.clone();
        net::scale::resolve(&mut c);
        resolved = c;
        &resolved
    } else {
        cfg
    };
    validate::flows(cfg, flows)?;
    match (cfg.run.level, out) {
        (config::Level::Packet, None) => engine::run_threads(cfg, flows, progress, threads),
        (config::Level::Flow, None) => flowlevel::run(cfg, flows, progress),
        (config::Level::Flow, Some(out)) => flowlevel::run_batches(cfg, flows, progress, out),
        (config::Level::Packet, Some(out)) => {
            let mut whole = engine::run_threads(cfg, flows, progress, threads)?;
            let (n, rows) = (flows.len(), out.rows.max(1));
            if n == 0 {
                (out.each)(0, FlowResults::new(0))?;
            }
            for lo in (0..n).step_by(rows) {
                (out.each)(lo, whole.results.rows(lo, (lo + rows).min(n)))?;
            }
            whole.results = FlowResults::new(0);
            Ok(whole)
        }
    }
}

/// [`run`] at the packet level with every port event-driven (no FIFO fast path), on `threads` threads, after the
/// same checks of the flows: for the tests that check that all paths give bit-identical results.
#[doc(hidden)]
pub fn run_event_driven(cfg: &Config, flows: &FlowSet, threads: usize) -> Result<RunOutput, FlowError> {
    let mut cfg = cfg.clone();
    net::scale::resolve(&mut cfg);
    let cfg = &cfg;
    validate::flows(cfg, flows)?;
    engine::run_event_driven(cfg, flows, threads)
}
