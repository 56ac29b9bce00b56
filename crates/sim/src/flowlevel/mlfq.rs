//! Strict priority by queue, max-min within a queue (pias's MLFQ; qclimb, rax and rax-plus by their tags): one
//! max-min state per queue (`Layer`), a flow moving between them as its queue changes, updated queue by queue on
//! what the more urgent queues leave (`Fluid::update_mlfq`).

use super::fluid::{Fluid, EPS};
use crate::units::Ps;

/// One queue of MLFQ, as `Fluid` holds the max-min state of all flows: its flows' users of each resource, their
/// load, what finished or demoted flows removed in this event, the capacity the queue has (what the more
/// urgent queues leave) and the flows to refill.
#[derive(Default)]
pub(super) struct Layer {
    pub(super) users: Vec<Vec<u32>>,
    pub(super) load: Vec<f64>,
    pub(super) removed: Vec<f64>,
    pub(super) removed_links: Vec<u32>,
    pub(super) capacity: Vec<f64>,
    pub(super) set: Vec<u32>,
}

impl Fluid {
    /// MLFQ with `queues` queues: every flow's max-min state lives in the layer of its queue.
    pub(super) fn layered(queues: usize) -> Self {
        Fluid { layers: (0..queues.max(1)).map(|_| Layer::default()).collect(), ..Fluid::default() }
    }

    /// Swap layer `c` with the fields the max-min code works on (its own inverse).
    pub(super) fn swap(&mut self, c: u8) {
        let y = &mut self.layers[c as usize];
        std::mem::swap(&mut self.users, &mut y.users);
        std::mem::swap(&mut self.load, &mut y.load);
        std::mem::swap(&mut self.removed, &mut y.removed);
        std::mem::swap(&mut self.removed_links, &mut y.removed_links);
        std::mem::swap(&mut self.capacity, &mut y.capacity);
        std::mem::swap(&mut self.set, &mut y.set);
    }

    /// MLFQ: flow `k` (active) moves from queue `from` to its queue now: it leaves the old layer's users (which
    /// lose its rate, as from a finished flow) and joins the new one's as a flow to fill.
    pub(super) fn requeue(&mut self, k: u32, from: u8) {
        let to = self.flows[k as usize].class;
        self.swap(from);
        self.detach(k);
        self.swap(from);
        self.swap(to);
        self.attach(k);
        self.swap(to);
    }

    /// MLFQ, incrementally: queue by queue from the most urgent, the max-min update of that queue's layer on
    /// the capacity the more urgent queues leave. A queue's capacity changes only on the resources where a more
    /// urgent queue's load changed in this event (its flows that changed rate, finished, left or joined it):
    /// those are dirty from the start of that queue's max-min update where the queue filled the resource or is
    /// over its new capacity there. The same allocation as a global recomputation queue by queue (`incremental_mlfq_equals_global`).
    pub(super) fn update_mlfq(&mut self, now: Ps) {
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
}
