//! LAS: the catching up within a group.

use super::*;

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
