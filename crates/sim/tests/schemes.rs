//! The priority schemes on small scenarios whose outcome is known from how the schemes are defined:
//! pFabric approximates SRPT (a short flow preempts a long one), LAS starves an old long flow behind new
//! ones, PIAS demotes by bytes sent, probe mode rescues trapped packets, L2DCT favours flows that sent less.

use fctlab_sim::config::*;
use fctlab_sim::units::{NEVER, PS_PER_MS, PS_PER_US};
use fctlab_sim::{run, FlowSet, RunOutput};
mod common;
use common::flows;

/// `senders` hosts into one receiver (the last host) over a 10G bottleneck, with a scheme's defaults.
fn dumbbell(scheme: SchemeName, senders: u32) -> Config {
    let mut cfg = Config::for_scheme(scheme, Preset::Native);
    cfg.topology = TopologyConfig::Dumbbell(Dumbbell {
        senders,
        receivers: 1,
        host_link_gbps: 10.0,
        core_link_gbps: 10.0,
        host_link_delay_ns: 1_000.0,
        core_link_delay_ns: 1_000.0,
    });
    cfg
}

fn conserved(out: &RunOutput) {
    let r = &out.results;
    for i in 0..r.finish_ps.len() {
        if r.sender_done_ps[i] != NEVER {
            assert_eq!(r.bytes_sent[i], r.bytes_delivered[i] + r.bytes_dropped[i], "flow {i}");
        }
    }
}

fn fct(out: &RunOutput, f: &FlowSet, i: usize) -> u64 {
    assert_ne!(out.results.finish_ps[i], NEVER, "flow {i} unfinished");
    out.results.finish_ps[i] - f.start_ps[i]
}

#[test]
fn pfabric_isolated_flow_with_a_bdp_window_meets_its_ideal() {
    let mut cfg = Config::for_scheme(SchemeName::Pfabric, Preset::PfabricNs2);
    cfg.transport.init_cwnd_packets = 200;
    cfg.transport.max_cwnd_packets = 200;
    cfg.transport.rto_min_us = 1_000.0; // the native 45 us is below this fabric's 85 us RTT
    cfg.host.nic_buffer_bytes = Some(0); // a 200-packet burst would overflow the preset's 24-packet NIC queue
    let f = flows(&[(0, 143, 2_000_000, 0)]);
    let out = run(&cfg, &f, None, 1).unwrap();
    assert_eq!(fct(&out, &f, 0), out.results.ideal_fct_ps[0]);
}

#[test]
fn pfabric_lets_a_short_flow_preempt_a_long_one() {
    // A 10 MB flow is under way when a 100 KB flow to the same receiver arrives: by remaining size the short
    // one is more urgent and finishes close to its ideal; under DCTCP it shares the link.
    let list = [(0, 2, 10_000_000, 0), (1, 2, 100_000, 2 * PS_PER_MS)];
    let f = flows(&list);
    let pf = run(&dumbbell(SchemeName::Pfabric, 2), &f, None, 1).unwrap();
    let dc = run(&dumbbell(SchemeName::Dctcp, 2), &f, None, 1).unwrap();
    let ideal = pf.results.ideal_fct_ps[1] as f64;
    let short_pf = fct(&pf, &f, 1) as f64;
    let short_dc = fct(&dc, &f, 1) as f64;
    assert!(short_pf < 2.0 * ideal, "pFabric short flow {short_pf} vs ideal {ideal}");
    assert!(short_pf < short_dc, "pFabric {short_pf} should beat DCTCP {short_dc}");
    // and the long flow still completes, with every byte accounted for
    fct(&pf, &f, 0);
    conserved(&pf);
}

#[test]
fn pfabric_ranked_by_estimate_follows_the_estimate() {
    // Two equal flows; the estimate claims flow 1 is tiny: it is served first.
    let mut f = flows(&[(0, 2, 3_000_000, 0), (1, 2, 3_000_000, 0)]);
    f.estimate_bytes = vec![3_000_000, 1_000];
    let mut cfg = dumbbell(SchemeName::Pfabric, 2);
    cfg.scheme.rank = RankBy::Estimate;
    let out = run(&cfg, &f, None, 1).unwrap();
    assert!(fct(&out, &f, 1) < fct(&out, &f, 0));
    f.estimate_bytes = vec![1_000, 3_000_000];
    let out = run(&cfg, &f, None, 1).unwrap();
    assert!(fct(&out, &f, 0) < fct(&out, &f, 1));
}

#[test]
fn las_starves_an_old_long_flow_behind_new_ones() {
    // Flow 0 (4 MB) starts alone; from 1 ms, three 2 MB flows arrive one after another, each while the
    // previous one still runs. LAS serves the flow that has sent least, so flow 0 waits for all of them.
    let list = [(0, 3, 4_000_000, 0), (1, 3, 2_000_000, PS_PER_MS), (2, 3, 2_000_000, 2 * PS_PER_MS), (1, 3, 2_000_000, 3 * PS_PER_MS)];
    let f = flows(&list);
    let out = run(&dumbbell(SchemeName::Las, 3), &f, None, 1).unwrap();
    let finish: Vec<u64> = out.results.finish_ps.clone();
    assert!(finish.iter().all(|&t| t != NEVER));
    for i in 1..4 {
        assert!(finish[0] > finish[i], "the old flow finished before new flow {i}: {finish:?}");
    }
    // all 10 MB cross one 10G link: the old flow ends no earlier than the wire time of everything
    let wire_s = 10_000_000.0 / 1460.0 * 1500.0 * 8.0 / 10e9;
    assert!(finish[0] as f64 >= wire_s * 1e12);
    conserved(&out);
}

#[test]
fn pias_keeps_short_flows_ahead_of_demoted_long_ones() {
    // A long flow has been demoted to the last queue when a short one starts: the short one runs in queue 0
    // at nearly its ideal; with DCTCP alone (one priority) it waits behind the long flow's queue.
    let mut cfg = dumbbell(SchemeName::Pias, 2);
    cfg.scheme.thresholds_bytes = vec![50_000, 200_000];
    cfg.switch.queues = 3;
    let f = flows(&[(0, 2, 20_000_000, 0), (1, 2, 30_000, 3 * PS_PER_MS)]);
    let out = run(&cfg, &f, None, 1).unwrap();
    let ideal = out.results.ideal_fct_ps[1] as f64;
    assert!((fct(&out, &f, 1) as f64) < 1.5 * ideal, "{} vs {ideal}", fct(&out, &f, 1));
    conserved(&out);
}

#[test]
fn probe_mode_rescues_packets_trapped_in_a_low_queue() {
    // Fixed priorities: flow 0 (priority 3) starts first; flow 1 (priority 0) then hogs the bottleneck for
    // ~16 ms, far longer than two RTOs of 1 ms. Flow 0's packets are trapped, it times out twice, enters probe
    // mode, and completes once the link frees without a storm of retransmissions.
    let mut cfg = dumbbell(SchemeName::Dctcp, 2);
    cfg.scheme.probe_after_timeouts = 2;
    cfg.transport.rto_min_us = 1_000.0;
    cfg.transport.init_cwnd_packets = 20;
    let mut f = flows(&[(0, 2, 1_000_000, 0), (1, 2, 20_000_000, 50 * PS_PER_US)]);
    f.priority = vec![3, 0];
    let out = run(&cfg, &f, None, 1).unwrap();
    assert!(out.results.timeouts[0] >= 2, "timeouts {}", out.results.timeouts[0]);
    assert!(out.results.probes[0] >= 1, "never entered probe mode");
    assert!(out.results.finish_ps[0] > out.results.finish_ps[1] - 2 * PS_PER_MS);
    // without probing every timeout would retransmit; with it retransmissions stay bounded by the data
    assert!(out.results.retransmits[0] < 2 * (1_000_000 / 1460 + 1) as u32);
    conserved(&out);
}

#[test]
fn l2dct_gives_a_late_short_flow_more_than_dctcp_does() {
    let list = [(0, 2, 20_000_000, 0), (1, 2, 1_000_000, 3 * PS_PER_MS)];
    let f = flows(&list);
    let mut l2 = dumbbell(SchemeName::L2dct, 2);
    let mut dc = dumbbell(SchemeName::Dctcp, 2);
    for c in [&mut l2, &mut dc] {
        c.switch.ecn_threshold_bytes = 30_000;
        c.transport.dctcp_alpha_init = 1.0;
    }
    let a = run(&l2, &f, None, 1).unwrap();
    let b = run(&dc, &f, None, 1).unwrap();
    assert!(fct(&a, &f, 1) < fct(&b, &f, 1), "L2DCT {} vs DCTCP {}", fct(&a, &f, 1), fct(&b, &f, 1));
    conserved(&a);
}

#[test]
fn every_scheme_runs_a_mixed_workload_and_conserves_bytes() {
    let mut list = Vec::new();
    let mut x: u64 = 7;
    for i in 0..200u64 {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let src = (x >> 33) as u32 % 144;
        let dst = (src + 1 + (x >> 13) as u32 % 143) % 144;
        list.push((src, dst, 1 + (x >> 20) % 2_000_000, i * 3 * PS_PER_US));
    }
    let f = flows(&list);
    for scheme in [SchemeName::Tcp, SchemeName::Dctcp, SchemeName::Pfabric, SchemeName::Las, SchemeName::Pias, SchemeName::L2dct] {
        let mut cfg = Config::for_scheme(scheme, Preset::Native);
        cfg.routing.mode = RoutingMode::Spray;
        if scheme == SchemeName::Pias {
            cfg.scheme.thresholds_bytes = vec![10_000, 50_000, 100_000, 500_000, 1_000_000, 2_000_000, 5_000_000];
        }
        let out = run(&cfg, &f, None, 1).unwrap();
        assert_eq!(out.stats.flows_finished, 200, "{scheme:?}");
        for i in 0..f.len() {
            assert!(out.results.finish_ps[i] - f.start_ps[i] >= out.results.ideal_fct_ps[i], "{scheme:?} flow {i}");
        }
        conserved(&out);
    }
}
