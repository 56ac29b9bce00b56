//! The application model: flows whose bytes are generated at a rate (after a cached part), written into a send
//! buffer that blocks the application when full. Answers known from the definitions: a lone flow generated at
//! r_g below the line rate finishes about size / r_g after its start; a blocked application writes no faster
//! than the bottleneck drains its buffer; flows without a rate behave as before.

mod common;

use common::{comparable, dumbbell, flows, random_flows};
use fctlab_sim::config::*;
use fctlab_sim::flows::NO_RATE;
use fctlab_sim::transport::tcp::time_to_generate;
use fctlab_sim::units::{NEVER, PS_PER_MS, PS_PER_US};
use fctlab_sim::{run, FlowSet, RunOutput};

fn fct(out: &RunOutput, f: &FlowSet, i: usize) -> u64 {
    assert_ne!(out.results.finish_ps[i], NEVER, "flow {i} unfinished");
    out.results.finish_ps[i] - f.start_ps[i]
}

fn conserved(out: &RunOutput) {
    let r = &out.results;
    for i in 0..r.finish_ps.len() {
        assert_ne!(r.sender_done_ps[i], NEVER, "flow {i} unfinished");
        assert_eq!(r.bytes_sent[i], r.bytes_delivered[i] + r.bytes_dropped[i], "flow {i}");
    }
}

#[test]
fn a_lone_flow_generated_below_line_rate_takes_size_over_rate_plus_the_path() {
    let cfg = dumbbell(1, 10.0, 10.0);
    let size = 2_000_000u64;
    let rate = 1_000_000_000u64;
    let mut f = flows(&[(0, 1, size, 0)]);
    f.gen_rate_bps = vec![rate];
    let out = run(&cfg, &f, None, 1).unwrap();
    let gen = time_to_generate(size, rate); // 16 ms
    assert_eq!(gen, 16 * PS_PER_MS);
    assert_eq!(
        out.results.app_done_ps[0], gen,
        "the application writes its last byte at size / r_g"
    );
    // the last segment leaves once written and crosses 3 links (1 us each, ~1.2 us serialization at most)
    let t = fct(&out, &f, 0);
    assert!(t >= gen && t < gen + 10 * PS_PER_US, "fct {t} vs generation {gen}");
    // the ideal accounts for the generation: the last segment alone on the path after its last byte
    let ideal = out.results.ideal_fct_ps[0];
    assert!(ideal > gen && ideal <= t, "ideal {ideal}, fct {t}");
    assert!(
        (t - ideal) < 5 * PS_PER_US,
        "a lone flow is close to its ideal: {t} vs {ideal}"
    );
    conserved(&out);
}

#[test]
fn a_cached_half_is_sent_at_once_and_the_rest_at_the_rate() {
    let cfg = dumbbell(1, 10.0, 10.0);
    let size = 2_000_000u64;
    let mut f = flows(&[(0, 1, size, 0)]);
    f.gen_rate_bps = vec![1_000_000_000];
    f.cached_bytes = vec![size / 2];
    let out = run(&cfg, &f, None, 1).unwrap();
    let gen = time_to_generate(size / 2, 1_000_000_000); // 8 ms
    assert_eq!(out.results.app_done_ps[0], gen);
    let t = fct(&out, &f, 0);
    assert!(t >= gen && t < gen + 10 * PS_PER_US, "fct {t} vs {gen}");
}

#[test]
fn a_full_send_buffer_blocks_the_application() {
    // generation at 500 Mbit/s, a 100 Mbit/s bottleneck: with a 16 KB buffer the application writes at the
    // rate the bottleneck drains it, so it finishes writing about 16 KB before the end of the transfer
    let mut cfg = dumbbell(1, 1.0, 0.1);
    cfg.transport.send_buffer_bytes = 16_384;
    let size = 1_000_000u64;
    let mut f = flows(&[(0, 1, size, 0)]);
    f.gen_rate_bps = vec![500_000_000];
    let out = run(&cfg, &f, None, 1).unwrap();
    let t = fct(&out, &f, 0) as f64;
    // payload at 100 Mbit/s with 40 B headers per 1,460 B: ~82 ms
    let wire_ms = size as f64 * 1500.0 / 1460.0 * 8.0 / 1e8 * 1e3;
    assert!(
        (t / PS_PER_MS as f64 - wire_ms).abs() < 0.03 * wire_ms,
        "fct {} ms vs {wire_ms}",
        t / 1e9
    );
    let done = out.results.app_done_ps[0] as f64;
    let at_rate = time_to_generate(size, 500_000_000) as f64; // 16 ms
    assert!(
        done > 4.0 * at_rate,
        "the buffer held the application back: done at {} ms",
        done / 1e9
    );
    // the last write freed by an ACK: at most a buffer's worth (and a round trip) before the end
    let buffer_time = 16_384.0 * 1500.0 / 1460.0 * 8.0 / 1e8 * 1e12;
    assert!(
        t - done < 1.5 * buffer_time && t - done > 0.5 * buffer_time,
        "done {done}, fct {t}"
    );
    // without the buffer limit the application is never blocked
    cfg.transport.send_buffer_bytes = 0;
    let free = run(&cfg, &f, None, 1).unwrap();
    assert_eq!(free.results.app_done_ps[0], at_rate as u64);
    assert_eq!(
        free.results.finish_ps[0],
        out.results.finish_ps[0].max(free.results.finish_ps[0])
    );
    conserved(&out);
}

#[test]
fn flows_without_a_rate_are_unchanged_by_an_empty_rate_column_and_write_at_their_start() {
    let cfg = dumbbell(4, 10.0, 10.0);
    let f = random_flows(200, 5, 400_000, 3 * PS_PER_US, 5);
    let mut g = f.clone();
    g.gen_rate_bps = vec![NO_RATE; f.len()];
    g.cached_bytes = vec![0; f.len()];
    let a = run(&cfg, &f, None, 1).unwrap();
    let b = run(&cfg, &g, None, 1).unwrap();
    assert_eq!(a.results, b.results);
    assert_eq!(comparable(&a.stats), comparable(&b.stats));
    assert_eq!(a.results.app_done_ps, a.results.start_ps);
}

/// Rate-limited flows with a send buffer on the leaf-spine fabric: every flow completes, bytes are conserved,
/// and one and two engine threads give the same bits.
#[test]
fn rate_limited_flows_are_conserved_and_deterministic_on_one_and_two_threads() {
    for scheme in [
        SchemeName::Dctcp,
        SchemeName::Pias,
        SchemeName::Rax,
        SchemeName::RaxPlus,
        SchemeName::Pfabric,
    ] {
        let mut cfg = Config::for_scheme(scheme, Preset::Native);
        cfg.scheme.thresholds_bytes = vec![20_000, 100_000, 500_000, 1_000_000, 2_000_000, 5_000_000, 10_000_000];
        if scheme == SchemeName::Pfabric {
            cfg.scheme.rank = RankBy::RemainingTime;
            cfg.transport.rto_min_us = 250.0; // about three RTTs of this fabric
        }
        cfg.transport.send_buffer_bytes = 200_000;
        let mut f = random_flows(300, 144, 1_000_000, PS_PER_US, 17);
        let n = f.len();
        f.gen_rate_bps = (0..n)
            .map(|i| {
                if i % 3 == 0 {
                    NO_RATE
                } else {
                    100_000_000 * (1 + (i as u64 * 7) % 60)
                }
            })
            .collect();
        f.cached_bytes = (0..n)
            .map(|i| if i % 4 == 0 { f.size_bytes[i] / 4 } else { 0 })
            .collect();
        let one = run(&cfg, &f, None, 1).unwrap();
        let two = run(&cfg, &f, None, 2).unwrap();
        assert_eq!(two.stats.threads, 2);
        assert_eq!(one.results, two.results, "{scheme:?}");
        assert_eq!(comparable(&one.stats), comparable(&two.stats), "{scheme:?}");
        conserved(&one);
        for i in 0..n {
            let r = &one.results;
            assert!(
                r.app_done_ps[i] >= r.start_ps[i] && r.app_done_ps[i] <= r.sender_done_ps[i],
                "flow {i}"
            );
            if f.gen_rate_bps[i] != NO_RATE {
                let gen = time_to_generate(f.size_bytes[i] - f.cached_bytes[i], f.gen_rate_bps[i]);
                assert!(
                    r.finish_ps[i] - r.start_ps[i] >= gen,
                    "flow {i} finished before its last byte existed"
                );
                assert!(r.ideal_fct_ps[i] >= gen);
            }
        }
    }
}
