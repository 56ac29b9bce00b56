//! Fixtures shared by the engine's scenario tests.
#![allow(dead_code)] // each test binary uses its own subset

use fctlab_sim::config::*;
use fctlab_sim::{FlowSet, RunStats};

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

/// Random pairs and sizes (a fixed LCG), `gap_ps` apart.
pub fn random_flows(n: u64, hosts: u32, max_size: u64, gap_ps: u64, seed: u64) -> FlowSet {
    let mut x = seed;
    let mut list = Vec::new();
    for i in 0..n {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let src = (x >> 33) as u32 % hosts;
        let dst = (src + 1 + (x >> 13) as u32 % (hosts - 1)) % hosts;
        let size = 1 + (x >> 20) % max_size;
        list.push((src, dst, size, i * gap_ps));
    }
    flows(&list)
}

/// The stats that do not depend on the thread count or the machine (wall clock, the event queue's size).
pub fn comparable(s: &RunStats) -> RunStats {
    RunStats {
        max_event_queue_len: 0,
        wall_seconds: 0.0,
        events_per_second: 0.0,
        htsim_equivalent_events_per_second: 0.0,
        threads: 0,
        threads_note: String::new(),
        thread_wait_seconds: Vec::new(),
        ..s.clone()
    }
}
