//! `scheme.size_info` on whole runs: for each size-aware scheme, information wrong by a known factor changes
//! the schedule the way the scheme's documented rule says (`config::SizeInfo`); `none` is the scheme's own
//! size-unaware fallback (bit-identical to it where the fallback is another scheme or key), or refused; the old
//! keys (`rank`, `homa_sizes`, `qclimb_info`, `pdq_criticality`) give the same bits as the switch; contradictions,
//! size-unaware schemes and missing columns are refused before the run, naming the key or the column.

mod common;

use common::{dumbbell, flows};
use fctlab_sim::config::*;
use fctlab_sim::units::{NEVER, PS_PER_MS};
use fctlab_sim::validate::config_from_json;
use fctlab_sim::{FlowSet, RunOutput};

fn run(cfg: &Config, f: &FlowSet) -> RunOutput {
    fctlab_sim::run(cfg, f, None, 1).unwrap()
}

fn finish(out: &RunOutput) -> Vec<u64> {
    assert!(out.results.finish_ps.iter().all(|&t| t != NEVER), "unfinished: {:?}", out.results.finish_ps);
    out.results.finish_ps.clone()
}

/// A scheme's defaults (and `extra` scheme keys) on a 2-sender dumbbell into host 2, 10 Gbps, 1 us links.
fn on_dumbbell(scheme: &str, extra: &str, gbps: f64) -> Config {
    let mut cfg = config_from_json(&format!(r#"{{"scheme": {{"name": "{scheme}" {extra}}}}}"#)).unwrap();
    cfg.topology = dumbbell(2, gbps, gbps).topology;
    cfg
}

/// Two flows from hosts 0 and 1 into host 2, starting together: `sizes`, with the trace's estimates.
fn two(sizes: [u64; 2], estimates: [u64; 2]) -> FlowSet {
    let mut f = flows(&[(0, 2, sizes[0], 0), (1, 2, sizes[1], 0)]);
    f.estimate_bytes = estimates.to_vec();
    f
}

/// Which of two flows finishes first.
fn first(out: &RunOutput) -> usize {
    let t = finish(out);
    usize::from(t[1] < t[0])
}

#[test]
fn pfabric_ranks_by_the_known_remaining_bytes() {
    // 1 MB and 2 MB; the estimates swap them by a factor 4 each way: the one estimated smaller goes first
    let f = two([1_000_000, 2_000_000], [4_000_000, 500_000]);
    assert_eq!(first(&run(&on_dumbbell("pfabric", "", 10.0), &f)), 0, "exact: SRPT");
    let est = on_dumbbell("pfabric", r#", "size_info": "estimate""#, 10.0);
    assert_eq!(first(&run(&est, &f)), 1, "estimate: the flow estimated smaller");
    // the old key gives the same bits
    let old = on_dumbbell("pfabric", r#", "rank": "estimate""#, 10.0);
    assert_eq!(run(&old, &f).results.finish_ps, run(&est, &f).results.finish_ps);
    // bounds: flow 1 is sure to have 100 KB, and may have 10 MB; flow 0 has [0.9, 1.1] MB. By the lower bound
    // alone flow 1 would rank 0 once its 100 KB are acknowledged and finish first; by the bounds its rank then
    // jumps to the upper bound's remainder, behind flow 0
    let mut b = f.clone();
    b.lower_bytes = vec![900_000, 100_000];
    b.upper_bytes = vec![1_100_000, 10_000_000];
    let mut f01 = b.clone();
    f01.size_bytes = vec![2_000_000, 1_000_000];
    let lower = on_dumbbell("pfabric", r#", "size_info": "lower""#, 10.0);
    let bounds = on_dumbbell("pfabric", r#", "size_info": "bounds""#, 10.0);
    let upper = on_dumbbell("pfabric", r#", "size_info": "upper""#, 10.0);
    assert_eq!(first(&run(&lower, &f01)), 1, "lower: flow 1 ranks 0 past its lower bound");
    assert_eq!(first(&run(&bounds, &f01)), 0, "bounds: flow 1 falls behind once its lower bound is sent");
    assert_eq!(first(&run(&upper, &f01)), 0, "upper: 1.1 MB before 10 MB");
}

#[test]
fn pfabric_without_sizes_is_least_attained_service() {
    // flow 0 (2 MB) starts alone; at 1 ms (about 1.2 MB sent) flow 1 (1 MB) arrives. By remaining size flow 0
    // (0.8 MB left) stays ahead; by bytes sent the newcomer goes first
    let f = flows(&[(0, 2, 2_000_000, 0), (1, 2, 1_000_000, PS_PER_MS)]);
    assert_eq!(first(&run(&on_dumbbell("pfabric", "", 10.0), &f)), 0);
    let none = on_dumbbell("pfabric", r#", "size_info": "none""#, 10.0);
    assert_eq!(first(&run(&none, &f)), 1);
}

#[test]
fn pdq_criticality_follows_the_estimate_and_none_is_bytes_sent() {
    let star = |extra: &str| {
        let mut cfg = on_dumbbell("pdq", extra, 1.0);
        cfg.switch.queues = 1;
        cfg
    };
    // 1 MB estimated 4x over, 2 MB estimated 1.25x over: the 2 MB flow looks more critical throughout
    let f = two([1_000_000, 2_000_000], [4_000_000, 2_500_000]);
    assert_eq!(first(&run(&star(""), &f)), 0, "exact: the shorter flow is more critical");
    let est = run(&star(r#", "size_info": "estimate""#), &f);
    assert_eq!(first(&est), 1, "estimate: the flow estimated shorter is more critical");
    // PDQ serves one flow at a time: the 2 MB flow alone (16 ms at 1 Gbps), then the 1 MB one (8 ms more)
    let t = finish(&est);
    assert!(t[1] < 18 * PS_PER_MS && t[0] > t[1] + 7 * PS_PER_MS, "{t:?}");
    // estimated at 500 KB the 2 MB flow goes first, but once 500 KB are sent its known remainder is 0: it looks
    // nearly done, Early Start lets the other in, and the two share the link to the end
    let under = run(&star(r#", "size_info": "estimate""#), &two([1_000_000, 2_000_000], [4_000_000, 500_000]));
    let t = finish(&under);
    assert!(t[0] > 20 * PS_PER_MS && t[1] > 20 * PS_PER_MS, "{t:?}");
    let none = star(r#", "size_info": "none""#);
    let bytes_sent = star(r#", "pdq_criticality": "bytes_sent""#);
    assert_eq!(run(&none, &f).results.finish_ps, run(&bytes_sent, &f).results.finish_ps);
    // upper bounds swapped by the same factor act as the estimate does
    let mut u = f.clone();
    u.lower_bytes = vec![1, 1];
    u.upper_bytes = vec![4_000_000, 2_500_000];
    assert_eq!(first(&run(&star(r#", "size_info": "upper""#), &u)), 1);
}

#[test]
fn homa_announces_the_known_size() {
    let f = two([1_000_000, 2_000_000], [4_000_000, 500_000]);
    let exact = run(&on_dumbbell("homa", "", 10.0), &f);
    assert_eq!(first(&exact), 0, "exact: the receiver grants the shorter message first");
    let est = on_dumbbell("homa", r#", "size_info": "estimate""#, 10.0);
    let out = run(&est, &f);
    assert_eq!(first(&out), 1, "estimate: the receiver grants the message announced shorter");
    let old = on_dumbbell("homa", r#", "homa_sizes": "estimate""#, 10.0);
    assert_eq!(run(&old, &f).results.finish_ps, out.results.finish_ps, "homa_sizes = estimate: the same bits");
    // bounds announce the lower bound
    let mut b = f.clone();
    b.lower_bytes = vec![3_000_000, 400_000];
    b.upper_bytes = vec![5_000_000, 3_000_000];
    let bounds = on_dumbbell("homa", r#", "size_info": "bounds""#, 10.0);
    let lower = on_dumbbell("homa", r#", "size_info": "lower""#, 10.0);
    assert_eq!(run(&bounds, &b).results.finish_ps, run(&lower, &b).results.finish_ps);
    assert_eq!(first(&run(&bounds, &b)), 1);
}

#[test]
fn rax_plus_reads_the_estimate_and_without_sizes_is_rax() {
    let f = two([1_000_000, 2_000_000], [4_000_000, 500_000]);
    assert_eq!(first(&run(&on_dumbbell("rax-plus", "", 10.0), &f)), 0, "exact: the shorter remaining time first");
    let est = on_dumbbell("rax-plus", r#", "size_info": "estimate""#, 10.0);
    assert_eq!(first(&run(&est, &f)), 1, "estimate: the flow estimated shorter");
    let none = on_dumbbell("rax-plus", r#", "size_info": "none""#, 10.0);
    let rax = on_dumbbell("rax", "", 10.0);
    let g = flows(&[(0, 2, 1_000_000, 0), (1, 2, 300_000, PS_PER_MS / 4), (0, 2, 50_000, PS_PER_MS / 2)]);
    assert_eq!(run(&none, &g).results.finish_ps, run(&rax, &g).results.finish_ps, "none: RAX's own estimate");
}

#[test]
fn qjump_level_follows_the_estimate_and_none_is_the_last_level() {
    let cfg = |extra: &str| {
        let mut c = on_dumbbell("qjump", extra, 1.0);
        c.topology = dumbbell(4, 1.0, 1.0).topology;
        c
    };
    // 100 KB: level 5 (its bucket holds it); estimated at 5 KB it is at level 0, whose 9,000-byte bucket per
    // 10.5 ms holds it to about 7 kB/ms: an order of magnitude slower
    let mut f = flows(&[(0, 4, 100_000, 0)]);
    f.estimate_bytes = vec![5_000];
    let exact = run(&cfg(""), &f);
    let est = run(&cfg(r#", "size_info": "estimate""#), &f);
    assert_eq!(exact.stats.host_limiter_drops, 0);
    assert!(est.stats.host_limiter_drops > 0);
    let (te, tx) = (finish(&est)[0], finish(&exact)[0]);
    assert!(te > 10 * tx, "estimate {te} vs exact {tx}");
    // without sizes: the last level, whose bucket is line rate: no limit, as the exact level here
    let none = run(&cfg(r#", "size_info": "none""#), &f);
    assert_eq!(none.stats.host_limiter_drops, 0);
    assert_eq!(none.results.finish_ps, exact.results.finish_ps);
}

#[test]
fn hyline_class_at_h_follows_the_known_size() {
    let cfg = |extra: &str| {
        Config::from_json(&format!(
            r#"{{"scheme": {{"name": "hyline" {extra}}}, "topology": {{"kind": "fat_tree", "k": 4}},
                "switch": {{"buffer_bytes": 337500}}}}"#
        ))
        .unwrap()
    };
    // 3 MB is second class (H = 1 MB): it asks the manager and waits T_cost. Estimated at 500 KB it is first
    // class and starts at once; a 500 KB flow estimated at 3 MB asks the manager
    let mut f = flows(&[(0, 15, 3_000_000, 0)]);
    f.estimate_bytes = vec![500_000];
    let exact = run(&cfg(""), &f);
    assert_eq!(exact.stats.hyline_requests, 1);
    let est = run(&cfg(r#", "size_info": "estimate""#), &f);
    assert_eq!(est.stats.hyline_requests, 0);
    assert!(finish(&est)[0] < finish(&exact)[0]);
    let mut g = flows(&[(0, 15, 500_000, 0)]);
    g.estimate_bytes = vec![3_000_000];
    assert_eq!(run(&cfg(""), &g).stats.hyline_requests, 0);
    assert_eq!(run(&cfg(r#", "size_info": "estimate""#), &g).stats.hyline_requests, 1);
    // bounds: the class from the lower bound (second class only when sure to be larger than H)
    let mut b = flows(&[(0, 15, 3_000_000, 0), (2, 13, 3_000_000, 0)]);
    b.lower_bytes = vec![900_000, 1_100_000];
    b.upper_bytes = vec![5_000_000, 5_000_000];
    assert_eq!(run(&cfg(r#", "size_info": "bounds""#), &b).stats.hyline_requests, 1);
}

#[test]
fn qclimb_variants_are_the_old_keys() {
    let th = r#", "thresholds_bytes": [10000, 50000, 100000, 500000, 1000000, 5000000, 10000000]"#;
    let cfg = |extra: &str| {
        let mut c = on_dumbbell("qclimb", &format!("{th}{extra}"), 10.0);
        c.topology = dumbbell(3, 10.0, 10.0).topology;
        c
    };
    let mut f = flows(&[(0, 3, 3_000_000, 0), (1, 3, 200_000, PS_PER_MS / 2), (2, 3, 40_000, PS_PER_MS)]);
    f.estimate_bytes = vec![100_000, 2_000_000, 40_000];
    f.lower_bytes = vec![1_000_000, 50_000, 10_000];
    f.upper_bytes = vec![5_000_000, 500_000, 80_000];
    let same = |a: &str, b: &str| {
        assert_eq!(run(&cfg(a), &f).results.finish_ps, run(&cfg(b), &f).results.finish_ps, "{a} vs {b}");
    };
    same(r#", "size_info": "bounds""#, "");
    same(r#", "size_info": "exact""#, r#", "qclimb_info": "precise""#);
    same(r#", "size_info": "estimate""#, r#", "qclimb_info": "point_climb""#);
    same(r#", "size_info": "estimate", "qclimb_info": "point_fixed""#, r#", "qclimb_info": "point_fixed""#);
    // none: every flow handed to PIAS, as the trace's qclimb column = false does
    let mut p = f.clone();
    p.qclimb = vec![false; 3];
    assert_eq!(
        run(&cfg(r#", "size_info": "none""#), &f).results.finish_ps,
        run(&cfg(""), &p).results.finish_ps
    );
}

#[test]
fn size_info_refusals_name_the_key() {
    let key = |scheme: &str| config_from_json(&format!(r#"{{"scheme": {scheme}}}"#)).map(|_| ()).map_err(|e| e.key);
    assert_eq!(key(r#"{"name": "homa", "size_info": "none"}"#), Err("scheme.size_info".into()));
    assert_eq!(key(r#"{"name": "d3", "size_info": "none"}"#), Err("scheme.size_info".into()));
    assert_eq!(key(r#"{"name": "hyline", "size_info": "none"}"#), Err("scheme.size_info".into()));
    assert_eq!(key(r#"{"name": "qclimb", "size_info": "lower", "thresholds_bytes": [1,2,3,4,5,6,7]}"#), Err("scheme.size_info".into()));
    assert_eq!(key(r#"{"name": "dctcp", "size_info": "estimate"}"#), Err("scheme.size_info".into()));
    assert_eq!(key(r#"{"name": "pias", "size_info": "none", "thresholds_bytes": [1,2,3,4,5,6,7]}"#), Ok(()));
    assert_eq!(key(r#"{"name": "pfabric", "size_info": "bounds", "rank": "estimate"}"#), Err("scheme.rank".into()));
    assert_eq!(key(r#"{"name": "pfabric", "size_info": "estimate", "rank": "remaining_time"}"#), Err("scheme.rank".into()));
    assert_eq!(key(r#"{"name": "pfabric", "size_info": "estimate", "rank": "estimate"}"#), Ok(()));
    assert_eq!(key(r#"{"name": "homa", "size_info": "upper", "homa_sizes": "lower"}"#), Err("scheme.homa_sizes".into()));
    assert_eq!(key(r#"{"name": "pdq", "size_info": "estimate", "pdq_criticality": "random"}"#), Err("scheme.pdq_criticality".into()));
    assert_eq!(key(r#"{"name": "qclimb", "size_info": "bounds", "qclimb_info": "precise", "thresholds_bytes": [1,2,3,4,5,6,7]}"#), Err("scheme.qclimb_info".into()));
    let e = config_from_json(r#"{"scheme": {"name": "homa", "size_info": "none"}}"#).unwrap_err();
    assert!(e.message.contains("homa") && !e.message.contains('\n'), "{}", e.message);
    let e = config_from_json(r#"{"scheme": {"name": "pdq", "size_info": "estimate"}, "run": {"level": "flow"}}"#)
        .unwrap_err();
    assert!(e.key == "scheme.size_info" && e.message.contains("packet level"), "{e:?}");
    config_from_json(r#"{"scheme": {"name": "qclimb", "size_info": "estimate", "thresholds_bytes": [1,2,3,4,5,6,7]},
        "run": {"level": "flow"}}"#).unwrap();
}

#[test]
fn missing_columns_are_refused_naming_the_column() {
    let f = flows(&[(0, 2, 1_000, 0)]);
    for (scheme, info, column) in [
        ("pfabric", "estimate", "estimate_bytes"),
        ("pfabric", "bounds", "lower_bytes"),
        ("homa", "upper", "upper_bytes"),
        ("pdq", "estimate", "estimate_bytes"),
        ("d3", "lower", "lower_bytes"),
        ("hyline", "estimate", "estimate_bytes"),
        ("qjump", "bounds", "lower_bytes"),
        ("rax-plus", "estimate", "estimate_bytes"),
        ("qclimb", "estimate", "estimate_bytes"),
    ] {
        let th = if scheme == "qclimb" { r#", "thresholds_bytes": [1,2,3,4,5,6,7]"# } else { "" };
        let mut cfg = config_from_json(&format!(r#"{{"scheme": {{"name": "{scheme}", "size_info": "{info}" {th}}}}}"#))
            .unwrap_or_else(|e| panic!("{scheme} {info}: {e}"));
        cfg.topology = dumbbell(2, 10.0, 10.0).topology;
        let e = fctlab_sim::validate::flows(&cfg, &f).unwrap_err();
        assert_eq!(e.cell.map(|c| c.column), Some(column), "{scheme} {info}");
        assert!(e.message.contains(scheme) && e.message.contains("size_info"), "{}", e.message);
    }
}
