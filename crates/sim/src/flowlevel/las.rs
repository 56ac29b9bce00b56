//! Least attained service (las): the global pass (`allocate`), which gives every allocation rule's rates from
//! scratch: the reference that the incremental updates are tested against (`Fluid::allocate_all`); LAS's own
//! pieces, shared with its incremental update (`prio`): the rates of a set of flows by groups of equal service
//! (`las_rates`) and, on one resource, its groups and their catching up (`las_groups`). Homa's rates are this
//! pass's too (`homa`).

use super::fluid::Fluid;
use super::maxmin::{fill, FillScratch};
use super::open::{after, Open};
use super::ordered::crumb;
use super::Model;
use crate::units::{Ps, NEVER};

/// LAS: services within this many wire bits are equal.
pub(super) const LAS_TIE_BITS: f64 = 1.0;

impl Fluid {
    /// Every active flow's rate from scratch (LAS; SRPT, criticality order and D3 as the runs computed them
    /// before `update_ordered` and `update_d3`): each flow brought up to date first (the order depends on
    /// the bits left or sent), those whose rate changes rescheduled.
    #[cfg_attr(not(test), allow(dead_code))]
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
            las_rates(flows, set, residual, s);
            let sorted = std::mem::take(&mut s.sorted);
            // the next catching up on each resource: a flow served faster than the first flow of the next group in
            // order of service on one of its resources reaches its service then, and the two share from there (a
            // resource's groups: its users in order of service, within a bit of the group's first; `las_groups`)
            for &k in &sorted {
                flows[k as usize].catch_at = NEVER;
            }
            s.links.clear();
            for &k in &sorted {
                for &l in flows[k as usize].path() {
                    if s.users[l as usize].is_empty() {
                        s.links.push(l);
                    }
                    s.users[l as usize].push(k);
                }
            }
            let mut catches: Vec<(u32, Ps)> = Vec::new();
            for &l in &s.links {
                las_groups(flows, &s.users[l as usize], now, |p, _, t, _| catches.push((p, t)), |_, _| {});
                s.users[l as usize].clear();
            }
            for (p, t) in catches {
                let f = &mut flows[p as usize];
                f.catch_at = f.catch_at.min(t);
            }
            s.sorted = sorted;
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

/// LAS's rates of the flows `set` on what `residual` holds (used up as rates are fixed): in order of service (the
/// order given is the last event's, nearly sorted; left in `s.sorted`), flows whose service is equal (within a
/// bit: the picosecond a catching up is rounded to leaves less) as one group, each group max-min on what the
/// groups before it left.
pub(super) fn las_rates(flows: &mut [Open], set: &[u32], residual: &mut [f64], s: &mut FillScratch) {
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
    s.sorted = sorted;
    s.group = group;
}

/// LAS on one resource whose users `seg` are in order of service at `now`: its groups (each flow within a bit of
/// the group's first is in it) and, between each group and the next, the catching up: the fastest member of
/// the group (the members' services are within a bit, so it is the one that catches up first) reaches the
/// service of the next group's first flow, if it is faster, at a time handed to `catch(flow, next, time,
/// within)`, and the two share from there (`within`: when it comes within a bit of it, from when a new pass
/// finds them in one group). A group whose members' rates differ is handed to `drift(members, time)` with the
/// earliest time its services can spread by more than a bit (a bit less their spread, over its fastest rate
/// less its slowest), when the order of service splits it.
pub(super) fn las_groups(
    flows: &[Open],
    seg: &[u32],
    now: Ps,
    mut catch: impl FnMut(u32, u32, Ps, Ps),
    mut drift: impl FnMut(&[u32], Ps),
) {
    let mut start = 0;
    let mut fastest = u32::MAX;
    for j in 0..=seg.len() {
        let new_group = j == seg.len()
            || j > 0 && flows[seg[j] as usize].sent_at(now) - flows[seg[start] as usize].sent_at(now) > LAS_TIE_BITS;
        if new_group && j > 0 {
            let group = &seg[start..j];
            let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
            let (mut slow, mut fast) = (f64::INFINITY, f64::NEG_INFINITY);
            for &m in group {
                let fm = &flows[m as usize];
                let s = fm.sent_at(now);
                (lo, hi) = (lo.min(s), hi.max(s));
                (slow, fast) = (slow.min(fm.rate), fast.max(fm.rate));
            }
            if fast > slow {
                let t = after(now, (LAS_TIE_BITS - (hi - lo)).max(0.0), fast - slow).max(now + 1);
                if t != NEVER {
                    drift(group, t);
                }
            }
            if j < seg.len() {
                let (fp, fk) = (&flows[fastest as usize], &flows[seg[j] as usize]);
                let (sp, sk) = (fp.sent_at(now), fk.sent_at(now));
                if sk - sp > LAS_TIE_BITS && fp.rate > fk.rate {
                    let within = after(now, sk - sp - LAS_TIE_BITS, fp.rate - fk.rate).max(now + 1);
                    catch(fastest, seg[j], after(now, sk - sp, fp.rate - fk.rate), within);
                }
            }
            start = j;
            fastest = u32::MAX;
        }
        if j < seg.len() && (fastest == u32::MAX || flows[seg[j] as usize].rate > flows[fastest as usize].rate) {
            fastest = seg[j];
        }
    }
}
