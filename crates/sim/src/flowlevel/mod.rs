//! The flow level (`run.level = "flow"`): no packets. Each open flow has a rate from the scheme's allocation rule;
//! the simulation jumps from one event to the next (a flow starts, a flow sends its last bit, a flow's slow-start
//! cap doubles), exact in between, and updates the rates at each. The same flows, topology, routing and results
//! as the packet level, at a small fraction of the cost.
//!
//! What an event costs: each flow's progress is applied lazily (at its own events, and when its rate changes),
//! its next event sits in one heap, and under max-min the progressive filling of all the flows is kept from one
//! event to the next and resumed where the event moves it (`Fluid::update_max_min`: only the resources whose
//! share may change are filled again, the rest of the filling replayed; the same allocation as a global
//! recomputation, tested on random instances). Strict priority by queue (pias, qclimb, rax) is updated the same way queue by queue
//! (`Fluid::update_mlfq`: a queue's capacity is what the more urgent ones leave, and changes only where their
//! load moved). SRPT and criticality order too (`Fluid::update_ordered`: each resource keeps its users in the
//! order, each flow what the flows ahead of it leave it, and an event regrants, in the order, only the flows
//! behind a change whose grant it moves; a flow that catches up with a slower one ahead of it on a resource
//! swaps places with it at that time, an event of its own). D3 too (`Fluid::update_d3`: its grants are that
//! greedy pass in the order of arrival, which never moves; its fair shares are the max-min update on what the
//! grants leave, refilled where a grant moved). Homa too (`Fluid::update_prio`: a flow's rate depends
//! only on the flows at or ahead of it in their order on its resources, so an event recomputes the flows at or
//! behind the ones it touches, by the global pass's rule, on what the others leave; an order that changes
//! between events is recomputed at the next event, as the global pass, which re-sorted every flow at every event,
//! did). LAS the same way (`prio`, tested against the global pass; a flow's pending recomputations are one entry,
//! the earliest, which made it faster than the pass on the 144-host leaf-spine too: see where the model's state
//! is made).
//! A finished flow's slot is reused, so memory follows the flows open at once.
//!
//! What a flow uses: the links (egress ports) of its path, each with the port's rate. Under ECMP routing, the path
//! its hash picks at each hop, as a packet of the flow would take. Under packet spraying, a flow's packets spread
//! over every equal-cost next hop, so a hop's resource is the set of ports the flow may use there (all of them
//! pooled: capacity the sum of their rates; flows from other sources that may use any of those ports share it).
//! That pooling is exact when the spread is even, an approximation otherwise. A resource that its sources cannot
//! fill, or its destinations cannot drain (a full-bisection fabric's pooled core under spraying), can never bind:
//! it is left out of the paths (`Implied`), which changes no rate and halves the reference's paths.
//!
//! Allocation rules (each an approximation of the packet level, stated so):
//! - **max-min fairness** for tcp, dctcp, l2dct and rcp (window-based and RCP's fair rate): progressive filling;
//!   each flow's own cap (see slow start) is a resource of its own.
//! - **SRPT** for pfabric: flows in order of remaining bytes (then id) each take what their path has left, so a
//!   link serves its most urgent flow at full rate (pFabric's ideal, strict priority by remaining size). The
//!   order is the one at each instant: a flow that comes to have fewer bytes left than a slower flow ahead of it
//!   on a shared resource passes it then (an event), not at the next event of another kind.
//! - **Criticality order** for pdq, pdq-basic, pdq-es and pdq-es-et: earliest deadline first (flows without one
//!   after), then fewest bytes left (`scheme.pdq_criticality = "size"`), or the size-unaware ranks of the PDQ
//!   paper's section 5.6: a random draw per flow (`"random"`, seeded by the run's seed and the flow's id, not the
//!   packet level's draws) or the bytes sent, counted in steps of `pdq_criticality_update_bytes` (`"bytes_sent"`,
//!   fewer is more critical: one event per step); ties by flow id. Each flow takes what its path has left, so a
//!   link serves its most critical flow at full rate. As under SRPT, a flow that comes to have fewer bytes left
//!   than a slower one ahead of it with the same deadline passes it then (an event). Set-up: PDQ's request
//!   round trip.
//!   - Hand-over (Early Start off, pdq-basic): a paused flow granted a rate (its path freed by a flow ahead that
//!     finished or fell behind) holds it at once but sends only one base RTT later, the round trip of the probe
//!     that learns of it; the link idles meanwhile (the packet level's gap between two flows is about that: the
//!     next probe comes within an RTT, and its data one RTT after it). A new flow's grant comes with its set-up.
//!   - Early Start (pdq-es, pdq-es-et, pdq): a flow ahead within K RTTs of its end lets the next one start, whose
//!     data then arrives (K - 1) RTTs before the last bit of the one ahead. Without queues the bits of that
//!     overlap wait behind it, so the link stays busy and the hand-over costs nothing: the gap is
//!     max(0, 1 - K) base RTTs (none at the default K = 2). Not modelled: the overlap's queue, which the packet
//!     level's rate controller drains by lowering its capacity for a few RTTs.
//!   - Early Termination (pdq-es-et, pdq): a flow with a deadline gives up (`terminated`, never finished) once
//!     its deadline has passed, or its wire bits left at line rate would end after it, or, while paused
//!     (sending nothing), they would one base RTT from now (the packet level's conditions (1) to (3)); with a
//!     size-unaware criticality only the first (the sender is not told its size). Also at its start. The time it
//!     gives up at its current rate is one of its events (`Open::give_up_at`).
//!   - Not modelled: Suppressed Probing (it spaces out the probes of the flows far back in line, which the flow
//!     level does not send), dampening, the flow list's bound.
//! - **D3** for d3: a flow with a deadline desires its wire bits left over the time to its deadline (0 without
//!   one). At each event, flows in order of arrival (their data's start) are granted their desired rate where
//!   every resource of their path still has it, else what the path has left (D3's greedy first come first
//!   served, not earliest deadline first); what the grants leave is then shared max-min among all flows, each
//!   capped at its line rate less its grant (the fluid reading of D3's fair share of the spare capacity,
//!   max(0, C - demand) / flows, with the shares a flow cannot use handed on). A flow asks again once per base
//!   RTT from its data's start (D3's request per RTT, the fixed step of this model: the desired rate is held
//!   between requests, and an event of its own); the first request is its SYN's, from its start. Quenching: a
//!   flow with a deadline gives up once its desired rate would exceed its line rate (its bits left at line rate
//!   end after the deadline), or at its start if so already, as the packet level's senders do. Not modelled: the
//!   rate controller's queue term and the soft-state bounds of the switches' counters.
//! - **MLFQ** for pias: a flow's queue is the number of demotion thresholds its bytes sent have passed (bytes on
//!   the wire: a segment's headers ride with its payload; one event per threshold passed); queues in strict
//!   priority, each max-min on what the more urgent ones left.
//! - **Tags** for qclimb, rax and rax-plus: the same strict priority, the queue being the packet level's tag
//!   of the payload bytes sent (`policy`: QCLIMB's Algorithm 1 from the flow's bounds, estimate and slack;
//!   RAX's queue of its remaining time). A tag is a step function of the bytes sent, re-evaluated at the next
//!   byte count where it can change (an event): QCLIMB's thresholds passed, its remaining lower bound falling to
//!   a threshold, L, L + S and U; RAX's remaining time falling below a threshold. RAX's remaining time is exact
//!   here only because a flow's bytes are all written at its start (no generation rate, which the flow level
//!   refuses; a bounded send buffer is refused for RAX): RAX+'s is the unsent bytes at line rate, RAX's
//!   estimate the written bytes (the size) plus the unsent ones at line rate (its copy rate stays at the line
//!   rate it starts from, as no write is sampled). Not modelled: the reordering a rise in priority causes at the
//!   packet level (segments sent after it overtake those queued before; an isolated 1 MB flow takes 8% longer
//!   there under RAX, 25% under RAX+, with a timeout), QCLIMB's own out-of-order and loss handling.
//! - **LAS** for las (least attained service, the fluid limit of strict priority by bytes sent): flows in order
//!   of wire bits sent, those with equal service (within a bit) as one group, each group max-min on what the
//!   groups before it left; a flow served faster than the next one in that order on one of its resources
//!   catches up with it at a time that is one of its events, and from then they are one group. Only
//!   neighbours in that order on a shared resource can meet first, so those are the events.
//!
//! - **Homa** for homa (`homa`, updated incrementally by `prio`): a message's first RTTbytes (the
//!   packet level's, `transport::homa::fabric_rtt_bytes` in whole segments) are its unscheduled phase, blind and
//!   ahead of every scheduled byte (Homa's unscheduled priorities are above its scheduled ones); a message larger
//!   than RTTbytes then sends only while its receiver grants it: each receiver grants its `homa_overcommit`
//!   messages larger than RTTbytes with the fewest bits left, one per sender (the packet level's rule; its default
//!   the number of scheduled levels). In order of (phase, bits left) each message takes what its path has left:
//!   a sender's link goes to its shortest message (sender SRPT), a receiver's to its most urgent granted one. The
//!   phase's end is an event (`Tags::Homa`). Assumptions: the grants keep a granted message sending (RTTbytes
//!   covers the round trip; a message that becomes granted sends at once, where the packet level's grant takes
//!   half a round trip to reach its sender); the order is taken at each event (a message passing another between
//!   events does so at the next event); the unscheduled levels by message size are the order by bits left
//!   within the phase; no queue (Homa keeps little), no loss, no RESEND.
//! - **HyLine** for hyline (`hyline`): the packet level's manager itself (`control::hyline`), fed the same RTS
//!   and FIN messages at the same times; first-class flows (up to `hyline_threshold_bytes`) in strict priority
//!   over second-class ones, max-min within a class (MLFQ with two fixed classes). A second-class flow opens at its
//!   first CTS on the manager's path (with its class's windows), stops at an STS (its cap 0), restarts from its
//!   initial window at a later CTS on the path it names (moved there: `Fluid::reroute`), and its FIN leaves
//!   when its last bit does. The manager learns each sender's bits not yet sent (the packet level: not yet
//!   acknowledged, a round trip behind). ECMP only, as HyLine itself (its config refuses spraying).
//!   Not modelled: PFC, the second class's losses and long RTO floor.
//! - **QJump** for qjump: strict priority by the packet level's level (by the size the host knows), max-min
//!   within a level; a flow larger than its level's bucket is capped at the bucket per interval (the token
//!   bucket's long-run rate: the first bucket's burst is not modelled, so a capped flow may take up to one
//!   interval longer than the packet level's fluid ideal). The default buckets hold each level's largest flow
//!   and the last level's rate is the line rate, so the cap binds only with other buckets. Not modelled: the
//!   limiter's drops of retransmissions, TCP's losses at ports that the lower levels fill.
//!
//! What the packet level has and an isolated flow needs to take the same time at both levels:
//! - **Bytes on the wire**: payload plus `transport.header_bytes` per `mss_bytes` segment.
//! - **Pipeline latency**: a flow's last bit leaves its sender when its wire bits are sent at its rate; it arrives
//!   after the store-and-forward pipeline of its path: the isolated flow's ideal FCT (`net::ideal::ideal_fct`) minus
//!   its wire bits at the path's bottleneck rate, added at the end.
//! - **Set-up**: one round trip of header-only packets before the data with `transport.handshake` (the TCP
//!   family), and for RCP, D3 and PDQ (the rate request their SYN carries). The base RTT of slow start is a full
//!   segment's way to the destination and an ACK's way back.
//! - **Slow start** (the window-based schemes: the TCP family, pfabric, las, pias, qclimb, rax, hyline, qjump): in each base
//!   RTT from the data's start a flow may send a window's worth (at the rate it is allocated), then waits for the
//!   next round; the window starts at `init_cwnd_packets` segments and doubles every round until it holds a base
//!   RTT's worth at line rate, from when it no longer binds. Two events per round (the window used up, the next
//!   round). With `max_cwnd_packets` the window stops growing at that many segments (the packet level's cap on
//!   cwnd, its initial window included); a cap below a base RTT's worth at line rate binds for the flow's life:
//!   a window's worth at the rate allocated, then the round's wait, every round (before, the flow level capped
//!   the rate at the cap per base RTT instead, which slowed a flow that fits in one window: HyLine's first class,
//!   capped at 50 segments, took 11% longer on average at 0.3 than the packet level's small flows).
//!
//! - **Standing queues** (`run.flow_queueing = "standing"`, the default; tcp, dctcp, l2dct): a slow-start round
//!   lasts the base RTT plus the standing queues of the congested ports on the flow's data path and its ACKs'
//!   path (`Standing`; see `config::FlowQueueing`).
//!
//! - **Retransmission timer** (`run.flow_timeouts`: by default dctcp and l2dct, tcp too with `"all"`): each flow keeps the packet
//!   level's RTO estimator fed with its modelled round trips; a slow-start round whose round trip exceeds the RTO
//!   times out (ssthresh, the spurious retransmission of the round's window), as `rto` describes.
//!
//! Not modelled: other queueing delay, losses, timeouts other than those, ECN dynamics (DCTCP is max-min here).
//!
//! **The windowed model** (`run.flow_model = "window"`, tcp, dctcp and pias; `window`) replaces all of the above
//! for those schemes: the packet level's windows sending into fluid queues (strict-priority levels for pias),
//! stepped in time.
//!
//! Where each part lives: this module has the schemes' models (`model_of`, read from each scheme's row in `config::scheme`) and the run loop (`run`:
//! arrivals, set-ups, each flow's own events, the update, the reschedules); `open` a flow; `resources` what flows
//! share and what cannot bind; `timers` the flows' next events; `tags` QCLIMB's and RAX's tags; `fluid` the state
//! every allocation rule updates; and one file per rule: `maxmin`, `mlfq`, `ordered` (SRPT, criticality order),
//! `d3`, `las` (with the global pass the incremental updates are tested against), `homa` (its pass), `prio` (LAS's
//! and Homa's incremental update), `hyline` (the manager's messages and what its signals do) and `release` (the
//! per-flow results: kept whole, or handed over in batches of flow-id order as flows finish, `run_batches`).

mod d3;
mod fluid;
mod homa;
mod hyline;
mod las;
mod maxmin;
mod mlfq;
mod open;
mod ordered;
mod prio;
mod release;
mod resources;
mod rto;
mod tags;
mod timers;
mod window;

use crate::config::{
    BufferMode, Config, Criticality, EcnMode, FlowModel, FlowQueueing, FlowTimeouts, RoutingMode, SchemeName,
};
use crate::net::ideal::ideal_fct;
use crate::record::{Batches, Progress, RunOutput, RunStats};
use crate::flows::{FlowError, FlowSet, NO_DEADLINE};
use crate::net::{flow_hash, mix64, Network};
use crate::transport::homa::{fabric_rtt_bytes, HomaParams};
use crate::units::{tx_time, Ps, NEVER, PS_PER_MS};
use fluid::Fluid;
use maxmin::NOT_FROZEN;
use open::{Open, TERM_DEADLINE, TERM_LINE, TERM_NEVER, TERM_PAUSED};
use ordered::Order;
use rand::{RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use resources::{pooled_path, Resources};
use rto::Timeouts;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use tags::Tags;
use timers::Timers;

/// The flow level's allocation rules, one per scheme that has a model (its row's `flow_level`).
pub(crate) use crate::config::FluidModel as Model;

fn model_of(name: SchemeName) -> Option<Model> {
    name.row().flow_level.map(|f| f.model)
}

/// The names of the schemes the flow level has a model for, in the order of the scheme table.
pub fn supported_names() -> Vec<&'static str> {
    crate::config::SCHEMES.iter().filter(|row| row.flow_level.is_some()).map(|row| row.name).collect()
}

/// Is there a flow-level model for this scheme?
pub fn supports(name: SchemeName) -> bool {
    model_of(name).is_some()
}

/// The longest path the flow level takes (a k-ary fat-tree's is 6 ports, a leaf-spine's 4, BCube(n, k)'s
/// 2k + 4 with the two internal links: k <= 2).
pub const MAX_HOPS: usize = 8;

/// Run `flows` at the flow level (see the module docs). The flows have passed [`crate::validate::flows`]
/// ([`crate::run`] is the way in). `progress`, if given, follows the run: the flows finished and the simulated
/// time, at each event.
pub(crate) fn run(cfg: &Config, flows: &FlowSet, progress: Option<&Progress>) -> Result<RunOutput, FlowError> {
    run_pruned(cfg, flows, true, progress, None)
}

/// [`run`], handing the per-flow results over in batches as flows finish (`release`: in flow-id order, behind
/// the watermark of the flows all done); the returned results are then empty.
pub(crate) fn run_batches(
    cfg: &Config,
    flows: &FlowSet,
    progress: Option<&Progress>,
    out: Batches<'_>,
) -> Result<RunOutput, FlowError> {
    run_pruned(cfg, flows, true, progress, Some(out))
}

/// `run`, leaving out of the flows' paths the resources that cannot bind (`Implied`) when `prune` (false: every
/// resource kept, to test that it changes nothing).
fn run_pruned(
    cfg: &Config,
    flows: &FlowSet,
    prune: bool,
    progress: Option<&Progress>,
    out: Option<Batches<'_>>,
) -> Result<RunOutput, FlowError> {
    let wall = std::time::Instant::now();
    let Some(model) = model_of(cfg.scheme.name) else {
        return Err(FlowError::new(format!(
            "run.level = \"flow\": scheme {} has no flow-level model yet (the flow level has: {})",
            cfg.scheme.name.as_str(),
            supported_names().join(", ")
        )));
    };
    // the packet level's ECMP salts: the first draw of the same seeder (as net::ideal::ideal_fcts)
    let net: Network = Network::build(cfg, Xoshiro256PlusPlus::seed_from_u64(cfg.seed).next_u64());
    let t = &cfg.transport;
    let (mss, header) = (t.mss_bytes, t.header_bytes);
    let spray = cfg.routing.mode == RoutingMode::Spray;
    // PIAS's thresholds (payload bytes) in wire bits: a segment's headers ride with its payload
    let th_bits: Vec<f64> = if cfg.scheme.name == SchemeName::Pias {
        let per_byte = 8.0 * (mss + header) as f64 / mss as f64;
        cfg.scheme.thresholds_bytes.iter().map(|&b| b as f64 * per_byte).collect()
    } else {
        Vec::new()
    };
    let row = cfg.scheme.name.row();
    let window = row.window;
    let sc_ = &cfg.scheme;
    let tags = Tags::new(cfg, flows, &net)?;
    // QJump: each level's rate limit, its bucket per interval (bit/s), and the bucket (wire bits) a flow must
    // exceed for it to bind
    let qjump: Vec<(f64, f64)> = if cfg.scheme.name == SchemeName::Qjump {
        let interval_us = if sc_.qjump_interval_us > 0.0 {
            sc_.qjump_interval_us
        } else {
            1_050.0 * 10.0 / cfg.topology.host_link_gbps()
        };
        sc_.qjump_bucket_bytes.iter().map(|&b| (b as f64 * 8.0 / (interval_us * 1e-6), b as f64 * 8.0)).collect()
    } else {
        Vec::new()
    };
    let setup_rtts = u64::from(t.handshake && window) + u64::from(row.setup_rtts);
    // PDQ's variants: the criticality, the hand-over gap in base RTTs (a paused flow's probe round trip; Early
    // Start accepts the next flow K RTTs before the one ahead ends, so its data comes K - 1 RTTs early and no gap
    // is left when K >= 1), and who gives up
    let sc = &cfg.scheme;
    let pdq = cfg.scheme.name.is_pdq();
    let model = match model {
        Model::Critical { .. } => Model::Critical { size_aware: sc.pdq_criticality == Criticality::Size },
        m => m,
    };
    let gap_rtts = if !pdq {
        0.0
    } else if sc.pdq_early_start {
        (1.0 - sc.pdq_early_start_k).max(0.0)
    } else {
        1.0
    };
    let term = match cfg.scheme.name {
        SchemeName::D3 => TERM_LINE,
        _ if pdq && sc.pdq_early_termination => match sc.pdq_criticality {
            Criticality::Size => TERM_PAUSED,
            _ => TERM_DEADLINE,
        },
        _ => TERM_NEVER,
    };
    let rank_bits = if pdq && sc.pdq_criticality == Criticality::BytesSent {
        sc.pdq_criticality_update_bytes.max(1) as f64 * 8.0 * (mss + header) as f64 / mss as f64
    } else {
        0.0
    };
    let limit = (cfg.run.time_limit_ms * PS_PER_MS as f64).round() as Ps;
    let n = flows.len();
    let mut results = release::Release::new(n, out);
    let mut stats = RunStats { flows: n as u64, threads: 1, ..RunStats::default() };
    let mut res = Resources { prune, ..Resources::default() };
    if cfg.run.flow_model == FlowModel::Window {
        // (the windowed model: windows and fluid queues, stepped in time; `window`)
        stats.sim_time_ps = window::run(cfg, flows, &net, &mut results, &mut stats, progress)?;
        stats.wall_seconds = wall.elapsed().as_secs_f64();
        stats.events_per_second = stats.events as f64 / stats.wall_seconds.max(1e-9);
        return Ok(RunOutput { results: results.finish()?, stats });
    }

    // arrivals: independent flows in order of start; children (kept only when there are any) when their parent
    // finishes
    let mut independent: Vec<u32> = (0..n as u32).filter(|&i| flows.parent(i as usize).is_none()).collect();
    independent.sort_by_key(|&i| (flows.start_ps[i as usize], i));
    let mut children: Vec<Vec<u32>> = Vec::new();
    if independent.len() < n {
        children = vec![Vec::new(); n];
        for i in 0..n {
            if let Some(p) = flows.parent(i) {
                children[p as usize].push(i as u32);
            }
        }
    }
    let mut next_independent = 0;
    let mut ready: BinaryHeap<Reverse<(Ps, u32)>> = BinaryHeap::new();
    let mut held: BinaryHeap<Reverse<(Ps, u32)>> = BinaryHeap::new();
    let mut events = Timers::default();
    let mut fl = match model {
        Model::Mlfq => Fluid::layered(th_bits.len().max(tags.queues()) + 1),
        Model::Srpt | Model::Critical { .. } | Model::D3 => Fluid::ordered(model),
        // (LAS: a new flow, with no service yet, is ahead of every flow on its links, so each arrival reaches
        // most open flows; the recheck queue keeps one entry per flow, without which the update was slower than
        // the global pass on the 144-host leaf-spine: 404 s against 105 s at 200,000 flows)
        Model::Homa | Model::Las => Fluid::prio(model),
        _ => Fluid::default(),
    };
    if model == Model::Homa {
        fl.fill.homa_overcommit =
            HomaParams::from_config(cfg, &flows.size_bytes, fabric_rtt_bytes(&net, cfg)).overcommit;
    }
    let ordered = fl.by != Order::None;
    let mut hl = (cfg.scheme.name == SchemeName::Hyline).then(|| hyline::Hyline::new(cfg, flows, &net));
    // (HyLine: the flows a first CTS opens in this event, with the index of their path)
    let mut admit: Vec<(u32, u32)> = Vec::new();
    let mut sq = Standing::new(cfg, model == Model::MaxMin && window, &net);
    // the TCP family's retransmission timer (`rto`)
    let mut to = {
        let tp = crate::transport::tcp::TcpParams::from_config(cfg);
        let on = model == Model::MaxMin
            && window
            && match cfg.run.flow_timeouts {
                FlowTimeouts::None => false,
                FlowTimeouts::Marking => matches!(cfg.scheme.name, SchemeName::Dctcp | SchemeName::L2dct),
                FlowTimeouts::All => matches!(cfg.scheme.name, SchemeName::Tcp | SchemeName::Dctcp | SchemeName::L2dct),
            };
        Timeouts::new(on, tp.rto_min, tp.rto_init, tp.rto_max, (mss + header) as f64 * 8.0)
    };
    let mut now: Ps = 0;
    loop {
        // the next event: an arrival, the end of a set-up, a flow's own event (its last bit, its window used up,
        // a threshold passed, a new round)
        let mut next = independent.get(next_independent).map_or(NEVER, |&i| flows.start_ps[i as usize]);
        next = next.min(ready.peek().map_or(NEVER, |r| r.0 .0)).min(held.peek().map_or(NEVER, |r| r.0 .0));
        next = next.min(events.peek().map_or(NEVER, |e| e.0));
        next = next.min(hl.as_ref().map_or(NEVER, |h| h.next_at()));
        if next == NEVER || next > limit {
            stats.hit_time_limit = next != NEVER;
            break;
        }
        now = next;
        stats.events += 1;
        if let Some(p) = progress {
            p.set(stats.flows_finished, now);
        }
        fl.begin();
        fl.now = now;
        // the flows' own events: completions, slow start's rounds, thresholds
        while let Some((at, k)) = events.peek() {
            if at > now {
                break;
            }
            events.remove(k);
            // (the standing queues this flow waits behind, if it is still in slow start)
            let q = if sq.on && fl.flows[k as usize].round_at != NEVER { sq.delay(k, &fl, &res) } else { 0 };
            let f = &mut fl.flows[k as usize];
            f.sync(now);
            if f.left <= 1e-6 || (f.rate > 0.0 && f.left / f.rate * 1e12 < 1.0) {
                let (id, tail) = (f.id as usize, f.tail);
                sq.leave(k, f);
                let r = results.row(id);
                results.cols.finish_ps[r] = now + tail;
                results.cols.sender_done_ps[r] = now;
                results.cols.bytes_sent[r] = flows.size_bytes[id];
                results.cols.bytes_delivered[r] = flows.size_bytes[id];
                results.done(id);
                stats.flows_finished += 1;
                if let Some(h) = hl.as_mut().filter(|h| h.class2[id]) {
                    h.last_bit(id as u32, now);
                    h.slot[id] = u32::MAX;
                }
                if let Some(cs) = children.get(id) {
                    for &c in cs {
                        ready.push(Reverse((flows.start_ps[c as usize].max(now + tail), c)));
                    }
                }
                fl.done(k);
                continue;
            }
            // D3's quenching, PDQ's Early Termination: the flow gives up and never finishes
            if f.give_up_at(now) <= now {
                let id = f.id as usize;
                let r = results.row(id);
                results.cols.terminated[r] = true;
                results.cols.bytes_sent[r] = payload_of(f.sent, mss, header).min(flows.size_bytes[id]);
                results.done(id);
                sq.leave(k, f);
                fl.done(k);
                continue;
            }
            // D3: a new request, from the bits left and the time to the deadline
            if f.req_at <= now {
                f.desired = f.left / ((f.deadline - now) as f64 / 1e12);
                f.req_at = now + f.rtt;
            }
            // PDQ: the bytes-sent estimate of its criticality moves a step (within a picosecond's worth)
            let rank = f.rank;
            if f.rank_bits > 0.0 {
                f.rank = ((f.sent + f.line * 1e-12) / f.rank_bits).floor();
            }
            let (cap, class) = (f.cap, f.class);
            // slow start: a new round doubles the window; a window of a base RTT's worth no longer binds
            if f.round_at <= now {
                // (after a timeout: ssthresh, then a segment per round; and the spurious retransmissions)
                f.win = to.next_window(k, f.win).min(f.win_max);
                f.allow = f.win + to.take_dup(k);
                f.round_at = if f.win < f.line * f.rtt as f64 / 1e12 { now + f.rtt + q } else { NEVER };
                if f.round_at == NEVER {
                    sq.enter(k, f);
                } else if to.on {
                    let (fired, extra) = to.round(k, f.win, f.left, f.rtt + q, now);
                    f.left += extra;
                    let r = results.row(f.id as usize);
                    results.cols.timeouts[r] += u32::from(fired);
                }
            }
            if f.round_at != NEVER && f.allow * 1e12 < f.line {
                f.allow = 0.0; // (less than a picosecond's worth: used up)
                to.used_up(k, now);
            }
            // QCLIMB, RAX: the tag of the bytes sent, due again (within a picosecond's worth)
            if f.sent * 1e12 + f.line >= f.tag_at * 1e12 {
                (f.class, f.tag_at) = tags.at(f.id, f.sent + f.line * 1e-12);
            }
            // (a flow within a picosecond's worth of a threshold has passed it)
            while th_bits.get(f.class as usize).is_some_and(|&th| f.sent * 1e12 + f.line > th * 1e12) {
                f.class += 1;
            }
            f.cap = if model == Model::D3 {
                f.asks()
            } else if f.round_at != NEVER && f.allow <= 0.0 {
                0.0
            } else {
                hyline::own_cap(f)
            };
            if ordered {
                // (SRPT, criticality order: regranted, moved in the order if its rank stepped, and caught up
                // with the flow ahead of it if that is the event)
                let moved = f.rank != rank;
                fl.own_event(k, moved);
            } else if f.class != class && model == Model::Mlfq {
                fl.requeue(k, class);
            } else if f.cap != cap || f.class != class {
                fl.changed(k);
            }
            fl.resched.push(k);
        }
        // HyLine: the control plane's messages due
        if let Some(h) = hl.as_mut() {
            h.control(now, &mut fl, &mut res, &net, flows, (mss, header), &mut admit);
        }
        // arrivals (their data starts after the set-up round trips); HyLine's second-class flows open at their
        // first CTS, on the path it names
        admit.reverse();
        loop {
            // (in order of time, then id, independent flows and children alike)
            let first = independent.get(next_independent).map(|&i| (flows.start_ps[i as usize], i));
            let child = ready.peek().map(|r| r.0);
            let admitted = admit.pop();
            let id = match (first, child) {
                _ if admitted.is_some() => admitted.unwrap().0,
                (Some(a), c) if a.0 <= now && c.is_none_or(|c| a <= c) => {
                    next_independent += 1;
                    a.1
                }
                (_, Some((at, c))) if at <= now => {
                    ready.pop();
                    c
                }
                _ => break,
            };
            let i = id as usize;
            let (src, dst, size) = (flows.src[i], flows.dst[i], flows.size_bytes[i]);
            let class2 = hl.as_ref().is_some_and(|h| h.class2[i]);
            if class2 && admitted.is_none() {
                // (its request leaves for the manager; it opens at its first CTS)
                let r = results.row(i);
                results.cols.start_ps[r] = now;
                results.cols.ideal_fct_ps[r] = ideal_fct(
                    &net.ecmp_path(src, dst, flow_hash(id, false))
                        .iter()
                        .map(|&p| (net.ports[p as usize].rate_bps, net.ports[p as usize].delay_ps))
                        .collect::<Vec<_>>(),
                    size,
                    mss,
                    header,
                );
                stats.connections_opened += 1;
                hl.as_mut().unwrap().arrive(id, now);
                continue;
            }
            let hops = match (admitted, hl.as_ref()) {
                (Some((_, p)), Some(h)) => h.path(id, p).to_vec(),
                _ => net.ecmp_path(src, dst, flow_hash(id, false)),
            };
            let PathTimes { ideal, rtt, ctrl_rtt, wire_bits, tail, .. } = path_times(&net, &hops, size, t);
            let path = if spray {
                pooled_path(&net, src, dst, &mut res)
            } else {
                hops.iter().map(|&p| res.of_port(p, &net)).collect()
            };
            let mut line = net.line_rate_bps(src) as f64;
            // (HyLine's second class: its own initial window and window cap)
            let (init_cwnd, max_cwnd) = match hl.as_ref() {
                Some(h) if class2 => (h.large_win_packets, h.large_max_cwnd),
                _ => (t.init_cwnd_packets as f64, t.max_cwnd_packets as f64),
            };
            // a window cap: the window never grows past max_cwnd segments (sent at the rate allocated, then the
            // round's wait, every round if it is less than a base RTT's worth at line rate)
            let win_max = if window && max_cwnd > 0.0 { max_cwnd * (mss + header) as f64 * 8.0 } else { f64::INFINITY };
            // QJump: a flow larger than its level's bucket sends at most a bucket per interval
            if let Some(&(rate, bucket)) = qjump.get(tags.at(id, 0.0).0 as usize) {
                if wire_bits > bucket {
                    line = line.min(rate);
                }
            }
            let win = (init_cwnd * (mss + header) as f64 * 8.0).min(win_max);
            // (the standing queues: the resources of the ACKs' path, and the queues of the first round as they
            // stand when the flow arrives)
            let back = if !sq.on {
                Vec::new()
            } else if spray {
                pooled_path(&net, dst, src, &mut res)
            } else {
                net.ecmp_path(dst, src, flow_hash(id, true)).iter().map(|&p| res.of_port(p, &net)).collect()
            };
            let q0 = if sq.on {
                sq.grow(&res, &net);
                sq.delay_on(path.iter().chain(&back), &fl, &res)
            } else {
                0
            };
            let round_at =
                if window && win < line * rtt as f64 / 1e12 { now + setup_rtts * ctrl_rtt + rtt + q0 } else { NEVER };
            if !class2 {
                let r = results.row(i);
                results.cols.start_ps[r] = now;
                results.cols.ideal_fct_ps[r] = ideal;
                stats.connections_opened += 1;
            }
            // (validate::flows refuses a path longer than this before the run: BCube's by topology.k, a
            // Jellyfish graph's per pair of hosts once it is drawn)
            assert!(path.len() <= MAX_HOPS, "flow {id} crosses {} ports (at most {MAX_HOPS})", path.len());
            let mut hops = [0; MAX_HOPS];
            let mut hops_len = 0;
            for &r in path.iter().filter(|&&r| res.kept[r as usize]) {
                hops[hops_len] = r;
                hops_len += 1;
            }
            let deadline = flows.deadline_ps.get(i).copied().unwrap_or(NO_DEADLINE);
            let term = if deadline == NO_DEADLINE { TERM_NEVER } else { term };
            // a flow that cannot make its deadline even at line rate gives up at its start (its request is never
            // sent)
            if term != TERM_NEVER
                && (now >= deadline || term >= TERM_LINE && wire_bits / line * 1e12 > (deadline - now) as f64)
            {
                let r = results.row(i);
                results.cols.terminated[r] = true;
                results.done(i);
                continue;
            }
            let d3_asks = model == Model::D3 && deadline != NO_DEADLINE;
            let data_at = now + setup_rtts * ctrl_rtt;
            let rank = match sc.pdq_criticality {
                Criticality::Random if pdq => (mix64(cfg.seed ^ mix64(u64::from(id))) >> 32) as f64,
                _ => 0.0,
            };
            let (class, tag_at) = tags.at(id, 0.0);
            let mut f = Open {
                id,
                hops,
                hops_len: hops_len as u8,
                pos: [0; MAX_HOPS],
                left: wire_bits,
                rate: 0.0,
                cap: line,
                line,
                win,
                allow: win,
                round_at,
                rtt,
                tail,
                sent: 0.0,
                class,
                tag_at,
                deadline,
                term,
                desired: if d3_asks { wire_bits / ((deadline - now) as f64 / 1e12) } else { 0.0 },
                req_at: if d3_asks { data_at + rtt } else { NEVER },
                rank,
                rank_bits,
                grant: -1.0,
                gap: (gap_rtts * rtt as f64).round() as Ps,
                wake: 0,
                catch_at: NEVER,
                at: now,
                act: u32::MAX,
                old_rate: 0.0,
                mark: 0,
                sched: 0,
                froze: NOT_FROZEN,
                ahead: [0.0; MAX_HOPS],
                queued: false,
                cstamp: 0,
                seq: 0,
                src,
                dst,
                granted: false,
                stopped: false,
                win0: win,
                win_max,
            };
            if model == Model::D3 {
                f.cap = f.asks();
            }
            // (the set-up round trips are a wait before the data: header-only packets both ways)
            let k = fl.insert(f, &res.capacity);
            if let Some(h) = hl.as_mut().filter(|_| class2) {
                h.slot[i] = k;
            }
            sq.set_back(k, &back, &res);
            to.open(k, (setup_rtts > 0 && t.handshake).then_some(ctrl_rtt));
            held.push(Reverse((data_at, k)));
            stats.max_concurrent_flows = stats.max_concurrent_flows.max((fl.flows.len() - fl.free.len()) as u64);
        }
        while let Some(&Reverse((at, k))) = held.peek() {
            if at > now {
                break;
            }
            held.pop();
            fl.start(k, now);
            let f = &mut fl.flows[k as usize];
            if f.round_at == NEVER {
                sq.enter(k, f);
            } else if to.on {
                // (the first round: its round trip as the standing queues stood at the flow's arrival)
                let (fired, extra) = to.round(k, f.win, f.left, f.round_at - now, now);
                f.left += extra;
                let r = results.row(f.id as usize);
                results.cols.timeouts[r] += u32::from(fired);
            }
        }
        match model {
            Model::MaxMin => fl.update_max_min(now),
            Model::Mlfq => fl.update_mlfq(now),
            Model::Srpt | Model::Critical { .. } => fl.update_ordered(now),
            Model::D3 => fl.update_d3(now),
            Model::Homa | Model::Las => fl.update_prio(now),
        }
        // the flows whose next event moved
        for j in 0..fl.resched.len() {
            let k = fl.resched[j];
            let f = &mut fl.flows[k as usize];
            if f.sched == fl.epoch || f.act == u32::MAX {
                continue;
            }
            f.sched = fl.epoch;
            let at = f.next_event(now, &th_bits);
            if at != NEVER {
                events.set(k, at);
            } else {
                events.remove(k);
            }
        }
        // the flows done up to here, handed over in batches when the results are
        results.release()?;
    }
    // HyLine: the manager's counters, as the packet level reports them
    if let Some(h) = &hl {
        let c = h.man.counters;
        (stats.hyline_requests, stats.hyline_admissions) = (c.requests, c.admissions);
        (stats.hyline_preemptions, stats.hyline_stops) = (c.preemptions, c.stops);
    }
    // flows still open: unfinished
    stats.sim_time_ps = now;
    if let Some(p) = progress {
        p.set(stats.flows_finished, now);
    }
    stats.wall_seconds = wall.elapsed().as_secs_f64();
    stats.events_per_second = stats.events as f64 / stats.wall_seconds.max(1e-9);
    Ok(RunOutput { results: results.finish()?, stats })
}

/// The standing-queue model (`run.flow_queueing = "standing"`, see [`FlowQueueing::Standing`]): per resource,
/// the delay of its standing queue and the number of active flows on it past slow start; per flow slot, the
/// resources of its ACKs' path and whether it is counted past slow start.
struct Standing {
    on: bool,
    /// Standing queue in bytes at a switch port and at a host's NIC.
    switch_bytes: u64,
    nic_bytes: u64,
    is_nic: Vec<bool>,
    delay: Vec<Ps>,
    past: Vec<u32>,
    back: Vec<([u32; MAX_HOPS], u8)>,
    counted: Vec<bool>,
}

impl Standing {
    fn new(cfg: &Config, max_min_window: bool, net: &Network) -> Self {
        let sc = cfg.scheme.name;
        let on = cfg.run.flow_queueing == FlowQueueing::Standing
            && max_min_window
            && matches!(sc, SchemeName::Tcp | SchemeName::Dctcp | SchemeName::L2dct);
        let sw = &cfg.switch;
        // a congested port without marking fills what its buffer lets one port hold (shared: the dynamic
        // threshold's share of the pool for one congested port, alpha / (1 + alpha))
        let switch_full = match sw.buffer {
            BufferMode::Port => sw.buffer_bytes,
            _ => (sw.shared_buffer_bytes as f64 * sw.dt_alpha / (1.0 + sw.dt_alpha)) as u64,
        };
        let nic_full = cfg.host.nic_buffer(sw.buffer_bytes);
        let marks = sc != SchemeName::Tcp;
        let switch_bytes = if marks && sw.ecn != EcnMode::Off {
            sw.ecn_threshold_bytes.min(switch_full)
        } else {
            switch_full
        };
        let nic_bytes = if marks && cfg.host.nic_ecn {
            sw.ecn_threshold_bytes.min(nic_full)
        } else {
            nic_full
        };
        let mut is_nic = vec![false; net.ports.len()];
        for &p in &net.host_port {
            is_nic[p as usize] = true;
        }
        Standing {
            on,
            switch_bytes,
            nic_bytes,
            is_nic,
            delay: Vec::new(),
            past: Vec::new(),
            back: Vec::new(),
            counted: Vec::new(),
        }
    }

    /// Room for the resources built so far (their queues' delays).
    fn grow(&mut self, res: &Resources, net: &Network) {
        for r in self.delay.len()..res.capacity.len() {
            let p = res.first_port[r] as usize;
            let bytes = if self.is_nic[p] {
                self.nic_bytes
            } else {
                self.switch_bytes
            };
            self.delay.push(tx_time(
                bytes.min(u32::MAX as u64) as u32,
                net.ports[p].rate_bps,
            ));
            self.past.push(0);
        }
    }

    fn set_back(&mut self, k: u32, back: &[u32], res: &Resources) {
        if !self.on {
            return;
        }
        let k = k as usize;
        if self.back.len() <= k {
            self.back.resize(k + 1, ([0; MAX_HOPS], 0));
            self.counted.resize(k + 1, false);
        }
        let mut b = [0; MAX_HOPS];
        let mut n = 0;
        for &r in back
            .iter()
            .filter(|&&r| res.kept[r as usize])
            .take(MAX_HOPS)
        {
            b[n] = r;
            n += 1;
        }
        self.back[k] = (b, n as u8);
        self.counted[k] = false;
    }

    /// The delay of the standing queues on these resources, as they stand now.
    fn delay_on<'a>(&self, rs: impl Iterator<Item = &'a u32>, fl: &Fluid, res: &Resources) -> Ps {
        rs.filter(|&&r| {
            let r = r as usize;
            self.past[r] > 0
                && fl
                    .load
                    .get(r)
                    .is_some_and(|&l| l >= res.capacity[r] * (1.0 - 1e-6))
        })
        .map(|&r| self.delay[r as usize])
        .sum()
    }

    /// Slot `k`'s queueing delay on a round trip: its data's path and its ACKs'.
    fn delay(&self, k: u32, fl: &Fluid, res: &Resources) -> Ps {
        let f = &fl.flows[k as usize];
        let (b, n) = &self.back[k as usize];
        self.delay_on(
            f.hops[..f.hops_len as usize]
                .iter()
                .chain(&b[..*n as usize]),
            fl,
            res,
        )
    }

    fn enter(&mut self, k: u32, f: &Open) {
        if self.on && !self.counted[k as usize] {
            self.counted[k as usize] = true;
            for &r in &f.hops[..f.hops_len as usize] {
                self.past[r as usize] += 1;
            }
        }
    }

    fn leave(&mut self, k: u32, f: &Open) {
        if self.on && self.counted[k as usize] {
            self.counted[k as usize] = false;
            for &r in &f.hops[..f.hops_len as usize] {
                self.past[r as usize] -= 1;
            }
        }
    }
}

/// What a flow's path gives it, as the packet level's lone flow would take it: each hop's (rate, delay), the
/// ideal FCT, the base RTT (a full segment's way and an ACK's way back), the set-up's round trip (header-only
/// packets both ways), the wire bits (payload plus a header per segment), and the pipeline's latency after the
/// last bit leaves at the bottleneck's rate (`tail`).
pub(super) struct PathTimes {
    pub(super) hop_list: Vec<(u64, Ps)>,
    pub(super) ideal: Ps,
    pub(super) rtt: Ps,
    pub(super) ctrl_rtt: Ps,
    pub(super) wire_bits: f64,
    pub(super) tail: Ps,
}

pub(super) fn path_times(
    net: &Network,
    hops: &[u32],
    size: u64,
    t: &crate::config::TransportConfig,
) -> PathTimes {
    let (mss, header) = (t.mss_bytes, t.header_bytes);
    let hop_list: Vec<(u64, Ps)> =
        hops.iter().map(|&p| (net.ports[p as usize].rate_bps, net.ports[p as usize].delay_ps)).collect();
    let ideal = ideal_fct(&hop_list, size, mss, header);
    let rtt = hop_list.iter().map(|&(r, d)| tx_time(mss + header, r) + tx_time(t.ack_bytes, r) + 2 * d).sum();
    let ctrl_rtt = hop_list.iter().map(|&(r, d)| 2 * tx_time(t.ack_bytes, r) + 2 * d).sum();
    let segs = size.div_ceil(mss as u64).max(1);
    let wire_bits = (size + segs * header as u64) as f64 * 8.0;
    let bottleneck = hop_list.iter().map(|h| h.0).min().unwrap_or(1) as f64;
    let tail = ideal.saturating_sub((wire_bits / bottleneck * 1e12).round() as Ps);
    PathTimes { hop_list, ideal, rtt, ctrl_rtt, wire_bits, tail }
}

/// The payload bytes in `wire_bits` (each segment's headers ride with its payload), rounded down.
fn payload_of(wire_bits: f64, mss: u32, header: u32) -> u64 {
    (wire_bits.max(0.0) / 8.0 * mss as f64 / (mss + header) as f64) as u64
}

#[cfg(test)]
mod tests;
