//! The PDQ paper's two dynamics examples (section 5.4) for every explicit-rate scheme, as a table: Figure 6's
//! five ~1 MB flows started together on one 1 Gbps bottleneck, and Figure 7's burst of 50 short flows
//! preempting a long one, on one switch and on the tree of `fctlab reproduce pdq` (4 leaves of 3 hosts, one
//! spine, 10 us links; the long flow from host 1, the short ones from hosts 2-11 in turn, all to host 0). A
//! diagnostic, not a check (the checks are in `tests/rate.rs`):
//!
//!     cargo run --release -p fctlab-sim --example rate_dynamics

use fctlab_sim::config::Config;
use fctlab_sim::{FlowSet, RunOutput};

const MS: u64 = 1_000_000_000;

/// `hosts` hosts on one switch, 1 Gbps links of 37.5 us each (a 150 us round trip), one queue per port.
fn star(scheme: &str, hosts: u32) -> Config {
    let text = format!(
        r#"{{"scheme": {{"name": "{scheme}"}},
            "topology": {{"kind": "single_switch", "hosts": {hosts}, "host_link_gbps": 1.0,
                          "host_link_delay_ns": 37500}},
            "switch": {{"queues": 1}}}}"#
    );
    Config::from_json(&text).expect("a valid config")
}

/// The tree of `fctlab reproduce pdq`: 4 leaves of 3 hosts, one spine, 1 Gbps links of 10 us.
fn tree(scheme: &str) -> Config {
    let text = format!(
        r#"{{"scheme": {{"name": "{scheme}"}},
            "topology": {{"kind": "leaf_spine", "leaves": 4, "hosts_per_leaf": 3, "spines": 1, "host_link_gbps": 1.0,
                          "core_link_gbps": 1.0, "host_link_delay_ns": 10000, "core_link_delay_ns": 10000}},
            "switch": {{"queues": 1, "buffer_bytes": 150000}}}}"#
    );
    Config::from_json(&text).expect("a valid config")
}

fn flows(list: &[(u32, u32, u64, u64)]) -> FlowSet {
    FlowSet {
        src: list.iter().map(|f| f.0).collect(),
        dst: list.iter().map(|f| f.1).collect(),
        size_bytes: list.iter().map(|f| f.2).collect(),
        start_ps: list.iter().map(|f| f.3).collect(),
        ..FlowSet::default()
    }
}

fn run(cfg: &Config, f: &FlowSet) -> RunOutput {
    fctlab_sim::run(cfg, f, None, 1).expect("valid flows")
}

fn main() {
    let ms = |t: u64| t as f64 / MS as f64;
    for scheme in ["pdq", "pdq-es-et", "pdq-es", "pdq-basic", "d3", "rcp"] {
        let list: Vec<(u32, u32, u64, u64)> = (0..5).map(|i| (i, 5, 1_000_000 + 1_000 * i as u64, 0)).collect();
        let out = run(&star(scheme, 6), &flows(&list));
        let fct: Vec<String> = (0..5).map(|i| format!("{:.2}", ms(out.results.finish_ps[i]))).collect();
        println!(
            "{scheme:10} convergence: finish [ms] {} max queue {} B, drops {}",
            fct.join(" "),
            out.stats.max_port_occupancy_bytes,
            out.stats.drops
        );
        for on_tree in [false, true] {
            let (rx, long_src) = if on_tree { (0u32, 1u32) } else { (10, 0) };
            let mut list = vec![(long_src, rx, 6_000_000u64, 0u64)];
            for k in 0..50u64 {
                let src = if on_tree { 2 + (k % 10) as u32 } else { 1 + (k % 9) as u32 };
                list.push((src, rx, 20_000 + 10 * k, 10 * MS));
            }
            let cfg = if on_tree { tree(scheme) } else { star(scheme, 11) };
            let out = run(&cfg, &flows(&list));
            let last = (1..51).map(|i| out.results.finish_ps[i]).max().unwrap_or(0);
            let wire: f64 = (1..51).map(|i| list[i].2 as f64 * 1500.0 / 1460.0).sum();
            let util = wire * 8.0 / 1e9 / ((last - 10 * MS) as f64 / 1e12);
            println!(
                "{scheme:10} burst{}: short flows done at {:.2} ms (utilization {:.3}), long flow at {:.2} ms, \
                 max queue {} B, drops {}, probes {}",
                if on_tree { " (tree)" } else { "" },
                ms(last),
                util,
                ms(out.results.finish_ps[0]),
                out.stats.max_port_occupancy_bytes,
                out.stats.drops,
                out.results.probes.iter().sum::<u32>()
            );
        }
    }
}
