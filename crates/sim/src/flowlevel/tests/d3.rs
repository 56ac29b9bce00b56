//! D3: the incremental update against the global pass, its small steps, and a case by hand.

use super::*;

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
