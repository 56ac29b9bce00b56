//! Resources: which ones cannot bind, and that leaving them out of the paths changes no rate.

use super::*;

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
/// another order, and a round's timer reads when its window was used up): every finish within 100 ps, the other
/// columns the same.
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
    let a = run_pruned(&cfg, &f, true, None, None).unwrap();
    let b = run_pruned(&cfg, &f, false, None, None).unwrap();
    assert_eq!(a.stats.flows_finished, 3_000);
    let (ra, rb) = (&a.results, &b.results);
    for i in 0..3_000 {
        let (fa, fb) = (ra.finish_ps[i], rb.finish_ps[i]);
        assert!(fa.abs_diff(fb) <= 100, "flow {i}: finishes at {fa} against {fb} ps");
        assert!(ra.sender_done_ps[i].abs_diff(rb.sender_done_ps[i]) <= 100, "flow {i}: sender done");
    }
    assert_eq!((&ra.start_ps, &ra.ideal_fct_ps, &ra.bytes_sent), (&rb.start_ps, &rb.ideal_fct_ps, &rb.bytes_sent));
}
