//! The explicit-rate family in the engine: RCP, D3 and PDQ (`transport::rate`). Hosts run one `RateFlow` per
//! flow (a paced sender and its receiver); every switch egress port (and every host NIC with
//! `scheme.rate_nic_agents`) runs a `RateAgent` that sees
//! each packet the port is offered (`RateAgent::forward`: the switch's forward-path processing, which may
//! rewrite the header), and the agent of the port a flow's data leaves by also sees the flow's ACKs as they
//! pass on their way back (`RateAgent::reverse`: PDQ's reverse-path update): at every switch on the reverse
//! path, and at the sender for its own NIC when NICs run agents.
//!
//! Symmetric routing: PDQ's reverse pass (and the tentative grants its preemption takes back as the answer passes
//! a port) assumes the ACKs retrace the data's path, as D3's and PDQ's papers draw it. Under ECMP an ACK's own
//! hash would send it through other switches on a multipath fabric (a fat-tree k = 4: 1,250 of 2,000 flows had a
//! data-path switch that their ACKs never crossed, so its reverse pass never ran and a revoked grant reached the
//! sender as a grant), so with `routing.mode = "ecmp"` the family routes its ACKs itself, back along the data's
//! path (`reverse_hop`). Under packet spraying every packet draws its next hop, ACKs included, as before: there is
//! no one data path to retrace, and each ACK's reverse pass runs where it happens to pass.
//!
//! Ports of this family are never FIFOs (an agent reads the port's exact occupancy); switch ports time their
//! departures lazily (`net::port`), and `Sim::enqueue` performs the departures due before an arrival before
//! the agent reads the port, so it sees what the event-driven port holds. A sender's pacing (its next send time), probe and retransmission timers are one lazy timer entry
//! per flow, as TCP's timers are.
//!
//! The ideal FCT of a flow of this family is the data alone at line rate from its first packet (as for TCP
//! without a handshake): the rate request's round trip before the data is protocol overhead, which the
//! slowdown then shows (the PDQ paper's "optimal" excludes it too).

use super::Family;
use crate::config::Config;
use crate::engine::queue::Event;
use crate::engine::Sim;
use crate::flows::FlowSet;
use crate::net::flow_hash;
use crate::net::packet::{flags, Packet};
use crate::net::Network;
use crate::transport::rate::{RateAgent, RateFlow, RateHdr, RateOutcome, RateParams, RateScheme};
use crate::units::NEVER;
use rand::RngCore;

/// The explicit-rate family (see `engine::family`).
pub(crate) struct Rate;

/// The family's run-wide state: its parameters and one agent per port.
pub(crate) struct RateState {
    params: RateParams,
    agents: Vec<RateAgent>,
    /// D3's allocation vectors (empty for the other schemes): flow f's entry for the h-th port of its path is
    /// `d3_vec[d3_off[f] + h]`, the allocation (kbit/s) that port last granted it. D3 carries this vector in
    /// its header and the sender echoes it unchanged; here the packet carries only its index (`hop`), and the
    /// port reads and writes its own entry, which is the same thing on a fixed path (ECMP: every packet of a
    /// flow's direction takes one path). On a two-thread run each thread holds a copy, and a port's entries
    /// are touched only by the thread that owns the port. Under packet spraying the h-th port may change from
    /// request to request, as a real D3 header's h-th entry would then describe another router.
    d3_vec: Vec<u32>,
    d3_off: Vec<u32>,
    /// ECMP routing: ACKs retrace their data's path (`reverse_hop`); spraying: every packet is sprayed.
    symmetric: bool,
    /// Per port: the port of the far end that leads back (`ports[back[p]].peer` is `p`'s owner).
    back: Vec<u32>,
}

/// For every port, the port of its far end leading back over the same link (u32::MAX if there is none).
fn back_ports(net: &Network<RateHdr>) -> Vec<u32> {
    net.ports
        .iter()
        .map(|p| {
            let far = &net.nodes[p.peer as usize];
            far.ports.iter().copied().find(|&q| net.ports[q as usize].peer == p.owner).unwrap_or(u32::MAX)
        })
        .collect()
}

/// The port switch `node` sends an ACK of flow `flow` (data from `src` to `dst`) by so that it retraces the
/// data's ECMP path: the data's path is walked from the sender up to `node` (at most a path's length of table
/// look-ups, nothing allocated), and the ACK leaves by the link the data came in on. None if `node` is not on
/// the data's path (then the ACK takes its own ECMP hash, as it would without this).
pub(crate) fn reverse_hop(net: &Network<RateHdr>, back: &[u32], flow: u32, src: u32, dst: u32, node: u32) -> Option<u32> {
    let hash = flow_hash(flow, false);
    let mut came_by = net.host_port[src as usize];
    let mut at = net.ports[came_by as usize].peer;
    for _ in 0..net.nodes.len() {
        if at == node {
            return Some(back[came_by as usize]).filter(|&p| p != u32::MAX);
        }
        if at == dst || net.is_host(at) {
            return None;
        }
        came_by = net.ecmp_port(at, dst, hash);
        at = net.ports[came_by as usize].peer;
    }
    None
}

/// D3's allocation vectors: each flow's path length (its data's ECMP path, ports from the sender's NIC on;
/// every shortest path has that length), laid out one after the other.
fn d3_vectors(flows: &FlowSet, net: &Network<RateHdr>) -> (Vec<u32>, Vec<u32>) {
    let mut off = Vec::with_capacity(flows.len() + 1);
    off.push(0u32);
    for f in 0..flows.len() {
        let hops = net.ecmp_path(flows.src[f], flows.dst[f], flow_hash(f as u32, false)).len() as u32;
        off.push(off[f] + hops.min(u8::MAX as u32));
    }
    (vec![0; off[flows.len()] as usize], off)
}

impl Family for Rate {
    type Hdr = RateHdr;
    type Flow = RateFlow;
    type State = RateState;
    const AGENTS: bool = true;
    const ROUTED: bool = true;

    fn state(cfg: &Config, flows: &FlowSet, _hosts_here: bool, net: &Network<RateHdr>) -> RateState {
        let params = RateParams::from_config(cfg);
        let (d3_vec, d3_off) =
            if params.scheme == RateScheme::D3 { d3_vectors(flows, net) } else { (Vec::new(), Vec::new()) };
        // (an agent's id names it in PDQ's pauseby field: the port's id + 1, the same on both sides of a
        // two-thread run and from run to run)
        // (without `scheme.rate_nic_agents` a NIC's agent is never called: it gets no PDQ list storage)
        let agents = net
            .ports
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let mut a = if params.nic_agents || !net.is_host(p.owner) {
                    RateAgent::new(&params, p.rate_bps)
                } else {
                    RateAgent::idle(&params, p.rate_bps)
                };
                a.id = i as u32 + 1;
                a
            })
            .collect();
        let symmetric = cfg.routing.mode == crate::config::RoutingMode::Ecmp;
        let back = if symmetric { back_ports(net) } else { Vec::new() };
        RateState { params, agents, d3_vec, d3_off, symmetric, back }
    }

    fn header_bytes(st: &RateState) -> u32 {
        st.params.header
    }

    fn start_flow(sim: &mut Sim<'_, Self>, id: u32) {
        sim.rate_start(id)
    }

    fn deliver(sim: &mut Sim<'_, Self>, host: u32, pkt: Packet<RateHdr>) {
        sim.rate_deliver(host, pkt)
    }

    fn on_timer(sim: &mut Sim<'_, Self>, flow: u32) {
        sim.rate_timer(flow)
    }

    #[inline]
    fn at_port(sim: &mut Sim<'_, Self>, port: u32, pkt: &mut Packet<RateHdr>) {
        let now = sim.now;
        let p = &sim.net.ports[port as usize];
        let (owner, queued) = (p.owner, p.bytes);
        if !sim.fam.params.nic_agents && sim.net.is_host(owner) {
            // switches alone compute rates: a host's NIC only queues and sends
            return;
        }
        let agent = &mut sim.fam.agents[port as usize];
        if agent.uses_d3_entry(pkt) {
            // D3: this port's entry of the flow's allocation vector
            let (start, end) = (sim.fam.d3_off[pkt.flow as usize], sim.fam.d3_off[pkt.flow as usize + 1]);
            let slot = (start + pkt.hdr.hop as u32).min(end - 1) as usize;
            agent.forward_d3(&sim.fam.params, now, queued, pkt, &mut sim.fam.d3_vec[slot]);
            return;
        }
        agent.forward(&sim.fam.params, now, queued, pkt);
        // (only PDQ has a reverse-path update: RCP's and D3's would do nothing, so their ACKs skip the look-up)
        if sim.fam.params.scheme == RateScheme::Pdq && pkt.is_ack() && !sim.net.is_host(owner) {
            // the ACK passes a switch on its way back: the port this flow's data leaves that switch by
            let data_dst = sim.flows.dst[pkt.flow as usize];
            let fwd = sim.net.ecmp_port(owner, data_dst, flow_hash(pkt.flow, false));
            sim.fam.agents[fwd as usize].reverse(&sim.fam.params, now, pkt);
        }
    }

    /// ACKs under ECMP retrace the data's path (`reverse_hop`); data packets take the usual ECMP port (None);
    /// under spraying every packet is sprayed here, with the same draws as the engine's own spraying.
    #[inline]
    fn route(sim: &mut Sim<'_, Self>, node: u32, pkt: &mut Packet<RateHdr>) -> Option<u32> {
        if !sim.fam.symmetric {
            let rng = &mut sim.rng;
            return Some(sim.net.next_port(node, pkt.dst, |n| crate::net::fast_range(rng.next_u64(), n)));
        }
        if !pkt.is_ack() {
            return None;
        }
        let f = pkt.flow as usize;
        reverse_hop(&sim.net, &sim.fam.back, pkt.flow, sim.flows.src[f], sim.flows.dst[f], node)
    }

    fn finish(sim: &mut Sim<'_, Self>) {
        for f in 0..sim.conns.len() {
            if let Some(c) = sim.conns[f].take() {
                sim.rate_record(&c);
            }
        }
    }
}

impl Sim<'_, Rate> {
    fn rate_start(&mut self, id: u32) {
        let i = id as usize;
        let now = self.now;
        self.results.start_ps[i] = now;
        let (src, dst, size) = (self.flows.src[i], self.flows.dst[i], self.flows.size_bytes[i]);
        let deadline = self.flows.deadline_ps.get(i).copied().unwrap_or(crate::flows::NO_DEADLINE);
        let line_rate = self.net.line_rate_bps(src);
        let random = self.rng.next_u64();
        let mut flow = Box::new(RateFlow::new(&self.fam.params, id, src, dst, size, deadline, line_rate, random));
        let info = self.fam.params.size_info;
        if info != crate::config::SizeInfo::Exact {
            let col = |c: &Vec<u64>| c.get(i).copied().unwrap_or(size);
            let f = &self.flows;
            flow.set_known(info, col(&f.estimate_bytes), col(&f.lower_bytes), col(&f.upper_bytes));
        }
        let (fwd, header, mss) = (flow_hash(id, false), self.fam.params.header, self.fam.params.mss);
        let hops = self.net.path_hops(src, dst, fwd);
        self.results.ideal_fct_ps[i] = crate::net::ideal::ideal_fct(&hops, size, mss, header);
        self.stats.connections_opened += 1;
        self.out.clear();
        flow.start(&self.fam.params, now, &mut self.out);
        self.conns[i] = Some(flow);
        self.open_flows += 1;
        self.stats.max_concurrent_flows = self.stats.max_concurrent_flows.max(self.open_flows);
        self.rate_after(id, RateOutcome::default());
    }

    fn rate_deliver(&mut self, host: u32, mut pkt: Packet<RateHdr>) {
        debug_assert_eq!(pkt.dst, host);
        let f = pkt.flow as usize;
        let now = self.now;
        let payload = (pkt.wire as u32).saturating_sub(self.header) as u64;
        let data = pkt.flags & (flags::ACK | flags::PROBE) == 0;
        if data {
            self.results.bytes_delivered[f] += payload;
        }
        let Some(c) = self.conns[f].as_deref_mut() else {
            if data && payload > 0 {
                self.results.duplicate_data[f] += 1;
            }
            return;
        };
        if pkt.is_ack() && host == c.src && self.fam.params.nic_agents {
            // the sender's own NIC is the first link of the flow's path: its agent sees the ACK too
            let nic = self.net.host_port[host as usize] as usize;
            self.fam.agents[nic].reverse(&self.fam.params, now, &mut pkt);
        }
        let c = self.conns[f].as_deref_mut().expect("checked above");
        self.out.clear();
        let o = c.on_packet(&self.fam.params, now, &pkt, &mut self.out);
        self.rate_after(pkt.flow, o);
    }

    fn rate_timer(&mut self, flow: u32) {
        let now = self.now;
        let Some(c) = self.conns[flow as usize].as_deref_mut() else { return };
        if c.timer_queued_at != now {
            return; // superseded by an earlier entry
        }
        c.timer_queued_at = NEVER;
        if c.deadline() > now {
            // the deadline moved later since this entry was queued: re-queue at the real one
            return self.rate_sync_timer(flow);
        }
        self.out.clear();
        let o = c.on_timer(&self.fam.params, now, &mut self.out);
        self.rate_after(flow, o);
    }

    /// Send what flow `flow` produced (each packet from the end it leaves: the sender's packets go to the
    /// receiver, and the other way round), record what the outcome says, and keep its timer entry in step.
    fn rate_after(&mut self, flow: u32, o: RateOutcome) {
        let f = flow as usize;
        let (src, dst) = match self.conns[f].as_deref() {
            Some(c) => (c.src, c.dst),
            None => return,
        };
        for k in 0..self.out.len() {
            let pkt = self.out[k];
            let from = if pkt.dst == dst { src } else { dst };
            if pkt.is_ack() {
                self.stats.ack_packets_sent += 1;
            } else {
                self.stats.data_packets_sent += 1;
            }
            let port = self.net.host_port[from as usize];
            self.enqueue(port, pkt);
        }
        self.out.clear();
        if o.receiver_done && self.results.finish_ps[f] == NEVER {
            self.results.finish_ps[f] = self.now;
            self.stats.flows_finished += 1;
            self.release_children(f);
            if let Some(counter) = self.progress {
                counter.set(self.stats.flows_finished, self.now);
            }
        }
        if o.terminated || o.sender_done {
            if o.terminated {
                self.results.terminated[f] = true;
            } else {
                self.results.sender_done_ps[f] = self.now;
            }
            if let Some(c) = self.conns[f].take() {
                self.rate_record(&c);
                self.open_flows -= 1;
            }
            return;
        }
        self.rate_sync_timer(flow);
    }

    /// Lazy timers: push an entry only when the deadline moved earlier than the queued one.
    #[inline]
    fn rate_sync_timer(&mut self, flow: u32) {
        if let Some(c) = self.conns[flow as usize].as_deref_mut() {
            // (a send time that has already passed is due now)
            let due = c.deadline().max(self.now);
            if due < c.timer_queued_at {
                c.timer_queued_at = due;
                self.events.push(due, Event::Timer(flow));
            }
        }
    }

    fn rate_record(&mut self, c: &RateFlow) {
        let f = c.flow as usize;
        self.results.retransmits[f] = c.counters.retransmits;
        self.results.timeouts[f] = c.counters.timeouts;
        self.results.bytes_sent[f] = c.counters.bytes_sent;
        self.results.probes[f] = c.counters.probes;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The switches a flow's data crosses, in order.
    fn data_switches(net: &Network<RateHdr>, src: u32, dst: u32, flow: u32) -> Vec<u32> {
        net.ecmp_path(src, dst, flow_hash(flow, false))
            .iter()
            .map(|&p| net.ports[p as usize].peer)
            .filter(|&n| !net.is_host(n))
            .collect()
    }

    /// On multipath fabrics (a fat-tree, a leaf-spine with four spines, BCube, Jellyfish) an ACK routed hop by
    /// hop with `reverse_hop` from the receiver crosses exactly the data's switches, in reverse, and reaches the
    /// sender; with its own ECMP hash many ACKs would not (checked too, so the fabrics do have other paths).
    #[test]
    fn acks_retrace_the_data_path_on_multipath_fabrics() {
        for topo in [
            r#"{"kind": "fat_tree", "k": 4}"#,
            r#"{"kind": "leaf_spine", "leaves": 4, "hosts_per_leaf": 4, "spines": 4}"#,
            r#"{"kind": "bcube", "n": 4, "k": 1}"#,
            r#"{"kind": "jellyfish", "switches": 20, "ports": 8, "network_ports": 5}"#,
        ] {
            let cfg = Config::from_json(&format!(r#"{{"topology": {topo}, "routing": {{"mode": "ecmp"}}}}"#)).unwrap();
            let net: Network<RateHdr> = Network::build(&cfg, 3);
            let back = back_ports(&net);
            let hosts = net.hosts;
            let mut differ = 0;
            for flow in 0..400u32 {
                let src = flow % hosts;
                let dst = (flow * 7 + 1 + flow / hosts) % hosts;
                if src == dst {
                    continue;
                }
                let mut want = data_switches(&net, src, dst, flow);
                want.reverse();
                let mut got = Vec::new();
                let mut at = net.ports[net.host_port[dst as usize] as usize].peer;
                while !net.is_host(at) {
                    got.push(at);
                    let p = reverse_hop(&net, &back, flow, src, dst, at).expect("on the data path");
                    at = net.ports[p as usize].peer;
                    assert!(got.len() <= want.len(), "{topo}: flow {flow} wanders");
                }
                assert_eq!(at, src, "{topo}: flow {flow}'s ACK ends at {at}");
                assert_eq!(got, want, "{topo}: flow {flow}");
                let by_hash: Vec<u32> = net
                    .ecmp_path(dst, src, flow_hash(flow, true))
                    .iter()
                    .map(|&p| net.ports[p as usize].peer)
                    .filter(|&n| !net.is_host(n))
                    .collect();
                differ += usize::from(by_hash != want);
            }
            assert!(differ > 0, "{topo}: no flow's ACK would have left its data path");
        }
    }
}
