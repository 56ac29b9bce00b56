//! Greedy grants in an order: pfabric's SRPT, PDQ's criticality order (with the hand-over, Early Start and Early
//! Termination; the size-unaware ranks of the PDQ paper's section 5.6), and D3's grants in the order of arrival.
//! Each resource keeps its users in the order, an event regrants only the flows it can move, and a flow that
//! catches up with the one ahead of it swaps places with it (`Fluid::update_ordered`).

use super::fluid::Fluid;
use super::maxmin::share_key;
use super::open::Open;
use super::Model;
use crate::units::{Ps, NEVER};
use std::cmp::Reverse;

/// A greedy grant of `r` to a flow of line rate `line`: 0 if below a billionth of the line rate (see
/// `Open::potential`).
#[inline]
pub(super) fn crumb(r: f64, line: f64) -> f64 {
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
pub(super) fn order_key(by: Order, f: &Open, now: Ps) -> (Ps, i64, u32) {
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
pub(super) enum Order {
    #[default]
    None,
    Srpt,
    Critical,
    Ranked,
    Arrival,
}

impl Fluid {
    /// SRPT, criticality order or D3 under `model`, updated incrementally (`update_ordered`; D3 `update_d3`).
    pub(super) fn ordered(model: Model) -> Self {
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
    pub(super) fn catches(&self) -> bool {
        matches!(self.by, Order::Srpt | Order::Critical)
    }

    /// SRPT, criticality order: flow `k`'s own event came up (its cap may have changed, its hand-over wait ended,
    /// it caught up with the flow ahead of it); `moved`: its rank stepped, so its place in the order moved.
    pub(super) fn own_event(&mut self, k: u32, moved: bool) {
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
    pub(super) fn leave(&mut self, k: u32) {
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
    pub(super) fn catch_time(&self, b: u32) -> Ps {
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
    pub(super) fn update_ordered(&mut self, now: Ps) {
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
}
