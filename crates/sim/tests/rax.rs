//! RAX and remaining-time scheduling on the RAX paper's own examples, whose answers follow from the rates:
//! the two-flow example of section II-B (pFabric by remaining size against pFabric by remaining time), and the
//! copy-rate measurement of section II-C (the copy rate follows the generation rate when the send buffer is
//! large, the transmission rate when it is small).

mod common;

use common::{dumbbell, flows};
use fctlab_sim::config::*;
use fctlab_sim::units::NEVER;
use fctlab_sim::{run, FlowSet, RunOutput};

fn fct_s(out: &RunOutput, f: &FlowSet, i: usize) -> f64 {
    assert_ne!(out.results.finish_ps[i], NEVER, "flow {i} unfinished");
    (out.results.finish_ps[i] - f.start_ps[i]) as f64 / 1e12
}

fn close(got: f64, want: f64, tol: f64, what: &str) {
    assert!(
        (got / want - 1.0).abs() <= tol,
        "{what}: {got} vs {want} (tolerance {tol})"
    );
}

/// Section II-B, sizes scaled down by 10 (same ratios): flow A, 10 MB generated at 5 Gbit/s, and flow B,
/// 15 MB at 10 Gbit/s, from one host to another through one switch with 10 Gbit/s links, under pFabric.
fn two_flows(rank: RankBy) -> (f64, f64) {
    let mut cfg = Config::for_scheme(SchemeName::Pfabric, Preset::PfabricNs2);
    cfg.topology = TopologyConfig::SingleSwitch(SingleSwitch {
        hosts: 2,
        host_link_gbps: 10.0,
        host_link_delay_ns: 1_000.0,
    });
    cfg.scheme.rank = rank;
    let mut f = flows(&[(0, 1, 10_000_000, 0), (0, 1, 15_000_000, 0)]);
    f.gen_rate_bps = vec![5_000_000_000, 10_000_000_000];
    let out = run(&cfg, &f, None, 1).unwrap();
    for i in 0..2 {
        assert_eq!(
            out.results.bytes_sent[i],
            out.results.bytes_delivered[i] + out.results.bytes_dropped[i]
        );
    }
    (fct_s(&out, &f, 0), fct_s(&out, &f, 1))
}

#[test]
fn section_2b_remaining_time_beats_remaining_size() {
    // The answers from the rates (x10 for the paper's sizes): by remaining size A goes first and, generated at
    // 5 Gbit/s, finishes at 100 MB / 5 Gbit/s = 0.16 s while B takes the spare capacity and then the link: it
    // finishes when the link has carried both flows, 250 MB x 1500/1460 x 8 / 10 Gbit/s = 0.2055 s (the paper:
    // 0.16 and 0.21 s). By remaining time B (0.12 s) goes first at line rate, 150 MB x 1500/1460 x 8 / 10 Gbit/s =
    // 0.1233 s, and A ends with the link, at 0.2055 s (the paper: 0.12 and 0.21 s).
    let wire = |mb: f64| mb * 1e6 * 1500.0 / 1460.0 * 8.0 / 10e9 / 10.0;
    let (a, b) = two_flows(RankBy::RemainingSize);
    close(a, 0.016, 0.02, "by size, A");
    close(b, wire(250.0), 0.02, "by size, B");
    close(
        (a + b) / 2.0,
        0.0185,
        0.02,
        "by size, the average (paper: 0.185 s at full size)",
    );
    let (a, b) = two_flows(RankBy::RemainingTime);
    close(a, wire(250.0), 0.02, "by time, A");
    close(b, wire(150.0), 0.02, "by time, B");
    close(
        (a + b) / 2.0,
        0.0165,
        0.02,
        "by time, the average (paper: 0.165 s at full size)",
    );
}

/// Section II-C (Fig. 4): generation at 500 Mbit/s, transmission limited to 100 Mbit/s (a 1 Gbit/s host link,
/// a 100 Mbit/s bottleneck). RAX's copy rate starts at the line rate.
fn copy_rate(send_buffer: u64) -> f64 {
    let mut cfg = dumbbell(1, 1.0, 0.1);
    cfg.scheme.name = SchemeName::Rax;
    cfg.transport.send_buffer_bytes = send_buffer;
    let mut f = flows(&[(0, 1, 4_000_000, 0)]);
    f.gen_rate_bps = vec![500_000_000];
    let out = run(&cfg, &f, None, 1).unwrap();
    assert_ne!(out.results.finish_ps[0], NEVER);
    out.results.copy_rate_bps[0]
}

#[test]
fn section_2c_the_copy_rate_tracks_generation_with_a_large_buffer_and_transmission_with_a_small_one() {
    let large = copy_rate(100_000_000);
    close(large, 500e6, 0.05, "100 MB buffer: r_c = r_g");
    let small = copy_rate(16_384);
    // the ACKs free space at the bottleneck's payload rate, 100 Mbit/s x 1460/1500
    close(small, 97.3e6, 0.35, "16 KB buffer: r_c falls to r_t");
}

#[test]
#[ignore = "prints the figures of the examples"]
fn print_examples() {
    println!("size: {:?}", two_flows(RankBy::RemainingSize));
    println!("time: {:?}", two_flows(RankBy::RemainingTime));
    println!(
        "copy rate 100 MB: {}, 16 KB: {}",
        copy_rate(100_000_000),
        copy_rate(16_384)
    );
}
