//! QJump (`engine::family::qjump`) on whole runs: flows that fit their level's bucket leave unhindered, a flow
//! larger than its bucket is held to the bucket's rate (what the limiter drops, TCP sends again), and every byte
//! arrives, the same on one and two threads; the authors' ns-2 queue (`scheme.qjump_queue = "ranked"`) drops a
//! lower level's packet for a level-0 arrival at a full port and serves level 0 first, and the configs it
//! cannot run with are refused.

mod common;

use common::{comparable, dumbbell, flows, random_flows};
use fctlab_sim::config::{Config, QjumpQueue, SchemeName};
use fctlab_sim::validate::config_from_json;
use fctlab_sim::{FlowSet, RunOutput};

const US: u64 = 1_000_000;

fn qjump(extra: &str) -> Config {
    let mut cfg = dumbbell(4, 1.0, 1.0);
    let preset = Config::from_json(&format!(r#"{{"scheme": {{"name": "qjump" {extra}}}}}"#)).unwrap();
    cfg.scheme = preset.scheme;
    cfg.transport = preset.transport;
    cfg.switch = preset.switch;
    assert_eq!(cfg.scheme.name, SchemeName::Qjump);
    cfg
}

fn run(cfg: &Config, f: &FlowSet) -> RunOutput {
    fctlab_sim::run(cfg, f, None, 1).unwrap()
}

/// With the default levels every flow fits its bucket (retransmissions aside): nothing is dropped at the host,
/// and a lone flow takes what plain TCP with the same window takes.
#[test]
fn flows_within_their_level_are_not_limited() {
    let cfg = qjump("");
    let mut tcp = cfg.clone();
    tcp.scheme.name = SchemeName::Tcp;
    for size in [2_000u64, 10_000, 60_000, 150_000, 400_000] {
        let f = flows(&[(0, 4, size, 0)]);
        let (q, t) = (run(&cfg, &f), run(&tcp, &f));
        // (with no loss in the fabric, no retransmission needs more tokens than the flow's size)
        assert_eq!(t.stats.drops, 0, "{size} B");
        assert_eq!(q.stats.host_limiter_drops, 0, "{size} B");
        assert_eq!(q.results.finish_ps, t.results.finish_ps, "{size} B");
    }
}

/// A 60 KB flow at a level of 15,000 B per ms (120 Mb/s) cannot finish before its bytes have had that many
/// intervals; the limiter drops what the window sends beyond the tokens, and TCP delivers it all in the end.
#[test]
fn a_flow_beyond_its_bucket_is_held_to_the_level_rate() {
    let cfg = qjump(r#", "qjump_size_thresholds_bytes": [100000], "qjump_bucket_bytes": [15000, 1312500],
                      "qjump_interval_us": 1000"#);
    let out = run(&cfg, &flows(&[(0, 4, 60_000, 0)]));
    assert_eq!(out.stats.flows_finished, 1);
    assert_eq!(out.results.bytes_delivered[0], 60_000);
    assert!(out.stats.host_limiter_drops > 0);
    assert_eq!(out.stats.drops, out.stats.host_limiter_drops);
    // 60,000 B in 1,500 B packets (42 packets, 63,000 wire bytes) at 10 packets per interval: the last leaves in
    // the fifth interval at the earliest
    let fct = out.results.finish_ps[0] - out.results.start_ps[0];
    assert!(fct > 4_000 * US, "fct {} us", fct / US);
    // the large level is at line rate: a 200 KB flow there is not held back
    let out = run(&cfg, &flows(&[(0, 4, 200_000, 0)]));
    assert_eq!(out.stats.host_limiter_drops, 0);
}

#[test]
fn every_byte_arrives_and_two_threads_agree() {
    let cfg = qjump(r#", "qjump_bucket_bytes": [3000, 6000, 9000, 12000, 30000, 60000, 300000, 1312500]"#);
    let f = random_flows(400, 5, 300_000, 30 * US, 5);
    let one = delivered_alike_on_two_threads(&cfg, &f);
    assert!(one.stats.host_limiter_drops > 0);
}

/// A level-7 flow (1.2 MB) from host 0 keeps the 1 Gbps core port of the left switch full (20 packets of
/// buffer, a window of 100 packets from 10 Gbps hosts); 200 us later a level-0 flow of 5 packets (7,300 B) from
/// host 1 to the same receiver reaches that full port.
fn full_port_meets_level_0(queue: &str) -> (Config, FlowSet, RunOutput) {
    let mut cfg = qjump(&format!(r#", "qjump_queue": "{queue}""#));
    cfg.topology = dumbbell(2, 10.0, 1.0).topology;
    cfg.switch.buffer_bytes = 20 * 1_500;
    cfg.host.nic_buffer_bytes = Some(0);
    cfg.transport.init_cwnd_packets = 100;
    cfg.transport.max_cwnd_packets = 100;
    let f = flows(&[(0, 2, 1_200_000, 0), (1, 2, 7_300, 200 * US)]);
    let out = run(&cfg, &f);
    assert_eq!(out.stats.flows_finished, 2, "{queue}");
    (cfg, f, out)
}

/// The authors' queue: the level-0 packets push out level-7 packets (the newest of the lowest level) and lose
/// none of their own; they are served first, so the short flow waits at most for the packet being sent at the
/// bottleneck (12 us at 1 Gbps) beyond its ideal FCT. The strict-priority FIFOs (drop-tail on the port's
/// buffer) drop the level-0 arrivals instead.
#[test]
fn ranked_queue_drops_a_lower_level_for_a_level_0_arrival_at_a_full_port() {
    let (cfg, f, ranked) = full_port_meets_level_0("ranked");
    assert_eq!(cfg.scheme.qjump_queue, QjumpQueue::Ranked);
    let r = &ranked.results;
    assert_eq!((r.bytes_dropped[1], r.retransmits[1], r.timeouts[1]), (0, 0, 0));
    assert!(r.bytes_dropped[0] > 0, "the level-7 flow gave way");
    // drops are counted at the dropped packet's level: all at 7 (ACKs are never dropped here)
    assert_eq!(ranked.stats.drops_per_queue[7], ranked.stats.drops - ranked.stats.host_limiter_drops);
    assert_eq!(ranked.stats.drops_per_queue[0], 0);
    let fct = r.finish_ps[1] - f.start_ps[1];
    assert!(fct >= r.ideal_fct_ps[1] && fct <= r.ideal_fct_ps[1] + 12 * US, "fct {fct} ideal {}", r.ideal_fct_ps[1]);

    let (_, _, fifos) = full_port_meets_level_0("priority_fifos");
    assert!(fifos.results.bytes_dropped[1] > 0, "drop-tail FIFOs drop the level-0 arrivals at a full port");
    assert!(fifos.results.finish_ps[1] - f.start_ps[1] > fct);
}

/// The option at its default is the strict-priority FIFOs: the same results as a config that does not name it.
#[test]
fn priority_fifos_is_the_default() {
    assert_eq!(Config::default().scheme.qjump_queue, QjumpQueue::PriorityFifos);
    let f = random_flows(200, 5, 300_000, 20 * US, 3);
    let (a, b) = (run(&qjump(""), &f), run(&qjump(r#", "qjump_queue": "priority_fifos""#), &f));
    assert_eq!(a.results, b.results);
}

/// The ranked queue on many flows: every byte arrives, and two threads give the same results as one.
#[test]
fn ranked_queue_delivers_everything_on_one_and_two_threads() {
    let mut cfg = qjump(r#", "qjump_queue": "ranked""#);
    cfg.switch.buffer_bytes = 30_000;
    let f = random_flows(400, 5, 300_000, 10 * US, 11);
    let one = delivered_alike_on_two_threads(&cfg, &f);
    assert!(one.stats.drops > 0);
}

/// Every flow finishes with every byte delivered, and two engine threads give the one-thread results; returns
/// those.
fn delivered_alike_on_two_threads(cfg: &Config, f: &FlowSet) -> RunOutput {
    let one = run(cfg, f);
    assert_eq!(one.stats.flows_finished, f.len() as u64);
    for i in 0..f.len() {
        assert!(one.results.bytes_delivered[i] >= f.size_bytes[i], "flow {i}");
    }
    let two = fctlab_sim::run(cfg, f, None, 2).unwrap();
    assert_eq!(two.stats.threads, 2);
    assert_eq!(one.results, two.results);
    assert_eq!(comparable(&one.stats), comparable(&two.stats));
    one
}

/// What the ranked queue cannot run with is refused, naming the key.
#[test]
fn ranked_queue_refusals_name_the_key() {
    let refused = |json: &str, key: &str, words: &str| {
        let e = config_from_json(json).unwrap_err();
        assert_eq!(e.key, key, "{e}");
        assert!(e.message.contains(words), "{e}");
    };
    let q = r#""scheme": {"name": "qjump", "qjump_queue": "ranked"}"#;
    refused(&format!(r#"{{{q}, "switch": {{"buffer": "shared", "shared_buffer_bytes": 1000000}}}}"#), "switch.buffer", "per-port buffer");
    refused(&format!(r#"{{{q}, "switch": {{"pfc": true}}}}"#), "switch.pfc", "qjump_queue");
    refused(r#"{"scheme": {"name": "dctcp", "qjump_queue": "ranked"}}"#, "scheme.qjump_queue", "does not read it");
    refused(r#"{"scheme": {"name": "qjump", "qjump_queue": "shared"}}"#, "scheme.qjump_queue", "unknown variant");
    assert!(config_from_json(&format!("{{{q}}}")).is_ok());
    // (the flow level serves the levels in strict priority, as the ranked queue does)
    assert!(config_from_json(&format!(r#"{{{q}, "run": {{"level": "flow"}}}}"#)).is_ok());
}
