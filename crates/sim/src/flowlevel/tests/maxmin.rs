//! Max-min: the incremental update against the global filling, and a case by hand.

use super::*;

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
