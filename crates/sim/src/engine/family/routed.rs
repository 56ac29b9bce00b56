//! Source routes for the TCP family's strict-priority schemes (a trace's `path` column, `FlowSet::path`): the TCP
//! family's hosts (`engine::family::tcp`, shared through [`TcpHosts`]) with each routed flow's data packets
//! carrying the route of its path (`net::route`), which the switches decode as HyLine's do. ACKs and flows
//! without a path go by ECMP. The route rides in the field rank-queue switches read as the rank, so pFabric and
//! LAS cannot take routes (`validate::flows` refuses them, and routes that are no path of the fabric).
//!
//! Path indices: the equal-cost paths from a flow's source to its destination, in the order of the port taken at
//! each switch with a choice (`Network::candidates`), the first such switch most significant; e.g. on a k = 4
//! fat-tree between pods, path 2i + j leaves the edge switch by its i-th candidate uplink and the aggregation
//! switch by its j-th.

use super::Family;
use super::tcp::{TcpHosts, TcpState};
use crate::config::Config;
use crate::engine::Sim;
use crate::flows::FlowSet;
use crate::net::packet::Packet;
use crate::net::route::{decode, route_codes, route_step};
use crate::net::Network;
use crate::transport::tcp::{Conn, TcpParams};
use crate::units::Ps;

/// The TCP family with source routes (see the module docs).
pub(crate) struct Routed;

pub(crate) struct RoutedState {
    tcp: TcpState,
    /// Per flow: `ROUTED | code` of its path, or 0 (ECMP).
    route: Vec<u32>,
}

impl TcpHosts for Routed {
    #[inline(always)]
    fn tcp(st: &RoutedState) -> &TcpState {
        &st.tcp
    }
    #[inline(always)]
    fn tcp_mut(st: &mut RoutedState) -> &mut TcpState {
        &mut st.tcp
    }
    #[inline(always)]
    fn params(st: &RoutedState, _flow: u32) -> &TcpParams {
        &st.tcp.params
    }

    const WATCH: bool = true;

    /// A routed flow's data packets carry its route.
    #[inline]
    fn outgoing(st: &mut RoutedState, _now: Ps, pkt: &mut Packet) -> bool {
        if !pkt.is_ack() {
            let r = st.route[pkt.flow as usize];
            if r != 0 {
                pkt.sack = r;
            }
        }
        true
    }
}

impl Family for Routed {
    type Hdr = ();
    type Flow = Conn;
    type State = RoutedState;
    const AGENTS: bool = false;
    const ROUTED: bool = true;

    fn state(cfg: &Config, flows: &FlowSet, hosts_here: bool, net: &Network) -> RoutedState {
        RoutedState {
            tcp: TcpState::new(cfg, flows, hosts_here),
            route: if hosts_here { route_codes(net, flows).expect("checked before the run") } else { Vec::new() },
        }
    }

    fn header_bytes(st: &RoutedState) -> u32 {
        st.tcp.params.header
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

    #[inline]
    fn route(sim: &mut Sim<'_, Self>, node: u32, pkt: &mut Packet) -> Option<u32> {
        route_step(&sim.net, node, pkt)
    }

    /// The port `route` will choose, read ahead without rewriting the packet (PFC's next-queue mode).
    fn next_port(net: &Network, node: u32, pkt: &Packet) -> Option<u32> {
        decode(net, node, pkt).map(|(port, _)| port)
    }

    fn finish(sim: &mut Sim<'_, Self>) {
        sim.finish_tcp();
    }
}
