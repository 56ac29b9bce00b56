//! The run loop: pops events in (time, event key) order (`queue`) and hands them to the fabric and the
//! transports; on two threads, see `parallel`.
//!
//! A packet's life: the sender's transport emits it; it joins the source host's NIC port (straight onto the
//! wire when the port is idle and empty, else into its priority queue with a "transmitter free" event at the
//! end of the current transmission); it crosses the wire and arrives at the far end at
//! (end of serialization + propagation delay); a switch picks the egress port (ECMP or spraying), where the
//! port admits it (drop-tail, ECN) and queues or sends it; at the destination host it goes to the transport,
//! whose ACK travels back the same way.
//!
//! When every packet of a run maps to one queue (tcp, dctcp, l2dct with one priority for flows and ACKs),
//! ports with their own buffer run in FIFO mode (`net::port`): an admitted packet goes onto the wire at
//! once with its future start time, and no "transmitter free" event exists; a packet-hop then costs one
//! event. Results are bit-identical to the event-driven path ([`run_event_driven`], used by the tests).
//!
//! **Tie rule.** When a packet arrives at a port at the very instant its transmitter becomes free, the
//! transmitter first starts the next waiting packet, then the arrival is admitted (its drop and ECN decisions
//! see the queue without the departing packet) and queued. Results therefore never depend on the order in
//! which the event queue holds the two same-time events. In the event-driven path `enqueue` performs the
//! due departure inline; the "transmitter free" event, still queued for that instant, finds the transmitter
//! busy when it fires and re-arms itself at the new end of transmission (a port has at most one such event
//! pending at any time).

pub mod parallel;
pub mod queue;

use crate::config::{Config, Connections, QclimbInfo, RoutingMode, SchemeName};
use crate::flows::{FlowError, FlowResults, FlowSet};
use crate::net::packet::{flags, Packet};
use crate::net::port::{Admission, Dropped, HAND_OVER};
use crate::net::rank_queue::{RankAdmission, RankQueue};
use crate::net::{flow_hash, Network};
use crate::policy::{Rank, Tagging};
use crate::transport::tcp::{Conn, ConnState, TcpParams};
use crate::units::{tx_time, Ps, NEVER, PS_PER_MS};
use queue::{Event, EventQueue, NEXT_IN_ORDER};
use rand::{RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::Serialize;
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};

/// Counters of a whole run (the engine's part of the summary).
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
    /// The run stopped at `run.time_limit_ms` with flows still open.
    pub hit_time_limit: bool,
    /// The largest number of entries the event queue held (two threads: the larger of their two queues).
    pub max_event_queue_len: u64,
    /// Threads the engine ran on (1, or 2 when asked and the fabric could be split: `engine::parallel`).
    pub threads: u64,
    /// Two threads: the wall-clock seconds the hosts' and the switches' side each spent waiting for the other
    /// (a measure of how evenly the work was split); empty on one thread.
    pub thread_wait_seconds: Vec<f64>,
    /// Payload bytes each receiving host held out of order (indexed by host): the most at once, the
    /// time-weighted mean over the run (from t = 0 to the last event), and the mean of the values right after
    /// each out-of-order segment was stored (what a kernel's out-of-order queue length averages to when
    /// sampled on insertion).
    pub ooo_host_max_bytes: Vec<u64>,
    pub ooo_host_mean_bytes: Vec<f64>,
    pub ooo_host_insert_mean_bytes: Vec<f64>,
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

/// Out-of-order bytes held at each host, as it changes.
#[derive(Debug, Clone, Default)]
struct OooHosts {
    now_bytes: Vec<u64>,
    max_bytes: Vec<u64>,
    /// Integral of `now_bytes` over time (byte-picoseconds) up to `since`.
    area: Vec<u128>,
    since: Vec<Ps>,
    insert_sum: Vec<u128>,
    inserts: Vec<u64>,
}

impl OooHosts {
    fn new(hosts: usize) -> Self {
        OooHosts {
            now_bytes: vec![0; hosts],
            max_bytes: vec![0; hosts],
            area: vec![0; hosts],
            since: vec![0; hosts],
            insert_sum: vec![0; hosts],
            inserts: vec![0; hosts],
        }
    }

    #[inline]
    fn change(&mut self, host: usize, now: Ps, before: u64, after: u64) {
        let held = self.now_bytes[host];
        self.area[host] += held as u128 * (now - self.since[host]) as u128;
        self.since[host] = now;
        let held = held + after - before;
        self.now_bytes[host] = held;
        if after > before {
            self.max_bytes[host] = self.max_bytes[host].max(held);
            self.insert_sum[host] += held as u128;
            self.inserts[host] += 1;
        }
    }

    fn write(&mut self, end: Ps, stats: &mut RunStats) {
        let n = self.now_bytes.len();
        for h in 0..n {
            self.area[h] += self.now_bytes[h] as u128 * (end - self.since[h]) as u128;
        }
        stats.ooo_host_max_bytes = self.max_bytes.clone();
        stats.ooo_host_mean_bytes =
            (0..n).map(|h| if end > 0 { self.area[h] as f64 / end as f64 } else { 0.0 }).collect();
        stats.ooo_host_insert_mean_bytes = (0..n)
            .map(|h| if self.inserts[h] > 0 { self.insert_sum[h] as f64 / self.inserts[h] as f64 } else { 0.0 })
            .collect();
    }
}

/// Where a flow's QCLIMB bounds come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BoundsFrom {
    Columns,
    Size,
    Estimate,
}

/// Everything a run returns.
#[derive(Debug, Clone)]
pub struct RunOutput {
    pub results: FlowResults,
    pub stats: RunStats,
}

struct Sim<'a> {
    net: Network,
    events: EventQueue,
    now: Ps,
    flows: &'a FlowSet,
    /// Independent flow ids in start order (flows that wait for a parent start from `children`).
    order: Vec<u32>,
    next_start: usize,
    /// Flow dependencies as adjacency lists: the flows waiting for flow f are
    /// `children[child_start[f]..child_start[f + 1]]` (both empty when no flow waits for another).
    child_start: Vec<u32>,
    children: Vec<u32>,
    conns: Vec<Option<Box<Conn>>>,
    open_flows: u64,
    results: FlowResults,
    params: TcpParams,
    default_prio: u8,
    bounds_from: BoundsFrom,
    spray: bool,
    rng: Xoshiro256PlusPlus,
    /// pFabric / LAS: one rank queue per port (indexed by port id); empty for strict-priority schemes.
    rank_queues: Vec<RankQueue>,
    switch_buffer: u64,
    nic_buffer: u64,
    /// Scratch buffer the transports write packets into (reused: no allocation per packet).
    out: Vec<Packet>,
    /// Scratch buffer for the packets a rank queue evicts to admit one arrival (reused; capacity for a full
    /// packet's worth of probes, so that it never grows in practice).
    evicted: Vec<Packet>,
    /// Two-thread runs: packets handed to the other thread since the last exchange.
    outbox: Vec<parallel::Msg>,
    stats: RunStats,
    ooo: OooHosts,
    progress: Option<&'a AtomicU64>,
    /// Connection reuse (`transport.connections`): the idle connections of each pool (a host pair, or a trace's
    /// 5-tuple), longest idle first. Touched once when a flow starts and once when it ends, never per packet.
    connections: Connections,
    idle_conns: HashMap<u64, VecDeque<ConnState>>,
    /// Trace connections: the open flows of each connection, and the flows whose connection a later flow took
    /// over once they had sent everything (they close without returning it to the pool).
    open_on: HashMap<u64, Vec<u32>>,
    handed_over: Vec<bool>,
}

/// Simulate `flows` on the fabric `cfg` describes, on one thread. Deterministic: same inputs, same results.
pub fn run(cfg: &Config, flows: &FlowSet, progress: Option<&AtomicU64>) -> Result<RunOutput, FlowError> {
    run_with(cfg, flows, progress, true, 1)
}

/// [`run`] on up to `threads` threads (1 or 2; see [`parallel`]). The results are bit-identical to [`run`]'s
/// whatever the number of threads (except `max_event_queue_len` and the wall-clock fields); a fabric that
/// cannot be split (a host link without propagation delay) runs on one thread.
pub fn run_threads(cfg: &Config, flows: &FlowSet, progress: Option<&AtomicU64>, threads: usize) -> Result<RunOutput, FlowError> {
    run_with(cfg, flows, progress, true, threads)
}

/// Add the ECN marks of `net`'s FIFO-mode ports to `stats`: they count them only in their own counters, so that
/// the per-packet path updates one record, not the run's totals too. (Each mark is made by one port on one
/// side of a two-thread run: the sides' sums add up.)
fn add_fifo_marks(net: &Network, stats: &mut RunStats) {
    for p in net.ports.iter().filter(|p| p.is_fifo()) {
        let q = p.fifo_queue();
        let marked = p.counters(q).marked;
        stats.ecn_marks += marked;
        stats.marks_per_queue[q] += marked;
    }
}

/// Would two threads speed this run up? (The fabric can be split and its lookahead holds enough packets:
/// [`parallel::window_packets`] >= [`parallel::WORTHWHILE_WINDOW_PACKETS`].) What the front end's default
/// thread count follows; [`run_threads`] does as it is told.
pub fn two_threads_worthwhile(cfg: &Config) -> bool {
    let net = Network::build(cfg, 0);
    parallel::window_packets(&net).is_some_and(|w| w >= parallel::WORTHWHILE_WINDOW_PACKETS)
}

/// [`run`] with every port event-driven (no FIFO fast path), on `threads` threads: for the tests that check
/// that all paths give bit-identical results.
#[doc(hidden)]
pub fn run_event_driven(cfg: &Config, flows: &FlowSet, threads: usize) -> Result<RunOutput, FlowError> {
    run_with(cfg, flows, None, false, threads)
}

/// Can the run's ports be FIFOs? Yes when every packet of the run maps to the same queue: strict-priority
/// switches (no rank queue), one fixed priority per flow (no PIAS demotion), and every flow's priority and
/// the ACKs' priority land in one queue index min(prio, queues - 1) (every port has the same queues).
fn single_queue_run(cfg: &Config, flows: &FlowSet, params: &TcpParams) -> bool {
    if cfg.scheme.name.rank_queue() || params.tagging != Tagging::Fixed || params.rank != Rank::None {
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
    progress: Option<&AtomicU64>,
    fifo_fast_path: bool,
    threads: usize,
) -> Result<RunOutput, FlowError> {
    flows.validate(cfg.topology.hosts())?;
    if cfg.scheme.name == SchemeName::Qclimb && cfg.scheme.qclimb_info == QclimbInfo::Bounds && !flows.has_bounds() {
        return Err(FlowError(
            "flows: scheme qclimb with scheme.qclimb_info = \"bounds\" needs lower_bytes and upper_bytes for every flow \
             (a trace annotated by `fctlab predict annotate`)"
                .into(),
        ));
    }
    if cfg.transport.connections == Connections::Trace && flows.conn.len() != flows.len() {
        return Err(FlowError(
            "flows: transport.connections = \"trace\" needs a connection id for every flow (the trace's `conn` \
             column)"
                .into(),
        ));
    }
    let wall = std::time::Instant::now();
    let mut seeder = Xoshiro256PlusPlus::seed_from_u64(cfg.seed);
    let mut net = Network::build(cfg, seeder.next_u64());
    let params = TcpParams::from_config(cfg);
    if fifo_fast_path && single_queue_run(cfg, flows, &params) {
        let q = (params.ack_priority as usize).min(cfg.switch.queues as usize - 1);
        for p in &mut net.ports {
            // A shared buffer's admission needs the other ports' occupancy at `now`, which FIFO ports only
            // know lazily: keep those event-driven. Zero-delay links too: there a packet's arrival event
            // would be scheduled from a different handler than in the event-driven path (the wire may
            // empty at the very instant the next packet starts), which could reorder same-time events.
            if p.pool().is_none() && p.delay_ps > 0 {
                p.set_fifo(q);
            }
        }
    }
    let rng = Xoshiro256PlusPlus::seed_from_u64(seeder.next_u64());
    let limit = (cfg.run.time_limit_ms * PS_PER_MS as f64).round() as Ps;
    if threads >= 2 {
        if let Some(lookahead) = parallel::lookahead(&net) {
            let hosts = Sim::new(cfg, flows, progress, net.clone(), params.clone(), rng.clone(), parallel::Side::Hosts);
            let switches = Sim::new(cfg, flows, None, net, params, rng, parallel::Side::Switches);
            let mut sim = parallel::run(hosts, switches, limit, lookahead);
            sim.stats.threads = 2;
            sim.finish(wall.elapsed().as_secs_f64());
            return Ok(RunOutput { results: sim.results, stats: sim.stats });
        }
    }
    let mut sim = Sim::new(cfg, flows, progress, net, params, rng, parallel::Side::All);
    sim.stats.threads = 1;
    sim.run_loop(limit);
    sim.finish(wall.elapsed().as_secs_f64());
    Ok(RunOutput { results: sim.results, stats: sim.stats })
}

impl<'a> Sim<'a> {
    /// A run's state; `side` is the part of the fabric it simulates (`All` on one thread).
    fn new(
        cfg: &Config,
        flows: &'a FlowSet,
        progress: Option<&'a AtomicU64>,
        mut net: Network,
        params: TcpParams,
        rng: Xoshiro256PlusPlus,
        side: parallel::Side,
    ) -> Self {
        EventQueue::check_ids(flows.len().max(net.ports.len()));
        let hosts_here = side != parallel::Side::Switches;
        let mut order: Vec<u32> = Vec::new();
        let (mut child_start, mut children) = (Vec::new(), Vec::new());
        if hosts_here {
            order = (0..flows.len() as u32).filter(|&i| flows.parent(i as usize).is_none()).collect();
            order.sort_by_key(|&i| (flows.start_ps[i as usize], i));
            (child_start, children) = dependency_lists(flows);
        }
        if side != parallel::Side::All {
            let hosts = net.hosts;
            for p in &mut net.ports {
                let (owner_host, peer_host) = (p.owner < hosts, p.peer < hosts); // hosts are nodes 0..hosts
                if owner_host == peer_host {
                    continue; // not a host link: both ends on the switches' side
                }
                match side {
                    // NIC ports: their far end is a switch
                    parallel::Side::Hosts if owner_host => p.set_remote(),
                    parallel::Side::Hosts => {}
                    // switch ports facing hosts: a FIFO's whole queue goes to the hosts' side, else its wire
                    _ if !owner_host && p.is_fifo() => p.remote_queue = true,
                    _ if !owner_host => p.set_remote(),
                    _ => {}
                }
            }
        }
        let queues = cfg.switch.queues as usize;
        let tiers: Vec<(String, u64)> = net.tier_names.iter().map(|&n| (n.to_string(), 0)).collect();
        let rank_queues = if cfg.scheme.name.rank_queue() {
            (0..net.ports.len()).map(|_| RankQueue::new()).collect()
        } else {
            Vec::new()
        };
        Sim {
            net,
            events: EventQueue::new(),
            now: 0,
            flows,
            order,
            next_start: 0,
            child_start,
            children,
            conns: if hosts_here { (0..flows.len()).map(|_| None).collect() } else { Vec::new() },
            open_flows: 0,
            // the switches' side records only drops
            results: if hosts_here { FlowResults::new(flows.len()) } else { FlowResults::drops_only(flows.len()) },
            params,
            default_prio: cfg.scheme.priority,
            bounds_from: match (cfg.scheme.name, cfg.scheme.qclimb_info) {
                (SchemeName::Qclimb, QclimbInfo::Bounds) => BoundsFrom::Columns,
                (SchemeName::Qclimb, QclimbInfo::Precise) => BoundsFrom::Size,
                _ => BoundsFrom::Estimate,
            },
            spray: cfg.routing.mode == RoutingMode::Spray,
            rng,
            rank_queues,
            switch_buffer: cfg.switch.buffer_bytes,
            nic_buffer: cfg.host.nic_buffer(cfg.switch.buffer_bytes),
            out: Vec::with_capacity(256),
            evicted: Vec::with_capacity(64),
            outbox: Vec::new(),
            stats: RunStats {
                flows: flows.len() as u64,
                drops_per_queue: vec![0; queues],
                drops_per_tier: tiers.clone(),
                probe_drops_per_tier: tiers.clone(),
                ack_drops_per_tier: tiers,
                marks_per_queue: vec![0; queues],
                ..RunStats::default()
            },
            ooo: OooHosts::new(if hosts_here { cfg.topology.hosts() as usize } else { 0 }),
            progress,
            connections: cfg.transport.connections,
            idle_conns: HashMap::new(),
            open_on: HashMap::new(),
            handed_over: if hosts_here && cfg.transport.connections == Connections::Trace {
                vec![false; flows.len()]
            } else {
                Vec::new()
            },
        }
    }
}

impl Sim<'_> {
    /// Queue the first flow arrival (the flows' side of a run only).
    fn schedule_first_flow(&mut self) {
        if let Some(&first) = self.order.first() {
            self.events.push(self.flows.start_ps[first as usize], Event::FlowStart(NEXT_IN_ORDER));
        }
    }

    fn run_loop(&mut self, limit: Ps) {
        self.schedule_first_flow();
        self.process(limit.saturating_add(1), u64::MAX);
        self.stats.hit_time_limit = !self.events.is_empty();
        self.stats.max_event_queue_len = self.events.max_len() as u64;
    }

    /// Process the events earlier than `bound` in order, at most `max` of them; return how many. The one copy
    /// of the hot loop, for one thread and for each side of two.
    #[inline(never)]
    fn process(&mut self, bound: Ps, max: u64) -> u64 {
        let mut n = 0;
        while n < max {
            let Some((t, ev)) = self.events.pop_before(bound) else { break };
            self.now = t;
            // Ask for the next arrival's port and packet now, so that their cache misses overlap this event's
            // work instead of stalling the next one (a hint: it changes nothing else).
            if let Some(next) = self.events.next_arrival_hint() {
                self.net.prefetch_arrival(next);
            }
            self.dispatch(ev);
            n += 1;
        }
        self.stats.events += n;
        n
    }

    #[inline(always)]
    fn dispatch(&mut self, ev: Event) {
        match ev {
            Event::Arrive(port) => self.on_arrive(port),
            Event::TxFree(port) => self.on_tx_free(port),
            Event::Timer(flow) => self.on_timer(flow),
            Event::FlowStart(NEXT_IN_ORDER) => {
                let id = self.order[self.next_start];
                self.next_start += 1;
                if let Some(&next) = self.order.get(self.next_start) {
                    self.events.push(self.flows.start_ps[next as usize], Event::FlowStart(NEXT_IN_ORDER));
                }
                self.start_flow(id);
            }
            Event::FlowStart(id) => self.start_flow(id),
        }
    }

    fn start_flow(&mut self, id: u32) {
        let i = id as usize;
        self.results.start_ps[i] = self.now;
        let (src, dst, size) = (self.flows.src[i], self.flows.dst[i], self.flows.size_bytes[i]);
        let (fwd, rev) = (flow_hash(id, false), flow_hash(id, true));
        let prio = self.flows.priority.get(i).copied().unwrap_or(self.default_prio);
        let estimate = self.flows.estimate_bytes.get(i).copied().unwrap_or(size);
        let mut conn = Box::new(Conn::new(&self.params, id, src, dst, size, estimate, prio));
        let mut reused = false;
        if self.connections != Connections::PerFlow {
            let key = self.pool_key(i);
            let mut st = self.idle_conns.get_mut(&key).and_then(|q| q.pop_front());
            if self.connections == Connections::Trace {
                if st.is_none() {
                    st = self.take_over(key);
                }
                self.open_on.entry(key).or_default().push(id);
            }
            if let Some(st) = st {
                conn.resume(&self.params, &st, self.now);
                reused = true;
            }
        }
        if reused {
            self.stats.connections_reused += 1;
        } else {
            self.stats.connections_opened += 1;
        }
        self.results.ideal_fct_ps[i] = self.ideal_fct(src, dst, size, fwd, rev, reused);
        // QCLIMB's bounds: the predicted ones, the true size (QCLIMB-PS), or the estimate (PP, FP)
        let (lower, upper) = match self.bounds_from {
            BoundsFrom::Columns => (self.flows.lower_bytes[i], self.flows.upper_bytes[i]),
            BoundsFrom::Size => (size, size),
            BoundsFrom::Estimate => (estimate, estimate),
        };
        conn.set_bounds(lower, upper);
        if self.flows.qclimb.get(i) == Some(&false) {
            conn.use_pias();
        }
        self.out.clear();
        conn.start(&self.params, self.now, &mut self.out);
        self.conns[i] = Some(conn);
        self.open_flows += 1;
        self.stats.max_concurrent_flows = self.stats.max_concurrent_flows.max(self.open_flows);
        self.after_transport(id, src);
    }

    /// Send what a transport produced from host `host`, and keep the flow's timer entry in step.
    fn after_transport(&mut self, flow: u32, host: u32) {
        let port = self.net.host_port[host as usize];
        for k in 0..self.out.len() {
            let pkt = self.out[k];
            if pkt.is_ack() {
                self.stats.ack_packets_sent += 1;
            } else {
                self.stats.data_packets_sent += 1;
            }
            self.enqueue(port, pkt);
        }
        self.out.clear();
        self.sync_timer(flow);
    }

    /// Lazy timers: push an entry only when the deadline moved earlier than the queued one.
    #[inline]
    fn sync_timer(&mut self, flow: u32) {
        if let Some(c) = self.conns[flow as usize].as_deref_mut() {
            let due = c.deadline();
            if due < c.timer_queued_at {
                c.timer_queued_at = due;
                self.events.push(due, Event::Timer(flow));
            }
        }
    }

    fn on_timer(&mut self, flow: u32) {
        let now = self.now;
        let Some(c) = self.conns[flow as usize].as_deref_mut() else { return };
        if c.timer_queued_at != now {
            return; // superseded by an earlier entry
        }
        c.timer_queued_at = NEVER;
        if c.delack_deadline <= now {
            // the receiver's delayed ACK is due (sent from the receiving host)
            let dst = c.dst;
            self.out.clear();
            c.on_delack_timer(&self.params, now, &mut self.out);
            self.after_transport(flow, dst);
        }
        let Some(c) = self.conns[flow as usize].as_deref_mut() else { return };
        if c.rto_deadline > now {
            // the deadline moved later since this entry was queued: re-queue at the real one
            self.sync_timer(flow);
            return;
        }
        let src = c.src;
        self.out.clear();
        c.on_timeout(&self.params, now, &mut self.out);
        self.after_transport(flow, src);
    }

    /// A packet enters egress port `port` at `now`.
    #[inline(always)]
    fn enqueue(&mut self, port: u32, mut pkt: Packet) {
        if !self.rank_queues.is_empty() {
            return self.enqueue_ranked(port, pkt);
        }
        let now = self.now;
        if self.net.port_mut(port).is_fifo() {
            return self.enqueue_fifo(port, pkt);
        }
        let p = &mut self.net.ports[port as usize];
        if p.tx_event_pending && p.busy_until <= now {
            // The tie rule: the transmitter became free at this very instant and its event has not fired
            // yet. It starts its next packet first; the arrival then sees the queue without it.
            let next = p.pop().expect("a TxFree is pending with nothing queued");
            if let Some(i) = p.pool() {
                self.net.pools[i as usize].used -= next.wire as u64;
            }
            let p = &mut self.net.ports[port as usize];
            let arrival = p.transmit(now, next);
            self.launched(port, arrival);
            // the pending TxFree (at `now`) stays pending: it re-arms itself at the new `busy_until`
        }
        let p = &mut self.net.ports[port as usize];
        let pool_free = p.pool().map(|i| {
            let pool = &self.net.pools[i as usize];
            (pool.limit - pool.used, self.net.dt_alpha)
        });
        let q = p.queue_of(pkt.prio);
        let admission = p.admit(&mut pkt, pool_free);
        if !self.count_admission(port, q, admission, &pkt) {
            return;
        }
        let p = &mut self.net.ports[port as usize];
        if p.can_send_now(now) {
            let arrival = p.transmit(now, pkt);
            self.launched(port, arrival);
        } else {
            p.push(pkt);
            if let Some(i) = p.pool() {
                self.net.pools[i as usize].used += pkt.wire as u64;
            }
            if !p.tx_event_pending {
                p.tx_event_pending = true;
                let at = p.busy_until;
                self.events.push(at, Event::TxFree(port));
            }
        }
    }

    /// A packet just went onto port `port`'s wire (`arrival`: its arrival time if the wire was empty): schedule
    /// the arrival, or, on a remote port of a two-thread run ([`HAND_OVER`]), hand the packet to the other
    /// thread.
    #[inline(always)]
    fn launched(&mut self, port: u32, arrival: Option<Ps>) {
        if let Some(at) = arrival {
            if at == HAND_OVER {
                self.hand_over(port);
            } else {
                self.schedule_arrival(port, at);
            }
        }
    }

    /// Schedule the arrival of the packet now at the head of port `port`'s wire, and tell the network, whose
    /// prefetch hint remembers where that packet is (`Network::arrival_scheduled`).
    #[inline(always)]
    fn schedule_arrival(&mut self, port: u32, at: Ps) {
        self.events.push(at, Event::Arrive(port));
        self.net.arrival_scheduled(port);
    }

    #[inline(never)]
    fn hand_over(&mut self, port: u32) {
        let (at, pkt) = self.net.port_mut(port).hand_over();
        self.outbox.push(parallel::Msg { port, at, pkt });
    }

    /// A packet for a port whose queue the other side runs (`Port::remote_queue`): enqueued there at `now`.
    #[inline(never)]
    fn hand_over_enqueue(&mut self, port: u32, pkt: Packet) {
        self.outbox.push(parallel::Msg { port: port | parallel::ENQUEUE, at: self.now, pkt });
    }

    /// Count what port `port`'s admission decided for a packet of queue `q`; `false` if it was dropped.
    #[inline(always)]
    fn count_admission(&mut self, port: u32, q: usize, admission: Admission, pkt: &Packet) -> bool {
        match admission {
            Admission::Dropped => {
                self.count_drop(port, q, pkt);
                false
            }
            Admission::Accepted { marked } => {
                if marked {
                    self.stats.ecn_marks += 1;
                    self.stats.marks_per_queue[q] += 1;
                }
                true
            }
        }
    }

    /// A port in FIFO mode (see `net::port`): admit, then straight onto the wire with its future start time.
    #[inline(always)]
    fn enqueue_fifo(&mut self, port: u32, pkt: Packet) {
        self.enqueue_fifo_at(port, pkt, self.now, true);
    }

    /// [`Sim::enqueue_fifo`] at time `now` (a packet handed over by the switches' side of a two-thread run
    /// is enqueued at the time it reached the switch, which may differ from this side's clock), handing it
    /// over if the port's queue is the other side's and `may_hand_over`.
    #[inline(always)]
    fn enqueue_fifo_at(&mut self, port: u32, pkt: Packet, now: Ps, may_hand_over: bool) {
        let p = self.net.port_mut(port);
        if may_hand_over && p.remote_queue {
            return self.hand_over_enqueue(port, pkt);
        }
        // (the port counts its marks; `add_fifo_marks` adds them to the run's totals at the end)
        match p.offer_fifo(now, pkt) {
            Ok(arrival) => self.launched(port, arrival),
            Err(Dropped) => {
                let q = p.fifo_queue();
                self.count_drop(port, q, &pkt)
            }
        }
    }

    /// Port `port` dropped `pkt` (of queue `q`): the run's counters (per queue, per tier) and the flow's
    /// dropped payload bytes.
    #[cold]
    fn count_drop(&mut self, port: u32, q: usize, pkt: &Packet) {
        let s = &mut self.stats;
        s.drops += 1;
        s.drops_per_queue[q] += 1;
        let t = self.net.port_tier[port as usize] as usize;
        s.drops_per_tier[t].1 += 1;
        if pkt.is_ack() {
            s.ack_drops_per_tier[t].1 += 1;
        } else if pkt.flags & flags::PROBE != 0 {
            s.probe_drops_per_tier[t].1 += 1;
        }
        if pkt.flags & (flags::ACK | flags::PROBE) == 0 {
            self.results.bytes_dropped[pkt.flow as usize] += (pkt.wire as u32 - self.params.header) as u64;
        }
    }

    /// pFabric and LAS: the port's discipline is a rank queue (see `net::rank_queue`); the port keeps its
    /// transmitter and wire. No ECN.
    fn enqueue_ranked(&mut self, port: u32, pkt: Packet) {
        let now = self.now;
        let hosts = self.net.hosts;
        let rq = &mut self.rank_queues[port as usize];
        let p = &mut self.net.ports[port as usize];
        let at_host = p.owner < hosts;
        if p.tx_event_pending && p.busy_until <= now {
            // The tie rule (see the module docs): serve the waiting packet first, then admit the arrival.
            let next = rq.pop().expect("a TxFree is pending with nothing queued");
            let arrival = p.transmit(now, next);
            self.launched(port, arrival);
        }
        let rq = &mut self.rank_queues[port as usize];
        let p = &mut self.net.ports[port as usize];
        // Same test as "queue empty and port idle", without reading the rank queue: a waiting packet always
        // has a TxFree pending, and with one pending the port is busy past `now` (the tie rule above saw to it).
        debug_assert!(p.tx_event_pending || rq.is_empty());
        if !p.tx_event_pending && p.can_send_now(now) {
            let arrival = p.transmit(now, pkt);
            self.launched(port, arrival);
            return;
        }
        let limit = if at_host { self.nic_buffer } else { self.switch_buffer };
        // (evicted packets wait in the scratch buffer until the port's state is settled, then are counted)
        let evicted = &mut self.evicted;
        let rejected = rq.push(pkt, limit, |victim| evicted.push(victim)) == RankAdmission::Rejected;
        if !at_host && rq.bytes() > self.stats.max_port_occupancy_bytes {
            self.stats.max_port_occupancy_bytes = rq.bytes();
        }
        if !p.tx_event_pending && !rq.is_empty() {
            p.tx_event_pending = true;
            let at = p.busy_until.max(now);
            self.events.push(at, Event::TxFree(port));
        }
        if rejected {
            self.count_drop(port, 0, &pkt);
        }
        if !self.evicted.is_empty() {
            self.count_evicted(port);
        }
    }

    /// Count the packets port `port`'s rank queue just evicted (`self.evicted`, emptied).
    #[cold]
    #[inline(never)]
    fn count_evicted(&mut self, port: u32) {
        for k in 0..self.evicted.len() {
            let victim = self.evicted[k];
            self.count_drop(port, 0, &victim);
        }
        self.evicted.clear();
    }

    fn on_tx_free(&mut self, port: u32) {
        let now = self.now;
        if !self.rank_queues.is_empty() {
            let p = &mut self.net.ports[port as usize];
            p.tx_event_pending = false;
            let rq = &mut self.rank_queues[port as usize];
            if p.busy_until > now {
                // stale: an arrival at this instant already served the queue (tie rule); wait for the new end
                if !rq.is_empty() {
                    p.tx_event_pending = true;
                    self.events.push(p.busy_until, Event::TxFree(port));
                }
                return;
            }
            let Some(pkt) = rq.pop() else { return };
            let arrival = p.transmit(now, pkt);
            self.launched(port, arrival);
            let rq = &mut self.rank_queues[port as usize];
            let p = &mut self.net.ports[port as usize];
            if !rq.is_empty() {
                p.tx_event_pending = true;
                let at = p.busy_until;
                self.events.push(at, Event::TxFree(port));
            }
            return;
        }
        let p = &mut self.net.ports[port as usize];
        p.tx_event_pending = false;
        if p.busy_until > now {
            // stale: an arrival at this instant already served the queue (tie rule); wait for the new end
            if p.bytes > 0 {
                p.tx_event_pending = true;
                self.events.push(p.busy_until, Event::TxFree(port));
            }
            return;
        }
        let Some(pkt) = p.pop() else { return };
        if let Some(i) = p.pool() {
            self.net.pools[i as usize].used -= pkt.wire as u64;
        }
        let p = &mut self.net.ports[port as usize];
        let arrival = p.transmit(now, pkt);
        self.launched(port, arrival);
        let p = &mut self.net.ports[port as usize];
        if p.bytes > 0 {
            p.tx_event_pending = true;
            let at = p.busy_until;
            self.events.push(at, Event::TxFree(port));
        }
    }

    #[inline(always)]
    fn on_arrive(&mut self, port: u32) {
        let p = self.net.port_mut(port);
        let pkt = p.take_arrival();
        let node = p.peer;
        if let Some(&(at, _)) = p.wire.front() {
            self.schedule_arrival(port, at);
        }
        self.stats.packet_hops += 1;
        if self.net.is_host(node) {
            self.deliver(node, pkt);
        } else {
            let out = if self.spray {
                let rng = &mut self.rng;
                self.net.next_port(node, pkt.dst, |n| crate::net::fast_range(rng.next_u64(), n))
            } else {
                self.net.ecmp_port(node, pkt.dst, flow_hash(pkt.flow, pkt.is_ack()))
            };
            self.enqueue(out, pkt);
        }
    }

    /// A packet reached host `host`.
    fn deliver(&mut self, host: u32, pkt: Packet) {
        debug_assert_eq!(pkt.dst, host);
        let f = pkt.flow as usize;
        let now = self.now;
        if pkt.flags & (flags::ACK | flags::PROBE) == 0 {
            self.results.bytes_delivered[f] += (pkt.wire as u32 - self.params.header) as u64;
        }
        let Some(c) = self.conns[f].as_deref_mut() else {
            // the flow is over: a late ACK, or a late copy of data the receiver already holds
            if pkt.flags & (flags::ACK | flags::PROBE) == 0 {
                self.results.duplicate_data[f] += 1;
            }
            return;
        };
        self.out.clear();
        if pkt.is_ack() {
            let o = c.on_ack(&self.params, now, &pkt, &mut self.out);
            let src = c.src;
            if o.sender_done {
                self.results.sender_done_ps[f] = now;
                self.close(pkt.flow);
            } else {
                self.after_transport(pkt.flow, src);
            }
        } else {
            let ooo_before = c.ooo_bytes;
            let o = c.on_data(&self.params, now, &pkt, &mut self.out);
            if c.ooo_bytes != ooo_before {
                self.ooo.change(host as usize, now, ooo_before, c.ooo_bytes);
            }
            if o.receiver_done {
                c.release_receiver();
                self.results.finish_ps[f] = now;
                self.stats.flows_finished += 1;
                self.release_children(f);
                if let Some(counter) = self.progress {
                    counter.store(self.stats.flows_finished, Ordering::Relaxed);
                }
            }
            self.after_transport(pkt.flow, host);
        }
    }

    /// Flow `f` finished: the flows waiting for it start now, or at their own start time if that is later.
    fn release_children(&mut self, f: usize) {
        if self.children.is_empty() {
            return;
        }
        for k in self.child_start[f]..self.child_start[f + 1] {
            let child = self.children[k as usize];
            let at = self.flows.start_ps[child as usize].max(self.now);
            self.events.push(at, Event::FlowStart(child));
        }
    }

    /// The sender has every byte acknowledged: copy its counters out and free its state; a reusable connection
    /// becomes idle in its pool.
    fn close(&mut self, flow: u32) {
        if let Some(c) = self.conns[flow as usize].take() {
            self.record_counters(&c);
            self.open_flows -= 1;
            if self.connections != Connections::PerFlow {
                let key = self.pool_key(flow as usize);
                if self.connections == Connections::Trace {
                    if let Some(open) = self.open_on.get_mut(&key) {
                        open.retain(|&f| f != flow);
                    }
                    if self.handed_over[flow as usize] {
                        return; // a later flow carries this connection on
                    }
                }
                let st = c.carry(&self.params, self.results.start_ps[flow as usize]);
                self.idle_conns.entry(key).or_default().push_back(st);
            }
        }
    }

    /// Trace connections: a flow starts on connection `key` while none of its instances is idle. A socket may
    /// write its next message as soon as the previous one is all sent (it need not wait for the last ACK), so
    /// the earliest open flow of the connection that has sent every segment hands the connection over: the new
    /// flow starts from its state, and it closes without returning the connection to the pool.
    fn take_over(&mut self, key: u64) -> Option<ConnState> {
        let open = self.open_on.get(&key)?;
        for &f in open {
            if self.handed_over[f as usize] {
                continue;
            }
            if let Some(c) = self.conns[f as usize].as_deref() {
                if c.snd_nxt == c.n_segs {
                    let st = c.carry(&self.params, self.results.start_ps[f as usize]);
                    self.handed_over[f as usize] = true;
                    return Some(st);
                }
            }
        }
        None
    }

    /// The connection pool flow `i` draws from: its host pair, or its trace connection id.
    fn pool_key(&self, i: usize) -> u64 {
        match self.connections {
            Connections::Trace => self.flows.conn[i] as u64,
            _ => self.flows.src[i] as u64 * self.net.hosts as u64 + self.flows.dst[i] as u64,
        }
    }

    fn record_counters(&mut self, c: &Conn) {
        let f = c.flow as usize;
        self.results.retransmits[f] = c.counters.retransmits;
        self.results.timeouts[f] = c.counters.timeouts;
        self.results.bytes_sent[f] = c.counters.bytes_sent;
        self.results.ecn_marked[f] = c.counters.ecn_marked;
        self.results.probes[f] = c.counters.probes;
        self.results.fast_recoveries[f] = c.counters.fast_recoveries;
        self.results.priority_losses[f] = c.counters.priority_losses;
        // (plus any copies that arrived after the flow closed, counted as they came)
        self.results.duplicate_data[f] += c.counters.duplicate_data;
        self.results.ooo_max_segments[f] = c.counters.ooo_max_segments;
    }

    fn finish(&mut self, wall_seconds: f64) {
        for f in 0..self.conns.len() {
            if let Some(c) = self.conns[f].take() {
                self.record_counters(&c);
            }
        }
        self.ooo.write(self.now, &mut self.stats);
        let s = &mut self.stats;
        s.sim_time_ps = self.now;
        s.wall_seconds = wall_seconds;
        s.htsim_equivalent_events = 2 * s.packet_hops;
        if wall_seconds > 0.0 {
            s.events_per_second = s.events as f64 / wall_seconds;
            s.htsim_equivalent_events_per_second = s.htsim_equivalent_events as f64 / wall_seconds;
        }
        add_fifo_marks(&self.net, s);
        let fifo_max = self.net.ports.iter().filter(|p| !self.net.is_host(p.owner)).map(|p| p.max_bytes).max();
        // (rank queues tracked their own maximum as they went)
        s.max_port_occupancy_bytes = s.max_port_occupancy_bytes.max(fifo_max.unwrap_or(0));
    }

    /// The flow alone in the idle fabric, sending at line rate from its first packet, on its ECMP path; with
    /// a handshake (on a new connection: `reused` is false), after its SYN and SYN-ACK (`ack_bytes` each)
    /// crossed the idle fabric.
    fn ideal_fct(&self, src: u32, dst: u32, size: u64, hash: u32, hash_rev: u32, reused: bool) -> Ps {
        let hops = |from: u32, to: u32, h: u32| -> Vec<(u64, Ps)> {
            self.net
                .ecmp_path(from, to, h)
                .iter()
                .map(|&p| {
                    let port = &self.net.ports[p as usize];
                    (port.rate_bps, port.delay_ps)
                })
                .collect()
        };
        let data = ideal_fct(&hops(src, dst, hash), size, self.params.mss, self.params.header);
        if !self.params.handshake || reused {
            return data;
        }
        let control = |path: Vec<(u64, Ps)>| -> Ps {
            path.iter().map(|&(rate, delay)| tx_time(self.params.ack_bytes, rate) + delay).sum()
        };
        control(hops(src, dst, hash)) + control(hops(dst, src, hash_rev)) + data
    }
}

/// The flows waiting for each flow, as adjacency lists (offsets, children in flow-id order); both empty when
/// no flow waits for another.
fn dependency_lists(flows: &FlowSet) -> (Vec<u32>, Vec<u32>) {
    if (0..flows.len()).all(|i| flows.parent(i).is_none()) {
        return (Vec::new(), Vec::new());
    }
    let n = flows.len();
    let mut child_start = vec![0u32; n + 1];
    for i in 0..n {
        if let Some(p) = flows.parent(i) {
            child_start[p as usize + 1] += 1;
        }
    }
    for f in 0..n {
        child_start[f + 1] += child_start[f];
    }
    let mut fill = child_start.clone();
    let mut children = vec![0u32; child_start[n] as usize];
    for i in 0..n {
        if let Some(p) = flows.parent(i) {
            children[fill[p as usize] as usize] = i as u32;
            fill[p as usize] += 1;
        }
    }
    (child_start, children)
}

/// Exact completion time of `size` bytes sent back to back from t = 0 over `hops` (rate, delay), store and
/// forward, in packets of `mss` payload plus `header` bytes (the last one shorter): the arrival of the last
/// byte at the receiver. For n identical packets of service s_i at hop i the departure of packet j from hop
/// i is sum_{k<=i} s_k + sum_{k<i} d_k + (j-1) max_{k<=i} s_k (a tandem of deterministic servers); the last,
/// shorter packet then follows its own recurrence D_i = max(D_{i-1} + d_{i-1}, D_i(previous packet)) + s'_i.
pub fn ideal_fct(hops: &[(u64, Ps)], size: u64, mss: u32, header: u32) -> Ps {
    let n = size.div_ceil(mss as u64);
    let last_wire = (size - (n - 1) * mss as u64) as u32 + header;
    let full_wire = mss + header;
    let mut sum_s = 0u64;
    let mut sum_d = 0u64;
    let mut max_s = 0u64;
    let mut d_last: Ps = 0; // departure of the last packet from the previous hop (+ that hop's delay)
    for (i, &(rate, delay)) in hops.iter().enumerate() {
        let s_full = tx_time(full_wire, rate);
        let s_last = tx_time(last_wire, rate);
        sum_s += s_full;
        max_s = max_s.max(s_full);
        // departure of packet n-1 (the last full one) from this hop, if there is one
        let prev_done = if n >= 2 { Some(sum_s + sum_d + (n - 2) * max_s) } else { None };
        let arrive = if i == 0 { 0 } else { d_last };
        let start = match prev_done {
            Some(t) => arrive.max(t),
            None => arrive,
        };
        let done = start + s_last;
        d_last = done + delay;
        sum_d += delay;
    }
    d_last
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ideal_single_packet_is_sum_of_serialization_and_delays() {
        let hops = [(10_000_000_000u64, 1_000u64), (40_000_000_000, 2_000)];
        // 100 B payload + 40 B header = 140 B: 112 ns at 10G, 28 ns at 40G
        assert_eq!(ideal_fct(&hops, 100, 1460, 40), 112_000 + 1_000 + 28_000 + 2_000);
    }

    #[test]
    fn ideal_train_is_paced_by_the_bottleneck() {
        let hops = [(10_000_000_000u64, 500u64), (1_000_000_000, 500), (10_000_000_000, 500)];
        // 10 full packets: 1.2 us at 10G, 12 us at 1G
        let t = ideal_fct(&hops, 14_600, 1460, 40);
        assert_eq!(t, 1_200_000 + 12_000_000 + 1_200_000 + 1_500 + 9 * 12_000_000);
    }

    #[test]
    fn ideal_short_last_packet_on_uniform_path() {
        let hops = [(10_000_000_000u64, 0u64), (10_000_000_000, 0)];
        // 2 packets, 1500 B then 140 B: the last leaves host at 1.2+0.112, the switch at max(that, 2.4)+0.112
        assert_eq!(ideal_fct(&hops, 1560, 1460, 40), 2_400_000 + 112_000);
    }
}
