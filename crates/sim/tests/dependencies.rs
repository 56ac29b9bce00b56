//! Flow dependencies: a flow that waits for another starts when its parent finishes (or at its own start time
//! if that is later); a flow whose parent never finishes never starts and is reported as such.

mod common;

use common::{dumbbell, flows};
use fctlab_sim::flows::NO_PARENT;
use fctlab_sim::units::{NEVER, PS_PER_US};
use fctlab_sim::{run, FlowSet};

fn with_after(list: &[(u32, u32, u64, u64)], after: &[u32]) -> FlowSet {
    let mut f = flows(list);
    f.after = after.to_vec();
    f
}

#[test]
fn a_chain_starts_each_flow_when_its_parent_finishes() {
    let cfg = dumbbell(2, 10.0, 10.0);
    // host 2 is the receiver; a three-link chain: 0 -> 2, then 1 -> 2 after it, then 0 -> 2 after that
    let f = with_after(&[(0, 2, 100_000, 0), (1, 2, 30_000, 0), (0, 2, 5_000, 0)], &[NO_PARENT, 0, 1]);
    let out = run(&cfg, &f, None, 1).unwrap();
    let r = &out.results;
    assert!(r.finish_ps.iter().all(|&t| t != NEVER));
    assert_eq!(r.start_ps[0], 0);
    assert_eq!(r.start_ps[1], r.finish_ps[0], "flow 1 starts the instant flow 0 finishes");
    assert_eq!(r.start_ps[2], r.finish_ps[1]);
    // each runs alone on an idle path: its FCT from its actual start is its ideal FCT
    for i in 0..3 {
        assert_eq!(r.finish_ps[i] - r.start_ps[i], r.ideal_fct_ps[i], "flow {i}");
    }
}

#[test]
fn a_later_own_start_time_wins() {
    let cfg = dumbbell(2, 10.0, 10.0);
    let late = 10_000 * PS_PER_US;
    let f = with_after(&[(0, 2, 10_000, 0), (1, 2, 10_000, late)], &[NO_PARENT, 0]);
    let out = run(&cfg, &f, None, 1).unwrap();
    assert!(out.results.finish_ps[0] < late);
    assert_eq!(out.results.start_ps[1], late);
}

#[test]
fn several_children_start_together_and_independent_flows_are_unaffected() {
    let cfg = dumbbell(3, 10.0, 10.0);
    let list = [(0, 3, 50_000, 0), (1, 3, 1_000, 0), (2, 3, 1_000, 0), (1, 3, 2_000, 7 * PS_PER_US)];
    let out = run(&cfg, &with_after(&list, &[NO_PARENT, 0, 0, NO_PARENT]), None, 1).unwrap();
    let r = &out.results;
    assert_eq!(r.start_ps[1], r.finish_ps[0]);
    assert_eq!(r.start_ps[2], r.finish_ps[0]);
    assert_eq!(r.start_ps[3], 7 * PS_PER_US);
    assert_eq!(out.stats.flows_finished, 4);
    // without dependencies every flow starts at its own time
    let plain = run(&cfg, &flows(&list), None, 1).unwrap();
    assert_eq!(plain.results.start_ps, vec![0, 0, 0, 7 * PS_PER_US]);
}

#[test]
fn children_of_an_unfinished_flow_never_start() {
    let mut cfg = dumbbell(2, 10.0, 10.0);
    cfg.run.time_limit_ms = 0.05; // 50 us: flow 0 (10 MB at 10 Gb/s, 8 ms) cannot finish
    let f = with_after(&[(0, 2, 10_000_000, 0), (1, 2, 1_000, 0), (1, 2, 1_000, 0)], &[NO_PARENT, 0, 1]);
    let out = run(&cfg, &f, None, 1).unwrap();
    assert!(out.stats.hit_time_limit);
    assert_eq!(out.results.finish_ps, vec![NEVER; 3]);
    assert_eq!(out.results.start_ps, vec![0, NEVER, NEVER]);
    assert_eq!(out.results.bytes_sent[1], 0);
}

#[test]
fn a_flow_may_only_wait_for_an_earlier_flow() {
    let cfg = dumbbell(2, 10.0, 10.0);
    for after in [[1, NO_PARENT], [0, NO_PARENT]] {
        let f = with_after(&[(0, 2, 1_000, 0), (1, 2, 1_000, 0)], &after);
        let e = run(&cfg, &f, None, 1).unwrap_err().to_string();
        assert!(e.contains("flow 0 has after_flow") && e.contains("earlier"), "{e}");
    }
    let f = with_after(&[(0, 2, 1_000, 0)], &[NO_PARENT, NO_PARENT]);
    assert!(run(&cfg, &f, None, 1).unwrap_err().to_string().contains("flows.after"));
}
