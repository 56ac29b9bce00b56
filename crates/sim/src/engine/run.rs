//! Setting a packet-level run up: the entry points ([`run_threads`], [`run_event_driven`]), the choice of family
//! (`run_with`), the FIFO fast path's decision (`fifo_queue`), and the set-up of the fabric, its random streams,
//! lossy links, the monitor and the thread split before the loop starts (`run_family`). The entry points are the
//! crate's own: [`crate::run`] picks the level and checks the flows against the scheme first
//! ([`crate::validate::flows`]), which the families then rely on (a route that is no path of the fabric, a
//! missing bounds column).

use super::family::{homa, hyline, qjump, rate, routed, tcp, Family};
use super::parallel;
use super::queue::{Event, SAMPLE};
use super::Sim;
use crate::config::{Config, FamilyName};
use crate::flows::{FlowError, FlowSet};
use crate::net::Network;
use crate::policy::{Rank, Tagging};
use crate::record::{Monitor, RunOutput};
use crate::transport::tcp::TcpParams;
use crate::units::{Ps, PS_PER_MS};
use rand::{RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use crate::record::Progress;

/// Simulate `flows` packet by packet on the fabric `cfg` describes, on up to `threads` threads (any number; see
/// [`parallel`]: the hosts on one, groups of switches on the others, as far as the fabric can be split, with
/// `RunStats::threads_note` saying why fewer were used). Deterministic: same inputs, same results, bit-identical
/// whatever the number of threads (except `max_event_queue_len` and the wall-clock fields); a fabric that cannot
/// be split (a host link without propagation delay) runs on one thread. The engine is the packet level whatever `run.level` says.
pub(crate) fn run_threads(cfg: &Config, flows: &FlowSet, progress: Option<&Progress>, threads: usize) -> Result<RunOutput, FlowError> {
    run_with(cfg, flows, progress, true, threads)
}

/// Would two threads speed this run up? Yes when the fabric can be split, its lookahead holds enough
/// packets ([`parallel::window_packets`] >= [`parallel::WORTHWHILE_WINDOW_PACKETS`]) and its paths cross
/// enough switches for the switches' side to have a fair share of the work
/// ([`parallel::mean_switches_crossed`] >= [`parallel::WORTHWHILE_SWITCHES_CROSSED`]). What the front end's
/// default thread count follows; [`run_threads`] does as it is told.
pub fn two_threads_worthwhile(cfg: &Config) -> bool {
    let net: Network = Network::build(cfg, 0);
    parallel::window_packets(&net).is_some_and(|w| w >= parallel::WORTHWHILE_WINDOW_PACKETS)
        && parallel::mean_switches_crossed(&net) >= parallel::WORTHWHILE_SWITCHES_CROSSED
}

/// [`run_threads`] with every port event-driven (no FIFO fast path): for the tests that check that all paths
/// give bit-identical results ([`crate::run_event_driven`]).
pub(crate) fn run_event_driven(cfg: &Config, flows: &FlowSet, threads: usize) -> Result<RunOutput, FlowError> {
    run_with(cfg, flows, None, false, threads)
}

/// A TCP-family run's FIFO fast path: the queue every packet maps to, if one does and the fast path may be used
/// (`allowed`; never with PFC, which pauses ports that a FIFO's packets, on the wire ahead of time, could not obey).
fn fifo_queue(cfg: &Config, flows: &FlowSet, allowed: bool) -> Option<usize> {
    let params = TcpParams::from_config(cfg);
    (allowed && !cfg.switch.pfc && single_queue_run(cfg, flows, &params))
        .then(|| (params.ack_priority as usize).min(cfg.switch.queues as usize - 1))
}

/// May family `F`'s event-driven ports time their departures without events (`net::port`, *Lazy
/// departures*)? Not with PFC (a departure releases pause thresholds and the next-queue scan reads the
/// queues). Agents that read a port's occupancy as packets pass (`Family::AGENTS`: the rate family) read it
/// at a switch port's arrivals, where a lazy port first performs the departures due before the arrival
/// (`Sim::enqueue`), so they see what the event-driven port holds.
fn lazy_departures_allowed(cfg: &Config) -> bool {
    !cfg.switch.pfc
}

/// Can the run's ports be FIFOs? Yes when every packet of the run maps to the same queue: strict-priority
/// switches (no rank queue), one fixed priority per flow (no PIAS demotion), and every flow's priority and
/// the ACKs' priority land in one queue index min(prio, queues - 1) (every port has the same queues).
fn single_queue_run(cfg: &Config, flows: &FlowSet, params: &TcpParams) -> bool {
    if cfg.scheme.ranked_ports() || params.tagging != Tagging::Fixed || params.rank != Rank::None {
        return false;
    }
    let last = cfg.switch.queues as usize - 1;
    let q = |prio: u8| (prio as usize).min(last);
    let ack_q = q(params.ack_priority);
    if flows.priority.is_empty() {
        q(cfg.scheme.priority) == ack_q
    } else {
        flows.priority.iter().all(|&p| q(p) == ack_q)
    }
}

fn run_with(
    cfg: &Config,
    flows: &FlowSet,
    progress: Option<&Progress>,
    fifo_fast_path: bool,
    threads: usize,
) -> Result<RunOutput, FlowError> {
    flows.validate(cfg.topology.hosts())?;
    match cfg.scheme.name.family() {
        FamilyName::Tcp if !flows.path.is_empty() => {
            Ok(run_family::<routed::Routed>(cfg, flows, progress, fifo_queue(cfg, flows, fifo_fast_path), fifo_fast_path, threads))
        }
        FamilyName::Tcp => {
            Ok(run_family::<tcp::Tcp>(cfg, flows, progress, fifo_queue(cfg, flows, fifo_fast_path), fifo_fast_path, threads))
        }
        // (its ports are never FIFOs: its two classes use two queues)
        FamilyName::Hyline => Ok(run_family::<hyline::Hyline>(cfg, flows, progress, None, fifo_fast_path, threads)),
        // (its ports are never FIFOs: its levels use several queues)
        FamilyName::Qjump => Ok(run_family::<qjump::Qjump>(cfg, flows, progress, None, fifo_fast_path, threads)),
        // (its ports are never FIFOs: its agents read their exact occupancy)
        FamilyName::Rate => Ok(run_family::<rate::Rate>(cfg, flows, progress, None, fifo_fast_path, threads)),
        // (its ports are never FIFOs either: one port's packets use several priority queues)
        FamilyName::Homa => Ok(run_family::<homa::Homa>(cfg, flows, progress, None, fifo_fast_path, threads)),
    }
}

/// Why a run's switches must all be on one thread, if they must (`parallel::WholeSwitches`): state that several
/// switches share. Packet spraying draws every switch's choice, in event order, from one generator (the rate
/// family's spraying too); giving each switch a stream of its own would change the results. PFC's frames
/// between switches are exchanged on the switches' thread, not as messages between partitions.
fn whole_switches(cfg: &Config) -> parallel::WholeSwitches {
    if cfg.routing.mode == crate::config::RoutingMode::Spray {
        Some("packet spraying draws every switch's choice from one random generator")
    } else if cfg.switch.pfc {
        Some("PFC's frames between switches stay within one partition")
    } else {
        None
    }
}

/// One run of family `F`; `fifo`: the queue every packet maps to, when ports may run in FIFO mode; `lazy`: the
/// other ports may time their departures without events where they can (`net::port`, *Lazy departures*).
fn run_family<F: Family>(
    cfg: &Config,
    flows: &FlowSet,
    progress: Option<&Progress>,
    fifo: Option<usize>,
    lazy: bool,
    threads: usize,
) -> RunOutput {
    let wall = std::time::Instant::now();
    let mut seeder = Xoshiro256PlusPlus::seed_from_u64(cfg.seed);
    let mut net: Network<F::Hdr> = Network::build(cfg, seeder.next_u64());
    let rng = Xoshiro256PlusPlus::seed_from_u64(seeder.next_u64());
    // `[link_loss]`: the links of the chosen hosts, both ways (each port draws from its own generator)
    let ll = &cfg.link_loss;
    let mut loss = Vec::new();
    if ll.probability > 0.0 {
        let loss_seed = seeder.next_u64();
        let threshold = (ll.probability * 18_446_744_073_709_551_616.0) as u64;
        let hosts = net.hosts;
        let chosen = |n: u32| n < hosts && (ll.hosts.is_empty() || ll.hosts.contains(&n));
        for (i, p) in net.ports.iter_mut().enumerate() {
            let lossy = chosen(p.owner) || chosen(p.peer);
            if lossy {
                p.set_lossy();
            }
            loss.push((crate::net::mix64(loss_seed ^ crate::net::mix64(i as u64 + 1)), if lossy { threshold } else { 0 }));
        }
    }
    // the port a monitor samples (`run.monitor_host`): the switch's port facing the host
    let monitor_port = cfg.run.monitor_host.map(|h| {
        let hosts = net.hosts;
        net.ports.iter().position(|p| p.peer == h && p.owner >= hosts).expect("every host has a switch port") as u32
    });
    if let Some(q) = fifo {
        for (i, p) in net.ports.iter_mut().enumerate() {
            if monitor_port == Some(i as u32) {
                continue; // sampled: its occupancy must be exact at any instant
            }
            // A shared buffer's admission needs the other ports' occupancy at `now`, which FIFO ports only
            // know lazily: keep those event-driven. Zero-delay links too: there a packet's arrival event
            // would be scheduled from a different handler than in the event-driven path (the wire may
            // empty at the very instant the next packet starts), which could reorder same-time events.
            if p.pool().is_none() && p.delay_ps > 0 && !p.is_lossy() {
                p.set_fifo(q);
            }
        }
    }
    if lazy && lazy_departures_allowed(cfg) {
        // Homa's hosts read their NIC's transmitter (`family::homa`, which sends when it frees): theirs keep
        // their events. So do the rate family's NICs when they run agents (`scheme.rate_nic_agents`): a host
        // offers its NIC packets from timers too, which come after the "transmitter free" events of their
        // instant, so the agent's view there would not be the one `Sim::enqueue` restores at an arrival.
        let family = cfg.scheme.name.family();
        let hosts_read_nics =
            family == FamilyName::Homa || (family == FamilyName::Rate && cfg.scheme.rate_nic_agents);
        let hosts = net.hosts;
        for (i, p) in net.ports.iter_mut().enumerate() {
            let eligible = !p.is_fifo() && p.pool().is_none() && p.delay_ps > 0 && !p.is_lossy();
            if eligible && monitor_port != Some(i as u32) && !(hosts_read_nics && p.owner < hosts) {
                p.set_lazy();
            }
        }
    }
    let limit = (cfg.run.time_limit_ms * PS_PER_MS as f64).round() as Ps;
    // (PFC's "next_queue" mode reads the switches' queues from the hosts' NICs: one thread; see `net::pfc`)
    let next_queue = cfg.switch.pfc && cfg.switch.pfc_mode == crate::config::PfcMode::NextQueue;
    let (plan, mut threads_note) = match threads {
        0 | 1 => (None, String::new()),
        _ if monitor_port.is_some() => (None, "one thread: run.monitor_host samples a port at every instant".to_string()),
        _ if next_queue => (None, "one thread: PFC's next_queue mode reads the switches' queues from the hosts".to_string()),
        _ => parallel::plan(&net, threads, whole_switches(cfg)),
    };
    if let Some(plan) = plan {
        let mut sims = Vec::with_capacity(plan.parts);
        for me in 0..plan.parts {
            let mut part = net.clone();
            parallel::cut(&mut part, &plan, me);
            let (side, progress) = if me == 0 { (parallel::Side::Hosts, progress) } else { (parallel::Side::Switches, None) };
            sims.push(Sim::<F>::new(cfg, flows, progress, part, rng.clone(), loss.clone(), side));
        }
        let mut sim = parallel::run(sims, limit, &plan);
        sim.stats.threads = plan.parts as u64;
        sim.stats.threads_note = threads_note;
        sim.finish(wall.elapsed().as_secs_f64());
        return RunOutput { results: sim.results, stats: sim.stats };
    }
    let mut sim = Sim::<F>::new(cfg, flows, progress, net, rng, loss, parallel::Side::All);
    if let (Some(port), Some(host)) = (monitor_port, cfg.run.monitor_host) {
        let to_host: Vec<u32> = (0..flows.len() as u32).filter(|&f| flows.dst[f as usize] == host).collect();
        sim.monitor_port = port;
        sim.monitor = Some(Monitor {
            host,
            interval_ps: (cfg.run.monitor_interval_us * crate::units::PS_PER_US as f64).round().max(1.0) as Ps,
            flow_delivered_bytes: vec![Vec::new(); to_host.len()],
            flows: to_host,
            ..Monitor::default()
        });
        sim.events.push(0, Event::FlowStart(SAMPLE));
    }
    sim.stats.threads = 1;
    sim.stats.threads_note = std::mem::take(&mut threads_note);
    sim.run_loop(limit);
    sim.finish(wall.elapsed().as_secs_f64());
    RunOutput { results: sim.results, stats: sim.stats }
}
