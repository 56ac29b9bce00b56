//! Transport families: what differs between the TCP family, the explicit-rate family, Homa's receiver-driven one,
//! HyLine's and QJump's, behind one trait that the run loop is generic over.
//!
//! A family is the hosts' per-flow endpoint (sender and receiver in one state machine), what its packets carry
//! beyond the common fields (`Hdr`), and optionally an agent per egress port that sees every packet the port
//! is offered and may rewrite its header (`AGENTS`: RCP's rate, D3's allocation, PDQ's flow list). The fabric
//! (topology, routing, queues, buffers, wires), the event queue, the counters and the results are the
//! engine's and serve every family alike.
//!
//! `Sim<F>` is compiled once per family (static dispatch: no trait objects, no branch on the family per
//! packet), so the TCP family's code path, packet size and results stay what they were before families
//! existed; `AGENTS` is a constant, so the agent hook costs the TCP family nothing.
//!
//! The families, one file each: [`tcp`] (and the TCP host code that [`routed`], [`hyline`] and [`qjump`] reuse
//! through `TcpHosts`), [`routed`] (source-routed TCP), [`hyline`], [`qjump`], [`rate`] (RCP, D3, PDQ) and
//! [`homa`].

pub(super) mod homa;
pub(super) mod hyline;
pub(super) mod qjump;
pub(super) mod rate;
pub(super) mod routed;
pub(super) mod tcp;

use super::Sim;
use crate::config::Config;
use crate::flows::FlowSet;
use crate::net::packet::{Header, Packet};
use crate::net::Network;

pub(crate) trait Family: Sized + 'static {
    /// What the family's packets carry beyond the common fields (`()` for TCP).
    type Hdr: Header;
    /// One flow's state, both ends.
    type Flow: Send;
    /// The family's run-wide state (parameters, connection pools, port agents); one per side of a two-thread
    /// run.
    type State: Send;
    /// Does the family run an agent at every egress port ([`Family::at_port`])?
    const AGENTS: bool;
    /// Does the family route some packets itself ([`Family::route`]: HyLine's source-routed flows)? Otherwise
    /// switches route by ECMP or spraying; as a constant, the hook costs the other families nothing.
    const ROUTED: bool = false;

    /// The state of a run (`hosts_here`: this side simulates the hosts; false on the switches' side of a
    /// two-thread run).
    fn state(cfg: &Config, flows: &FlowSet, hosts_here: bool, net: &Network<Self::Hdr>) -> Self::State;

    /// Timer ids the family uses beyond the flow ids (`Event::Timer(flows + k)` for k below this: HyLine's
    /// control plane, Homa's hosts); the engine's own timer ids (PFC's frames) come after them.
    fn extra_timer_ids(_net: &Network<Self::Hdr>) -> usize {
        0
    }

    /// Header bytes of a data packet (wire size minus payload), for the dropped and delivered byte counts.
    fn header_bytes(st: &Self::State) -> u32;

    /// Flow `id` starts now.
    fn start_flow(sim: &mut Sim<'_, Self>, id: u32);

    /// A packet reached host `host` (its destination).
    fn deliver(sim: &mut Sim<'_, Self>, host: u32, pkt: Packet<Self::Hdr>);

    /// Flow `flow`'s timer entry fired (the family keeps the entry in step with its own deadlines: TCP's
    /// retransmission and delayed-ACK timers; a rate sender's next send time, probe and retransmission timers).
    fn on_timer(sim: &mut Sim<'_, Self>, flow: u32);

    /// A packet is offered to egress port `port` (before admission). Called only when `AGENTS`.
    #[inline(always)]
    fn at_port(_sim: &mut Sim<'_, Self>, _port: u32, _pkt: &mut Packet<Self::Hdr>) {}

    /// The egress port switch `node` sends `pkt` to (which it may rewrite), or None for the usual routing. Called
    /// only when `ROUTED`.
    #[inline(always)]
    fn route(_sim: &mut Sim<'_, Self>, _node: u32, _pkt: &mut Packet<Self::Hdr>) -> Option<u32> {
        None
    }

    /// The egress port switch `node` will choose for `pkt` when it arrives there ([`Family::route`]'s choice,
    /// without rewriting anything), or None for the usual routing: what PFC's "next_queue" mode reads before
    /// the packet leaves the port upstream. Called only when `ROUTED`.
    fn next_port(_net: &Network<Self::Hdr>, _node: u32, _pkt: &Packet<Self::Hdr>) -> Option<u32> {
        None
    }

    /// The run is over: record what the flows still open have counted, and the family's own statistics.
    fn finish(sim: &mut Sim<'_, Self>);
}
