//! Fixtures shared by the engine's scenario tests.
#![allow(dead_code)] // each test binary uses its own subset

use fctlab_sim::config::*;
use fctlab_sim::FlowSet;

/// Flows from (src, dst, size_bytes, start_ps) tuples, with no priorities, estimates or bounds.
pub fn flows(list: &[(u32, u32, u64, u64)]) -> FlowSet {
    FlowSet {
        src: list.iter().map(|f| f.0).collect(),
        dst: list.iter().map(|f| f.1).collect(),
        size_bytes: list.iter().map(|f| f.2).collect(),
        start_ps: list.iter().map(|f| f.3).collect(),
        ..FlowSet::default()
    }
}

/// `senders` hosts into one receiver across a core link, 1 us per link, engine defaults otherwise.
pub fn dumbbell(senders: u32, host_gbps: f64, core_gbps: f64) -> Config {
    Config {
        topology: TopologyConfig::Dumbbell(Dumbbell {
            senders,
            receivers: 1,
            host_link_gbps: host_gbps,
            core_link_gbps: core_gbps,
            host_link_delay_ns: 1_000.0,
            core_link_delay_ns: 1_000.0,
        }),
        ..Config::default()
    }
}
