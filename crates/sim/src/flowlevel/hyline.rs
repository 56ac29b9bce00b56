//! HyLine's control plane at the flow level (hyline): the packet level's manager itself (`control::hyline`),
//! fed the same messages at the same times, and what its signals do to the flows.
//!
//! - A first-class flow (at most `hyline_threshold_bytes`, by the size the host knows) is class 0, above every
//!   second-class flow, on its ECMP path, with `transport.*`'s windows.
//! - A second-class flow asks the manager `hyline_tcost_us` after it arrives (RTS, with its candidate paths,
//!   `net::route::paths`, and the remaining bytes of every second-class flow the manager knows, as the packet
//!   level tells it before each decision). It opens (its set-up, then slow start from
//!   `hyline_large_init_cwnd_packets`, the window capped at `hyline_large_max_cwnd_packets`) at its first
//!   CTS, on the path the manager gave it, as class 1; an STS stops it (rate 0, its bits kept); a later CTS
//!   restarts it from its initial window, on the path that CTS names. When its last bit leaves its sender, its
//!   FIN reaches the manager `hyline_signal_us` later; the manager's signals reach the hosts after
//!   `hyline_signal_us` too (0 by default: at once).
//! - A sender's remaining bytes are its bits not yet sent (the packet level counts the bytes not yet
//!   acknowledged, a round trip behind).

use super::fluid::Fluid;
use super::open::Open;
use super::resources::Resources;
use super::MAX_HOPS;
use crate::config::{Config, SizeInfo};
use crate::control::hyline::{Manager, Signal};
use crate::flows::FlowSet;
use crate::net::route::paths;
use crate::net::Network;
use crate::units::{Ps, NEVER, PS_PER_US};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// A control-plane message on its way (as the packet level's).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Msg {
    Rts(u32),
    Fin(u32),
    Go(u32, u32),
    Stop(u32),
}

/// The manager and the second-class flows' state at the hosts.
pub(super) struct Hyline {
    pub(super) man: Manager,
    tcost: Ps,
    signal: Ps,
    info: SizeInfo,
    /// Per flow: second class?
    pub(super) class2: Vec<bool>,
    /// Per flow: its slot once open (u32::MAX before), its candidate paths (ports), whether it opened, sent
    /// its FIN.
    pub(super) slot: Vec<u32>,
    cands: Vec<Vec<Vec<u32>>>,
    started: Vec<bool>,
    fin_sent: Vec<bool>,
    /// The second-class flows the manager knows (requested, no FIN yet).
    known: Vec<u32>,
    msgs: BinaryHeap<Reverse<(Ps, u64, Msg)>>,
    sent: u64,
    out: Vec<Signal>,
    /// Second-class flows' initial window and window cap (segments).
    pub(super) large_win_packets: f64,
    pub(super) large_max_cwnd: f64,
}

impl Hyline {
    pub(super) fn new(cfg: &Config, flows: &FlowSet, net: &Network) -> Self {
        let sc = &cfg.scheme;
        let us = |x: f64| (x * PS_PER_US as f64).round() as Ps;
        let info = sc.size_view();
        let n = flows.len();
        let capacity: Vec<u64> = net.ports.iter().map(|p| p.rate_bps).collect();
        Hyline {
            // (the packet level's seed for the manager's ties)
            man: Manager::new(&capacity, cfg.seed ^ 0x4879_4c69_6e65),
            tcost: us(sc.hyline_tcost_us),
            signal: us(sc.hyline_signal_us),
            info,
            class2: (0..n).map(|i| flows.known_at_start(i, info) > sc.hyline_threshold_bytes).collect(),
            slot: vec![u32::MAX; n],
            cands: vec![Vec::new(); n],
            started: vec![false; n],
            fin_sent: vec![false; n],
            known: Vec::new(),
            msgs: BinaryHeap::new(),
            sent: 0,
            out: Vec::new(),
            large_win_packets: sc.hyline_large_init_cwnd_packets,
            large_max_cwnd: sc.hyline_large_max_cwnd_packets,
        }
    }

    fn post(&mut self, at: Ps, msg: Msg) {
        self.sent += 1;
        self.msgs.push(Reverse((at, self.sent, msg)));
    }

    /// When the next message is due (NEVER: none).
    pub(super) fn next_at(&self) -> Ps {
        self.msgs.peek().map_or(NEVER, |m| m.0 .0)
    }

    /// A second-class flow arrived: its RTS leaves for the manager.
    pub(super) fn arrive(&mut self, id: u32, now: Ps) {
        self.post(now + self.tcost, Msg::Rts(id));
    }

    /// A second-class flow's last bit left its sender: its FIN leaves for the manager.
    pub(super) fn last_bit(&mut self, id: u32, now: Ps) {
        if !self.fin_sent[id as usize] {
            self.fin_sent[id as usize] = true;
            self.post(now + self.signal, Msg::Fin(id));
        }
    }

    /// The ports of path `p` of flow `id`'s candidates.
    pub(super) fn path(&self, id: u32, p: u32) -> &[u32] {
        &self.cands[id as usize][p as usize]
    }

    /// The remaining bytes of every second-class flow the manager knows, as their senders count them.
    fn refresh(&mut self, now: Ps, fl: &Fluid, flows: &FlowSet, mss: u32, header: u32) {
        for &f in &self.known {
            let k = self.slot[f as usize];
            let done = if self.fin_sent[f as usize] {
                flows.size_bytes[f as usize]
            } else if k == u32::MAX {
                0
            } else {
                let o = &fl.flows[k as usize];
                super::payload_of(o.sent + (o.left - o.left_at(now)), mss, header)
            };
            let r = flows.known_remaining(f as usize, self.info, done);
            self.man.set_remaining(f, r, now);
        }
    }

    /// Deliver the messages due at `now`. A first CTS adds the flow to `admit` (it opens with this event's
    /// arrivals); STS and later CTSs act on its slot.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn control(
        &mut self,
        now: Ps,
        fl: &mut Fluid,
        res: &mut Resources,
        net: &Network,
        flows: &FlowSet,
        (mss, header): (u32, u32),
        admit: &mut Vec<(u32, u32)>,
    ) {
        while let Some(&Reverse((at, _, msg))) = self.msgs.peek() {
            if at > now {
                break;
            }
            self.msgs.pop();
            match msg {
                Msg::Rts(f) => {
                    let i = f as usize;
                    let (src, dst) = (flows.src[i], flows.dst[i]);
                    self.cands[i] = paths(net, src, dst).into_iter().map(|(_, p)| p).collect();
                    self.refresh(now, fl, flows, mss, header);
                    let remaining = flows.known_at_start(i, self.info);
                    let mut out = std::mem::take(&mut self.out);
                    self.man.request(now, f, remaining, net.line_rate_bps(src), self.cands[i].clone(), &mut out);
                    self.known.push(f);
                    self.signals(now, &mut out, fl, res, net, admit);
                    self.out = out;
                }
                Msg::Fin(f) => {
                    self.known.retain(|&k| k != f);
                    self.refresh(now, fl, flows, mss, header);
                    let mut out = std::mem::take(&mut self.out);
                    self.man.finish(now, f, &mut out);
                    self.signals(now, &mut out, fl, res, net, admit);
                    self.out = out;
                }
                Msg::Go(f, p) => self.go(f, p, now, fl, res, net, admit),
                Msg::Stop(f) => self.stop(f, now, fl),
            }
        }
    }

    fn signals(
        &mut self,
        now: Ps,
        out: &mut Vec<Signal>,
        fl: &mut Fluid,
        res: &mut Resources,
        net: &Network,
        admit: &mut Vec<(u32, u32)>,
    ) {
        for s in out.drain(..) {
            let msg = match s {
                Signal::Go { flow, path } => Msg::Go(flow, path),
                Signal::Stop { flow } => Msg::Stop(flow),
            };
            if self.signal == 0 {
                match msg {
                    Msg::Go(f, p) => self.go(f, p, now, fl, res, net, admit),
                    Msg::Stop(f) => self.stop(f, now, fl),
                    _ => unreachable!(),
                }
            } else {
                self.post(now + self.signal, msg);
            }
        }
    }

    /// A CTS: the first opens the flow (on that path, with this event's arrivals); a later one restarts a
    /// stopped flow from its initial window, on the path it names.
    #[allow(clippy::too_many_arguments)]
    fn go(&mut self, f: u32, p: u32, now: Ps, fl: &mut Fluid, res: &mut Resources, net: &Network, admit: &mut Vec<(u32, u32)>) {
        let i = f as usize;
        if self.fin_sent[i] {
            return;
        }
        if !self.started[i] {
            self.started[i] = true;
            admit.push((f, p));
            return;
        }
        let k = self.slot[i];
        if k == u32::MAX || !fl.flows[k as usize].stopped {
            return; // (opening this event, or already sending)
        }
        let mut hops = [0; MAX_HOPS];
        let mut n = 0;
        for &port in &self.cands[i][p as usize] {
            let r = res.of_port(port, net);
            if res.kept[r as usize] {
                hops[n] = r;
                n += 1;
            }
        }
        // (room for resources its new path is the first to use)
        fl.reserve(&res.capacity);
        fl.restart(k, now, &hops[..n]);
    }

    /// An STS: a flow that is sending stops; one that never opened goes on waiting.
    fn stop(&mut self, f: u32, now: Ps, fl: &mut Fluid) {
        let i = f as usize;
        if self.fin_sent[i] || !self.started[i] {
            return;
        }
        let k = self.slot[i];
        if k == u32::MAX {
            return;
        }
        fl.halt(k, now);
    }
}

impl Fluid {
    /// HyLine's STS: flow `k` stops (its own cap 0) until a CTS restarts it.
    pub(super) fn halt(&mut self, k: u32, now: Ps) {
        let f = &mut self.flows[k as usize];
        if f.stopped {
            return;
        }
        f.sync(now);
        f.stopped = true;
        f.cap = 0.0;
        if f.act != u32::MAX {
            self.changed(k);
            self.resched.push(k);
        }
    }

    /// HyLine's later CTS: stopped flow `k` restarts from its initial window on the resources `hops`.
    pub(super) fn restart(&mut self, k: u32, now: Ps, hops: &[u32]) {
        let f = &mut self.flows[k as usize];
        f.sync(now);
        f.stopped = false;
        f.win = f.win0;
        f.allow = f.win;
        f.round_at = if f.win < f.line * f.rtt as f64 / 1e12 { now + f.rtt } else { NEVER };
        f.cap = f.line;
        let same = f.path() == hops;
        if f.act == u32::MAX {
            if !same {
                f.hops[..hops.len()].copy_from_slice(hops);
                f.hops_len = hops.len() as u8;
            }
            return;
        }
        if !same {
            self.reroute(k, hops);
        }
        self.changed(k);
        self.resched.push(k);
    }

    /// Active flow `k` moves to the resources `hops` (in its queue's layer): off the old ones (which lose its
    /// rate, as from a finished flow), onto the new ones as a flow to fill.
    fn reroute(&mut self, k: u32, hops: &[u32]) {
        let c = self.flows[k as usize].class;
        let layered = !self.layers.is_empty();
        if layered {
            self.swap(c);
        }
        self.detach(k);
        let f = &mut self.flows[k as usize];
        f.hops[..hops.len()].copy_from_slice(hops);
        f.hops_len = hops.len() as u8;
        self.attach(k);
        if layered {
            self.swap(c);
        }
    }
}

/// A flow's own cap when its window does not bind: its line rate, 0 while HyLine's manager has it stopped.
pub(super) fn own_cap(f: &Open) -> f64 {
    if f.stopped {
        0.0
    } else {
        f.line
    }
}
