//! No input reaches a panic: every scheme at both levels, on flows of every size from one byte to u64::MAX, is
//! either refused by `validate::flows` (an error naming the flow and its column) or runs to its time limit. The
//! sizes are the edges of each family's counters (one segment, 2^32 segments, the clock) and a spread between.

mod common;

use fctlab_sim::config::*;
use fctlab_sim::{validate, FlowSet};
use std::panic::{catch_unwind, AssertUnwindSafe};

fn config(row: &SchemeRow, level: Level) -> Option<Config> {
    let mut cfg = Config::for_scheme(row.scheme, Preset::Native);
    cfg.topology = TopologyConfig::Dumbbell(Dumbbell {
        senders: 2,
        receivers: 1,
        host_link_gbps: 10.0,
        core_link_gbps: 10.0,
        host_link_delay_ns: 1_000.0,
        core_link_delay_ns: 1_000.0,
    });
    if row.needs_thresholds {
        cfg.scheme.thresholds_bytes = (1..cfg.switch.queues as u64).map(|q| q * 10_000).collect();
    }
    if row.scheme == SchemeName::Qclimb {
        cfg.scheme.qclimb_info = QclimbInfo::Precise;
    }
    cfg.run.level = level;
    cfg.run.time_limit_ms = 0.2;
    validate::check(&cfg).ok().map(|_| cfg)
}

fn sizes(mss: u64) -> Vec<u64> {
    let most = (u32::MAX as u64 - 2) * mss;
    let mut v = vec![
        1,
        mss,
        mss + 1,
        most - 1,
        most,
        most + 1,
        10_000_000_000_000,
        1 << 62,
        u64::MAX,
    ];
    // a spread of magnitudes between
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    for _ in 0..6 {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        v.push(1 + (x >> (x % 60)) % u64::MAX);
    }
    v
}

#[test]
fn every_size_is_refused_or_runs_at_every_scheme_and_level() {
    let mut ran = 0;
    let mut refused = 0;
    for row in SCHEMES.iter() {
        for level in [Level::Packet, Level::Flow] {
            let Some(cfg) = config(row, level) else {
                continue;
            };
            let most = validate::max_flow_bytes(&cfg);
            for size in sizes(cfg.transport.mss_bytes as u64) {
                let flows: FlowSet = common::flows(&[(0, 2, size, 0), (1, 2, 1_000, 1_000)]);
                let checked = validate::flows(&cfg, &flows);
                assert_eq!(
                    checked.is_ok(),
                    size <= most,
                    "{} {level:?} size {size}: {checked:?}",
                    row.name
                );
                match checked {
                    Err(e) => {
                        let cell = e.cell.clone().expect("a size refused names its cell");
                        assert_eq!((cell.flow, cell.column), (Some(0), "size_bytes"), "{e}");
                        refused += 1;
                    }
                    Ok(()) => {
                        let out = catch_unwind(AssertUnwindSafe(|| {
                            fctlab_sim::run(&cfg, &flows, None, 1)
                        }));
                        match out {
                            Ok(r) => assert!(
                                r.is_ok(),
                                "{} {level:?} size {size}: {:?}",
                                row.name,
                                r.err()
                            ),
                            Err(p) => panic!(
                                "{} {level:?} size {size} panicked: {:?}",
                                row.name,
                                p.downcast_ref::<String>()
                                    .cloned()
                                    .or(p.downcast_ref::<&str>().map(|s| s.to_string()))
                            ),
                        }
                        ran += 1;
                    }
                }
            }
        }
    }
    assert!(ran > 100 && refused > 50, "ran {ran}, refused {refused}");
}
