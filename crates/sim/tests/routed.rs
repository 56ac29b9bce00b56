//! Source routes for the TCP family (a trace's `path` column, `engine::family::routed`): packets follow the path a flow
//! names, flows without one are routed exactly as before, and bad paths or schemes that cannot carry routes are
//! refused.

mod common;

use common::{comparable, flows, random_flows};
use fctlab_sim::config::Config;
use fctlab_sim::flows::NO_PATH;
use fctlab_sim::{FlowSet, RunOutput};

const US: u64 = 1_000_000;

/// A k = 4 fat-tree with 2 hosts per edge switch (16 hosts), 1 Gbps and 25 us links, TCP with a window that
/// covers the round trip, a large buffer.
fn fabric(scheme: &str) -> Config {
    let text = format!(
        r#"{{"scheme": {{"name": "{scheme}"}}, "topology": {{"kind": "fat_tree", "k": 4}},
            "switch": {{"buffer_bytes": 2000000}},
            "transport": {{"init_cwnd_packets": 40, "max_cwnd_packets": 40}}}}"#
    );
    Config::from_json(&text).unwrap()
}

fn with_paths(mut f: FlowSet, paths: &[u32]) -> FlowSet {
    f.path = paths.to_vec();
    f
}

fn run(cfg: &Config, f: &FlowSet) -> RunOutput {
    fctlab_sim::run(cfg, f, None, 1).unwrap()
}

fn fct(out: &RunOutput, i: usize) -> u64 {
    out.results.finish_ps[i] - out.results.start_ps[i]
}

/// Two 3 MB flows from the two hosts of one edge switch to two other pods (4 paths each): on the same path
/// index they share the edge's uplink and the aggregation switch's, and each takes about twice its time alone;
/// on paths that differ in the first choice they do not meet.
#[test]
fn packets_follow_the_named_path() {
    let cfg = fabric("tcp");
    let pair = flows(&[(0, 7, 3_000_000, 0), (1, 12, 3_000_000, 0)]);
    let apart = run(&cfg, &with_paths(pair.clone(), &[0, 2]));
    let shared = run(&cfg, &with_paths(pair.clone(), &[1, 1]));
    for i in 0..2 {
        let ideal = apart.results.ideal_fct_ps[i];
        assert!(fct(&apart, i) < ideal + 2_000 * US, "apart: flow {i} {} us, ideal {} us", fct(&apart, i) / US, ideal / US);
        assert!(fct(&shared, i) > ideal * 17 / 10, "shared: flow {i} {} us, ideal {} us", fct(&shared, i) / US, ideal / US);
    }
    // paths 0 and 1 share the edge uplink only (they differ in the aggregation switch's choice)
    let half = run(&cfg, &with_paths(pair, &[0, 1]));
    assert!(fct(&half, 0).max(fct(&half, 1)) > apart.results.ideal_fct_ps[0] * 17 / 10);
}

/// Flows without a path are routed by ECMP exactly as without the column; two threads give the same bits.
#[test]
fn unrouted_flows_are_unchanged_and_two_threads_agree() {
    let cfg = fabric("dctcp");
    let f = random_flows(300, 16, 200_000, 20 * US, 3);
    let plain = run(&cfg, &f);
    let none = run(&cfg, &with_paths(f.clone(), &vec![NO_PATH; 300]));
    assert_eq!(plain.results, none.results);
    assert_eq!(comparable(&plain.stats), comparable(&none.stats));
    let mixed = with_paths(f.clone(), &(0..300).map(|i| if i % 3 == 0 { NO_PATH } else { 0 }).collect::<Vec<_>>());
    let one = run(&cfg, &mixed);
    assert_eq!(one.stats.flows_finished, 300);
    assert_ne!(one.results, plain.results);
    let two = fctlab_sim::run(&cfg, &mixed, None, 2).unwrap();
    assert_eq!(two.stats.threads, 2);
    assert_eq!(one.results, two.results);
}

#[test]
fn bad_paths_and_schemes_that_cannot_carry_routes_are_refused() {
    let f = with_paths(flows(&[(0, 7, 1_000, 0), (0, 1, 1_000, 0)]), &[3, 1]);
    let e = fctlab_sim::run(&fabric("tcp"), &f, None, 1).unwrap_err();
    assert!(e.message.contains("flow 1 has path 1") && e.message.contains("1 equal-cost paths"), "{}", e.message);
    let ok = with_paths(flows(&[(0, 7, 1_000, 0)]), &[3]);
    let e = fctlab_sim::run(&fabric("pfabric"), &ok, None, 1).unwrap_err();
    assert!(e.message.contains("pfabric") && e.message.contains("rank"), "{}", e.message);
    let e = fctlab_sim::run(&fabric("hyline"), &ok, None, 1).unwrap_err();
    assert!(e.message.contains("manager routes"), "{}", e.message);
}

/// PFC's next-queue mode reads each packet's next port ahead of time: with source routes it reads the route
/// (`Family::next_port`): a congested run with routed and unrouted flows delivers every byte and no switch
/// drops a packet (without PFC this run loses 396 in the switches).
#[test]
fn routes_and_pfc_next_queue_mode_agree() {
    let mut cfg = fabric("dctcp");
    cfg.switch.buffer_bytes = 150_000;
    cfg.switch.pfc = true;
    cfg.switch.pfc_pause_packets = 60;
    cfg.switch.pfc_resume_packets = 50;
    cfg.switch.pfc_queues = Some(vec![0]);
    cfg.switch.pfc_mode = fctlab_sim::config::PfcMode::NextQueue;
    cfg.switch.queues = 1;
    let f = random_flows(300, 16, 300_000, 5 * US, 9);
    let paths: Vec<u32> = (0..300).map(|i| if i % 2 == 0 { NO_PATH } else { 0 }).collect();
    let out = run(&cfg, &with_paths(f.clone(), &paths));
    assert_eq!(out.stats.flows_finished, 300);
    // (PFC protects the switches' queues; the hosts' own NIC queues may still drop)
    let in_fabric: u64 = out.stats.drops_per_tier.iter().filter(|(t, _)| t != "host_nic").map(|(_, d)| d).sum();
    assert_eq!(in_fabric, 0, "{:?}", out.stats.drops_per_tier);
    for i in 0..300 {
        assert!(out.results.bytes_delivered[i] >= f.size_bytes[i], "flow {i}");
    }
}
