//! The flow level's unit tests: each incremental update against the global pass on random instances, small
//! cases worked by hand, pruning, the timers, the tags and `Open`'s layout.

use super::fluid::EPS;
use super::las::allocate;
use super::maxmin::FillScratch;
use super::open::after;
use super::ordered::order_key;
use super::*;
use crate::policy::rax::RaxParams;
use crate::policy::{Bounds, Tagging};
use std::collections::HashMap;

fn flow(id: u32, path: &[u32], cap: f64) -> Open {
    Open {
        id,
        hops: std::array::from_fn(|h| path.get(h).copied().unwrap_or(0)),
        hops_len: path.len() as u8,
        pos: [0; MAX_HOPS],
        left: 1e9,
        rate: 0.0,
        cap,
        line: cap,
        win: 0.0,
        allow: 0.0,
        round_at: NEVER,
        rtt: 1,
        tail: 0,
        sent: 0.0,
        class: 0,
        tag_at: f64::INFINITY,
        deadline: NO_DEADLINE,
        term: TERM_NEVER,
        desired: 0.0,
        req_at: NEVER,
        rank: 0.0,
        rank_bits: 0.0,
        grant: -1.0,
        gap: 0,
        wake: 0,
        catch_at: NEVER,
        at: 0,
        act: u32::MAX,
        old_rate: 0.0,
        mark: 0,
        sched: 0,
        froze: NOT_FROZEN,
        ahead: [0.0; MAX_HOPS],
        queued: false,
        cstamp: 0,
        seq: 0,
    }
}

/// A network and its resources, pruned or not, from a topology given as JSON (`{"kind": ...}`).
fn fabric(topology: &str, prune: bool) -> (Network, Resources) {
    let cfg = Config::from_json(&format!(r#"{{"topology": {topology}}}"#)).unwrap();
    (Network::build(&cfg, 1), Resources { prune, ..Resources::default() })
}

/// The resources of every pair's pooled (spraying) path, and how many of them are kept.
fn pooled_kept(net: &Network, res: &mut Resources) -> (usize, usize) {
    let (mut all, mut kept) = (0, 0);
    for src in 0..net.hosts {
        for dst in (0..net.hosts).filter(|&d| d != src) {
            let path = pooled_path(net, src, dst, res);
            all += path.len();
            kept += path.iter().filter(|&&r| res.kept[r as usize]).count();
            assert!(res.kept[path[0] as usize] && res.kept[*path.last().unwrap() as usize], "first, last hop");
        }
    }
    (all, kept)
}

#[test]
fn implied_resources_are_those_their_hosts_cannot_fill() {
    let pairs = |h: usize| h * (h - 1);
    // full bisection under spraying: only the hosts' links bind
    let (net, mut res) = fabric(r#"{"kind": "leaf_spine"}"#, true);
    let (all, kept) = pooled_kept(&net, &mut res);
    assert_eq!(kept, 2 * pairs(144));
    assert!(all > kept);
    let (net, mut res) = fabric(r#"{"kind": "fat_tree", "k": 4}"#, true);
    assert_eq!(pooled_kept(&net, &mut res).1, 2 * pairs(16));
    // 2:1 oversubscribed edges (4 hosts of 1 Gbps over 2 uplinks): the edges' uplinks and downlinks bind, and
    // the pods' (8 hosts over 4 core links) too
    let (net, mut res) = fabric(r#"{"kind": "fat_tree", "k": 4, "hosts_per_edge": 4}"#, true);
    let (all, kept) = pooled_kept(&net, &mut res);
    assert_eq!(all, kept);
    // leaf-spine under ECMP: a 40 Gbps port carries up to 16 hosts' 10 Gbps, so every port is kept
    let (net, mut res) = fabric(r#"{"kind": "leaf_spine"}"#, true);
    for src in 0..net.hosts {
        for p in net.ecmp_path(src, (src + 17) % net.hosts, 7) {
            let r = res.of_port(p, &net);
            assert!(res.kept[r as usize]);
        }
    }
    // unpruned: all kept
    let (net, mut res) = fabric(r#"{"kind": "leaf_spine"}"#, false);
    let (all, kept) = pooled_kept(&net, &mut res);
    assert_eq!(all, kept);
}

/// Every allocation rule gives the same rates on the pruned paths as on the whole ones (random flows on the
/// k = 4 fat-tree under spraying, where every pooled resource between the hosts' links is left out).
#[test]
fn pruned_paths_allocate_as_whole_paths() {
    let (net, mut whole) = fabric(r#"{"kind": "fat_tree", "k": 4}"#, false);
    let (_, mut pruned) = fabric(r#"{"kind": "fat_tree", "k": 4}"#, true);
    let mut seed = 0x5eedu64;
    let mut draw = |n: u64| {
        seed = mix64(seed.wrapping_add(0x9e37_79b9_7f4a_7c15));
        seed % n
    };
    let models = [
        Model::MaxMin,
        Model::Mlfq,
        Model::Srpt,
        Model::Las,
        Model::D3,
        Model::Critical { size_aware: true },
        Model::Critical { size_aware: false },
    ];
    let mut shorter = 0;
    for trial in 0..40 {
        let n = 4 + draw(60) as usize;
        let mut a: Vec<Open> = Vec::new();
        let mut b: Vec<Open> = Vec::new();
        for i in 0..n {
            let src = draw(16) as u32;
            let dst = (src + 1 + draw(15) as u32) % 16;
            let line = 1e9;
            let cap = [0.0, 3e8, line, line][draw(4) as usize];
            let pa = pooled_path(&net, src, dst, &mut whole);
            let pb: Vec<u32> =
                pooled_path(&net, src, dst, &mut pruned).into_iter().filter(|&r| pruned.kept[r as usize]).collect();
            shorter += usize::from(pb.len() < pa.len());
            let mut f = flow(i as u32, &pa, cap);
            f.line = line;
            f.left = 1e3 * (1 + draw(1000)) as f64;
            f.sent = 1e3 * draw(5) as f64;
            f.class = draw(3) as u8;
            f.desired = if draw(2) == 0 { 0.0 } else { 1e8 * draw(12) as f64 };
            f.deadline = if draw(3) == 0 { NO_DEADLINE } else { 1_000 * draw(50) };
            f.rank = draw(7) as f64;
            let mut g = f.clone();
            g.hops = std::array::from_fn(|h| pb.get(h).copied().unwrap_or(0));
            g.hops_len = pb.len() as u8;
            a.push(f);
            b.push(g);
        }
        for model in models {
            let ra = rates(model, &whole.capacity, &mut a.clone());
            let rb = rates(model, &pruned.capacity, &mut b.clone());
            for (i, (x, y)) in ra.iter().zip(&rb).enumerate() {
                assert!((x - y).abs() <= 1e-6 * 1e9, "trial {trial}, {model:?}, flow {i}: whole {x}, pruned {y}");
            }
        }
    }
    assert!(shorter > 0);
}

/// On the reference leaf-spine under spraying the pooled resources are left out (the paths halve) and a DCTCP
/// workload's results are those with them, up to float rounding (the fillings visit the resources in
/// another order): every finish within 10 ps, the other columns the same.
#[test]
fn pruning_leaves_a_max_min_run_the_same() {
    let cfg = r#"{"scheme": {"name": "dctcp"}, "routing": {"mode": "spray"}, "run": {"level": "flow"}}"#;
    let cfg = Config::from_json(cfg).unwrap();
    let mut f = FlowSet::default();
    let mut seed = 3u64;
    let mut draw = || {
        seed = mix64(seed.wrapping_add(1));
        seed
    };
    let mut t = 0;
    for _ in 0..3_000 {
        let src = (draw() % 144) as u32;
        f.src.push(src);
        f.dst.push((src + 1 + (draw() % 143) as u32) % 144);
        f.size_bytes.push(1_000 + draw() % 3_000_000);
        t += draw() % 80_000_000;
        f.start_ps.push(t);
    }
    let a = run_pruned(&cfg, &f, true).unwrap();
    let b = run_pruned(&cfg, &f, false).unwrap();
    assert_eq!(a.stats.flows_finished, 3_000);
    let (ra, rb) = (&a.results, &b.results);
    for i in 0..3_000 {
        let (fa, fb) = (ra.finish_ps[i], rb.finish_ps[i]);
        assert!(fa.abs_diff(fb) <= 10, "flow {i}: finishes at {fa} against {fb} ps");
        assert!(ra.sender_done_ps[i].abs_diff(rb.sender_done_ps[i]) <= 10, "flow {i}: sender done");
    }
    assert_eq!((&ra.start_ps, &ra.ideal_fct_ps, &ra.bytes_sent), (&rb.start_ps, &rb.ideal_fct_ps, &rb.bytes_sent));
}

/// The timers against an ordered set of (time, slot): random sets, moves and removals, and every pop the set's
/// least entry.
#[test]
fn timers_pop_in_order_of_time_then_slot() {
    let mut t = Timers::default();
    let mut set = std::collections::BTreeSet::new();
    let mut at = vec![None; 64];
    let mut seed = 9u64;
    for step in 0..20_000 {
        seed = mix64(seed.wrapping_add(step));
        let k = (seed % 64) as u32;
        let when = (seed >> 8) % 50;
        let op = (seed >> 20) % 4;
        if op != 1 {
            if let Some(old) = at[k as usize].take() {
                set.remove(&(old, k));
            }
        }
        match op {
            0 => t.remove(k),
            1 => {
                if let Some((w, j)) = t.peek() {
                    assert_eq!(set.pop_first(), Some((w, j)));
                    t.remove(j);
                    at[j as usize] = None;
                }
            }
            _ => {
                t.set(k, when);
                set.insert((when, k));
                at[k as usize] = Some(when);
            }
        }
        assert_eq!(t.peek(), set.first().copied());
        assert_eq!(t.heap.len(), set.len());
    }
}

/// The global allocation of `flows` on resources of capacities `caps`.
/// The randomized checks' resources: 1 to 10 units of capacity, in a few steps.
fn random_caps(draw: &mut impl FnMut(u64) -> u64, links: usize) -> Vec<f64> {
    (0..links).map(|_| [1.0, 2.0, 4.0, 10.0][draw(4) as usize] * (1.0 + draw(3) as f64 / 4.0)).collect()
}

/// A flow's own cap in the randomized checks: none (0), a binding one, or one that never binds.
fn random_cap(draw: &mut impl FnMut(u64) -> u64) -> f64 {
    match draw(4) {
        0 => 0.0,
        1 => 0.1 + draw(40) as f64 / 10.0,
        _ => 100.0,
    }
}

/// A random path of 1 to 4 distinct resources among `links`.
fn random_path(draw: &mut impl FnMut(u64) -> u64, links: usize) -> Vec<u32> {
    let mut path: Vec<u32> = (0..links as u32).collect();
    for i in (1..path.len()).rev() {
        path.swap(i, draw(i as u64 + 1) as usize);
    }
    path.truncate(1 + draw(links.min(4) as u64) as usize);
    path
}

/// Asserts that every active flow's incremental rate is the global recomputation's under `model` (the
/// flows taken in order of id: D3's order of arrival in the tests); returns how many flows were checked.
fn same_as_global(fl: &Fluid, model: Model, caps: &[f64]) -> usize {
    let links = caps.len();
    let mut global = fl.flows.clone();
    let mut set = fl.active.clone();
    set.sort_by_key(|&k| fl.flows[k as usize].id);
    let mut residual = vec![0.0; links];
    let mut scratch =
        FillScratch { count: vec![0; links], users: vec![Vec::new(); links], ..FillScratch::default() };
    allocate(model, &mut global, &set, caps, &mut residual, &mut scratch, 0);
    for &k in &set {
        let (a, b) = (fl.flows[k as usize].rate, global[k as usize].rate);
        assert!((a - b).abs() <= 1e-7, "flow {}: incremental {a}, global {b}", fl.flows[k as usize].id);
    }
    set.len()
}

fn rates(model: Model, caps: &[f64], flows: &mut [Open]) -> Vec<f64> {
    let mut fl = Fluid::default();
    fl.begin();
    let ks: Vec<u32> = flows
        .iter()
        .map(|f| {
            let k = fl.insert(f.clone(), caps);
            fl.activate(k, 0);
            k
        })
        .collect();
    let set = fl.active.clone();
    allocate(model, &mut fl.flows, &set, caps, &mut fl.residual, &mut fl.fill, 0);
    ks.iter().map(|&k| fl.flows[k as usize].rate).collect()
}

/// LAS's catching up when a group's members have different rates: p and k have equal service, p alone on
/// L (capacity 1), k on L and M (capacity 0.1); q on L with 1,000 bits more served. p and k share max-min
/// (k held to 0.1 by M, p gets 0.9) and q gets nothing. The faster member, p, reaches q's service after
/// 1,000 / 0.9 s (q idle), though k is the flow next to q in the order of service; k would only after
/// 1,000 / 0.1 s. A check of only the neighbours in that order missed p's.
#[test]
fn las_catching_up_comes_from_the_fastest_member_of_a_group() {
    let mut fl = Fluid::default();
    fl.begin();
    let caps = [1.0, 0.1];
    let mut ks = Vec::new();
    for (id, path, sent) in [(0u32, &[0u32][..], 0.0), (1, &[0, 1][..], 0.0), (2, &[0][..], 1000.0)] {
        let f = Open { sent, ..flow(id, path, 100.0) };
        let k = fl.insert(f, &caps);
        fl.activate(k, 0);
        ks.push(k);
    }
    let set = fl.active.clone();
    allocate(Model::Las, &mut fl.flows, &set, &caps, &mut fl.residual, &mut fl.fill, 0);
    let f = |i: usize| &fl.flows[ks[i] as usize];
    assert!((f(0).rate - 0.9).abs() < 1e-12 && (f(1).rate - 0.1).abs() < 1e-12 && f(2).rate == 0.0);
    assert_eq!(f(0).catch_at, after(0, 1000.0, 0.9));
    assert_eq!(f(1).catch_at, NEVER);
}

/// Random instances (1 to 8 resources, up to about 40 flows over 1 to 4 of them, caps from none to zero),
/// changed by arrivals, completions and cap changes, one to three at once: after each event the incremental
/// update gives every flow the rate a global progressive filling gives it, and each resource's load is the
/// sum of its users' rates.
#[test]
fn incremental_equals_global() {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
    let mut draw = |n: u64| rng.next_u64() % n;
    let (mut checked, mut moved) = (0, 0);
    for _case in 0..400 {
        let links = 1 + draw(8) as usize;
        let caps = random_caps(&mut draw, links);
        let mut fl = Fluid::default();
        let mut live: Vec<u32> = Vec::new();
        let mut id = 0;
        for _event in 0..50 {
            fl.begin();
            for _ in 0..1 + draw(3) {
                let cap = random_cap(&mut draw);
                match draw(5) {
                    0..=2 if live.len() < 40 => {
                        let path = random_path(&mut draw, links);
                        let k = fl.insert(flow(id, &path, cap), &caps);
                        id += 1;
                        fl.activate(k, 0);
                        live.push(k);
                    }
                    3 if !live.is_empty() => {
                        let k = live.swap_remove(draw(live.len() as u64) as usize);
                        if fl.flows[k as usize].mark != fl.epoch {
                            fl.finish(k);
                        } else {
                            live.push(k); // (changed in this event already)
                        }
                    }
                    _ if !live.is_empty() => {
                        let k = live[draw(live.len() as u64) as usize];
                        fl.touch(k);
                        fl.flows[k as usize].cap = cap;
                    }
                    _ => {}
                }
            }
            fl.update_max_min(0);
            moved += fl.resched.len();
            checked += same_as_global(&fl, Model::MaxMin, &caps);
            for l in 0..fl.users.len() {
                let sum: f64 = fl.users[l].iter().map(|&k| fl.flows[k as usize].rate).sum();
                assert!((fl.load[l] - sum).abs() <= 1e-7, "resource {l}: load {} against {sum}", fl.load[l]);
            }
        }
    }
    assert!(checked > 100_000 && moved > 10_000, "{checked} rates checked, {moved} moved");
}

/// MLFQ, the same as `incremental_equals_global` with up to four queues: flows arrive in a random queue,
/// finish, change cap, and move to another queue (one to three changes at once); after each event the
/// incremental update, queue by queue, gives every flow the rate of the global filling queue by queue, and
/// each layer's load is the sum of its users' rates.
#[test]
fn incremental_mlfq_equals_global() {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(11);
    let mut draw = |n: u64| rng.next_u64() % n;
    let (mut checked, mut moved) = (0, 0);
    for _case in 0..300 {
        let links = 1 + draw(8) as usize;
        let caps = random_caps(&mut draw, links);
        let queues = 1 + draw(4) as u8;
        let mut fl = Fluid::layered(queues as usize);
        let mut live: Vec<u32> = Vec::new();
        let mut id = 0;
        for _event in 0..50 {
            fl.begin();
            for _ in 0..1 + draw(3) {
                let cap = random_cap(&mut draw);
                match draw(6) {
                    0..=2 if live.len() < 40 => {
                        let path = random_path(&mut draw, links);
                        let mut f = flow(id, &path, cap);
                        f.class = draw(queues as u64) as u8;
                        let k = fl.insert(f, &caps);
                        id += 1;
                        fl.start(k, 0);
                        live.push(k);
                    }
                    3 | 4 if !live.is_empty() => {
                        let j = draw(live.len() as u64) as usize;
                        let k = live[j];
                        if fl.flows[k as usize].mark == fl.epoch {
                            continue; // (changed in this event already)
                        }
                        if draw(2) == 0 {
                            live.swap_remove(j);
                            fl.done(k);
                        } else {
                            let from = fl.flows[k as usize].class;
                            fl.flows[k as usize].class = draw(queues as u64) as u8;
                            fl.flows[k as usize].cap = cap;
                            if fl.flows[k as usize].class != from {
                                fl.requeue(k, from);
                            } else {
                                fl.changed(k);
                            }
                        }
                    }
                    _ if !live.is_empty() => {
                        let k = live[draw(live.len() as u64) as usize];
                        if fl.flows[k as usize].mark == fl.epoch {
                            continue;
                        }
                        fl.changed(k);
                        fl.flows[k as usize].cap = cap;
                    }
                    _ => {}
                }
            }
            fl.update_mlfq(0);
            moved += fl.resched.len();
            checked += same_as_global(&fl, Model::Mlfq, &caps);
            for y in &fl.layers {
                for l in 0..y.users.len() {
                    let sum: f64 = y.users[l].iter().map(|&k| fl.flows[k as usize].rate).sum();
                    assert!((y.load[l] - sum).abs() <= 1e-7, "resource {l}: load {} against {sum}", y.load[l]);
                }
            }
        }
    }
    assert!(checked > 50_000 && moved > 5_000, "{checked} rates checked, {moved} moved");
}

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

/// D3: random instances in which flows arrive (asking for a rate or not, at a line rate from none to one that
/// never binds), finish, ask for another rate, change line rate, one to three changes at once. After each
/// event the incremental update (`Fluid::update_d3`: the grants in order of arrival, then max-min on what
/// they leave) gives every flow the rate of the global pass over the flows in order of arrival; each flow's
/// rate is its grant plus its share, the shares' load on each resource the sum of its users' shares and
/// their capacity what the grants leave. Grants must move flows behind them, and shares must move (counted).
#[test]
fn incremental_d3_equals_global() {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(17);
    let mut draw = |n: u64| rng.next_u64() % n;
    let (mut checked, mut regranted, mut reshared) = (0, 0, 0);
    for _case in 0..400 {
        let links = 1 + draw(8) as usize;
        let caps = random_caps(&mut draw, links);
        let mut fl = Fluid::ordered(Model::D3);
        let mut live: Vec<u32> = Vec::new();
        let (mut id, mut now) = (0, 0);
        for _event in 0..50 {
            now += 1_000_000;
            fl.begin();
            fl.now = now;
            for _ in 0..1 + draw(3) {
                // (a desired rate: none, or from a tenth to 8 units, often more than a resource has)
                let asks = if draw(3) == 0 { 0.0 } else { 0.1 + draw(80) as f64 / 10.0 };
                match draw(6) {
                    0..=2 if live.len() < 40 => {
                        let path = random_path(&mut draw, links);
                        let mut f = flow(id, &path, random_cap(&mut draw));
                        f.desired = asks;
                        f.cap = f.asks();
                        let k = fl.insert(f, &caps);
                        id += 1;
                        fl.start(k, now);
                        live.push(k);
                    }
                    3 if !live.is_empty() => {
                        let j = draw(live.len() as u64) as usize;
                        if !fl.arrived.contains(&live[j]) {
                            fl.done(live.swap_remove(j)); // (not one that arrived in this event)
                        }
                    }
                    4 if !live.is_empty() => {
                        let k = live[draw(live.len() as u64) as usize];
                        let f = &mut fl.flows[k as usize];
                        f.sync(now);
                        f.line = random_cap(&mut draw);
                        f.cap = f.asks();
                        fl.own_event(k, false);
                    }
                    _ if !live.is_empty() => {
                        let k = live[draw(live.len() as u64) as usize];
                        let f = &mut fl.flows[k as usize];
                        f.sync(now);
                        f.desired = asks;
                        f.cap = f.asks();
                        fl.own_event(k, false);
                    }
                    _ => {}
                }
            }
            fl.update_d3(now);
            regranted += fl.set.len();
            let sh = fl.shares.as_deref().unwrap();
            reshared += sh.resched.len();
            checked += same_as_global(&fl, Model::D3, &caps);
            for &k in &fl.active {
                let (f, s) = (&fl.flows[k as usize], &sh.flows[k as usize]);
                assert!((f.rate - f.held() - s.rate).abs() <= 1e-12 * f.line.max(1.0), "flow {}", f.id);
                assert!((s.cap - (f.line - f.held())).abs() <= 1e-12, "flow {}: cap {}", f.id, s.cap);
            }
            for l in 0..sh.users.len() {
                let share: f64 = sh.users[l].iter().map(|&k| sh.flows[k as usize].rate).sum();
                let granted: f64 = fl.users[l].iter().map(|&k| fl.flows[k as usize].held()).sum();
                assert!((sh.load[l] - share).abs() <= 1e-7, "resource {l}: load {} against {share}", sh.load[l]);
                let left = caps[l] - granted;
                let cap = if left < EPS * caps[l] { 0.0 } else { left };
                let within = (sh.capacity[l] - cap).abs() <= EPS * caps[l];
                assert!(within, "resource {l}: {} against {cap}", sh.capacity[l]);
            }
        }
    }
    assert!(checked > 100_000 && regranted > 20_000 && reshared > 20_000, "{checked} {regranted} {reshared}");
}

/// D3's requests move a grant by small steps: flow A (on link 0, capacity 1) asks a little more at each of
/// 2,000 events, 5e-10 each time (below the max-min update's tolerance, 1e-9 of the capacity). B shares
/// link 0 with A and link 1 (capacity 2) with C and D, which are bottlenecked there: each step of A moves
/// B's share, and so C's and D's, by less than the tolerance. Their rates must still follow the global
/// pass's, the small steps summed (without that they fall more than 1e-7 behind).
#[test]
fn d3_small_steps_do_not_add_up() {
    let caps = [1.0, 2.0];
    let mut fl = Fluid::ordered(Model::D3);
    fl.begin();
    let mut ks = Vec::new();
    let flows = [(0u32, &[0u32][..], 0.2), (1, &[0, 1][..], 0.0), (2, &[1][..], 0.0), (3, &[1][..], 0.0)];
    for (id, path, asks) in flows {
        let mut f = flow(id, path, 100.0);
        f.desired = asks;
        f.cap = f.asks();
        let k = fl.insert(f, &caps);
        fl.start(k, 0);
        ks.push(k);
    }
    fl.update_d3(0);
    for step in 1..=2000u64 {
        let now = step * 1_000_000;
        fl.begin();
        fl.now = now;
        let f = &mut fl.flows[ks[0] as usize];
        f.sync(now);
        f.desired += 5e-10;
        f.cap = f.asks();
        fl.own_event(ks[0], false);
        fl.update_d3(now);
        same_as_global(&fl, Model::D3, &caps);
    }
    let c = fl.flows[ks[2] as usize].rate;
    assert!((c - (2.0 - (0.8 - 1e-6) / 2.0) / 2.0).abs() < 1e-9, "{c}");
}

/// What SRPT's update reads of each flow behind a change of grant (its path, grant, cap, line rate and
/// `ahead`) spans the first three cache lines of `Open`, the path in the first as the max-min update wants.
#[test]
fn layout_puts_the_ordered_update_in_three_lines() {
    use std::mem::offset_of;
    assert!(offset_of!(Open, hops) + 4 * MAX_HOPS <= 64 && offset_of!(Open, hops_len) < 64);
    for off in [offset_of!(Open, grant), offset_of!(Open, cap), offset_of!(Open, line)] {
        assert!((64..128).contains(&off), "{off}");
    }
    assert_eq!(offset_of!(Open, ahead), 128);
}

/// The parking lot: one long flow across three unit links, one short flow on each: max-min gives every flow
/// one half. With the middle link twice as wide, its short flow takes the 1.5 the long one leaves.
#[test]
fn parking_lot_is_max_min_fair() {
    let mut f = vec![flow(0, &[0, 1, 2], 9.0), flow(1, &[0], 9.0), flow(2, &[1], 9.0), flow(3, &[2], 9.0)];
    assert_eq!(rates(Model::MaxMin, &[1.0, 1.0, 1.0], &mut f), vec![0.5, 0.5, 0.5, 0.5]);
    let r = rates(Model::MaxMin, &[1.0, 2.0, 1.0], &mut f);
    assert_eq!(r, vec![0.5, 0.5, 1.5, 0.5]);
    // a flow's own cap binds first and leaves the rest to the others
    let mut f = vec![flow(0, &[0], 0.1), flow(1, &[0], 9.0), flow(2, &[0], 9.0)];
    assert_eq!(rates(Model::MaxMin, &[1.0], &mut f), vec![0.1, 0.45, 0.45]);
    // the textbook example with unequal bottlenecks: links of 10 and 4; A on both, B on the first, C, D on
    // the second: C, D, A get 4/3, B the remaining 10 - 4/3
    let mut f = vec![flow(0, &[0, 1], 99.0), flow(1, &[0], 99.0), flow(2, &[1], 99.0), flow(3, &[1], 99.0)];
    let r = rates(Model::MaxMin, &[10.0, 4.0], &mut f);
    let want = [4.0 / 3.0, 10.0 - 4.0 / 3.0, 4.0 / 3.0, 4.0 / 3.0];
    for (a, b) in r.iter().zip(want) {
        assert!((a - b).abs() < 1e-12, "{r:?}");
    }
}

/// MLFQ: the more urgent queue takes what it can; the next shares what it leaves, max-min.
#[test]
fn mlfq_serves_queues_in_strict_priority() {
    let mut f = vec![flow(0, &[0], 9.0), flow(1, &[0], 9.0), flow(2, &[0, 1], 0.3), flow(3, &[1], 9.0)];
    f[0].class = 1;
    f[1].class = 1;
    f[2].class = 0;
    f[3].class = 2;
    // queue 0: flow 2 at its cap 0.3 on links 0 and 1; queue 1: flows 0, 1 share link 0's 0.7; queue 2:
    // flow 3 takes link 1's remaining 0.7
    let r = rates(Model::Mlfq, &[1.0, 1.0], &mut f);
    for (a, b) in r.iter().zip([0.35, 0.35, 0.3, 0.7]) {
        assert!((a - b).abs() < 1e-12, "{r:?}");
    }
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

/// D3 on one link of 10: in order of arrival, flows asking 4 and 3 get them; a third asking 5 gets the 3
/// left (first come first served: not earliest deadline first, whatever its deadline); nothing is left to
/// share. Without the third, a flow without a deadline (asking nothing) shares the 3 left max-min with the
/// two: 1 each.
#[test]
fn d3_grants_desired_rates_first_come_first_served() {
    let mut f = vec![flow(0, &[0], 9.0), flow(1, &[0], 9.0), flow(2, &[0], 9.0)];
    f[0].desired = 4.0;
    f[1].desired = 3.0;
    f[2].desired = 5.0;
    f[0].deadline = 50;
    f[1].deadline = 40;
    f[2].deadline = 10;
    assert_eq!(rates(Model::D3, &[10.0], &mut f), vec![4.0, 3.0, 3.0]);
    f[2].desired = 0.0;
    f[2].deadline = NO_DEADLINE;
    assert_eq!(rates(Model::D3, &[10.0], &mut f), vec![5.0, 4.0, 1.0]);
    // a flow's line rate caps its grant and its share: 4.5 less its grant of 4 leaves it 0.5; the other two
    // share the 2.5 left (1.25 each)
    f[0].line = 4.5;
    assert_eq!(rates(Model::D3, &[10.0], &mut f), vec![4.5, 4.25, 1.25]);
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

/// Giving up: at line rate 1 with 10 bits left and the deadline 20 s away, a flow at rate 0.5 can make it
/// until t + (10 - 0.5 t) > 20, t > 20 s; at rate 1 it never gives up before its deadline; a paused PDQ flow
/// with a 5 s RTT gives up once t + 10 + 5 > 20, t > 5 s; one past its deadline at once.
#[test]
fn give_up_times_by_hand() {
    let s = 1_000_000_000_000u64;
    let mut f = flow(0, &[0], 1.0);
    f.left = 10.0;
    f.deadline = 20 * s;
    f.rtt = 5 * s;
    f.term = TERM_LINE;
    f.rate = 0.5;
    assert_eq!(f.give_up_at(0), 20 * s, "(20 s is also its deadline)");
    f.left = 12.0;
    assert_eq!(f.give_up_at(0), 16 * s + 1, "t + 12 - 0.5 t > 20: t > 16 s");
    f.rate = 1.0;
    assert_eq!(f.give_up_at(0), 20 * s);
    f.left = 10.0;
    f.rate = 0.0;
    f.term = TERM_PAUSED;
    assert_eq!(f.give_up_at(0), 5 * s + 1);
    f.left = 16.0;
    assert_eq!(f.give_up_at(0), 0, "16 + 5 > 20: at once");
    f.term = TERM_DEADLINE;
    assert_eq!(f.give_up_at(0), 20 * s);
    assert_eq!(f.give_up_at(21 * s), 21 * s);
    f.term = TERM_NEVER;
    assert_eq!(f.give_up_at(21 * s), NEVER);
}

/// QCLIMB's tag at the flow level is Algorithm 1's at every byte count (the appendix's example of
/// `policy::tests::qclimb_follows_algorithm_1`: queues <= 2, [3, 5], >= 6, L = 6, U = 9, slack 1), and the
/// byte count at which it is due again is never past a change of it.
#[test]
fn qclimb_tags_follow_algorithm_1() {
    let bounds = vec![Bounds { lower: 6, upper: 9, estimate: 7, pias: false }];
    let tags = Tags::Qclimb {
        tagging: Tagging::Qclimb { thresholds: vec![2, 5], slack: 1 },
        thresholds: vec![2, 5],
        slack: 1,
        bounds,
        per_byte: 8.0,
    };
    let want = [2u8, 1, 1, 1, 0, 0, 0, 2, 2, 2, 2];
    for b in 0..want.len() {
        let (tag, at) = tags.at(0, b as f64 * 8.0);
        assert_eq!(tag, want[b], "{b} bytes sent");
        let next = if at.is_finite() { (at / 8.0) as usize } else { want.len() };
        assert!(next > b && want[b..next.min(want.len())].iter().all(|&t| t == tag), "{b}: due at {next}");
    }
    assert_eq!(tags.at(0, 7.0 * 8.0), (2, 9.0 * 8.0), "demoted by bytes sent until U");
}

/// RAX at 10 Gbps (Q_1 = 160 us, E = 2): RAX+ ranks a 1 MB flow by its unsent bytes at line rate, 800 us
/// (queue 3: 640 <= T < 1280) until more than 200,000 bytes are sent (T < 640 us: queue 2); RAX's estimate
/// of a 100 KB flow is its size plus its unsent bytes at line rate, 160 us at first (queue 1), below Q_1
/// after one byte.
#[test]
fn rax_tags_by_hand() {
    let cfg = Config::from_json(r#"{"scheme": {"name": "rax-plus"}}"#).unwrap();
    assert_eq!(cfg.topology.host_link_gbps(), 10.0);
    let rax = RaxParams::from_config(&cfg, true);
    let tags = Tags::Rax { rax: rax.clone(), size: vec![1_000_000], per_byte: 8.0 };
    assert_eq!(tags.at(0, 0.0), (3, 200_001.0 * 8.0));
    assert_eq!(tags.at(0, 200_001.0 * 8.0).0, 2);
    let tags = Tags::Rax { rax: RaxParams { plus: false, ..rax }, size: vec![100_000], per_byte: 8.0 };
    assert_eq!(tags.at(0, 0.0), (1, 8.0));
    assert_eq!(tags.at(0, 8.0).0, 0);
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
