//! QCLIMB: the two-flow example of the paper's appendix C, and its out-of-order handling (section 3.2).

use fctlab_sim::config::*;
use fctlab_sim::units::NEVER;
use fctlab_sim::{run, FlowSet, RunOutput};

/// One unit of the appendix's example: 100 full segments.
const UNIT: u64 = 100 * 1460;

fn two_senders() -> Config {
    let mut cfg = Config::for_scheme(SchemeName::Qclimb, Preset::Native);
    cfg.topology = TopologyConfig::SingleSwitch(SingleSwitch { hosts: 3, host_link_gbps: 10.0, host_link_delay_ns: 1_000.0 });
    cfg.switch.queues = 3;
    cfg.switch.buffer_bytes = 10_000_000; // no loss: the example is about scheduling
    cfg.switch.ecn = EcnMode::Queue;
    cfg.transport.init_cwnd_packets = 100;
    cfg.transport.rto_min_us = 100_000.0;
    // the appendix's queues: <= 2 units, (2, 5] units, > 5 units
    cfg.scheme.thresholds_bytes = vec![2 * UNIT, 5 * UNIT];
    cfg
}

fn flows(list: &[(u32, u32, u64)], lower: &[u64], upper: &[u64]) -> FlowSet {
    FlowSet {
        src: list.iter().map(|f| f.0).collect(),
        dst: list.iter().map(|f| f.1).collect(),
        size_bytes: list.iter().map(|f| f.2).collect(),
        start_ps: vec![0; list.len()],
        priority: Vec::new(),
        estimate_bytes: Vec::new(),
        lower_bytes: lower.to_vec(),
        upper_bytes: upper.to_vec(),
        ..FlowSet::default()
    }
}

fn mean_fct_units(out: &RunOutput) -> f64 {
    let unit_time = 100.0 * 1500.0 * 8.0 / 10e9 * 1e12; // ps to send one unit at 10 Gb/s
    let f = &out.results.finish_ps;
    assert!(f.iter().all(|&t| t != NEVER));
    f.iter().map(|&t| t as f64 / unit_time).sum::<f64>() / f.len() as f64
}

#[test]
fn appendix_c_two_flow_example() {
    // f1: 6 units, predicted small (estimate 2) but its lower bound is 6; f2: 3 units, lower bound 3, estimate 4.
    let list = [(0, 2, 6 * UNIT), (1, 2, 3 * UNIT)];
    let mut cfg = two_senders();
    cfg.scheme.slack_bytes = 0;
    let qclimb = run(&cfg, &flows(&list, &[6 * UNIT, 3 * UNIT], &[1000 * UNIT, 1000 * UNIT]), None, 1).unwrap();
    // Climbing by the point estimates instead (bound = estimate, and no demotion): f1 looks smaller and goes
    // first, f2 waits behind it.
    cfg.scheme.slack_bytes = 1000 * UNIT;
    let by_estimate = run(&cfg, &flows(&list, &[2 * UNIT, 4 * UNIT], &[1000 * UNIT, 1000 * UNIT]), None, 1).unwrap();
    let (q, e) = (mean_fct_units(&qclimb), mean_fct_units(&by_estimate));
    // the paper: 6 and 7.5 units (plus a few microseconds of propagation and slow start here)
    assert!((q - 6.0).abs() < 0.3, "QCLIMB mean FCT {q} units");
    assert!((e - 7.5).abs() < 0.3, "climbing by estimate {e} units");
    assert!(qclimb.results.finish_ps[1] < qclimb.results.finish_ps[0], "f2 first under QCLIMB");
    assert!(by_estimate.results.finish_ps[0] < by_estimate.results.finish_ps[1], "f1 first by estimate");
}

/// A flow that climbs queues reorders its own packets: later packets leave in higher queues ahead of earlier
/// ones still waiting behind another flow.
fn climbing_under_contention(ooo: OooHandling) -> RunOutput {
    climbing_under_contention_rwnd(ooo, 0)
}

fn climbing_under_contention_rwnd(ooo: OooHandling, rwnd_bytes: u64) -> RunOutput {
    let mut cfg = two_senders();
    cfg.scheme.ooo_handling = ooo;
    cfg.transport.rwnd_bytes = rwnd_bytes;
    cfg.transport.rto_min_us = 5_000.0;
    cfg.scheme.thresholds_bytes = vec![20_000, 60_000];
    // flow 0 climbs from queue 2 to queue 0 over its 200 KB lower bound; flow 1 (50 KB, queue 1) competes
    let list = [(0, 2, 300_000), (1, 2, 50_000)];
    run(&cfg, &flows(&list, &[200_000, 50_000], &[400_000, 60_000]), None, 1).unwrap()
}

#[test]
fn reordering_by_climbing_is_not_taken_for_loss() {
    let q = climbing_under_contention(OooHandling::Qclimb);
    let held: u32 = q.results.ooo_max_segments.iter().copied().max().unwrap();
    assert!(held > 0, "the scenario must reorder packets");
    assert_eq!(q.results.bytes_dropped.iter().sum::<u64>(), 0);
    assert_eq!(q.results.priority_losses.iter().sum::<u32>(), 0, "no loss is detected where there is none");
    assert_eq!(q.results.duplicate_data.iter().sum::<u32>(), 0, "no spurious retransmission");
    assert_eq!(q.results.retransmits.iter().sum::<u32>(), 0);
    // TCP's own out-of-order handling takes the reordering for loss and retransmits for nothing
    let t = climbing_under_contention(OooHandling::Tcp);
    assert!(t.results.fast_recoveries.iter().sum::<u32>() > 0);
    assert!(t.results.duplicate_data.iter().sum::<u32>() > 0, "default TCP retransmits spuriously");
}

#[test]
fn a_loss_within_one_priority_is_found_by_priority_gap_and_repaired() {
    // one flow in the lowest queue (past its upper bound) over a small buffer into a 1 Gb/s bottleneck:
    // losses inside one priority, found by the receiver and repaired without a timeout
    let mut cfg = Config::for_scheme(SchemeName::Qclimb, Preset::Native);
    cfg.topology = TopologyConfig::Dumbbell(Dumbbell { senders: 1, receivers: 1, core_link_gbps: 1.0, ..Dumbbell::default() });
    cfg.switch.queues = 3;
    cfg.switch.buffer_bytes = 30_000;
    cfg.switch.ecn = EcnMode::Off;
    cfg.scheme.thresholds_bytes = vec![20_000, 60_000];
    cfg.transport.init_cwnd_packets = 40;
    cfg.transport.rto_min_us = 100_000.0;
    let f = flows(&[(0, 1, 500_000)], &[1], &[1]);
    let out = run(&cfg, &f, None, 1).unwrap();
    assert!(out.results.bytes_dropped[0] > 0, "the scenario must drop");
    // most holes are found by the receiver and repaired at once; a hole right after a retransmitted segment
    // (retransmissions travel at the highest priority, so the gap looks like a priority boundary) or at a
    // real priority boundary is left to the timeout, as in the paper
    assert!(out.results.priority_losses[0] >= 10, "{}", out.results.priority_losses[0]);
    assert!(out.results.timeouts[0] <= 2, "timeouts {}", out.results.timeouts[0]);
    assert_eq!(
        out.results.bytes_sent[0],
        out.results.bytes_delivered[0] + out.results.bytes_dropped[0],
        "bytes are conserved"
    );
}

#[test]
fn qclimb_without_bounds_is_refused() {
    let cfg = two_senders();
    let mut f = flows(&[(0, 2, 1000)], &[], &[]);
    f.lower_bytes.clear();
    let e = run(&cfg, &f, None, 1).unwrap_err();
    assert!(e.to_string().contains("lower_bytes"), "{e}");
}

#[test]
fn receivers_out_of_order_bytes_are_accounted_per_host() {
    let q = climbing_under_contention(OooHandling::Qclimb);
    let s = &q.stats;
    assert_eq!(s.ooo_host_max_bytes.len(), 3);
    // only host 2 receives; every segment but a flow's last (700 B for 300,000 B) carries a full MSS, so the
    // peak it held is at least the most segments one flow held at once
    let most_segs = *q.results.ooo_max_segments.iter().max().unwrap() as u64;
    assert!(most_segs > 1);
    assert!(s.ooo_host_max_bytes[2] >= (most_segs - 1) * 1460 + 700, "{} for {most_segs} segments", s.ooo_host_max_bytes[2]);
    assert_eq!(&s.ooo_host_max_bytes[..2], &[0, 0], "senders hold nothing out of order");
    // both means lie between 0 and the peak (which of the two is larger depends on how much of the run the
    // buffer is empty: the run now ends with its last flow, not a retransmission timeout later)
    let (mean, at_insert, peak) = (s.ooo_host_mean_bytes[2], s.ooo_host_insert_mean_bytes[2], s.ooo_host_max_bytes[2] as f64);
    assert!(mean > 0.0 && mean < peak, "time mean {mean}, peak {peak}");
    assert!(at_insert > 0.0 && at_insert <= peak, "insert mean {at_insert}, time mean {mean}");
}

#[test]
fn flows_without_qclimb_are_scheduled_exactly_as_pias() {
    // a QCLIMB run whose flows all opt out must be a PIAS run, packet for packet
    let list = [(0, 2, 300_000), (1, 2, 50_000), (0, 2, 20_000), (1, 2, 900_000)];
    let mut qc = two_senders();
    qc.scheme.thresholds_bytes = vec![20_000, 60_000];
    qc.switch.buffer_bytes = 60_000; // some loss, so that recovery paths are compared too
    let mut pias = qc.clone();
    pias.scheme.name = SchemeName::Pias;
    pias.scheme.probe_after_timeouts = qc.scheme.probe_after_timeouts;
    let mut f = flows(&list, &[1; 4], &[1; 4]);
    let p = run(&pias, &f, None, 1).unwrap();
    f.qclimb = vec![false; 4];
    let q = run(&qc, &f, None, 1).unwrap();
    assert!(p.results.bytes_dropped.iter().sum::<u64>() > 0, "the scenario must drop");
    assert_eq!(p.results, q.results);
    // with QCLIMB on, the same flows (bounds 1 byte: the lowest queue past 1 byte) are scheduled differently
    f.qclimb = vec![true; 4];
    let q_on = run(&qc, &f, None, 1).unwrap();
    assert_ne!(q_on.results.finish_ps, p.results.finish_ps);
}

#[test]
fn a_receive_window_bounds_what_the_receiver_holds_out_of_order() {
    // Without a receive window the climbing flow's later, higher-priority packets are SACKed and leave the pipe,
    // so the sender runs ahead of its stuck lower-priority packets and the receiver holds a large part of the
    // climb. With a window of 20 segments the sender stops 20 segments past the first hole: at most 19
    // segments (the hole takes at least one) can be held.
    let free = climbing_under_contention_rwnd(OooHandling::Qclimb, 0);
    let rwnd = 20 * 1460;
    let held_free = free.stats.ooo_host_max_bytes[2];
    assert!(held_free > rwnd, "the scenario must hold more than the window without one ({held_free} B)");
    let w = climbing_under_contention_rwnd(OooHandling::Qclimb, rwnd);
    assert!(w.stats.ooo_host_max_bytes[2] > 0, "it still reorders");
    assert!(w.stats.ooo_host_max_bytes[2] <= rwnd - 1460, "{} B held", w.stats.ooo_host_max_bytes[2]);
    assert!(w.results.ooo_max_segments.iter().all(|&s| s <= 19));
    assert!(w.results.finish_ps.iter().all(|&t| t != NEVER));
    assert_eq!(w.results.retransmits.iter().sum::<u32>(), 0, "the window adds no loss");
}

#[test]
fn with_losses_a_receive_window_bounds_the_out_of_order_data() {
    // the lossy single-priority scenario above, with a window of 15 segments: holes are repaired as before and
    // the receiver never holds more than the window allows past the hole
    let mut cfg = Config::for_scheme(SchemeName::Qclimb, Preset::Native);
    cfg.topology = TopologyConfig::Dumbbell(Dumbbell { senders: 1, receivers: 1, core_link_gbps: 1.0, ..Dumbbell::default() });
    cfg.switch.queues = 3;
    cfg.switch.buffer_bytes = 15_000;
    cfg.switch.ecn = EcnMode::Off;
    cfg.scheme.thresholds_bytes = vec![20_000, 60_000];
    cfg.transport.init_cwnd_packets = 40;
    cfg.transport.rto_min_us = 100_000.0;
    let f = flows(&[(0, 1, 500_000)], &[1], &[1]);
    let free = run(&cfg, &f, None, 1).unwrap();
    cfg.transport.rwnd_bytes = 15 * 1460;
    let out = run(&cfg, &f, None, 1).unwrap();
    assert!(out.results.bytes_dropped[0] > 0, "the scenario must drop");
    assert!(free.results.ooo_max_segments[0] > 14, "without a window it holds more ({})", free.results.ooo_max_segments[0]);
    assert!(out.results.ooo_max_segments[0] <= 14, "{} segments held", out.results.ooo_max_segments[0]);
    assert!(out.stats.ooo_host_max_bytes[1] <= 14 * 1460);
    assert_ne!(out.results.finish_ps[0], NEVER);
    assert_eq!(out.results.bytes_sent[0], out.results.bytes_delivered[0] + out.results.bytes_dropped[0]);
}
