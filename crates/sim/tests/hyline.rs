//! HyLine on whole runs (`engine::family::hyline`): the control plane's delay, the manager's admission and
//! preemption as the hosts obey them, source routing on the paths it picks, and what must hold whatever the
//! scheme: every byte delivered and the same bits on one and two threads.

mod common;

use common::{comparable, flows, random_flows};
use fctlab_sim::config::Config;
use fctlab_sim::units::NEVER;
use fctlab_sim::{FlowSet, RunOutput};

const US: u64 = 1_000_000;

/// A k = 4 fat-tree with 2 hosts per edge switch (16 hosts), HyLine's 1 Gbps links and 25 us per link (a 300 us
/// RTT across pods), 225-packet ports, and HyLine with `extra` JSON keys.
fn hyline(extra: &str) -> Config {
    let text = format!(
        r#"{{"scheme": {{"name": "hyline" {extra}}},
            "topology": {{"kind": "fat_tree", "k": 4}},
            "switch": {{"buffer_bytes": 337500}}}}"#
    );
    Config::from_json(&text).unwrap()
}

fn run(cfg: &Config, f: &FlowSet) -> RunOutput {
    fctlab_sim::run(cfg, f, None, 1).unwrap()
}

fn fct(out: &RunOutput, i: usize) -> u64 {
    out.results.finish_ps[i] - out.results.start_ps[i]
}

/// A first-class flow starts at once; a second-class one waits T_cost for its first CTS, then runs as alone.
#[test]
fn a_large_flow_waits_t_cost_then_runs_alone() {
    let cfg = hyline("");
    // host 0 to host 15: across pods; 500 KB is first class, 3 MB second class (H = 1 MB)
    let out = run(&cfg, &flows(&[(0, 15, 500_000, 0)]));
    assert!(out.results.man_wait_ps.iter().all(|&w| w == NEVER));
    let small = fct(&out, 0);
    assert!(small >= out.results.ideal_fct_ps[0] && small < out.results.ideal_fct_ps[0] + 1_000 * US);
    assert_eq!(out.stats.hyline_requests, 0);

    let out = run(&cfg, &flows(&[(0, 15, 3_000_000, 0)]));
    assert_eq!(out.stats.flows_finished, 1);
    assert_eq!(out.results.man_wait_ps[0], 100 * US, "T_cost");
    let ideal = out.results.ideal_fct_ps[0];
    let t = fct(&out, 0);
    // T_cost, then line rate but for the first round trip (25 packets in flight cover the 300 us RTT, not the
    // store-and-forward time of the first packet)
    assert!(t >= ideal + 100 * US && t < ideal + 300 * US, "fct {} us, ideal {} us", t / US, ideal / US);
    assert_eq!((out.stats.hyline_requests, out.stats.hyline_admissions, out.stats.hyline_preemptions), (1, 1, 0));
    assert_eq!(out.stats.drops, 0);

    // T_cost is a parameter, and signals may take time too
    let cfg = hyline(r#", "hyline_tcost_us": 20, "hyline_signal_us": 30"#);
    let out = run(&cfg, &flows(&[(0, 15, 3_000_000, 0)]));
    assert_eq!(out.results.man_wait_ps[0], 50 * US);
}

/// Two large flows into one host share its edge link: the manager lets one in (the shorter), stops the other
/// (it waits without sending) and lets it in once the first sends its FIN. No drop, no overlap, no timeout.
#[test]
fn flows_sharing_an_edge_link_go_one_after_the_other() {
    let cfg = hyline("");
    let out = run(&cfg, &flows(&[(0, 15, 4_000_000, 0), (4, 15, 2_000_000, 0)]));
    assert_eq!(out.stats.flows_finished, 2);
    let r = &out.results;
    // both request at T_cost; the first request is decided first and admitted; the second (shorter) preempts it
    // (1 x 2 MB < 4 MB left: the MNP rule)
    assert_eq!(r.man_preemptions, vec![1, 0]);
    assert!(r.finish_ps[1] < r.finish_ps[0]);
    assert!(r.man_stopped_ps[0] > 10_000 * US, "stopped {} us", r.man_stopped_ps[0] / US);
    assert_eq!(out.stats.drops, 0);
    assert_eq!(r.timeouts, vec![0, 0]);
    // the receiver's link carried 6 MB: the last finishes within a few RTTs of the serial time
    let serial = 6_000_000.0 * 1500.0 / 1460.0 * 8.0 / 1e9 * 1e12;
    let last = r.finish_ps[0] as f64;
    assert!(last < serial + 3_000.0 * US as f64, "last {:.0} us, serial {:.0} us", last / 1e6, serial / 1e6);

    // the larger flow arriving second waits instead (1 x 4 MB is not below 2 MB left)
    let out = run(&cfg, &flows(&[(0, 15, 2_000_000, 0), (4, 15, 4_000_000, 1_000 * US)]));
    let r = &out.results;
    assert_eq!(r.man_preemptions, vec![0, 0]);
    assert!(r.man_wait_ps[1] > 10_000 * US, "waited {} us", r.man_wait_ps[1] / US);
    assert!(r.finish_ps[0] < r.finish_ps[1]);
    assert_eq!(out.stats.drops, 0);
}

/// Source routing: two large flows from the two hosts of one edge switch to two other pods. The manager puts
/// them on different uplinks (balanced load), and their packets follow: both run at line rate at once. (Under
/// ECMP alone they share an uplink for some seeds.)
#[test]
fn admitted_flows_follow_their_paths() {
    for seed in 0..8 {
        let mut cfg = hyline("");
        cfg.seed = seed;
        let out = run(&cfg, &flows(&[(0, 7, 3_000_000, 0), (1, 12, 3_000_000, 0)]));
        for i in 0..2 {
            let (t, ideal) = (fct(&out, i), out.results.ideal_fct_ps[i]);
            assert!(t < ideal + 300 * US, "seed {seed} flow {i}: fct {} us, ideal {} us", t / US, ideal / US);
        }
        assert_eq!(out.results.man_preemptions, vec![0, 0]);
    }
}

/// Random traffic with a low threshold (many second-class flows, preemptions, waits): every byte arrives, and
/// two threads give the same bits as one.
#[test]
fn every_byte_arrives_and_two_threads_agree() {
    let cfg = hyline(r#", "hyline_threshold_bytes": 50000"#);
    let f = random_flows(300, 16, 400_000, 20 * US, 11);
    let one = run(&cfg, &f);
    assert_eq!(one.stats.flows_finished, 300);
    for i in 0..300 {
        assert!(one.results.bytes_delivered[i] >= f.size_bytes[i], "flow {i}");
    }
    assert!(one.stats.hyline_requests > 50 && one.stats.hyline_stops > 0, "{:?}", one.stats.hyline_requests);
    let two = fctlab_sim::run(&cfg, &f, None, 2).unwrap();
    assert_eq!(two.stats.threads, 2);
    assert_eq!(one.results, two.results);
    assert_eq!(comparable(&one.stats), comparable(&two.stats));
    let again = run(&cfg, &f);
    assert_eq!(one.results, again.results);
}

/// With PFC on the second class's queue (the paper's 215/205 packets, and headroom beyond the port's buffer as
/// the authors' scripts give it), first-class bursts pause second-class traffic instead of dropping it: queue 1
/// loses nothing, the manager's control timer and PFC's frame events keep apart, and two threads agree.
#[test]
fn pfc_keeps_the_second_class_lossless() {
    let text = r#"{"scheme": {"name": "hyline", "hyline_threshold_bytes": 200000},
        "topology": {"kind": "fat_tree", "k": 4},
        "switch": {"buffer_bytes": 337500, "pfc": true, "pfc_queues": [1], "pfc_headroom_bytes": 150000}}"#;
    let cfg = Config::from_json(text).unwrap();
    // many senders into two receivers: first-class incast on their edge links, beside second-class flows
    // (without PFC: 5 second-class drops; with it: none, 24 pauses)
    let mut list = Vec::new();
    for i in 0..120u64 {
        let src = (i % 12) as u32 + 4;
        let dst = (i % 2) as u32;
        let size = if i % 4 == 0 { 3_000_000 } else { 100_000 + (i * 7_919) % 100_000 };
        list.push((src, dst, size, i * 10 * US));
    }
    let f = flows(&list);
    let mut off = cfg.clone();
    off.switch.pfc = false;
    let lossy = run(&off, &f);
    assert!(lossy.stats.drops_per_queue[1] > 0, "without PFC the second class must lose packets here");
    let out = run(&cfg, &f);
    assert_eq!(out.stats.flows_finished, 120);
    assert!(out.stats.pfc_pause_frames > 0, "no pause: the test does not exercise PFC");
    assert_eq!(out.stats.drops_per_queue[1], 0, "second class dropped");
    assert!(out.stats.hyline_requests == 30);
    let two = fctlab_sim::run(&cfg, &f, None, 2).unwrap();
    assert_eq!(out.results, two.results);
    assert_eq!(comparable(&out.stats), comparable(&two.stats));
}

/// The same in PFC's "next_queue" mode (the authors' model: a port sends the first second-class packet whose
/// queue at the next switch is not paused, reading the source-routed packets' next hop as the switch will):
/// queue 1 still loses nothing, every flow finishes, and the run is deterministic.
#[test]
fn pfc_next_queue_mode_keeps_the_second_class_lossless() {
    let text = r#"{"scheme": {"name": "hyline", "hyline_threshold_bytes": 200000},
        "topology": {"kind": "fat_tree", "k": 4},
        "switch": {"buffer_bytes": 337500, "pfc": true, "pfc_mode": "next_queue", "pfc_queues": [1],
                   "pfc_headroom_bytes": 150000}}"#;
    let cfg = Config::from_json(text).unwrap();
    let mut list = Vec::new();
    for i in 0..120u64 {
        let src = (i % 12) as u32 + 4;
        let dst = (i % 2) as u32;
        let size = if i % 4 == 0 { 3_000_000 } else { 100_000 + (i * 7_919) % 100_000 };
        list.push((src, dst, size, i * 10 * US));
    }
    let f = flows(&list);
    let out = run(&cfg, &f);
    assert_eq!(out.stats.flows_finished, 120);
    assert!(out.stats.pfc_paused_ps_per_tier.iter().any(|t| t.1 > 0), "no pause: the test does not exercise PFC");
    assert_eq!(out.stats.drops_per_queue[1], 0, "second class dropped");
    assert_eq!(out.stats.pfc_pause_frames, 0);
    let again = run(&cfg, &f);
    assert_eq!(out.results, again.results);
    assert_eq!(comparable(&out.stats), comparable(&again.stats));
}
