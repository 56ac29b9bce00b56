//! The FIFO fast path (ports whose traffic all maps to one queue put packets on the wire at enqueue, with no
//! "transmitter free" events) must give bit-identical results to the event-driven path, and both must follow
//! the tie rule: an arrival at the instant the transmitter becomes free is admitted after the next waiting
//! packet has started. Every scenario also runs on two threads (`engine::parallel`), on both paths, with
//! bit-identical results.

use fctlab_sim::config::*;
use fctlab_sim::run_event_driven;
use fctlab_sim::units::PS_PER_US;
use fctlab_sim::{run, FlowSet, RunOutput, RunStats};
mod common;
use common::{comparable, dumbbell, flows, random_flows};

fn single_switch(hosts: u32, gbps: f64, delay_ns: f64) -> Config {
    Config {
        topology: TopologyConfig::SingleSwitch(SingleSwitch { hosts, host_link_gbps: gbps, host_link_delay_ns: delay_ns }),
        ..Config::default()
    }
}

/// The stats that describe the simulated packets (everything but the event count, the event queue's size and
/// the wall clock).
fn packet_level(s: &RunStats) -> RunStats {
    RunStats { events: 0, ..comparable(s) }
}

/// Run both ways, each on one and on two threads; assert identical results; return (fast path,
/// event-driven) of the one-thread runs.
fn both(name: &str, cfg: &Config, f: &FlowSet) -> (RunOutput, RunOutput) {
    let fast = run(cfg, f, None, 1).unwrap();
    let slow = run_event_driven(cfg, f, 1).unwrap();
    assert_eq!(fast.results, slow.results, "{name}: per-flow results differ");
    assert_eq!(packet_level(&fast.stats), packet_level(&slow.stats), "{name}: packet-level stats differ");
    assert!(fast.stats.events <= slow.stats.events, "{name}");
    for (one, two, path) in
        [(&fast, run(cfg, f, None, 2).unwrap(), "fast"), (&slow, run_event_driven(cfg, f, 2).unwrap(), "event-driven")]
    {
        assert_eq!(one.results, two.results, "{name}, {path} path: per-flow results differ on two threads");
        assert_eq!(packet_level(&one.stats), packet_level(&two.stats), "{name}, {path} path: stats differ on two threads");
        assert_eq!(one.stats.events, two.stats.events, "{name}, {path} path: event counts differ on two threads");
    }
    (fast, slow)
}

/// Assert the fast path was taken (it saves the transmitter events) and the scenario exercised what it is for.
fn fast_path_taken(name: &str, fast: &RunOutput, slow: &RunOutput) {
    assert!(
        fast.stats.events < slow.stats.events,
        "{name}: no event saved ({} vs {})",
        fast.stats.events,
        slow.stats.events
    );
}

#[test]
fn leaf_spine_spray_dctcp_with_drops_and_marks() {
    let mut cfg = Config::default();
    cfg.routing.mode = RoutingMode::Spray;
    cfg.transport.init_cwnd_packets = 70;
    cfg.switch.buffer_bytes = 60_000;
    cfg.switch.ecn_threshold_bytes = 20_000;
    let f = random_flows(400, 144, 2_000_000, 2 * PS_PER_US, 12345);
    let (fast, slow) = both("leaf-spine spray", &cfg, &f);
    fast_path_taken("leaf-spine spray", &fast, &slow);
    assert!(fast.stats.drops > 0 && fast.stats.ecn_marks > 0, "{:?}", fast.stats);
    assert_eq!(fast.stats.flows_finished, 400);
}

#[test]
fn leaf_spine_ecmp_tcp_and_l2dct() {
    for scheme in [SchemeName::Tcp, SchemeName::L2dct, SchemeName::Dctcp] {
        let mut cfg = Config::for_scheme(scheme, Preset::Native);
        cfg.transport.init_cwnd_packets = 40;
        cfg.switch.buffer_bytes = 45_000;
        cfg.transport.rto_min_us = 500.0;
        let f = random_flows(300, 144, 1_000_000, PS_PER_US, 777);
        let (fast, slow) = both(scheme.as_str(), &cfg, &f);
        fast_path_taken(scheme.as_str(), &fast, &slow);
        assert!(fast.stats.drops > 0, "{}: {:?}", scheme.as_str(), fast.stats);
    }
}

#[test]
fn fat_tree_random_flows() {
    let mut cfg = Config { topology: TopologyConfig::FatTree(FatTree::default()), ..Config::default() };
    cfg.transport.init_cwnd_packets = 20;
    let f = random_flows(300, 128, 500_000, PS_PER_US, 4242);
    let (fast, slow) = both("fat-tree", &cfg, &f);
    fast_path_taken("fat-tree", &fast, &slow);
}

#[test]
fn incast_bursts_with_timeouts() {
    // 32 senders answer one receiver at the same instant, three waves: synchronized bursts, drops at the
    // receiver's port, retransmissions and timeouts; per-queue ECN and marking NICs with a finite buffer.
    let mut cfg = single_switch(33, 10.0, 500.0);
    cfg.switch.buffer_bytes = 30_000;
    cfg.switch.ecn = EcnMode::Queue;
    cfg.switch.ecn_threshold_bytes = 15_000;
    cfg.host.nic_ecn = true;
    cfg.host.nic_buffer_bytes = Some(60_000);
    cfg.transport.init_cwnd_packets = 30;
    cfg.transport.rto_min_us = 200.0;
    let mut list = Vec::new();
    for wave in 0..3u64 {
        for s in 0..32u32 {
            list.push((s, 32, 64_000, wave * 500 * PS_PER_US));
        }
    }
    let f = flows(&list);
    let (fast, slow) = both("incast", &cfg, &f);
    fast_path_taken("incast", &fast, &slow);
    assert!(fast.stats.drops > 0 && fast.stats.ecn_marks > 0);
    assert!(fast.results.timeouts.iter().sum::<u32>() > 0 || fast.results.retransmits.iter().sum::<u32>() > 0);
}

#[test]
fn dumbbell_bottleneck_drop_tail() {
    for (core, buffer) in [(1.0, 9_000u64), (10.0, 30_000)] {
        let mut cfg = dumbbell(4, 10.0, core);
        cfg.scheme.name = SchemeName::Tcp;
        cfg.switch.buffer_bytes = buffer;
        cfg.transport.rto_min_us = 1_000.0;
        let f = flows(&[(0, 4, 2_000_000, 0), (1, 4, 300_000, 3 * PS_PER_US), (2, 4, 50_000, 100 * PS_PER_US), (3, 4, 1_000_000, 7)]);
        let (fast, slow) = both("dumbbell", &cfg, &f);
        fast_path_taken("dumbbell", &fast, &slow);
        assert!(fast.stats.drops > 0);
    }
}

#[test]
fn priorities_that_share_one_queue_take_the_fast_path_others_do_not() {
    let mut cfg = dumbbell(3, 10.0, 10.0);
    cfg.switch.queues = 4;
    cfg.switch.buffer_bytes = 40_000;
    let mut f = flows(&[(0, 3, 1_000_000, 0), (1, 3, 1_000_000, 0), (2, 3, 200_000, 50 * PS_PER_US)]);
    // priorities 3, 5, 9 and ACKs at 3 all map to queue 3 of 4
    f.priority = vec![3, 5, 9];
    cfg.transport.ack_priority = 3;
    let (fast, slow) = both("one queue", &cfg, &f);
    fast_path_taken("one queue", &fast, &slow);
    // ACKs in queue 0: two queues in use, so every port stays event-driven, with lazy departures (no
    // "transmitter free" event at all: a packet-hop is one event there too)
    cfg.transport.ack_priority = 0;
    let (fast, slow) = both("two queues", &cfg, &f);
    fast_path_taken("two queues", &fast, &slow);
}

/// The schemes whose ports cannot be FIFOs (several queues in use, or rank queues) give the event-driven
/// results with lazy departures (`net::port`), which save every "transmitter free" event.
#[test]
fn schemes_without_the_fast_path_are_unchanged_by_it() {
    for scheme in [SchemeName::Pias, SchemeName::Pfabric, SchemeName::Las] {
        let mut cfg = Config::for_scheme(scheme, Preset::Native);
        if scheme == SchemeName::Pias {
            cfg.scheme.thresholds_bytes = vec![10_000, 100_000, 1_000_000];
        }
        let f = random_flows(150, 144, 500_000, PS_PER_US, 99);
        let (fast, slow) = both(scheme.as_str(), &cfg, &f);
        fast_path_taken(scheme.as_str(), &fast, &slow);
    }
    // a shared buffer keeps switch ports event-driven; host NICs still take the fast path
    let mut cfg = Config::default();
    cfg.switch.buffer = BufferMode::Shared;
    cfg.switch.shared_buffer_bytes = 500_000;
    let f = random_flows(200, 144, 500_000, PS_PER_US, 5);
    both("shared buffer", &cfg, &f);
}

/// Three one-packet flows into host 3 of a single switch whose ports buffer one packet. A and B reach the
/// switch together: A starts on the egress link, B waits. C reaches the switch exactly when A's
/// serialization ends (its arrival event was queued before the egress's "transmitter free" event). Under
/// the tie rule B starts first and C finds the queue empty: nothing is dropped, on either path.
#[test]
fn tie_rule_arrival_at_the_instant_the_transmitter_frees() {
    let mut cfg = single_switch(4, 10.0, 1_000.0);
    cfg.switch.buffer_bytes = 1_500;
    cfg.transport.rto_min_us = 1_000.0;
    // 1500 B on the wire: 1.2 us at 10G; A and B arrive at 2.2 us, A leaves the egress at 3.4 us, C
    // (sent at 1.2 us) arrives at 1.2 + 1.2 + 1.0 = 3.4 us
    let f = flows(&[(0, 3, 1_460, 0), (1, 3, 1_460, 0), (2, 3, 1_460, 1_200_000)]);
    let (fast, slow) = both("tie", &cfg, &f);
    for out in [&fast, &slow] {
        assert_eq!(out.stats.drops, 0, "the tied arrival saw the departing packet");
        assert_eq!(out.stats.max_port_occupancy_bytes, 1_500);
        // C waits one serialization behind B: 3.4 + 1.2 (B) + 1.2 (C) + 1.0 us
        assert_eq!(out.results.finish_ps[2] - 1_200_000, 6_800_000 - 1_200_000);
    }
}

/// The same tie under pFabric's rank queue (one packet of buffer; B and C have equal ranks, so without
/// the tie rule C would find the buffer full and be rejected).
#[test]
fn tie_rule_in_the_rank_queue() {
    let mut cfg = Config::for_scheme(SchemeName::Pfabric, Preset::Native);
    cfg.topology = TopologyConfig::SingleSwitch(SingleSwitch { hosts: 4, host_link_gbps: 10.0, host_link_delay_ns: 1_000.0 });
    cfg.switch.buffer_bytes = 1_500;
    cfg.transport.rto_min_us = 1_000.0;
    let f = flows(&[(0, 3, 1_460, 0), (1, 3, 1_460, 0), (2, 3, 1_460, 1_200_000)]);
    let out = run(&cfg, &f, None, 1).unwrap();
    assert_eq!(out.stats.drops, 0, "the tied arrival saw the departing packet");
    assert_eq!(out.results.finish_ps[2], 6_800_000);
}

/// Whole runs, FIFO fast path against event-driven ports, at link rates with and without a whole number of
/// picoseconds per byte, unbounded and small buffers, ECN per port, per queue and off (thresholds 0 and 1
/// included), DCTCP and TCP: the quiet admissions' bound must never change a result.
#[test]
fn fast_path_matches_at_odd_rates_buffers_and_thresholds() {
    let mut n = 0;
    for (host, core) in [(3.0, 40.0), (1.0, 3.0), (40.0, 1.0), (10.0, 7.0), (25.0, 100.0)] {
        let buffers = [
            (0u64, EcnMode::Off, 0u64),
            (0, EcnMode::Queue, 9_000),
            (20_000, EcnMode::Port, 1),
            (12_000, EcnMode::Off, 0),
            (0, EcnMode::Port, 0),
        ];
        for (buf, ecn, thr) in buffers {
            for scheme in [SchemeName::Dctcp, SchemeName::Tcp] {
                let mut cfg = dumbbell(5, host, core);
                cfg.scheme.name = scheme;
                cfg.switch.buffer_bytes = buf;
                cfg.switch.ecn = ecn;
                cfg.switch.ecn_threshold_bytes = thr;
                cfg.host.nic_buffer_bytes = Some(if buf == 0 { 0 } else { 50_000 });
                cfg.host.nic_ecn = buf % 2 == 0;
                cfg.transport.rto_min_us = 300.0;
                cfg.transport.init_cwnd_packets = 30;
                let f = random_flows(80, 6, 400_000, 3 * PS_PER_US, 99 + n);
                let name = format!("{host}/{core} buf {buf} {ecn:?} {thr} {}", scheme.as_str());
                let (fast, slow) = both(&name, &cfg, &f);
                fast_path_taken(&name, &fast, &slow);
                n += 1;
            }
        }
    }
}

/// Lazy departures (`net::port`): the strict-priority and rank-queue ports of every family that has them give
/// the event-driven results bit for bit, on one and two threads, without a single "transmitter free" event
/// (Homa's host NICs, which its hosts read, keep theirs, and so do the rate family's NICs when they run
/// agents; the rate family's switch agents read the occupancy as packets arrive), with drops, and with a run
/// cut short by the time limit while packets wait.
#[test]
fn lazy_departures_match_the_event_driven_ports_in_every_family() {
    let cases = [
        ("pias", r#""thresholds_bytes": [10000, 100000, 1000000, 2000000, 3000000, 4000000, 5000000]"#, ""),
        ("pfabric", "", ""),
        ("las", "", ""),
        ("qclimb", r#""qclimb_info": "precise", "thresholds_bytes": [20000, 100000, 500000, 1000000, 2000000, 5000000, 10000000]"#, ""),
        ("rax", "", ""),
        ("qjump", "", ""),
        ("qjump", r#""qjump_queue": "ranked""#, ""),
        ("hyline", "", r#", "routing": {"mode": "ecmp"}"#),
        ("homa", "", ""),
        // (the rate family's agents read the occupancy of the switch ports as packets arrive)
        ("rcp", "", r#", "routing": {"mode": "ecmp"}"#),
        ("d3", "", r#", "routing": {"mode": "ecmp"}"#),
        ("pdq", "", r#", "routing": {"mode": "ecmp"}"#),
        // (with agents at the NICs too: the NICs keep their events, the switch ports are lazy)
        ("pdq", r#""rate_nic_agents": true"#, r#", "routing": {"mode": "ecmp"}"#),
        ("rcp", r#""rate_nic_agents": true"#, r#", "routing": {"mode": "ecmp"}"#),
    ];
    for (name, scheme_extra, extra) in cases {
        let comma = if scheme_extra.is_empty() { "" } else { ", " };
        let text = format!(
            r#"{{"scheme": {{"name": "{name}"{comma}{scheme_extra}}}, "switch": {{"queues": 8, "buffer_bytes": 60000}}{extra}}}"#
        );
        let mut cfg = Config::from_json(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
        let f = random_flows(400, 144, 2_000_000, PS_PER_US / 2, 17);
        let label = format!("{name} {scheme_extra}");
        let (fast, slow) = both(&label, &cfg, &f);
        fast_path_taken(&label, &fast, &slow);
        assert!(fast.stats.drops > 0, "{label}: no drops");
        // cut short while queues are full
        cfg.run.time_limit_ms = 0.3;
        let (fast, slow) = both(&format!("{label}, time limit"), &cfg, &f);
        assert!(fast.stats.hit_time_limit && slow.stats.hit_time_limit, "{label}");
    }
}
