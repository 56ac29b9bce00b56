//! Two-thread runs: the hosts on one thread, the switches on the other, with results bit-identical to one
//! thread's.
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

/// An atomic on a cache line of its own (the two sides spin on each other's clock).
#[repr(align(128))]
struct Padded(AtomicU64);

struct State<H: Header> {
    clock: [Ps; 2],
    /// Packets handed over to each side, not yet taken.
    mail: [Vec<Msg<H>>; 2],
    idle: [bool; 2],
}

/// What the two sides share.
struct Exchange<H: Header> {
    state: Mutex<State<H>>,
    /// Copies of `State::clock`, read by a waiting side without taking the lock.
    clock: [Padded; 2],
    /// The run is over (or a side panicked).
    done: AtomicBool,
}

/// Sets `done` when its side's loop ends, normally or by a panic, so that the other side never waits forever.
struct Finish<'a, H: Header>(&'a Exchange<H>);

impl<H: Header> Drop for Finish<'_, H> {
    fn drop(&mut self) {
        self.0.done.store(true, Ordering::Release);
    }
}

/// Run the two sides to the end on two threads (the switches' on a new one) and return the hosts' side with
/// the switches' counters and drops merged in.
pub(super) fn run<'a, F: Family>(hosts: Sim<'a, F>, switches: Sim<'a, F>, limit: Ps, lookahead: [Ps; 2]) -> Sim<'a, F> {
    let ex = Exchange {
        state: Mutex::new(State { clock: [0; 2], mail: [Vec::new(), Vec::new()], idle: [false; 2] }),
        clock: [Padded(AtomicU64::new(0)), Padded(AtomicU64::new(0))],
        done: AtomicBool::new(false),
    };
    // each side's `Sim` lives in its own thread's stack frame (no false sharing of their hot counters)
    let (mut hosts, switches) = std::thread::scope(|s| {
        let ex = &ex;
        let sw = s.spawn(move || {
            let mut sw = switches;
            sw.run_side(limit, ex, SWITCHES, lookahead[SWITCHES]);
            sw
        });
        let mut h = hosts;
        h.schedule_first_flow();
        h.run_side(limit, ex, HOSTS, lookahead[HOSTS]);
        (h, sw.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
    });
    merge(&mut hosts, &switches);
    hosts
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
    /// One side's loop (see the module docs).
    fn run_side(&mut self, limit: Ps, ex: &Exchange<F::Hdr>, me: usize, lookahead_in: Ps) {
        let _finish = Finish(ex);
        let other = 1 - me;
        let end = limit.saturating_add(1);
        let mut inbox: Vec<Msg<F::Hdr>> = Vec::new();
        // the other side's clock starts at 0
        let mut horizon = lookahead_in;
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
            // every later event here is at or after `next`, or comes from a packet the other side has yet to
            // send, which arrives at or after `horizon`
            let clock = next.min(horizon);
            let other_clock = {
                let mut st = ex.state.lock().unwrap_or_else(|e| e.into_inner());
                st.mail[other].append(&mut self.outbox);
                st.clock[me] = clock;
                ex.clock[me].0.store(clock, Ordering::Release);
                std::mem::swap(&mut st.mail[me], &mut inbox);
                st.idle[me] = next == NEVER && inbox.is_empty();
                if st.idle[me] && st.idle[other] && st.mail[other].is_empty() {
                    ex.done.store(true, Ordering::Release);
                }
                st.clock[other]
            };
            published = published.max(clock);
            if ex.done.load(Ordering::Acquire) {
                break;
            }
            horizon = other_clock.saturating_add(lookahead_in);
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
            // blocked: wait for the other side to move
            let since = std::time::Instant::now();
            let mut spins = 0u32;
            while ex.clock[other].0.load(Ordering::Acquire) == other_clock && !ex.done.load(Ordering::Acquire) {
                if spins < 2000 {
                    std::hint::spin_loop();
                    spins += 1;
                } else {
                    std::thread::yield_now();
                }
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
