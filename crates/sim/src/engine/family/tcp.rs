//! The TCP family in the engine: TCP, DCTCP, L2DCT, pFabric's and LAS's hosts, PIAS and QCLIMB, as the
//! `transport::tcp` state machine (`Conn`) with its connection pools, QCLIMB's bounds and the receivers'
//! out-of-order accounting. Its header is `()`: its packets are the 24-byte common packet.

use super::Family;
use crate::config::{Config, Connections, FctAt, QclimbInfo, SchemeName, SizeInfo};
use crate::engine::queue::Event;
use crate::engine::Sim;
use crate::flows::{FlowSet, NO_RATE};
use crate::net::flow_hash;
use crate::net::packet::{flags, since, Packet};
use crate::net::Network;
use crate::record::RunStats;
use crate::transport::tcp::{time_to_generate, Conn, ConnState, TcpParams};
use crate::units::{tx_time, Ps, NEVER};
use std::collections::{HashMap, VecDeque};

/// The TCP family (see `engine::family`).
pub(crate) struct Tcp;

/// The TCP family's run-wide state.
pub(crate) struct TcpState {
    pub(super) params: TcpParams,
    default_prio: u8,
    bounds_from: BoundsFrom,
    ooo: OooHosts,
    /// Connection reuse (`transport.connections`): the idle connections of each pool (a host pair, or a trace's
    /// 5-tuple), longest idle first. Touched once when a flow starts and once when it ends, never per packet.
    connections: Connections,
    idle_conns: HashMap<u64, VecDeque<ConnState>>,
    /// Trace connections: the open flows of each connection, and the flows whose connection a later flow took
    /// over once they had sent everything (they close without returning it to the pool).
    open_on: HashMap<u64, Vec<u32>>,
    handed_over: Vec<bool>,
    /// `run.fct_at = "sender"`: a flow completes when its sender has every byte acknowledged; its ideal FCT
    /// includes the last ACK's return (see [`Sim::open_conn`] and [`Sim::finish_tcp`]).
    fct_at_sender: bool,
}

/// What the TCP code (`impl Sim<F: TcpHosts>` below) needs of a family whose hosts run the TCP state machine:
/// the TCP family itself, and HyLine's (TCP under a central manager, `engine::family::hyline`). Monomorphised per
/// family: for the TCP family every hook is the identity or a constant, and its code is what it was.
pub(crate) trait TcpHosts: Family<Hdr = (), Flow = Conn> {
    /// The TCP part of the family's state.
    fn tcp(st: &Self::State) -> &TcpState;
    fn tcp_mut(st: &mut Self::State) -> &mut TcpState;
    /// The parameters flow `flow` runs with (HyLine's two classes differ in initial window and RTO floor).
    fn params(st: &Self::State, flow: u32) -> &TcpParams;
    /// Does the family look at each flow after its transport acted ([`TcpHosts::watch`])?
    const WATCH: bool = false;
    /// Flow `flow`'s transport just acted (its packets are sent and its timer is in step).
    #[inline(always)]
    fn watch(_sim: &mut Sim<'_, Self>, _flow: u32) {}
    /// A packet a host is about to send (called only when `WATCH`): the family may rewrite it, or drop it
    /// (false: a host's rate limiter had no tokens for it, QJump).
    #[inline(always)]
    fn outgoing(_st: &mut Self::State, _now: Ps, _pkt: &mut Packet) -> bool {
        true
    }
}

impl TcpHosts for Tcp {
    #[inline(always)]
    fn tcp(st: &TcpState) -> &TcpState {
        st
    }
    #[inline(always)]
    fn tcp_mut(st: &mut TcpState) -> &mut TcpState {
        st
    }
    #[inline(always)]
    fn params(st: &TcpState, _flow: u32) -> &TcpParams {
        &st.params
    }
}

impl Family for Tcp {
    type Hdr = ();
    type Flow = Conn;
    type State = TcpState;
    const AGENTS: bool = false;

    fn state(cfg: &Config, flows: &FlowSet, hosts_here: bool, _net: &Network) -> TcpState {
        TcpState::new(cfg, flows, hosts_here)
    }

    fn header_bytes(st: &TcpState) -> u32 {
        st.params.header
    }

    #[inline]
    fn start_flow(sim: &mut Sim<'_, Self>, id: u32) {
        sim.start_flow(id)
    }

    #[inline(always)]
    fn deliver(sim: &mut Sim<'_, Self>, host: u32, pkt: Packet) {
        sim.deliver(host, pkt)
    }

    #[inline]
    fn on_timer(sim: &mut Sim<'_, Self>, flow: u32) {
        sim.on_timer(flow)
    }

    fn finish(sim: &mut Sim<'_, Self>) {
        sim.finish_tcp()
    }
}

impl TcpState {
    pub(super) fn new(cfg: &Config, flows: &FlowSet, hosts_here: bool) -> TcpState {
        TcpState {
            params: TcpParams::from_config(cfg),
            default_prio: cfg.scheme.priority,
            bounds_from: match (cfg.scheme.name, cfg.scheme.qclimb_variant(), cfg.scheme.size_view()) {
                (SchemeName::Qclimb, Some(QclimbInfo::Bounds), _) => BoundsFrom::Columns,
                (SchemeName::Qclimb, Some(QclimbInfo::Precise), _) => BoundsFrom::Size,
                (SchemeName::Qclimb, None, _) => BoundsFrom::Pias,
                (SchemeName::Qclimb, _, _) => BoundsFrom::Estimate,
                // pFabric and RAX+ by one bound or both (`scheme.size_info`)
                (_, _, SizeInfo::Lower | SizeInfo::Upper | SizeInfo::Bounds) => BoundsFrom::Columns,
                _ => BoundsFrom::Estimate,
            },
            ooo: OooHosts::new(if hosts_here { cfg.topology.hosts() as usize } else { 0 }),
            connections: cfg.transport.connections,
            idle_conns: HashMap::new(),
            open_on: HashMap::new(),
            handed_over: if hosts_here && cfg.transport.connections == Connections::Trace {
                vec![false; flows.len()]
            } else {
                Vec::new()
            },
            fct_at_sender: cfg.run.fct_at == FctAt::Sender,
        }
    }
}

/// Out-of-order bytes held at each host, as it changes.
#[derive(Debug, Clone, Default)]
struct OooHosts {
    now_bytes: Vec<u64>,
    max_bytes: Vec<u64>,
    /// Integral of `now_bytes` over time (byte-picoseconds) up to `since`.
    area: Vec<u128>,
    since: Vec<Ps>,
    insert_sum: Vec<u128>,
    inserts: Vec<u64>,
}

impl OooHosts {
    fn new(hosts: usize) -> Self {
        OooHosts {
            now_bytes: vec![0; hosts],
            max_bytes: vec![0; hosts],
            area: vec![0; hosts],
            since: vec![0; hosts],
            insert_sum: vec![0; hosts],
            inserts: vec![0; hosts],
        }
    }

    #[inline]
    fn change(&mut self, host: usize, now: Ps, before: u64, after: u64) {
        let held = self.now_bytes[host];
        self.area[host] += held as u128 * (now - self.since[host]) as u128;
        self.since[host] = now;
        let held = held + after - before;
        self.now_bytes[host] = held;
        if after > before {
            self.max_bytes[host] = self.max_bytes[host].max(held);
            self.insert_sum[host] += held as u128;
            self.inserts[host] += 1;
        }
    }

    fn write(&mut self, end: Ps, stats: &mut RunStats) {
        let n = self.now_bytes.len();
        for h in 0..n {
            self.area[h] += self.now_bytes[h] as u128 * (end - self.since[h]) as u128;
        }
        stats.ooo_host_max_bytes = self.max_bytes.clone();
        stats.ooo_host_mean_bytes =
            (0..n).map(|h| if end > 0 { self.area[h] as f64 / end as f64 } else { 0.0 }).collect();
        stats.ooo_host_insert_mean_bytes = (0..n)
            .map(|h| if self.inserts[h] > 0 { self.insert_sum[h] as f64 / self.inserts[h] as f64 } else { 0.0 })
            .collect();
    }
}

/// Where a flow's QCLIMB bounds come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BoundsFrom {
    Columns,
    Size,
    Estimate,
    /// None: QCLIMB with `scheme.size_info = "none"` runs every flow as PIAS.
    Pias,
}

impl<F: TcpHosts> Sim<'_, F> {
    pub(super) fn start_flow(&mut self, id: u32) {
        let prio = self.flows.priority.get(id as usize).copied().unwrap_or(F::tcp(&self.fam).default_prio);
        let conn = self.open_conn(id, prio);
        self.launch(id, conn);
    }

    /// Flow `id` starts now at priority `prio`: its connection (new, or from its pool), its ideal FCT, QCLIMB's
    /// bounds and its application; nothing sent yet.
    pub(super) fn open_conn(&mut self, id: u32, prio: u8) -> Box<Conn> {
        let i = id as usize;
        self.results.start_ps[i] = self.now;
        let (src, dst, size) = (self.flows.src[i], self.flows.dst[i], self.flows.size_bytes[i]);
        let (fwd, rev) = (flow_hash(id, false), flow_hash(id, true));
        let estimate = self.flows.estimate_bytes.get(i).copied().unwrap_or(size);
        let mut conn = Box::new(Conn::new(F::params(&self.fam, id), id, src, dst, size, estimate, prio));
        let mut reused = false;
        if F::tcp(&self.fam).connections != Connections::PerFlow {
            let key = self.pool_key(i);
            let mut st = F::tcp_mut(&mut self.fam).idle_conns.get_mut(&key).and_then(|q| q.pop_front());
            if F::tcp(&self.fam).connections == Connections::Trace {
                if st.is_none() {
                    st = self.take_over(key);
                }
                F::tcp_mut(&mut self.fam).open_on.entry(key).or_default().push(id);
            }
            if let Some(st) = st {
                conn.resume(F::params(&self.fam, id), &st, self.now);
                reused = true;
            }
        }
        if reused {
            self.stats.connections_reused += 1;
        } else {
            self.stats.connections_opened += 1;
        }
        self.results.ideal_fct_ps[i] = self.ideal_fct(src, dst, size, fwd, rev, reused);
        // QCLIMB's bounds: the predicted ones, the true size (QCLIMB-PS), or the estimate (PP, FP)
        let (lower, upper) = match F::tcp(&self.fam).bounds_from {
            BoundsFrom::Columns => (self.flows.lower_bytes[i], self.flows.upper_bytes[i]),
            BoundsFrom::Size => (size, size),
            BoundsFrom::Estimate | BoundsFrom::Pias => (estimate, estimate),
        };
        conn.set_bounds(lower, upper);
        if self.flows.qclimb.get(i) == Some(&false) || F::tcp(&self.fam).bounds_from == BoundsFrom::Pias {
            conn.use_pias();
        }
        // the application model: a generation rate (after the cached bytes), and the send buffer
        let rate = self.flows.gen_rate_bps.get(i).copied().unwrap_or(NO_RATE);
        let cached = self.flows.cached_bytes.get(i).copied().unwrap_or(0).min(size);
        if rate != NO_RATE {
            // the last segment cannot leave before its last byte is generated
            let hops = self.net.path_hops(src, dst, fwd);
            let mss = F::tcp(&self.fam).params.mss as u64;
            let last = size - (size - 1) / mss * mss;
            let after_gen = time_to_generate(size - cached, rate)
                + crate::net::ideal::ideal_fct(&hops, last, F::tcp(&self.fam).params.mss, F::tcp(&self.fam).params.header);
            self.results.ideal_fct_ps[i] = self.results.ideal_fct_ps[i].max(after_gen);
        }
        if F::tcp(&self.fam).fct_at_sender {
            // completion at the sender: the last byte's ACK comes back, alone on the idle reverse path
            self.results.ideal_fct_ps[i] += self.ack_return(dst, src, rev);
        }
        conn.set_app(F::params(&self.fam, id), rate, cached, self.now);
        self.open_flows += 1;
        self.stats.max_concurrent_flows = self.stats.max_concurrent_flows.max(self.open_flows);
        conn
    }

    /// Flow `id`'s connection, opened by [`Sim::open_conn`], sends what it may.
    pub(super) fn launch(&mut self, id: u32, mut conn: Box<Conn>) {
        let src = conn.src;
        self.out.clear();
        conn.start(F::params(&self.fam, id), self.now, &mut self.out);
        self.conns[id as usize] = Some(conn);
        self.after_transport(id, src);
    }

    /// Send what a transport produced from host `host`, and keep the flow's timer entry in step.
    pub(super) fn after_transport(&mut self, flow: u32, host: u32) {
        let port = self.net.host_port[host as usize];
        for k in 0..self.out.len() {
            let pkt = self.out[k];
            if pkt.is_ack() {
                self.stats.ack_packets_sent += 1;
            } else {
                self.stats.data_packets_sent += 1;
            }
            if F::WATCH {
                self.send_watched(port, pkt);
                continue;
            }
            self.enqueue(port, pkt);
        }
        self.out.clear();
        self.sync_timer(flow);
        if F::WATCH {
            F::watch(self, flow);
        }
    }

    /// Lazy timers: push an entry only when the deadline moved earlier than the queued one.
    #[inline]
    pub(super) fn sync_timer(&mut self, flow: u32) {
        if let Some(c) = self.conns[flow as usize].as_deref_mut() {
            let due = c.deadline();
            if due < c.timer_queued_at {
                c.timer_queued_at = due;
                self.events.push(due, Event::Timer(flow));
            }
        }
    }

    pub(super) fn on_timer(&mut self, flow: u32) {
        let now = self.now;
        let Some(c) = self.conns[flow as usize].as_deref_mut() else { return };
        if c.timer_queued_at != now {
            return; // superseded by an earlier entry
        }
        c.timer_queued_at = NEVER;
        if c.delack_deadline <= now {
            // the receiver's delayed ACK is due (sent from the receiving host)
            let dst = c.dst;
            self.out.clear();
            c.on_delack_timer(F::params(&self.fam, flow), now, &mut self.out);
            self.after_transport(flow, dst);
        }
        let Some(c) = self.conns[flow as usize].as_deref_mut() else { return };
        if c.app_deadline <= now {
            // the application has written the next segment (application model)
            let src = c.src;
            self.out.clear();
            c.on_app_timer(F::params(&self.fam, flow), now, &mut self.out);
            self.after_transport(flow, src);
        }
        let Some(c) = self.conns[flow as usize].as_deref_mut() else { return };
        if c.rto_deadline > now {
            // the deadline moved later since this entry was queued: re-queue at the real one
            self.sync_timer(flow);
            return;
        }
        let src = c.src;
        self.out.clear();
        c.on_timeout(F::params(&self.fam, flow), now, &mut self.out);
        self.after_transport(flow, src);
    }

    /// A packet reached host `host`.
    pub(super) fn deliver(&mut self, host: u32, pkt: Packet) {
        debug_assert_eq!(pkt.dst, host);
        let f = pkt.flow as usize;
        let now = self.now;
        if pkt.flags & (flags::ACK | flags::PROBE) == 0 {
            self.results.bytes_delivered[f] += (pkt.wire as u32 - F::tcp(&self.fam).params.header) as u64;
            // its one-way delay (the idle fabric's way is taken off at the end: `finish_tcp`)
            // (`run.queue_delay`; empty otherwise)
            if let Some(o) = self.owd.get_mut(f) {
                o.0 += since(now, pkt.ts);
                o.1 += 1;
            }
        }
        let Some(c) = self.conns[f].as_deref_mut() else {
            // the flow is over: a late ACK, or a late copy of data the receiver already holds
            if pkt.flags & (flags::ACK | flags::PROBE) == 0 {
                self.results.duplicate_data[f] += 1;
            }
            return;
        };
        self.out.clear();
        if pkt.is_ack() {
            let o = c.on_ack(F::params(&self.fam, pkt.flow), now, &pkt, &mut self.out);
            let src = c.src;
            if o.sender_done {
                self.results.sender_done_ps[f] = now;
                self.close(pkt.flow);
            } else {
                self.after_transport(pkt.flow, src);
            }
        } else {
            let ooo_before = c.ooo_bytes;
            let o = c.on_data(F::params(&self.fam, pkt.flow), now, &pkt, &mut self.out);
            if c.ooo_bytes != ooo_before {
                F::tcp_mut(&mut self.fam).ooo.change(host as usize, now, ooo_before, c.ooo_bytes);
            }
            if o.receiver_done {
                c.release_receiver();
                self.results.finish_ps[f] = now;
                self.stats.flows_finished += 1;
                self.release_children(f);
                if let Some(counter) = self.progress {
                    counter.set(self.stats.flows_finished, self.now);
                }
            }
            self.after_transport(pkt.flow, host);
        }
    }

    /// [`Sim::after_transport`] for a family that sees its packets go (`TcpHosts::WATCH`).
    fn send_watched(&mut self, port: u32, mut pkt: Packet) {
        if F::outgoing(&mut self.fam, self.now, &mut pkt) {
            self.enqueue(port, pkt);
        } else {
            self.limiter_drop(port, &pkt);
        }
    }

    /// A host's rate limiter dropped `pkt` before its NIC port `port` (QJump): a drop at the host, counted in
    /// `host_limiter_drops` too.
    #[cold]
    #[inline(never)]
    fn limiter_drop(&mut self, port: u32, pkt: &Packet) {
        self.stats.host_limiter_drops += 1;
        let q = self.net.ports[port as usize].queue_of(pkt.prio);
        self.count_drop(port, q, pkt);
    }

    /// The run is over: the open flows' counters, and the hosts' out-of-order statistics.
    pub(super) fn finish_tcp(&mut self) {
        for f in 0..self.conns.len() {
            if let Some(c) = self.conns[f].take() {
                self.record_counters(&c);
            }
        }
        let end = self.now;
        F::tcp_mut(&mut self.fam).ooo.write(end, &mut self.stats);
        self.queue_delays();
        if F::tcp(&self.fam).fct_at_sender && !self.results.finish_ps.is_empty() {
            // `run.fct_at = "sender"`: the completion reported is the sender's (a flow whose last ACK never
            // came back is unfinished)
            self.results.finish_ps.clone_from(&self.results.sender_done_ps);
            self.stats.flows_finished = self.results.finish_ps.iter().filter(|&&t| t != NEVER).count() as u64;
        }
    }

    /// The data packets' one-way delays summed per flow become their time in queues: each packet's way through
    /// the idle fabric is taken off (at each hop of the flow's ECMP path, the serialization of its bytes at the
    /// hop's rate and the propagation; the packets' bytes are the payload delivered and a header each).
    /// The send stamps are whole nanoseconds, so a packet's delay is known within a nanosecond either way.
    fn queue_delays(&mut self) {
        let header = F::tcp(&self.fam).params.header as u64;
        let owd = std::mem::take(&mut self.owd);
        if owd.is_empty() {
            return;
        }
        self.results.data_arrivals = owd.iter().map(|o| o.1).collect();
        self.results.queue_delay_ps = owd.iter().map(|o| o.0).collect();
        for f in 0..owd.len() {
            let n = owd[f].1 as u64;
            if n == 0 {
                continue;
            }
            let hops = self.net.path_hops(self.flows.src[f], self.flows.dst[f], flow_hash(f as u32, false));
            let wire_bits = (self.results.bytes_delivered[f] + n * header) as f64 * 8.0;
            let idle: f64 = hops.iter().map(|&(rate, delay)| n as f64 * delay as f64 + wire_bits * 1e12 / rate as f64).sum();
            let q = &mut self.results.queue_delay_ps[f];
            *q = (*q as f64 - idle).round().max(0.0) as u64;
        }
    }

    /// The sender has every byte acknowledged: copy its counters out and free its state; a reusable connection
    /// becomes idle in its pool.
    pub(super) fn close(&mut self, flow: u32) {
        if let Some(c) = self.conns[flow as usize].take() {
            self.record_counters(&c);
            self.open_flows -= 1;
            if F::tcp(&self.fam).connections != Connections::PerFlow {
                let key = self.pool_key(flow as usize);
                if F::tcp(&self.fam).connections == Connections::Trace {
                    if let Some(open) = F::tcp_mut(&mut self.fam).open_on.get_mut(&key) {
                        open.retain(|&f| f != flow);
                    }
                    if F::tcp(&self.fam).handed_over[flow as usize] {
                        return; // a later flow carries this connection on
                    }
                }
                let st = c.carry(F::params(&self.fam, flow), self.results.start_ps[flow as usize]);
                F::tcp_mut(&mut self.fam).idle_conns.entry(key).or_default().push_back(st);
            }
        }
    }

    /// Trace connections: a flow starts on connection `key` while none of its instances is idle. A socket may
    /// write its next message as soon as the previous one is all sent (it need not wait for the last ACK), so
    /// the earliest open flow of the connection that has sent every segment hands the connection over: the new
    /// flow starts from its state, and it closes without returning the connection to the pool.
    pub(super) fn take_over(&mut self, key: u64) -> Option<ConnState> {
        let tcp = F::tcp(&self.fam);
        let open = tcp.open_on.get(&key)?;
        let f = *open.iter().find(|&&f| {
            !tcp.handed_over[f as usize] && self.conns[f as usize].as_deref().is_some_and(|c| c.snd_nxt == c.n_segs)
        })?;
        let c = self.conns[f as usize].as_deref().expect("found open above");
        let st = c.carry(F::params(&self.fam, f), self.results.start_ps[f as usize]);
        F::tcp_mut(&mut self.fam).handed_over[f as usize] = true;
        Some(st)
    }

    /// The connection pool flow `i` draws from: its host pair, or its trace connection id.
    pub(super) fn pool_key(&self, i: usize) -> u64 {
        match F::tcp(&self.fam).connections {
            Connections::Trace => self.flows.conn[i] as u64,
            _ => self.flows.src[i] as u64 * self.net.hosts as u64 + self.flows.dst[i] as u64,
        }
    }

    pub(super) fn record_counters(&mut self, c: &Conn) {
        let f = c.flow as usize;
        self.results.retransmits[f] = c.counters.retransmits;
        self.results.timeouts[f] = c.counters.timeouts;
        self.results.bytes_sent[f] = c.counters.bytes_sent;
        self.results.ecn_marked[f] = c.counters.ecn_marked;
        self.results.probes[f] = c.counters.probes;
        self.results.fast_recoveries[f] = c.counters.fast_recoveries;
        self.results.priority_losses[f] = c.counters.priority_losses;
        // (plus any copies that arrived after the flow closed, counted as they came)
        self.results.duplicate_data[f] += c.counters.duplicate_data;
        self.results.ooo_max_segments[f] = c.counters.ooo_max_segments;
        self.results.app_done_ps[f] = c.app().done_ps;
        if F::tcp(&self.fam).params.rax.is_some() {
            self.results.copy_rate_bps[f] = c.app().copy_rate_bps;
            self.stats.rax_priority_rises += c.counters.priority_rises as u64;
            self.stats.rax_reorderings += c.counters.reorderings as u64;
        }
    }

    /// The time an ACK takes from `from` back to `to` on the idle ECMP path of hash `hash`: at every hop its
    /// serialization (`transport.ack_bytes`) and the link's propagation delay, store and forward.
    pub(super) fn ack_return(&self, from: u32, to: u32, hash: u32) -> Ps {
        let ack = F::tcp(&self.fam).params.ack_bytes;
        self.net.path_hops(from, to, hash).iter().map(|&(rate, delay)| tx_time(ack, rate) + delay).sum()
    }

    /// The flow alone in the idle fabric, sending at line rate from its first packet, on its ECMP path; with
    /// a handshake (on a new connection: `reused` is false), after its SYN and SYN-ACK (`ack_bytes` each)
    /// crossed the idle fabric.
    pub(super) fn ideal_fct(&self, src: u32, dst: u32, size: u64, hash: u32, hash_rev: u32, reused: bool) -> Ps {
        let hops = |from: u32, to: u32, h: u32| -> Vec<(u64, Ps)> {
            self.net
                .ecmp_path(from, to, h)
                .iter()
                .map(|&p| {
                    let port = &self.net.ports[p as usize];
                    (port.rate_bps, port.delay_ps)
                })
                .collect()
        };
        let data = crate::net::ideal::ideal_fct(&hops(src, dst, hash), size, F::tcp(&self.fam).params.mss, F::tcp(&self.fam).params.header);
        if !F::tcp(&self.fam).params.handshake || reused {
            return data;
        }
        let control = |path: Vec<(u64, Ps)>| -> Ps {
            path.iter().map(|&(rate, delay)| tx_time(F::tcp(&self.fam).params.ack_bytes, rate) + delay).sum()
        };
        control(hops(src, dst, hash)) + control(hops(dst, src, hash_rev)) + data
    }
}
