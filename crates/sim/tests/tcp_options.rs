//! The transport's options on whole runs: the handshake (one round trip of control packets before the data)
//! and delayed ACKs.

mod common;

use common::{dumbbell, flows};
use fctlab_sim::run;
use fctlab_sim::units::{PS_PER_US, NEVER};

#[test]
fn the_handshake_adds_exactly_one_round_trip_of_control_packets() {
    // one sender, one receiver: three links of 10 Gb/s and 1 us each way; a SYN and a SYN-ACK of 40 B
    // each cross them in 3 x (32 ns + 1 us)
    let mut cfg = dumbbell(1, 10.0, 10.0);
    cfg.transport.init_cwnd_packets = 100; // the window covers the flow: it runs at line rate
    let f = flows(&[(0, 1, 50_000, 0)]);
    let plain = run(&cfg, &f, None, 1).unwrap();
    cfg.transport.handshake = true;
    let hs = run(&cfg, &f, None, 1).unwrap();
    let rtt = 2 * 3 * (32_000 + PS_PER_US);
    assert_eq!(hs.results.ideal_fct_ps[0], plain.results.ideal_fct_ps[0] + rtt);
    assert_eq!(hs.results.finish_ps[0], plain.results.finish_ps[0] + rtt);
    assert_eq!(hs.results.finish_ps[0], hs.results.ideal_fct_ps[0], "alone, it finishes at its ideal FCT");
    assert_eq!(hs.stats.ack_packets_sent, plain.stats.ack_packets_sent + 1, "one SYN-ACK more");
    assert_eq!(hs.stats.data_packets_sent, plain.stats.data_packets_sent + 1, "one SYN more");
    assert_eq!(hs.results.bytes_sent, plain.results.bytes_sent, "control packets carry no payload");
}

#[test]
fn delayed_acks_halve_the_acks_and_keep_every_byte() {
    let mut cfg = dumbbell(1, 10.0, 10.0);
    cfg.transport.init_cwnd_packets = 100;
    let f = flows(&[(0, 1, 21 * 1460, 0)]);
    let every = run(&cfg, &f, None, 1).unwrap();
    cfg.transport.delayed_ack_segments = 2;
    let delayed = run(&cfg, &f, None, 1).unwrap();
    assert_eq!(every.stats.ack_packets_sent, 21);
    // ten ACKs for pairs, one for the last segment at once
    assert_eq!(delayed.stats.ack_packets_sent, 11);
    // the receiver's completion does not depend on the ACKs (the window covered the flow)
    assert_eq!(delayed.results.finish_ps, every.results.finish_ps);
    assert!(delayed.results.sender_done_ps[0] != NEVER);
    assert_eq!(delayed.results.bytes_delivered, every.results.bytes_delivered);
}

#[test]
fn a_lone_owed_ack_waits_for_the_delayed_ack_timer() {
    // a window of one segment: the first segment's ACK is owed until the timer fires (the classic delayed-ACK
    // stall of a short flow), so the flow takes at least that long
    let mut cfg = dumbbell(1, 10.0, 10.0);
    cfg.transport.init_cwnd_packets = 1;
    cfg.transport.rto_min_us = 100_000.0;
    cfg.transport.delayed_ack_segments = 2;
    cfg.transport.delayed_ack_timeout_us = 500.0;
    let f = flows(&[(0, 1, 3 * 1460, 0)]);
    let out = run(&cfg, &f, None, 1).unwrap();
    let fct = out.results.finish_ps[0];
    assert!(fct > 500 * PS_PER_US && fct < 520 * PS_PER_US, "fct {fct} ps");
    assert_eq!(out.results.timeouts[0], 0);
    assert_eq!(out.results.retransmits[0], 0);
    // the first segment (owed, then the timer), then segments 1 and 2: 2 in order ends the flow, at once
    assert_eq!(out.stats.ack_packets_sent, 2);
}

/// One flow of `segs` full segments on the 10 Gb/s dumbbell (3 links of 1 us), its congestion window never the
/// limit, with a receive window of `rwnd_segs` segments.
fn windowed(segs: u64, rwnd_segs: u64) -> fctlab_sim::RunOutput {
    let mut cfg = dumbbell(1, 10.0, 10.0);
    cfg.transport.init_cwnd_packets = 1000;
    cfg.transport.rwnd_bytes = rwnd_segs * 1460;
    run(&cfg, &flows(&[(0, 1, segs * 1460, 0)]), None, 1).unwrap()
}

#[test]
fn a_receive_window_at_or_above_the_bdp_keeps_the_ideal_fct() {
    // T = 1500 B at 10 Gb/s = 1.2 us; the ACK of a segment is back R = 3 (1.2 + 1) + 3 (0.032 + 1) = 9.696 us
    // after the segment started, which the link fills with 8.08 segments: 9 segments cover the BDP
    let n = 40;
    let ideal = windowed(n, 0).results.ideal_fct_ps[0];
    assert_eq!(windowed(n, 0).results.finish_ps[0], ideal, "no receive window: line rate");
    assert_eq!(windowed(n, 9).results.finish_ps[0], ideal, "9 segments >= BDP: line rate");
    assert_eq!(windowed(n, 1000).results.finish_ps[0], ideal);
}

#[test]
fn a_receive_window_below_the_bdp_sends_one_window_per_round_trip() {
    // window-limited: segment k starts at (k div W) R + (k mod W) T, the receiver has the last one 3 (T + 1 us)
    // after it started (no queue anywhere: one flow, equal link rates)
    let (t, d, a) = (1_200_000u64, PS_PER_US, 32_000u64);
    let r = 3 * (t + d) + 3 * (a + d);
    let n = 40u64;
    for w in [1u64, 4, 8] {
        let out = windowed(n, w);
        let k = n - 1;
        let expect = (k / w) * r + (k % w) * t + 3 * (t + d);
        assert_eq!(out.results.finish_ps[0], expect, "window {w} segments");
        assert!(out.results.finish_ps[0] > out.results.ideal_fct_ps[0]);
        assert_eq!(out.results.retransmits[0], 0);
    }
}

#[test]
fn a_window_not_a_multiple_of_the_mss_counts_bytes() {
    // 4.5 segments of window: a full fifth segment does not fit, so it is the 4-segment window; a flow whose
    // last segment is short (700 B) may send it once its end fits
    let mut cfg = dumbbell(1, 10.0, 10.0);
    cfg.transport.init_cwnd_packets = 1000;
    cfg.transport.rwnd_bytes = 4 * 1460 + 730;
    let n = 40u64;
    let out = run(&cfg, &flows(&[(0, 1, n * 1460, 0)]), None, 1).unwrap();
    assert_eq!(out.results.finish_ps[0], windowed(n, 4).results.finish_ps[0]);
    // 5 segments, the last of 700 B: 4 x 1460 + 700 <= 4.5 x 1460, so all five go out at once (line rate)
    let out = run(&cfg, &flows(&[(0, 1, 4 * 1460 + 700, 0)]), None, 1).unwrap();
    assert_eq!(out.results.finish_ps[0], out.results.ideal_fct_ps[0]);
}

#[test]
fn a_receive_window_below_one_segment_is_refused() {
    let mut cfg = dumbbell(1, 10.0, 10.0);
    cfg.transport.rwnd_bytes = 1000;
    let e = cfg.validate().unwrap_err();
    assert_eq!(e.key, "transport.rwnd_bytes", "{e}");
    cfg.transport.rwnd_bytes = 1460;
    assert!(cfg.validate().is_ok());
}

#[test]
fn a_timeout_shorter_than_the_round_trip_retransmits_spuriously_and_is_counted() {
    // one segment on the 10 Gb/s dumbbell: it reaches the receiver at 3 (1.2 + 1) = 6.6 us and its ACK is back
    // at 9.696 us. With an RTO of 3 us the sender retransmits at 3 us and (backed off to 6 us) at 9 us: two
    // copies of a segment the receiver already holds, the second after the sender has closed the flow.
    let mut cfg = dumbbell(1, 10.0, 10.0);
    cfg.transport.rto_min_us = 3.0;
    let f = flows(&[(0, 1, 1460, 0)]);
    let out = run(&cfg, &f, None, 1).unwrap();
    assert_eq!(out.results.finish_ps[0], 6_600_000, "the original copy completes the flow");
    assert_eq!(out.results.timeouts[0], 2);
    assert_eq!(out.results.retransmits[0], 2);
    assert_eq!(out.results.duplicate_data[0], 2, "both retransmissions were spurious");
    assert_eq!(out.results.bytes_delivered[0], 3 * 1460);
    // the same flow with an RTO above the round trip: nothing spurious
    cfg.transport.rto_min_us = 20.0;
    let out = run(&cfg, &f, None, 1).unwrap();
    assert_eq!((out.results.retransmits[0], out.results.duplicate_data[0]), (0, 0));
}
