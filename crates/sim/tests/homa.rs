//! Homa on whole runs, against what its design must give (an isolated message at its ideal time when RTTbytes
//! covers the round trip; an incast whose queue the receiver bounds by overcommitment; SRPT order at the
//! receiver) and against what must hold whatever the scheme: every byte delivered, through loss too, and the
//! same seed giving the same bits on one and two threads.

mod common;

use common::{comparable, flows, random_flows};
use fctlab_sim::config::Config;
use fctlab_sim::{FlowSet, RunOutput};

const US: u64 = 1_000_000;

/// The Homa paper's fabric (144 hosts in 9 racks, 4 spines, 10 Gbps hosts, 40 Gbps core), with link delays of
/// 1 us (host links) and 0.2 us (core) for its ~7.8 us round trip (store and forward here; its switches cut
/// through), and Homa with `extra` JSON keys.
fn homa(extra: &str) -> Config {
    let text = format!(
        r#"{{"scheme": {{"name": "homa" {extra}}},
            "topology": {{"kind": "leaf_spine", "host_link_delay_ns": 1000, "core_link_delay_ns": 200}}}}"#
    );
    Config::from_json(&text).unwrap()
}

fn run(cfg: &Config, f: &FlowSet) -> RunOutput {
    fctlab_sim::run(cfg, f, None, 1).unwrap()
}

fn fct(out: &RunOutput, i: usize) -> u64 {
    out.results.finish_ps[i] - out.results.start_ps[i]
}

/// A message alone in the fabric takes exactly its ideal time (its data back to back at line rate through
/// the path): the unscheduled bytes leave at once and, RTTbytes covering the round trip, the first grant
/// comes back before they run out. With RTTbytes well under the round trip the sender stalls for grants.
#[test]
fn an_isolated_message_takes_its_ideal_time() {
    let cfg = homa("");
    for size in [1u64, 1_460, 5_000, 9_000, 100_000, 1_000_000] {
        // host 0 to host 143: another leaf, across the spine
        let out = run(&cfg, &flows(&[(0, 143, size, 0)]));
        assert_eq!(out.stats.flows_finished, 1);
        assert_eq!(fct(&out, 0), out.results.ideal_fct_ps[0], "{size} B");
        assert_eq!(out.results.bytes_delivered[0], size);
        assert_eq!(out.stats.drops, 0);
        assert!(out.results.sender_done_ps[0] > out.results.finish_ps[0], "DONE after completion");
    }
    // one segment of unscheduled data: every segment waits for its grant (one round trip each)
    let cfg = homa(r#", "homa_rtt_bytes": 1460"#);
    let out = run(&cfg, &flows(&[(0, 143, 100_000, 0)]));
    let ideal = out.results.ideal_fct_ps[0];
    assert!(fct(&out, 0) > 3 * ideal, "{} vs ideal {ideal}", fct(&out, 0));
}

/// The receiver grants the message with the fewest bytes left first: three messages into one host, started
/// together from three senders, with one granted at a time (overcommitment 1), finish shortest first, and the
/// receiver's link stays busy: all three done within a few round trips of their total at line rate.
#[test]
fn the_receiver_grants_shortest_remaining_first() {
    let cfg = homa(r#", "homa_overcommit": 1"#);
    let sizes = [3_000_000u64, 1_000_000, 2_000_000];
    let list: Vec<_> = sizes.iter().enumerate().map(|(i, &s)| (i as u32 * 20, 100, s, 0)).collect();
    let out = run(&cfg, &flows(&list));
    assert_eq!(out.stats.flows_finished, 3);
    let f = &out.results.finish_ps;
    assert!(f[1] < f[2] && f[2] < f[0], "finish order {f:?}");
    // 6 MB payload at 10 Gbps with 1460/1500 efficiency: 4.93 ms
    let serial = 6_000_000.0 * 1500.0 / 1460.0 * 8.0 / 10e9 * 1e12;
    let last = f[0] as f64;
    assert!(last < serial + 50.0 * US as f64, "last done at {:.1} us, serial {:.1} us", last / 1e6, serial / 1e6);
    assert_eq!(out.stats.drops, 0);
}

/// Incast: 100 senders, one 500 KB message each, into one receiver. Their unscheduled bytes arrive blind
/// (100 x RTTbytes, about 1 MB, which the switch is given room for, as Homa assumes of datacenter switches), but
/// once that burst has drained, the receiver's downlink holds no more than what it has granted and not yet
/// received: overcommitment (7, the scheduled levels) x RTTbytes (7 segments on this fabric), plus what a
/// message the receiver has passed over (a shorter one overtook it) was granted before (one RTTbytes here).
#[test]
fn incast_queue_is_bounded_by_overcommitment() {
    let mut cfg = homa("");
    cfg.switch.buffer_bytes = 4_000_000;
    cfg.run.monitor_host = Some(0);
    cfg.run.monitor_interval_us = 2.0;
    let list: Vec<_> = (1..=100u32).map(|s| (s + 43, 0, 500_000u64, 0)).collect();
    let out = run(&cfg, &flows(&list));
    assert_eq!(out.stats.flows_finished, 100);
    assert_eq!(out.stats.drops, 0);
    let m = out.stats.monitor.as_ref().unwrap();
    let q = &m.queue_bytes;
    let peak_at = (0..q.len()).max_by_key(|&i| q[i]).unwrap();
    assert!(q[peak_at] > 500_000, "the unscheduled burst queues: {} B", q[peak_at]);
    let bound = (7 + 1) * 7 * 1500;
    let drained = peak_at + q[peak_at..].iter().position(|&x| x <= bound).expect("the burst drains");
    let after = *q[drained..].iter().max().unwrap();
    assert!(after <= bound, "queue after the burst {after} B > {bound} B");
    // and the link stays busy: 50 MB of payload at 10 Gbps is 41.1 ms on the wire
    let last = *out.results.finish_ps.iter().max().unwrap() as f64 / 1e9;
    assert!(last < 41.5, "last message done at {last:.2} ms");
}

/// Every byte of a mixed workload gets through, identically on one and two threads and with every port
/// event-driven; and through 3% loss on some hosts' links (RESEND, BUSY and the sender's timeout at work).
#[test]
fn every_message_arrives_deterministically_and_through_loss() {
    let cfg = homa("");
    let f = random_flows(3_000, 144, 400_000, 2 * US, 7);
    let one = fctlab_sim::run(&cfg, &f, None, 1).unwrap();
    let two = fctlab_sim::run(&cfg, &f, None, 2).unwrap();
    assert_eq!(one.stats.flows_finished, 3_000);
    assert_eq!(one.results, two.results);
    assert_eq!(comparable(&one.stats), comparable(&two.stats));
    for i in 0..f.len() {
        assert!(one.results.bytes_delivered[i] >= f.size_bytes[i], "flow {i}");
        assert!(one.results.sender_done_ps[i] >= one.results.finish_ps[i]);
    }
    let mut lossy = cfg.clone();
    lossy.link_loss.probability = 0.03;
    lossy.link_loss.hosts = (0..144).step_by(3).collect();
    lossy.scheme.homa_resend_timeout_us = 100.0;
    let out = run(&lossy, &f);
    assert!(out.stats.link_losses > 100, "{} losses", out.stats.link_losses);
    assert_eq!(out.stats.flows_finished, 3_000);
    assert!(out.results.retransmits.iter().sum::<u32>() > 0);
    assert_eq!(run(&lossy, &f).results, out.results, "same seed, same bits");
}

/// Imprecise sizes: announcing the true size through `estimate_bytes` is Homa itself, bit for bit; a poor
/// estimate still delivers everything.
#[test]
fn estimated_sizes() {
    let mut f = random_flows(500, 144, 300_000, 2 * US, 3);
    let exact = run(&homa(""), &f);
    f.estimate_bytes = f.size_bytes.clone();
    let est = run(&homa(r#", "homa_sizes": "estimate""#), &f);
    assert_eq!(exact.results, est.results);
    f.estimate_bytes = f.size_bytes.iter().map(|&s| (s / 4).max(1)).collect();
    let poor = run(&homa(r#", "homa_sizes": "estimate""#), &f);
    assert_eq!(poor.stats.flows_finished, 500);
    let e = fctlab_sim::run(&homa(r#", "homa_sizes": "upper""#), &f, None, 1).unwrap_err();
    assert!(e.message.contains("upper_bytes"), "{}", e.message);
    // the application model's generation rates are the TCP family's: refused here, not ignored
    f.gen_rate_bps = vec![1_000_000_000; f.len()];
    let e = fctlab_sim::run(&homa(""), &f, None, 1).unwrap_err();
    assert!(e.message.contains("gen_rate_bps"), "{}", e.message);
}

/// Loss into a few receivers with one message granted at a time: a message granted to its end and then passed
/// over by a shorter one still asks for its lost packets (it once waited forever, PINGed by its sender), and
/// every message finishes, identically on one and two threads.
#[test]
fn lost_packets_of_a_passed_over_message_are_asked_for() {
    let mut cfg = homa(r#", "homa_overcommit": 1, "homa_resend_timeout_us": 100"#);
    cfg.link_loss.probability = 0.05;
    cfg.link_loss.hosts = vec![0, 1, 2, 3];
    cfg.run.time_limit_ms = 2_000.0;
    let mut x = 7u64;
    let list: Vec<_> = (0..1_000u64)
        .map(|i| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (4 + (x >> 33) as u32 % 140, (x >> 20) as u32 % 4, 8_000 + (x >> 40) % 212_000, i * 4 * US)
        })
        .collect();
    let f = flows(&list);
    let one = fctlab_sim::run(&cfg, &f, None, 1).unwrap();
    assert_eq!(one.stats.flows_finished, 1_000, "{} stuck", 1_000 - one.stats.flows_finished);
    assert!(one.stats.link_losses > 500);
    let two = fctlab_sim::run(&cfg, &f, None, 2).unwrap();
    assert_eq!(one.results, two.results);
}

/// The sender's SRPT counts bytes: a 2-byte message that arrives while the NIC is busy leaves before a
/// 1,400-byte one that arrived earlier (both one segment).
#[test]
fn the_sender_sends_the_fewest_bytes_first() {
    let out = run(&homa(""), &flows(&[(0, 1, 1_460, 0), (0, 2, 1_400, 100), (0, 3, 2, 200)]));
    let f = &out.results.finish_ps;
    assert!(f[2] < f[1], "2 B at {} ps, 1,400 B at {} ps", f[2], f[1]);
}
