//! Split runs: the hosts on one thread, the switches on another (or, asked for more, groups of switches on
//! one thread each), with results bit-identical to one thread's.
//!
//! **The split.** Every link between a host and a switch is cut: the hosts' thread simulates the hosts (flow
//! arrivals, transports and their timers, the NIC ports, and the packets arriving at hosts), the switches'
//! thread every switch port and the packets arriving at switches. A packet crosses a cut when it goes onto a
//! *remote* port's wire (a NIC port, or a switch port facing a host): the sending side hands it over, with its
//! arrival time, to the other side, which puts it on its own copy of that wire and schedules its arrival as
//! the one-thread engine would. No other state is shared: connections and their results live on the hosts'
//! side, switch queues, shared buffers and the spraying generator (only switches draw from it) on the
//! switches' side; counters are kept per side and added up at the end.
//!
//! **Synchronization** (conservative, in the manner of Chandy and Misra): a packet handed over at time t
//! arrives no earlier than t + the cut link's propagation delay (its *lookahead*, the PIAS fabric's 20.2 us
//! per host link). Each side publishes a *clock*, a lower bound on the time of every event it will still
//! process, and processes only events earlier than the other side's clock plus the lookahead: nothing the
//! other side sends later can arrive before that. Clocks, handed-over packets and an idle flag are exchanged
//! under one lock every [`BATCH`] events or when a side can go no further; a side that can go no further
//! republishes its clock (so two waiting sides always let one of them advance: with lookahead L > 0, both
//! cannot wait at once with up-to-date clocks) and then waits for the other's clock to move. The run is over
//! when both sides are idle (no event left before the time limit, no packet received) with no packet in
//! transit between them.
//!
//! **Why the results are identical.** Each side processes its own events in the one-thread order: events
//! are ordered by (time, event key) (`queue`), which does not depend on which thread pushed an event or
//! when, and an event at t is processed only once every packet that can arrive at or before t has been
//! received. The two sides' events touch disjoint state, so interleaving them differently changes nothing.
//! The tests check this bit for bit on every kind of port and scheme (`tests/parallel.rs`).
//!
//! **N threads.** Asked for N > 2 threads, the switches are split further: partition 0 is the hosts, as
//! above, and partitions 1 to N - 1 are groups of whole switches ([`plan`]: switches in the order of the lowest
//! host below them, so that a pod's or a leaf group's stay together, cut into runs of about equal port counts).
//! A link between two switch partitions is cut like a host link: its owner's side hands each packet over, with
//! its arrival time, to the far end's. Each partition processes only events earlier than the least, over the
//! partitions that send to it, of their clock plus the shortest delay of the links they cut into it (with every
//! cut link's delay above zero, the partition holding the earliest pending event can always advance); clocks
//! and packets go through one lock as above, and a blocked partition waits for any of its senders' clocks to
//! move. Identity holds as for two: the event order is (time, key) in every partition, and each piece of state
//! is one partition's: a switch's ports, rank queues, shared buffer and rate agents are its own; the flows,
//! their timers and results the hosts'. Two kinds of state are shared by all switches, and keep them on one
//! thread (two in all, whatever is asked, said in `RunStats::threads_note`): packet spraying's generator, from
//! which every switch draws its choices in event order (per-switch streams would give other choices, so other
//! results than one thread's), and PFC, whose frames between switches are not exchanged between partitions. A
//! fabric with fewer switches than N - 1 uses one thread per switch.
//!
//! What differs: `max_event_queue_len` (the larger of the two queues' maxima, which also varies from run to
//! run: how many handed-over packets wait in a queue depends on when the other side sent them) and the
//! wall-clock fields. A fabric whose host links have no propagation delay has no lookahead and runs on one
//! thread.

use super::family::Family;
use super::Sim;
use crate::net::packet::{Header, Packet};
use crate::net::Network;
use crate::units::{Ps, NEVER};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

/// Events a side processes between two exchanges (when it is not blocked earlier).
const BATCH: u64 = 256;

/// Which part of the fabric a `Sim` simulates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Side {
    /// Everything (a one-thread run).
    All,
    Hosts,
    Switches,
}

/// The hosts' partition (and side of [`lookahead`]); the switches' partitions follow it.
const HOSTS: usize = 0;
const SWITCHES: usize = 1;

/// A packet handed over a cut link: it goes onto the far side's copy of port `port`'s wire, arriving at `at`;
/// or, with [`ENQUEUE`] set in `port`, it joins the port's queue, which the far side runs, at time `at`.
#[derive(Debug, Clone, Copy)]
pub(super) struct Msg<H: Header> {
    pub port: u32,
    pub at: Ps,
    pub pkt: Packet<H>,
}

/// Flag bit of [`Msg::port`] (port ids are below 2^30: `queue` encodes them in 30 bits).
pub(super) const ENQUEUE: u32 = 1 << 31;

/// Flag bit of [`Msg::port`]: a PFC frame for the port (a host's NIC port), arriving at `at`; its queue is
/// `pkt.seq`, and `pkt.flags` is 1 for a PAUSE, 0 for a RESUME (see `engine::pfc`).
pub(super) const PFC_FRAME: u32 = 1 << 30;

/// The lookahead into each side (indexed HOSTS, SWITCHES): the shortest propagation delay of the cut links
/// that lead into it. `None` when the fabric cannot be split (no cut link one way, or one without delay).
pub(super) fn lookahead<H: Header>(net: &Network<H>) -> Option<[Ps; 2]> {
    let mut into = [NEVER; 2];
    for p in &net.ports {
        match (net.is_host(p.owner), net.is_host(p.peer)) {
            (true, false) => into[SWITCHES] = into[SWITCHES].min(p.delay_ps),
            (false, true) => into[HOSTS] = into[HOSTS].min(p.delay_ps),
            _ => {}
        }
    }
    into.iter().all(|&l| l > 0 && l != NEVER).then_some(into)
}

/// Full-size packets (1,500 B) that the host links carry together within the shortest lookahead: the work a
/// side can do before it must hear from the other, in units that do not depend on the scheme. `None` when the
/// fabric cannot be split.
pub fn window_packets<H: Header>(net: &Network<H>) -> Option<f64> {
    let shortest = lookahead(net)?.into_iter().min()? as f64 / crate::units::PS_PER_S as f64;
    let host_bps: f64 = net.ports.iter().filter(|p| net.is_host(p.owner)).map(|p| p.rate_bps as f64).sum();
    Some(host_bps * shortest / (8.0 * 1500.0))
}

/// Below this many packets per lookahead ([`window_packets`]) two threads are not worth it by default: the
/// sides would wait for each other every few events. Measured on 2 cores: the PIAS fabric (144 hosts at
/// 10 Gbps, 20.2 us host links: ~2,400 packets) runs 1.7x faster on two threads; the QCLIMB testbed (8 hosts
/// at 25 Gbps, 1 us: ~17 packets) 1.7x slower. The threshold is a judgement between the two.
pub const WORTHWHILE_WINDOW_PACKETS: f64 = 256.0;

/// Below this many switches on the mean path ([`mean_switches_crossed`]) two threads are not worth it by
/// default, whatever the lookahead: the switches' side has too little of the work. A packet's work on the
/// hosts' side is fixed (its NIC, the switch port facing its destination when that is a FIFO, which the hosts'
/// side runs whole, its arrival and its transport's handling); the switches' side has one arrival per switch
/// crossed and the queues between switches. Through one switch that side routes the packet and hands it back,
/// a small share of the work, while both sides pay for the exchange: a 32-host single switch with 20 us links
/// (~530 packets per lookahead) ran 0.54 s on two threads against 0.42 s on one. On the PIAS fabric (a mean
/// of 2.8 switches from a host: 3 between racks, 1 within) the switches' side did about 58% of the work, and
/// two threads ran 1.7x faster. A fabric with a second tier is above the line, one switch (or a dumbbell's
/// two, 1.5 on the mean from a sender) below it.
pub const WORTHWHILE_SWITCHES_CROSSED: f64 = 2.0;

/// The mean number of switches a packet crosses from host 0 to each other host on its ECMP path: how much of
/// a packet's work falls to the switches' side of a two-thread run. 0 with fewer than two hosts.
pub fn mean_switches_crossed<H: Header>(net: &Network<H>) -> f64 {
    if net.hosts < 2 {
        return 0.0;
    }
    // (a path is host 0's NIC port, then one port per switch crossed)
    let total: usize = (1..net.hosts).map(|dst| net.ecmp_path(0, dst, 0).len() - 1).sum();
    total as f64 / (net.hosts - 1) as f64
}

/// How a run is split over threads: the partition of every node (0: the hosts, 1 and up: groups of whole
/// switches), and the lookahead from each partition into each other.
pub(super) struct Plan {
    /// Partition of each node (indexed by node id).
    pub of_node: Vec<u16>,
    /// Partitions, one thread each (at least 2).
    pub parts: usize,
    /// `lookahead[from * parts + to]`: the shortest propagation delay of the links cut from partition `from`
    /// into `to` (a port owned in `from` whose far end is in `to`); `NEVER` when no link leads that way.
    lookahead: Vec<Ps>,
}

/// Why a split may not put switches in more than one partition (`None`: it may): state that several switches
/// share.
pub(super) type WholeSwitches = Option<&'static str>;

/// The split of a run asked to use `threads` threads (see the module docs, *N threads*), or `None` for one
/// thread; with a note saying why fewer threads than asked are used (empty when the run uses them all).
pub(super) fn plan<H: Header>(net: &Network<H>, threads: usize, whole: WholeSwitches) -> (Option<Plan>, String) {
    if threads < 2 {
        return (None, String::new());
    }
    if lookahead(net).is_none() {
        return (None, "one thread: a host link without propagation delay leaves no lookahead to split on".into());
    }
    let hosts = net.hosts as usize;
    let switches = net.nodes.len() - hosts;
    let mut note = String::new();
    let mut want = threads - 1;
    if want > 1 {
        if let Some(why) = whole {
            note = format!("2 threads of {threads}: {why}, so the switches stay on one thread");
            want = 1;
        } else if net.ports.iter().any(|p| !net.is_host(p.owner) && !net.is_host(p.peer) && p.delay_ps == 0) {
            note = format!("2 threads of {threads}: a link between switches has no propagation delay");
            want = 1;
        } else {
            let w = switch_window_packets(net);
            if w < WORTHWHILE_WINDOW_PACKETS {
                note = format!(
                    "2 threads of {threads}: the links between switches carry {w:.0} full-size packets within their \
                     shortest delay, too few (below {WORTHWHILE_WINDOW_PACKETS}) for groups of switches to work between exchanges"
                );
                want = 1;
            }
        }
    }
    let of_node = partition(net, want.min(switches));
    let parts = *of_node.iter().max().expect("a fabric has nodes") as usize + 1;
    if note.is_empty() && parts < threads {
        note = format!("{parts} threads of {threads}: the fabric has {switches} switches and one thread runs all the hosts");
    }
    let mut la = vec![NEVER; parts * parts];
    for p in &net.ports {
        let (from, to) = (of_node[p.owner as usize] as usize, of_node[p.peer as usize] as usize);
        if from != to {
            la[from * parts + to] = la[from * parts + to].min(p.delay_ps);
        }
    }
    debug_assert!(la.iter().all(|&l| l > 0));
    (Some(Plan { of_node, parts, lookahead: la }), note)
}

/// Full-size packets (1,500 B) that the links between switches carry together within the shortest of their
/// delays: the work groups of switches can do before they must hear from each other ([`window_packets`]'s
/// measure for a cut between switches; 0 without such links). The PIAS leaf-spine's 200 ns core links carry
/// about 48 (the switches stay together: on 3 threads it ran tens of times slower than on 2); a k = 8 fat
/// tree's 25 us links at 1 Gbps about 1,070.
pub fn switch_window_packets<H: Header>(net: &Network<H>) -> f64 {
    let between = |p: &&crate::net::port::Port<H>| !net.is_host(p.owner) && !net.is_host(p.peer);
    let Some(shortest) = net.ports.iter().filter(between).map(|p| p.delay_ps).min() else { return 0.0 };
    let bps: f64 = net.ports.iter().filter(between).map(|p| p.rate_bps as f64).sum();
    bps * (shortest as f64 / crate::units::PS_PER_S as f64) / (8.0 * 1500.0)
}

/// Assign every switch to one of (up to) `groups` partitions numbered from 1 (hosts: 0), balanced by port
/// count (a switch's work is its arrivals, one per packet over each of its links) and keeping switches that
/// serve the same hosts together: switches are taken in the order of the lowest host below them (a leaf or
/// edge switch: its first host; an aggregation switch: the first host of its pod; a spine or core: host 0),
/// ties by id, and cut into consecutive runs of about equal port counts. Partitions left empty are dropped.
fn partition<H: Header>(net: &Network<H>, groups: usize) -> Vec<u16> {
    let (n, hosts) = (net.nodes.len(), net.hosts as usize);
    // hop distance from the nearest host, and the lowest host reached going down
    let mut dist = vec![u32::MAX; n];
    let mut anchor = vec![u32::MAX; n];
    let mut frontier: Vec<usize> = (0..hosts).collect();
    for h in 0..hosts {
        dist[h] = 0;
        anchor[h] = h as u32;
    }
    while !frontier.is_empty() {
        let mut next = Vec::new();
        for &v in &frontier {
            for &q in &net.nodes[v].ports {
                let w = net.ports[q as usize].peer as usize;
                if dist[w] == u32::MAX {
                    dist[w] = dist[v] + 1;
                    next.push(w);
                }
                if dist[w] == dist[v] + 1 {
                    anchor[w] = anchor[w].min(anchor[v]);
                }
            }
        }
        frontier = next;
    }
    let mut order: Vec<usize> = (hosts..n).collect();
    order.sort_by_key(|&v| (anchor[v], v));
    let total: usize = order.iter().map(|&v| net.nodes[v].ports.len()).sum::<usize>().max(1);
    let mut of_node = vec![0u16; n];
    let (mut done, mut last, mut label) = (0usize, usize::MAX, 0u16);
    for v in order {
        let w = net.nodes[v].ports.len();
        // the group holding this switch's midpoint in the cumulative port count
        let g = ((2 * done + w) * groups / (2 * total)).min(groups.max(1) - 1);
        if g != last {
            (last, label) = (g, label + 1);
        }
        of_node[v] = label;
        done += w;
    }
    of_node
}

/// An atomic on a cache line of its own (the threads spin on each other's clock).
#[repr(align(128))]
struct Padded(AtomicU64);

struct State<H: Header> {
    clock: Vec<Ps>,
    /// Packets handed over to each partition, not yet taken.
    mail: Vec<Vec<Msg<H>>>,
    idle: Vec<bool>,
}

/// What the threads share.
struct Exchange<H: Header> {
    state: Mutex<State<H>>,
    /// Copies of `State::clock`, read by a waiting thread without taking the lock.
    clock: Vec<Padded>,
    /// The run is over (or a thread panicked).
    done: AtomicBool,
}

/// Sets `done` when its side's loop ends, normally or by a panic, so that the other side never waits forever.
struct Finish<'a, H: Header>(&'a Exchange<H>);

impl<H: Header> Drop for Finish<'_, H> {
    fn drop(&mut self) {
        self.0.done.store(true, Ordering::Release);
    }
}

/// Run the partitions `sims` (the hosts' first, prepared with [`cut`]) to the end, one thread each (the hosts'
/// on this one), and return the hosts' with the others' counters and drops merged in.
pub(super) fn run<'a, F: Family>(mut sims: Vec<Sim<'a, F>>, limit: Ps, plan: &Plan) -> Sim<'a, F> {
    let n = plan.parts;
    assert_eq!(sims.len(), n);
    let ex = Exchange {
        state: Mutex::new(State { clock: vec![0; n], mail: (0..n).map(|_| Vec::new()).collect(), idle: vec![false; n] }),
        clock: (0..n).map(|_| Padded(AtomicU64::new(0))).collect(),
        done: AtomicBool::new(false),
    };
    // the partitions each one hears from, with their lookahead into it
    let inputs: Vec<Vec<(usize, Ps)>> = (0..n)
        .map(|to| (0..n).filter(|&from| from != to && plan.lookahead[from * n + to] != NEVER).map(|from| (from, plan.lookahead[from * n + to])).collect())
        .collect();
    let rest = sims.split_off(1);
    let hosts = sims.pop().expect("the hosts' partition");
    // each partition's `Sim` lives in its own thread's stack frame (no false sharing of their hot counters)
    let (mut hosts, others) = std::thread::scope(|s| {
        let (ex, inputs, of_node) = (&ex, &inputs, &plan.of_node[..]);
        let handles: Vec<_> = rest
            .into_iter()
            .enumerate()
            .map(|(k, sim)| {
                s.spawn(move || {
                    let mut sim = sim;
                    sim.run_side(limit, ex, k + 1, &inputs[k + 1], of_node);
                    sim
                })
            })
            .collect();
        let mut h = hosts;
        h.schedule_first_flow();
        h.run_side(limit, ex, 0, &inputs[0], of_node);
        let others: Vec<_> = handles.into_iter().map(|t| t.join().unwrap_or_else(|e| std::panic::resume_unwind(e))).collect();
        (h, others)
    });
    for sw in &others {
        merge(&mut hosts, sw);
    }
    hosts
}

/// Mark the ports of the links cut by `plan` as seen from partition `me` (on its own copy of the fabric): its
/// ports whose far end is in another partition hand their packets over (`Port::set_remote`), except a FIFO
/// port of a switch facing a host, whose whole queue the hosts' partition runs (`Port::remote_queue`).
pub(super) fn cut<H: Header>(net: &mut Network<H>, plan: &Plan, me: usize) {
    let of = &plan.of_node;
    for p in &mut net.ports {
        let (from, to) = (of[p.owner as usize] as usize, of[p.peer as usize] as usize);
        if from != me || to == me {
            continue;
        }
        if to == HOSTS && p.is_fifo() {
            p.remote_queue = true;
        } else {
            p.set_remote();
        }
    }
}

/// Fold the switches' side into the hosts' side.
fn merge<F: Family>(h: &mut Sim<'_, F>, sw: &Sim<'_, F>) {
    // (the hosts' side's FIFO marks are added by `finish`, like a one-thread run's)
    super::add_fifo_marks(&sw.net, &mut h.stats);
    h.now = h.now.max(sw.now);
    let (a, b) = (&mut h.stats, &sw.stats);
    a.events += b.events;
    a.packet_hops += b.packet_hops;
    a.data_packets_sent += b.data_packets_sent;
    a.ack_packets_sent += b.ack_packets_sent;
    a.drops += b.drops;
    a.link_losses += b.link_losses;
    a.ecn_marks += b.ecn_marks;
    a.flows_finished += b.flows_finished;
    a.pfc_pause_frames += b.pfc_pause_frames;
    a.pfc_resume_frames += b.pfc_resume_frames;
    for (x, y) in a.drops_per_queue.iter_mut().zip(&b.drops_per_queue) {
        *x += y;
    }
    for (xs, ys) in [
        (&mut a.drops_per_tier, &b.drops_per_tier),
        (&mut a.probe_drops_per_tier, &b.probe_drops_per_tier),
        (&mut a.ack_drops_per_tier, &b.ack_drops_per_tier),
        (&mut a.pfc_paused_ps_per_tier, &b.pfc_paused_ps_per_tier),
    ] {
        for (x, y) in xs.iter_mut().zip(ys) {
            x.1 += y.1;
        }
    }
    for (x, y) in a.marks_per_queue.iter_mut().zip(&b.marks_per_queue) {
        *x += y;
    }
    let switch_ports = sw.net.ports.iter().filter(|p| !sw.net.is_host(p.owner)).map(|p| p.max_bytes).max();
    a.max_port_occupancy_bytes = a.max_port_occupancy_bytes.max(b.max_port_occupancy_bytes).max(switch_ports.unwrap_or(0));
    a.max_concurrent_flows = a.max_concurrent_flows.max(b.max_concurrent_flows);
    a.max_event_queue_len = a.max_event_queue_len.max(b.max_event_queue_len);
    a.hit_time_limit |= b.hit_time_limit;
    a.thread_wait_seconds.extend_from_slice(&b.thread_wait_seconds);
    for (x, y) in h.results.bytes_dropped.iter_mut().zip(&sw.results.bytes_dropped) {
        *x += y;
    }
    // the switches' side's ports still paused at the end of the run (the hosts' side's are counted by `finish`)
    if let Some(pfc) = &sw.pfc {
        super::pfc::add_open_pauses(pfc, &sw.net.port_tier, h.now, &mut h.stats.pfc_paused_ps_per_tier);
    }
}

impl<F: Family> Sim<'_, F> {
    /// One partition's loop (see the module docs): `me` is its index, `inputs` the partitions it hears from
    /// with their lookahead into it.
    fn run_side(&mut self, limit: Ps, ex: &Exchange<F::Hdr>, me: usize, inputs: &[(usize, Ps)], of_node: &[u16]) {
        let _finish = Finish(ex);
        let parts = ex.clock.len();
        let oversubscribed = std::thread::available_parallelism().map_or(true, |c| parts > c.get());
        let end = limit.saturating_add(1);
        let mut inbox: Vec<Msg<F::Hdr>> = Vec::new();
        // with more than two partitions, the packets handed over, sorted by the partition they go to
        let mut sorted: Vec<Vec<Msg<F::Hdr>>> = (0..parts).map(|_| Vec::new()).collect();
        // the clocks of `inputs` last read (every clock starts at 0)
        let mut seen: Vec<Ps> = vec![0; inputs.len()];
        let horizon_of = |seen: &[Ps]| inputs.iter().zip(seen).map(|(&(_, l), &c)| c.saturating_add(l)).min().unwrap_or(NEVER);
        let mut horizon = horizon_of(&seen);
        let mut published = 0;
        let mut waited = std::time::Duration::ZERO;
        loop {
            let n = self.process(horizon.min(end), BATCH);
            let next = match self.events.peek_time() {
                Some(t) if t <= limit => t,
                _ => NEVER,
            };
            // the remote lazy ports' departures due before then are handed over now (`net::port`, *Lazy
            // departures*); one still due counts as an event at its time
            let next = match self.depart_remote(next.min(horizon).min(end)) {
                t if t <= limit => next.min(t),
                _ => next,
            };
            // every later event here is at or after `next`, or comes from a packet another partition has yet
            // to send, which arrives at or after `horizon`
            let clock = next.min(horizon);
            if parts > 2 {
                for m in self.outbox.drain(..) {
                    // (a queue's packet and a PFC frame go to the hosts; a wire's to the partition of its far end)
                    let to = if m.port & (ENQUEUE | PFC_FRAME) != 0 {
                        HOSTS
                    } else {
                        of_node[self.net.ports[m.port as usize].peer as usize] as usize
                    };
                    sorted[to].push(m);
                }
            }
            {
                let mut st = ex.state.lock().unwrap_or_else(|e| e.into_inner());
                if parts > 2 {
                    for (to, out) in sorted.iter_mut().enumerate() {
                        if !out.is_empty() {
                            st.mail[to].append(out);
                        }
                    }
                } else if !self.outbox.is_empty() {
                    st.mail[1 - me].append(&mut self.outbox);
                }
                st.clock[me] = clock;
                ex.clock[me].0.store(clock, Ordering::Release);
                std::mem::swap(&mut st.mail[me], &mut inbox);
                st.idle[me] = next == NEVER && inbox.is_empty();
                if st.idle.iter().all(|&i| i) && st.mail.iter().all(|m| m.is_empty()) {
                    ex.done.store(true, Ordering::Release);
                }
                for (s, &(from, _)) in seen.iter_mut().zip(inputs) {
                    *s = st.clock[from];
                }
            }
            published = published.max(clock);
            if ex.done.load(Ordering::Acquire) {
                break;
            }
            horizon = horizon_of(&seen);
            let got_mail = !inbox.is_empty();
            for m in inbox.drain(..) {
                self.receive(m);
            }
            if got_mail || n > 0 {
                continue;
            }
            if next < horizon.min(end) || published < next.min(horizon) {
                continue; // the horizon moved, or a better clock is to be published
            }
            // blocked: wait for a partition it hears from to move
            let since = std::time::Instant::now();
            let mut spins = 0u32;
            let unchanged = || inputs.iter().zip(&seen).all(|(&(from, _), &c)| ex.clock[from].0.load(Ordering::Acquire) == c);
            while unchanged() && !ex.done.load(Ordering::Acquire) {
                if spins < 2000 {
                    std::hint::spin_loop();
                } else if spins < 2100 || !oversubscribed {
                    std::thread::yield_now();
                } else {
                    // more threads than cores: the partition waited for may be off the processor, and yielding
                    // alone leaves it little room
                    std::thread::sleep(std::time::Duration::from_micros(20));
                }
                spins = spins.saturating_add(1);
            }
            waited += since.elapsed();
        }
        self.stats.thread_wait_seconds = vec![waited.as_secs_f64()];
        self.drop_dead_timers();
        self.stats.hit_time_limit = !self.events.is_empty();
        self.stats.max_event_queue_len = self.events.max_len() as u64;
    }

    /// A packet handed over by the other side: into the queue it joined, or onto this side's copy of its wire.
    #[inline]
    fn receive(&mut self, m: Msg<F::Hdr>) {
        if m.port & PFC_FRAME != 0 {
            return self.pfc_receive(m.port & !PFC_FRAME, m.at, &m.pkt);
        }
        if m.port & ENQUEUE != 0 {
            // at the time it joined, which may be earlier or later than this side's clock (module docs)
            return self.enqueue_fifo_at(m.port & !ENQUEUE, m.pkt, m.at, false);
        }
        let p = self.net.port_mut(m.port);
        let was_empty = p.wire.is_empty();
        p.wire.push_back((m.at, m.pkt));
        if was_empty {
            self.schedule_arrival(m.port, m.at);
        }
    }
}
