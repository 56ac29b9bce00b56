//! SRPT and criticality order: the incremental update against the global greedy pass, and cases by hand.

use super::*;
use std::collections::HashMap;

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
