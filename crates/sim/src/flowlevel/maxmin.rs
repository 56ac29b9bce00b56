//! Max-min fairness (tcp, dctcp, l2dct, rcp; within each queue of MLFQ; D3's fair shares): the progressive
//! filling of all the flows, kept from one event to the next and resumed where an event moves it
//! (`Fluid::update_max_min`, `Pass`), and the filling from scratch (`fill`) of the global pass.

use super::fluid::Fluid;
use super::open::Open;
use crate::units::Ps;
use std::cmp::Reverse;
use std::collections::binary_heap::PeekMut;
use std::collections::BinaryHeap;

pub(super) const FROZE_CAP: u32 = u32::MAX;
pub(super) const NOT_FROZEN: u32 = u32::MAX - 1;

impl Fluid {
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
    pub(super) fn update_max_min(&mut self, now: Ps) {
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
pub(super) struct FillScratch {
    pub(super) heap: BinaryHeap<Reverse<(i64, u32)>>,
    /// Per resource: the set's unfrozen flows on it, and those flows.
    pub(super) count: Vec<u32>,
    pub(super) users: Vec<Vec<u32>>,
    pub(super) links: Vec<u32>,
    pub(super) order: Vec<u32>,
    /// MLFQ's queue and LAS's order of service and group; per resource, LAS's last flow in that order.
    pub(super) sorted: Vec<u32>,
    pub(super) group: Vec<u32>,
    pub(super) last: Vec<u32>,
    /// Per resource: the group (numbered in order of service from 1 at each allocation) of its `last` flow.
    pub(super) last_group: Vec<u32>,
    /// The max-min update (`Pass`): per resource the update that made it dirty; per slot the rate a flow took
    /// from its resources when frozen, its state and the update that set it; the flows whose cap may bind; the
    /// flows to replay, by rate.
    pub(super) stamp: u32,
    pub(super) touch_at: Vec<u32>,
    pub(super) took: Vec<f64>,
    pub(super) state: Vec<u8>,
    pub(super) state_at: Vec<u32>,
    pub(super) caps: BinaryHeap<Reverse<(i64, u32)>>,
    pub(super) replay: BinaryHeap<Reverse<(i64, u32)>>,
    /// Homa (`homa`): how many messages a receiver grants to at once, and per receiver the senders it grants to
    /// in the current pass.
    pub(super) homa_overcommit: usize,
    pub(super) granting: std::collections::HashMap<u32, Vec<u32>>,
}

/// A flow's state in the max-min update (`Pass`): as the last filling left it; unfrozen by a dirty resource;
/// frozen in this filling; to fill again from the start (it arrived or its cap changed).
const TENTATIVE: u8 = 0;
const UNDONE: u8 = 1;
const DONE: u8 = 2;
const ADDED: u8 = 3;

/// Progressive filling of the flows `set` on `residual` (what other flows leave of each resource; used up as
/// rates are fixed): repeatedly the most constrained resource (its residual over its unfrozen flows of the
/// set, or a flow's own cap) fixes the rates of its flows. Each flow's `froze` says which.
pub(super) fn fill(flows: &mut [Open], set: &[u32], residual: &mut [f64], s: &mut FillScratch) {
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
pub(super) fn share_key(share: f64) -> i64 {
    let b = share.to_bits() as i64;
    b ^ (((b >> 63) as u64) >> 1) as i64
}

/// The share of a `share_key` (the transformation is its own inverse).
#[inline]
fn key_share(key: i64) -> f64 {
    f64::from_bits((key ^ (((key >> 63) as u64) >> 1) as i64) as u64)
}
