//! Least attained service (las): every rate recomputed at each event (`Fluid::allocate_all`) by the global
//! pass (`allocate`), which gives every allocation rule's rates from scratch: the reference that the
//! incremental updates of the other rules are tested against. Homa's rates are this pass's too (`homa`).

use super::fluid::Fluid;
use super::maxmin::{fill, FillScratch};
use super::open::{after, Open};
use super::ordered::crumb;
use super::Model;
use crate::units::{Ps, NEVER};

/// LAS: services within this many wire bits are equal.
const LAS_TIE_BITS: f64 = 1.0;

impl Fluid {
    /// Every active flow's rate from scratch (LAS; SRPT, criticality order and D3 as the runs computed them
    /// before `update_ordered` and `update_d3`): each flow brought up to date first (the order depends on
    /// the bits left or sent), those whose rate changes rescheduled.
    pub(super) fn allocate_all(&mut self, model: Model, now: Ps) {
        for &k in &self.active {
            let f = &mut self.flows[k as usize];
            f.sync(now);
            f.old_rate = f.rate;
        }
        self.set.clear();
        if matches!(model, Model::Srpt | Model::Critical { .. } | Model::D3 | Model::Las | Model::Homa) {
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
        if matches!(model, Model::Srpt | Model::Critical { .. } | Model::Homa) {
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
}

/// The rates of the flows `set` (slots of `flows`) under `model`, from the resources' full capacities, at
/// `now`. SRPT and criticality order take `set` as the order to start sorting from; D3 takes it as the order
/// of arrival.
pub(super) fn allocate(
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
        Model::Homa => super::homa::homa(flows, set, residual, s),
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
