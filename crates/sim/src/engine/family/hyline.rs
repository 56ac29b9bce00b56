//! HyLine in the engine (HyLine paper, §IV; the authors' ns-2 code, github.com/Soheil-ab/HyLine): the hosts run
//! TCP (`transport::tcp`, the TCP family's code in `engine::family::tcp`, shared through [`TcpHosts`]), the manager
//! (`control::hyline`) decides which large flows go, on which path, and which stop.
//!
//! **Classes.** A flow of at most `scheme.hyline_threshold_bytes` (H) is first-class: it starts at once at priority
//! 0 (the high-priority queue) on its ECMP path, with `transport.*` (the preset: Table I's initial window 25 and
//! RTO floor 4 ms, and the authors' scripts' window cap of 50). A larger flow is second-class: priority 1, initial
//! window `hyline_large_init_cwnd_packets`, RTO floor `hyline_large_rto_min_us` (Table I: 25 packets, 1 s) and
//! window cap `hyline_large_max_cwnd_packets` (the scripts: 225), and it sends nothing until the manager lets it.
//! Not modelled: the authors' second-class agent restarts from its initial window after a loss instead of
//! halving (`slowdown`); here both classes recover as TCP NewReno with SACK does.
//!
//! **Control plane.** Messages between hosts and the manager take time, as events on the run's clock (one timer
//! entry, id = the flow count, at the earliest message due):
//! - RTS (flow, remaining size, source, destination): reaches the manager `hyline_tcost_us` (T_cost, 100 us)
//!   after the flow arrives; the authors' agent waits T_cost and then calls the manager.
//! - CTS (go, with the path) and STS (stop): reach the host `hyline_signal_us` after the decision (0 by default:
//!   the authors' manager signals the agents directly, T_cost standing for the whole exchange).
//! - FIN: sent when the sender has sent its last new segment (the authors' agent calls the manager when its send
//!   buffer empties: "done or nearly done", §IV-A); reaches the manager after `hyline_signal_us`.
//! - Before each decision the manager learns every second-class sender's remaining bytes (size minus bytes
//!   cumulatively acknowledged), as the authors' manager asks the senders for them.
//!
//! **Hosts.** The first CTS opens the connection (its handshake, if `transport.handshake`, and the initial window).
//! An STS stops the sender: no data leaves, not even retransmissions, and a timeout that falls due is held (the
//! paper's change to TCP, §IV-D); packets already sent are acknowledged as usual. The next CTS restarts it from
//! the initial window (the authors' agent resets its window on every CTS) with its timer re-armed. A signal for a
//! flow that has sent its FIN is ignored (the manager has let it go).
//!
//! **Source routing.** An admitted flow's data packets carry its path in the field that is the rank on
//! rank-queue switches (HyLine's switches are strict-priority: nothing reads it there), as a mixed-radix code of
//! its choices among each switch's equal-cost ports, with a flag bit; each switch on the way takes its digit
//! (`route`). Paths are enumerated in the same order when the request is made ([`paths`]). ACKs, first-class
//! flows and packets sent before the first CTS use ECMP. Packets in flight keep the path they were sent on when a
//! stopped flow is later given another, so a flow's packets are reordered only across a stop (the paper's rule
//! that an admitted flow's path never changes). Because the path travels in the packet, HyLine runs on two
//! threads like the other families.
//!
//! **Counters.** Per flow (results): the time from arrival to the first CTS (`man_wait_ps`), the time spent
//! stopped after having been let in (`man_stopped_ps`) and how often it was preempted (`man_preemptions`). Per
//! run: requests, admissions, preemptions and STSs sent (`hyline_*` in the run's statistics).

use super::Family;
use super::tcp::{TcpHosts, TcpState};
use crate::config::{Config, SizeInfo};
use crate::control::hyline::{Manager, Signal};
use crate::engine::queue::{Event, EventQueue};
use crate::engine::Sim;
use crate::flows::FlowSet;
use crate::net::packet::Packet;
use crate::net::route::{decode, paths, route_step, ROUTED};
use crate::net::Network;
use crate::transport::tcp::{Conn, TcpParams};
use crate::units::{Ps, NEVER, PS_PER_US};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// The HyLine family (see the module docs).
pub(crate) struct Hyline;

/// A control-plane message on its way.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Msg {
    /// An RTS reaches the manager.
    Rts(u32),
    /// A FIN reaches the manager.
    Fin(u32),
    /// A CTS (with the index of the path among the flow's candidates) reaches the flow's sender.
    Go(u32, u32),
    /// An STS reaches the flow's sender.
    Stop(u32),
}

/// A second-class flow's state at the hosts.
#[derive(Debug, Clone, Default)]
struct Large {
    /// The codes of its candidate paths (as its request listed them to the manager), and the one it uses now
    /// (`ROUTED | code`; 0 before the first CTS).
    codes: Vec<u32>,
    route: u32,
    started: bool,
    fin_sent: bool,
    stopped_since: Option<Ps>,
}

pub(crate) struct HylineState {
    tcp: TcpState,
    /// Second-class flows' parameters (`tcp.params` are the first class's).
    large_params: TcpParams,
    tcost: Ps,
    signal: Ps,
    /// What the hosts know of their flows' sizes (`scheme.size_info`): the class and the remaining bytes the
    /// manager learns are read from it.
    size_info: SizeInfo,
    /// Per flow: second-class?
    class2: Vec<bool>,
    /// Per second-class flow (indexed by flow id; default for the others).
    large: Vec<Large>,
    /// The second-class flows the manager knows (requested and not finished).
    known: Vec<u32>,
    man: Manager,
    /// Messages on their way: (time due, order sent, message).
    msgs: BinaryHeap<Reverse<(Ps, u64, Msg)>>,
    sent: u64,
    /// The control timer's id (the flow count) and the time of its queued entry (NEVER: none).
    ctl_id: u32,
    ctl_queued_at: Ps,
    scratch: Vec<Signal>,
    man_wait: Vec<Ps>,
    man_stopped: Vec<Ps>,
    man_preemptions: Vec<u32>,
}

impl TcpHosts for Hyline {
    #[inline(always)]
    fn tcp(st: &HylineState) -> &TcpState {
        &st.tcp
    }
    #[inline(always)]
    fn tcp_mut(st: &mut HylineState) -> &mut TcpState {
        &mut st.tcp
    }
    #[inline(always)]
    fn params(st: &HylineState, flow: u32) -> &TcpParams {
        if st.class2[flow as usize] {
            &st.large_params
        } else {
            &st.tcp.params
        }
    }

    const WATCH: bool = true;

    /// A second-class flow that has sent its last new segment tells the manager (FIN).
    #[inline]
    fn watch(sim: &mut Sim<'_, Self>, flow: u32) {
        let f = flow as usize;
        if !sim.fam.class2[f] || sim.fam.large[f].fin_sent {
            return;
        }
        let Some(c) = sim.conns[f].as_deref() else { return };
        if c.snd_nxt == c.n_segs {
            sim.fam.large[f].fin_sent = true;
            let at = sim.now + sim.fam.signal;
            sim.post(at, Msg::Fin(flow));
        }
    }

    /// A data packet of an admitted second-class flow carries its route.
    #[inline]
    fn outgoing(st: &mut HylineState, _now: Ps, pkt: &mut Packet) -> bool {
        if !pkt.is_ack() && st.class2[pkt.flow as usize] {
            pkt.sack = st.large[pkt.flow as usize].route;
        }
        true
    }
}

impl Family for Hyline {
    type Hdr = ();
    type Flow = Conn;
    type State = HylineState;
    const AGENTS: bool = false;
    const ROUTED: bool = true;

    fn state(cfg: &Config, flows: &FlowSet, hosts_here: bool, net: &Network) -> HylineState {
        EventQueue::check_ids(flows.len() + 1);
        let sc = &cfg.scheme;
        let us = |x: f64| (x * PS_PER_US as f64).round() as Ps;
        let tcp = TcpState::new(cfg, flows, hosts_here);
        let mut large_params = tcp.params.clone();
        large_params.init_cwnd = sc.hyline_large_init_cwnd_packets;
        large_params.max_cwnd = sc.hyline_large_max_cwnd_packets;
        large_params.rto_min = us(sc.hyline_large_rto_min_us);
        large_params.rto_init = large_params.rto_init.max(large_params.rto_min);
        large_params.rto_max = large_params.rto_max.max(large_params.rto_min);
        let n = if hosts_here { flows.len() } else { 0 };
        // the class from the size the host knows before it sends (bounds: the lower bound, so a flow is second
        // class only when it is sure to be larger than H)
        let size_info = sc.size_view();
        let class2: Vec<bool> =
            (0..n).map(|i| flows.known_at_start(i, size_info) > sc.hyline_threshold_bytes).collect();
        let capacity: Vec<u64> = net.ports.iter().map(|p| p.rate_bps).collect();
        HylineState {
            tcp,
            large_params,
            tcost: us(sc.hyline_tcost_us),
            signal: us(sc.hyline_signal_us),
            size_info,
            large: vec![Large::default(); n],
            class2,
            known: Vec::new(),
            man: Manager::new(if hosts_here { &capacity } else { &[] }, cfg.seed ^ 0x4879_4c69_6e65),
            msgs: BinaryHeap::new(),
            sent: 0,
            ctl_id: flows.len() as u32,
            ctl_queued_at: NEVER,
            scratch: Vec::new(),
            man_wait: vec![NEVER; n],
            man_stopped: vec![0; n],
            man_preemptions: vec![0; n],
        }
    }

    /// The control timer: `Event::Timer(flow count)`.
    fn extra_timer_ids(_net: &Network) -> usize {
        1
    }

    fn header_bytes(st: &HylineState) -> u32 {
        st.tcp.params.header
    }

    fn start_flow(sim: &mut Sim<'_, Self>, id: u32) {
        let i = id as usize;
        if !sim.fam.class2[i] {
            sim.fam.man_wait[i] = NEVER;
            let conn = sim.open_conn(id, 0);
            sim.launch(id, conn);
            return;
        }
        // second class: the connection waits for the manager's first CTS
        let conn = sim.open_conn(id, 1);
        sim.conns[i] = Some(conn);
        let at = sim.now + sim.fam.tcost;
        sim.post(at, Msg::Rts(id));
    }

    #[inline(always)]
    fn deliver(sim: &mut Sim<'_, Self>, host: u32, pkt: Packet) {
        sim.deliver(host, pkt)
    }

    fn on_timer(sim: &mut Sim<'_, Self>, id: u32) {
        if id == sim.fam.ctl_id {
            sim.control();
        } else {
            sim.on_timer(id)
        }
    }

    #[inline]
    fn route(sim: &mut Sim<'_, Self>, node: u32, pkt: &mut Packet) -> Option<u32> {
        route_step(&sim.net, node, pkt)
    }

    fn next_port(net: &Network, node: u32, pkt: &Packet) -> Option<u32> {
        decode(net, node, pkt).map(|(port, _)| port)
    }

    fn finish(sim: &mut Sim<'_, Self>) {
        let now = sim.now;
        let st = &mut sim.fam;
        for (f, l) in st.large.iter().enumerate() {
            if let Some(t) = l.stopped_since {
                st.man_stopped[f] += now - t;
            }
        }
        if !st.class2.is_empty() {
            sim.results.man_wait_ps = std::mem::take(&mut st.man_wait);
            sim.results.man_stopped_ps = std::mem::take(&mut st.man_stopped);
            sim.results.man_preemptions = std::mem::take(&mut st.man_preemptions);
        }
        let c = st.man.counters;
        let s = &mut sim.stats;
        s.hyline_requests = c.requests;
        s.hyline_admissions = c.admissions;
        s.hyline_preemptions = c.preemptions;
        s.hyline_stops = c.stops;
        sim.finish_tcp();
    }
}

impl Sim<'_, Hyline> {
    /// Send a control message, due at `at`.
    fn post(&mut self, at: Ps, msg: Msg) {
        let st = &mut self.fam;
        st.sent += 1;
        st.msgs.push(Reverse((at, st.sent, msg)));
        if at < st.ctl_queued_at {
            st.ctl_queued_at = at;
            self.events.push(at, Event::Timer(st.ctl_id));
        }
    }

    /// The control timer fired: deliver every message due, in the order they are due (then sent).
    fn control(&mut self) {
        let now = self.now;
        if self.fam.ctl_queued_at != now {
            return; // superseded by an earlier entry
        }
        self.fam.ctl_queued_at = NEVER;
        while let Some(&Reverse((at, _, msg))) = self.fam.msgs.peek() {
            if at > now {
                break;
            }
            self.fam.msgs.pop();
            match msg {
                Msg::Rts(f) => self.on_rts(f),
                Msg::Fin(f) => self.on_fin(f),
                Msg::Go(f, path) => self.on_go(f, path),
                Msg::Stop(f) => self.on_stop(f),
            }
        }
        if let Some(&Reverse((at, _, _))) = self.fam.msgs.peek() {
            if at < self.fam.ctl_queued_at {
                self.fam.ctl_queued_at = at;
                self.events.push(at, Event::Timer(self.fam.ctl_id));
            }
        }
    }

    /// The remaining bytes of flow `f`'s sender as it knows them (size minus bytes cumulatively acknowledged,
    /// or the known remaining bytes of `scheme.size_info`).
    fn remaining(&self, f: u32) -> u64 {
        match self.conns[f as usize].as_deref() {
            Some(c) => {
                let done = c.snd_una as u64 * self.fam.large_params.mss as u64;
                self.flows.known_remaining(f as usize, self.fam.size_info, done)
            }
            None => 0,
        }
    }

    /// Tell the manager every known sender's remaining bytes (before a decision).
    fn refresh(&mut self) {
        let now = self.now;
        for k in 0..self.fam.known.len() {
            let f = self.fam.known[k];
            let r = self.remaining(f);
            self.fam.man.set_remaining(f, r, now);
        }
    }

    fn on_rts(&mut self, f: u32) {
        let i = f as usize;
        let (src, dst) = (self.flows.src[i], self.flows.dst[i]);
        let cands = paths(&self.net, src, dst);
        let rate = self.net.line_rate_bps(src);
        self.fam.large[i].codes = cands.iter().map(|(c, _)| *c).collect();
        let links: Vec<Vec<u32>> = cands.into_iter().map(|(_, p)| p).collect();
        self.refresh();
        let remaining = self.remaining(f);
        let mut out = std::mem::take(&mut self.fam.scratch);
        self.fam.man.request(self.now, f, remaining, rate, links, &mut out);
        self.fam.known.push(f);
        self.signals(&mut out);
        self.fam.scratch = out;
    }

    fn on_fin(&mut self, f: u32) {
        self.fam.known.retain(|&k| k != f);
        self.refresh();
        let mut out = std::mem::take(&mut self.fam.scratch);
        self.fam.man.finish(self.now, f, &mut out);
        self.signals(&mut out);
        self.fam.scratch = out;
    }

    /// Send the manager's signals (drained from `out`): at once, or after `hyline_signal_us`.
    fn signals(&mut self, out: &mut Vec<Signal>) {
        for s in out.drain(..) {
            let msg = match s {
                Signal::Go { flow, path } => Msg::Go(flow, path),
                Signal::Stop { flow } => Msg::Stop(flow),
            };
            if self.fam.signal == 0 {
                match msg {
                    Msg::Go(f, p) => self.on_go(f, p),
                    Msg::Stop(f) => self.on_stop(f),
                    _ => unreachable!(),
                }
            } else {
                let at = self.now + self.fam.signal;
                self.post(at, msg);
            }
        }
    }

    /// A CTS reaches flow `f`'s sender: the first opens its connection, a later one restarts it.
    fn on_go(&mut self, f: u32, path: u32) {
        let i = f as usize;
        let now = self.now;
        if self.fam.large[i].fin_sent || self.conns[i].is_none() {
            return;
        }
        let l = &mut self.fam.large[i];
        l.route = ROUTED | l.codes[path as usize];
        if !l.started {
            l.started = true;
            self.fam.man_wait[i] = now - self.results.start_ps[i];
            let conn = self.conns[i].take().expect("checked above");
            self.launch(f, conn);
            return;
        }
        if let Some(t) = l.stopped_since.take() {
            self.fam.man_stopped[i] += now - t;
        }
        let c = self.conns[i].as_deref_mut().expect("checked above");
        if !c.is_stopped() {
            return; // already sending (a CTS after a decision that left it where it was)
        }
        self.out.clear();
        c.go(&self.fam.large_params, now, &mut self.out);
        let src = c.src;
        self.after_transport(f, src);
    }

    /// An STS reaches flow `f`'s sender: a flow that was sending stops (a preemption); one that never started
    /// goes on waiting.
    fn on_stop(&mut self, f: u32) {
        let i = f as usize;
        if self.fam.large[i].fin_sent || !self.fam.large[i].started {
            return;
        }
        let Some(c) = self.conns[i].as_deref_mut() else { return };
        if c.is_stopped() {
            return;
        }
        c.stop();
        self.fam.large[i].stopped_since = Some(self.now);
        self.fam.man_preemptions[i] += 1;
    }
}
