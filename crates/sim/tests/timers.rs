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
    let out = run(&cfg, &f, None, 1).unwrap();
    assert_eq!(out.results.timeouts[0], 2);
    cfg.transport.rto_fixed = true;
    let out = run(&cfg, &f, None, 1).unwrap();
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
    let adaptive = run(&cfg, &f, None, 1).unwrap().results.timeouts[0];
    cfg.transport.rto_fixed = true;
    cfg.transport.rto_max_us = 1.0; // ignored (and not an error) with a fixed RTO
    assert!(cfg.validate().is_ok());
    let fixed = run(&cfg, &f, None, 1).unwrap().results.timeouts[0];
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
    let out = run(&bottleneck(3), &f, None, 1).unwrap();
    assert!(out.results.bytes_dropped[0] > 0 && out.results.fast_recoveries[0] > 0);
    assert_eq!(out.results.timeouts[0], 0);
    assert!(bottleneck(0).validate().is_ok());
    let out = run(&bottleneck(0), &f, None, 1).unwrap();
    assert!(out.results.bytes_dropped[0] > 0);
    assert_eq!(out.results.fast_recoveries[0], 0);
    assert!(out.results.timeouts[0] >= 1);
    assert!(out.results.finish_ps[0] >= 10 * PS_PER_MS, "waited for the timer");
    let r = &out.results;
    assert_eq!(r.bytes_sent[0], r.bytes_delivered[0] + r.bytes_dropped[0]);
}

#[test]
fn pfabric_probe_mode_as_the_paper_describes_it() {
    // pFabric §4.2 with the native preset: after 5 consecutive timeouts (fixed 45 us apart, no back-off) the
    // flow sends one minimum-size probe per timeout instead of retransmissions, carrying its remaining size;
    // when an ACK returns that acknowledges nothing new, it slow-starts again from one segment (it does not
    // resend its window).
    use fctlab_sim::net::packet::flags;
    use fctlab_sim::transport::tcp::{Conn, TcpParams};
    let cfg = Config::for_scheme(SchemeName::Pfabric, Preset::PfabricNs2);
    let p = TcpParams::from_config(&cfg);
    let size = 100 * 1460;
    let (mut tx, mut rx) = (Conn::new(&p, 0, 0, 1, size, size, 0), Conn::new(&p, 0, 0, 1, size, size, 0));
    let mut out = Vec::new();
    tx.start(&p, 0, &mut out);
    assert_eq!(out.len(), 12, "line-rate start: the initial window");
    let rto = 45 * fctlab_sim::units::PS_PER_US;
    let mut now = 0;
    for k in 1..=6u64 {
        out.clear();
        now = tx.rto_deadline;
        assert_eq!(now, k * rto, "a fixed timeout, never backed off");
        tx.on_timeout(&p, now, &mut out);
        assert_eq!(out.len(), 1);
        let probe = k >= 5;
        assert_eq!(out[0].flags & flags::PROBE != 0, probe, "timeout {k}");
        if probe {
            assert_eq!(out[0].wire, 41, "header and one byte");
            assert_eq!(out[0].rank() as u64, size, "the flow's remaining size");
        }
    }
    assert!(tx.probing && tx.counters.probes == 2);
    // the probe reaches the receiver (which holds nothing): its ACK acknowledges nothing new
    let mut acks = Vec::new();
    rx.on_data(&p, now + 1, &out[0], &mut acks);
    out.clear();
    tx.on_ack(&p, now + 2, &acks[0], &mut out);
    assert!(!tx.probing);
    assert_eq!(out.iter().map(|x| x.seq).collect::<Vec<_>>(), vec![0], "slow start from one segment");
    assert_eq!(tx.cwnd, 1.0);
}

/// A finished flow's timer entries do nothing and do not set the run's end: `sim_time` is the last flow's
/// finish plus what is still in flight then (its last ACK, less than a round trip on these fabrics), not a
/// retransmission timeout later (HyLine's second class has a 1 s one, DCTCP a 10 ms floor here). Random
/// flows on each family's own fabric, on one and two threads.
#[test]
fn the_run_ends_when_its_last_flow_does() {
    let hyline = Config::from_json(
        r#"{"scheme": {"name": "hyline", "hyline_threshold_bytes": 50000}, "topology": {"kind": "fat_tree", "k": 4},
            "switch": {"buffer_bytes": 337500}}"#,
    )
    .unwrap();
    let homa = Config::from_json(
        r#"{"scheme": {"name": "homa"},
            "topology": {"kind": "leaf_spine", "host_link_delay_ns": 1000, "core_link_delay_ns": 200}}"#,
    )
    .unwrap();
    let mut dctcp = Config::default();
    dctcp.transport.rto_min_us = 10_000.0;
    // (hosts, round trip bound in us)
    for (name, cfg, hosts, rtt_us) in [("hyline", hyline, 16, 400), ("homa", homa, 144, 20), ("dctcp", dctcp, 144, 100)] {
        let f = common::random_flows(60, hosts, 400_000, 3 * PS_PER_MS / 100, 7);
        for threads in [1, 2] {
            let out = run(&cfg, &f, None, threads).unwrap();
            assert_eq!(out.stats.flows_finished, 60, "{name}");
            let last = *out.results.finish_ps.iter().max().unwrap();
            let end = out.stats.sim_time_ps;
            assert!(
                end >= last && end - last < rtt_us * 1_000_000,
                "{name}, {threads} thread(s): the run ends {} us after its last flow",
                (end as f64 - last as f64) / 1e6
            );
        }
    }
}
