//! D3 (d3): desired rates granted first come first served (the greedy pass of `ordered` in the order of
//! arrival), and what the grants leave shared max-min (a second max-min state, `Fluid::shares`), the shares'
//! small moves summed per resource so that they do not add up unseen (`Fluid::update_d3`).

use super::fluid::{Fluid, EPS};
use crate::units::Ps;

impl Fluid {
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
    pub(super) fn update_d3(&mut self, now: Ps) {
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
}
