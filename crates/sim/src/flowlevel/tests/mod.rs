//! The flow level's unit tests, a file per part of the model as in the source (each incremental update against
//! the global pass on random instances, small cases worked by hand, pruning, the timers, the tags, `Open`'s
//! layout); here, the helpers they share.

mod d3;
mod las;
mod maxmin;
mod mlfq;
mod open;
mod ordered;
mod prio;
mod release;
mod resources;
mod schemes;
mod tags;
mod timers;

use super::fluid::EPS;
use super::las::allocate;
use super::maxmin::FillScratch;
use super::open::after;
use super::ordered::order_key;
use super::*;

/// `flowlevel::run` without a progress counter.
fn run(cfg: &Config, flows: &FlowSet) -> Result<RunOutput, FlowError> {
    super::run(cfg, flows, None)
}

fn flow(id: u32, path: &[u32], cap: f64) -> Open {
    Open {
        id,
        hops: std::array::from_fn(|h| path.get(h).copied().unwrap_or(0)),
        hops_len: path.len() as u8,
        pos: [0; MAX_HOPS],
        left: 1e9,
        rate: 0.0,
        cap,
        line: cap,
        win: 0.0,
        allow: 0.0,
        round_at: NEVER,
        rtt: 1,
        tail: 0,
        sent: 0.0,
        class: 0,
        tag_at: f64::INFINITY,
        deadline: NO_DEADLINE,
        term: TERM_NEVER,
        desired: 0.0,
        req_at: NEVER,
        rank: 0.0,
        rank_bits: 0.0,
        grant: -1.0,
        gap: 0,
        wake: 0,
        catch_at: NEVER,
        at: 0,
        act: u32::MAX,
        old_rate: 0.0,
        mark: 0,
        sched: 0,
        froze: NOT_FROZEN,
        ahead: [0.0; MAX_HOPS],
        queued: false,
        cstamp: 0,
        seq: 0,
        src: 0,
        dst: 0,
        granted: false,
        stopped: false,
        win0: 0.0,
        win_max: f64::INFINITY,
    }
}

/// The global allocation of `flows` on resources of capacities `caps`.
/// The randomized checks' resources: 1 to 10 units of capacity, in a few steps.
fn random_caps(draw: &mut impl FnMut(u64) -> u64, links: usize) -> Vec<f64> {
    (0..links).map(|_| [1.0, 2.0, 4.0, 10.0][draw(4) as usize] * (1.0 + draw(3) as f64 / 4.0)).collect()
}

/// A flow's own cap in the randomized checks: none (0), a binding one, or one that never binds.
fn random_cap(draw: &mut impl FnMut(u64) -> u64) -> f64 {
    match draw(4) {
        0 => 0.0,
        1 => 0.1 + draw(40) as f64 / 10.0,
        _ => 100.0,
    }
}

/// A random path of 1 to 4 distinct resources among `links`.
fn random_path(draw: &mut impl FnMut(u64) -> u64, links: usize) -> Vec<u32> {
    let mut path: Vec<u32> = (0..links as u32).collect();
    for i in (1..path.len()).rev() {
        path.swap(i, draw(i as u64 + 1) as usize);
    }
    path.truncate(1 + draw(links.min(4) as u64) as usize);
    path
}

/// Asserts that every active flow's incremental rate is the global recomputation's under `model` (the
/// flows taken in order of id: D3's order of arrival in the tests); returns how many flows were checked.
fn same_as_global(fl: &Fluid, model: Model, caps: &[f64]) -> usize {
    let links = caps.len();
    let mut global = fl.flows.clone();
    let mut set = fl.active.clone();
    set.sort_by_key(|&k| fl.flows[k as usize].id);
    let mut residual = vec![0.0; links];
    let mut scratch =
        FillScratch { count: vec![0; links], users: vec![Vec::new(); links], ..FillScratch::default() };
    allocate(model, &mut global, &set, caps, &mut residual, &mut scratch, 0);
    for &k in &set {
        let (a, b) = (fl.flows[k as usize].rate, global[k as usize].rate);
        assert!((a - b).abs() <= 1e-7, "flow {}: incremental {a}, global {b}", fl.flows[k as usize].id);
    }
    set.len()
}

fn rates(model: Model, caps: &[f64], flows: &mut [Open]) -> Vec<f64> {
    let mut fl = Fluid::default();
    fl.begin();
    let ks: Vec<u32> = flows
        .iter()
        .map(|f| {
            let k = fl.insert(f.clone(), caps);
            fl.activate(k, 0);
            k
        })
        .collect();
    let set = fl.active.clone();
    allocate(model, &mut fl.flows, &set, caps, &mut fl.residual, &mut fl.fill, 0);
    ks.iter().map(|&k| fl.flows[k as usize].rate).collect()
}
