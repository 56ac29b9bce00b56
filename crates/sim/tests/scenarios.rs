//! Whole-engine tests on small scenarios, against answers known independently of the engine: the exact
//! pipeline time of an isolated flow, conservation of bytes, fair sharing, strict priority, ECMP spreading,
//! loss recovery, determinism.

use fctlab_sim::config::*;
use fctlab_sim::units::{NEVER, PS_PER_MS, PS_PER_US};
use fctlab_sim::{run, FlowSet};
mod common;
use common::{dumbbell, flows};

fn single_switch(hosts: u32, gbps: f64, delay_ns: f64) -> Config {
    Config {
        topology: TopologyConfig::SingleSwitch(SingleSwitch { hosts, host_link_gbps: gbps, host_link_delay_ns: delay_ns }),
        ..Config::default()
    }
}

/// Every byte sent is delivered or dropped (nothing is in flight once every flow is done).
fn assert_conserved(out: &fctlab_sim::RunOutput, f: &FlowSet) {
    for i in 0..f.len() {
        let r = &out.results;
        if r.sender_done_ps[i] != NEVER {
            assert_eq!(
                r.bytes_sent[i],
                r.bytes_delivered[i] + r.bytes_dropped[i],
                "flow {i}: sent {} != delivered {} + dropped {}",
                r.bytes_sent[i],
                r.bytes_delivered[i],
                r.bytes_dropped[i]
            );
            assert!(r.bytes_delivered[i] >= f.size_bytes[i]);
        }
    }
}

#[test]
fn isolated_flow_finishes_at_its_ideal_fct_to_the_picosecond() {
    for (kind, cfg, src, dst) in [
        ("leaf_spine cross-rack", Config::default(), 0u32, 143u32),
        ("leaf_spine same rack", Config::default(), 0, 5),
        ("fat_tree cross-pod", Config { topology: TopologyConfig::FatTree(FatTree::default()), ..Config::default() }, 3, 120),
        ("single_switch", single_switch(4, 25.0, 1_000.0), 1, 2),
        ("dumbbell 10G->1G", dumbbell(2, 10.0, 1.0), 0, 2),
    ] {
        for size in [1u64, 1_000, 1_460, 1_461, 100_000, 1_234_567] {
            let mut cfg = cfg.clone();
            cfg.transport.init_cwnd_packets = 2_000; // covers the BDP and more: the window never stalls
            cfg.switch.buffer_bytes = 100_000_000; // and the bottleneck of the dumbbell never drops
            cfg.transport.rto_min_us = 10_000.0; // above the fat-tree's 300 us RTT: no spurious timeout
            let f = flows(&[(src, dst, size, 7 * PS_PER_US)]);
            let out = run(&cfg, &f, None, 1).unwrap();
            let fct = out.results.finish_ps[0] - 7 * PS_PER_US;
            assert_eq!(fct, out.results.ideal_fct_ps[0], "{kind}, {size} bytes");
            assert_eq!(out.results.retransmits[0], 0, "{kind}, {size} bytes");
            assert_conserved(&out, &f);
        }
    }
}

#[test]
fn ideal_fct_matches_hand_computation_on_the_pias_fabric() {
    // 144-host leaf-spine, cross rack: links 10G (20.2 us), 40G (0.2 us), 40G (0.2 us), 10G (20.2 us).
    // One 1460-byte segment (1500 B on the wire): 1.2 + 0.3 + 0.3 + 1.2 us serialization + 40.8 us.
    let f = flows(&[(0, 143, 1460, 0)]);
    let out = run(&Config::default(), &f, None, 1).unwrap();
    assert_eq!(out.results.ideal_fct_ps[0], (3_000_000 + 40_800_000) as u64);
    assert_eq!(out.results.finish_ps[0], out.results.ideal_fct_ps[0]);
}

#[test]
fn slowdown_is_at_least_one_and_bytes_are_conserved_under_load() {
    let mut cfg = Config::default();
    cfg.transport.init_cwnd_packets = 70;
    cfg.routing.mode = RoutingMode::Spray;
    // 300 flows, random pairs and sizes, bursty starts
    let mut list = Vec::new();
    let mut x: u64 = 12345;
    for i in 0..300u64 {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let src = (x >> 33) as u32 % 144;
        let dst = (src + 1 + (x >> 13) as u32 % 143) % 144;
        let size = 1 + (x >> 20) % 3_000_000;
        list.push((src, dst, size, i * 2 * PS_PER_US));
    }
    let f = flows(&list);
    let out = run(&cfg, &f, None, 1).unwrap();
    assert_eq!(out.stats.flows_finished, 300);
    for i in 0..f.len() {
        let fct = out.results.finish_ps[i] - f.start_ps[i];
        assert!(fct >= out.results.ideal_fct_ps[i], "flow {i} beat its ideal FCT");
        assert!(out.results.sender_done_ps[i] >= out.results.finish_ps[i]);
    }
    assert_conserved(&out, &f);
}

#[test]
fn long_flows_share_a_bottleneck_fairly_and_never_exceed_line_rate() {
    // 4 senders at 10G into one 10G bottleneck, DCTCP, 20 MB each, starting together.
    let mut cfg = dumbbell(4, 10.0, 10.0);
    cfg.switch.ecn_threshold_bytes = 30_000;
    let size = 20_000_000u64;
    let f = flows(&[(0, 4, size, 0), (1, 4, size, 0), (2, 4, size, 0), (3, 4, size, 0)]);
    let out = run(&cfg, &f, None, 1).unwrap();
    let fcts: Vec<f64> = (0..4).map(|i| out.results.finish_ps[i] as f64).collect();
    // Fair sharing: every flow gets about a quarter, so they finish at about the same time.
    let n = fcts.len() as f64;
    let thr: Vec<f64> = fcts.iter().map(|t| size as f64 / t).collect();
    let jain = thr.iter().sum::<f64>().powi(2) / (n * thr.iter().map(|x| x * x).sum::<f64>());
    assert!(jain >= 0.95, "Jain index {jain}");
    // Line rate: 80 MB of payload (plus headers) cannot cross 10 Gb/s faster than its wire time.
    let wire_bytes = 4.0 * (size as f64 / 1460.0).ceil() * 1500.0;
    let min_time = wire_bytes * 8.0 / 10e9 * 1e12;
    let last = fcts.iter().cloned().fold(0.0, f64::max);
    assert!(last >= min_time, "finished faster than line rate: {last} < {min_time}");
    // ...and the bottleneck was well used (DCTCP keeps it busy): within 10% of the wire time
    assert!(last <= 1.10 * min_time, "poor utilisation: {last} vs {min_time}");
}

#[test]
fn strict_priority_starves_the_low_class_while_the_high_class_is_backlogged() {
    // two senders into one receiver over a 10G bottleneck; flow 0 at priority 0, flow 1 at priority 3
    let cfg = dumbbell(2, 10.0, 10.0);
    let mut f = flows(&[(0, 2, 5_000_000, 0), (1, 2, 5_000_000, 0)]);
    f.priority = vec![0, 3];
    let out = run(&cfg, &f, None, 1).unwrap();
    let hi = out.results.finish_ps[0];
    let lo = out.results.finish_ps[1];
    // the high flow runs as if alone: within 10% of its ideal
    let ideal = out.results.ideal_fct_ps[0];
    assert!((hi as f64) < 1.1 * ideal as f64, "high class slowed: {hi} vs ideal {ideal}");
    // the low flow gets (almost) nothing until the high one is done
    assert!(lo as f64 > 1.8 * ideal as f64, "low class was not starved: {lo}");
}

#[test]
fn ecmp_spreads_flows_over_every_spine_and_core() {
    use fctlab_sim::net::Network;
    for cfg in [Config::default(), Config { topology: TopologyConfig::FatTree(FatTree::default()), ..Config::default() }] {
        let net: Network = Network::build(&cfg, 99);
        let hosts = net.hosts;
        let mut used = vec![0u32; net.nodes.len()];
        for i in 0..4000u32 {
            let src = i % hosts;
            let dst = (src + hosts / 2 + i / hosts) % hosts;
            if src == dst {
                continue;
            }
            let h = fctlab_sim::net::flow_hash(i, false);
            for p in net.ecmp_path(src, dst, h) {
                used[net.ports[p as usize].peer as usize] += 1;
            }
        }
        for (n, node) in net.nodes.iter().enumerate() {
            if node.tier >= 2 {
                assert!(used[n] > 0, "switch {n} (tier {}) carried no flow", node.tier);
            }
        }
        // and roughly evenly across the top tier
        let top = net.nodes.iter().map(|n| n.tier).max().unwrap();
        let loads: Vec<u32> = (0..net.nodes.len()).filter(|&n| net.nodes[n].tier == top).map(|n| used[n]).collect();
        let mean = loads.iter().sum::<u32>() as f64 / loads.len() as f64;
        assert!(loads.iter().all(|&l| (l as f64) > 0.6 * mean && (l as f64) < 1.4 * mean), "{loads:?}");
    }
}

#[test]
fn a_dropped_packet_is_recovered_by_fast_retransmit() {
    // A 6-packet buffer in front of a 1 Gb/s bottleneck fed at 10 Gb/s: slow start overflows it, and the
    // segments that get through behind the holes produce SACKs and duplicate ACKs that repair the holes
    // without a timeout. (With a larger initial window some retransmissions are dropped again, which only a
    // timeout detects, as in ns-2's SACK TCP.)
    let mut cfg = dumbbell(1, 10.0, 10.0);
    cfg.topology = TopologyConfig::Dumbbell(Dumbbell { core_link_gbps: 1.0, ..Dumbbell::default() });
    cfg.switch.buffer_bytes = 9_000;
    cfg.scheme.name = SchemeName::Tcp;
    cfg.transport.init_cwnd_packets = 10;
    cfg.transport.rto_min_us = 100_000.0; // a timeout would be obvious
    let f = flows(&[(0, 4, 200 * 1460, 0)]);
    let out = run(&cfg, &f, None, 1).unwrap();
    assert!(out.results.bytes_dropped[0] > 0, "the scenario must drop");
    assert!(out.results.retransmits[0] > 0);
    assert_eq!(out.results.timeouts[0], 0, "fast retransmit, not a timeout");
    assert!(out.results.finish_ps[0] < 100 * PS_PER_MS);
    assert_conserved(&out, &f);
}

#[test]
fn a_lost_tail_is_recovered_by_the_timeout() {
    // Two packets; the buffer holds exactly one full packet while the first is being sent, so with a
    // 1 Gb/s bottleneck behind a 10 Gb/s host link the second packet is the only loss: no later segment can
    // produce duplicate ACKs, so only the RTO recovers it, and the FCT exceeds RTOmin.
    let mut cfg = dumbbell(1, 10.0, 1.0);
    cfg.switch.buffer_bytes = 1_500;
    cfg.transport.init_cwnd_packets = 3;
    cfg.transport.rto_min_us = 1_000.0;
    let f = flows(&[(0, 1, 3 * 1460, 0)]);
    let out = run(&cfg, &f, None, 1).unwrap();
    assert!(out.results.bytes_dropped[0] > 0);
    assert!(out.results.timeouts[0] >= 1, "timeouts {}", out.results.timeouts[0]);
    assert!(out.results.finish_ps[0] >= 1_000 * PS_PER_US);
    assert_conserved(&out, &f);
}

#[test]
fn same_seed_same_bits_different_seed_different_paths() {
    let mut cfg = Config::default();
    cfg.routing.mode = RoutingMode::Spray;
    cfg.transport.init_cwnd_packets = 70;
    let mut list = Vec::new();
    for i in 0..200u32 {
        list.push((i % 144, (i * 7 + 50) % 144, 50_000 + (i as u64 * 7919) % 900_000, i as u64 * PS_PER_US));
    }
    list.retain(|f| f.0 != f.1);
    let f = flows(&list);
    let a = run(&cfg, &f, None, 1).unwrap();
    let b = run(&cfg, &f, None, 1).unwrap();
    assert_eq!(a.results, b.results);
    assert_eq!(a.stats.events, b.stats.events);
    cfg.seed = 2;
    let c = run(&cfg, &f, None, 1).unwrap();
    assert_ne!(a.results.finish_ps, c.results.finish_ps);
}

#[test]
fn time_limit_reports_open_flows_unfinished() {
    let mut cfg = single_switch(2, 10.0, 1_000.0);
    cfg.run.time_limit_ms = 1.0;
    // 100 MB at 10G needs 80 ms
    let f = flows(&[(0, 1, 100_000_000, 0), (1, 0, 1_000, 0)]);
    let out = run(&cfg, &f, None, 1).unwrap();
    assert!(out.stats.hit_time_limit);
    assert_eq!(out.results.finish_ps[0], NEVER);
    assert_ne!(out.results.finish_ps[1], NEVER);
    assert_eq!(out.stats.flows_finished, 1);
    assert!(out.results.bytes_sent[0] > 0);
}

#[test]
fn bad_flows_are_rejected_with_the_flow_named() {
    let cfg = single_switch(4, 10.0, 0.0);
    let e = run(&cfg, &flows(&[(0, 1, 10, 0), (2, 9, 10, 0)]), None, 1).unwrap_err();
    assert!(e.to_string().contains("flow 1") && e.to_string().contains("dst 9"), "{e}");
    let e = run(&cfg, &flows(&[(3, 3, 10, 0)]), None, 1).unwrap_err();
    assert!(e.to_string().contains("src == dst"), "{e}");
    let e = run(&cfg, &flows(&[(0, 1, 0, 0)]), None, 1).unwrap_err();
    assert!(e.to_string().contains("size_bytes 0"), "{e}");
}

#[test]
fn shared_buffer_and_per_queue_ecn_run_and_conserve() {
    let mut cfg = Config::default();
    cfg.switch.buffer = BufferMode::Shared;
    cfg.switch.shared_buffer_bytes = 2_000_000;
    cfg.switch.ecn = EcnMode::Queue;
    let mut list = Vec::new();
    for i in 0..64u32 {
        list.push((i, 100 + i % 40, 300_000, 0));
    }
    let f = flows(&list);
    let out = run(&cfg, &f, None, 1).unwrap();
    assert_eq!(out.stats.flows_finished, 64);
    assert_conserved(&out, &f);
}
