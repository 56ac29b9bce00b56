//! HyLine's central manager (MAN): path-aware admission and preemption of second-class flows (HyLine paper,
//! §IV-A, C, D). Pure logic: it sees requests, finishes and time, and answers with signals; the engine carries
//! the messages (with the paper's T_cost) and the hosts obey them.
//!
//! What the manager knows: every link's capacity, every host's line rate R, and the second-class flows it has
//! let in (each sends at its host's line rate on the path it was given, so it takes R of every link on that
//! path). It knows nothing of first-class flows (PFC protects the second class from them). A link has room for
//! one more flow when its capacity minus R per admitted flow is at least R.
//!
//! The rules, and where each comes from:
//! - **Priority** is the remaining size, smaller first (§IV-C). The manager tracks it itself: an admitted flow's
//!   remaining size falls at R from the time it was let in, a stopped flow's stays; the engine replaces the
//!   estimate with each sender's own count before every decision ([`Manager::set_remaining`]), as the authors'
//!   ns-2 manager asks every sender for it.
//! - **Per path** (§IV-C/D, Algorithm 1): on each link of the path without room, the flows of lower priority
//!   than the new one (larger remaining size) are the candidates to preempt; a link without room and without
//!   such a flow blocks the path. N is the fewest candidates that free every full link (one flow may free several
//!   of the path's links; the manager searches the combinations, at most a few flows per link), and P_max the
//!   largest remaining size among them: the new flow's wait if it does not preempt. Among sets of N flows the one
//!   with the lowest priorities is preempted (as the authors' code prefers).
//! - **The MNP rule** (§IV-C): a path's cost is min(N x P_new, P_max) (0 when no preemption is needed); the path
//!   of least cost wins. The flow is let in on it if N = 0 or N x P_new < P_max (preempting the N flows);
//!   otherwise it waits, stopped, for bandwidth to free up.
//! - **Balanced load** (§IV-D): among paths of equal cost, the one with the most remaining bandwidth (the least,
//!   over its links, of capacity minus admitted flows' rates, with the new flow on it and the preempted ones off);
//!   ties broken at random from the run's seed.
//! - **No path changes** (§IV-D): an admitted flow keeps its path; only new and stopped flows get one.
//! - **Reschedule** (§IV-D): after a request that preempted flows, and after a flow finishes, one round over the
//!   stopped flows in priority order, each admitted by the same rules if it can be; flows preempted during the
//!   round are not taken up again in it.
//!
//! Where the authors' ns-2 manager (github.com/Soheil-ab/HyLine, `controller.cc`) differs from the paper's text,
//! the paper's text is followed and the difference written here: that code picks the path with the fewest
//! preemptions (then the most remaining bandwidth) rather than the least min(N x P_new, P_max), and compares
//! N x P_new with the least P_max over all paths rather than the chosen path's.

use crate::units::Ps;

/// What the manager tells a host about a flow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Signal {
    /// CTS: send at line rate on this path (the index into the paths of the flow's request).
    Go { flow: u32, path: u32 },
    /// STS: stop (preempted, or not admitted yet); the flow keeps its data and does not time out.
    Stop { flow: u32 },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Admitted,
    Stopped,
}

#[derive(Debug, Clone)]
struct MFlow {
    id: u32,
    /// Remaining bytes when last updated (`at`), and the time of that update.
    remaining: f64,
    at: Ps,
    state: State,
    /// Index of the admitted path in `paths`.
    path: usize,
    /// Candidate paths (link ids) from its request.
    paths: Vec<Vec<u32>>,
    /// The host's line rate (bit/s).
    rate: f64,
}

/// Counters of the manager's work.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ManagerCounters {
    pub requests: u64,
    pub admissions: u64,
    pub preemptions: u64,
    pub stops: u64,
}

/// HyLine's manager (see the module docs).
#[derive(Debug, Clone)]
pub struct Manager {
    capacity: Vec<f64>,
    /// Admitted flows on each link (indices into `flows`).
    on_link: Vec<Vec<usize>>,
    flows: Vec<MFlow>,
    /// Flow id -> index in `flows`.
    index: std::collections::BTreeMap<u32, usize>,
    rng: u64,
    pub counters: ManagerCounters,
}

/// A path's evaluation for a new flow.
#[derive(Debug, Clone)]
struct Choice {
    path: usize,
    cost: f64,
    preempt: Vec<usize>,
    admit: bool,
    room: f64,
}

impl Manager {
    /// A manager for links of these capacities (bit/s), breaking ties from `seed`.
    pub fn new(capacity_bps: &[u64], seed: u64) -> Self {
        Manager {
            capacity: capacity_bps.iter().map(|&c| c as f64).collect(),
            on_link: vec![Vec::new(); capacity_bps.len()],
            flows: Vec::new(),
            index: Default::default(),
            rng: seed,
            counters: ManagerCounters::default(),
        }
    }

    /// Remaining size of flow `i` at `now`: falling at its line rate while admitted.
    fn remaining(&self, i: usize, now: Ps) -> f64 {
        let f = &self.flows[i];
        match f.state {
            State::Admitted => (f.remaining - f.rate / 8.0 * (now.saturating_sub(f.at)) as f64 / 1e12).max(0.0),
            State::Stopped => f.remaining,
        }
    }

    fn settle(&mut self, i: usize, now: Ps) {
        let r = self.remaining(i, now);
        let f = &mut self.flows[i];
        f.remaining = r;
        f.at = now;
    }

    /// Bandwidth of `link` left beyond its admitted flows.
    fn free(&self, link: u32) -> f64 {
        let l = link as usize;
        self.capacity[l] - self.on_link[l].iter().map(|&i| self.flows[i].rate).sum::<f64>()
    }

    /// An RTS: flow `flow` of `size` bytes from a host of line rate `rate_bps`, with its candidate paths (each a
    /// list of link ids). Signals go to `out`.
    pub fn request(
        &mut self,
        now: Ps,
        flow: u32,
        size: u64,
        rate_bps: u64,
        paths: Vec<Vec<u32>>,
        out: &mut Vec<Signal>,
    ) {
        self.counters.requests += 1;
        let i = self.flows.len();
        self.flows.push(MFlow {
            id: flow,
            remaining: size as f64,
            at: now,
            state: State::Stopped,
            path: 0,
            paths,
            rate: rate_bps as f64,
        });
        self.index.insert(flow, i);
        match self.schedule(i, now, &[], out) {
            None => {
                self.counters.stops += 1;
                out.push(Signal::Stop { flow });
            }
            Some(true) => self.reschedule(now, out),
            Some(false) => {}
        }
    }

    /// The sender's own count of flow `flow`'s remaining bytes at `now`, replacing the manager's estimate (the
    /// authors' ns-2 manager asks every sender for it before each decision). Unknown flows are ignored.
    pub fn set_remaining(&mut self, flow: u32, bytes: u64, now: Ps) {
        if let Some(&i) = self.index.get(&flow) {
            let f = &mut self.flows[i];
            f.remaining = bytes as f64;
            f.at = now;
        }
    }

    /// A FIN: flow `flow` is done (or nearly): its links are free; one round of rescheduling.
    pub fn finish(&mut self, now: Ps, flow: u32, out: &mut Vec<Signal>) {
        let Some(i) = self.index.remove(&flow) else { return };
        if self.flows[i].state == State::Admitted {
            self.take_off(i);
        }
        // (the slot stays; an index map keeps ids to slots, so removal needs no shifting)
        self.flows[i].state = State::Stopped;
        self.flows[i].remaining = f64::INFINITY;
        self.reschedule(now, out);
    }

    fn take_off(&mut self, i: usize) {
        let f = &self.flows[i];
        for &l in &f.paths[f.path] {
            self.on_link[l as usize].retain(|&k| k != i);
        }
    }

    fn put_on(&mut self, i: usize, path: usize, now: Ps) {
        self.settle(i, now);
        let f = &mut self.flows[i];
        f.path = path;
        f.state = State::Admitted;
        for &l in &f.paths[path].clone() {
            self.on_link[l as usize].push(i);
        }
    }

    /// Try to admit stopped flow `i`; `skip`: flows not to preempt (preempted in this round). None if it must
    /// wait; Some(whether it preempted any flow) if admitted (the signals are in `out`).
    fn schedule(&mut self, i: usize, now: Ps, skip: &[usize], out: &mut Vec<Signal>) -> Option<bool> {
        let p_new = self.remaining(i, now);
        let mut best: Option<Choice> = None;
        let mut ties = 0u64;
        for path in 0..self.flows[i].paths.len() {
            let Some(c) = self.evaluate(i, path, p_new, now, skip) else { continue };
            let better = match &best {
                None => true,
                Some(b) => c.cost < b.cost || (c.cost == b.cost && c.room > b.room),
            };
            let tie = best.as_ref().is_some_and(|b| c.cost == b.cost && c.room == b.room);
            if better {
                best = Some(c);
                ties = 1;
            } else if tie {
                // reservoir sampling over equal choices: each kept with probability 1 / (ties seen)
                ties += 1;
                if self.draw() % ties == 0 {
                    best = Some(c);
                }
            }
        }
        let id = self.flows[i].id;
        match best {
            Some(c) if c.admit => {
                for &k in &c.preempt {
                    self.settle(k, now);
                    self.take_off(k);
                    self.flows[k].state = State::Stopped;
                    self.counters.preemptions += 1;
                    out.push(Signal::Stop { flow: self.flows[k].id });
                }
                self.put_on(i, c.path, now);
                self.counters.admissions += 1;
                out.push(Signal::Go { flow: id, path: c.path as u32 });
                Some(!c.preempt.is_empty())
            }
            _ => None,
        }
    }

    /// Path `path` for flow `i` (remaining `p_new`): None if blocked.
    fn evaluate(&self, i: usize, path: usize, p_new: f64, now: Ps, skip: &[usize]) -> Option<Choice> {
        let links = &self.flows[i].paths[path];
        let rate = self.flows[i].rate;
        // the full links, each with its candidates (lower priority than the new flow, not protected)
        let mut boxes: Vec<Vec<usize>> = Vec::new();
        for &l in links {
            if self.free(l) >= rate {
                continue;
            }
            let mut cand: Vec<usize> = self.on_link[l as usize]
                .iter()
                .copied()
                .filter(|&k| !skip.contains(&k) && self.remaining(k, now) > p_new)
                .collect();
            if cand.is_empty() {
                return None;
            }
            // lowest priority (largest remaining) first, so that ties among sets of equal size keep those
            cand.sort_by(|&a, &b| self.remaining(b, now).total_cmp(&self.remaining(a, now)).then(a.cmp(&b)));
            boxes.push(cand);
        }
        let preempt = self.min_cover(&boxes);
        let n = preempt.len() as f64;
        let p_max = preempt.iter().map(|&k| self.remaining(k, now)).fold(0.0, f64::max);
        let (cost, admit) = if preempt.is_empty() { (0.0, true) } else { ((n * p_new).min(p_max), n * p_new < p_max) };
        // the path's bandwidth left with the new flow on it and the preempted flows off
        let room = links
            .iter()
            .map(|&l| {
                let back: f64 = preempt
                    .iter()
                    .filter(|&&k| self.on_link[l as usize].contains(&k))
                    .map(|&k| self.flows[k].rate)
                    .sum();
                self.free(l) + back - rate
            })
            .fold(f64::INFINITY, f64::min);
        Some(Choice { path, cost, preempt, admit, room })
    }

    /// The fewest flows, one from each box or shared between boxes, that free every box: over all combinations
    /// of one flow per box, the smallest set; among equal sizes, the first in the boxes' order (lowest
    /// priorities first).
    fn min_cover(&self, boxes: &[Vec<usize>]) -> Vec<usize> {
        if boxes.is_empty() {
            return Vec::new();
        }
        let mut best: Option<Vec<usize>> = None;
        let mut idx = vec![0usize; boxes.len()];
        loop {
            let mut set: Vec<usize> = Vec::with_capacity(boxes.len());
            for (b, &j) in boxes.iter().zip(&idx) {
                if !set.contains(&b[j]) {
                    set.push(b[j]);
                }
            }
            if best.as_ref().is_none_or(|s| set.len() < s.len()) {
                best = Some(set);
            }
            // next combination (odometer)
            let mut k = boxes.len();
            loop {
                if k == 0 {
                    return best.expect("at least one combination");
                }
                k -= 1;
                idx[k] += 1;
                if idx[k] < boxes[k].len() {
                    break;
                }
                idx[k] = 0;
            }
        }
    }

    /// One round over the stopped flows in priority order (smallest remaining first).
    fn reschedule(&mut self, now: Ps, out: &mut Vec<Signal>) {
        let mut stopped: Vec<usize> =
            self.index.values().copied().filter(|&i| self.flows[i].state == State::Stopped).collect();
        stopped.sort_by(|&a, &b| self.flows[a].remaining.total_cmp(&self.flows[b].remaining).then(a.cmp(&b)));
        let mut preempted_now: Vec<usize> = Vec::new();
        for i in stopped {
            if self.flows[i].state != State::Stopped || preempted_now.contains(&i) {
                continue;
            }
            let before: Vec<usize> = self.admitted();
            if self.schedule(i, now, &preempted_now, out) == Some(true) {
                preempted_now.extend(before.into_iter().filter(|&k| self.flows[k].state == State::Stopped));
            }
        }
    }

    fn admitted(&self) -> Vec<usize> {
        self.index.values().copied().filter(|&i| self.flows[i].state == State::Admitted).collect()
    }

    fn draw(&mut self) -> u64 {
        self.rng = self.rng.wrapping_add(0x9e37_79b9_7f4a_7c15);
        crate::net::mix64(self.rng)
    }

    /// Is flow `flow` admitted, and on which path?
    pub fn path_of(&self, flow: u32) -> Option<u32> {
        let &i = self.index.get(&flow)?;
        (self.flows[i].state == State::Admitted).then_some(self.flows[i].path as u32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const R: u64 = 1_000_000_000;

    /// Admit `flows` (id, remaining bytes, link) each alone on its own one-link path.
    fn with_flows(links: usize, flows: &[(u32, u64, u32)], seed: u64) -> Manager {
        let mut m = Manager::new(&vec![R; links], seed);
        let mut out = Vec::new();
        for &(id, size, link) in flows {
            m.request(0, id, size, R, vec![vec![link]], &mut out);
        }
        assert!(out.iter().all(|s| matches!(s, Signal::Go { .. })), "{out:?}");
        m
    }

    fn stops(out: &[Signal]) -> Vec<u32> {
        let mut v: Vec<u32> =
            out.iter().filter_map(|s| if let Signal::Stop { flow } = s { Some(*flow) } else { None }).collect();
        v.sort();
        v
    }

    /// The paper's Figure 2: host A to host B over two paths, all links of one flow's capacity. Path 1 crosses
    /// three full links holding flows 3, 4, 5; path 2 two full links holding flows 1, 2; p1 < p2 < ... < p5, all
    /// of lower priority than the new flow 6. With preemption path 1 costs 3 p6 and path 2 costs 2 p6; without,
    /// flow 6 waits p5 or p2. So path 2 is chosen, and flows 1 and 2 are preempted iff 2 p6 < p2.
    #[test]
    fn figure_2_path_two_and_preemption_iff_two_p6_below_p2() {
        let layout =
            |p: [u64; 5]| with_flows(7, &[(1, p[0], 4), (2, p[1], 5), (3, p[2], 1), (4, p[3], 2), (5, p[4], 3)], 1);
        let paths = vec![vec![0, 1, 2, 3, 6], vec![0, 4, 5, 6]];
        let mut out = Vec::new();
        // 2 p6 = 180 KB < p2 = 200 KB: preempt on path 2
        let mut m = layout([100_000, 200_000, 300_000, 400_000, 500_000]);
        m.request(0, 6, 90_000, R, paths.clone(), &mut out);
        assert_eq!(stops(&out), vec![1, 2]);
        assert!(out.contains(&Signal::Go { flow: 6, path: 1 }), "{out:?}");
        assert_eq!((m.path_of(6), m.path_of(1), m.path_of(2), m.path_of(3)), (Some(1), None, None, Some(0)));
        assert_eq!(m.counters.preemptions, 2);
        // 2 p6 = 180 KB >= p2 = 150 KB: no preemption pays (path 2's min(2 p6, p2) = p2 is still the least
        // cost); flow 6 waits, nobody is stopped
        out.clear();
        let mut m = layout([100_000, 150_000, 300_000, 400_000, 500_000]);
        m.request(0, 6, 90_000, R, paths.clone(), &mut out);
        assert_eq!(out, vec![Signal::Stop { flow: 6 }]);
        assert_eq!((m.path_of(1), m.path_of(2), m.path_of(6)), (Some(0), Some(0), None));
        // a path through a full link whose flow has a higher priority is blocked: with p1 < p6, only path 1
        out.clear();
        let mut m = layout([50_000, 600_000, 700_000, 800_000, 900_000]);
        m.request(0, 6, 90_000, R, paths, &mut out);
        assert_eq!(stops(&out), vec![3, 4, 5]);
        assert_eq!(m.path_of(6), Some(0));
    }

    /// Balanced load: among free paths the one with the most bandwidth left wins; equal ones are drawn from the
    /// seed (the same seed, the same choice; different seeds reach both).
    #[test]
    fn balanced_load_and_seeded_ties() {
        // path 0 through link 1 (capacity 2R, one flow on it), path 1 through link 2 (capacity 4R, empty)
        let mut m = Manager::new(&[4 * R, 2 * R, 4 * R], 0);
        let mut out = Vec::new();
        m.request(0, 1, 1_000_000, R, vec![vec![1]], &mut out);
        m.request(0, 2, 1_000_000, R, vec![vec![0, 1], vec![0, 2]], &mut out);
        assert_eq!(m.path_of(2), Some(1));
        let choose = |seed| {
            let mut m = Manager::new(&[R, R, R], seed);
            let mut out = Vec::new();
            m.request(0, 9, 1_000, R, vec![vec![0], vec![1], vec![2]], &mut out);
            m.path_of(9).unwrap()
        };
        assert_eq!(choose(7), choose(7));
        let seen: std::collections::BTreeSet<u32> = (0..40).map(choose).collect();
        assert_eq!(seen.len(), 3, "every equal path is drawn for some seed");
    }

    /// A finish frees the links and the stopped flows get one round: the most urgent first; an admitted flow
    /// keeps its path; remaining sizes fall at line rate while admitted.
    #[test]
    fn finish_reschedules_in_priority_order() {
        let mut m = with_flows(2, &[(1, 1_000_000, 0)], 3);
        let mut out = Vec::new();
        // two flows for link 0, both waiting: flow 1, with less left (1 MB - 62.5 KB after 0.5 ms at 1 Gbps), has
        // the higher priority, so the link is blocked for them
        m.request(500_000_000, 2, 5_000_000, R, vec![vec![0]], &mut out);
        m.request(500_000_000, 3, 2_000_000, R, vec![vec![0]], &mut out);
        assert_eq!(stops(&out), vec![2, 3]);
        out.clear();
        m.finish(8_000_000_000, 1, &mut out);
        assert_eq!(out, vec![Signal::Go { flow: 3, path: 0 }]);
        assert_eq!(m.path_of(2), None);
        // flow 3 has been sending for 1 ms at 1 Gbps: 125 KB less
        let i = m.index[&3];
        assert!((m.remaining(i, 9_000_000_000) - 1_875_000.0).abs() < 1.0);
    }
}
