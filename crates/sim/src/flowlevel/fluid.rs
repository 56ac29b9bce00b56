//! The state every allocation rule works on (`Fluid`): the flows' slab, the flows active past their set-up,
//! each resource's users and load, and the changes an event makes to them (a flow inserted, activated, touched,
//! finished) before the rule's update, which has a file of its own: `maxmin`, `mlfq`, `ordered`, `d3`, `prio` (LAS, Homa).

use super::mlfq::Layer;
use super::maxmin::FillScratch;
use super::open::Open;
use super::ordered::Order;
use super::prio::Prio;
use crate::units::Ps;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Relative tolerance of the incremental update's tests (a resource is saturated within EPS of its capacity;
/// a rate changed by more than EPS of a resource's capacity has changed).
pub(super) const EPS: f64 = 1e-9;

/// The flows (a slab whose slots are reused, so that memory follows the flows open at once, not the flows of
/// the run), the users of each resource, and the reallocation's scratch.
#[derive(Default)]
pub(super) struct Fluid {
    pub(super) flows: Vec<Open>,
    pub(super) free: Vec<u32>,
    /// Slots of the active flows (past their set-up).
    pub(super) active: Vec<u32>,
    pub(super) capacity: Vec<f64>,
    /// Active flows on each resource.
    pub(super) users: Vec<Vec<u32>>,
    /// The current event's stamp.
    pub(super) epoch: u32,
    /// The set being refilled, the flows to reschedule, the resources that lost a flow this event and the load
    /// they lost.
    pub(super) set: Vec<u32>,
    pub(super) resched: Vec<u32>,
    /// The flows activated in this event, and (SRPT, criticality order) the last event's order as (slot, id).
    pub(super) arrived: Vec<u32>,
    #[cfg_attr(not(test), allow(dead_code))]
    pub(super) order: Vec<(u32, u32)>,
    pub(super) removed_links: Vec<u32>,
    pub(super) removed: Vec<f64>,
    /// Per resource: what the filling has left of it (while dirty in `Fluid::update_max_min`), and the sum of
    /// its users' rates (kept up to date by each update; zero when it has none).
    pub(super) residual: Vec<f64>,
    pub(super) load: Vec<f64>,
    pub(super) fill: FillScratch,
    /// Each resource's capacity (`capacity` is the capacity the current update fills: the same, or under MLFQ
    /// what the more urgent queues leave).
    pub(super) base: Vec<f64>,
    /// MLFQ (empty otherwise): one layer per queue, its users, loads, removals, capacities and set (see
    /// `Fluid::update_mlfq`); the layer being worked on is swapped into the fields above, and they hold empty
    /// vectors in between.
    pub(super) layers: Vec<Layer>,
    /// MLFQ: resources where a more urgent queue's load changed in this event (and a stamp per resource), and
    /// those where a queue's capacity changed, which are dirty from the start of its update.
    pub(super) dirty: Vec<u32>,
    pub(super) dirty_at: Vec<u32>,
    pub(super) cap_changed: Vec<u32>,
    /// SRPT and criticality order (`Fluid::update_ordered`; `users` then holds each resource's users in the
    /// order): how flows are ordered, the event's time, the flows to regrant (a heap in the order, keyed at
    /// `now`), the flows whose own event came up (and those whose rank stepped), the flows whose catching up
    /// is recomputed, and the number of swaps so far.
    pub(super) by: Order,
    pub(super) now: Ps,
    pub(super) queue: BinaryHeap<Reverse<(Ps, i64, u32, u32)>>,
    pub(super) own: Vec<u32>,
    pub(super) moved: Vec<u32>,
    pub(super) catchers: Vec<u32>,
    pub(super) pending: Vec<u32>,
    pub(super) swaps: u64,
    /// D3 (`Fluid::update_d3`): the fair shares, a max-min state of its own over the same slots (each flow's
    /// rate there is its share, its cap its line rate less its grant, each resource's capacity what the grants
    /// leave), and the number of flows activated so far (the order of arrival). The resources where a grant
    /// moved in this event are in `dirty`.
    pub(super) shares: Option<Box<Fluid>>,
    pub(super) arrivals: u64,
    /// D3: per resource, the shares' changes within EPS of the capacity summed since it was last dirty from the
    /// start of an update, and the resources where that sum passed EPS (dirty at the next update).
    pub(super) drift: Vec<f64>,
    pub(super) drifted: Vec<u32>,
    /// LAS and Homa (`Fluid::update_prio`): their incremental state.
    pub(super) prio: Option<Box<Prio>>,
}

impl Fluid {
    pub(super) fn begin(&mut self) {
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

    /// `activate`, `touch`, `finish` in the flow's layer (MLFQ) or in the one state (the other models).
    pub(super) fn start(&mut self, k: u32, now: Ps) {
        let c = self.flows[k as usize].class;
        self.in_layer(c, |fl| fl.activate(k, now));
    }

    pub(super) fn changed(&mut self, k: u32) {
        let c = self.flows[k as usize].class;
        self.in_layer(c, |fl| fl.touch(k));
    }

    pub(super) fn done(&mut self, k: u32) {
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

    /// A new flow in its set-up wait: a slot, not yet on its resources.
    pub(super) fn insert(&mut self, f: Open, capacity: &[f64]) -> u32 {
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
    pub(super) fn reserve(&mut self, capacity: &[f64]) {
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
    pub(super) fn activate(&mut self, k: u32, now: Ps) {
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
        self.attach(k);
        self.resched.push(k);
        self.arrived.push(k);
    }

    /// Flow `k` joins the users of each resource of its path (its index in each list kept in `pos`) as a flow to
    /// fill from a rate of 0: a flow that starts, moves to another queue (MLFQ) or to another path (HyLine).
    pub(super) fn attach(&mut self, k: u32) {
        let f = &mut self.flows[k as usize];
        for h in 0..f.hops_len as usize {
            let u = &mut self.users[f.hops[h] as usize];
            f.pos[h] = u.len() as u32;
            u.push(k);
        }
        f.old_rate = 0.0;
        f.mark = self.epoch;
        self.set.push(k);
    }

    /// Put an active flow whose cap or queue changed in the set to refill.
    pub(super) fn touch(&mut self, k: u32) {
        let f = &mut self.flows[k as usize];
        if f.mark != self.epoch {
            f.mark = self.epoch;
            f.old_rate = f.rate;
            self.set.push(k);
        }
    }

    /// A flow sent its last bit: off its resources (which lose its rate), its slot freed.
    pub(super) fn finish(&mut self, k: u32) {
        if self.by != Order::None {
            self.leave(k);
            if let Some(sh) = self.shares.as_deref_mut() {
                sh.finish(k);
                sh.free.clear(); // (its slots are the flows' own)
            }
        } else {
            if let Some(p) = self.prio.as_deref_mut() {
                p.leave(k, &self.flows[k as usize]);
            }
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
    pub(super) fn detach(&mut self, k: u32) {
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
}
