//! The flow level (`run.level = "flow"`) against the packet level: an isolated flow takes the same time at both,
//! every flow of a workload finishes, and the same input gives the same bits.

mod common;

use common::{flows, random_flows};
use fctlab_sim::config::{Config, Level};
use fctlab_sim::engine;

/// The reference fabric with `scheme`; pFabric as the PIAS paper ran it (its native preset's 45 us RTO is for a
/// 12 us fabric and times out spuriously on this one's 85 us).
fn cfg(scheme: &str, level: Level) -> Config {
    let preset = match scheme {
        "pfabric" => r#", "preset": "pias""#,
        "pias" => r#", "thresholds_bytes": [14600, 100000, 1000000]"#,
        _ => "",
    };
    let mut c = Config::from_json(&format!(r#"{{"scheme": {{"name": "{scheme}"{preset}}}}}"#)).unwrap();
    c.run.level = level;
    c
}

/// One flow alone on the reference fabric (85 us base RTT, 10 Gbps hosts), 1 KB to 10 MB: the flow level's FCT
/// (its set-up, slow start's rounds, wire bytes, pipeline latency) is the packet level's within 0.2%.
#[test]
fn an_isolated_flow_takes_the_same_time_at_both_levels() {
    for scheme in ["dctcp", "tcp", "pfabric", "rcp", "pias", "pdq"] {
        for size in [1_000u64, 14_600, 100_000, 1_000_000, 10_000_000] {
            let f = flows(&[(0, 143, size, 0)]);
            let p = engine::run(&cfg(scheme, Level::Packet), &f, None).unwrap();
            let q = engine::run(&cfg(scheme, Level::Flow), &f, None).unwrap();
            let (a, b) = (p.results.finish_ps[0] as f64, q.results.finish_ps[0] as f64);
            assert_eq!(q.results.ideal_fct_ps[0], p.results.ideal_fct_ps[0]);
            // TCP's slow start overshoots the buffer from about 1 MB on and loses packets at the packet level;
            // losses are not modelled at the flow level
            if scheme != "tcp" || size <= 100_000 {
                assert!((b / a - 1.0).abs() < 0.002, "{scheme} {size} B: packet {a} ps, flow {b} ps");
            }
        }
    }
}

/// A workload: every flow finishes, at least its ideal time, the same bits twice.
#[test]
fn a_workload_finishes_deterministically() {
    for scheme in ["dctcp", "pfabric", "pias", "pdq"] {
        let f = random_flows(5_000, 144, 2_000_000, 20_000_000, 11);
        let a = engine::run(&cfg(scheme, Level::Flow), &f, None).unwrap();
        let b = engine::run(&cfg(scheme, Level::Flow), &f, None).unwrap();
        assert_eq!(a.results, b.results);
        assert_eq!(a.stats.flows_finished, 5_000);
        for i in 0..f.len() {
            let fct = a.results.finish_ps[i] - a.results.start_ps[i];
            assert!(fct >= a.results.ideal_fct_ps[i], "flow {i}: {fct} < ideal {}", a.results.ideal_fct_ps[i]);
        }
    }
    let e = Config::from_json(r#"{"scheme": {"name": "homa"}, "run": {"level": "flow"}}"#).unwrap_err();
    assert_eq!(e.key, "run.level");
    // generation rates (the application model) are not modelled at the flow level: refused, not ignored
    let mut f = flows(&[(0, 1, 10_000, 0)]);
    f.gen_rate_bps = vec![1_000_000_000];
    let e = engine::run(&cfg("dctcp", Level::Flow), &f, None).unwrap_err();
    assert!(e.0.contains("gen_rate_bps"), "{}", e.0);
}

/// PIAS at the flow level: short flows, in the top queue, finish sooner than under DCTCP's max-min sharing.
#[test]
fn pias_favours_short_flows() {
    let f = random_flows(3_000, 144, 3_000_000, 20_000_000, 5);
    let mean = |scheme: &str, small: bool| {
        let out = engine::run(&cfg(scheme, Level::Flow), &f, None).unwrap();
        assert_eq!(out.stats.flows_finished, 3_000);
        let sel: Vec<usize> = (0..f.len()).filter(|&i| (f.size_bytes[i] <= 100_000) == small).collect();
        sel.iter().map(|&i| (out.results.finish_ps[i] - out.results.start_ps[i]) as f64).sum::<f64>() / sel.len() as f64
    };
    assert!(mean("pias", true) < 0.9 * mean("dctcp", true), "{} vs {}", mean("pias", true), mean("dctcp", true));
}

/// Dependencies at the flow level: a child starts the instant its parent's last bit arrives (or at its own start
/// if later), and a chain finishes in order, one flow open at a time.
#[test]
fn a_child_starts_when_its_parent_finishes() {
    let mut f = flows(&[(0, 143, 200_000, 0), (5, 143, 50_000, 0), (7, 20, 10_000, 0), (0, 143, 1_000, 900_000_000)]);
    f.after = vec![fctlab_sim::flows::NO_PARENT, 0, 1, 0];
    let out = engine::run(&cfg("dctcp", Level::Flow), &f, None).unwrap();
    let r = &out.results;
    assert_eq!(out.stats.flows_finished, 4);
    assert_eq!(r.start_ps[1], r.finish_ps[0]);
    assert_eq!(r.start_ps[2], r.finish_ps[1]);
    // (its own start is later than its parent's end)
    assert_eq!(r.start_ps[3], 900_000_000);
    assert!(r.finish_ps[0] < r.finish_ps[1] && r.finish_ps[1] < r.finish_ps[2]);
    assert_eq!(out.stats.max_concurrent_flows, 1);
}
