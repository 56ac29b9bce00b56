//! Results handed over in batches as flows finish (`release`) equal the whole run's, row for row: with flows
//! that finish out of id order, flows a time limit leaves unfinished or unstarted, children, and flows a scheme
//! gives up on; the batches come in flow-id order, all of `rows` flows but the last.

use super::*;
use crate::flows::{FlowResults, NO_PARENT};
use crate::record::Batches;

/// Random flows on the 144-host leaf-spine, `n` of them arriving about 40 us apart on average; every seventh
/// waits for an earlier flow when `children`, every third has a deadline when `deadlines`.
fn random_flows(n: usize, children: bool, deadlines: bool) -> FlowSet {
    let mut f = FlowSet::default();
    let mut seed = 11u64;
    let mut draw = || {
        seed = mix64(seed.wrapping_add(1));
        seed
    };
    let mut t = 0;
    for i in 0..n {
        let src = (draw() % 144) as u32;
        f.src.push(src);
        f.dst.push((src + 1 + (draw() % 143) as u32) % 144);
        f.size_bytes.push(1_000 + draw() % 3_000_000);
        t += draw() % 80_000_000;
        f.start_ps.push(t);
        if children {
            f.after.push(if i % 7 == 6 { (draw() % i as u64) as u32 } else { NO_PARENT });
        }
        if deadlines {
            f.deadline_ps.push(if i % 3 == 0 { t + 200_000_000 + draw() % 20_000_000_000 } else { NO_DEADLINE });
        }
    }
    f
}

/// Run batched (`rows` a batch) and put the batches end to end, checking their order and sizes.
fn batched(cfg: &Config, flows: &FlowSet, rows: usize) -> (FlowResults, RunStats) {
    let n = flows.len();
    let mut got: Option<FlowResults> = None;
    let mut next = 0;
    let mut each = |first: usize, b: FlowResults| -> Result<(), FlowError> {
        assert_eq!(first, next, "batches in flow-id order");
        let len = b.start_ps.len();
        assert!(len == rows || first + len == n, "a batch of {len} rows at {first} (n = {n})");
        next += len;
        match got.as_mut() {
            None => got = Some(b),
            Some(g) => {
                let whole = g.start_ps.len() + len;
                g.grow(whole);
                let at = whole - len;
                g.start_ps[at..].copy_from_slice(&b.start_ps);
                g.finish_ps[at..].copy_from_slice(&b.finish_ps);
                g.sender_done_ps[at..].copy_from_slice(&b.sender_done_ps);
                g.ideal_fct_ps[at..].copy_from_slice(&b.ideal_fct_ps);
                g.timeouts[at..].copy_from_slice(&b.timeouts);
                g.bytes_sent[at..].copy_from_slice(&b.bytes_sent);
                g.bytes_delivered[at..].copy_from_slice(&b.bytes_delivered);
                g.terminated[at..].copy_from_slice(&b.terminated);
                // (the columns the flow level never writes stay as `new` made them)
                assert_eq!(b, FlowResults { start_ps: b.start_ps.clone(), finish_ps: b.finish_ps.clone(),
                    sender_done_ps: b.sender_done_ps.clone(), ideal_fct_ps: b.ideal_fct_ps.clone(),
                    timeouts: b.timeouts.clone(), bytes_sent: b.bytes_sent.clone(),
                    bytes_delivered: b.bytes_delivered.clone(), terminated: b.terminated.clone(),
                    ..FlowResults::new(len) });
            }
        }
        Ok(())
    };
    let out = run_pruned(cfg, flows, true, None, Some(Batches { rows, each: &mut each })).unwrap();
    assert_eq!(out.results, FlowResults::new(0));
    assert_eq!(next, n);
    (got.unwrap(), out.stats)
}

fn check(cfg_json: &str, flows: &FlowSet, rows: usize) -> (FlowResults, RunStats) {
    let cfg = Config::from_json(cfg_json).unwrap();
    let whole = run_pruned(&cfg, flows, true, None, None).unwrap();
    let (got, stats) = batched(&cfg, flows, rows);
    assert_eq!(got, whole.results, "{cfg_json}, {rows} rows a batch");
    assert_eq!(stats.flows_finished, whole.stats.flows_finished);
    (got, stats)
}

#[test]
fn batches_equal_the_whole_results() {
    let flows = random_flows(3_000, false, false);
    let spray = r#"{"scheme": {"name": "dctcp"}, "routing": {"mode": "spray"}, "run": {"level": "flow"}}"#;
    for rows in [1, 64, 1_000, 5_000] {
        let (r, stats) = check(spray, &flows, rows);
        assert_eq!(stats.flows_finished, 3_000);
        // (flows that finish after a later flow: the watermark holds them back)
        let late = (1..3_000).filter(|&i| r.finish_ps[i - 1] > r.finish_ps[i]).count();
        assert!(late > 100, "{late} flows finish before the flow before them");
    }
}

#[test]
fn batches_equal_the_whole_results_at_a_time_limit_with_children() {
    let flows = random_flows(2_000, true, false);
    let cfg = r#"{"scheme": {"name": "dctcp"}, "run": {"level": "flow", "time_limit_ms": 40}}"#;
    let (r, stats) = check(cfg, &flows, 100);
    assert!(stats.hit_time_limit);
    let unfinished = r.finish_ps.iter().filter(|&&f| f == NEVER).count();
    let unstarted = r.start_ps.iter().filter(|&&s| s == NEVER).count();
    assert!(unfinished > 500 && unstarted > 100, "{unfinished} unfinished, {unstarted} not started");
}

#[test]
fn batches_equal_the_whole_results_with_flows_given_up() {
    let flows = random_flows(2_000, false, true);
    for scheme in ["d3", "pdq"] {
        let cfg = format!(r#"{{"scheme": {{"name": "{scheme}"}}, "run": {{"level": "flow"}}}}"#);
        let (r, _) = check(&cfg, &flows, 128);
        assert!(r.terminated.iter().filter(|&&t| t).count() > 10, "{scheme}");
    }
}

/// An error from the receiver of the batches ends the run with it.
#[test]
fn an_error_from_the_batches_receiver_ends_the_run() {
    let flows = random_flows(500, false, false);
    let cfg = Config::from_json(r#"{"scheme": {"name": "dctcp"}, "run": {"level": "flow"}}"#).unwrap();
    let mut calls = 0;
    let mut each = |_: usize, _: FlowResults| -> Result<(), FlowError> {
        calls += 1;
        Err(FlowError::new("disk full"))
    };
    let err = run_pruned(&cfg, &flows, true, None, Some(Batches { rows: 50, each: &mut each })).unwrap_err();
    assert_eq!(err.to_string(), "disk full");
    assert_eq!(calls, 1);
}
