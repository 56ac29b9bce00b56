//! Homa's family in the engine (`transport::homa`): one `HomaMsg` per flow (a message, both ends), and per host
//! the two things Homa schedules across messages:
//! - the **sender's** list of messages with something to send. Whenever the host's NIC is free, the host puts
//!   one data packet of the message with the fewest bytes left to send on it (sender SRPT), so the NIC holds at
//!   most one data packet and each choice is made as the link frees; a per-host timer entry (timer ids
//!   `flows + host`) wakes the host when its NIC will be free.
//! - the **receiver's** list of messages that still need grants, kept in SRPT order (fewest bytes left to
//!   receive). After every data packet it receives, the receiver offers a grant to each of the first
//!   `overcommit` messages of the list from distinct senders (each is sent only if it lets the message send
//!   more).
//!
//! Control packets leave at once at the highest priority. Ports of this family are never FIFOs (packets of one
//! port use several queues). The ideal FCT of a message is its data alone at line rate, as for the other
//! families: Homa starts sending at once, so an isolated message that RTTbytes covers meets it.

use super::Family;
use crate::config::Config;
use crate::engine::queue::{Event, EventQueue};
use crate::engine::Sim;
use crate::flows::FlowSet;
use crate::net::flow_hash;
use crate::net::packet::{flags, Packet};
use crate::net::Network;
use crate::transport::homa::{fabric_rtt_bytes, kind, HomaHdr, HomaMsg, HomaOutcome, HomaParams};
use crate::units::{Ps, NEVER};

/// Homa's family (see `engine::family`).
pub(crate) struct Homa;

/// The family's run-wide state.
pub(crate) struct HomaState {
    pub(crate) params: HomaParams,
    /// Per host: messages it sends that may have something to send (entries go stale; pruned when seen).
    ready: Vec<Vec<u32>>,
    /// Per host: messages it receives that need grants, in SRPT order (kept sorted after every change).
    inbound: Vec<Vec<u32>>,
    /// Per host: the time of its queued timer entry, or `NEVER`.
    host_timer: Vec<Ps>,
    /// Scratch: the messages a receiver grants to now, with their senders.
    picked: Vec<(u32, u32)>,
    /// The timer id of host 0 (the flow count): host `h`'s timer entry is `Event::Timer(base + h)`.
    base: u32,
}

impl Family for Homa {
    type Hdr = HomaHdr;
    type Flow = HomaMsg;
    type State = HomaState;
    const AGENTS: bool = false;

    fn state(cfg: &Config, flows: &FlowSet, _hosts_here: bool, net: &Network<HomaHdr>) -> HomaState {
        EventQueue::check_ids(flows.len() + net.hosts as usize);
        let params = HomaParams::from_config(cfg, &flows.size_bytes, fabric_rtt_bytes(net, cfg));
        let hosts = net.hosts as usize;
        HomaState {
            params,
            ready: vec![Vec::new(); hosts],
            inbound: vec![Vec::new(); hosts],
            host_timer: vec![NEVER; hosts],
            picked: Vec::new(),
            base: flows.len() as u32,
        }
    }

    /// The hosts' timers: `Event::Timer(flow count + host)`.
    fn extra_timer_ids(net: &Network<HomaHdr>) -> usize {
        net.hosts as usize
    }

    fn header_bytes(st: &HomaState) -> u32 {
        st.params.header
    }

    fn start_flow(sim: &mut Sim<'_, Self>, id: u32) {
        sim.homa_start(id)
    }

    fn deliver(sim: &mut Sim<'_, Self>, host: u32, pkt: Packet<HomaHdr>) {
        sim.homa_deliver(host, pkt)
    }

    fn on_timer(sim: &mut Sim<'_, Self>, id: u32) {
        if id >= sim.fam.base {
            let h = (id - sim.fam.base) as usize;
            if sim.fam.host_timer[h] != sim.now {
                return; // superseded
            }
            sim.fam.host_timer[h] = NEVER;
            sim.homa_pump(h as u32);
        } else {
            sim.homa_msg_timer(id)
        }
    }

    fn finish(sim: &mut Sim<'_, Self>) {
        for f in 0..sim.conns.len() {
            if let Some(c) = sim.conns[f].take() {
                sim.homa_record(&c);
            }
        }
    }
}

impl Sim<'_, Homa> {
    fn homa_start(&mut self, id: u32) {
        let i = id as usize;
        let now = self.now;
        self.results.start_ps[i] = now;
        let (src, dst, size) = (self.flows.src[i], self.flows.dst[i], self.flows.size_bytes[i]);
        // the length it announces: what it knows at the start (`scheme.size_info`; bounds: the lower bound)
        let view = self.flows.known_at_start(i, self.fam.params.sizes);
        let (header, mss) = (self.fam.params.header, self.fam.params.mss);
        let hops = self.net.path_hops(src, dst, flow_hash(id, false));
        self.results.ideal_fct_ps[i] = crate::net::ideal::ideal_fct(&hops, size, mss, header);
        self.stats.connections_opened += 1;
        let mut msg = Box::new(HomaMsg::new(&self.fam.params, id, src, dst, size, view, now));
        msg.ready = true;
        self.conns[i] = Some(msg);
        self.fam.ready[src as usize].push(id);
        self.open_flows += 1;
        self.stats.max_concurrent_flows = self.stats.max_concurrent_flows.max(self.open_flows);
        self.homa_pump(src);
        self.homa_sync_timer(id);
    }

    fn homa_deliver(&mut self, host: u32, pkt: Packet<HomaHdr>) {
        let f = pkt.flow as usize;
        let now = self.now;
        let data = pkt.hdr.kind == kind::DATA;
        if data {
            self.results.bytes_delivered[f] += (pkt.wire as u32).saturating_sub(self.header) as u64;
        }
        let p = &self.fam.params;
        let Some(c) = self.conns[f].as_deref_mut() else {
            if data {
                self.results.duplicate_data[f] += 1;
            }
            return;
        };
        self.out.clear();
        match pkt.hdr.kind {
            kind::DATA => {
                debug_assert_eq!(host, c.dst);
                let o = c.on_data(p, now, &pkt, &mut self.out);
                let needs = c.needs_grants();
                self.homa_send_out(pkt.flow);
                if o.complete {
                    self.homa_complete(f);
                }
                if o.grants {
                    self.homa_grants(host, pkt.flow, needs);
                }
            }
            kind::BUSY | kind::PING => {
                c.on_ctrl_at_receiver(p, now, &pkt, &mut self.out);
                self.homa_send_out(pkt.flow);
            }
            _ => {
                debug_assert_eq!(host, c.src);
                let o = c.on_ctrl_at_sender(p, now, &pkt, &mut self.out);
                self.homa_send_out(pkt.flow);
                if self.homa_after_sender(pkt.flow, o) {
                    return;
                }
            }
        }
        self.homa_sync_timer(pkt.flow);
    }

    /// The sender's side of an outcome; `true` if the message is gone (DONE).
    fn homa_after_sender(&mut self, flow: u32, o: HomaOutcome) -> bool {
        let f = flow as usize;
        if o.sender_done {
            if let Some(c) = self.conns[f].take() {
                self.results.sender_done_ps[f] = self.now;
                self.homa_record(&c);
                self.open_flows -= 1;
            }
            return true;
        }
        if o.ready {
            let c = self.conns[f].as_deref_mut().expect("open");
            let src = c.src;
            if !c.ready {
                c.ready = true;
                self.fam.ready[src as usize].push(flow);
            }
            self.homa_pump(src);
        }
        false
    }

    /// The receiver has all of message `f`.
    fn homa_complete(&mut self, f: usize) {
        if self.results.finish_ps[f] == NEVER {
            self.results.finish_ps[f] = self.now;
            self.stats.flows_finished += 1;
            self.release_children(f);
            if let Some(counter) = self.progress {
                counter.set(self.stats.flows_finished, self.now);
            }
        }
    }

    /// Send the packets of `self.out`, each from the end of message `flow` it leaves.
    fn homa_send_out(&mut self, flow: u32) {
        if self.out.is_empty() {
            return;
        }
        let (src, dst) = match self.conns[flow as usize].as_deref() {
            Some(c) => (c.src, c.dst),
            None => (self.flows.src[flow as usize], self.flows.dst[flow as usize]),
        };
        for k in 0..self.out.len() {
            let pkt = self.out[k];
            let from = if pkt.dst == dst { src } else { dst };
            if pkt.flags & flags::ACK != 0 {
                self.stats.ack_packets_sent += 1;
            } else {
                self.stats.data_packets_sent += 1;
            }
            let port = self.net.host_port[from as usize];
            self.enqueue(port, pkt);
        }
        self.out.clear();
    }

    /// Receiver `r` heard from message `flow` (`needs`: whether it still needs grants): keep its list of messages
    /// needing grants in SRPT order, and offer a grant to the first `overcommit` of them from distinct senders
    /// (a sender sends one message at a time: two grants to one sender would waste a slot; HomaSimulation's
    /// receiver likewise grants to its most urgent senders, each for its shortest message).
    fn homa_grants(&mut self, r: u32, flow: u32, needs: bool) {
        let now = self.now;
        let list = &mut self.fam.inbound[r as usize];
        match list.iter().position(|&m| m == flow) {
            Some(at) if !needs => {
                list.remove(at);
            }
            Some(_) => {}
            None if needs => list.push(flow),
            // not listed and needing nothing: the ranking is as it was
            None => return,
        }
        {
            // one entry's key fell or one joined: insertion sort restores the order (fewest left first)
            let conns = &self.conns;
            let key = |m: u32| conns[m as usize].as_deref().map_or((0, m), |c| (c.recv_key(), m));
            for i in 1..list.len() {
                let mut j = i;
                while j > 0 && key(list[j]) < key(list[j - 1]) {
                    list.swap(j, j - 1);
                    j -= 1;
                }
            }
        }
        let p = &self.fam.params;
        // the granted: in rank order, the first message of each sender, at most `overcommit`
        let picked = &mut self.fam.picked;
        picked.clear();
        for &id in list.iter() {
            if picked.len() == p.overcommit {
                break;
            }
            let src = self.conns[id as usize].as_deref().expect("listed messages are open").src;
            if !picked.iter().any(|&(_, s)| s == src) {
                picked.push((id, src));
            }
        }
        let m = picked.len();
        self.out.clear();
        for &id in list.iter() {
            let rank = picked.iter().position(|&(k, _)| k == id);
            let c = self.conns[id as usize].as_deref_mut().expect("listed messages are open");
            c.set_active(now, rank.is_some());
            if let Some(rank) = rank {
                c.grant(p, now, p.sched_prio(rank, m), &mut self.out);
            }
        }
        for k in 0..self.out.len() {
            let pkt = self.out[k];
            self.stats.ack_packets_sent += 1;
            let port = self.net.host_port[r as usize];
            self.enqueue(port, pkt);
        }
        self.out.clear();
        // the granted messages' receivers now expect more: their timers may move
        for k in 0..m {
            let id = self.fam.picked[k].0;
            self.homa_sync_timer(id);
        }
    }

    /// Host `h`'s NIC: if it is free, put one data packet of the most urgent message with something to send on
    /// it; wake the host again when the NIC frees, while it has messages left.
    fn homa_pump(&mut self, h: u32) {
        let now = self.now;
        let port = self.net.host_port[h as usize];
        let busy = self.net.ports[port as usize].busy_until;
        if busy > now {
            return self.homa_host_timer(h, busy);
        }
        let list = &mut self.fam.ready[h as usize];
        let mut best: Option<(u64, u32)> = None;
        let mut i = 0;
        let mut can_send = 0;
        while i < list.len() {
            let m = list[i];
            match self.conns[m as usize].as_deref_mut() {
                Some(c) if c.can_send() => {
                    let k = (c.send_key(&self.fam.params), m);
                    if best.is_none_or(|b| k < b) {
                        best = Some(k);
                    }
                    can_send += 1;
                    i += 1;
                }
                other => {
                    if let Some(c) = other {
                        c.ready = false;
                    }
                    list.swap_remove(i);
                }
            }
        }
        let Some((_, m)) = best else { return };
        let c = self.conns[m as usize].as_deref_mut().expect("chosen from open messages");
        let pkt = c.next_packet(&self.fam.params, now);
        // Wake the host when its NIC frees only if a listed message could then send: otherwise that wake-up
        // would find nothing to send. Nothing is lost: a message that becomes able to send before then says
        // so (`HomaOutcome::ready`, its only way from "cannot" to "can"), and `homa_after_sender` pumps, which
        // queues the same wake-up at the same time, the NIC still busy. (The skipped pass would also have
        // taken the messages that cannot send off the list; they stay on it, `ready` still set, until the
        // next pass: the choice is the least (key, id) of the ones that can send, whatever the list's order.)
        let more = can_send > 1 || c.can_send();
        self.stats.data_packets_sent += 1;
        self.enqueue(port, pkt);
        self.homa_sync_timer(m);
        let busy = self.net.ports[port as usize].busy_until;
        if busy > now && more {
            self.homa_host_timer(h, busy);
        }
    }

    /// Wake host `h` at `at` (lazy: an entry is pushed only if it is earlier than the one queued).
    fn homa_host_timer(&mut self, h: u32, at: Ps) {
        if at < self.fam.host_timer[h as usize] {
            self.fam.host_timer[h as usize] = at;
            self.events.push(at, Event::Timer(self.fam.base + h));
        }
    }

    fn homa_msg_timer(&mut self, flow: u32) {
        let now = self.now;
        let p = &self.fam.params;
        let Some(c) = self.conns[flow as usize].as_deref_mut() else {
            return;
        };
        if c.timer_queued_at != now {
            return; // superseded by an earlier entry
        }
        c.timer_queued_at = NEVER;
        if c.deadline(p) > now {
            return self.homa_sync_timer(flow);
        }
        self.out.clear();
        let o = c.on_timer(p, now, &mut self.out);
        self.homa_send_out(flow);
        if self.homa_after_sender(flow, o) {
            return;
        }
        self.homa_sync_timer(flow);
    }

    /// Lazy timers: push an entry only when the message's deadline moved earlier than the queued one.
    #[inline]
    fn homa_sync_timer(&mut self, flow: u32) {
        let p = &self.fam.params;
        if let Some(c) = self.conns[flow as usize].as_deref_mut() {
            let due = c.deadline(p).max(self.now);
            if due < c.timer_queued_at {
                c.timer_queued_at = due;
                self.events.push(due, Event::Timer(flow));
            }
        }
    }

    fn homa_record(&mut self, c: &HomaMsg) {
        let f = c.flow as usize;
        self.results.retransmits[f] = c.counters.retransmits;
        self.results.timeouts[f] = c.counters.timeouts;
        self.results.bytes_sent[f] = c.counters.bytes_sent;
        // (a PING is Homa's probe: header-only, asking the receiver about a message)
        self.results.probes[f] = c.counters.pings;
    }
}
