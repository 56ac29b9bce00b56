//! MLFQ: the incremental update queue by queue against the global filling, and a case by hand.

use super::*;

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
