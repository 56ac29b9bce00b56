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
//! grants leave, refilled where a grant moved). LAS still recomputes every rate at each event (its groups of
//! equal service).
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
//! What the packet level has and an isolated flow needs to take the same time at both levels:
//! - **Bytes on the wire**: payload plus `transport.header_bytes` per `mss_bytes` segment.
//! - **Pipeline latency**: a flow's last bit leaves its sender when its wire bits are sent at its rate; it arrives
//!   after the store-and-forward pipeline of its path: the isolated flow's ideal FCT (`engine::ideal_fct`) minus
//!   its wire bits at the path's bottleneck rate, added at the end.
//! - **Set-up**: one round trip of header-only packets before the data with `transport.handshake` (the TCP
//!   family), and for RCP, D3 and PDQ (the rate request their SYN carries). The base RTT of slow start is a full
//!   segment's way to the destination and an ACK's way back.
//! - **Slow start** (the window-based schemes: the TCP family, pfabric, las, pias, qclimb, rax): in each base
//!   RTT from the data's start a flow may send a window's worth (at the rate it is allocated), then waits for the
//!   next round; the window starts at `init_cwnd_packets` segments and doubles every round until it holds a base
//!   RTT's worth at line rate, from when it no longer binds. Two events per round (the window used up, the next
//!   round). With `max_cwnd_packets` the rate is capped at that many segments per base RTT.
//!
//! Not modelled: queueing delay, losses, timeouts, ECN dynamics (DCTCP is max-min here), and the other schemes
//! (an experiment asking for them at the flow level is refused with the list of those it has).

use crate::config::{Config, Criticality, QclimbInfo, RoutingMode, SchemeName};
use crate::engine::{ideal_fct, RunOutput, RunStats};
use crate::flows::{FlowError, FlowResults, FlowSet, NO_DEADLINE};
use crate::net::{flow_hash, mix64, Network};
use crate::policy::rax::RaxParams;
use crate::policy::{Bounds, Tagging};
use crate::units::{tx_time, Ps, NEVER, PS_PER_MS};
use rand::{RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::cmp::Reverse;
use std::collections::binary_heap::PeekMut;
use std::collections::{BTreeMap, BinaryHeap, HashMap};

/// The schemes the flow level has a model for, with the model's name.
pub const SCHEMES: [(&str, &str); 15] = [
    ("tcp", "max-min"),
    ("dctcp", "max-min"),
    ("l2dct", "max-min"),
    ("rcp", "max-min"),
    ("pfabric", "SRPT"),
    ("las", "least attained service: strict priority by bytes sent, equal service shared max-min"),
    ("pias", "MLFQ: strict priority by bytes sent, max-min within a queue"),
    ("qclimb", "strict priority by QCLIMB's tag of the bytes sent, max-min within a queue"),
    ("rax", "strict priority by RAX's remaining-time estimate, max-min within a queue"),
    ("rax-plus", "strict priority by the remaining time, max-min within a queue"),
    ("d3", "D3: desired rates granted first come first served, the rest max-min; quenching"),
    ("pdq", "criticality order with Early Start and Early Termination"),
    ("pdq-basic", "criticality order, one RTT's hand-over gap"),
    ("pdq-es", "criticality order with Early Start"),
    ("pdq-es-et", "criticality order with Early Start and Early Termination"),
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Model {
    MaxMin,
    Srpt,
    /// PDQ: flows in order of criticality (earliest deadline first, flows without one after; then fewest bytes
    /// left, or the flow's `rank` when `size_aware` is false), each taking what its path has left.
    Critical {
        size_aware: bool,
    },
    /// PIAS: a flow's queue is the number of demotion thresholds its bytes sent have passed; queues are served
    /// in strict priority, flows within a queue max-min fairly.
    Mlfq,
    /// LAS: strict priority by wire bits sent (fewest first); flows with equal service share max-min.
    Las,
    /// D3: flows in order of arrival each granted their desired rate where their path has it left (what is
    /// left of it otherwise), then max-min on what the grants leave.
    D3,
}

fn model_of(name: SchemeName) -> Option<Model> {
    match name {
        SchemeName::Tcp | SchemeName::Dctcp | SchemeName::L2dct | SchemeName::Rcp => Some(Model::MaxMin),
        SchemeName::Pfabric => Some(Model::Srpt),
        SchemeName::Las => Some(Model::Las),
        SchemeName::Pias | SchemeName::Qclimb | SchemeName::Rax | SchemeName::RaxPlus => Some(Model::Mlfq),
        SchemeName::D3 => Some(Model::D3),
        n if n.is_pdq() => Some(Model::Critical { size_aware: true }),
        _ => None,
    }
}

/// Is there a flow-level model for this scheme?
pub fn supports(name: SchemeName) -> bool {
    model_of(name).is_some()
}

/// One flow, open or in its set-up wait. Progress is applied lazily: `left`, `allow` and `sent` hold the values
/// at `at`, and are brought up to date (`sync`) only at the flow's own events and when its rate is about to
/// change, so an event costs nothing for the flows it does not touch.
///
/// `repr(C)` and aligned to a cache line, with the fields the max-min update reads of every flow it meets
/// first (rate, old rate, path, marks): they share one cache line, where the compiler's own order spread them
/// over three (the scans of a resource's users read the rate and mark of every user).
#[derive(Debug, Clone)]
#[repr(C, align(64))]
struct Open {
    rate: f64,
    /// The reallocation's bookkeeping: the rate before this event, the event that put the flow in the set
    /// being refilled (and the one that rescheduled it), and what froze its rate in the last filling (a
    /// resource, or FROZE_CAP for its own cap).
    old_rate: f64,
    /// Resources (indices into the resource table) its path uses: the first `hops_len` (held in the flow, not
    /// behind a pointer: the updates walk them for every flow they touch).
    hops: [u32; MAX_HOPS],
    mark: u32,
    froze: u32,
    hops_len: u8,
    sched: u32,
    id: u32,
    /// For each hop, the flow's index in that resource's list of users (removal in constant time).
    pos: [u32; MAX_HOPS],
    /// D3: the part of the rate granted from the desired rate. SRPT and PDQ: the rate its path grants (a PDQ
    /// flow may not be sending it yet; -1 before its first grant). (With the cap and line rate it sits in the
    /// second cache line and `ahead` fills the third: SRPT's update reads them of every flow behind a change of
    /// grant, `layout_puts_the_ordered_update_in_three_lines`.)
    grant: f64,
    /// Its own cap on the rate for the allocation (bit/s): `line`, or 0 while its window is used up. D3: the
    /// cap on its grant (`Open::asks`; the cap on its fair share, `line` less its grant, is in `Fluid::shares`).
    cap: f64,
    /// The NIC's rate (and `max_cwnd_packets` per base RTT, when set).
    line: f64,
    /// SRPT and criticality order (`Fluid::update_ordered`): per hop, what the flows ahead of it in the order
    /// leave of that resource (its capacity less their grants).
    ahead: [f64; MAX_HOPS],
    /// Wire bits still to send.
    left: f64,
    /// Slow start: the window (bits), the bits it still allows in this round, and when the next round starts
    /// (NEVER once the window no longer binds: at least a base RTT's worth at `line`).
    win: f64,
    allow: f64,
    round_at: Ps,
    rtt: Ps,
    /// Added to the time the last bit leaves: the path's pipeline latency.
    tail: Ps,
    /// MLFQ: wire bits sent, and the queue (thresholds passed; QCLIMB and RAX: the tag of the bytes sent),
    /// and (QCLIMB, RAX) the wire bits sent at which the tag is due again (infinite: never).
    sent: f64,
    class: u8,
    tag_at: f64,
    /// D3 and PDQ: the flow's deadline (absolute; NO_DEADLINE if none), and when it gives up (`TERM_*`).
    deadline: Ps,
    term: u8,
    /// D3: the desired rate of its last request (bit/s; 0 without a deadline) and when the next is due.
    desired: f64,
    req_at: Ps,
    /// PDQ's size-unaware criticality: the flow's rank (random, or bytes-sent steps passed), and the wire bits
    /// of one step of the bytes-sent estimate (0: no steps).
    rank: f64,
    rank_bits: f64,
    /// PDQ: the wait between a paused flow's new grant and its data (`gap`) and when that wait ends (`wake`,
    /// 0 when not waiting).
    gap: Ps,
    wake: Ps,
    /// LAS: when the flow, at its rate, catches up with the next flow of one of its resources in the order of
    /// service (NEVER: it does not).
    catch_at: Ps,
    /// When `left`, `allow` and `sent` were last brought up to date.
    at: Ps,
    /// Its position in the list of active flows (u32::MAX while in its set-up wait).
    act: u32,
    /// SRPT and criticality order: whether it waits in the queue of flows to regrant; the event that last put
    /// it in the list of flows whose catching up is recomputed.
    queued: bool,
    cstamp: u32,
    /// D3: the flow's place in the order of arrival (its data's start; numbered by `Fluid::activate`).
    seq: u64,
}

/// When an explicit-rate flow with a deadline gives up: never; once its deadline has passed (PDQ with a
/// size-unaware criticality); once it cannot make it at line rate (D3's quenching: its desired rate exceeds the
/// line rate); that, or while paused, once it cannot make it at line rate one RTT from now (PDQ's Early
/// Termination).
const TERM_NEVER: u8 = 0;
const TERM_DEADLINE: u8 = 1;
const TERM_LINE: u8 = 2;
const TERM_PAUSED: u8 = 3;

/// The longest path the flow level takes (a k-ary fat-tree's is 6 ports, a leaf-spine's 4, BCube(n, k)'s
/// 2k + 4 with the two internal links: k <= 2).
pub const MAX_HOPS: usize = 8;
const FROZE_CAP: u32 = u32::MAX;
/// LAS: services within this many wire bits are equal.
const LAS_TIE_BITS: f64 = 1.0;
const NOT_FROZEN: u32 = u32::MAX - 1;
/// Relative tolerance of the incremental update's tests (a resource is saturated within EPS of its capacity;
/// a rate changed by more than EPS of a resource's capacity has changed).
const EPS: f64 = 1e-9;

/// A greedy grant of `r` to a flow of line rate `line`: 0 if below a billionth of the line rate (see
/// `Open::potential`).
#[inline]
fn crumb(r: f64, line: f64) -> f64 {
    if r <= 1e-9 * line {
        0.0
    } else {
        r
    }
}

/// The order of SRPT and criticality order, as a key that sorts as the global pass sorts (`allocate`):
/// the deadline (criticality order), then the bits left at `now` (or the rank, size-unaware), then the id.
/// D3: the order of arrival.
#[inline]
fn order_key(by: Order, f: &Open, now: Ps) -> (Ps, i64, u32) {
    if by == Order::Arrival {
        return (0, f.seq as i64, f.id);
    }
    let d = if by == Order::Srpt { 0 } else { f.deadline };
    let v = if by == Order::Ranked { f.rank } else { f.left_at(now) };
    (d, share_key(v), f.id)
}

/// How `Fluid::update_ordered` orders the flows: not at all (another model), by bits left (SRPT), by deadline
/// then bits left (criticality order, size-aware), by deadline then rank (size-unaware), by arrival (D3's
/// grants, which never reorder).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Order {
    #[default]
    None,
    Srpt,
    Critical,
    Ranked,
    Arrival,
}

impl Open {
    #[inline]
    fn path(&self) -> &[u32] {
        &self.hops[..self.hops_len as usize]
    }

    /// Wire bits left at `now` at the current rate: what `sync` would make `left`, without writing it.
    #[inline]
    fn left_at(&self, now: Ps) -> f64 {
        if now > self.at {
            self.left - self.rate * ((now - self.at) as f64 / 1e12)
        } else {
            self.left
        }
    }

    /// SRPT, criticality order: the rate the flow holds on its resources (its grant; 0 before the first).
    #[inline]
    fn held(&self) -> f64 {
        self.grant.max(0.0)
    }

    /// SRPT, criticality order: the grant the greedy pass gives the flow from what the flows ahead of it leave
    /// on each hop (`ahead`) and its own cap. A grant below a billionth of the line rate is none: float rounding
    /// leaves such crumbs on a resource that the flows ahead use up, and a crumb must not count as a grant
    /// (PDQ's hand-over starts from a grant of 0).
    #[inline]
    fn potential(&self) -> f64 {
        let r = self.ahead[..self.hops_len as usize].iter().fold(self.cap, |a, &b| a.min(b)).max(0.0);
        crumb(r, self.line)
    }

    /// D3: the most its grant may be: its desired rate, up to its line rate (0 without a deadline).
    #[inline]
    fn asks(&self) -> f64 {
        if self.desired > 0.0 {
            self.desired.min(self.line)
        } else {
            0.0
        }
    }

    /// Its index among the hops of its path of resource `l`.
    #[inline]
    fn hop_of(&self, l: u32) -> usize {
        self.path().iter().position(|&x| x == l).unwrap()
    }

    /// The greedy pass grants the flow `r` (SRPT, criticality order). PDQ's hand-over: a flow that was paused
    /// (not a new one) and is granted a rate holds it from now, but its data follows `gap` later (its probe's
    /// round trip; the link idles meanwhile), so its rate stays 0 until `wake`.
    #[inline]
    fn take_grant(&mut self, r: f64, paused: bool, now: Ps) {
        self.grant = r;
        self.rate = r;
        if self.gap > 0 && r > 0.0 {
            if paused {
                self.wake = now + self.gap;
            }
            if self.wake > now {
                self.rate = 0.0;
            }
        }
    }

    /// Bring `left`, `allow` and `sent` to `now` at the current rate.
    #[inline]
    fn sync(&mut self, now: Ps) {
        if now > self.at {
            let bits = self.rate * ((now - self.at) as f64 / 1e12);
            self.left -= bits;
            self.allow -= bits;
            self.sent += bits;
            self.at = now;
        }
    }

    /// The flow's next own event (last bit, window used up, a threshold passed, the next round, D3's next
    /// request, PDQ's data after a hand-over, its criticality's next step, giving up); its state must be up to
    /// date at `now`.
    fn next_event(&self, now: Ps, th_bits: &[f64]) -> Ps {
        let mut next = self.round_at.min(self.req_at).min(self.give_up_at(now)).min(self.catch_at);
        if self.wake > now {
            next = next.min(self.wake);
        }
        if self.rate > 0.0 {
            next = next.min(after(now, self.left, self.rate));
            if self.round_at != NEVER && self.allow > 0.0 {
                next = next.min(after(now, self.allow, self.rate));
            }
            if let Some(&th) = th_bits.get(self.class as usize) {
                next = next.min(after(now, (th - self.sent).max(0.0), self.rate));
            }
            if self.tag_at.is_finite() {
                next = next.min(after(now, (self.tag_at - self.sent).max(0.0), self.rate));
            }
            if self.rank_bits > 0.0 {
                next = next.min(after(now, ((self.rank + 1.0) * self.rank_bits - self.sent).max(0.0), self.rate));
            }
        }
        next
    }

    /// When the flow gives up at its current rate (`now` if it does now; NEVER if it never does); its state
    /// must be up to date at `now`. At line rate L with B bits left and rate r, it cannot make it once
    /// t + B(t) / L > deadline, B(t) falling at r: from now + (slack - B / L) / (1 - r / L) on (rounded to the
    /// next picosecond, so that the test at that time holds).
    fn give_up_at(&self, now: Ps) -> Ps {
        if self.term == TERM_NEVER {
            return NEVER;
        }
        if now >= self.deadline {
            return now;
        }
        if self.term == TERM_DEADLINE {
            return self.deadline;
        }
        let slack = (self.deadline - now) as f64;
        let mut need = self.left / self.line * 1e12;
        if self.term == TERM_PAUSED && self.rate <= 0.0 {
            need += self.rtt as f64;
        }
        if need > slack {
            return now;
        }
        let fall = 1.0 - self.rate / self.line;
        if fall <= 1e-12 {
            return self.deadline;
        }
        let t = ((slack - need) / fall).floor() + 1.0;
        if t < (self.deadline - now) as f64 {
            now + t as Ps
        } else {
            self.deadline
        }
    }
}

/// Resources: ports, or pooled sets of ports under spraying; built as flows first use them.
#[derive(Default)]
struct Resources {
    capacity: Vec<f64>,
    /// Per resource: whether flows' paths list it (false: its constraint is implied by their first and last
    /// hops, `Implied`), and whether to look (false keeps every resource; for tests).
    kept: Vec<bool>,
    prune: bool,
    implied: Option<Implied>,
    ids: BTreeMap<Vec<u32>, u32>,
    /// A single port's resource (u32::MAX until used).
    port: Vec<u32>,
    /// Under spraying: the pooled resources past the source's NIC, by (the NIC's switch, destination), so that
    /// an arrival does not walk the routes again (at most switches x hosts entries).
    pooled: HashMap<(u32, u32), Box<[u32]>>,
}

impl Resources {
    fn id(&mut self, ports: Vec<u32>, net: &Network) -> u32 {
        if let Some(&id) = self.ids.get(&ports) {
            return id;
        }
        let id = self.capacity.len() as u32;
        let capacity = ports.iter().map(|&p| net.ports[p as usize].rate_bps as f64).sum();
        let implied = self.prune && self.implied.get_or_insert_with(|| Implied::new(net)).holds(net, &ports, capacity);
        self.capacity.push(capacity);
        self.kept.push(!implied);
        self.ids.insert(ports, id);
        id
    }

    fn of_port(&mut self, port: u32, net: &Network) -> u32 {
        if self.port.len() <= port as usize {
            self.port.resize(net.ports.len().max(port as usize + 1), u32::MAX);
        }
        if self.port[port as usize] == u32::MAX {
            self.port[port as usize] = self.id(vec![port], net);
        }
        self.port[port as usize]
    }
}

/// Which resources cannot bind: a resource no more than the sources that can send through it can fill (the sum
/// of their NICs' rates), or no more than the destinations that can receive through it can drain (the sum of the
/// rates of their last hops), is never over its capacity in any allocation that keeps the flows' first and last
/// hops within theirs, and every flow's path keeps those. Its constraint is implied by theirs, so leaving it out
/// of the flows' paths leaves the feasible rates, and with them every allocation rule's rates, as they are (a
/// greedy grant's minimum over the path is never reached there alone; max-min's fair point is a function of the
/// feasible set), while the updates touch fewer resources per flow. A fabric of full bisection under spraying
/// (the leaf-spine's and fat-tree's pooled uplinks and downlinks, whose capacity equals their hosts') keeps only
/// the hosts' links: on the reference leaf-spine (DCTCP, 20,000 flows) the paths fall from 4 resources to 2 and
/// the engine's time by a fifth, with every flow's FCT bit-identical. Under ECMP a single port is kept unless its
/// rate covers all its sources or destinations.
///
/// Who can send or receive through a port is over-approximated from the routing tables (which depend only on the
/// destination's edge switch): the destinations are the hosts of every edge switch towards which the port is a
/// candidate of its switch; the sources, those from which a walk back along the candidate ports towards that
/// edge switch reaches the port's switch. A bigger set only makes a resource look less bound, so the test errs
/// towards keeping it. Ports leaving or entering a host (first and last hops) are always kept: they are what
/// the bound rests on.
struct Implied {
    /// Per node, the ports into it; per edge switch (a switch with hosts), one of its hosts (whose routes stand for
    /// all of them) and its hosts; the visit stamps of the walk.
    into: Vec<Vec<u32>>,
    edges: Vec<(u32, Vec<u32>)>,
    seen: Vec<u32>,
    counted: Vec<u32>,
    stamp: u32,
    stack: Vec<u32>,
}

impl Implied {
    fn new(net: &Network) -> Self {
        let mut into = vec![Vec::new(); net.nodes.len()];
        for (p, port) in net.ports.iter().enumerate() {
            into[port.peer as usize].push(p as u32);
        }
        let mut by_switch: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
        for h in 0..net.hosts {
            by_switch.entry(net.ports[net.host_port[h as usize] as usize].peer).or_default().push(h);
        }
        let edges = by_switch.into_values().map(|hosts| (hosts[0], hosts)).collect();
        let (seen, counted) = (vec![0; net.nodes.len()], vec![0; net.hosts as usize]);
        Implied { into, edges, seen, counted, stamp: 0, stack: Vec::new() }
    }

    /// Whether a resource of `ports` (their rates summing to `capacity`) cannot bind.
    fn holds(&mut self, net: &Network, ports: &[u32], capacity: f64) -> bool {
        let owner = |p: u32| net.ports[p as usize].owner;
        let peer = |p: u32| net.ports[p as usize].peer;
        if ports.iter().any(|&p| net.is_host(owner(p)) || net.is_host(peer(p))) {
            return false;
        }
        let towards = |e: &(u32, Vec<u32>)| ports.iter().any(|&p| net.candidates(owner(p), e.0).contains(&p));
        // what the destinations can drain
        let mut sum = 0.0;
        for e in &self.edges {
            if towards(e) {
                for &h in &e.1 {
                    sum += self.into[h as usize].iter().map(|&q| net.ports[q as usize].rate_bps as f64).sum::<f64>();
                }
                if sum > capacity {
                    break;
                }
            }
        }
        if sum <= capacity {
            return true;
        }
        // what the sources can fill: a walk back from the ports' switches along the ports that lead towards
        // each destination switch
        self.stamp = self.stamp.wrapping_add(1);
        let hosts_stamp = self.stamp;
        let mut sum = 0.0;
        for e in &self.edges {
            if !towards(e) {
                continue;
            }
            self.stamp = self.stamp.wrapping_add(1);
            let walk = self.stamp;
            self.stack.clear();
            for &p in ports {
                let u = owner(p);
                if self.seen[u as usize] != walk && net.candidates(u, e.0).contains(&p) {
                    self.seen[u as usize] = walk;
                    self.stack.push(u);
                }
            }
            while let Some(w) = self.stack.pop() {
                for &q in &self.into[w as usize] {
                    let x = owner(q);
                    if net.is_host(x) {
                        if self.counted[x as usize] != hosts_stamp {
                            self.counted[x as usize] = hosts_stamp;
                            sum += net.ports[q as usize].rate_bps as f64;
                            if sum > capacity {
                                return false;
                            }
                        }
                    } else if self.seen[x as usize] != walk && net.candidates(x, e.0).contains(&q) {
                        self.seen[x as usize] = walk;
                        self.stack.push(x);
                    }
                }
            }
        }
        true
    }
}

/// Run `flows` at the flow level (see the module docs).
pub fn run(cfg: &Config, flows: &FlowSet) -> Result<RunOutput, FlowError> {
    run_pruned(cfg, flows, true)
}

/// `run`, leaving out of the flows' paths the resources that cannot bind (`Implied`) when `prune` (false: every
/// resource kept, to test that it changes nothing).
fn run_pruned(cfg: &Config, flows: &FlowSet, prune: bool) -> Result<RunOutput, FlowError> {
    let wall = std::time::Instant::now();
    let Some(model) = model_of(cfg.scheme.name) else {
        let have: Vec<&str> = SCHEMES.iter().map(|s| s.0).collect();
        return Err(FlowError(format!(
            "run.level = \"flow\": scheme {} has no flow-level model yet (the flow level has: {})",
            cfg.scheme.name.as_str(),
            have.join(", ")
        )));
    };
    if flows.gen_rate_bps.iter().any(|&r| r != crate::flows::NO_RATE) {
        return Err(FlowError(
            "run.level = \"flow\": flows with a data generation rate (gen_rate_bps) are not modelled at the flow \
             level yet; run them at the packet level"
                .into(),
        ));
    }
    // the packet level's ECMP salts: the first draw of the same seeder (as engine::ideal_fcts)
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
    let window = matches!(
        cfg.scheme.name,
        SchemeName::Tcp
            | SchemeName::Dctcp
            | SchemeName::L2dct
            | SchemeName::Pfabric
            | SchemeName::Las
            | SchemeName::Pias
            | SchemeName::Qclimb
            | SchemeName::Rax
            | SchemeName::RaxPlus
    );
    let tags = Tags::new(cfg, flows)?;
    let setup_rtts = u64::from(t.handshake && window)
        + u64::from(matches!(cfg.scheme.name, SchemeName::Rcp | SchemeName::D3) || cfg.scheme.name.is_pdq());
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
    let mut results = FlowResults::new(n);
    let mut stats = RunStats { flows: n as u64, threads: 1, ..RunStats::default() };
    let mut res = Resources { prune, ..Resources::default() };

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
        _ => Fluid::default(),
    };
    let ordered = fl.by != Order::None;
    let mut now: Ps = 0;
    loop {
        // the next event: an arrival, the end of a set-up, a flow's own event (its last bit, its window used up,
        // a threshold passed, a new round)
        let mut next = independent.get(next_independent).map_or(NEVER, |&i| flows.start_ps[i as usize]);
        next = next.min(ready.peek().map_or(NEVER, |r| r.0 .0)).min(held.peek().map_or(NEVER, |r| r.0 .0));
        next = next.min(events.peek().map_or(NEVER, |e| e.0));
        if next == NEVER || next > limit {
            stats.hit_time_limit = next != NEVER;
            break;
        }
        now = next;
        stats.events += 1;
        fl.begin();
        fl.now = now;
        // the flows' own events: completions, slow start's rounds, thresholds
        while let Some((at, k)) = events.peek() {
            if at > now {
                break;
            }
            events.remove(k);
            let f = &mut fl.flows[k as usize];
            f.sync(now);
            if f.left <= 1e-6 || (f.rate > 0.0 && f.left / f.rate * 1e12 < 1.0) {
                let (id, tail) = (f.id as usize, f.tail);
                results.finish_ps[id] = now + tail;
                results.sender_done_ps[id] = now;
                results.bytes_sent[id] = flows.size_bytes[id];
                results.bytes_delivered[id] = flows.size_bytes[id];
                stats.flows_finished += 1;
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
                results.terminated[id] = true;
                results.bytes_sent[id] = payload_of(f.sent, mss, header).min(flows.size_bytes[id]);
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
                f.win *= 2.0;
                f.allow = f.win;
                f.round_at = if f.win < f.line * f.rtt as f64 / 1e12 { now + f.rtt } else { NEVER };
            }
            if f.round_at != NEVER && f.allow * 1e12 < f.line {
                f.allow = 0.0; // (less than a picosecond's worth: used up)
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
                f.line
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
        // arrivals (their data starts after the set-up round trips)
        loop {
            // (in order of time, then id, independent flows and children alike)
            let first = independent.get(next_independent).map(|&i| (flows.start_ps[i as usize], i));
            let child = ready.peek().map(|r| r.0);
            let id = match (first, child) {
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
            let hops = net.ecmp_path(src, dst, flow_hash(id, false));
            let hop_list: Vec<(u64, Ps)> =
                hops.iter().map(|&p| (net.ports[p as usize].rate_bps, net.ports[p as usize].delay_ps)).collect();
            let ideal = ideal_fct(&hop_list, size, mss, header);
            let rtt: Ps =
                hop_list.iter().map(|&(r, d)| tx_time(mss + header, r) + tx_time(t.ack_bytes, r) + 2 * d).sum();
            let segs = size.div_ceil(mss as u64).max(1);
            let wire_bits = (size + segs * header as u64) as f64 * 8.0;
            let bottleneck = hop_list.iter().map(|h| h.0).min().unwrap_or(1) as f64;
            let tail = ideal.saturating_sub((wire_bits / bottleneck * 1e12).round() as Ps);
            let path = if spray {
                pooled_path(&net, src, dst, &mut res)
            } else {
                hops.iter().map(|&p| res.of_port(p, &net)).collect()
            };
            let mut line = net.line_rate_bps(src) as f64;
            if window && t.max_cwnd_packets > 0 {
                // a window cap: at most max_cwnd segments per base RTT
                line = line.min(t.max_cwnd_packets as f64 * (mss + header) as f64 * 8.0 / (rtt as f64 / 1e12));
            }
            let ctrl_rtt: Ps = hop_list.iter().map(|&(r, d)| 2 * tx_time(t.ack_bytes, r) + 2 * d).sum();
            let win = t.init_cwnd_packets as f64 * (mss + header) as f64 * 8.0;
            let round_at =
                if window && win < line * rtt as f64 / 1e12 { now + setup_rtts * ctrl_rtt + rtt } else { NEVER };
            results.start_ps[i] = now;
            results.ideal_fct_ps[i] = ideal;
            stats.connections_opened += 1;
            if path.len() > MAX_HOPS {
                // (BCube's paths are bounded up front, by topology.k; a Jellyfish graph's diameter is known only
                // once it is drawn)
                let hint = if matches!(cfg.topology, crate::config::TopologyConfig::Jellyfish(_)) {
                    ": this Jellyfish graph is too wide; give its switches more network ports \
                     (topology.network_ports) or use fewer switches (topology.switches), or run it at the packet \
                     level"
                } else {
                    ""
                };
                return Err(FlowError(format!(
                    "run.level = \"flow\": flow {id} crosses {} ports; the flow level takes at most {MAX_HOPS}{hint}",
                    path.len()
                )));
            }
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
                results.terminated[i] = true;
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
            };
            if model == Model::D3 {
                f.cap = f.asks();
            }
            // (the set-up round trips are a wait before the data: header-only packets both ways)
            let k = fl.insert(f, &res.capacity);
            held.push(Reverse((data_at, k)));
            stats.max_concurrent_flows = stats.max_concurrent_flows.max((fl.flows.len() - fl.free.len()) as u64);
        }
        while let Some(&Reverse((at, k))) = held.peek() {
            if at > now {
                break;
            }
            held.pop();
            fl.start(k, now);
        }
        match model {
            Model::MaxMin => fl.update_max_min(now),
            Model::Mlfq => fl.update_mlfq(now),
            Model::Srpt | Model::Critical { .. } => fl.update_ordered(now),
            Model::D3 => fl.update_d3(now),
            _ => fl.allocate_all(model, now),
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
    }
    // flows still open: unfinished
    stats.sim_time_ps = now;
    stats.wall_seconds = wall.elapsed().as_secs_f64();
    stats.events_per_second = stats.events as f64 / stats.wall_seconds.max(1e-9);
    Ok(RunOutput { results, stats })
}

/// The open flows' next own events: a binary heap of (time, slot), at most one entry per slot, with each slot's
/// place in it, so that rescheduling a flow moves its entry (a heap of stamped entries, before, kept the stale ones
/// until they came up, up to four times the open flows, and paid a push per reschedule and a pop per stale entry).
/// Entries at the same time come out in order of slot, as they did.
#[derive(Default)]
struct Timers {
    heap: Vec<(Ps, u32)>,
    pos: Vec<u32>,
}

impl Timers {
    fn peek(&self) -> Option<(Ps, u32)> {
        self.heap.first().copied()
    }

    /// Slot `k`'s next event at `at` (its entry added or moved).
    fn set(&mut self, k: u32, at: Ps) {
        let ku = k as usize;
        if self.pos.len() <= ku {
            self.pos.resize(ku + 1, u32::MAX);
        }
        let i = self.pos[ku];
        if i == u32::MAX {
            self.heap.push((at, k));
            self.place(self.heap.len() - 1);
        } else {
            self.heap[i as usize].0 = at;
            self.place(i as usize);
        }
    }

    /// Slot `k` has no pending event (nothing if it had none).
    fn remove(&mut self, k: u32) {
        let Some(&i) = self.pos.get(k as usize) else { return };
        if i == u32::MAX {
            return;
        }
        self.pos[k as usize] = u32::MAX;
        let last = self.heap.pop().expect("an entry of a slot with a place");
        if (i as usize) < self.heap.len() {
            self.heap[i as usize] = last;
            self.place(i as usize);
        }
    }

    /// Move the entry at `i` up or down to its place, and record the places of the entries it passes.
    fn place(&mut self, mut i: usize) {
        let e = self.heap[i];
        while i > 0 {
            let parent = (i - 1) / 2;
            if self.heap[parent] <= e {
                break;
            }
            self.heap[i] = self.heap[parent];
            self.pos[self.heap[i].1 as usize] = i as u32;
            i = parent;
        }
        loop {
            let mut c = 2 * i + 1;
            if c >= self.heap.len() {
                break;
            }
            if c + 1 < self.heap.len() && self.heap[c + 1] < self.heap[c] {
                c += 1;
            }
            if self.heap[c] >= e {
                break;
            }
            self.heap[i] = self.heap[c];
            self.pos[self.heap[i].1 as usize] = i as u32;
            i = c;
        }
        self.heap[i] = e;
        self.pos[e.1 as usize] = i as u32;
    }
}

/// QCLIMB's and RAX's tags, functions of a flow's bytes sent (the packet level's rules, `policy`): the tag of
/// the bytes sent so far and the next byte count at which it may change. RAX's remaining time is exact at the
/// flow level when the flow's bytes are all written at its start (no generation rate, which the flow level
/// refuses, and an unbounded send buffer): RAX+'s is its unsent bytes at line rate, RAX's estimate
/// (the copy rate stays at the line rate it starts from: no write is ever sampled) its size plus its unsent
/// bytes at line rate.
enum Tags {
    None,
    /// (`per_byte`: wire bits per payload byte: a segment's headers ride with its payload)
    Qclimb {
        tagging: Tagging,
        thresholds: Vec<u64>,
        slack: u64,
        bounds: Vec<Bounds>,
        per_byte: f64,
    },
    Rax {
        rax: RaxParams,
        size: Vec<u64>,
        per_byte: f64,
    },
}

impl Tags {
    fn new(cfg: &Config, flows: &FlowSet) -> Result<Self, FlowError> {
        let sc = &cfg.scheme;
        let (mss, header) = (cfg.transport.mss_bytes as f64, cfg.transport.header_bytes as f64);
        let per_byte = 8.0 * (mss + header) / mss;
        Ok(match sc.name {
            SchemeName::Qclimb => {
                let n = flows.len();
                let bounds = (0..n)
                    .map(|i| {
                        let size = flows.size_bytes[i];
                        let estimate = flows.estimate_bytes.get(i).copied().unwrap_or(size);
                        let (lower, upper) = match sc.qclimb_info {
                            QclimbInfo::Bounds => (flows.lower_bytes[i], flows.upper_bytes[i]),
                            QclimbInfo::Precise => (size, size),
                            _ => (estimate, estimate),
                        };
                        Bounds { lower, upper, estimate, pias: flows.qclimb.get(i) == Some(&false) }
                    })
                    .collect();
                let tagging = Tagging::from_config(cfg);
                let slack = match tagging {
                    Tagging::Qclimb { slack, .. } => slack,
                    _ => 0,
                };
                Tags::Qclimb { tagging, thresholds: sc.thresholds_bytes.clone(), slack, bounds, per_byte }
            }
            SchemeName::Rax | SchemeName::RaxPlus => {
                if cfg.transport.send_buffer_bytes != 0 {
                    return Err(FlowError(
                        "run.level = \"flow\": RAX's remaining time depends on the bytes written into a bounded send \
                         buffer (transport.send_buffer_bytes), which the flow level does not model; use 0 (unbounded)"
                            .into(),
                    ));
                }
                let rax = RaxParams::from_config(cfg, sc.name == SchemeName::RaxPlus);
                Tags::Rax { rax, size: flows.size_bytes.clone(), per_byte }
            }
            _ => Tags::None,
        })
    }

    /// The number of queues past the first that a tag may name.
    fn queues(&self) -> usize {
        match self {
            Tags::None => 0,
            Tags::Qclimb { thresholds, .. } => thresholds.len(),
            Tags::Rax { rax, .. } => rax.thresholds_ps.len(),
        }
    }

    /// The tag of flow `id` after `sent_wire` bits sent, and the wire bits at which it is due again.
    fn at(&self, id: u32, sent_wire: f64) -> (u8, f64) {
        let i = id as usize;
        match self {
            Tags::None => (0, f64::INFINITY),
            Tags::Qclimb { tagging, thresholds, slack, bounds, per_byte } => {
                let b = (sent_wire / per_byte) as u64;
                let bd = &bounds[i];
                let tag = tagging.priority(0, b, bd);
                // the byte counts where Algorithm 1's tag can change: each threshold passed (alpha + 1), the
                // remaining L - B falling to a threshold, L, L + S, U
                let mut next = u64::MAX;
                let mut see = |c: u64| {
                    if c > b && c < next {
                        next = c;
                    }
                };
                for &a in thresholds {
                    see(a.saturating_add(1));
                    see(bd.lower.saturating_sub(a));
                }
                see(bd.lower);
                see(bd.lower.saturating_add(*slack));
                see(bd.upper);
                let at = if next == u64::MAX { f64::INFINITY } else { next as f64 * per_byte };
                (tag, at)
            }
            Tags::Rax { rax, size, per_byte } => {
                let b = ((sent_wire / per_byte) as u64).min(size[i]);
                let t = |b: u64| {
                    if rax.plus {
                        rax.true_remaining_ps(size[i], size[i], b, 0)
                    } else {
                        rax.estimate_ps(size[i], b, rax.line_rate_bps)
                    }
                };
                let tag = rax.priority(t(b));
                // the remaining time falls at line rate as bytes are sent: the next threshold below it is
                // crossed once T(b) < Q, at b > (T(0) - Q) C / 8e12
                let now_t = t(b);
                let mut next = f64::INFINITY;
                for &q in &rax.thresholds_ps {
                    if q <= now_t {
                        let c = ((t(0) - q) * rax.line_rate_bps / 8e12).floor() + 1.0;
                        if c > b as f64 && c <= size[i] as f64 {
                            next = next.min(c);
                        }
                    }
                }
                (tag, next * per_byte)
            }
        }
    }
}

/// The payload bytes in `wire_bits` (each segment's headers ride with its payload), rounded down.
fn payload_of(wire_bits: f64, mss: u32, header: u32) -> u64 {
    (wire_bits.max(0.0) / 8.0 * mss as f64 / (mss + header) as f64) as u64
}

/// When `bits` at `rate` (bit/s) are sent, from `now` (rounded up to the picosecond); NEVER if not within the
/// clock's range (a rate that float rounding left a hair above zero must not wrap the clock around).
#[inline]
fn after(now: Ps, bits: f64, rate: f64) -> Ps {
    let t = (bits / rate * 1e12).ceil();
    if t.is_finite() && t < (NEVER - now) as f64 {
        now + t as Ps
    } else {
        NEVER
    }
}

/// Under spraying: at each hop, every port a packet of the flow may take, pooled (see the module docs).
fn pooled_path(net: &Network, src: u32, dst: u32, res: &mut Resources) -> Vec<u32> {
    let nic = net.host_port[src as usize];
    let first = net.ports[nic as usize].peer;
    let mut path = vec![res.of_port(nic, net)];
    if let Some(rest) = res.pooled.get(&(first, dst)) {
        path.extend_from_slice(rest);
        return path;
    }
    let mut nodes = vec![first];
    while !(nodes.len() == 1 && nodes[0] == dst) {
        let mut ports: Vec<u32> = nodes.iter().flat_map(|&n| net.candidates(n, dst).iter().copied()).collect();
        ports.sort_unstable();
        ports.dedup();
        let mut next: Vec<u32> = ports.iter().map(|&p| net.ports[p as usize].peer).collect();
        next.sort_unstable();
        next.dedup();
        path.push(res.id(ports, net));
        nodes = next;
        assert!(path.len() <= net.nodes.len(), "routing loop from {src} to {dst}");
    }
    res.pooled.insert((first, dst), path[1..].into());
    path
}

/// The flows (a slab whose slots are reused, so that memory follows the flows open at once, not the flows of
/// the run), the users of each resource, and the reallocation's scratch.
#[derive(Default)]
struct Fluid {
    flows: Vec<Open>,
    free: Vec<u32>,
    /// Slots of the active flows (past their set-up).
    active: Vec<u32>,
    capacity: Vec<f64>,
    /// Active flows on each resource.
    users: Vec<Vec<u32>>,
    /// The current event's stamp.
    epoch: u32,
    /// The set being refilled, the flows to reschedule, the resources that lost a flow this event and the load
    /// they lost.
    set: Vec<u32>,
    resched: Vec<u32>,
    /// The flows activated in this event, and (SRPT, criticality order) the last event's order as (slot, id).
    arrived: Vec<u32>,
    order: Vec<(u32, u32)>,
    removed_links: Vec<u32>,
    removed: Vec<f64>,
    /// Per resource: what the filling has left of it (while dirty in `Fluid::update_max_min`), and the sum of
    /// its users' rates (kept up to date by each update; zero when it has none).
    residual: Vec<f64>,
    load: Vec<f64>,
    fill: FillScratch,
    /// Each resource's capacity (`capacity` is the capacity the current update fills: the same, or under MLFQ
    /// what the more urgent queues leave).
    base: Vec<f64>,
    /// MLFQ (empty otherwise): one layer per queue, its users, loads, removals, capacities and set (see
    /// `Fluid::update_mlfq`); the layer being worked on is swapped into the fields above, and they hold empty
    /// vectors in between.
    layers: Vec<Layer>,
    /// MLFQ: resources where a more urgent queue's load changed in this event (and a stamp per resource), and
    /// those where a queue's capacity changed, which are dirty from the start of its update.
    dirty: Vec<u32>,
    dirty_at: Vec<u32>,
    cap_changed: Vec<u32>,
    /// SRPT and criticality order (`Fluid::update_ordered`; `users` then holds each resource's users in the
    /// order): how flows are ordered, the event's time, the flows to regrant (a heap in the order, keyed at
    /// `now`), the flows whose own event came up (and those whose rank stepped), the flows whose catching up
    /// is recomputed, and the number of swaps so far.
    by: Order,
    now: Ps,
    queue: BinaryHeap<Reverse<(Ps, i64, u32, u32)>>,
    own: Vec<u32>,
    moved: Vec<u32>,
    catchers: Vec<u32>,
    pending: Vec<u32>,
    swaps: u64,
    /// D3 (`Fluid::update_d3`): the fair shares, a max-min state of its own over the same slots (each flow's
    /// rate there is its share, its cap its line rate less its grant, each resource's capacity what the grants
    /// leave), and the number of flows activated so far (the order of arrival). The resources where a grant
    /// moved in this event are in `dirty`.
    shares: Option<Box<Fluid>>,
    arrivals: u64,
    /// D3: per resource, the shares' changes within EPS of the capacity summed since it was last dirty from the
    /// start of an update, and the resources where that sum passed EPS (dirty at the next update).
    drift: Vec<f64>,
    drifted: Vec<u32>,
}

/// One queue of MLFQ, as `Fluid` holds the max-min state of all flows: its flows' users of each resource, their
/// load, what finished or demoted flows removed in this event, the capacity the queue has (what the more
/// urgent queues leave) and the flows to refill.
#[derive(Default)]
struct Layer {
    users: Vec<Vec<u32>>,
    load: Vec<f64>,
    removed: Vec<f64>,
    removed_links: Vec<u32>,
    capacity: Vec<f64>,
    set: Vec<u32>,
}

impl Fluid {
    fn begin(&mut self) {
        if let Some(sh) = self.shares.as_deref_mut() {
            sh.begin();
        }
        self.epoch = self.epoch.wrapping_add(1);
        self.set.clear();
        self.resched.clear();
        self.arrived.clear();
        for &l in &self.removed_links {
            self.removed[l as usize] = 0.0;
        }
        self.removed_links.clear();
        for y in &mut self.layers {
            y.set.clear();
            for &l in &y.removed_links {
                y.removed[l as usize] = 0.0;
            }
            y.removed_links.clear();
        }
    }

    /// MLFQ with `queues` queues: every flow's max-min state lives in the layer of its queue.
    fn layered(queues: usize) -> Self {
        Fluid { layers: (0..queues.max(1)).map(|_| Layer::default()).collect(), ..Fluid::default() }
    }

    /// Swap layer `c` with the fields the max-min code works on (its own inverse).
    fn swap(&mut self, c: u8) {
        let y = &mut self.layers[c as usize];
        std::mem::swap(&mut self.users, &mut y.users);
        std::mem::swap(&mut self.load, &mut y.load);
        std::mem::swap(&mut self.removed, &mut y.removed);
        std::mem::swap(&mut self.removed_links, &mut y.removed_links);
        std::mem::swap(&mut self.capacity, &mut y.capacity);
        std::mem::swap(&mut self.set, &mut y.set);
    }

    /// `activate`, `touch`, `finish` in the flow's layer (MLFQ) or in the one state (the other models).
    fn start(&mut self, k: u32, now: Ps) {
        let c = self.flows[k as usize].class;
        self.in_layer(c, |fl| fl.activate(k, now));
    }

    fn changed(&mut self, k: u32) {
        let c = self.flows[k as usize].class;
        self.in_layer(c, |fl| fl.touch(k));
    }

    fn done(&mut self, k: u32) {
        let c = self.flows[k as usize].class;
        self.in_layer(c, |fl| fl.finish(k));
    }

    #[inline]
    fn in_layer(&mut self, c: u8, op: impl FnOnce(&mut Self)) {
        if self.layers.is_empty() {
            op(self);
        } else {
            self.swap(c);
            op(self);
            self.swap(c);
        }
    }

    /// MLFQ: flow `k` (active) moves from queue `from` to its queue now: it leaves the old layer's users (which
    /// lose its rate, as from a finished flow) and joins the new one's as a flow to fill.
    fn requeue(&mut self, k: u32, from: u8) {
        let to = self.flows[k as usize].class;
        self.swap(from);
        self.detach(k);
        self.swap(from);
        self.swap(to);
        let ep = self.epoch;
        let f = &mut self.flows[k as usize];
        for h in 0..f.hops_len as usize {
            let u = &mut self.users[f.hops[h] as usize];
            f.pos[h] = u.len() as u32;
            u.push(k);
        }
        f.old_rate = 0.0;
        f.mark = ep;
        self.set.push(k);
        self.swap(to);
    }

    /// A new flow in its set-up wait: a slot, not yet on its resources.
    fn insert(&mut self, f: Open, capacity: &[f64]) -> u32 {
        self.reserve(capacity);
        if let Some(sh) = self.shares.as_deref_mut() {
            sh.reserve(capacity);
        }
        match self.free.pop() {
            Some(k) => {
                self.flows[k as usize] = f;
                k
            }
            None => {
                self.flows.push(f);
                (self.flows.len() - 1) as u32
            }
        }
    }

    /// Room for the resources of `capacity` (new ones start with no users, at their full capacity).
    fn reserve(&mut self, capacity: &[f64]) {
        if self.base.len() < capacity.len() {
            self.base.extend_from_slice(&capacity[self.base.len()..]);
            let l = capacity.len();
            if self.layers.is_empty() {
                self.capacity.extend_from_slice(&capacity[self.capacity.len()..]);
                self.users.resize(l, Vec::new());
                self.removed.resize(l, 0.0);
                self.load.resize(l, 0.0);
            }
            for y in &mut self.layers {
                y.capacity.extend_from_slice(&capacity[y.capacity.len()..]);
                y.users.resize(l, Vec::new());
                y.removed.resize(l, 0.0);
                y.load.resize(l, 0.0);
            }
            self.dirty_at.resize(l, 0);
            self.residual.resize(l, 0.0);
            self.fill.count.resize(l, 0);
            self.fill.last.resize(l, u32::MAX);
            self.fill.last_group.resize(l, 0);
            self.fill.users.resize(l, Vec::new());
            self.drift.resize(l, 0.0);
        }
    }

    /// The flow's data starts: it joins its resources' users and the set to refill (SRPT, criticality order:
    /// its place in each resource's order, and the flows to regrant).
    fn activate(&mut self, k: u32, now: Ps) {
        let f = &mut self.flows[k as usize];
        f.at = now;
        f.act = self.active.len() as u32;
        self.active.push(k);
        if self.by != Order::None {
            // (it takes its place in the update, once the swaps due have been made)
            self.arrived.push(k);
            if let Some(sh) = self.shares.as_deref_mut() {
                // D3: its place in the order of arrival, and its slot in the fair shares (no grant yet)
                f.seq = self.arrivals;
                self.arrivals += 1;
                let k_ = k as usize;
                if sh.flows.len() <= k_ {
                    sh.flows.resize(k_ + 1, f.clone());
                }
                sh.flows[k_] = Open { rate: 0.0, cap: f.line, ..f.clone() };
                sh.activate(k, now);
            }
            return;
        }
        let f = &mut self.flows[k as usize];
        for h in 0..f.hops_len as usize {
            let u = &mut self.users[f.hops[h] as usize];
            f.pos[h] = u.len() as u32;
            u.push(k);
        }
        f.old_rate = 0.0;
        f.mark = self.epoch;
        self.set.push(k);
        self.resched.push(k);
        self.arrived.push(k);
    }

    /// Put an active flow whose cap or queue changed in the set to refill.
    fn touch(&mut self, k: u32) {
        let f = &mut self.flows[k as usize];
        if f.mark != self.epoch {
            f.mark = self.epoch;
            f.old_rate = f.rate;
            self.set.push(k);
        }
    }

    /// A flow sent its last bit: off its resources (which lose its rate), its slot freed.
    fn finish(&mut self, k: u32) {
        if self.by != Order::None {
            self.leave(k);
            if let Some(sh) = self.shares.as_deref_mut() {
                sh.finish(k);
                sh.free.clear(); // (its slots are the flows' own)
            }
        } else {
            self.detach(k);
        }
        let f = &mut self.flows[k as usize];
        let a = f.act as usize;
        f.act = u32::MAX;
        f.rate = 0.0;
        f.mark = self.epoch.wrapping_sub(1); // (not in this event's set)
        self.active.swap_remove(a);
        if a < self.active.len() {
            let moved = self.active[a];
            self.flows[moved as usize].act = a as u32;
        }
        self.free.push(k);
    }

    /// Flow `k` leaves its resources' users, which lose its rate.
    fn detach(&mut self, k: u32) {
        let f = &self.flows[k as usize];
        let (hops, pos, rate) = (f.hops, f.pos, f.rate);
        for (h, &l) in hops[..f.hops_len as usize].iter().enumerate() {
            let u = &mut self.users[l as usize];
            let p = pos[h] as usize;
            u.swap_remove(p);
            if p < u.len() {
                let m = &mut self.flows[u[p] as usize];
                let hop = m.path().iter().position(|&x| x == l).unwrap();
                m.pos[hop] = p as u32;
            }
            if rate > 0.0 {
                if self.removed[l as usize] == 0.0 {
                    self.removed_links.push(l);
                }
                self.removed[l as usize] += rate;
                self.load[l as usize] -= rate;
            }
            if u.is_empty() {
                self.load[l as usize] = 0.0;
            }
        }
    }

    /// SRPT, criticality order or D3 under `model`, updated incrementally (`update_ordered`; D3 `update_d3`).
    fn ordered(model: Model) -> Self {
        let by = match model {
            Model::Srpt => Order::Srpt,
            Model::Critical { size_aware: true } => Order::Critical,
            Model::Critical { size_aware: false } => Order::Ranked,
            Model::D3 => Order::Arrival,
            _ => Order::None,
        };
        let shares = (by == Order::Arrival).then(|| Box::new(Fluid::default()));
        Fluid { by, shares, ..Fluid::default() }
    }

    /// Can two flows swap places between events? Only when the order is by bits left, which fall at each flow's
    /// rate (ranks move only at the flow's own events).
    #[inline]
    fn catches(&self) -> bool {
        matches!(self.by, Order::Srpt | Order::Critical)
    }

    /// SRPT, criticality order: flow `k`'s own event came up (its cap may have changed, its hand-over wait ended,
    /// it caught up with the flow ahead of it); `moved`: its rank stepped, so its place in the order moved.
    fn own_event(&mut self, k: u32, moved: bool) {
        if moved {
            self.moved.push(k);
        }
        self.own.push(k);
    }

    /// Flow `k` is part of this event: brought up to date, its grant at the event's start kept (PDQ's
    /// hand-over starts from a grant of 0 there), rescheduled at the end.
    #[inline]
    fn otouch(&mut self, k: u32) {
        let f = &mut self.flows[k as usize];
        if f.mark != self.epoch {
            f.mark = self.epoch;
            f.sync(self.now);
            f.old_rate = f.grant;
            self.set.push(k);
        }
    }

    /// Flow `k` is to be regranted (once, in the order, whatever the number of changes ahead of it).
    fn dirty(&mut self, k: u32) {
        self.otouch(k);
        let f = &mut self.flows[k as usize];
        if !f.queued {
            f.queued = true;
            let (d, v, id) = order_key(self.by, f, self.now);
            self.queue.push(Reverse((d, v, id, k)));
        }
    }

    /// Does what is ahead of flow `k` now give it another grant (by more than float rounding)?
    #[inline]
    fn regrant_due(f: &Open) -> bool {
        (f.potential() - f.held()).abs() > 1e-12 * f.line
    }

    /// Flow `k`'s catching up with the flows ahead of it is to be recomputed at the end of the update.
    #[inline]
    fn recatch(&mut self, k: u32) {
        if !self.catches() {
            return;
        }
        self.otouch(k);
        let f = &mut self.flows[k as usize];
        if f.cstamp != self.epoch {
            f.cstamp = self.epoch;
            self.catchers.push(k);
        }
    }

    /// The flows right behind flow `k` on its resources: their catching up with it is recomputed.
    fn recatch_behind(&mut self, k: u32) {
        if !self.catches() {
            return;
        }
        let f = &self.flows[k as usize];
        let (hops, pos, n) = (f.hops, f.pos, f.hops_len as usize);
        for h in 0..n {
            let u = &self.users[hops[h] as usize];
            if let Some(&g) = u.get(pos[h] as usize + 1) {
                self.recatch(g);
            }
        }
    }

    /// Flow `k` takes its place in the order of each of its resources (a binary search on the keys at `now`),
    /// with what the flows ahead of it leave there; the flows behind it move one place back.
    fn enter(&mut self, k: u32) {
        let (by, now) = (self.by, self.now);
        let key = order_key(by, &self.flows[k as usize], now);
        for h in 0..self.flows[k as usize].hops_len as usize {
            let l = self.flows[k as usize].hops[h];
            let li = l as usize;
            let flows = &self.flows;
            let u = &self.users[li];
            let p = u.partition_point(|&g| order_key(by, &flows[g as usize], now) < key);
            // (what the flows ahead leave, in the order the global pass takes them from the capacity)
            let mut ahead = self.capacity[li];
            for &g in &u[..p] {
                ahead -= flows[g as usize].held();
            }
            self.users[li].insert(p, k);
            for j in p + 1..self.users[li].len() {
                let m = &mut self.flows[self.users[li][j] as usize];
                let hm = m.hop_of(l);
                m.pos[hm] += 1;
            }
            let f = &mut self.flows[k as usize];
            f.pos[h] = p as u32;
            f.ahead[h] = ahead;
            if let Some(&g) = self.users[li].get(p + 1) {
                self.recatch(g);
            }
        }
        self.recatch(k);
    }

    /// Flow `k` leaves the order of each of its resources: the flows behind it get its grant back (those it
    /// moves are regranted) and move one place forward.
    fn leave(&mut self, k: u32) {
        let held = self.flows[k as usize].held();
        if held > 0.0 {
            self.spread(k, -held);
        }
        let f = &self.flows[k as usize];
        let (hops, pos, n) = (f.hops, f.pos, f.hops_len as usize);
        for h in 0..n {
            let (l, p) = (hops[h], pos[h] as usize);
            let li = l as usize;
            self.users[li].remove(p);
            for j in p..self.users[li].len() {
                let m = &mut self.flows[self.users[li][j] as usize];
                let hm = m.hop_of(l);
                m.pos[hm] -= 1;
            }
            if let Some(&g) = self.users[li].get(p) {
                self.recatch(g);
            }
        }
    }

    /// Flow `k`'s grant changed by `delta`: what is left ahead of every flow behind it on its resources moves
    /// by `-delta` (D3: and what the grants leave to the fair shares), and those whose grant that moves are
    /// regranted (a flow held back elsewhere, or below its
    /// cap with room to spare here, is not: its grant does not depend on this resource).
    fn spread(&mut self, k: u32, delta: f64) {
        let f = &self.flows[k as usize];
        let (hops, pos, n) = (f.hops, f.pos, f.hops_len as usize);
        for h in 0..n {
            let (l, p) = (hops[h], pos[h] as usize);
            let li = l as usize;
            // (D3: what the grants leave to the fair shares moved here)
            if self.shares.is_some() && self.dirty_at[li] != self.epoch {
                self.dirty_at[li] = self.epoch;
                self.dirty.push(l);
            }
            for j in p + 1..self.users[li].len() {
                let g = self.users[li][j];
                let m = &mut self.flows[g as usize];
                let hm = m.hop_of(l);
                m.ahead[hm] -= delta;
                if Self::regrant_due(m) {
                    self.dirty(g);
                }
            }
        }
    }

    /// Flow `k` is regranted from what the flows ahead leave it (the greedy pass's step, PDQ's hand-over
    /// included); a change of grant spreads to the flows behind, a change of rate to the catching up of the flow
    /// and of those right behind it.
    fn regrant(&mut self, k: u32) {
        let now = self.now;
        let f = &mut self.flows[k as usize];
        f.queued = false;
        if f.act == u32::MAX {
            return; // (finished after it was queued)
        }
        let r = f.potential();
        let (held, prev, rate) = (f.held(), f.old_rate, f.rate);
        // (as the global pass: paused means paused at the event's start)
        f.take_grant(r, prev == 0.0, now);
        let moved = f.rate != rate;
        if r != held {
            self.spread(k, r - held);
        }
        if moved {
            self.recatch(k);
            self.recatch_behind(k);
        }
    }

    /// Flow `b` caught up with the flow ahead of it on some of its resources: on each, while its key at `now`
    /// (`order_key`, the global pass's comparison: bits left, then id) comes before that of the flow ahead, the
    /// two swap places; each then has the other's grant ahead of it instead of behind, or the other way around.
    /// Only the keys decide, so the order kept is the global pass's at every event: a flow that reaches the
    /// bits left of the one ahead but has the larger id passes it a picosecond later, and if float rounding
    /// leaves it a hair behind at its catching up's time, the next picosecond (`catch_time` is at least one
    /// picosecond from now).
    fn overtake(&mut self, b: u32) {
        let (by, now) = (self.by, self.now);
        self.recatch(b);
        for h in 0..self.flows[b as usize].hops_len as usize {
            let l = self.flows[b as usize].hops[h];
            let li = l as usize;
            loop {
                let p = self.flows[b as usize].pos[h] as usize;
                if p == 0 {
                    break;
                }
                let a = self.users[li][p - 1];
                if order_key(by, &self.flows[b as usize], now) >= order_key(by, &self.flows[a as usize], now) {
                    break;
                }
                self.otouch(a);
                self.users[li].swap(p - 1, p);
                let ha = self.flows[a as usize].hop_of(l);
                let (ga, gb) = (self.flows[a as usize].held(), self.flows[b as usize].held());
                let fa = &mut self.flows[a as usize];
                fa.pos[ha] = p as u32;
                fa.ahead[ha] -= gb;
                let fb = &mut self.flows[b as usize];
                fb.pos[h] = (p - 1) as u32;
                fb.ahead[h] += ga;
                self.swaps += 1;
                if Self::regrant_due(&self.flows[a as usize]) {
                    self.dirty(a);
                }
                if Self::regrant_due(&self.flows[b as usize]) {
                    self.dirty(b);
                }
                self.recatch(a);
                // (the flow now behind `a` may have caught up with it at the same time: ties)
                if let Some(&g) = self.users[li].get(p + 1) {
                    self.recatch(g);
                    self.pending.push(g);
                }
            }
        }
    }

    /// When flow `b` (up to date), at its rate, catches up with the flow ahead of it on one of its resources
    /// (NEVER: it does not): the first time its bits left reach theirs, rounded up to the picosecond (within
    /// float rounding) and at least one picosecond from now (at a tie in bits left, the flow with the larger id
    /// passes a picosecond later). Only a flow faster than the one ahead, with the same deadline (criticality
    /// order), catches up; only neighbours in a resource's order can meet first.
    fn catch_time(&self, b: u32) -> Ps {
        let now = self.now;
        let fb = &self.flows[b as usize];
        let mut t = NEVER;
        for h in 0..fb.hops_len as usize {
            let p = fb.pos[h] as usize;
            if p == 0 {
                continue;
            }
            let fa = &self.flows[self.users[fb.hops[h] as usize][p - 1] as usize];
            if fb.rate <= fa.rate || self.by == Order::Critical && fa.deadline != fb.deadline {
                continue;
            }
            // (a time within a thousandth of a picosecond of a whole one is that one: at a crossing that falls on
            // a picosecond, float rounding must not put the swap a picosecond after it)
            let gap = (fb.left_at(now) - fa.left_at(now)).max(0.0);
            let dt = ((gap / (fb.rate - fa.rate) * 1e12) - 1e-3).ceil().max(1.0);
            if dt < (NEVER - now) as f64 {
                t = t.min(now + dt as Ps);
            }
        }
        t
    }

    /// SRPT and criticality order, incrementally. The greedy pass (`allocate`) gives each flow, in the order,
    /// the least of its cap and what the flows ahead of it leave on each of its resources: a flow's grant
    /// depends only on the flows ahead of it on its resources. So each resource keeps its users in the order
    /// (`users`), each flow what the flows ahead leave it on each hop (`ahead`, moved by every change of grant
    /// ahead: no sum over the flows ahead is taken but at a flow's arrival), and an event regrants only the
    /// flows it can move: those it changed (an arrival, a cap, a hand-over's end, a rank's step, a swap), then,
    /// in the order (a heap keyed at `now`), every flow behind a change of grant whose grant that change moves.
    /// A flow held back elsewhere, or below its cap with room to spare on the resource, is not regranted, so a
    /// change spreads only through the resources that bind. The result is the greedy pass's in the order kept
    /// (`incremental_order_equals_global` tests it after every event, swaps included).
    ///
    /// The order moves between events: bits left fall at each flow's rate, so a flow behind a slower one on a
    /// resource (in SRPT, often one held back elsewhere at rate 0, its bits left frozen) catches up with it.
    /// The global pass re-sorted at each event, so such a pass took effect only at the next event of any kind;
    /// here it is an event of its own (`Open::catch_at`, the earliest over the flow's resources of the time it
    /// reaches the bits left of the flow ahead, as LAS's catching up), where the two swap places
    /// (`overtake`). This is more exact than before and moves results slightly (docs/flow-level.md). Ranks
    /// (size-unaware criticality) and deadlines do not move between events; a rank's step moves the flow in
    /// the order at its own event (it leaves the order and enters it again).
    ///
    /// Choices:
    /// - The order kept is the keys' order at `now` (`order_key`, the sort's comparison: ties in bits left by
    ///   id). A swap is made when the keys say so, never forced, so a flow a float's hair behind at its
    ///   catching up's time passes a picosecond later; the catching up's time is rounded so that a crossing on
    ///   a whole picosecond is not put one after it. Several flows can meet at the same picosecond (a tie): a
    ///   swap checks whether the flow that comes right behind the one passed has caught up with it too.
    /// - In an event the swaps due come first, then the flows whose rank stepped leave the order (all of them)
    ///   and enter it again, then the arrivals enter it (a binary search on the keys, which needs the rest in
    ///   order), then the regrants.
    /// - A flow at rate 0 keeps its bits left (lazy progress: `Open::sync` moves nothing), so it never catches
    ///   up; a flow behind it at a positive rate does.
    /// - PDQ's hand-over is the global pass's: the grant a flow had at the event's start (`old_rate`, kept
    ///   when it is first touched) says whether it was paused; a flow paused and granted now holds its grant
    ///   (the flows behind see it taken) and sends from `wake`, whose own event regrants it.
    /// - Processing the heap in the order makes each flow's regrant final once (the flows ahead are done);
    ///   a flow met again (float rounding in the keys) is simply regranted again, which gives the same fixed
    ///   point: the greedy pass's, as the resources' orders agree with one order.
    /// - A change of grant within 1e-12 of the line rate does not regrant the flows behind (`regrant_due`), so
    ///   float rounding in `ahead` (summed by differences) does not ripple; and a grant below 1e-9 of the line
    ///   rate is none, in the global pass too (`crumb`).
    /// - No allocation or map look-up per event in the steady state: the heap and the lists are reused, a flow
    ///   holds its index in each resource's order (`pos`), kept as flows enter, leave and swap.
    ///
    /// On the reference scenario (pFabric, 20,000 flows) an event regrants 1.8 flows on average and moves what is
    /// left ahead of 41 flows behind them; the engine takes 0.29 s against 0.97 s for the per-event pass (median
    /// of 5 on a busy machine; docs/flow-level.md), with 87,467 events against 52,965 (25,015 swaps).
    fn update_ordered(&mut self, now: Ps) {
        self.now = now;
        // the swaps due first, so that the order kept is the order at `now` where the arrivals and the ranks
        // that stepped take their places; a swap can make a flow the neighbour of one it caught up with at the
        // same time (a tie in bits left), so the flow behind the one passed is checked too
        if self.catches() {
            self.pending.clear();
            for j in 0..self.own.len() {
                let k = self.own[j];
                let f = &self.flows[k as usize];
                if f.act != u32::MAX && f.catch_at <= now {
                    self.pending.push(k);
                }
            }
            let mut j = 0;
            while j < self.pending.len() {
                let k = self.pending[j];
                j += 1;
                if self.flows[k as usize].act != u32::MAX {
                    self.overtake(k);
                }
            }
        }
        for j in 0..self.moved.len() {
            let k = self.moved[j];
            if self.flows[k as usize].act == u32::MAX {
                continue;
            }
            self.otouch(k);
            self.leave(k);
            let f = &mut self.flows[k as usize];
            if f.grant > 0.0 {
                f.grant = 0.0; // (given back to the flows behind; regranted where it enters)
            }
        }
        // (all of them out before any enters: the binary search needs the others in order)
        for j in 0..self.moved.len() {
            let k = self.moved[j];
            if self.flows[k as usize].act != u32::MAX {
                self.enter(k);
            }
        }
        for j in 0..self.arrived.len() {
            let k = self.arrived[j];
            self.enter(k);
            self.dirty(k);
        }
        for j in 0..self.own.len() {
            let k = self.own[j];
            if self.flows[k as usize].act != u32::MAX {
                self.dirty(k);
            }
        }
        self.moved.clear();
        self.own.clear();
        while let Some(Reverse((_, _, _, k))) = self.queue.pop() {
            self.regrant(k);
        }
        for j in 0..self.catchers.len() {
            let k = self.catchers[j];
            if self.flows[k as usize].act != u32::MAX {
                self.flows[k as usize].catch_at = self.catch_time(k);
            }
        }
        self.catchers.clear();
        self.resched.extend_from_slice(&self.set);
    }

    /// Every active flow's rate from scratch (LAS; SRPT, criticality order and D3 as the runs computed them
    /// before `update_ordered` and `update_d3`): each flow brought up to date first (the order depends on
    /// the bits left or sent), those whose rate changes rescheduled.
    fn allocate_all(&mut self, model: Model, now: Ps) {
        for &k in &self.active {
            let f = &mut self.flows[k as usize];
            f.sync(now);
            f.old_rate = f.rate;
        }
        self.set.clear();
        if matches!(model, Model::Srpt | Model::Critical { .. } | Model::D3 | Model::Las) {
            // the last event's order (its flows still open) and the flows that arrived: nearly sorted, which the
            // sort finds in close to linear time (D3: the order of arrival)
            let flows = &self.flows;
            self.set.extend(self.order.iter().filter(|&&(k, id)| {
                let f = &flows[k as usize];
                f.act != u32::MAX && f.id == id
            }).map(|e| e.0));
            self.set.extend_from_slice(&self.arrived);
        } else {
            self.set.extend_from_slice(&self.active);
        }
        allocate(model, &mut self.flows, &self.set, &self.capacity, &mut self.residual, &mut self.fill, now);
        if matches!(model, Model::Srpt | Model::Critical { .. }) {
            self.order.clear();
            self.order.extend(self.fill.order.iter().map(|&k| (k, self.flows[k as usize].id)));
        } else if model == Model::Las {
            self.order.clear();
            self.order.extend(self.fill.sorted.iter().map(|&k| (k, self.flows[k as usize].id)));
        } else if model == Model::D3 {
            self.order.clear();
            self.order.extend(self.set.iter().map(|&k| (k, self.flows[k as usize].id)));
        }
        for &k in &self.active {
            let f = &self.flows[k as usize];
            // (a PDQ flow waiting for its data to follow a grant is due at the end of the wait; a LAS flow at its
            // catching up)
            if f.rate != f.old_rate || f.wake > now || f.catch_at != NEVER {
                self.resched.push(k);
            }
        }
    }

    /// D3, incrementally, in its two stages. The grants are a greedy pass in the order of arrival (each flow
    /// granted the least of what it asks, `Open::asks`, and what the flows ahead leave on its path): the greedy
    /// pass of `update_ordered` in an order that never moves, so an event regrants only the flows it changed (an
    /// arrival, a new request, a line rate) and those behind a change of grant that it moves. The fair shares are
    /// max-min (`update_max_min`, in the state `shares`) on what the grants leave, each flow capped at its line
    /// rate less its grant: a flow whose grant moved has a new cap (refilled as a changed flow), and a resource
    /// whose grants moved (`spread` lists it in `dirty`) has a new capacity for the shares, summed afresh from
    /// its users' grants (so that no rounding builds up); where it was full or is over its new capacity, the
    /// resource is dirty from the start of the shares' update, as a queue's under MLFQ. A flow's rate is its
    /// grant plus its share. The same rates as the global pass (`allocate`, `incremental_d3_equals_global`); the
    /// shares' moves within EPS of a resource's capacity are summed per resource (`drift`), so that D3's small
    /// steps each RTT do not add up.
    ///
    /// On the 144-host leaf-spine at load 0.6 with deadlines on 40% of the flows (ECMP, 20,000 flows), an
    /// event regrants 0.9 flows and refills the shares of 29 (in 2.4 fillings), where the global pass filled
    /// the 359 open on average; the engine takes 8.3 s against 14.5 s (5,000 flows: 0.61 s against 1.88 s),
    /// every flow's finish within 5 ps of the global pass's (docs/flow-level.md). What is left is the filling:
    /// a request moves a grant, so the shares of every user of its path's full resources.
    fn update_d3(&mut self, now: Ps) {
        self.update_ordered(now);
        let mut sh = self.shares.take().expect("D3's fair shares");
        // each flow regranted: the cap on its share
        for &k in &self.set {
            let f = &self.flows[k as usize];
            if f.act == u32::MAX {
                continue;
            }
            let cap = f.line - f.held();
            if sh.flows[k as usize].cap != cap {
                sh.touch(k);
                sh.flows[k as usize].cap = cap;
            }
        }
        // each resource whose grants moved: the capacity left to the shares; and those where small changes of
        // shares added up
        sh.cap_changed.clear();
        for &l in &self.drifted {
            self.drift[l as usize] = 0.0;
        }
        sh.cap_changed.append(&mut self.drifted);
        for &l in &self.dirty {
            let li = l as usize;
            let granted: f64 = self.users[li].iter().map(|&g| self.flows[g as usize].held()).sum();
            let base = self.base[li];
            let mut cap = base - granted;
            if cap < EPS * base {
                cap = 0.0;
            }
            // (as MLFQ's queues: a resource below its capacity for the shares before, and below it after, is no
            // flow's bottleneck. A change within the tolerance is not taken: the capacity kept stays within it
            // of the grants' leftover, where many small changes taken one by one, none refilled, would drift
            // from it unseen, a new request each RTT moving a grant by float rounding)
            let (old, load, tol) = (sh.capacity[li], sh.load[li], EPS * base);
            if (cap - old).abs() > tol {
                let was_full = load + sh.removed[li] >= old - tol;
                if was_full || load > cap - tol {
                    sh.cap_changed.push(l);
                }
                sh.capacity[li] = cap;
            }
        }
        self.dirty.clear();
        sh.update_max_min(now);
        sh.cap_changed.clear();
        // a share that moved within EPS of a resource's capacity (as a capacity change within it, not taken
        // above) is harmless once, but D3's requests move grants, and so shares, by small steps each RTT, which
        // add up. Where their sum passes EPS, the resource is dirty at the next update
        for &k in &sh.set {
            let f = &sh.flows[k as usize];
            let d = (f.rate - f.old_rate).abs();
            if d == 0.0 {
                continue;
            }
            for &l in f.path() {
                let li = l as usize;
                let tol = EPS * self.base[li];
                if d <= tol {
                    let was = self.drift[li];
                    self.drift[li] += d;
                    if was <= tol && self.drift[li] > tol {
                        self.drifted.push(l);
                    }
                }
            }
        }
        // rates: grant plus share, for the flows whose share moved (brought up to date first) and those regranted
        // (up to date since they were touched; already to reschedule)
        for &k in &sh.resched {
            let f = &mut self.flows[k as usize];
            if f.act != u32::MAX {
                f.sync(now);
                f.rate = f.held() + sh.flows[k as usize].rate;
                self.resched.push(k);
            }
        }
        for &k in &self.set {
            let f = &mut self.flows[k as usize];
            if f.act != u32::MAX {
                f.rate = f.held() + sh.flows[k as usize].rate;
            }
        }
        self.shares = Some(sh);
    }

    /// MLFQ, incrementally: queue by queue from the most urgent, the max-min update of that queue's layer on
    /// the capacity the more urgent queues leave. A queue's capacity changes only on the resources where a more
    /// urgent queue's load changed in this event (its flows that changed rate, finished, left or joined it):
    /// those are dirty from the start of that queue's max-min update where the queue filled the resource or is
    /// over its new capacity there. The same allocation as a global recomputation queue by queue (`incremental_mlfq_equals_global`).
    fn update_mlfq(&mut self, now: Ps) {
        self.dirty.clear();
        let ep = self.epoch;
        for c in 0..self.layers.len() {
            self.swap(c as u8);
            // this queue's capacity where a more urgent queue's load moved
            self.cap_changed.clear();
            for j in 0..self.dirty.len() {
                let li = self.dirty[j] as usize;
                let above: f64 = self.layers[..c].iter().map(|y| y.load[li]).sum();
                let mut cap = self.base[li] - above;
                if cap < EPS * self.base[li] {
                    cap = 0.0;
                }
                // (a resource below its capacity before the event, flows that left it counted, and below it after
                // has no flow's bottleneck: nothing to refill)
                // (a change within the tolerance is not taken, as under D3: the capacity kept stays within it of
                // what the queues above leave, where small changes each taken, none refilled, could add up)
                let (old, load, tol) = (self.capacity[li], self.load[li], EPS * self.base[li]);
                if (cap - old).abs() > tol {
                    let was_full = load + self.removed[li] >= old - tol;
                    if was_full || load > cap - tol {
                        self.cap_changed.push(li as u32);
                    }
                    self.capacity[li] = cap;
                }
            }
            self.update_max_min(now);
            // where this queue's load moved: its flows that changed rate, and those that left it
            for j in 0..self.set.len() {
                let f = &self.flows[self.set[j] as usize];
                if f.rate != f.old_rate {
                    for &l in f.path() {
                        if self.dirty_at[l as usize] != ep {
                            self.dirty_at[l as usize] = ep;
                            self.dirty.push(l);
                        }
                    }
                }
            }
            for &l in &self.removed_links {
                if self.dirty_at[l as usize] != ep {
                    self.dirty_at[l as usize] = ep;
                    self.dirty.push(l);
                }
            }
            self.swap(c as u8);
        }
        self.cap_changed.clear();
    }

    /// Max-min fairness as one progressive filling of all the active flows, kept from one event to the next
    /// and resumed where the event changed it. At rest every flow is frozen at its rate by `froze`: a resource
    /// where it has the most and which is full (its bottleneck), or its own cap. Progressive filling freezes
    /// flows in order of rate, so an event's filling is the last one up to where the event moves it: a resource
    /// whose capacity and users are unchanged, and whose users kept their rates below its own level, fills at
    /// the same share and freezes the same flows (they are replayed at their rates, in order). The others are
    /// dirty and filled again: from the start those of the flows that arrived or changed cap, of the flows that
    /// finished, and whose capacity moved; then, in order of rate, those of any flow frozen at another rate than
    /// before, or still unfrozen past its rate (its bottleneck dirty). A resource that becomes dirty at a level
    /// unfreezes its users frozen at that level or above (their turn in the filling is still to come), and its
    /// share is summed afresh from its capacity and its users below the level. The result is a progressive
    /// filling of all the flows from scratch, up to rounding (`incremental_equals_global`, which fails when any
    /// one of these ways to turn dirty is left out), and costs what the event moves: on the reference scenario
    /// an event makes 7 resources dirty, unfreezes 9 flows and freezes 6 anew (6 at another rate), where a
    /// global recomputation fills the 339 flows open on average. Before, the update filled a set of flows on
    /// what the others left, grew it by tests where that differed from the global filling, and filled it again
    /// (1.8 fillings and 21 flows filled per event): 860 M instructions on the reference, now 571 M.
    fn update_max_min(&mut self, now: Ps) {
        let ep = self.epoch;
        let Fluid { flows, users, capacity, residual, fill: s, set, removed_links, cap_changed, .. } = self;
        s.stamp = s.stamp.wrapping_add(1);
        if s.took.len() < flows.len() {
            s.took.resize(flows.len(), 0.0);
            s.state.resize(flows.len(), DONE);
            s.state_at.resize(flows.len(), 0);
        }
        if s.touch_at.len() < capacity.len() {
            s.touch_at.resize(capacity.len(), 0);
        }
        let mut heap = std::mem::take(&mut s.heap);
        heap.clear();
        s.caps.clear();
        s.replay.clear();
        let mut p = Pass { flows, users, capacity, residual, s, set, heap, ep, now, level: 0.0 };
        // the flows that arrived or changed cap are filled again; their resources, those of the finished flows
        // and those whose capacity moved are dirty from the start
        for j in 0..p.set.len() {
            let k = p.set[j];
            p.set_state(k, ADDED);
            p.cap_candidate(k);
        }
        for j in 0..p.set.len() {
            let k = p.set[j];
            p.dirty_around(k);
        }
        for &l in removed_links.iter().chain(cap_changed.iter()) {
            if p.s.touch_at[l as usize] != p.s.stamp {
                p.dirty(l);
            }
        }
        loop {
            // the next freezing: a flow replayed at its rate, a cap, or the least share of a dirty resource
            while let Some(&Reverse((_, k))) = p.s.replay.peek() {
                if p.state(k) == UNDONE {
                    break;
                }
                p.s.replay.pop();
            }
            let replay = p.s.replay.peek().map_or(f64::INFINITY, |&Reverse((key, _))| key_share(key));
            while let Some(&Reverse((_, k))) = p.s.caps.peek() {
                if p.unfrozen(k) {
                    break;
                }
                p.s.caps.pop();
            }
            let cap = p.s.caps.peek().map_or(f64::INFINITY, |&Reverse((key, _))| key_share(key));
            let below_top = p.heap.peek().is_none_or(|&Reverse((key, _))| replay <= key_share(key));
            let (share, link) = if replay < f64::INFINITY && replay <= cap && below_top {
                (f64::INFINITY, u32::MAX)
            } else {
                least_share(&mut p.heap, p.residual, &p.s.count)
            };
            if replay < f64::INFINITY && replay <= cap && replay <= share {
                let Reverse((_, k)) = p.s.replay.pop().unwrap();
                p.level = replay;
                let (rate, l) = (p.flows[k as usize].rate, p.flows[k as usize].froze);
                if l == FROZE_CAP || l < NOT_FROZEN && p.s.touch_at[l as usize] != p.s.stamp {
                    // (its bottleneck is clean: frozen there at its rate, as before)
                    p.freeze(k, rate, l);
                } else {
                    // (its bottleneck is dirty: from here it departs from its rate, and its resources see it)
                    p.dirty_around(k);
                }
            } else if cap < f64::INFINITY && cap <= share {
                let Reverse((_, k)) = p.s.caps.pop().unwrap();
                p.level = cap;
                p.refreeze(k, cap, FROZE_CAP);
            } else if link != u32::MAX {
                p.heap.pop();
                p.level = share;
                // (the users' lists do not change during the update: read in place)
                let users = p.users;
                for &k in &users[link as usize] {
                    if p.unfrozen(k) {
                        p.refreeze(k, share, link);
                    }
                }
            } else {
                break;
            }
        }
        // (every dirty resource has frozen all its users, and every flow of the set is frozen anew: a flow kept
        // frozen by one dirty resource and unfrozen by another would have left a count below zero)
        debug_assert!(p.set.iter().all(|&k| p.state(k) == DONE));
        debug_assert!(p.set.iter().all(|&k| p.flows[k as usize].path().iter().all(|&l| {
            p.s.touch_at[l as usize] != p.s.stamp || p.s.count[l as usize] == 0
        })));
        let Pass { s, heap, .. } = p;
        s.heap = heap;
        // (the flows whose rate moved: their resources' load, and their next events)
        for &k in self.set.iter() {
            let f = &self.flows[k as usize];
            if f.rate != f.old_rate {
                for &l in f.path() {
                    self.load[l as usize] += f.rate - f.old_rate;
                }
                self.resched.push(k);
            }
        }
    }


}

/// One resumed progressive filling of all the flows (`Fluid::update_max_min`): what it works on.
struct Pass<'a> {
    flows: &'a mut Vec<Open>,
    users: &'a [Vec<u32>],
    capacity: &'a [f64],
    residual: &'a mut Vec<f64>,
    s: &'a mut FillScratch,
    /// The flows whose rate may move in this event (brought up to date, their rate before in `old_rate`).
    set: &'a mut Vec<u32>,
    heap: BinaryHeap<Reverse<(i64, u32)>>,
    ep: u32,
    now: Ps,
    /// The filling's level: the rate of the last freezing.
    level: f64,
}

impl Pass<'_> {
    /// A flow's state in this filling (TENTATIVE: as it was, frozen at its rate).
    #[inline]
    fn state(&self, k: u32) -> u8 {
        if self.s.state_at[k as usize] == self.s.stamp { self.s.state[k as usize] } else { TENTATIVE }
    }

    /// Whether a flow is to be frozen in this filling (unfrozen by a dirty resource, or filled again).
    #[inline]
    fn unfrozen(&self, k: u32) -> bool {
        matches!(self.state(k), UNDONE | ADDED)
    }

    #[inline]
    fn set_state(&mut self, k: u32, st: u8) {
        self.s.state[k as usize] = st;
        self.s.state_at[k as usize] = self.s.stamp;
    }

    /// A flow to fill again may reach its own cap first (one below every capacity on its path can).
    fn cap_candidate(&mut self, k: u32) {
        let f = &self.flows[k as usize];
        if f.path().iter().all(|&l| f.cap < self.capacity[l as usize]) {
            self.s.caps.push(Reverse((share_key(f.cap), k)));
        }
    }

    /// Make resource `l` dirty at the current level: its users frozen below the level keep their rates (in this
    /// filling or the last); the others unfreeze; its share is summed afresh.
    fn dirty(&mut self, l: u32) {
        let li = l as usize;
        self.s.touch_at[li] = self.s.stamp;
        let (mut left, mut count) = (self.capacity[li], 0u32);
        for j in 0..self.users[li].len() {
            let k = self.users[li][j];
            match self.state(k) {
                DONE => left -= self.s.took[k as usize],
                TENTATIVE if self.flows[k as usize].rate < self.level => left -= self.flows[k as usize].rate,
                TENTATIVE => {
                    self.unfreeze(k);
                    count += 1;
                }
                _ => count += 1,
            }
        }
        self.residual[li] = left;
        self.s.count[li] = count;
        if count > 0 {
            self.heap.push(Reverse((share_key(left / count as f64), l)));
        }
    }

    /// Make the clean resources of flow `k` dirty.
    fn dirty_around(&mut self, k: u32) {
        for h in 0..self.flows[k as usize].hops_len as usize {
            let l = self.flows[k as usize].hops[h];
            if self.s.touch_at[l as usize] != self.s.stamp {
                self.dirty(l);
            }
        }
    }

    /// Unfreeze a flow of the last filling: brought up to date (its rate may move), and replayed at its rate
    /// unless its bottleneck turns dirty first.
    fn unfreeze(&mut self, k: u32) {
        self.set_state(k, UNDONE);
        let f = &mut self.flows[k as usize];
        if f.mark != self.ep {
            f.mark = self.ep;
            f.sync(self.now);
            f.old_rate = f.rate;
            self.set.push(k);
        }
        self.s.replay.push(Reverse((share_key(f.rate), k)));
        self.cap_candidate(k);
    }

    /// Freeze flow `k` at `rate` by `froze` (a resource or FROZE_CAP): the dirty resources on its path lose it.
    fn freeze(&mut self, k: u32, rate: f64, froze: u32) {
        self.set_state(k, DONE);
        self.s.took[k as usize] = rate;
        let f = &mut self.flows[k as usize];
        f.froze = froze;
        f.rate = rate.max(0.0);
        for h in 0..f.hops_len as usize {
            let li = f.hops[h] as usize;
            if self.s.touch_at[li] == self.s.stamp {
                self.residual[li] -= rate;
                self.s.count[li] -= 1;
            }
        }
    }

    /// Freeze flow `k` anew at `rate` by `froze`; if that is not the rate it had, its resources see it.
    fn refreeze(&mut self, k: u32, rate: f64, froze: u32) {
        let was = self.flows[k as usize].rate;
        let moved = self.state(k) == ADDED || (rate.max(0.0) - was).abs() > 1e-12 * was.abs().max(1.0);
        self.freeze(k, rate, froze);
        if moved {
            self.dirty_around(k);
        }
    }
}

#[derive(Default)]
struct FillScratch {
    heap: BinaryHeap<Reverse<(i64, u32)>>,
    /// Per resource: the set's unfrozen flows on it, and those flows.
    count: Vec<u32>,
    users: Vec<Vec<u32>>,
    links: Vec<u32>,
    order: Vec<u32>,
    /// MLFQ's queue and LAS's order of service and group; per resource, LAS's last flow in that order.
    sorted: Vec<u32>,
    group: Vec<u32>,
    last: Vec<u32>,
    /// Per resource: the group (numbered in order of service from 1 at each allocation) of its `last` flow.
    last_group: Vec<u32>,
    /// The max-min update (`Pass`): per resource the update that made it dirty; per slot the rate a flow took
    /// from its resources when frozen, its state and the update that set it; the flows whose cap may bind; the
    /// flows to replay, by rate.
    stamp: u32,
    touch_at: Vec<u32>,
    took: Vec<f64>,
    state: Vec<u8>,
    state_at: Vec<u32>,
    caps: BinaryHeap<Reverse<(i64, u32)>>,
    replay: BinaryHeap<Reverse<(i64, u32)>>,
}

/// A flow's state in the max-min update (`Pass`): as the last filling left it; unfrozen by a dirty resource;
/// frozen in this filling; to fill again from the start (it arrived or its cap changed).
const TENTATIVE: u8 = 0;
const UNDONE: u8 = 1;
const DONE: u8 = 2;
const ADDED: u8 = 3;

/// The rates of the flows `set` (slots of `flows`) under `model`, from the resources' full capacities, at
/// `now`. SRPT and criticality order take `set` as the order to start sorting from; D3 takes it as the order
/// of arrival.
fn allocate(
    model: Model,
    flows: &mut [Open],
    set: &[u32],
    capacity: &[f64],
    residual: &mut [f64],
    s: &mut FillScratch,
    now: Ps,
) {
    residual[..capacity.len()].copy_from_slice(capacity);
    match model {
        Model::Srpt | Model::Critical { .. } => {
            s.order.clear();
            s.order.extend_from_slice(set);
            let (by_deadline, by_rank) = match model {
                Model::Critical { size_aware } => (true, !size_aware),
                _ => (false, false),
            };
            // (stable and adaptive: the order given is the last event's, nearly sorted)
            s.order.sort_by(|&a, &b| {
                let (fa, fb) = (&flows[a as usize], &flows[b as usize]);
                let d = if by_deadline { fa.deadline.cmp(&fb.deadline) } else { std::cmp::Ordering::Equal };
                let c = if by_rank { fa.rank.total_cmp(&fb.rank) } else { fa.left.total_cmp(&fb.left) };
                d.then(c).then(fa.id.cmp(&fb.id))
            });
            for &k in &s.order {
                let f = &mut flows[k as usize];
                let r = f.path().iter().map(|&l| residual[l as usize]).fold(f.cap, f64::min).max(0.0);
                let r = crumb(r, f.line);
                for &l in f.path() {
                    residual[l as usize] -= r;
                }
                let paused = f.grant == 0.0;
                f.take_grant(r, paused, now);
            }
        }
        Model::MaxMin => fill(flows, set, residual, s),
        Model::Mlfq => {
            // queue by queue, each on what the more urgent ones left
            let last = set.iter().map(|&k| flows[k as usize].class).max().unwrap_or(0);
            let mut queue = std::mem::take(&mut s.group);
            for c in 0..=last {
                queue.clear();
                queue.extend(set.iter().copied().filter(|&k| flows[k as usize].class == c));
                fill(flows, &queue, residual, s);
            }
            s.group = queue;
        }
        Model::Las => {
            // in order of service (the order given is the last event's, nearly sorted), flows whose service is
            // equal (within a bit: the picosecond a catching up is rounded to leaves less) as one group, each
            // group max-min on what the groups before it left
            let mut sorted = std::mem::take(&mut s.sorted);
            let mut group = std::mem::take(&mut s.group);
            sorted.clear();
            sorted.extend_from_slice(set);
            sorted.sort_by(|&a, &b| {
                let (fa, fb) = (&flows[a as usize], &flows[b as usize]);
                fa.sent.total_cmp(&fb.sent).then(fa.id.cmp(&fb.id))
            });
            let mut i = 0;
            while i < sorted.len() {
                let first = flows[sorted[i] as usize].sent;
                group.clear();
                while i < sorted.len() && flows[sorted[i] as usize].sent - first <= LAS_TIE_BITS {
                    group.push(sorted[i]);
                    i += 1;
                }
                if let [k] = group[..] {
                    // (one flow: what its path has left, up to its cap, as the filling would give it)
                    let f = &mut flows[k as usize];
                    let r = f.path().iter().map(|&l| residual[l as usize]).fold(f.cap, f64::min).max(0.0);
                    for &l in f.path() {
                        residual[l as usize] -= r;
                    }
                    f.rate = r;
                } else {
                    fill(flows, &group, residual, s);
                }
            }
            // the next catching up on each resource: a flow served faster than the first flow of the next group in
            // order of service on one of its resources reaches its service then, and the two share from there. The
            // members of a group may have different rates (max-min among them): on each resource the fastest
            // member of the group before is the one that catches up first (their services are within a bit), so
            // it stands for its group there
            for &k in &sorted {
                flows[k as usize].catch_at = NEVER;
            }
            let (mut group_id, mut first) = (0u32, f64::NEG_INFINITY);
            for &k in &sorted {
                let (sent, rate) = (flows[k as usize].sent, flows[k as usize].rate);
                if group_id == 0 || sent - first > LAS_TIE_BITS {
                    group_id += 1;
                    first = sent;
                }
                for h in 0..flows[k as usize].hops_len as usize {
                    let l = flows[k as usize].hops[h] as usize;
                    let p = s.last[l];
                    if p != u32::MAX && s.last_group[l] == group_id {
                        if rate > flows[p as usize].rate {
                            s.last[l] = k;
                        }
                        continue;
                    }
                    s.last[l] = k;
                    s.last_group[l] = group_id;
                    if p == u32::MAX {
                        continue;
                    }
                    let fp = &mut flows[p as usize];
                    if sent - fp.sent > LAS_TIE_BITS && fp.rate > rate {
                        fp.catch_at = fp.catch_at.min(after(now, sent - fp.sent, fp.rate - rate));
                    }
                }
            }
            for &k in &sorted {
                for &l in flows[k as usize].path() {
                    s.last[l as usize] = u32::MAX;
                }
            }
            s.sorted = sorted;
            s.group = group;
        }
        Model::D3 => {
            // in order of arrival, each flow's desired rate where its path has it left, else what is left (the
            // grants of D3's switches, first come first served); then max-min on what those leave, each flow
            // capped at its line rate less its grant (the spare capacity shared fairly)
            for &k in set {
                let f = &mut flows[k as usize];
                let g = f.path().iter().map(|&l| residual[l as usize]).fold(f.asks(), f64::min).max(0.0);
                for &l in f.path() {
                    residual[l as usize] -= g;
                }
                f.grant = g;
                f.cap = f.line - g;
            }
            fill(flows, set, residual, s);
            for &k in set {
                let f = &mut flows[k as usize];
                f.rate += f.grant;
                f.cap = f.line;
            }
        }
    }
}

/// Progressive filling of the flows `set` on `residual` (what other flows leave of each resource; used up as
/// rates are fixed): repeatedly the most constrained resource (its residual over its unfrozen flows of the
/// set, or a flow's own cap) fixes the rates of its flows. Each flow's `froze` says which.
fn fill(flows: &mut [Open], set: &[u32], residual: &mut [f64], s: &mut FillScratch) {
    s.links.clear();
    // flows by their own cap, those whose cap may bind: one below what their path has left (a link's share
    // never exceeds its residual, so a higher cap is never reached first)
    s.order.clear();
    for &k in set {
        let f = &mut flows[k as usize];
        f.froze = NOT_FROZEN;
        let mut least = f64::INFINITY;
        for &l in f.path() {
            let li = l as usize;
            if s.count[li] == 0 && s.users[li].is_empty() {
                s.links.push(l);
            }
            s.count[li] += 1;
            s.users[li].push(k);
            least = least.min(residual[li]);
        }
        if f.cap < least {
            s.order.push(k);
        }
    }
    // A heap of (share, link), refreshed lazily. Freezing flows at the least share (or a lower cap) never lowers
    // another link's share (it removes flows at no more than that link's average), so an entry can only be
    // stale low: the first entry at the top whose share is still the link's is the least share. The key is the
    // share's bits made to sort as `f64::total_cmp` sorts the shares (one integer comparison per heap step, where
    // `total_cmp` transforms both operands at every comparison; 3% of the reference's engine time).
    let mut buf = std::mem::take(&mut s.heap).into_vec();
    buf.clear();
    buf.extend(s.links.iter().map(|&l| Reverse((share_key(residual[l as usize] / s.count[l as usize] as f64), l))));
    let mut heap = BinaryHeap::from(buf);
    s.order.sort_unstable_by(|&a, &b| flows[a as usize].cap.total_cmp(&flows[b as usize].cap).then(a.cmp(&b)));
    let mut next_cap = 0;
    let mut left = set.len();
    while left > 0 {
        let (link_share, link) = least_share(&mut heap, residual, &s.count);
        while next_cap < s.order.len() && flows[s.order[next_cap] as usize].froze != NOT_FROZEN {
            next_cap += 1;
        }
        let (rate, froze) = if next_cap < s.order.len() && flows[s.order[next_cap] as usize].cap <= link_share {
            let k = s.order[next_cap] as usize;
            let cap = flows[k].cap;
            freeze(&mut flows[k], cap, FROZE_CAP, residual, &mut s.count);
            left -= 1;
            continue;
        } else if link != u32::MAX {
            heap.pop();
            (link_share, link)
        } else {
            break;
        };
        let users = std::mem::take(&mut s.users[link as usize]);
        for &k in &users {
            let f = &mut flows[k as usize];
            if f.froze == NOT_FROZEN {
                freeze(f, rate, froze, residual, &mut s.count);
                left -= 1;
            }
        }
        s.users[link as usize] = users;
    }
    for &l in &s.links {
        s.count[l as usize] = 0;
        s.users[l as usize].clear();
    }
    s.heap = heap;
}

#[inline]
fn freeze(f: &mut Open, rate: f64, froze: u32, residual: &mut [f64], count: &mut [u32]) {
    f.froze = froze;
    f.rate = rate.max(0.0);
    for &l in f.path() {
        let li = l as usize;
        residual[li] -= rate;
        count[li] -= 1;
    }
}

/// The least current share in a heap of (share, link) refreshed lazily (see `fill`), and its link
/// (`u32::MAX` if none).
fn least_share(heap: &mut BinaryHeap<Reverse<(i64, u32)>>, residual: &[f64], count: &[u32]) -> (f64, u32) {
    while let Some(mut top) = heap.peek_mut() {
        let Reverse((key, l)) = *top;
        let li = l as usize;
        let share = key_share(key);
        if count[li] == 0 || (residual[li] / count[li] as f64 - share).abs() > 1e-9 * share.abs().max(1.0) {
            // (a stale entry refreshed in place: one sift down, where a pop and a push took two passes)
            if count[li] > 0 {
                *top = Reverse((share_key(residual[li] / count[li] as f64), l));
            } else {
                PeekMut::pop(top);
            }
            continue;
        }
        return (share, l);
    }
    (f64::INFINITY, u32::MAX)
}

/// A share as an integer that sorts as `f64::total_cmp` sorts the shares (the same transformation it applies).
#[inline]
fn share_key(share: f64) -> i64 {
    let b = share.to_bits() as i64;
    b ^ (((b >> 63) as u64) >> 1) as i64
}

/// The share of a `share_key` (the transformation is its own inverse).
#[inline]
fn key_share(key: i64) -> f64 {
    f64::from_bits((key ^ (((key >> 63) as u64) >> 1) as i64) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flow(id: u32, path: &[u32], cap: f64) -> Open {
        Open {
            id,
            hops: std::array::from_fn(|h| path.get(h).copied().unwrap_or(0)),
            hops_len: path.len() as u8,
            pos: [0; MAX_HOPS],
            left: 1e9,
            rate: 0.0,
            cap,
            line: cap,
            win: 0.0,
            allow: 0.0,
            round_at: NEVER,
            rtt: 1,
            tail: 0,
            sent: 0.0,
            class: 0,
            tag_at: f64::INFINITY,
            deadline: NO_DEADLINE,
            term: TERM_NEVER,
            desired: 0.0,
            req_at: NEVER,
            rank: 0.0,
            rank_bits: 0.0,
            grant: -1.0,
            gap: 0,
            wake: 0,
            catch_at: NEVER,
            at: 0,
            act: u32::MAX,
            old_rate: 0.0,
            mark: 0,
            sched: 0,
            froze: NOT_FROZEN,
            ahead: [0.0; MAX_HOPS],
            queued: false,
            cstamp: 0,
            seq: 0,
        }
    }

    /// A network and its resources, pruned or not, from a topology given as JSON (`{"kind": ...}`).
    fn fabric(topology: &str, prune: bool) -> (Network, Resources) {
        let cfg = Config::from_json(&format!(r#"{{"topology": {topology}}}"#)).unwrap();
        (Network::build(&cfg, 1), Resources { prune, ..Resources::default() })
    }

    /// The resources of every pair's pooled (spraying) path, and how many of them are kept.
    fn pooled_kept(net: &Network, res: &mut Resources) -> (usize, usize) {
        let (mut all, mut kept) = (0, 0);
        for src in 0..net.hosts {
            for dst in (0..net.hosts).filter(|&d| d != src) {
                let path = pooled_path(net, src, dst, res);
                all += path.len();
                kept += path.iter().filter(|&&r| res.kept[r as usize]).count();
                assert!(res.kept[path[0] as usize] && res.kept[*path.last().unwrap() as usize], "first, last hop");
            }
        }
        (all, kept)
    }

    #[test]
    fn implied_resources_are_those_their_hosts_cannot_fill() {
        let pairs = |h: usize| h * (h - 1);
        // full bisection under spraying: only the hosts' links bind
        let (net, mut res) = fabric(r#"{"kind": "leaf_spine"}"#, true);
        let (all, kept) = pooled_kept(&net, &mut res);
        assert_eq!(kept, 2 * pairs(144));
        assert!(all > kept);
        let (net, mut res) = fabric(r#"{"kind": "fat_tree", "k": 4}"#, true);
        assert_eq!(pooled_kept(&net, &mut res).1, 2 * pairs(16));
        // 2:1 oversubscribed edges (4 hosts of 1 Gbps over 2 uplinks): the edges' uplinks and downlinks bind, and
        // the pods' (8 hosts over 4 core links) too
        let (net, mut res) = fabric(r#"{"kind": "fat_tree", "k": 4, "hosts_per_edge": 4}"#, true);
        let (all, kept) = pooled_kept(&net, &mut res);
        assert_eq!(all, kept);
        // leaf-spine under ECMP: a 40 Gbps port carries up to 16 hosts' 10 Gbps, so every port is kept
        let (net, mut res) = fabric(r#"{"kind": "leaf_spine"}"#, true);
        for src in 0..net.hosts {
            for p in net.ecmp_path(src, (src + 17) % net.hosts, 7) {
                let r = res.of_port(p, &net);
                assert!(res.kept[r as usize]);
            }
        }
        // unpruned: all kept
        let (net, mut res) = fabric(r#"{"kind": "leaf_spine"}"#, false);
        let (all, kept) = pooled_kept(&net, &mut res);
        assert_eq!(all, kept);
    }

    /// Every allocation rule gives the same rates on the pruned paths as on the whole ones (random flows on the
    /// k = 4 fat-tree under spraying, where every pooled resource between the hosts' links is left out).
    #[test]
    fn pruned_paths_allocate_as_whole_paths() {
        let (net, mut whole) = fabric(r#"{"kind": "fat_tree", "k": 4}"#, false);
        let (_, mut pruned) = fabric(r#"{"kind": "fat_tree", "k": 4}"#, true);
        let mut seed = 0x5eedu64;
        let mut draw = |n: u64| {
            seed = mix64(seed.wrapping_add(0x9e37_79b9_7f4a_7c15));
            seed % n
        };
        let models = [
            Model::MaxMin,
            Model::Mlfq,
            Model::Srpt,
            Model::Las,
            Model::D3,
            Model::Critical { size_aware: true },
            Model::Critical { size_aware: false },
        ];
        let mut shorter = 0;
        for trial in 0..40 {
            let n = 4 + draw(60) as usize;
            let mut a: Vec<Open> = Vec::new();
            let mut b: Vec<Open> = Vec::new();
            for i in 0..n {
                let src = draw(16) as u32;
                let dst = (src + 1 + draw(15) as u32) % 16;
                let line = 1e9;
                let cap = [0.0, 3e8, line, line][draw(4) as usize];
                let pa = pooled_path(&net, src, dst, &mut whole);
                let pb: Vec<u32> =
                    pooled_path(&net, src, dst, &mut pruned).into_iter().filter(|&r| pruned.kept[r as usize]).collect();
                shorter += usize::from(pb.len() < pa.len());
                let mut f = flow(i as u32, &pa, cap);
                f.line = line;
                f.left = 1e3 * (1 + draw(1000)) as f64;
                f.sent = 1e3 * draw(5) as f64;
                f.class = draw(3) as u8;
                f.desired = if draw(2) == 0 { 0.0 } else { 1e8 * draw(12) as f64 };
                f.deadline = if draw(3) == 0 { NO_DEADLINE } else { 1_000 * draw(50) };
                f.rank = draw(7) as f64;
                let mut g = f.clone();
                g.hops = std::array::from_fn(|h| pb.get(h).copied().unwrap_or(0));
                g.hops_len = pb.len() as u8;
                a.push(f);
                b.push(g);
            }
            for model in models {
                let ra = rates(model, &whole.capacity, &mut a.clone());
                let rb = rates(model, &pruned.capacity, &mut b.clone());
                for (i, (x, y)) in ra.iter().zip(&rb).enumerate() {
                    assert!((x - y).abs() <= 1e-6 * 1e9, "trial {trial}, {model:?}, flow {i}: whole {x}, pruned {y}");
                }
            }
        }
        assert!(shorter > 0);
    }

    /// On the reference leaf-spine under spraying the pooled resources are left out (the paths halve) and a DCTCP
    /// workload's results are those with them, up to float rounding (the fillings visit the resources in
    /// another order): every finish within 10 ps, the other columns the same.
    #[test]
    fn pruning_leaves_a_max_min_run_the_same() {
        let cfg = r#"{"scheme": {"name": "dctcp"}, "routing": {"mode": "spray"}, "run": {"level": "flow"}}"#;
        let cfg = Config::from_json(cfg).unwrap();
        let mut f = FlowSet::default();
        let mut seed = 3u64;
        let mut draw = || {
            seed = mix64(seed.wrapping_add(1));
            seed
        };
        let mut t = 0;
        for _ in 0..3_000 {
            let src = (draw() % 144) as u32;
            f.src.push(src);
            f.dst.push((src + 1 + (draw() % 143) as u32) % 144);
            f.size_bytes.push(1_000 + draw() % 3_000_000);
            t += draw() % 80_000_000;
            f.start_ps.push(t);
        }
        let a = run_pruned(&cfg, &f, true).unwrap();
        let b = run_pruned(&cfg, &f, false).unwrap();
        assert_eq!(a.stats.flows_finished, 3_000);
        let (ra, rb) = (&a.results, &b.results);
        for i in 0..3_000 {
            let (fa, fb) = (ra.finish_ps[i], rb.finish_ps[i]);
            assert!(fa.abs_diff(fb) <= 10, "flow {i}: finishes at {fa} against {fb} ps");
            assert!(ra.sender_done_ps[i].abs_diff(rb.sender_done_ps[i]) <= 10, "flow {i}: sender done");
        }
        assert_eq!((&ra.start_ps, &ra.ideal_fct_ps, &ra.bytes_sent), (&rb.start_ps, &rb.ideal_fct_ps, &rb.bytes_sent));
    }

    /// The timers against an ordered set of (time, slot): random sets, moves and removals, and every pop the set's
    /// least entry.
    #[test]
    fn timers_pop_in_order_of_time_then_slot() {
        let mut t = Timers::default();
        let mut set = std::collections::BTreeSet::new();
        let mut at = vec![None; 64];
        let mut seed = 9u64;
        for step in 0..20_000 {
            seed = mix64(seed.wrapping_add(step));
            let k = (seed % 64) as u32;
            let when = (seed >> 8) % 50;
            let op = (seed >> 20) % 4;
            if op != 1 {
                if let Some(old) = at[k as usize].take() {
                    set.remove(&(old, k));
                }
            }
            match op {
                0 => t.remove(k),
                1 => {
                    if let Some((w, j)) = t.peek() {
                        assert_eq!(set.pop_first(), Some((w, j)));
                        t.remove(j);
                        at[j as usize] = None;
                    }
                }
                _ => {
                    t.set(k, when);
                    set.insert((when, k));
                    at[k as usize] = Some(when);
                }
            }
            assert_eq!(t.peek(), set.first().copied());
            assert_eq!(t.heap.len(), set.len());
        }
    }

    /// The global allocation of `flows` on resources of capacities `caps`.
    /// The randomized checks' resources: 1 to 10 units of capacity, in a few steps.
    fn random_caps(draw: &mut impl FnMut(u64) -> u64, links: usize) -> Vec<f64> {
        (0..links).map(|_| [1.0, 2.0, 4.0, 10.0][draw(4) as usize] * (1.0 + draw(3) as f64 / 4.0)).collect()
    }

    /// A flow's own cap in the randomized checks: none (0), a binding one, or one that never binds.
    fn random_cap(draw: &mut impl FnMut(u64) -> u64) -> f64 {
        match draw(4) {
            0 => 0.0,
            1 => 0.1 + draw(40) as f64 / 10.0,
            _ => 100.0,
        }
    }

    /// A random path of 1 to 4 distinct resources among `links`.
    fn random_path(draw: &mut impl FnMut(u64) -> u64, links: usize) -> Vec<u32> {
        let mut path: Vec<u32> = (0..links as u32).collect();
        for i in (1..path.len()).rev() {
            path.swap(i, draw(i as u64 + 1) as usize);
        }
        path.truncate(1 + draw(links.min(4) as u64) as usize);
        path
    }

    /// Asserts that every active flow's incremental rate is the global recomputation's under `model` (the
    /// flows taken in order of id: D3's order of arrival in the tests); returns how many flows were checked.
    fn same_as_global(fl: &Fluid, model: Model, caps: &[f64]) -> usize {
        let links = caps.len();
        let mut global = fl.flows.clone();
        let mut set = fl.active.clone();
        set.sort_by_key(|&k| fl.flows[k as usize].id);
        let mut residual = vec![0.0; links];
        let mut scratch =
            FillScratch { count: vec![0; links], users: vec![Vec::new(); links], ..FillScratch::default() };
        allocate(model, &mut global, &set, caps, &mut residual, &mut scratch, 0);
        for &k in &set {
            let (a, b) = (fl.flows[k as usize].rate, global[k as usize].rate);
            assert!((a - b).abs() <= 1e-7, "flow {}: incremental {a}, global {b}", fl.flows[k as usize].id);
        }
        set.len()
    }

    fn rates(model: Model, caps: &[f64], flows: &mut [Open]) -> Vec<f64> {
        let mut fl = Fluid::default();
        fl.begin();
        let ks: Vec<u32> = flows
            .iter()
            .map(|f| {
                let k = fl.insert(f.clone(), caps);
                fl.activate(k, 0);
                k
            })
            .collect();
        let set = fl.active.clone();
        allocate(model, &mut fl.flows, &set, caps, &mut fl.residual, &mut fl.fill, 0);
        ks.iter().map(|&k| fl.flows[k as usize].rate).collect()
    }

    /// LAS's catching up when a group's members have different rates: p and k have equal service, p alone on
    /// L (capacity 1), k on L and M (capacity 0.1); q on L with 1,000 bits more served. p and k share max-min
    /// (k held to 0.1 by M, p gets 0.9) and q gets nothing. The faster member, p, reaches q's service after
    /// 1,000 / 0.9 s (q idle), though k is the flow next to q in the order of service; k would only after
    /// 1,000 / 0.1 s. A check of only the neighbours in that order missed p's.
    #[test]
    fn las_catching_up_comes_from_the_fastest_member_of_a_group() {
        let mut fl = Fluid::default();
        fl.begin();
        let caps = [1.0, 0.1];
        let mut ks = Vec::new();
        for (id, path, sent) in [(0u32, &[0u32][..], 0.0), (1, &[0, 1][..], 0.0), (2, &[0][..], 1000.0)] {
            let f = Open { sent, ..flow(id, path, 100.0) };
            let k = fl.insert(f, &caps);
            fl.activate(k, 0);
            ks.push(k);
        }
        let set = fl.active.clone();
        allocate(Model::Las, &mut fl.flows, &set, &caps, &mut fl.residual, &mut fl.fill, 0);
        let f = |i: usize| &fl.flows[ks[i] as usize];
        assert!((f(0).rate - 0.9).abs() < 1e-12 && (f(1).rate - 0.1).abs() < 1e-12 && f(2).rate == 0.0);
        assert_eq!(f(0).catch_at, after(0, 1000.0, 0.9));
        assert_eq!(f(1).catch_at, NEVER);
    }

    /// Random instances (1 to 8 resources, up to about 40 flows over 1 to 4 of them, caps from none to zero),
    /// changed by arrivals, completions and cap changes, one to three at once: after each event the incremental
    /// update gives every flow the rate a global progressive filling gives it, and each resource's load is the
    /// sum of its users' rates.
    #[test]
    fn incremental_equals_global() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
        let mut draw = |n: u64| rng.next_u64() % n;
        let (mut checked, mut moved) = (0, 0);
        for _case in 0..400 {
            let links = 1 + draw(8) as usize;
            let caps = random_caps(&mut draw, links);
            let mut fl = Fluid::default();
            let mut live: Vec<u32> = Vec::new();
            let mut id = 0;
            for _event in 0..50 {
                fl.begin();
                for _ in 0..1 + draw(3) {
                    let cap = random_cap(&mut draw);
                    match draw(5) {
                        0..=2 if live.len() < 40 => {
                            let path = random_path(&mut draw, links);
                            let k = fl.insert(flow(id, &path, cap), &caps);
                            id += 1;
                            fl.activate(k, 0);
                            live.push(k);
                        }
                        3 if !live.is_empty() => {
                            let k = live.swap_remove(draw(live.len() as u64) as usize);
                            if fl.flows[k as usize].mark != fl.epoch {
                                fl.finish(k);
                            } else {
                                live.push(k); // (changed in this event already)
                            }
                        }
                        _ if !live.is_empty() => {
                            let k = live[draw(live.len() as u64) as usize];
                            fl.touch(k);
                            fl.flows[k as usize].cap = cap;
                        }
                        _ => {}
                    }
                }
                fl.update_max_min(0);
                moved += fl.resched.len();
                checked += same_as_global(&fl, Model::MaxMin, &caps);
                for l in 0..fl.users.len() {
                    let sum: f64 = fl.users[l].iter().map(|&k| fl.flows[k as usize].rate).sum();
                    assert!((fl.load[l] - sum).abs() <= 1e-7, "resource {l}: load {} against {sum}", fl.load[l]);
                }
            }
        }
        assert!(checked > 100_000 && moved > 10_000, "{checked} rates checked, {moved} moved");
    }

    /// MLFQ, the same as `incremental_equals_global` with up to four queues: flows arrive in a random queue,
    /// finish, change cap, and move to another queue (one to three changes at once); after each event the
    /// incremental update, queue by queue, gives every flow the rate of the global filling queue by queue, and
    /// each layer's load is the sum of its users' rates.
    #[test]
    fn incremental_mlfq_equals_global() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(11);
        let mut draw = |n: u64| rng.next_u64() % n;
        let (mut checked, mut moved) = (0, 0);
        for _case in 0..300 {
            let links = 1 + draw(8) as usize;
            let caps = random_caps(&mut draw, links);
            let queues = 1 + draw(4) as u8;
            let mut fl = Fluid::layered(queues as usize);
            let mut live: Vec<u32> = Vec::new();
            let mut id = 0;
            for _event in 0..50 {
                fl.begin();
                for _ in 0..1 + draw(3) {
                    let cap = random_cap(&mut draw);
                    match draw(6) {
                        0..=2 if live.len() < 40 => {
                            let path = random_path(&mut draw, links);
                            let mut f = flow(id, &path, cap);
                            f.class = draw(queues as u64) as u8;
                            let k = fl.insert(f, &caps);
                            id += 1;
                            fl.start(k, 0);
                            live.push(k);
                        }
                        3 | 4 if !live.is_empty() => {
                            let j = draw(live.len() as u64) as usize;
                            let k = live[j];
                            if fl.flows[k as usize].mark == fl.epoch {
                                continue; // (changed in this event already)
                            }
                            if draw(2) == 0 {
                                live.swap_remove(j);
                                fl.done(k);
                            } else {
                                let from = fl.flows[k as usize].class;
                                fl.flows[k as usize].class = draw(queues as u64) as u8;
                                fl.flows[k as usize].cap = cap;
                                if fl.flows[k as usize].class != from {
                                    fl.requeue(k, from);
                                } else {
                                    fl.changed(k);
                                }
                            }
                        }
                        _ if !live.is_empty() => {
                            let k = live[draw(live.len() as u64) as usize];
                            if fl.flows[k as usize].mark == fl.epoch {
                                continue;
                            }
                            fl.changed(k);
                            fl.flows[k as usize].cap = cap;
                        }
                        _ => {}
                    }
                }
                fl.update_mlfq(0);
                moved += fl.resched.len();
                checked += same_as_global(&fl, Model::Mlfq, &caps);
                for y in &fl.layers {
                    for l in 0..y.users.len() {
                        let sum: f64 = y.users[l].iter().map(|&k| fl.flows[k as usize].rate).sum();
                        assert!((y.load[l] - sum).abs() <= 1e-7, "resource {l}: load {} against {sum}", y.load[l]);
                    }
                }
            }
        }
        assert!(checked > 50_000 && moved > 5_000, "{checked} rates checked, {moved} moved");
    }

    /// Asserts that every active flow's rate, grant and hand-over wait under SRPT or criticality order
    /// (`model`) are those of the global greedy pass at `now` (each flow brought up to date, sorted afresh,
    /// from the grants and waits `before` the event, by id), and that each resource's users are in that order;
    /// returns how many flows were checked.
    fn same_as_global_ordered(
        fl: &Fluid,
        model: Model,
        caps: &[f64],
        now: Ps,
        before: &HashMap<u32, (f64, Ps)>,
    ) -> usize {
        let mut global = fl.flows.clone();
        for &k in &fl.active {
            let g = &mut global[k as usize];
            g.sync(now);
            (g.grant, g.wake) = before.get(&g.id).copied().unwrap_or((-1.0, 0));
        }
        let set = fl.active.clone();
        let mut residual = vec![0.0; caps.len()];
        allocate(model, &mut global, &set, caps, &mut residual, &mut FillScratch::default(), now);
        for &k in &set {
            let (a, b) = (&fl.flows[k as usize], &global[k as usize]);
            assert!(
                (a.rate - b.rate).abs() <= 1.0 && (a.grant - b.grant).abs() <= 1.0 && a.wake == b.wake,
                "flow {} at {now} ({:?}): incremental rate {} grant {} wake {}, global {} {} {}",
                a.id,
                fl.by,
                a.rate,
                a.grant,
                a.wake,
                b.rate,
                b.grant,
                b.wake
            );
        }
        for u in &fl.users {
            for w in u.windows(2) {
                let (a, b) = (&fl.flows[w[0] as usize], &fl.flows[w[1] as usize]);
                let ordered = order_key(fl.by, a, now) < order_key(fl.by, b, now);
                assert!(ordered, "flows {} and {} out of order", a.id, b.id);
            }
        }
        set.len()
    }

    /// SRPT and criticality order (with deadlines and without, by bits left and by rank, with and without
    /// PDQ-Basic's hand-over gap): random instances in which flows arrive, finish (at their last bit, or
    /// before), change cap, step their rank, while time runs so that bits left fall and flows catch up with
    /// each other. After every event, the flows' own ones included (their last bit, a catching up, the end of
    /// a hand-over's wait, a rank's step), the incremental update gives every flow the global greedy pass's
    /// rate and grant (within 1e-9 of the capacities), and each flow's catching up is the one its state gives.
    /// The units are the simulation's (Gbit/s, kbits, microseconds), so that a catching up's time is exact to
    /// the picosecond; sizes and times are drawn from a few values, so that flows tie in bits left (broken by
    /// id) and several catch up at the same picosecond. Swaps must happen (counted).
    #[test]
    fn incremental_order_equals_global() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(13);
        let mut draw = |n: u64| rng.next_u64() % n;
        let us = 1_000_000u64;
        let models = [Model::Srpt, Model::Critical { size_aware: true }, Model::Critical { size_aware: false }];
        let (mut checked, mut own_events, mut moved, mut waits) = (0, 0, 0, 0);
        let mut swaps = [0u64; 3];
        for case in 0..600 {
            let model = models[case % 3];
            let links = 1 + draw(6) as usize;
            let caps: Vec<f64> = random_caps(&mut draw, links).iter().map(|c| c * 1e9).collect();
            let critical = model != Model::Srpt;
            let deadlines = critical && case % 2 == 1;
            let gap = if critical && draw(2) == 0 { draw(3) * us / 4 } else { 0 };
            let steps = model == (Model::Critical { size_aware: false }) && draw(2) == 0;
            let mut fl = Fluid::ordered(model);
            let mut live: Vec<u32> = Vec::new();
            let (mut id, mut now) = (0, 0);
            let mut before = HashMap::new();
            for _event in 0..60 {
                // the flows' own next events (all brought up to date: lazy progress is the same either way)
                let mut due: Vec<(Ps, u32)> = Vec::new();
                for &k in &live {
                    let f = &mut fl.flows[k as usize];
                    f.sync(now);
                    due.push((f.next_event(now, &[]), k));
                }
                let first = due.iter().map(|d| d.0).min().unwrap_or(NEVER);
                let t = now + draw(4) * us / 2;
                fl.begin();
                if first <= t {
                    now = first;
                    fl.now = now;
                    own_events += 1;
                    for &(at, k) in &due {
                        if at > now {
                            continue;
                        }
                        let f = &mut fl.flows[k as usize];
                        f.sync(now);
                        if f.left <= 1e-6 || (f.rate > 0.0 && f.left / f.rate * 1e12 < 1.0) {
                            live.retain(|&x| x != k);
                            fl.done(k);
                            continue;
                        }
                        let rank = f.rank;
                        if f.rank_bits > 0.0 {
                            f.rank = ((f.sent + f.line * 1e-12) / f.rank_bits).floor();
                        }
                        let moved = f.rank != rank;
                        fl.own_event(k, moved);
                    }
                } else {
                    now = t;
                    fl.now = now;
                    for _ in 0..1 + draw(3) {
                        let cap = random_cap(&mut draw) * 1e9;
                        match draw(6) {
                            0..=2 if live.len() < 30 => {
                                let path = random_path(&mut draw, links);
                                let mut f = flow(id, &path, cap);
                                f.left = 5000.0 * (1 + draw(8)) as f64;
                                f.gap = gap;
                                if deadlines {
                                    f.deadline = [NO_DEADLINE, 50 * us, 100 * us][draw(3) as usize];
                                }
                                if model == (Model::Critical { size_aware: false }) {
                                    if steps {
                                        f.rank_bits = 2000.0;
                                    } else {
                                        f.rank = draw(5) as f64;
                                    }
                                }
                                let k = fl.insert(f, &caps);
                                id += 1;
                                fl.activate(k, now);
                                live.push(k);
                            }
                            3 if !live.is_empty() => {
                                let j = draw(live.len() as u64) as usize;
                                if !fl.arrived.contains(&live[j]) {
                                    fl.done(live.swap_remove(j)); // (not one that arrived in this event)
                                }
                            }
                            _ if !live.is_empty() => {
                                let k = live[draw(live.len() as u64) as usize];
                                let f = &mut fl.flows[k as usize];
                                f.sync(now);
                                f.cap = cap;
                                f.line = cap;
                                fl.own_event(k, false);
                            }
                            _ => {}
                        }
                    }
                }
                fl.update_ordered(now);
                moved += fl.resched.len();
                checked += same_as_global_ordered(&fl, model, &caps, now, &before);
                before.clear();
                for &k in &fl.active {
                    let f = &fl.flows[k as usize];
                    before.insert(f.id, (f.grant, f.wake));
                }
                waits += fl.active.iter().filter(|&&k| fl.flows[k as usize].wake > now).count();
                if fl.catches() {
                    for &k in &fl.active {
                        let (a, c) = (fl.flows[k as usize].catch_at, fl.catch_time(k));
                        let same = a == c || a != NEVER && c != NEVER && a.abs_diff(c) <= 1;
                        assert!(same, "catching up at {a}, not {c}");
                    }
                }
            }
            swaps[case % 3] += fl.swaps;
        }
        let counts = format!("{checked} checked, {own_events} own events, {moved} rescheduled, {waits} waits");
        assert!(checked > 100_000 && own_events > 5_000 && moved > 10_000 && waits > 1_000, "{counts}");
        assert!(swaps[0] > 1_000 && swaps[1] > 1_000 && swaps[2] == 0, "swaps {swaps:?}");
    }

    /// D3: random instances in which flows arrive (asking for a rate or not, at a line rate from none to one that
    /// never binds), finish, ask for another rate, change line rate, one to three changes at once. After each
    /// event the incremental update (`Fluid::update_d3`: the grants in order of arrival, then max-min on what
    /// they leave) gives every flow the rate of the global pass over the flows in order of arrival; each flow's
    /// rate is its grant plus its share, the shares' load on each resource the sum of its users' shares and
    /// their capacity what the grants leave. Grants must move flows behind them, and shares must move (counted).
    #[test]
    fn incremental_d3_equals_global() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(17);
        let mut draw = |n: u64| rng.next_u64() % n;
        let (mut checked, mut regranted, mut reshared) = (0, 0, 0);
        for _case in 0..400 {
            let links = 1 + draw(8) as usize;
            let caps = random_caps(&mut draw, links);
            let mut fl = Fluid::ordered(Model::D3);
            let mut live: Vec<u32> = Vec::new();
            let (mut id, mut now) = (0, 0);
            for _event in 0..50 {
                now += 1_000_000;
                fl.begin();
                fl.now = now;
                for _ in 0..1 + draw(3) {
                    // (a desired rate: none, or from a tenth to 8 units, often more than a resource has)
                    let asks = if draw(3) == 0 { 0.0 } else { 0.1 + draw(80) as f64 / 10.0 };
                    match draw(6) {
                        0..=2 if live.len() < 40 => {
                            let path = random_path(&mut draw, links);
                            let mut f = flow(id, &path, random_cap(&mut draw));
                            f.desired = asks;
                            f.cap = f.asks();
                            let k = fl.insert(f, &caps);
                            id += 1;
                            fl.start(k, now);
                            live.push(k);
                        }
                        3 if !live.is_empty() => {
                            let j = draw(live.len() as u64) as usize;
                            if !fl.arrived.contains(&live[j]) {
                                fl.done(live.swap_remove(j)); // (not one that arrived in this event)
                            }
                        }
                        4 if !live.is_empty() => {
                            let k = live[draw(live.len() as u64) as usize];
                            let f = &mut fl.flows[k as usize];
                            f.sync(now);
                            f.line = random_cap(&mut draw);
                            f.cap = f.asks();
                            fl.own_event(k, false);
                        }
                        _ if !live.is_empty() => {
                            let k = live[draw(live.len() as u64) as usize];
                            let f = &mut fl.flows[k as usize];
                            f.sync(now);
                            f.desired = asks;
                            f.cap = f.asks();
                            fl.own_event(k, false);
                        }
                        _ => {}
                    }
                }
                fl.update_d3(now);
                regranted += fl.set.len();
                let sh = fl.shares.as_deref().unwrap();
                reshared += sh.resched.len();
                checked += same_as_global(&fl, Model::D3, &caps);
                for &k in &fl.active {
                    let (f, s) = (&fl.flows[k as usize], &sh.flows[k as usize]);
                    assert!((f.rate - f.held() - s.rate).abs() <= 1e-12 * f.line.max(1.0), "flow {}", f.id);
                    assert!((s.cap - (f.line - f.held())).abs() <= 1e-12, "flow {}: cap {}", f.id, s.cap);
                }
                for l in 0..sh.users.len() {
                    let share: f64 = sh.users[l].iter().map(|&k| sh.flows[k as usize].rate).sum();
                    let granted: f64 = fl.users[l].iter().map(|&k| fl.flows[k as usize].held()).sum();
                    assert!((sh.load[l] - share).abs() <= 1e-7, "resource {l}: load {} against {share}", sh.load[l]);
                    let left = caps[l] - granted;
                    let cap = if left < EPS * caps[l] { 0.0 } else { left };
                    let within = (sh.capacity[l] - cap).abs() <= EPS * caps[l];
                    assert!(within, "resource {l}: {} against {cap}", sh.capacity[l]);
                }
            }
        }
        assert!(checked > 100_000 && regranted > 20_000 && reshared > 20_000, "{checked} {regranted} {reshared}");
    }

    /// D3's requests move a grant by small steps: flow A (on link 0, capacity 1) asks a little more at each of
    /// 2,000 events, 5e-10 each time (below the max-min update's tolerance, 1e-9 of the capacity). B shares
    /// link 0 with A and link 1 (capacity 2) with C and D, which are bottlenecked there: each step of A moves
    /// B's share, and so C's and D's, by less than the tolerance. Their rates must still follow the global
    /// pass's, the small steps summed (without that they fall more than 1e-7 behind).
    #[test]
    fn d3_small_steps_do_not_add_up() {
        let caps = [1.0, 2.0];
        let mut fl = Fluid::ordered(Model::D3);
        fl.begin();
        let mut ks = Vec::new();
        let flows = [(0u32, &[0u32][..], 0.2), (1, &[0, 1][..], 0.0), (2, &[1][..], 0.0), (3, &[1][..], 0.0)];
        for (id, path, asks) in flows {
            let mut f = flow(id, path, 100.0);
            f.desired = asks;
            f.cap = f.asks();
            let k = fl.insert(f, &caps);
            fl.start(k, 0);
            ks.push(k);
        }
        fl.update_d3(0);
        for step in 1..=2000u64 {
            let now = step * 1_000_000;
            fl.begin();
            fl.now = now;
            let f = &mut fl.flows[ks[0] as usize];
            f.sync(now);
            f.desired += 5e-10;
            f.cap = f.asks();
            fl.own_event(ks[0], false);
            fl.update_d3(now);
            same_as_global(&fl, Model::D3, &caps);
        }
        let c = fl.flows[ks[2] as usize].rate;
        assert!((c - (2.0 - (0.8 - 1e-6) / 2.0) / 2.0).abs() < 1e-9, "{c}");
    }

    /// What SRPT's update reads of each flow behind a change of grant (its path, grant, cap, line rate and
    /// `ahead`) spans the first three cache lines of `Open`, the path in the first as the max-min update wants.
    #[test]
    fn layout_puts_the_ordered_update_in_three_lines() {
        use std::mem::offset_of;
        assert!(offset_of!(Open, hops) + 4 * MAX_HOPS <= 64 && offset_of!(Open, hops_len) < 64);
        for off in [offset_of!(Open, grant), offset_of!(Open, cap), offset_of!(Open, line)] {
            assert!((64..128).contains(&off), "{off}");
        }
        assert_eq!(offset_of!(Open, ahead), 128);
    }

    /// The parking lot: one long flow across three unit links, one short flow on each: max-min gives every flow
    /// one half. With the middle link twice as wide, its short flow takes the 1.5 the long one leaves.
    #[test]
    fn parking_lot_is_max_min_fair() {
        let mut f = vec![flow(0, &[0, 1, 2], 9.0), flow(1, &[0], 9.0), flow(2, &[1], 9.0), flow(3, &[2], 9.0)];
        assert_eq!(rates(Model::MaxMin, &[1.0, 1.0, 1.0], &mut f), vec![0.5, 0.5, 0.5, 0.5]);
        let r = rates(Model::MaxMin, &[1.0, 2.0, 1.0], &mut f);
        assert_eq!(r, vec![0.5, 0.5, 1.5, 0.5]);
        // a flow's own cap binds first and leaves the rest to the others
        let mut f = vec![flow(0, &[0], 0.1), flow(1, &[0], 9.0), flow(2, &[0], 9.0)];
        assert_eq!(rates(Model::MaxMin, &[1.0], &mut f), vec![0.1, 0.45, 0.45]);
        // the textbook example with unequal bottlenecks: links of 10 and 4; A on both, B on the first, C, D on
        // the second: C, D, A get 4/3, B the remaining 10 - 4/3
        let mut f = vec![flow(0, &[0, 1], 99.0), flow(1, &[0], 99.0), flow(2, &[1], 99.0), flow(3, &[1], 99.0)];
        let r = rates(Model::MaxMin, &[10.0, 4.0], &mut f);
        let want = [4.0 / 3.0, 10.0 - 4.0 / 3.0, 4.0 / 3.0, 4.0 / 3.0];
        for (a, b) in r.iter().zip(want) {
            assert!((a - b).abs() < 1e-12, "{r:?}");
        }
    }

    /// MLFQ: the more urgent queue takes what it can; the next shares what it leaves, max-min.
    #[test]
    fn mlfq_serves_queues_in_strict_priority() {
        let mut f = vec![flow(0, &[0], 9.0), flow(1, &[0], 9.0), flow(2, &[0, 1], 0.3), flow(3, &[1], 9.0)];
        f[0].class = 1;
        f[1].class = 1;
        f[2].class = 0;
        f[3].class = 2;
        // queue 0: flow 2 at its cap 0.3 on links 0 and 1; queue 1: flows 0, 1 share link 0's 0.7; queue 2:
        // flow 3 takes link 1's remaining 0.7
        let r = rates(Model::Mlfq, &[1.0, 1.0], &mut f);
        for (a, b) in r.iter().zip([0.35, 0.35, 0.3, 0.7]) {
            assert!((a - b).abs() < 1e-12, "{r:?}");
        }
    }

    /// PDQ's criticality: an earlier deadline goes first even with more left; without deadlines, SRPT.
    #[test]
    fn criticality_puts_deadlines_first() {
        let mut f = vec![flow(0, &[0], 9.0), flow(1, &[0], 9.0), flow(2, &[0], 9.0)];
        f[0].left = 9.0;
        f[0].deadline = 5;
        f[1].left = 1.0;
        f[1].deadline = 7;
        f[2].left = 0.5;
        assert_eq!(rates(Model::Critical { size_aware: true }, &[1.0], &mut f), vec![1.0, 0.0, 0.0]);
        f[0].deadline = NO_DEADLINE;
        f[1].deadline = NO_DEADLINE;
        assert_eq!(rates(Model::Critical { size_aware: true }, &[1.0], &mut f), vec![0.0, 0.0, 1.0]);
    }

    /// D3 on one link of 10: in order of arrival, flows asking 4 and 3 get them; a third asking 5 gets the 3
    /// left (first come first served: not earliest deadline first, whatever its deadline); nothing is left to
    /// share. Without the third, a flow without a deadline (asking nothing) shares the 3 left max-min with the
    /// two: 1 each.
    #[test]
    fn d3_grants_desired_rates_first_come_first_served() {
        let mut f = vec![flow(0, &[0], 9.0), flow(1, &[0], 9.0), flow(2, &[0], 9.0)];
        f[0].desired = 4.0;
        f[1].desired = 3.0;
        f[2].desired = 5.0;
        f[0].deadline = 50;
        f[1].deadline = 40;
        f[2].deadline = 10;
        assert_eq!(rates(Model::D3, &[10.0], &mut f), vec![4.0, 3.0, 3.0]);
        f[2].desired = 0.0;
        f[2].deadline = NO_DEADLINE;
        assert_eq!(rates(Model::D3, &[10.0], &mut f), vec![5.0, 4.0, 1.0]);
        // a flow's line rate caps its grant and its share: 4.5 less its grant of 4 leaves it 0.5; the other two
        // share the 2.5 left (1.25 each)
        f[0].line = 4.5;
        assert_eq!(rates(Model::D3, &[10.0], &mut f), vec![4.5, 4.25, 1.25]);
    }

    /// PDQ's hand-over: a paused flow granted a rate holds it for `gap` before it sends (the link idles), a new
    /// flow starts at once, and a flow paused again waits again.
    #[test]
    fn pdq_paused_flow_waits_one_gap_after_its_grant() {
        let mut f = flow(0, &[0], 1.0);
        f.gap = 10;
        let mut fl = Fluid::default();
        fl.begin();
        let k = fl.insert(f, &[1.0]);
        fl.activate(k, 0);
        fl.allocate_all(Model::Critical { size_aware: true }, 0);
        assert_eq!(fl.flows[k as usize].rate, 1.0, "a new flow starts at once");
        let mut paused = fl.flows[k as usize].clone();
        paused.grant = 0.0;
        paused.rate = 0.0;
        fl.flows[k as usize] = paused;
        fl.begin();
        fl.allocate_all(Model::Critical { size_aware: true }, 100);
        let f = &fl.flows[k as usize];
        assert_eq!((f.rate, f.grant, f.wake), (0.0, 1.0, 110));
        assert_eq!(f.next_event(100, &[]), 110);
        fl.begin();
        fl.allocate_all(Model::Critical { size_aware: true }, 109);
        assert_eq!(fl.flows[k as usize].rate, 0.0);
        fl.begin();
        fl.allocate_all(Model::Critical { size_aware: true }, 110);
        assert_eq!(fl.flows[k as usize].rate, 1.0);
    }

    /// Giving up: at line rate 1 with 10 bits left and the deadline 20 s away, a flow at rate 0.5 can make it
    /// until t + (10 - 0.5 t) > 20, t > 20 s; at rate 1 it never gives up before its deadline; a paused PDQ flow
    /// with a 5 s RTT gives up once t + 10 + 5 > 20, t > 5 s; one past its deadline at once.
    #[test]
    fn give_up_times_by_hand() {
        let s = 1_000_000_000_000u64;
        let mut f = flow(0, &[0], 1.0);
        f.left = 10.0;
        f.deadline = 20 * s;
        f.rtt = 5 * s;
        f.term = TERM_LINE;
        f.rate = 0.5;
        assert_eq!(f.give_up_at(0), 20 * s, "(20 s is also its deadline)");
        f.left = 12.0;
        assert_eq!(f.give_up_at(0), 16 * s + 1, "t + 12 - 0.5 t > 20: t > 16 s");
        f.rate = 1.0;
        assert_eq!(f.give_up_at(0), 20 * s);
        f.left = 10.0;
        f.rate = 0.0;
        f.term = TERM_PAUSED;
        assert_eq!(f.give_up_at(0), 5 * s + 1);
        f.left = 16.0;
        assert_eq!(f.give_up_at(0), 0, "16 + 5 > 20: at once");
        f.term = TERM_DEADLINE;
        assert_eq!(f.give_up_at(0), 20 * s);
        assert_eq!(f.give_up_at(21 * s), 21 * s);
        f.term = TERM_NEVER;
        assert_eq!(f.give_up_at(21 * s), NEVER);
    }

    /// QCLIMB's tag at the flow level is Algorithm 1's at every byte count (the appendix's example of
    /// `policy::tests::qclimb_follows_algorithm_1`: queues <= 2, [3, 5], >= 6, L = 6, U = 9, slack 1), and the
    /// byte count at which it is due again is never past a change of it.
    #[test]
    fn qclimb_tags_follow_algorithm_1() {
        let bounds = vec![Bounds { lower: 6, upper: 9, estimate: 7, pias: false }];
        let tags = Tags::Qclimb {
            tagging: Tagging::Qclimb { thresholds: vec![2, 5], slack: 1 },
            thresholds: vec![2, 5],
            slack: 1,
            bounds,
            per_byte: 8.0,
        };
        let want = [2u8, 1, 1, 1, 0, 0, 0, 2, 2, 2, 2];
        for b in 0..want.len() {
            let (tag, at) = tags.at(0, b as f64 * 8.0);
            assert_eq!(tag, want[b], "{b} bytes sent");
            let next = if at.is_finite() { (at / 8.0) as usize } else { want.len() };
            assert!(next > b && want[b..next.min(want.len())].iter().all(|&t| t == tag), "{b}: due at {next}");
        }
        assert_eq!(tags.at(0, 7.0 * 8.0), (2, 9.0 * 8.0), "demoted by bytes sent until U");
    }

    /// RAX at 10 Gbps (Q_1 = 160 us, E = 2): RAX+ ranks a 1 MB flow by its unsent bytes at line rate, 800 us
    /// (queue 3: 640 <= T < 1280) until more than 200,000 bytes are sent (T < 640 us: queue 2); RAX's estimate
    /// of a 100 KB flow is its size plus its unsent bytes at line rate, 160 us at first (queue 1), below Q_1
    /// after one byte.
    #[test]
    fn rax_tags_by_hand() {
        let cfg = Config::from_json(r#"{"scheme": {"name": "rax-plus"}}"#).unwrap();
        assert_eq!(cfg.topology.host_link_gbps(), 10.0);
        let rax = RaxParams::from_config(&cfg, true);
        let tags = Tags::Rax { rax: rax.clone(), size: vec![1_000_000], per_byte: 8.0 };
        assert_eq!(tags.at(0, 0.0), (3, 200_001.0 * 8.0));
        assert_eq!(tags.at(0, 200_001.0 * 8.0).0, 2);
        let tags = Tags::Rax { rax: RaxParams { plus: false, ..rax }, size: vec![100_000], per_byte: 8.0 };
        assert_eq!(tags.at(0, 0.0), (1, 8.0));
        assert_eq!(tags.at(0, 8.0).0, 0);
    }

    /// SRPT: the flow with the fewest bits left takes its path's capacity; the rest share what is left in that
    /// order.
    #[test]
    fn srpt_serves_the_shortest_first() {
        let mut f = vec![flow(0, &[0, 1], 9.0), flow(1, &[0], 9.0), flow(2, &[1], 9.0)];
        f[0].left = 5.0;
        f[1].left = 1.0;
        f[2].left = 9.0;
        assert_eq!(rates(Model::Srpt, &[1.0, 1.0], &mut f), vec![0.0, 1.0, 1.0]);
        f[0].left = 0.5;
        assert_eq!(rates(Model::Srpt, &[1.0, 1.0], &mut f), vec![1.0, 0.0, 0.0]);
    }
}
