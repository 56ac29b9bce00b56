//! QJump (`engine::family::qjump`) on whole runs: flows that fit their level's bucket leave unhindered, a flow
//! larger than its bucket is held to the bucket's rate (what the limiter drops, TCP sends again), and every byte
//! arrives, the same on one and two threads.

mod common;

use common::{comparable, dumbbell, flows, random_flows};
use fctlab_sim::config::{Config, SchemeName};
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
    let one = run(&cfg, &f);
    assert_eq!(one.stats.flows_finished, 400);
    assert!(one.stats.host_limiter_drops > 0);
    for i in 0..400 {
        assert!(one.results.bytes_delivered[i] >= f.size_bytes[i], "flow {i}");
    }
    let two = fctlab_sim::run(&cfg, &f, None, 2).unwrap();
    assert_eq!(two.stats.threads, 2);
    assert_eq!(one.results, two.results);
    assert_eq!(comparable(&one.stats), comparable(&two.stats));
}
