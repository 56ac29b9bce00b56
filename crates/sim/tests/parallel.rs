//! Two-thread runs (`engine::parallel`) give the one-thread results bit for bit; the cases that
//! `fifo_path.rs` (which runs all its scenarios on two threads too) does not cover: QCLIMB's reordering
//! and priority-detected losses, flow dependencies, a run cut short by the time limit, mixed host-link
//! delays, and fabrics that cannot be split.

mod common;

use common::{comparable, dumbbell, flows, random_flows};
use fctlab_sim::config::*;
use fctlab_sim::run_event_driven;
use fctlab_sim::flows::NO_PARENT;
use fctlab_sim::units::{NEVER, PS_PER_US};
use fctlab_sim::{FlowSet, RunOutput};

/// Run on one and on two threads, on both port paths; assert the same results; return the one-thread run.
fn same(name: &str, cfg: &Config, f: &FlowSet, expect_threads: u64) -> RunOutput {
    let one = fctlab_sim::run(cfg, f, None, 1).unwrap();
    assert_eq!(one.stats.threads, 1);
    for (two, path) in [(fctlab_sim::run(cfg, f, None, 2).unwrap(), "fast"), (run_event_driven(cfg, f, 2).unwrap(), "event-driven")] {
        assert_eq!(two.stats.threads, expect_threads, "{name}");
        if path == "fast" {
            assert_eq!(one.results, two.results, "{name}: per-flow results differ on two threads");
            assert_eq!(comparable(&one.stats), comparable(&two.stats), "{name}: stats differ on two threads");
        } else {
            let slow = run_event_driven(cfg, f, 1).unwrap();
            assert_eq!(slow.results, two.results, "{name}, event-driven: per-flow results differ on two threads");
            assert_eq!(comparable(&slow.stats), comparable(&two.stats), "{name}, event-driven: stats differ");
        }
    }
    one
}


#[test]
fn qclimb_with_reordering_and_losses() {
    let mut cfg = Config::for_scheme(SchemeName::Qclimb, Preset::Native);
    cfg.scheme.qclimb_info = QclimbInfo::Precise;
    cfg.scheme.thresholds_bytes = vec![20_000, 100_000, 500_000, 1_000_000, 2_000_000, 5_000_000, 10_000_000];
    cfg.switch.buffer_bytes = 50_000;
    let f = random_flows(300, 144, 3_000_000, PS_PER_US, 31);
    let out = same("qclimb", &cfg, &f, 2);
    assert!(out.stats.drops > 0, "{:?}", out.stats);
    assert!(out.results.priority_losses.iter().sum::<u32>() > 0);
    assert!(out.stats.ooo_host_max_bytes.iter().any(|&b| b > 0));
}

/// PFC (`net::pfc`): pauses between switches stay on the switches' side, pauses of the hosts' NICs cross to
/// the hosts' side as messages; both with per-port and shared buffers, ECMP and spraying.
#[test]
fn pfc_pauses_cross_between_the_sides() {
    let cases = [("pfc, port buffers, ecmp", false, false), ("pfc, shared buffer, spray", true, true)];
    for (name, shared, spray) in cases {
        let mut cfg = Config::default();
        cfg.switch.queues = 2;
        cfg.switch.pfc = true;
        cfg.switch.pfc_pause_packets = 30;
        cfg.switch.pfc_resume_packets = 20;
        if shared {
            cfg.switch.buffer = BufferMode::Shared;
            cfg.switch.shared_buffer_bytes = 400_000;
        } else {
            cfg.switch.buffer_bytes = 90_000;
        }
        if spray {
            cfg.routing.mode = RoutingMode::Spray;
        }
        cfg.transport.init_cwnd_packets = 30;
        let mut f = random_flows(400, 144, 2_000_000, PS_PER_US / 2, 12);
        // many-to-few, so that queues build: every flow into one of 8 hosts on two leaves, half of them protected
        for (i, d) in f.dst.iter_mut().enumerate() {
            *d = [3, 5, 7, 9, 17, 19, 21, 23][i % 8];
        }
        for (s, d) in f.src.iter_mut().zip(&f.dst) {
            if s == d {
                *s = (*s + 40) % 144;
            }
        }
        f.priority = (0..f.len()).map(|i| (i % 2) as u8).collect();
        let out = same(name, &cfg, &f, 2);
        let paused = &out.stats.pfc_paused_ps_per_tier;
        assert!(out.stats.pfc_pause_frames > 0, "{name}: {:?}", out.stats);
        assert!(paused.iter().find(|p| p.0 == "host_nic").unwrap().1 > 0, "{name}: {paused:?}");
        assert!(paused.iter().any(|p| p.0 != "host_nic" && p.1 > 0), "{name}: switches paused too: {paused:?}");
    }
}

#[test]
fn dependencies_start_children_on_the_hosts_side() {
    let cfg = dumbbell(3, 10.0, 10.0);
    let mut f = flows(&[(0, 3, 200_000, 0), (1, 3, 50_000, 0), (2, 3, 80_000, 0), (0, 3, 10_000, 5 * PS_PER_US)]);
    f.after = vec![NO_PARENT, 0, 0, 1];
    let out = same("dependencies", &cfg, &f, 2);
    assert_eq!(out.results.start_ps[1], out.results.finish_ps[0]);
    assert_eq!(out.results.start_ps[3], out.results.finish_ps[1]);
}

#[test]
fn a_run_cut_short_by_the_time_limit() {
    let mut cfg = Config::default();
    cfg.run.time_limit_ms = 0.3;
    let f = random_flows(200, 144, 5_000_000, PS_PER_US, 8);
    let out = same("time limit", &cfg, &f, 2);
    assert!(out.stats.hit_time_limit);
    assert!(out.results.finish_ps.iter().any(|&t| t == NEVER));
    assert!(out.stats.sim_time_ps <= 300 * PS_PER_US);
}

#[test]
fn mixed_host_link_delays_take_the_shortest_as_lookahead() {
    // a fat tree's host links are as long as its core links; here 300 ns, shorter than a 1500 B packet's
    // serialization at 10G: the sides must stay within 300 ns of each other
    let mut cfg = Config { topology: TopologyConfig::FatTree(FatTree::default()), ..Config::default() };
    if let TopologyConfig::FatTree(t) = &mut cfg.topology {
        t.host_link_delay_ns = 300.0;
        t.core_link_delay_ns = 2_000.0;
    }
    cfg.transport.init_cwnd_packets = 20;
    let f = random_flows(200, 128, 400_000, PS_PER_US, 77);
    same("fat tree, short host links", &cfg, &f, 2);
}

#[test]
fn a_fabric_without_host_link_delay_runs_on_one_thread() {
    let mut cfg = dumbbell(3, 10.0, 10.0);
    if let TopologyConfig::Dumbbell(d) = &mut cfg.topology {
        d.host_link_delay_ns = 0.0;
    }
    let f = flows(&[(0, 3, 100_000, 0), (1, 3, 100_000, 0), (2, 3, 30_000, 2 * PS_PER_US)]);
    let out = same("zero delay", &cfg, &f, 1);
    assert!(out.results.finish_ps.iter().all(|&t| t != NEVER));
}

#[test]
fn an_empty_run_ends_on_two_threads() {
    let cfg = Config::default();
    let f = flows(&[(0, 1, 1_000, 0)]);
    let out = same("one tiny flow", &cfg, &f, 2);
    assert_eq!(out.results.finish_ps[0] - out.results.start_ps[0], out.results.ideal_fct_ps[0]);
}

#[test]
fn two_threads_are_worthwhile_on_the_pias_fabric_not_on_the_qclimb_testbed() {
    use fctlab_sim::engine::two_threads_worthwhile;
    assert!(two_threads_worthwhile(&Config::default()));
    let testbed = Config { topology: TopologyConfig::SingleSwitch(SingleSwitch::default()), ..Config::default() };
    assert!(!two_threads_worthwhile(&testbed));
    assert!(!two_threads_worthwhile(&dumbbell(3, 10.0, 10.0)));
}

/// The rule's second half: enough packets per lookahead, but paths through one switch leave the switches' side
/// too little of the work (a 32-host single switch with 20 us links); a second tier gives it its share.
#[test]
fn two_threads_need_a_fabric_with_more_than_one_tier() {
    use fctlab_sim::engine::parallel::{mean_switches_crossed, window_packets, WORTHWHILE_WINDOW_PACKETS};
    use fctlab_sim::engine::two_threads_worthwhile;
    use fctlab_sim::net::Network;
    let single = |hosts: u32| Config {
        topology: TopologyConfig::SingleSwitch(SingleSwitch { hosts, host_link_gbps: 10.0, host_link_delay_ns: 20_000.0 }),
        ..Config::default()
    };
    let net: Network = Network::build(&single(32), 0);
    assert!(window_packets(&net).unwrap() >= WORTHWHILE_WINDOW_PACKETS, "enough lookahead");
    assert_eq!(mean_switches_crossed(&net), 1.0);
    assert!(!two_threads_worthwhile(&single(32)));
    assert!(!two_threads_worthwhile(&single(512)));
    // the PIAS leaf-spine: 15 of host 0's 143 peers share its rack (1 switch), 128 do not (3)
    let net: Network = Network::build(&Config::default(), 0);
    assert_eq!(mean_switches_crossed(&net), (15.0 + 128.0 * 3.0) / 143.0);
    assert!(two_threads_worthwhile(&Config::default()));
    // HyLine's k = 8 fat tree (1 Gbps, 25 us links: ~270 packets per lookahead): 3 of host 0's 127 peers
    // share its edge switch, 12 its pod
    let fat = Config::from_json(r#"{"topology": {"kind": "fat_tree"}}"#).unwrap();
    let net: Network = Network::build(&fat, 0);
    assert_eq!(mean_switches_crossed(&net), (3.0 + 12.0 * 3.0 + 112.0 * 5.0) / 127.0);
    assert!(two_threads_worthwhile(&fat));
}

#[test]
fn connections_reused_per_host_pair_and_pias_counted_per_connection() {
    let mut cfg = Config::for_scheme(SchemeName::Pias, Preset::Native);
    cfg.scheme.thresholds_bytes = vec![20_000, 100_000, 500_000, 1_000_000, 2_000_000, 5_000_000, 10_000_000];
    cfg.transport.connections = Connections::PerHostPair;
    cfg.scheme.pias_count = PiasCount::PerConnection;
    // few hosts, so that pairs repeat
    let mut f = random_flows(400, 144, 300_000, PS_PER_US, 5);
    for s in &mut f.src {
        *s %= 8;
    }
    for (i, d) in f.dst.iter_mut().enumerate() {
        *d = 8 + (*d + i as u32) % 4;
    }
    let out = same("connections", &cfg, &f, 2);
    assert!(out.stats.connections_reused > 0, "{:?}", out.stats);
    assert_eq!(out.stats.connections_opened + out.stats.connections_reused, 400);
    // the trace's connections, one per host pair: reused at least as often (a flow may also take one over)
    cfg.transport.connections = Connections::Trace;
    f.conn = f.src.iter().zip(&f.dst).map(|(&s, &d)| s * 256 + d).collect();
    let traced = same("trace connections", &cfg, &f, 2);
    assert!(traced.stats.connections_reused >= out.stats.connections_reused, "{:?}", traced.stats);
}

/// Run on 1 to 8 threads (one for the hosts, the others for groups of switches, as many as the fabric
/// allows); every run's per-flow results and counters equal the one-thread run's, bit for bit. Returns the
/// threads each run used.
fn same_on_n(name: &str, cfg: &Config, f: &FlowSet) -> Vec<u64> {
    let one = fctlab_sim::run(cfg, f, None, 1).unwrap();
    assert!(one.stats.flows_finished > 0, "{name}: {:?}", one.stats);
    let mut used = vec![1];
    for n in 2..=8 {
        let out = fctlab_sim::run(cfg, f, None, n).unwrap();
        assert_eq!(one.results, out.results, "{name}: per-flow results differ on {n} threads");
        assert_eq!(comparable(&one.stats), comparable(&out.stats), "{name}: stats differ on {n} threads");
        assert!(out.stats.threads <= n as u64 && out.stats.threads >= 2, "{name}: {}", out.stats.threads);
        assert_eq!(out.stats.threads < n as u64, !out.stats.threads_note.is_empty(), "{name}, {n}: {}", out.stats.threads_note);
        assert_eq!(out.stats.thread_wait_seconds.len() as u64, out.stats.threads);
        used.push(out.stats.threads);
    }
    used
}

/// A scheme's configuration with ECMP routing (packet spraying keeps the switches on one thread).
fn ecmp(scheme: SchemeName, topology: TopologyConfig) -> Config {
    let mut cfg = Config::for_scheme(scheme, Preset::Native);
    cfg.topology = topology;
    cfg.routing.mode = RoutingMode::Ecmp;
    if scheme == SchemeName::Pias {
        cfg.scheme.thresholds_bytes = vec![10_000, 100_000, 1_000_000];
    }
    cfg
}

/// The PIAS leaf-spine (144 hosts, 9 leaves, 4 spines) and a k = 8 fat tree (128 hosts, 80 switches), on
/// FIFO ports (DCTCP), rank queues (pFabric), strict priority with demotion (PIAS), Homa and RCP: N threads
/// give the one-thread results, and use every thread asked for.
#[test]
fn n_threads_give_the_one_thread_results() {
    // (the PIAS leaf-spine's 200 ns core links are too short to split its switches: 5 us here)
    let mut leaf_spine = Config::default().topology;
    if let TopologyConfig::LeafSpine(t) = &mut leaf_spine {
        t.core_link_delay_ns = 5_000.0;
    }
    let fat_tree = TopologyConfig::FatTree(FatTree::default());
    for (fabric, topology, hosts) in [("leaf-spine", leaf_spine, 144), ("fat tree", fat_tree, 128)] {
        for scheme in [SchemeName::Dctcp, SchemeName::Pfabric, SchemeName::Pias, SchemeName::Homa, SchemeName::Rcp] {
            let cfg = ecmp(scheme, topology.clone());
            let f = random_flows(120, hosts, 200_000, PS_PER_US / 2, 41);
            let name = format!("{fabric}, {}", scheme.as_str());
            assert_eq!(same_on_n(&name, &cfg, &f), (1..=8).collect::<Vec<u64>>(), "{name}");
        }
    }
}

/// Drops, ECN marks and a shared buffer per switch (each switch's pool is on one thread) on N threads.
#[test]
fn n_threads_with_drops_and_shared_buffers() {
    let mut cfg = ecmp(SchemeName::Dctcp, TopologyConfig::FatTree(FatTree::default()));
    cfg.switch.buffer = BufferMode::Shared;
    cfg.switch.shared_buffer_bytes = 200_000;
    cfg.transport.init_cwnd_packets = 40;
    let mut f = random_flows(150, 128, 300_000, PS_PER_US / 4, 3);
    // many-to-few: queues build and overflow
    for (i, d) in f.dst.iter_mut().enumerate() {
        *d = [5, 70, 100][i % 3];
    }
    for (s, d) in f.src.iter_mut().zip(&f.dst) {
        if s == d {
            *s = (*s + 20) % 128;
        }
    }
    same_on_n("fat tree, shared buffer", &cfg, &f);
    let out = fctlab_sim::run(&cfg, &f, None, 4).unwrap();
    assert!(out.stats.drops > 0 && out.stats.ecn_marks > 0, "{:?}", out.stats);
}

/// Packet spraying draws every switch's choice from one generator, and PFC's frames pass between switches:
/// those runs keep the switches on one thread (two in all, whatever is asked), say so, and still give the
/// one-thread results.
#[test]
fn spraying_and_pfc_keep_the_switches_together() {
    let mut spray = Config::for_scheme(SchemeName::Dctcp, Preset::Native);
    spray.routing.mode = RoutingMode::Spray;
    let mut pfc = ecmp(SchemeName::Dctcp, TopologyConfig::FatTree(FatTree::default()));
    pfc.switch.queues = 2;
    pfc.switch.pfc = true;
    pfc.switch.pfc_pause_packets = 30;
    pfc.switch.pfc_resume_packets = 20;
    spray.topology = TopologyConfig::FatTree(FatTree::default());
    for (name, cfg) in [("spraying", spray), ("pfc", pfc)] {
        let f = random_flows(120, 128, 200_000, PS_PER_US / 2, 17);
        let used = same_on_n(name, &cfg, &f);
        assert_eq!(used, [1, 2, 2, 2, 2, 2, 2, 2], "{name}");
        let out = fctlab_sim::run(&cfg, &f, None, 5).unwrap();
        assert!(out.stats.threads_note.starts_with("2 threads of 5"), "{name}: {}", out.stats.threads_note);
    }
}

/// A fabric with fewer switches than threads asked for uses one thread per switch plus the hosts', and says so;
/// the PIAS leaf-spine's 200 ns links between switches are too short to split them.
#[test]
fn fewer_switches_than_threads() {
    let out = fctlab_sim::run(&Config::default(), &random_flows(20, 144, 10_000, PS_PER_US, 2), None, 4).unwrap();
    assert_eq!(out.stats.threads, 2);
    assert!(out.stats.threads_note.contains("links between switches carry 48 "), "{}", out.stats.threads_note);
    let mut cfg = dumbbell(3, 10.0, 10.0);
    if let TopologyConfig::Dumbbell(d) = &mut cfg.topology {
        d.core_link_delay_ns = 200_000.0; // (10 Gbps: ~167 packets each way within it)
    }
    let f = flows(&[(0, 3, 100_000, 0), (1, 3, 200_000, 0), (2, 3, 30_000, 2 * PS_PER_US)]);
    let used = same_on_n("dumbbell", &cfg, &f);
    assert_eq!(used, [1, 2, 3, 3, 3, 3, 3, 3]);
    let out = fctlab_sim::run(&cfg, &f, None, 6).unwrap();
    assert!(out.stats.threads_note.contains("2 switches"), "{}", out.stats.threads_note);
}
