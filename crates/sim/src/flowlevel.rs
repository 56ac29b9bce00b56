//! The flow level (`run.level = "flow"`): no packets. Each open flow has a rate from the scheme's allocation rule;
//! the simulation jumps from one event to the next (a flow starts, a flow sends its last bit, a flow's slow-start
//! cap doubles), exact in between, and recomputes the rates at each. The same flows, topology, routing and results
//! as the packet level, at a small fraction of the cost.
//!
//! What a flow uses: the links (egress ports) of its path, each with the port's rate. Under ECMP routing, the path
//! its hash picks at each hop, as a packet of the flow would take. Under packet spraying, a flow's packets spread
//! over every equal-cost next hop, so a hop's resource is the set of ports the flow may use there (all of them
//! pooled: capacity the sum of their rates; flows from other sources that may use any of those ports share it).
//! That pooling is exact when the spread is even, an approximation otherwise.
//!
//! Allocation rules (each an approximation of the packet level, stated so):
//! - **max-min fairness** for tcp, dctcp, l2dct and rcp (window-based and RCP's fair rate): progressive filling;
//!   each flow's own cap (see slow start) is a resource of its own.
//! - **SRPT** for pfabric: flows in order of remaining bytes (then id) each take what their path has left, so a
//!   link serves its most urgent flow at full rate (pFabric's ideal, strict priority by remaining size).
//! - **Criticality order** for pdq (PDQ(Full)'s ideal): earliest deadline first (flows without one after), then
//!   fewest bytes left; each flow takes what its path has left, so a link serves its most critical flow at full
//!   rate. Not modelled: Early Start's overlap, Early Termination, the rate controller's queue. Set-up: PDQ's
//!   request round trip.
//! - **MLFQ** for pias: a flow's queue is the number of demotion thresholds its bytes sent have passed (bytes on
//!   the wire: a segment's headers ride with its payload; one event per threshold passed); queues in strict
//!   priority, each max-min on what the more urgent ones left.
//!
//! What the packet level has and an isolated flow needs to take the same time at both levels:
//! - **Bytes on the wire**: payload plus `transport.header_bytes` per `mss_bytes` segment.
//! - **Pipeline latency**: a flow's last bit leaves its sender when its wire bits are sent at its rate; it arrives
//!   after the store-and-forward pipeline of its path: the isolated flow's ideal FCT (`engine::ideal_fct`) minus
//!   its wire bits at the path's bottleneck rate, added at the end.
//! - **Set-up**: one round trip of header-only packets before the data with `transport.handshake` (the TCP
//!   family), and for RCP (its rate request). The base RTT of slow start is a full segment's way to the
//!   destination and an ACK's way back.
//! - **Slow start** (the window-based schemes: tcp, dctcp, l2dct, pfabric): in each base RTT from the data's start
//!   a flow may send a window's worth (at the rate it is allocated), then waits for the next round; the window
//!   starts at `init_cwnd_packets` segments and doubles every round until it holds a base RTT's worth at line
//!   rate, from when it no longer binds. Two events per round (the window used up, the next round). With
//!   `max_cwnd_packets` the rate is capped at that many segments per base RTT.
//!
//! Not modelled: queueing delay, losses, timeouts, ECN dynamics (DCTCP is max-min here), and the other schemes
//! (an experiment asking for them at the flow level is refused with the list of those it has).

use crate::config::{Config, RoutingMode, SchemeName};
use crate::engine::{ideal_fct, RunOutput, RunStats};
use crate::flows::{FlowError, FlowResults, FlowSet, NO_DEADLINE};
use crate::net::{flow_hash, Network};
use crate::units::{tx_time, Ps, NEVER, PS_PER_MS};
use rand::{RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};

/// The schemes the flow level has a model for, with the model's name.
pub const SCHEMES: [(&str, &str); 7] = [
    ("tcp", "max-min"),
    ("dctcp", "max-min"),
    ("l2dct", "max-min"),
    ("rcp", "max-min"),
    ("pfabric", "SRPT"),
    ("pias", "MLFQ: strict priority by bytes sent, max-min within a queue"),
    ("pdq", "criticality order: earliest deadline, then fewest bytes left, each taking what its path has left"),
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Model {
    MaxMin,
    Srpt,
    /// PDQ: flows in order of criticality (earliest deadline first, flows without one after; then fewest bytes
    /// left), each taking what its path has left.
    Critical,
    /// PIAS: a flow's queue is the number of demotion thresholds its bytes sent have passed; queues are served
    /// in strict priority, flows within a queue max-min fairly.
    Mlfq,
}

fn model_of(name: SchemeName) -> Option<Model> {
    match name {
        SchemeName::Tcp | SchemeName::Dctcp | SchemeName::L2dct | SchemeName::Rcp => Some(Model::MaxMin),
        SchemeName::Pfabric => Some(Model::Srpt),
        SchemeName::Pias => Some(Model::Mlfq),
        SchemeName::Pdq => Some(Model::Critical),
        _ => None,
    }
}

/// Is there a flow-level model for this scheme?
pub fn supports(name: SchemeName) -> bool {
    model_of(name).is_some()
}

/// One open flow.
#[derive(Debug, Clone)]
struct Open {
    id: u32,
    /// Resources (indices into the resource table) its path uses.
    path: Vec<u32>,
    /// Wire bits still to send.
    left: f64,
    rate: f64,
    /// Its own cap on the rate for the allocation (bit/s): `line`, or 0 while its window is used up.
    cap: f64,
    /// The NIC's rate (and `max_cwnd_packets` per base RTT, when set).
    line: f64,
    /// Slow start: the window (bits), the bits it still allows in this round, and when the next round starts
    /// (NEVER once the window no longer binds: at least a base RTT's worth at `line`).
    win: f64,
    allow: f64,
    round_at: Ps,
    rtt: Ps,
    /// Added to the time the last bit leaves: the path's pipeline latency.
    tail: Ps,
    /// MLFQ: wire bits sent, and the queue (thresholds passed).
    sent: f64,
    class: u8,
    /// PDQ: the flow's deadline (absolute; NO_DEADLINE if none).
    deadline: Ps,
}

/// Resources: ports, or pooled sets of ports under spraying; built once per run.
struct Resources {
    capacity: Vec<f64>,
    ids: BTreeMap<Vec<u32>, u32>,
}

impl Resources {
    fn id(&mut self, ports: Vec<u32>, net: &Network) -> u32 {
        if let Some(&id) = self.ids.get(&ports) {
            return id;
        }
        let id = self.capacity.len() as u32;
        self.capacity.push(ports.iter().map(|&p| net.ports[p as usize].rate_bps as f64).sum());
        self.ids.insert(ports, id);
        id
    }
}

/// Run `flows` at the flow level (see the module docs).
pub fn run(cfg: &Config, flows: &FlowSet) -> Result<RunOutput, FlowError> {
    let wall = std::time::Instant::now();
    let Some(model) = model_of(cfg.scheme.name) else {
        let have: Vec<&str> = SCHEMES.iter().map(|s| s.0).collect();
        return Err(FlowError(format!(
            "run.level = \"flow\": scheme {} has no flow-level model yet (the flow level has: {})",
            cfg.scheme.name.as_str(),
            have.join(", ")
        )));
    };
    if flows.gen_rate_bps.iter().any(|&r| r != crate::flows::NO_RATE) {
        return Err(FlowError(
            "run.level = \"flow\": flows with a data generation rate (gen_rate_bps) are not modelled at the flow \
             level yet; run them at the packet level"
                .into(),
        ));
    }
    // the packet level's ECMP salts: the first draw of the same seeder
    let net: Network = Network::build(cfg, Xoshiro256PlusPlus::seed_from_u64(cfg.seed).next_u64());
    let t = &cfg.transport;
    let (mss, header) = (t.mss_bytes, t.header_bytes);
    let spray = cfg.routing.mode == RoutingMode::Spray;
    // PIAS's thresholds (payload bytes) in wire bits: a segment's headers ride with its payload
    let th_bits: Vec<f64> = if model == Model::Mlfq {
        let per_byte = 8.0 * (mss + header) as f64 / mss as f64;
        cfg.scheme.thresholds_bytes.iter().map(|&b| b as f64 * per_byte).collect()
    } else {
        Vec::new()
    };
    let window = matches!(
        cfg.scheme.name,
        SchemeName::Tcp | SchemeName::Dctcp | SchemeName::L2dct | SchemeName::Pfabric | SchemeName::Pias
    );
    let setup_rtts =
        u64::from(t.handshake && window) + u64::from(matches!(cfg.scheme.name, SchemeName::Rcp | SchemeName::Pdq));
    let limit = (cfg.run.time_limit_ms * PS_PER_MS as f64).round() as Ps;
    let n = flows.len();
    let mut results = FlowResults::new(n);
    let mut stats = RunStats { flows: n as u64, threads: 1, ..RunStats::default() };
    let mut res = Resources { capacity: Vec::new(), ids: BTreeMap::new() };

    // arrivals: independent flows at their start; children when their parent finishes
    let mut children: Vec<Vec<u32>> = vec![Vec::new(); n];
    let mut arrivals: BinaryHeap<Reverse<(Ps, u32)>> = BinaryHeap::new();
    for i in 0..n {
        match flows.parent(i) {
            Some(p) => children[p as usize].push(i as u32),
            None => arrivals.push(Reverse((flows.start_ps[i], i as u32))),
        }
    }
    let mut open: Vec<Open> = Vec::new();
    let mut held: Vec<(Ps, Open)> = Vec::new();
    let mut now: Ps = 0;
    let mut scratch = Scratch::default();
    loop {
        // the next event: an arrival, a last bit, a cap doubling
        let mut next = arrivals.peek().map_or(NEVER, |r| r.0 .0);
        for &(at, _) in &held {
            next = next.min(at);
        }
        for f in &open {
            if f.rate > 0.0 {
                next = next.min(after(now, f.left, f.rate));
                if f.round_at != NEVER && f.allow > 0.0 {
                    // the window runs out
                    next = next.min(after(now, f.allow, f.rate));
                }
                if let Some(&th) = th_bits.get(f.class as usize) {
                    // the flow passes its queue's threshold
                    next = next.min(after(now, (th - f.sent).max(0.0), f.rate));
                }
            }
            next = next.min(f.round_at);
        }
        if next == NEVER || next > limit {
            stats.hit_time_limit = next != NEVER;
            break;
        }
        let dt = (next - now) as f64 / 1e12;
        now = next;
        stats.events += 1;
        // progress, completions
        let mut k = 0;
        while k < open.len() {
            let f = &mut open[k];
            f.left -= f.rate * dt;
            f.allow -= f.rate * dt;
            f.sent += f.rate * dt;
            if f.left <= 1e-6 || (f.rate > 0.0 && f.left / f.rate * 1e12 < 1.0) {
                let id = f.id as usize;
                results.finish_ps[id] = now + f.tail;
                results.sender_done_ps[id] = now;
                results.bytes_sent[id] = flows.size_bytes[id];
                results.bytes_delivered[id] = flows.size_bytes[id];
                stats.flows_finished += 1;
                for &c in &children[id] {
                    arrivals.push(Reverse((flows.start_ps[c as usize].max(now + f.tail), c)));
                }
                open.swap_remove(k);
            } else {
                k += 1;
            }
        }
        // slow start: a new round doubles the window; a window of a base RTT's worth no longer binds
        for f in &mut open {
            if f.round_at <= now {
                f.win *= 2.0;
                f.allow = f.win;
                f.round_at = if f.win < f.line * f.rtt as f64 / 1e12 { now + f.rtt } else { NEVER };
            }
            if f.round_at != NEVER && f.allow * 1e12 < f.line {
                f.allow = 0.0; // (less than a picosecond's worth: used up)
            }
            // (a flow within a picosecond's worth of a threshold has passed it)
            while th_bits.get(f.class as usize).is_some_and(|&th| f.sent * 1e12 + f.line > th * 1e12) {
                f.class += 1;
            }
            f.cap = if f.round_at != NEVER && f.allow <= 0.0 { 0.0 } else { f.line };
        }
        // arrivals (their data starts after the set-up round trips)
        while let Some(&Reverse((at, id))) = arrivals.peek() {
            if at > now {
                break;
            }
            arrivals.pop();
            let i = id as usize;
            let (src, dst, size) = (flows.src[i], flows.dst[i], flows.size_bytes[i]);
            let hops = net.ecmp_path(src, dst, flow_hash(id, false));
            let hop_list = net.path_hops(src, dst, flow_hash(id, false));
            let ideal = ideal_fct(&hop_list, size, mss, header);
            let rtt: Ps =
                hop_list.iter().map(|&(r, d)| tx_time(mss + header, r) + tx_time(t.ack_bytes, r) + 2 * d).sum();
            let segs = size.div_ceil(mss as u64).max(1);
            let wire_bits = (size + segs * header as u64) as f64 * 8.0;
            let bottleneck = hop_list.iter().map(|h| h.0).min().unwrap_or(1) as f64;
            let tail = ideal.saturating_sub((wire_bits / bottleneck * 1e12).round() as Ps);
            let path = if spray {
                pooled_path(&net, src, dst, &mut res)
            } else {
                hops.iter().map(|&p| res.id(vec![p], &net)).collect()
            };
            let mut line = net.ports[net.host_port[src as usize] as usize].rate_bps as f64;
            if window && t.max_cwnd_packets > 0 {
                // a window cap: at most max_cwnd segments per base RTT
                line = line.min(t.max_cwnd_packets as f64 * (mss + header) as f64 * 8.0 / (rtt as f64 / 1e12));
            }
            let ctrl_rtt: Ps = hop_list.iter().map(|&(r, d)| 2 * tx_time(t.ack_bytes, r) + 2 * d).sum();
            let win = t.init_cwnd_packets as f64 * (mss + header) as f64 * 8.0;
            let round_at =
                if window && win < line * rtt as f64 / 1e12 { now + setup_rtts * ctrl_rtt + rtt } else { NEVER };
            results.start_ps[i] = at;
            results.ideal_fct_ps[i] = ideal;
            stats.connections_opened += 1;
            let f = Open {
                id,
                path,
                left: wire_bits,
                rate: 0.0,
                cap: line,
                line,
                win,
                allow: win,
                round_at,
                rtt,
                tail,
                sent: 0.0,
                class: 0,
                deadline: flows.deadline_ps.get(i).copied().unwrap_or(NO_DEADLINE),
            };
            // (the set-up round trips are a wait before the data: header-only packets both ways)
            held.push((now + setup_rtts * ctrl_rtt, f));
            stats.max_concurrent_flows = stats.max_concurrent_flows.max((open.len() + held.len()) as u64);
        }
        let mut k = 0;
        while k < held.len() {
            if held[k].0 <= now {
                open.push(held.swap_remove(k).1);
            } else {
                k += 1;
            }
        }
        allocate(model, &mut open, &res.capacity, &mut scratch);
    }
    // flows still open: unfinished
    stats.sim_time_ps = now;
    stats.wall_seconds = wall.elapsed().as_secs_f64();
    stats.events_per_second = stats.events as f64 / stats.wall_seconds.max(1e-9);
    Ok(RunOutput { results, stats })
}

/// When `bits` at `rate` (bit/s) are sent, from `now` (rounded up to the picosecond); NEVER if not within the
/// clock's range (a rate that float rounding left a hair above zero must not wrap the clock around).
#[inline]
fn after(now: Ps, bits: f64, rate: f64) -> Ps {
    let t = (bits / rate * 1e12).ceil();
    if t.is_finite() && t < (NEVER - now) as f64 {
        now + t as Ps
    } else {
        NEVER
    }
}

/// Under spraying: at each hop, every port a packet of the flow may take, pooled (see the module docs).
fn pooled_path(net: &Network, src: u32, dst: u32, res: &mut Resources) -> Vec<u32> {
    let mut path = vec![res.id(vec![net.host_port[src as usize]], net)];
    let mut nodes = vec![net.ports[net.host_port[src as usize] as usize].peer];
    while !(nodes.len() == 1 && nodes[0] == dst) {
        let mut ports: Vec<u32> = nodes.iter().flat_map(|&n| net.candidates(n, dst).iter().copied()).collect();
        ports.sort_unstable();
        ports.dedup();
        let mut next: Vec<u32> = ports.iter().map(|&p| net.ports[p as usize].peer).collect();
        next.sort_unstable();
        next.dedup();
        path.push(res.id(ports, net));
        nodes = next;
        assert!(path.len() <= net.nodes.len(), "routing loop from {src} to {dst}");
    }
    path
}

#[derive(Default)]
struct Scratch {
    heap: BinaryHeap<Reverse<(OrdF64, u32)>>,
    to_freeze: Vec<usize>,
    residual: Vec<f64>,
    count: Vec<u32>,
    frozen: Vec<bool>,
    order: Vec<usize>,
    users: Vec<Vec<usize>>,
}

/// The rates of the open flows under `model`.
fn allocate(model: Model, open: &mut [Open], capacity: &[f64], s: &mut Scratch) {
    s.residual.clear();
    s.residual.extend_from_slice(capacity);
    match model {
        Model::Srpt | Model::Critical => {
            s.order.clear();
            s.order.extend(0..open.len());
            let by_deadline = model == Model::Critical;
            s.order.sort_by(|&a, &b| {
                let (fa, fb) = (&open[a], &open[b]);
                let d = if by_deadline { fa.deadline.cmp(&fb.deadline) } else { std::cmp::Ordering::Equal };
                d.then(fa.left.total_cmp(&fb.left)).then(fa.id.cmp(&fb.id))
            });
            for &k in &s.order {
                let f = &open[k];
                let r = f.path.iter().map(|&l| s.residual[l as usize]).fold(f.cap, f64::min).max(0.0);
                for &l in &f.path {
                    s.residual[l as usize] -= r;
                }
                open[k].rate = r;
            }
        }
        Model::MaxMin => max_min(open, s, |_| true),
        Model::Mlfq => {
            // queue by queue, each on what the more urgent ones left
            let last = open.iter().map(|f| f.class).max().unwrap_or(0);
            for c in 0..=last {
                max_min(open, s, |f| f.class == c);
            }
        }
    }
}

/// Progressive filling: repeatedly the most constrained resource (a link's residual over its unfrozen flows, or
/// a flow's own cap) fixes the rates of its flows.
fn max_min(open: &mut [Open], s: &mut Scratch, take: impl Fn(&Open) -> bool) {
    let links = s.residual.len();
    s.count.clear();
    s.count.resize(links, 0);
    s.users.iter_mut().for_each(|u| u.clear());
    s.users.resize(links, Vec::new());
    s.frozen.clear();
    s.frozen.resize(open.len(), false);
    let mut left = 0;
    for (k, f) in open.iter().enumerate() {
        if !take(f) {
            s.frozen[k] = true; // (not this round's: left as it is)
            continue;
        }
        left += 1;
        for &l in &f.path {
            s.count[l as usize] += 1;
            s.users[l as usize].push(k);
        }
    }
    // A heap of (share, link), refreshed lazily. Freezing flows at the least share (or a lower cap) never lowers
    // another link's share (it removes flows at no more than that link's average), so an entry can only be
    // stale low: the first entry at the top whose share is still the link's is the least share.
    let mut buf = std::mem::take(&mut s.heap).into_vec();
    buf.clear();
    buf.extend(
        (0..links).filter(|&l| s.count[l] > 0).map(|l| Reverse((OrdF64(s.residual[l] / s.count[l] as f64), l as u32))),
    );
    let mut heap = BinaryHeap::from(buf);
    // flows by their own cap
    s.order.clear();
    s.order.extend(0..open.len());
    s.order.sort_by(|&a, &b| open[a].cap.total_cmp(&open[b].cap));
    let mut next_cap = 0;
    while left > 0 {
        // the least link share that is current
        let mut link_share = f64::INFINITY;
        let mut link = u32::MAX;
        while let Some(&Reverse((OrdF64(share), l))) = heap.peek() {
            let li = l as usize;
            if s.count[li] == 0 || (s.residual[li] / s.count[li] as f64 - share).abs() > 1e-9 * share.abs().max(1.0) {
                heap.pop();
                if s.count[li] > 0 {
                    heap.push(Reverse((OrdF64(s.residual[li] / s.count[li] as f64), l)));
                }
                continue;
            }
            link_share = share;
            link = l;
            break;
        }
        while next_cap < s.order.len() && s.frozen[s.order[next_cap]] {
            next_cap += 1;
        }
        let cap = if next_cap < s.order.len() { open[s.order[next_cap]].cap } else { f64::INFINITY };
        s.to_freeze.clear();
        let rate;
        if cap <= link_share {
            s.to_freeze.push(s.order[next_cap]);
            rate = cap;
        } else if link != u32::MAX {
            let frozen = &s.frozen;
            s.to_freeze.extend(s.users[link as usize].iter().copied().filter(|&k| !frozen[k]));
            rate = link_share;
            heap.pop();
        } else {
            break;
        }
        for &k in &s.to_freeze {
            s.frozen[k] = true;
            open[k].rate = rate.max(0.0);
            left -= 1;
            for &l in &open[k].path {
                let li = l as usize;
                s.residual[li] -= rate;
                s.count[li] -= 1;
            }
        }
    }
    s.heap = heap;
}

/// An f64 ordered totally (for the heap).
#[derive(Debug, Clone, Copy, PartialEq)]
struct OrdF64(f64);
impl Eq for OrdF64 {}
impl PartialOrd for OrdF64 {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for OrdF64 {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&o.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flow(id: u32, path: &[u32], cap: f64) -> Open {
        Open {
            id,
            path: path.to_vec(),
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
            deadline: NO_DEADLINE,
        }
    }

    fn rates(model: Model, caps: &[f64], flows: &mut [Open]) -> Vec<f64> {
        let mut s = Scratch::default();
        allocate(model, flows, caps, &mut s);
        flows.iter().map(|f| f.rate).collect()
    }

    /// The parking lot: one long flow across three unit links, one short flow on each: max-min gives every flow
    /// one half. With the middle link twice as wide, its short flow takes the 1.5 the long one leaves.
    #[test]
    fn parking_lot_is_max_min_fair() {
        let mut f = vec![flow(0, &[0, 1, 2], 9.0), flow(1, &[0], 9.0), flow(2, &[1], 9.0), flow(3, &[2], 9.0)];
        assert_eq!(rates(Model::MaxMin, &[1.0, 1.0, 1.0], &mut f), vec![0.5, 0.5, 0.5, 0.5]);
        let r = rates(Model::MaxMin, &[1.0, 2.0, 1.0], &mut f);
        assert_eq!(r, vec![0.5, 0.5, 1.5, 0.5]);
        // a flow's own cap binds first and leaves the rest to the others
        let mut f = vec![flow(0, &[0], 0.1), flow(1, &[0], 9.0), flow(2, &[0], 9.0)];
        assert_eq!(rates(Model::MaxMin, &[1.0], &mut f), vec![0.1, 0.45, 0.45]);
        // the textbook example with unequal bottlenecks: links of 10 and 4; A on both, B on the first, C, D on
        // the second: C, D, A get 4/3, B the remaining 10 - 4/3
        let mut f = vec![flow(0, &[0, 1], 99.0), flow(1, &[0], 99.0), flow(2, &[1], 99.0), flow(3, &[1], 99.0)];
        let r = rates(Model::MaxMin, &[10.0, 4.0], &mut f);
        let want = [4.0 / 3.0, 10.0 - 4.0 / 3.0, 4.0 / 3.0, 4.0 / 3.0];
        for (a, b) in r.iter().zip(want) {
            assert!((a - b).abs() < 1e-12, "{r:?}");
        }
    }

    /// MLFQ: the more urgent queue takes what it can; the next shares what it leaves, max-min.
    #[test]
    fn mlfq_serves_queues_in_strict_priority() {
        let mut f = vec![flow(0, &[0], 9.0), flow(1, &[0], 9.0), flow(2, &[0, 1], 0.3), flow(3, &[1], 9.0)];
        f[0].class = 1;
        f[1].class = 1;
        f[2].class = 0;
        f[3].class = 2;
        // queue 0: flow 2 at its cap 0.3 on links 0 and 1; queue 1: flows 0, 1 share link 0's 0.7; queue 2:
        // flow 3 takes link 1's remaining 0.7
        let r = rates(Model::Mlfq, &[1.0, 1.0], &mut f);
        for (a, b) in r.iter().zip([0.35, 0.35, 0.3, 0.7]) {
            assert!((a - b).abs() < 1e-12, "{r:?}");
        }
    }

    /// PDQ's criticality: an earlier deadline goes first even with more left; without deadlines, SRPT.
    #[test]
    fn criticality_puts_deadlines_first() {
        let mut f = vec![flow(0, &[0], 9.0), flow(1, &[0], 9.0), flow(2, &[0], 9.0)];
        f[0].left = 9.0;
        f[0].deadline = 5;
        f[1].left = 1.0;
        f[1].deadline = 7;
        f[2].left = 0.5;
        assert_eq!(rates(Model::Critical, &[1.0], &mut f), vec![1.0, 0.0, 0.0]);
        f[0].deadline = NO_DEADLINE;
        f[1].deadline = NO_DEADLINE;
        assert_eq!(rates(Model::Critical, &[1.0], &mut f), vec![0.0, 0.0, 1.0]);
    }

    /// SRPT: the flow with the fewest bits left takes its path's capacity; the rest share what is left in that
    /// order.
    #[test]
    fn srpt_serves_the_shortest_first() {
        let mut f = vec![flow(0, &[0, 1], 9.0), flow(1, &[0], 9.0), flow(2, &[1], 9.0)];
        f[0].left = 5.0;
        f[1].left = 1.0;
        f[2].left = 9.0;
        assert_eq!(rates(Model::Srpt, &[1.0, 1.0], &mut f), vec![0.0, 1.0, 1.0]);
        f[0].left = 0.5;
        assert_eq!(rates(Model::Srpt, &[1.0, 1.0], &mut f), vec![1.0, 0.0, 0.0]);
    }
}
