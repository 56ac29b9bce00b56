//! Timer and loss-detection options: a fixed RTO without back-off (`transport.rto_fixed`) and no loss
//! detection from duplicate ACKs (`transport.dupack_threshold = 0`), as pFabric's and PIAS's ns-2 TCP ran.

use fctlab_sim::config::*;
use fctlab_sim::units::PS_PER_MS;
use fctlab_sim::{run, Config};
mod common;
use common::{dumbbell, flows};

#[test]
fn a_fixed_rto_is_never_backed_off() {
    // One segment on the 10 Gb/s dumbbell: its ACK is back at 9.696 us. An RTO of 3 us fires at 3 us and,
    // backed off to 6 us, at 9 us; fixed, it fires at 3, 6 and 9 us.
    let mut cfg = dumbbell(1, 10.0, 10.0);
    cfg.transport.rto_min_us = 3.0;
    let f = flows(&[(0, 1, 1460, 0)]);
    let out = run(&cfg, &f, None).unwrap();
    assert_eq!(out.results.timeouts[0], 2);
    cfg.transport.rto_fixed = true;
    let out = run(&cfg, &f, None).unwrap();
    assert_eq!(out.results.timeouts[0], 3);
    assert_eq!(out.results.finish_ps[0], 6_600_000, "the original copy completes the flow");
}

#[test]
fn a_fixed_rto_ignores_the_rtt_and_the_ceiling() {
    // 40 segments with a 5 us floor on a ~10 us round trip: RFC 6298 raises the RTO above the RTT after the
    // first samples, a fixed RTO keeps firing
    let mut cfg = dumbbell(1, 10.0, 10.0);
    cfg.transport.rto_min_us = 5.0;
    cfg.transport.init_cwnd_packets = 2;
    let f = flows(&[(0, 1, 40 * 1460, 0)]);
    let adaptive = run(&cfg, &f, None).unwrap().results.timeouts[0];
    cfg.transport.rto_fixed = true;
    cfg.transport.rto_max_us = 1.0; // ignored (and not an error) with a fixed RTO
    assert!(cfg.validate().is_ok());
    let fixed = run(&cfg, &f, None).unwrap().results.timeouts[0];
    assert!(fixed > adaptive + 5, "fixed {fixed} adaptive {adaptive}");
}

fn bottleneck(dupack_threshold: u32) -> Config {
    // the fast-retransmit scenario of `scenarios.rs`: slow start overflows a 6-packet buffer in front of a
    // 1 Gb/s link; SACKs and duplicate ACKs repair the holes unless loss detection is the timer's alone
    let mut cfg = dumbbell(1, 10.0, 10.0);
    cfg.topology = TopologyConfig::Dumbbell(Dumbbell { core_link_gbps: 1.0, ..Dumbbell::default() });
    cfg.switch.buffer_bytes = 9_000;
    cfg.scheme.name = SchemeName::Tcp;
    cfg.transport.init_cwnd_packets = 10;
    cfg.transport.rto_min_us = 10_000.0;
    cfg.transport.dupack_threshold = dupack_threshold;
    cfg
}

#[test]
fn without_duplicate_ack_detection_only_the_timer_repairs_losses() {
    let f = flows(&[(0, 4, 200 * 1460, 0)]);
    let out = run(&bottleneck(3), &f, None).unwrap();
    assert!(out.results.bytes_dropped[0] > 0 && out.results.fast_recoveries[0] > 0);
    assert_eq!(out.results.timeouts[0], 0);
    assert!(bottleneck(0).validate().is_ok());
    let out = run(&bottleneck(0), &f, None).unwrap();
    assert!(out.results.bytes_dropped[0] > 0);
    assert_eq!(out.results.fast_recoveries[0], 0);
    assert!(out.results.timeouts[0] >= 1);
    assert!(out.results.finish_ps[0] >= 10 * PS_PER_MS, "waited for the timer");
    let r = &out.results;
    assert_eq!(r.bytes_sent[0], r.bytes_delivered[0] + r.bytes_dropped[0]);
}
