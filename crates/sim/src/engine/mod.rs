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
//! event. The other ports (strict priority with several queues in use, rank queues) have lazy departures
//! where they can (`net::port`; not with PFC, a shared buffer, a lossy or zero-delay link, the monitored
//! port, or host NICs whose hosts read them: Homa's, and the rate family's with NIC agents): a departure is performed when the port is next
//! looked at ([`Sim::depart_due`]), so a packet-hop costs one event there too. Results are bit-identical to
//! the event-driven path ([`run_event_driven`], used by the tests, which has neither).
//!
//! **Tie rule.** When a packet arrives at a port at the very instant its transmitter becomes free, the
//! transmitter first starts the next waiting packet, then the arrival is admitted (its drop and ECN decisions
//! see the queue without the departing packet) and queued. Results therefore never depend on the order in
//! which the event queue holds the two same-time events. In the event-driven path `enqueue` performs the
//! due departure inline; the "transmitter free" event, still queued for that instant, finds the transmitter
//! busy when it fires and re-arms itself at the new end of transmission (a port has at most one such event
//! pending at any time).
//!
//! Where things are: this file is the per-packet core (`Sim`, the loop, ports, packets, counters); `run` sets a
//! run up and picks its family; `family` holds the trait and one file per family (the hosts' side of each
//! scheme); `pfc`, `parallel` and `queue` are PFC's frames, the two-thread split and the event queue. The
//! engine is the packet level only: the crate's `run` chooses between it and the flow level.

pub(crate) mod family;
pub mod parallel;
mod pfc;
pub mod queue;
mod run;

pub use run::two_threads_worthwhile;
pub(crate) use run::{run_event_driven, run_threads};

use crate::config::{Config, FamilyName, RankQueue as RankQueueKind, RoutingMode};
use crate::flows::{FlowResults, FlowSet};
use crate::net::packet::{flags, Packet};
use crate::net::port::{Admission, Dropped, HAND_OVER, LOSSY};
use crate::net::rank_queue::{RankAdmission, RankQueue};
use crate::net::{flow_hash, Network};
use crate::record::Monitor;
use crate::units::Ps;
use family::Family;
use queue::{Event, EventQueue, NEXT_IN_ORDER, SAMPLE};
use rand::RngCore;
use rand_xoshiro::Xoshiro256PlusPlus;
use crate::record::Progress;

use crate::record::RunStats;

/// A run's state (one side's, on two threads), for the family `F` (see [`family`]).
pub(crate) struct Sim<'a, F: Family> {
    net: Network<F::Hdr>,
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
    conns: Vec<Option<Box<F::Flow>>>,
    open_flows: u64,
    results: FlowResults,
    /// The TCP family's hosts (empty otherwise): per flow, the one-way delays of its data packets that reached
    /// the receiver host, summed (ps), and their number; `results.queue_delay_ps` and `data_arrivals` at the end
    /// (one entry per flow, so a packet's arrival touches one place).
    owd: Vec<(u64, u32)>,
    spray: bool,
    rng: Xoshiro256PlusPlus,
    /// pFabric / LAS / QJump's `"ranked"` queue: one rank queue per port (indexed by port id); empty for
    /// strict-priority FIFOs.
    rank_queues: Vec<RankQueue<F::Hdr>>,
    /// The rank queues rank by priority (QJump's `"ranked"` queue): their drops count at the dropped packet's
    /// priority in `drops_per_queue` (pFabric's and LAS's at 0).
    ranked_drops_by_prio: bool,
    /// Header bytes of a data packet (for the delivered and dropped payload counts).
    header: u32,
    /// Scratch buffer the transports write packets into (reused: no allocation per packet).
    out: Vec<Packet<F::Hdr>>,
    /// Scratch buffer for the packets a rank queue evicts to admit one arrival (reused; capacity for a full
    /// packet's worth of probes, so that it never grows in practice).
    evicted: Vec<Packet<F::Hdr>>,
    /// Two-thread runs: packets handed to the other thread since the last exchange.
    outbox: Vec<parallel::Msg<F::Hdr>>,
    stats: RunStats,
    progress: Option<&'a Progress>,
    /// `[link_loss]`: per port, its generator's state (SplitMix64) and the loss probability times 2^64, for
    /// the lossy ports (empty when no link loses packets; read only for packets of lossy ports).
    loss: Vec<(u64, u64)>,
    /// `run.monitor_host`: the switch port facing the host, and the series being recorded.
    monitor_port: u32,
    monitor: Option<Monitor>,
    /// PFC (`switch.pfc`; see `net::pfc`): its state, `None` when off.
    pfc: Option<Box<crate::net::pfc::Pfc>>,
    /// PFC: frames in flight to port u arrive as `Event::Timer(pfc_base + u)`, past every flow id and the family's
    /// own timer ids (`Family::extra_timer_ids`);
    /// `u32::MAX` without PFC (no timer id reaches it).
    pfc_base: u32,
    /// PFC on the switches' side of a two-thread run: frames for hosts' NIC ports go to the hosts' side.
    pfc_frames_cross: bool,
    /// PFC's "next_queue" mode (`switch.pfc_mode`): ports pick their next packet with [`Sim::pfc_pop`].
    pfc_next_queue: bool,
    /// The family's own state.
    fam: F::State,
    /// Some port is lazy (`net::port`, *Lazy departures*): [`Sim::on_arrive`] then checks the port it reads.
    lazy_ports: bool,
    /// Two-thread runs: this side's remote lazy ports ([`Sim::depart_remote`]).
    remote_lazy: Vec<u32>,
    /// [`Sim::drop_dead_timers`] runs when the far part of the event queue is longer than this.
    far_compact_at: usize,
}

/// Add the ECN marks of `net`'s FIFO-mode ports to `stats`: they count them only in their own counters, so that
/// the per-packet path updates one record, not the run's totals too. (Each mark is made by one port on one
/// side of a two-thread run: the sides' sums add up.)
fn add_fifo_marks<H: crate::net::packet::Header>(net: &Network<H>, stats: &mut RunStats) {
    for p in net.ports.iter().filter(|p| p.is_fifo()) {
        let q = p.fifo_queue();
        let marked = p.counters(q).marked;
        stats.ecn_marks += marked;
        stats.marks_per_queue[q] += marked;
    }
}

impl<'a, F: Family> Sim<'a, F> {
    /// A run's state; `side` is the part of the fabric it simulates (`All` on one thread); on a split run,
    /// `net`'s cut ports have been marked for its partition (`parallel::cut`).
    fn new(
        cfg: &Config,
        flows: &'a FlowSet,
        progress: Option<&'a Progress>,
        mut net: Network<F::Hdr>,
        rng: Xoshiro256PlusPlus,
        loss: Vec<(u64, u64)>,
        side: parallel::Side,
    ) -> Self {
        // (with PFC, frame events' ids follow the flows': see `pfc_base`)
        let pfc_base = flows.len() + F::extra_timer_ids(&net);
        let pfc_ids = if cfg.switch.pfc { pfc_base + net.ports.len() } else { 0 };
        EventQueue::check_ids(flows.len().max(net.ports.len()).max(pfc_ids));
        let hosts_here = side != parallel::Side::Switches;
        let mut order: Vec<u32> = Vec::new();
        let (mut child_start, mut children) = (Vec::new(), Vec::new());
        if hosts_here {
            order = (0..flows.len() as u32).filter(|&i| flows.parent(i as usize).is_none()).collect();
            order.sort_by_key(|&i| (flows.start_ps[i as usize], i));
            (child_start, children) = dependency_lists(flows);
        }
        // (on a split run the cut links' ports were marked by `parallel::cut` before)
        let lazy_ports = net.ports.iter().any(|p| p.is_lazy());
        let remote_lazy: Vec<u32> =
            (0..net.ports.len() as u32).filter(|&i| net.ports[i as usize].is_lazy() && net.ports[i as usize].is_remote()).collect();
        let queues = cfg.switch.queues as usize;
        let tiers: Vec<(String, u64)> = net.tier_names.iter().map(|&n| (n.to_string(), 0)).collect();
        let mut rank_queues: Vec<RankQueue<F::Hdr>> = match cfg.scheme.switch_rank_queue() {
            RankQueueKind::None => Vec::new(),
            RankQueueKind::Priority => (0..net.ports.len()).map(|_| RankQueue::by_priority()).collect(),
            RankQueueKind::Pfabric | RankQueueKind::Las => (0..net.ports.len()).map(|_| RankQueue::new()).collect(),
        };
        for (rq, p) in rank_queues.iter_mut().zip(&net.ports) {
            // (read by `enqueue_ranked` from the rank queue's own first line, not the port's cold one)
            let at_host = p.owner < net.hosts;
            let switch_buffer = cfg.switch.buffer_bytes;
            rq.set_buffer(if at_host { cfg.host.nic_buffer(switch_buffer) } else { switch_buffer }, at_host);
        }
        let ranked_drops_by_prio = cfg.scheme.switch_rank_queue() == RankQueueKind::Priority;
        let fam = F::state(cfg, flows, hosts_here, &net);
        // (`Config::validate` refuses PFC with rank queues and Homa, whose host timers use the ids past the flows')
        assert!(
            !cfg.switch.pfc || !(cfg.scheme.ranked_ports() || cfg.scheme.name.family() == FamilyName::Homa),
            "switch.pfc with scheme {}: a config that Config::validate refuses",
            cfg.scheme.name.as_str()
        );
        let pfc = cfg.switch.pfc.then(|| Box::new(crate::net::pfc::Pfc::new(cfg, &mut net)));
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
            // (the TCP family's hosts measure their data packets' queueing delay when asked: `run.queue_delay`)
            owd: if hosts_here
                && cfg.run.queue_delay
                && matches!(cfg.scheme.name.family(), FamilyName::Tcp | FamilyName::Hyline | FamilyName::Qjump)
            {
                vec![(0, 0); flows.len()]
            } else {
                Vec::new()
            },
            spray: cfg.routing.mode == RoutingMode::Spray,
            rng,
            rank_queues,
            ranked_drops_by_prio,
            header: F::header_bytes(&fam),
            out: Vec::with_capacity(256),
            evicted: Vec::with_capacity(64),
            outbox: Vec::new(),
            stats: RunStats {
                flows: flows.len() as u64,
                drops_per_queue: vec![0; queues],
                drops_per_tier: tiers.clone(),
                probe_drops_per_tier: tiers.clone(),
                ack_drops_per_tier: tiers.clone(),
                marks_per_queue: vec![0; queues],
                pfc_paused_ps_per_tier: tiers,
                ..RunStats::default()
            },
            progress,
            loss,
            monitor_port: 0,
            monitor: None,
            pfc_base: if pfc.is_some() { pfc_base as u32 } else { u32::MAX },
            pfc,
            pfc_frames_cross: side == parallel::Side::Switches,
            pfc_next_queue: cfg.switch.pfc && cfg.switch.pfc_mode == crate::config::PfcMode::NextQueue,
            fam,
            lazy_ports,
            remote_lazy,
            far_compact_at: 256,
        }
    }
}

impl<F: Family> Sim<'_, F> {
    /// Queue the first flow arrival (the flows' side of a run only).
    fn schedule_first_flow(&mut self) {
        if let Some(&first) = self.order.first() {
            self.events.push(self.flows.start_ps[first as usize], Event::FlowStart(NEXT_IN_ORDER));
        }
    }

    fn run_loop(&mut self, limit: Ps) {
        self.schedule_first_flow();
        self.process(limit.saturating_add(1), u64::MAX);
        // (a finished flow's timer left past the limit is no sign of a run cut short)
        self.drop_dead_timers();
        self.stats.hit_time_limit = !self.events.is_empty();
        self.stats.max_event_queue_len = self.events.max_len() as u64;
    }

    /// Process the events earlier than `bound` in order, at most `max` of them; return how many. The hot loop,
    /// for one thread and for each side of two.
    #[inline(never)]
    fn process(&mut self, bound: Ps, max: u64) -> u64 {
        let mut n = 0;
        while n < max {
            let Some((t, ev)) = self.events.pop_before(bound) else { break };
            let before = self.now;
            self.now = t;
            // Ask for the next arrival's port and packet now, so that their cache misses overlap this event's
            // work instead of stalling the next one (a hint: it changes nothing else).
            if let Some(next) = self.events.next_arrival_hint() {
                self.net.prefetch_arrival(next);
            }
            self.dispatch(ev, before);
            n += 1;
        }
        self.stats.events = self.stats.events.wrapping_add(n);
        n
    }

    /// Is `Event::Timer(id)` the entry of a flow that is over? Every family's flow timer then does nothing (its
    /// connection is gone), and such an entry is skipped without moving the clock: a flow's timer queued far
    /// ahead (a 1 s retransmission timeout) would otherwise set the run's end (`sim_time`) long after its last
    /// flow finished. (Timer ids past the flows', the families' own and PFC's, are never skipped.)
    #[inline(always)]
    fn dead_timer(&self, id: u32) -> bool {
        self.conns.get(id as usize).is_some_and(|c| c.is_none())
    }

    /// Take the finished flows' timer entries (see [`Sim::dead_timer`]) out of the far part of the event queue,
    /// where a 1 s retransmission timeout sits long after its flow is over (HyLine's second class). Called
    /// as flows start once the far part has doubled since the last time: amortised O(1) per entry.
    #[cold]
    #[inline(never)]
    pub(super) fn drop_dead_timers(&mut self) {
        let conns = &self.conns;
        self.events.retain_far(|_, ev| !matches!(ev, Event::Timer(id) if conns.get(id as usize).is_some_and(|c| c.is_none())));
        self.far_compact_at = 2 * self.events.far_len() + 256;
    }

    /// Handle `ev`, at `self.now`; `before`: the time of the previous event.
    #[inline(always)]
    fn dispatch(&mut self, ev: Event, before: Ps) {
        match ev {
            Event::Arrive(port) => self.on_arrive(port),
            Event::TxFree(port) => self.on_tx_free(port),
            Event::Timer(id) if id >= self.pfc_base => self.on_pfc_frame(id - self.pfc_base),
            // (the clock goes back to the last event that did something, and the entry is not counted as an
            // event: how many such entries are left to pop depends on when `drop_dead_timers` ran, which
            // depends on the far heap's length, different on one and two threads; see `dead_timer`)
            Event::Timer(id) if self.dead_timer(id) => {
                self.now = before;
                self.stats.events = self.stats.events.wrapping_sub(1);
            }
            Event::Timer(flow) => F::on_timer(self, flow),
            Event::FlowStart(NEXT_IN_ORDER) => {
                if self.events.far_len() > self.far_compact_at {
                    self.drop_dead_timers();
                }
                let id = self.order[self.next_start];
                self.next_start += 1;
                if let Some(&next) = self.order.get(self.next_start) {
                    self.events.push(self.flows.start_ps[next as usize], Event::FlowStart(NEXT_IN_ORDER));
                }
                F::start_flow(self, id);
            }
            Event::FlowStart(SAMPLE) => self.sample(),
            Event::FlowStart(id) => F::start_flow(self, id),
        }
    }

    /// A packet enters egress port `port` at `now`.
    #[inline(always)]
    fn enqueue(&mut self, port: u32, mut pkt: Packet<F::Hdr>) {
        if F::AGENTS {
            // An agent reads the port's occupancy as the event-driven port holds it at this arrival: the
            // departures before `now` done, the one due at `now` not yet (its "transmitter free" event would
            // come after every arrival at this instant; the tie rule below performs it after the agent). A lazy
            // port performs the former first.
            let p = &self.net.ports[port as usize];
            if p.tx_event_pending && p.busy_until < self.now && p.is_lazy() {
                self.depart_due(port, self.now - 1);
            }
            F::at_port(self, port, &mut pkt);
        }
        if !self.rank_queues.is_empty() {
            return self.enqueue_ranked(port, pkt);
        }
        let now = self.now;
        if self.net.port_mut(port).is_fifo() {
            return self.enqueue_fifo(port, pkt);
        }
        let p = &mut self.net.ports[port as usize];
        if p.tx_event_pending && p.busy_until <= now && p.is_lazy() {
            // the departures due by now, the one at this instant first (tie rule)
            self.depart_due(port, now);
        } else if p.tx_event_pending && p.busy_until <= now {
            // The tie rule: the transmitter became free at this very instant and its event has not fired
            // yet. It starts its next packet first; the arrival then sees the queue without it. (With PFC the
            // queues waiting may all be paused: then nothing starts.)
            let next = if self.pfc_next_queue { self.pfc_pop(port) } else { p.pop() };
            if let Some(next) = next {
                let p = &mut self.net.ports[port as usize];
                if let Some(i) = p.pool() {
                    self.net.pools[i as usize].used -= next.wire as u64;
                }
                let p = &mut self.net.ports[port as usize];
                let watch = p.pfc_watch;
                let arrival = p.transmit(now, next);
                self.launched(port, arrival, &next);
                if watch {
                    self.pfc_popped(port);
                }
            }
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
            self.launched(port, arrival, &pkt);
        } else {
            p.push(pkt);
            if let Some(i) = p.pool() {
                self.net.pools[i as usize].used += pkt.wire as u64;
            }
            if !p.tx_event_pending {
                p.tx_event_pending = true;
                if !p.is_lazy() {
                    // (later than now but for a port held by a PFC pause: idle, yet a packet waits)
                    let at = p.busy_until.max(now);
                    self.events.push(at, Event::TxFree(port));
                }
            }
            if p.pfc_watch {
                self.pfc_pushed(port);
            }
        }
    }

    /// A packet just went onto port `port`'s wire (`arrival`: its arrival time if the wire was empty): schedule
    /// the arrival, or, on a remote port of a two-thread run ([`HAND_OVER`]), hand the packet to the other
    /// thread.
    #[inline(always)]
    fn launched(&mut self, port: u32, arrival: Option<Ps>, pkt: &Packet<F::Hdr>) {
        if let Some(at) = arrival {
            if at >= LOSSY {
                self.unusual_launch(port, at, pkt);
            } else {
                self.schedule_arrival(port, at);
            }
        }
    }

    /// [`Sim::launched`] for a remote port's packet ([`HAND_OVER`]), or one on a lossy link ([`LOSSY`]): the
    /// link loses it with the configured probability, drawn from the port's own generator (so that the draws
    /// are the same whichever thread runs the port, and the run's other random choices are the same with and
    /// without loss); otherwise it goes onto the wire as usual.
    #[inline(never)]
    fn unusual_launch(&mut self, port: u32, at: Ps, pkt: &Packet<F::Hdr>) {
        if at == HAND_OVER {
            return self.hand_over(port);
        }
        let (state, threshold) = &mut self.loss[port as usize];
        *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        if crate::net::mix64(*state) < *threshold {
            self.stats.link_losses += 1;
            return self.count_drop(port, 0, pkt);
        }
        let p = &mut self.net.ports[port as usize];
        let arrival = p.busy_until + p.delay_ps;
        match p.put_on_wire(arrival, *pkt) {
            Some(HAND_OVER) => self.hand_over(port),
            Some(at) => self.schedule_arrival(port, at),
            None => {}
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
    fn hand_over_enqueue(&mut self, port: u32, pkt: Packet<F::Hdr>) {
        self.outbox.push(parallel::Msg { port: port | parallel::ENQUEUE, at: self.now, pkt });
    }

    /// Count what port `port`'s admission decided for a packet of queue `q`; `false` if it was dropped.
    #[inline(always)]
    fn count_admission(&mut self, port: u32, q: usize, admission: Admission, pkt: &Packet<F::Hdr>) -> bool {
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
    fn enqueue_fifo(&mut self, port: u32, pkt: Packet<F::Hdr>) {
        self.enqueue_fifo_at(port, pkt, self.now, true);
    }

    /// [`Sim::enqueue_fifo`] at time `now` (a packet handed over by the switches' side of a two-thread run
    /// is enqueued at the time it reached the switch, which may differ from this side's clock), handing it
    /// over if the port's queue is the other side's and `may_hand_over`.
    #[inline(always)]
    fn enqueue_fifo_at(&mut self, port: u32, pkt: Packet<F::Hdr>, now: Ps, may_hand_over: bool) {
        let p = self.net.port_mut(port);
        if may_hand_over && p.remote_queue {
            return self.hand_over_enqueue(port, pkt);
        }
        // (the port counts its marks; `add_fifo_marks` adds them to the run's totals at the end)
        match p.offer_fifo(now, pkt) {
            Ok(arrival) => self.launched(port, arrival, &pkt),
            Err(Dropped) => {
                let q = p.fifo_queue();
                self.count_drop(port, q, &pkt)
            }
        }
    }

    /// Port `port` dropped `pkt` (of queue `q`): the run's counters (per queue, per tier) and the flow's
    /// dropped payload bytes.
    #[cold]
    fn count_drop(&mut self, port: u32, q: usize, pkt: &Packet<F::Hdr>) {
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
            self.results.bytes_dropped[pkt.flow as usize] += (pkt.wire as u32 - self.header) as u64;
        }
    }




    /// pFabric, LAS, and QJump with `scheme.qjump_queue = "ranked"`: the port's discipline is a rank queue (see
    /// `net::rank_queue`); the port keeps its transmitter and wire. No ECN.
    fn enqueue_ranked(&mut self, port: u32, pkt: Packet<F::Hdr>) {
        let now = self.now;
        let rq = Self::rank_queue(&mut self.rank_queues, port);
        let p = self.net.port_mut(port);
        if p.tx_event_pending && p.busy_until <= now && p.is_lazy() {
            // the departures due by now, the one at this instant first (tie rule)
            self.depart_due(port, now);
        } else if p.tx_event_pending && p.busy_until <= now {
            // The tie rule (see the module docs): serve the waiting packet first, then admit the arrival.
            let next = rq.pop().expect("a TxFree is pending with nothing queued");
            let arrival = p.transmit(now, next);
            self.launched(port, arrival, &next);
        }
        let rq = Self::rank_queue(&mut self.rank_queues, port);
        let p = self.net.port_mut(port);
        // Same test as "queue empty and port idle", without reading the rank queue: a waiting packet always
        // has a TxFree pending, and with one pending the port is busy past `now` (the tie rule above saw to it).
        debug_assert!(p.tx_event_pending || rq.is_empty());
        if !p.tx_event_pending && p.can_send_now(now) {
            let arrival = p.transmit(now, pkt);
            self.launched(port, arrival, &pkt);
            return;
        }
        let (limit, at_host) = (rq.limit(), rq.at_host());
        // (evicted packets wait in the scratch buffer until the port's state is settled, then are counted)
        let evicted = &mut self.evicted;
        let rejected = rq.push(pkt, limit, |victim| evicted.push(victim)) == RankAdmission::Rejected;
        if !at_host && rq.bytes() > self.stats.max_port_occupancy_bytes {
            self.stats.max_port_occupancy_bytes = rq.bytes();
        }
        if !p.tx_event_pending && !rq.is_empty() {
            p.tx_event_pending = true;
            if !p.is_lazy() {
                let at = p.busy_until.max(now);
                self.events.push(at, Event::TxFree(port));
            }
        }
        if rejected {
            let q = self.ranked_drop_queue(&pkt);
            self.count_drop(port, q, &pkt);
        }
        if !self.evicted.is_empty() {
            self.count_evicted(port);
        }
    }

    /// Port `port`'s rank queue on the per-packet path, without the bounds check (an associated function, so
    /// that the port can be borrowed beside it). There is one rank queue per port of the network (`Sim::new`),
    /// and `port` came from the network's own tables, as for `Network::port_mut`.
    #[inline(always)]
    fn rank_queue(rank_queues: &mut [RankQueue<F::Hdr>], port: u32) -> &mut RankQueue<F::Hdr> {
        assert!(cfg!(not(debug_assertions)) || (port as usize) < rank_queues.len(), "no rank queue {port}");
        // SAFETY: see above; the assertion checks it where debug assertions are on (`cargo test`'s profile).
        unsafe { rank_queues.get_unchecked_mut(port as usize) }
    }

    /// The `drops_per_queue` index a rank queue's drop of `pkt` counts at: 0, or its priority (capped at the
    /// last queue) when the queues rank by priority.
    #[inline]
    fn ranked_drop_queue(&self, pkt: &Packet<F::Hdr>) -> usize {
        if self.ranked_drops_by_prio {
            (pkt.prio as usize).min(self.stats.drops_per_queue.len() - 1)
        } else {
            0
        }
    }

    /// Count the packets port `port`'s rank queue just evicted (`self.evicted`, emptied).
    #[cold]
    #[inline(never)]
    fn count_evicted(&mut self, port: u32) {
        for k in 0..self.evicted.len() {
            let victim = self.evicted[k];
            let q = self.ranked_drop_queue(&victim);
            self.count_drop(port, q, &victim);
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
            self.launched(port, arrival, &pkt);
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
        let next = if self.pfc_next_queue { self.pfc_pop(port) } else { p.pop() };
        let Some(pkt) = next else { return };
        let p = &mut self.net.ports[port as usize];
        if let Some(i) = p.pool() {
            self.net.pools[i as usize].used -= pkt.wire as u64;
        }
        let p = &mut self.net.ports[port as usize];
        let arrival = p.transmit(now, pkt);
        self.launched(port, arrival, &pkt);
        let p = &mut self.net.ports[port as usize];
        if p.bytes > 0 {
            p.tx_event_pending = true;
            let at = p.busy_until;
            self.events.push(at, Event::TxFree(port));
        }
        if p.pfc_watch {
            self.pfc_popped(port);
        }
    }

    /// Lazy port `port` (`net::port`, *Lazy departures*), with packets waiting and a departure due at
    /// `busy_until <= upto`: perform its departures due at or before `upto`, in order, each at the instant
    /// the transmitter became free, as its "transmitter free" events would have.
    #[inline(never)]
    fn depart_due(&mut self, port: u32, upto: Ps) {
        loop {
            let p = self.net.port_mut(port);
            debug_assert!(p.is_lazy() && p.tx_event_pending && p.busy_until <= upto);
            let t = p.busy_until;
            let ranked = !self.rank_queues.is_empty();
            let next = if ranked { Self::rank_queue(&mut self.rank_queues, port).pop() } else { p.pop() };
            let next = next.expect("a lazy port's departure is due with nothing waiting");
            let arrival = p.transmit(t, next);
            self.launched(port, arrival, &next);
            let p = self.net.port_mut(port);
            let more = if ranked { !Self::rank_queue(&mut self.rank_queues, port).is_empty() } else { p.nonempty() != 0 };
            p.tx_event_pending = more;
            if !more || p.busy_until > upto {
                return;
            }
        }
    }

    /// Two-thread runs: perform the departures of this side's remote lazy ports that are due before `before`
    /// (every event earlier than `before` has been processed, and none will come: see `parallel`), so that
    /// their packets are handed over before the side's clock passes them. Returns the earliest departure
    /// still due, `NEVER` if none.
    pub(super) fn depart_remote(&mut self, before: Ps) -> Ps {
        let mut earliest = crate::units::NEVER;
        for k in 0..self.remote_lazy.len() {
            let port = self.remote_lazy[k];
            let p = &self.net.ports[port as usize];
            if !p.tx_event_pending {
                continue;
            }
            if p.busy_until < before {
                self.depart_due(port, before - 1);
            }
            let p = &self.net.ports[port as usize];
            if p.tx_event_pending {
                earliest = earliest.min(p.busy_until);
            }
        }
        earliest
    }

    /// The packet that just reached the far end of port `port` was the last on its wire. On a lazy port the
    /// departure due when it finished (and any before) is performed now, and the arrival of the packet it
    /// sends scheduled. (Only then can a departure be due by `now - delay`: one performed after that packet
    /// would be on the wire behind it.)
    #[inline(never)]
    fn wire_emptied(&mut self, port: u32) {
        let p = &self.net.ports[port as usize];
        if p.tx_event_pending && p.is_lazy() && p.busy_until + p.delay_ps <= self.now {
            let upto = self.now - p.delay_ps;
            // (the wire is empty: `launched` schedules the arrival of the first packet sent)
            self.depart_due(port, upto);
        }
    }

    #[inline(always)]
    fn on_arrive(&mut self, port: u32) {
        let p = self.net.port_mut(port);
        let pkt = p.take_arrival();
        let node = p.peer;
        if let Some(&(at, _)) = p.wire.front() {
            self.schedule_arrival(port, at);
        } else if self.lazy_ports {
            self.wire_emptied(port);
        }
        self.stats.packet_hops += 1;
        if self.net.is_host(node) {
            F::deliver(self, node, pkt);
        } else if F::ROUTED {
            self.forward_routed(node, pkt);
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

    /// A switch forwards `pkt` in a family that routes some packets itself (`Family::ROUTED`); ECMP for the rest.
    /// (Apart from the other families' path, so that theirs stays as it was.)
    fn forward_routed(&mut self, node: u32, mut pkt: Packet<F::Hdr>) {
        let out = match F::route(self, node, &mut pkt) {
            Some(port) => port,
            None => self.net.ecmp_port(node, pkt.dst, flow_hash(pkt.flow, pkt.is_ack())),
        };
        self.enqueue(out, pkt);
    }

    /// A monitor sample (`run.monitor_host`); the next one is queued while flows are open or yet to start.
    #[cold]
    #[inline(never)]
    fn sample(&mut self) {
        let now = self.now;
        let queued = self.net.ports[self.monitor_port as usize].bytes;
        let Some(m) = self.monitor.as_mut() else { return };
        m.time_ps.push(now);
        m.queue_bytes.push(queued);
        let mut total = 0;
        for (k, &f) in m.flows.iter().enumerate() {
            let b = self.results.bytes_delivered[f as usize];
            m.flow_delivered_bytes[k].push(b);
            total += b;
        }
        m.delivered_bytes.push(total);
        let more = self.open_flows > 0 || self.next_start < self.order.len();
        if more {
            self.events.push(now + m.interval_ps, Event::FlowStart(SAMPLE));
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

    fn finish(&mut self, wall_seconds: f64) {
        F::finish(self);
        self.pfc_close_pauses();
        self.stats.monitor = self.monitor.take();
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
