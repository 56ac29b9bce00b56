//! Homa, HyLine and QJump, worked by hand on a small leaf-spine (2 leaves of 4 hosts, 10 Gbps host links,
//! 40 Gbps to the spines), and every flow of a random workload finishing with its bytes.

use super::*;

const TOPO: &str = r#""topology": {"kind": "leaf_spine", "leaves": 2, "hosts_per_leaf": 4, "spines": 2}"#;

/// The small leaf-spine under ECMP, the scheme section `scheme`, no handshake; `windows`: windows that never
/// bind (an initial window of 10,000 segments, no cap) for the TCP-based schemes.
fn cfg_with(scheme: &str, windows: bool) -> Config {
    let t = if windows { r#", "init_cwnd_packets": 10000, "max_cwnd_packets": 0"# } else { "" };
    let json = format!(
        r#"{{{TOPO}, "routing": {{"mode": "ecmp"}}, "run": {{"level": "flow"}}, "transport": {{"handshake": false{t}}}, {scheme}}}"#
    );
    Config::from_json(&json).unwrap()
}

fn cfg(scheme: &str) -> Config {
    cfg_with(scheme, false)
}

fn flowset(list: &[(u32, u32, u64, Ps)]) -> FlowSet {
    let mut f = FlowSet::default();
    for &(src, dst, size, start) in list {
        f.src.push(src);
        f.dst.push(dst);
        f.size_bytes.push(size);
        f.start_ps.push(start);
    }
    f
}

/// Wire bits of `size` payload bytes (1,460-byte segments, 40 bytes of headers each).
fn wire(size: u64) -> f64 {
    (size + size.div_ceil(1460) * 40) as f64 * 8.0
}

/// Picoseconds to send `bits` at 10 Gbps.
fn at_line(bits: f64) -> Ps {
    (bits / 1e10 * 1e12).round() as Ps
}

fn fct(out: &RunOutput, i: usize) -> Ps {
    out.results.finish_ps[i] - out.results.start_ps[i]
}

/// A lone Homa message on an idle path: its first RTTbytes blind at line rate, the rest granted as they run
/// out, so it takes its ideal FCT (its wire bits at line rate, then the pipeline), within a picosecond or two.
#[test]
fn homa_lone_message_takes_its_ideal() {
    let c = cfg(r#""scheme": {"name": "homa"}"#);
    for (size, dst) in [(500u64, 1u32), (200_000, 5), (3_000_000, 6)] {
        let out = run(&c, &flowset(&[(0, dst, size, 0)])).unwrap();
        assert_eq!(out.stats.flows_finished, 1);
        assert!(fct(&out, 0).abs_diff(out.results.ideal_fct_ps[0]) <= 2, "{size} bytes");
    }
}

/// Two Homa messages from two senders to one receiver, started together: the shorter goes first at line rate
/// while both are blind; once its RTTbytes (u wire bits) are out, the longer one's blind bytes, at an
/// unscheduled priority, pass its scheduled ones, then it has the receiver's link to its end (SRPT): it ends
/// after its wire bits and u. The longer one sends the rest once it is done, so it finishes after both
/// messages' wire bits at line rate, then its pipeline.
#[test]
fn homa_serves_one_receiver_shortest_first() {
    let c = cfg(r#""scheme": {"name": "homa"}"#);
    let (a, b) = (400_000u64, 900_000u64);
    let flows = flowset(&[(0, 2, b, 0), (1, 2, a, 0)]);
    let out = run(&c, &flows).unwrap();
    let r = &out.results;
    let net: Network = Network::build(&c, 1);
    let u = wire(HomaParams::from_config(&c, &flows.size_bytes, fabric_rtt_bytes(&net, &c)).rtt_bytes());
    let tail_a = r.ideal_fct_ps[1] - at_line(wire(a));
    let expect_a = at_line(wire(a) + u) + tail_a;
    assert!(fct(&out, 1).abs_diff(expect_a) <= 3, "{} against {expect_a}", fct(&out, 1));
    let tail = r.ideal_fct_ps[0] - at_line(wire(b));
    let expect = at_line(wire(a) + wire(b)) + tail;
    assert!(fct(&out, 0).abs_diff(expect) <= 3, "{} against {expect}", fct(&out, 0));
}

/// Overcommitment: sender 0 sends a short message m0 to host 1 and a longer one m1 to host 2; sender 3 sends
/// a still longer one m2 to host 2. Sender 0 serves m0 first, so m1 is held at its sender. Receiver 2 granting
/// one message at a time grants only m1 (fewer bits left), so m2 waits with the downlink idle; granting two at
/// once it grants m2 too, which takes the idle downlink until m1 comes: m2 finishes earlier.
#[test]
fn homa_overcommitment_fills_a_receiver_whose_first_message_waits_at_its_sender() {
    let flows = flowset(&[(0, 1, 600_000, 0), (0, 2, 800_000, 0), (3, 2, 2_000_000, 0)]);
    let one = run(&cfg(r#""scheme": {"name": "homa", "homa_overcommit": 1}"#), &flows).unwrap();
    let two = run(&cfg(r#""scheme": {"name": "homa", "homa_overcommit": 2}"#), &flows).unwrap();
    // overcommit 1: m2 sends its blind RTTbytes (u wire bits) while m0 goes, then waits until m1, sent after
    // m0, is done: its last bit leaves after m0's, m1's and its own wire bits less u
    let c = cfg(r#""scheme": {"name": "homa"}"#);
    let net: Network = Network::build(&c, 1);
    let rtt = HomaParams::from_config(&c, &flows.size_bytes, fabric_rtt_bytes(&net, &c)).rtt_bytes();
    let u = wire(rtt);
    let r = &one.results;
    let tail2 = r.ideal_fct_ps[2] - at_line(wire(2_000_000));
    let expect_one = at_line(wire(600_000) + wire(800_000) + wire(2_000_000) - u) + tail2;
    assert!(fct(&one, 2).abs_diff(expect_one) <= 5, "{} against {expect_one}", fct(&one, 2));
    // overcommit 2: m2 takes the downlink while m1 waits at its sender, then yields it to m1
    let expect_two = at_line(wire(800_000) + wire(2_000_000)) + tail2;
    assert!(fct(&two, 2).abs_diff(expect_two) <= 5, "{} against {expect_two}", fct(&two, 2));
    for out in [&one, &two] {
        assert_eq!(out.stats.flows_finished, 3);
    }
}

/// A QJump flow larger than its level's bucket sends at most a bucket per interval: with one level whose
/// bucket is 100,000 wire bytes per 1 ms (800 Mbps) and a window that never binds, a 1 MB flow takes its wire
/// bits at 800 Mbps, then its pipeline; a flow within the bucket is not capped (its ideal).
#[test]
fn qjump_cap_binds_beyond_the_bucket() {
    let c = cfg_with(
        r#""scheme": {"name": "qjump", "qjump_size_thresholds_bytes": [], "qjump_bucket_bytes": [100000],
            "qjump_interval_us": 1000}"#,
        true,
    );
    let out = run(&c, &flowset(&[(0, 5, 1_000_000, 0), (1, 6, 50_000, 0)])).unwrap();
    let r = &out.results;
    let cap = 100_000.0 * 8.0 / 1e-3;
    let tail = r.ideal_fct_ps[0] - at_line(wire(1_000_000));
    let expect = (wire(1_000_000) / cap * 1e12).round() as Ps + tail;
    assert!(fct(&out, 0).abs_diff(expect) <= 2, "{} against {expect}", fct(&out, 0));
    assert!(fct(&out, 1).abs_diff(r.ideal_fct_ps[1]) <= 2);
}

/// QJump's levels are strict priorities: a small flow (level 0) and a large one (the last level) from one
/// sender: the small one takes the line rate as if alone, the large one what it leaves.
#[test]
fn qjump_levels_are_strict_priorities() {
    let c = cfg_with(r#""scheme": {"name": "qjump"}"#, true);
    let out = run(&c, &flowset(&[(0, 5, 5_000_000, 0), (0, 6, 5_000, 0)])).unwrap();
    let r = &out.results;
    assert!(fct(&out, 1).abs_diff(r.ideal_fct_ps[1]) <= 2);
    let tail = r.ideal_fct_ps[0] - at_line(wire(5_000_000));
    let expect = at_line(wire(5_000_000) + wire(5_000)) + tail;
    assert!(fct(&out, 0).abs_diff(expect) <= 3, "{} against {expect}", fct(&out, 0));
}

/// HyLine: two second-class flows from one host to another, the second arriving while the first sends. The
/// manager admits the first T_cost after it arrives; the second, larger (lower priority), finds the sender's
/// link full with a more urgent flow, is stopped, and is admitted when the first's FIN frees the link. With
/// windows that never bind and no handshake: the first takes T_cost, its wire bits at line rate, then its
/// pipeline; the second starts when the first's last bit leaves.
#[test]
fn hyline_admits_one_flow_per_link_and_the_waiting_one_at_the_fin() {
    let c = cfg_with(
        r#""scheme": {"name": "hyline", "hyline_large_init_cwnd_packets": 100000,
            "hyline_large_max_cwnd_packets": 1000000}"#,
        true,
    );
    let (a, b, t1) = (2_000_000u64, 3_000_000u64, 300_000_000 as Ps);
    let out = run(&c, &flowset(&[(0, 5, a, 0), (0, 5, b, t1)])).unwrap();
    // (two requests, each admitted once; the second stopped first, no flow preempted)
    let s = &out.stats;
    assert_eq!((s.hyline_requests, s.hyline_admissions, s.hyline_preemptions, s.hyline_stops), (2, 2, 0, 1));
    let r = &out.results;
    let tcost: Ps = 100_000_000;
    let tail = |i: usize, size: u64| r.ideal_fct_ps[i] - at_line(wire(size));
    let done_a = tcost + at_line(wire(a));
    assert!(fct(&out, 0).abs_diff(done_a + tail(0, a)) <= 2, "{} against {}", fct(&out, 0), done_a + tail(0, a));
    let expect_b = done_a + at_line(wire(b)) + tail(1, b) - t1;
    assert!(fct(&out, 1).abs_diff(expect_b) <= 3, "{} against {expect_b}", fct(&out, 1));
    // a first-class flow sent meanwhile is served above the second class, as if alone
    let out = run(&c, &flowset(&[(0, 5, a, 0), (0, 6, 50_000, t1)])).unwrap();
    assert!(fct(&out, 1) <= out.results.ideal_fct_ps[1] + 2);
}

/// Every flow of a random workload finishes, with all its bytes, never faster than its ideal (Homa, QJump,
/// HyLine on the small leaf-spine, flows of 100 bytes to 5 MB at a few Gbps per host).
#[test]
fn every_flow_finishes_with_its_bytes() {
    let mut seed = 11u64;
    let mut draw = || {
        seed = mix64(seed.wrapping_add(1));
        seed
    };
    let mut list = Vec::new();
    let mut t: Ps = 0;
    for _ in 0..600 {
        let src = (draw() % 8) as u32;
        let dst = (src + 1 + (draw() % 7) as u32) % 8;
        let size = 100 + draw() % [2_000, 100_000, 5_000_000][(draw() % 3) as usize];
        t += draw() % 2_000_000_000;
        list.push((src, dst, size, t));
    }
    let flows = flowset(&list);
    for scheme in [r#""scheme": {"name": "homa"}"#, r#""scheme": {"name": "qjump"}"#, r#""scheme": {"name": "hyline"}"#]
    {
        let out = run(&cfg(scheme), &flows).unwrap();
        assert_eq!(out.stats.flows_finished, 600, "{scheme}");
        let r = &out.results;
        for i in 0..600 {
            assert_eq!(r.bytes_delivered[i], flows.size_bytes[i], "{scheme} flow {i}");
            assert!(r.finish_ps[i] + 2 >= r.start_ps[i] + r.ideal_fct_ps[i], "{scheme} flow {i}");
        }
    }
}

/// `max_cwnd_packets` caps the window, as the packet level's cwnd: with a 10-segment window (initial and cap)
/// and a base RTT worth far more than that at line rate, a flow of 10 segments leaves at line rate at once (its
/// ideal), one of 30 in three rounds: two base RTTs, then its last window at line rate, then its pipeline.
#[test]
fn a_window_cap_binds_every_round() {
    let json = r#"{"topology": {"kind": "leaf_spine", "leaves": 2, "hosts_per_leaf": 4, "spines": 2,
        "host_link_delay_ns": 20000}, "routing": {"mode": "ecmp"}, "run": {"level": "flow"},
        "transport": {"handshake": false, "init_cwnd_packets": 10, "max_cwnd_packets": 10},
        "scheme": {"name": "tcp"}}"#;
    let c = Config::from_json(json).unwrap();
    let net: Network = Network::build(&c, Xoshiro256PlusPlus::seed_from_u64(c.seed).next_u64());
    let (seg, ack) = (1500u32, 40u32);
    let rtt: Ps = net
        .ecmp_path(0, 1, flow_hash(1, false))
        .iter()
        .map(|&p| {
            let port = &net.ports[p as usize];
            tx_time(seg, port.rate_bps) + tx_time(ack, port.rate_bps) + 2 * port.delay_ps
        })
        .sum();
    assert!(10.0 * 12_000.0 < 1e10 * rtt as f64 / 1e12, "the cap binds");
    let out = run(&c, &flowset(&[(2, 3, 14_600, 0), (0, 1, 43_800, 0)])).unwrap();
    let r = &out.results;
    assert!(fct(&out, 0).abs_diff(r.ideal_fct_ps[0]) <= 2);
    let tail = r.ideal_fct_ps[1] - at_line(wire(43_800));
    let expect = 2 * rtt + at_line(wire(14_600)) + tail;
    assert!(fct(&out, 1).abs_diff(expect) <= 3, "{} against {expect}", fct(&out, 1));
}

/// The progress counter follows a flow-level run: stopped by the time limit part way (flows arrive 10 us
/// apart), it holds the flows finished by then and the time of the last event; run to the end, every flow and
/// the run's simulated time. (It stayed at 0 before: only the packet level updated it.)
#[test]
fn progress_counter_follows_the_flow_level() {
    use std::sync::atomic::Ordering;
    let list: Vec<(u32, u32, u64, Ps)> = (0..40).map(|i| (i % 4, 4 + i % 4, 20_000, u64::from(i) * 10_000_000)).collect();
    let flows = flowset(&list);
    for scheme in ["dctcp", "las", "homa"] {
        let mut c = cfg(&format!(r#""scheme": {{"name": "{scheme}"}}"#));
        let p = Progress::default();
        let out = crate::flowlevel::run(&c, &flows, Some(&p)).unwrap();
        assert_eq!(p.flows_done.load(Ordering::Relaxed), 40, "{scheme}");
        assert_eq!(p.sim_time_ps.load(Ordering::Relaxed), out.stats.sim_time_ps, "{scheme}");
        c.run.time_limit_ms = 0.2;
        let p = Progress::default();
        let out = crate::flowlevel::run(&c, &flows, Some(&p)).unwrap();
        let (done, at) = (p.flows_done.load(Ordering::Relaxed), p.sim_time_ps.load(Ordering::Relaxed));
        assert!(out.stats.hit_time_limit && done > 0 && done < 40, "{scheme}: {done}");
        assert_eq!(done, out.stats.flows_finished, "{scheme}");
        assert!(at > 100_000_000 && at <= 200_000_000, "{scheme}: {at}");
    }
}
