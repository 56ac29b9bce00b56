//! LAS and Homa incrementally (`Fluid::update_prio`): an event recomputes only the flows whose rate it can
//! change, with the global passes' own rules (`las::allocate`, `homa::homa`) on what the other flows leave.
//!
//! Both rules serve flows in an order (LAS: least service first, flows within a bit of each other as one group
//! sharing max-min; Homa: the unscheduled phase first, then fewest bits left, with the receivers' grants in
//! order of bits left), and a flow's rate depends only on the flows at or ahead of it in that order on its
//! resources (and, under Homa, on its receiver's messages with fewer bits left, whose grants come first). So
//! what an event can change is closed: the flows it touches (arrived, finished, changed cap or phase, caught
//! up), then every flow at or behind one of those on one of its resources (Homa: on its receiver's link,
//! every message with as many bits left or more), and so on. A flow outside that set has only flows of the
//! set behind it on its resources: its rate stands. The set's flows are recomputed by the global pass on
//! what the others leave of their resources (each resource's capacity less the rates of the flows outside
//! the set, taken in the order, as the global pass takes them), the receivers' grants starting from the
//! grants of the messages outside the set.
//!
//! The global pass re-sorted every flow at every event, so an order that changed between events (a group of
//! LAS whose members' services drift apart by more than a bit, a Homa message whose bits left fall below those
//! of a slower one ahead of it) took effect at the next event of any kind. That is kept: when an update
//! computes the rates, it also computes, per resource, when such a change comes (`Prio::recheck`), and the
//! first event at or after that time recomputes the flows involved, as the global pass would have. (LAS's
//! catching up, a faster flow reaching the service of the group after it, is an event of its own, as before:
//! its time is kept per flow and resource, `Prio::hop_catch`.) What is not kept: LAS's groups are chained
//! within each resource's users rather than over all the flows (the two differ only where flows of other
//! resources fall within a bit of a group's boundary), and the rounding of the global pass, which brought
//! every flow up to date at every event (here, a flow is brought up to date when its rate may change).
//! `incremental_prio_equals_global` checks the rates against the global pass after every event of random
//! instances; on the reference scenario every flow's FCT is the global pass's within the rounding measured
//! in docs/flow-level.md.

use super::fluid::Fluid;
use super::homa::homa_pass;
use super::las::{las_groups, las_rates, LAS_TIE_BITS};
use super::open::{after, Open};
use super::Model;
use super::MAX_HOPS;
use crate::units::{Ps, NEVER};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// The incremental state of LAS and Homa (held by `Fluid::prio`).
pub(super) struct Prio {
    model: Model,
    /// The resources that lost a flow in this event, with that flow's place in the order (LAS: its service;
    /// Homa: its phase and bits left).
    pub(super) gone: Vec<(u32, f64, u8, f64)>,
    /// The flows to recompute (the closure of the event's flows), and its stamp per slot (`Open::cstamp`).
    set: Vec<u32>,
    /// The resources of those flows and of the finished ones (stamped per resource), and each one's users in the
    /// order at `now`: `spans` gives each resource's slice of `sorted`.
    res: Vec<u32>,
    res_at: Vec<u32>,
    sorted: Vec<u32>,
    spans: Vec<(u32, u32, u32)>,
    /// Per resource: the last update that seeded its receiver's grants (Homa).
    seeded_at: Vec<u32>,
    /// LAS: per slot and hop, when the flow catches up with the group after it on that resource (NEVER: it
    /// does not); its `catch_at` is the least over its hops.
    hop_catch: Vec<[Ps; MAX_HOPS]>,
    /// When an order changes between events (a LAS group drifting apart, a Homa message passing a slower one
    /// ahead of it): (time, slot, id) of the flows to recompute at the first event from that time.
    recheck: Rechecks,
    scratch: Vec<u32>,
}

/// The times at which flows are to be recomputed (`Prio::recheck`): a heap of (time, slot, id), with per slot the
/// earliest time pending (a later one for the same slot is not kept: the recomputation then sets the next), so
/// that the heap holds about one entry per flow.
#[derive(Default)]
pub(super) struct Rechecks {
    heap: BinaryHeap<Reverse<(Ps, u32, u32)>>,
    due: Vec<Ps>,
}

impl Rechecks {
    fn push(&mut self, at: Ps, k: u32, id: u32) {
        let k_ = k as usize;
        if self.due.len() <= k_ {
            self.due.resize(k_ + 1, NEVER);
        }
        if at < self.due[k_] {
            self.due[k_] = at;
            self.heap.push(Reverse((at, k, id)));
        }
    }

    /// The next (slot, id) due by `now`, if any.
    fn pop(&mut self, now: Ps) -> Option<(u32, u32)> {
        while let Some(&Reverse((at, k, id))) = self.heap.peek() {
            if at > now {
                return None;
            }
            self.heap.pop();
            if self.due[k as usize] == at {
                self.due[k as usize] = NEVER;
                return Some((k, id));
            }
        }
        None
    }

    /// Slot `k`'s flow finished: what it had pending is dropped.
    fn clear(&mut self, k: u32) {
        if let Some(d) = self.due.get_mut(k as usize) {
            *d = NEVER;
        }
    }
}

impl Prio {
    pub(super) fn new(model: Model) -> Self {
        Prio {
            model,
            gone: Vec::new(),
            set: Vec::new(),
            res: Vec::new(),
            res_at: Vec::new(),
            sorted: Vec::new(),
            spans: Vec::new(),
            seeded_at: Vec::new(),
            hop_catch: Vec::new(),
            recheck: Rechecks::default(),
            scratch: Vec::new(),
        }
    }

    /// How many flows the last update recomputed (for the tests).
    #[cfg(test)]
    pub(super) fn last_set(&self) -> &[u32] {
        &self.set
    }

    /// A flow leaves its resources (finished): the flows behind it there are to be recomputed.
    pub(super) fn leave(&mut self, k: u32, f: &Open) {
        self.recheck.clear(k);
        for &l in f.path() {
            self.gone.push((l, f.sent, f.class, f.left));
        }
    }
}

/// Homa's order: (phase, bits left at `now`, id).
#[inline]
fn homa_key(f: &Open, now: Ps) -> (u8, f64, u32) {
    (f.class, f.left_at(now), f.id)
}

/// Is `g` at or behind `f` in the order of `model` on a resource they share (`last`: their receiver's link,
/// where Homa's grants go in order of bits left)? `moved`: `f`'s phase may have changed in this event, so
/// it is taken where it was before as well (in the unscheduled phase: the flows behind either place).
#[inline]
fn behind(model: Model, g: &Open, f: &Open, last: bool, moved: bool, now: Ps) -> bool {
    if model == Model::Las {
        g.sent_at(now) >= f.sent_at(now) - LAS_TIE_BITS
    } else {
        let (kg, mut kf) = (homa_key(g, now), homa_key(f, now));
        if moved {
            kf.0 = 0;
        }
        (kg.0, kg.1) >= (kf.0, kf.1) || last && kg.1 >= kf.1
    }
}

impl Fluid {
    /// LAS or Homa (`model`) incrementally.
    pub(super) fn prio(model: Model) -> Self {
        Fluid { prio: Some(Box::new(Prio::new(model))), ..Fluid::default() }
    }

    /// LAS and Homa, incrementally (see the module docs): the flows the event can move recomputed on what the
    /// others leave, their catching up (LAS) and the times at which an order changes recomputed on the
    /// resources they use.
    pub(super) fn update_prio(&mut self, now: Ps) {
        let mut p = self.prio.take().expect("LAS or Homa");
        let model = p.model;
        let ep = self.epoch;
        if p.res_at.len() < self.capacity.len() {
            p.res_at.resize(self.capacity.len(), 0);
            p.seeded_at.resize(self.capacity.len(), 0);
        }
        if p.hop_catch.len() < self.flows.len() {
            p.hop_catch.resize(self.flows.len(), [NEVER; MAX_HOPS]);
        }
        // the event's flows: arrived, changed, their own event come, an order changed
        p.set.clear();
        let seed = |k: u32, flows: &mut Vec<Open>, set: &mut Vec<u32>| {
            let f = &mut flows[k as usize];
            if f.act != u32::MAX && f.cstamp != ep {
                f.cstamp = ep;
                set.push(k);
            }
        };
        for j in 0..self.set.len() {
            seed(self.set[j], &mut self.flows, &mut p.set);
        }
        // (the flows that arrived or changed cap or phase: Homa's phase moves a flow in the order)
        let touched = p.set.len();
        for j in 0..self.resched.len() {
            seed(self.resched[j], &mut self.flows, &mut p.set);
        }
        while let Some((k, id)) = p.recheck.pop(now) {
            if self.flows[k as usize].id == id {
                seed(k, &mut self.flows, &mut p.set);
            }
        }
        // what finished flows leave: the flows behind them
        for j in 0..p.gone.len() {
            let (l, sent, class, left) = p.gone[j];
            let last = true; // (a finished message's receiver link or not, the test below is the wider)
            for &g in &self.users[l as usize] {
                let f = &self.flows[g as usize];
                let behind = if model == Model::Las {
                    f.sent_at(now) >= sent - LAS_TIE_BITS
                } else {
                    let (c, v, _) = homa_key(f, now);
                    (c, v) >= (class, left) || last && v >= left
                };
                if behind && f.cstamp != ep {
                    self.flows[g as usize].cstamp = ep;
                    p.set.push(g);
                }
            }
        }
        // the closure: every flow at or behind one of the set on one of its resources
        let mut i = 0;
        while i < p.set.len() {
            let k = p.set[i];
            i += 1;
            let n = self.flows[k as usize].hops_len as usize;
            for h in 0..n {
                let l = self.flows[k as usize].hops[h] as usize;
                for &g in &self.users[l] {
                    let (fg, fk) = (&self.flows[g as usize], &self.flows[k as usize]);
                    if fg.cstamp != ep && behind(model, fg, fk, h + 1 == n, i <= touched, now) {
                        self.flows[g as usize].cstamp = ep;
                        p.set.push(g);
                    }
                }
            }
        }
        for &k in &p.set {
            let f = &mut self.flows[k as usize];
            f.sync(now);
            f.old_rate = f.rate;
        }
        // their resources (and those of the finished flows): each one's users in the order, and what the flows
        // outside the set leave of it
        p.res.clear();
        for &k in &p.set {
            for &l in self.flows[k as usize].path() {
                if p.res_at[l as usize] != ep {
                    p.res_at[l as usize] = ep;
                    p.res.push(l);
                }
            }
        }
        for &(l, ..) in &p.gone {
            if p.res_at[l as usize] != ep {
                p.res_at[l as usize] = ep;
                p.res.push(l);
            }
        }
        p.gone.clear();
        p.sorted.clear();
        p.spans.clear();
        for &l in &p.res {
            let li = l as usize;
            let start = p.sorted.len();
            p.sorted.extend_from_slice(&self.users[li]);
            let flows = &self.flows;
            let seg = &mut p.sorted[start..];
            if model == Model::Las {
                seg.sort_by(|&a, &b| {
                    let (fa, fb) = (&flows[a as usize], &flows[b as usize]);
                    fa.sent_at(now).total_cmp(&fb.sent_at(now)).then(fa.id.cmp(&fb.id))
                });
            } else {
                seg.sort_by(|&a, &b| {
                    let (ka, kb) = (homa_key(&flows[a as usize], now), homa_key(&flows[b as usize], now));
                    ka.0.cmp(&kb.0).then(ka.1.total_cmp(&kb.1)).then(ka.2.cmp(&kb.2))
                });
            }
            let mut left = self.capacity[li];
            for &g in seg.iter() {
                let f = &flows[g as usize];
                if f.cstamp != ep {
                    left -= f.rate;
                }
            }
            self.residual[li] = left;
            p.spans.push((l, start as u32, p.sorted.len() as u32));
        }
        // the set's rates, by the global pass's rule
        if model == Model::Las {
            las_rates(&mut self.flows, &p.set, &mut self.residual, &mut self.fill);
        } else {
            // (each receiver's grants start from those of its messages outside the set, which have fewer bits
            // left than any of the set)
            for &k in &p.set {
                let d = self.flows[k as usize].dst;
                self.fill.granting.entry(d).or_default().clear();
            }
            for &k in &p.set {
                let f = &self.flows[k as usize];
                let l = f.hops[f.hops_len as usize - 1] as usize;
                if p.seeded_at[l] == ep {
                    continue;
                }
                p.seeded_at[l] = ep;
                let senders = self.fill.granting.entry(f.dst).or_default();
                for &g in &self.users[l] {
                    let fg = &self.flows[g as usize];
                    if fg.cstamp != ep && fg.granted && fg.dst == f.dst && !senders.contains(&fg.src) {
                        senders.push(fg.src);
                    }
                }
            }
            homa_pass(&mut self.flows, &p.set, &mut self.residual, &mut self.fill);
        }
        for &k in &p.set {
            let f = &self.flows[k as usize];
            if f.rate != f.old_rate {
                self.resched.push(k);
            }
        }
        // on each resource, in the order: LAS's catching up and groups drifting apart, Homa's passing
        let mut recheck = std::mem::take(&mut p.recheck);
        for s in 0..p.spans.len() {
            let (l, a, b) = p.spans[s];
            let seg = &p.sorted[a as usize..b as usize];
            if model == Model::Las {
                las_watch(&self.flows, &mut p.hop_catch, &mut recheck, l, seg, now);
            } else {
                homa_watch(&self.flows, &mut recheck, seg, now);
                // (a receiver's link, for the messages to that receiver: its grants go in order of bits left,
                // whatever the phase)
                p.scratch.clear();
                p.scratch.extend(seg.iter().copied().filter(|&g| {
                    let f = &self.flows[g as usize];
                    f.hops[f.hops_len as usize - 1] == l
                }));
                if p.scratch.len() > 1 {
                    let flows = &self.flows;
                    p.scratch.sort_by(|&x, &y| {
                        let (fx, fy) = (&flows[x as usize], &flows[y as usize]);
                        fx.left_at(now).total_cmp(&fy.left_at(now)).then(fx.id.cmp(&fy.id))
                    });
                    passing(&self.flows, &mut recheck, &p.scratch, now, false);
                }
            }
        }
        p.recheck = recheck;
        if model == Model::Las {
            // each user's catching up: the least over its hops
            for s in 0..p.spans.len() {
                let (_, a, b) = p.spans[s];
                for j in a..b {
                    let k = p.sorted[j as usize];
                    let f = &mut self.flows[k as usize];
                    let c = p.hop_catch[k as usize][..f.hops_len as usize].iter().copied().min().unwrap_or(NEVER);
                    if c != f.catch_at {
                        f.catch_at = c;
                        f.sync(now);
                        self.resched.push(k);
                    }
                }
            }
        }
        self.prio = Some(p);
    }
}

/// LAS on resource `l`, whose users `seg` are in order of service at `now`: each flow's catching up there, and
/// the groups whose services drift apart (`las_groups`).
fn las_watch(
    flows: &[Open],
    hop_catch: &mut [[Ps; MAX_HOPS]],
    recheck: &mut Rechecks,
    l: u32,
    seg: &[u32],
    now: Ps,
) {
    for &k in seg {
        let h = flows[k as usize].hop_of(l);
        hop_catch[k as usize][h] = NEVER;
    }
    let mut drifting: Vec<(Ps, u32)> = Vec::new();
    las_groups(
        flows,
        seg,
        now,
        |p, k, t, within| {
            let h = flows[p as usize].hop_of(l);
            hop_catch[p as usize][h] = hop_catch[p as usize][h].min(t);
            if within < t {
                recheck.push(within, p, flows[p as usize].id);
                recheck.push(within, k, flows[k as usize].id);
            }
        },
        |group, t| drifting.extend(group.iter().map(|&m| (t, m))),
    );
    for (t, m) in drifting {
        recheck.push(t, m, flows[m as usize].id);
    }
}

/// Homa on one resource, its users `seg` in the order at `now`: when a message passes a slower one ahead of it
/// in the same phase.
fn homa_watch(flows: &[Open], recheck: &mut Rechecks, seg: &[u32], now: Ps) {
    passing(flows, recheck, seg, now, true);
}

/// For each pair of neighbours in `seg` (ordered by bits left at `now`; `same_phase`: only within a phase),
/// when the one behind, faster, reaches the bits left of the one ahead: both are recomputed at the first event
/// from then.
fn passing(flows: &[Open], recheck: &mut Rechecks, seg: &[u32], now: Ps, same_phase: bool) {
    for w in seg.windows(2) {
        let (a, b) = (&flows[w[0] as usize], &flows[w[1] as usize]);
        if b.rate <= a.rate || same_phase && a.class != b.class {
            continue;
        }
        let gap = (b.left_at(now) - a.left_at(now)).max(0.0);
        let t = after(now, gap, b.rate - a.rate).max(now + 1);
        if t != NEVER {
            recheck.push(t, w[0], a.id);
            recheck.push(t, w[1], b.id);
        }
    }
}
