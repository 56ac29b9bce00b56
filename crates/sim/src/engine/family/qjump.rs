//! QJump as HyLine compares with it (Grosvenor et al., NSDI 2015; the authors' ns-2 model, camsas/qjump-ns2
//! @2a37e60): TCP (the TCP family's code in `engine::family::tcp`, shared through [`TcpHosts`]) whose packets pass a
//! rate limiter at the sending host.
//!
//! - **Levels.** A flow's level is set by its size when it starts (`scheme.qjump_size_thresholds_bytes`): the
//!   smallest flows at level 0, which is also their priority (the highest queue); larger flows at higher levels
//!   and lower priorities. ACKs keep `transport.ack_priority`.
//! - **Rate limiting.** Each flow has a token bucket of its level's size (`scheme.qjump_bucket_bytes`, in wire
//!   bytes), full when the flow starts and filled up again every `scheme.qjump_interval_us` after it. A packet
//!   that finds too few tokens is dropped at the host (the ns-2 model's `QJUMP::recv` drops it; TCP recovers it
//!   as any loss), counted in `drops` and `host_limiter_drops`. ACKs are not limited.
//! - **Defaults** (see [`crate::config::SchemeConfig`]): the scripts' eight levels; each bucket holds the largest
//!   flow of its level, so a flow no larger than its level's bound leaves in one burst and only flows the
//!   application gives more than their size would be held back; what throttles a level is its rate (bucket per
//!   interval: from 0.7% of the link for the smallest flows to line rate for the largest). The interval is the
//!   scripts' 1.05 ms at 10 Gbps scaled to the host link rate (10.5 ms at HyLine's 1 Gbps), which keeps every
//!   level's share of the link.
//! - **Switch queue** (`scheme.qjump_queue`, see [`crate::config::QjumpQueue`]): the strict-priority FIFOs of
//!   the TCP family by default (a level is a queue); `"ranked"` gives every port the authors' ns-2 queue, one
//!   queue that serves the most urgent priority first and drops the least urgent packet when full (pFabric's
//!   rank queue ranked by the priority field, set up by the engine: nothing here changes).
//! - **Choices** (the design the QJump paper describes differs, and HyLine's paper does not say which it ran):
//!   the limiter is per flow, not per host and level (the ns-2 model's `activate-fid`); the QJump paper's
//!   throughput factors f_i and network epoch are not derived from the fabric here: set the buckets and the
//!   interval to get them.

use super::Family;
use super::tcp::{TcpHosts, TcpState};
use crate::config::{Config, SizeInfo};
use crate::engine::Sim;
use crate::flows::FlowSet;
use crate::net::packet::Packet;
use crate::net::Network;
use crate::transport::tcp::{Conn, TcpParams};
use crate::units::{Ps, PS_PER_US};

/// The QJump family (see the module docs).
pub(crate) struct Qjump;

pub(crate) struct QjumpState {
    tcp: TcpState,
    thresholds: Vec<u64>,
    buckets: Vec<u64>,
    interval: Ps,
    /// Per flow: its level, its tokens (wire bytes) and the refill period they were counted in.
    level: Vec<u8>,
    tokens: Vec<u64>,
    period: Vec<u64>,
    start: Vec<Ps>,
}

impl QjumpState {
    /// The level of a flow of `size` bytes.
    fn level_of(&self, size: u64) -> u8 {
        self.thresholds.iter().take_while(|&&t| size > t).count() as u8
    }
}

impl TcpHosts for Qjump {
    #[inline(always)]
    fn tcp(st: &QjumpState) -> &TcpState {
        &st.tcp
    }
    #[inline(always)]
    fn tcp_mut(st: &mut QjumpState) -> &mut TcpState {
        &mut st.tcp
    }
    #[inline(always)]
    fn params(st: &QjumpState, _flow: u32) -> &TcpParams {
        &st.tcp.params
    }

    const WATCH: bool = true;

    /// A data packet takes its wire bytes from its flow's bucket, refilled at every interval since the flow
    /// started; without enough tokens it is dropped.
    #[inline]
    fn outgoing(st: &mut QjumpState, now: Ps, pkt: &mut Packet) -> bool {
        if pkt.is_ack() {
            return true;
        }
        let f = pkt.flow as usize;
        let period = (now - st.start[f]) / st.interval;
        if period != st.period[f] {
            st.period[f] = period;
            st.tokens[f] = st.buckets[st.level[f] as usize];
        }
        let wire = pkt.wire as u64;
        if st.tokens[f] < wire {
            return false;
        }
        st.tokens[f] -= wire;
        true
    }
}

impl Family for Qjump {
    type Hdr = ();
    type Flow = Conn;
    type State = QjumpState;
    const AGENTS: bool = false;

    fn state(cfg: &Config, flows: &FlowSet, hosts_here: bool, _net: &Network) -> QjumpState {
        let sc = &cfg.scheme;
        let interval_us = if sc.qjump_interval_us > 0.0 {
            sc.qjump_interval_us
        } else {
            1_050.0 * 10.0 / cfg.topology.host_link_gbps()
        };
        let n = if hosts_here { flows.len() } else { 0 };
        let mut st = QjumpState {
            tcp: TcpState::new(cfg, flows, hosts_here),
            thresholds: sc.qjump_size_thresholds_bytes.clone(),
            buckets: sc.qjump_bucket_bytes.clone(),
            interval: ((interval_us * PS_PER_US as f64).round() as Ps).max(1),
            level: Vec::new(),
            tokens: vec![0; n],
            period: vec![0; n],
            start: vec![0; n],
        };
        // the level by the size it knows (`scheme.size_info`); knowing none, every flow at the last level
        let info = sc.size_view();
        st.level = (0..n)
            .map(|i| match info {
                SizeInfo::None => st.thresholds.len() as u8,
                _ => st.level_of(flows.known_at_start(i, info)),
            })
            .collect();
        st
    }

    fn header_bytes(st: &QjumpState) -> u32 {
        st.tcp.params.header
    }

    fn start_flow(sim: &mut Sim<'_, Self>, id: u32) {
        let i = id as usize;
        let st = &mut sim.fam;
        st.start[i] = sim.now;
        st.period[i] = 0;
        st.tokens[i] = st.buckets[st.level[i] as usize];
        let prio = st.level[i];
        let conn = sim.open_conn(id, prio);
        sim.launch(id, conn);
    }

    #[inline(always)]
    fn deliver(sim: &mut Sim<'_, Self>, host: u32, pkt: Packet) {
        sim.deliver(host, pkt)
    }

    fn on_timer(sim: &mut Sim<'_, Self>, id: u32) {
        sim.on_timer(id)
    }

    fn finish(sim: &mut Sim<'_, Self>) {
        sim.finish_tcp();
    }
}
