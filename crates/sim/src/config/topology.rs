//! The `topology` section: the fabric's shape, built from parameters (one struct per kind).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The fabric, built from parameters. Rates in Gbit/s, one-way propagation delays in ns.
/// Every kind has host links (host <-> first switch); kinds with more than one switch also have core links.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TopologyConfig {
    /// N hosts on one switch (the QCLIMB and RAX testbeds).
    SingleSwitch(SingleSwitch),
    /// `senders` hosts on a left switch, `receivers` on a right switch, one core (bottleneck) link between them.
    Dumbbell(Dumbbell),
    /// Two-tier leaf-spine: every leaf connects to every spine by one core link.
    LeafSpine(LeafSpine),
    /// Three-tier k-ary fat-tree (k pods, k/2 edge and k/2 aggregation switches per pod, (k/2)^2 cores,
    /// k^3/4 hosts).
    FatTree(FatTree),
    /// BCube(n, k) (Guo et al., SIGCOMM 2009): n^(k+1) servers with k+1 ports each, k+1 levels of n^k n-port
    /// switches; servers relay (see [`Bcube`]).
    Bcube(Bcube),
    /// Jellyfish (Singla et al., NSDI 2012): a random regular graph of `switches` switches (see [`Jellyfish`]).
    Jellyfish(Jellyfish),
}

impl Default for TopologyConfig {
    fn default() -> Self {
        TopologyConfig::LeafSpine(LeafSpine::default())
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct SingleSwitch {
    /// Number of hosts, all on the one switch.
    pub hosts: u32,
    /// Rate of the host links (host to its first switch), in Gbit/s.
    pub host_link_gbps: f64,
    /// One-way propagation delay of a host link, in ns.
    pub host_link_delay_ns: f64,
}

impl Default for SingleSwitch {
    /// The QCLIMB testbed: 8 hosts at 25 Gbps. The paper gives no propagation delay; 1 us per link is a
    /// short rack cable plus NIC latency.
    fn default() -> Self {
        SingleSwitch { hosts: 8, host_link_gbps: 25.0, host_link_delay_ns: 1000.0 }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Dumbbell {
    /// Hosts on the left switch (the senders' side).
    pub senders: u32,
    /// Hosts on the right switch (the receivers' side).
    pub receivers: u32,
    /// Rate of the host links (host to its first switch), in Gbit/s.
    pub host_link_gbps: f64,
    /// Rate of the core links (switch to switch), in Gbit/s.
    pub core_link_gbps: f64,
    /// One-way propagation delay of a host link, in ns.
    pub host_link_delay_ns: f64,
    /// One-way propagation delay of a core link, in ns.
    pub core_link_delay_ns: f64,
}

impl Default for Dumbbell {
    fn default() -> Self {
        Dumbbell {
            senders: 4,
            receivers: 1,
            host_link_gbps: 10.0,
            core_link_gbps: 10.0,
            host_link_delay_ns: 1000.0,
            core_link_delay_ns: 1000.0,
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct LeafSpine {
    /// Number of leaf (top-of-rack) switches.
    pub leaves: u32,
    /// Hosts under each leaf switch.
    pub hosts_per_leaf: u32,
    /// Number of spine switches; every leaf has one core link to each.
    pub spines: u32,
    /// Rate of the host links (host to its first switch), in Gbit/s.
    pub host_link_gbps: f64,
    /// Rate of the core links (switch to switch), in Gbit/s.
    pub core_link_gbps: f64,
    /// One-way propagation delay of a host link, in ns.
    pub host_link_delay_ns: f64,
    /// One-way propagation delay of a core link, in ns.
    pub core_link_delay_ns: f64,
}

impl Default for LeafSpine {
    /// The 144-host fabric of the pFabric, PIAS, RAX and QCLIMB simulations, with the PIAS ns-2 delays
    /// (0.2 us per link plus 20 us on each host link; HKUST-SING/PIAS-NS2 @5fb5867): 85.2 us base RTT across a
    /// spine with 1500-byte packets.
    fn default() -> Self {
        LeafSpine {
            leaves: 9,
            hosts_per_leaf: 16,
            spines: 4,
            host_link_gbps: 10.0,
            core_link_gbps: 40.0,
            host_link_delay_ns: 20_200.0,
            core_link_delay_ns: 200.0,
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct FatTree {
    /// The fat-tree's arity: k pods of k/2 edge and k/2 aggregation switches with k ports each, (k/2)^2 core
    /// switches; an even number.
    pub k: u32,
    /// Hosts under each edge switch; 0 means k/2 (the non-oversubscribed fat-tree). HyLine's 256-host,
    /// 8-pod fabric is k = 8 with 8 hosts per edge.
    pub hosts_per_edge: u32,
    /// Rate of the host links (host to its first switch), in Gbit/s.
    pub host_link_gbps: f64,
    /// Rate of the core links (switch to switch), in Gbit/s.
    pub core_link_gbps: f64,
    /// One-way propagation delay of a host link, in ns.
    pub host_link_delay_ns: f64,
    /// One-way propagation delay of a core link, in ns.
    pub core_link_delay_ns: f64,
}

impl Default for FatTree {
    /// A k = 8 fat-tree (8 pods, 80 switches, 128 hosts) with HyLine's links: all 1 Gbps, 25 us per link as in
    /// its public ns-2 scripts (Soheil-ab/HyLine @f02140b), which gives the paper's 300 us cross-pod RTT.
    fn default() -> Self {
        FatTree {
            k: 8,
            hosts_per_edge: 0,
            host_link_gbps: 1.0,
            core_link_gbps: 1.0,
            host_link_delay_ns: 25_000.0,
            core_link_delay_ns: 25_000.0,
        }
    }
}

impl FatTree {
    /// Hosts under each edge switch.
    pub fn edge_hosts(&self) -> u32 {
        if self.hosts_per_edge == 0 { self.k / 2 } else { self.hosts_per_edge }
    }
}

/// BCube(n, k): servers with k+1 ports, k+1 levels of n^k switches with n ports each, n^(k+1) servers.
///
/// Wiring (the BCube paper's): server a = (a_k .. a_0) in base n connects at level i to the level-i switch
/// whose address is a's digits without a_i, on that switch's port a_i. Two servers differing in d digits are
/// d switch hops apart, through d - 1 other servers.
///
/// Servers relay packets, which the engine's hosts (one NIC, never forwarding) cannot: each server is its host
/// plus a *relay* node (a switch-kind node standing for the server's forwarding) joined by an internal link;
/// the relay owns the server's k+1 ports to the BCube switches. The internal link has no propagation delay and
/// a rate of max(8 Tbit/s, 100 x (k+1) x `host_link_gbps`), so it never limits a flow (1,500 B cross it in
/// 1.5 ns, twice per path). The relay's egress ports stand for the server's NIC queues: they take
/// `host.nic_buffer_bytes` and the NIC's ECN setting (`host.nic_ecn`), never a shared switch pool.
/// Routing is ECMP (or spraying) over all shortest server-relayed paths, not BCube's source routing (BSR).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Bcube {
    /// Ports per switch (the base of a server's address).
    pub n: u32,
    /// The highest level: k+1 levels, k+1 ports per server (1: dual-port servers).
    pub k: u32,
    /// Rate of the host links (host to its first switch), in Gbit/s.
    pub host_link_gbps: f64,
    /// One-way propagation delay of a host link, in ns.
    pub host_link_delay_ns: f64,
}

impl Default for Bcube {
    /// BCube(4, 1) with dual-port servers (the PDQ paper's BCube, §5.5): 16 servers, 8 switches. Links at
    /// 1 Gbps with 10 us of propagation each, the delay fctlab's PDQ reproduction gives every link.
    fn default() -> Self {
        Bcube { n: 4, k: 1, host_link_gbps: 1.0, host_link_delay_ns: 10_000.0 }
    }
}

impl Bcube {
    /// Number of servers, n^(k+1) (saturating: `validate` bounds it).
    pub fn servers(&self) -> u64 {
        let mut s: u64 = 1;
        for _ in 0..=self.k.min(64) {
            s = s.saturating_mul(self.n as u64);
        }
        s
    }

    /// Switches per level, n^k.
    pub fn switches_per_level(&self) -> u64 {
        self.servers() / self.n.max(1) as u64
    }

    /// Rate of a server's internal link between its host and its relay, in bit/s (see the type's docs).
    pub fn relay_link_bps(&self) -> u64 {
        let fast = 100.0 * (self.k as f64 + 1.0) * self.host_link_gbps * 1e9;
        (fast.ceil() as u64).max(8_000_000_000_000)
    }
}

/// Jellyfish: `switches` switches with `ports` ports each, `network_ports` of them wired to other switches in a
/// random `network_ports`-regular graph and the other `ports - network_ports` to hosts.
///
/// The graph is built as the Jellyfish paper does: join random pairs of switches that have free ports and are
/// not yet neighbours until no such pair is left; then a switch left with two or more free ports takes a random
/// link (x, y) apart and joins x and y (fctlab also joins two switches with one free port each this way).
/// No self-loops, no parallel links. When switches x network_ports is odd, one port stays free. The graph comes
/// from `graph_seed`, not the run's seed, so every scheme and run seed sees the same graph; a disconnected draw
/// is drawn again from the next seed derived from it. Routing is ECMP (or spraying) over all shortest paths
/// (the paper's k-shortest-path routing is not built).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Jellyfish {
    /// Number of switches (top-of-rack switches of the random graph).
    pub switches: u32,
    /// Ports per switch: `network_ports` to other switches, the rest to hosts.
    pub ports: u32,
    /// Ports of each switch wired to other switches (the degree of the random regular graph).
    pub network_ports: u32,
    /// Rate of the host links (host to its first switch), in Gbit/s.
    pub host_link_gbps: f64,
    /// Rate of the core links (switch to switch), in Gbit/s.
    pub core_link_gbps: f64,
    /// One-way propagation delay of a host link, in ns.
    pub host_link_delay_ns: f64,
    /// One-way propagation delay of a core link, in ns.
    pub core_link_delay_ns: f64,
    /// Seed of the random graph (not the run's seed: every run and scheme sees the same graph).
    pub graph_seed: u64,
}

impl Default for Jellyfish {
    /// The PDQ paper's Jellyfish (§5.5): 24-port switches with 16 network ports (2:1 network to server ports),
    /// here 20 switches, 160 servers (its Figure 8e has about 128; 16 network ports need at least 17 switches,
    /// and 20 leave the graph some randomness). Links at 1 Gbps with 10 us of propagation each, as fctlab's PDQ
    /// reproduction.
    fn default() -> Self {
        Jellyfish {
            switches: 20,
            ports: 24,
            network_ports: 16,
            host_link_gbps: 1.0,
            core_link_gbps: 1.0,
            host_link_delay_ns: 10_000.0,
            core_link_delay_ns: 10_000.0,
            graph_seed: 1,
        }
    }
}

impl Jellyfish {
    /// Hosts under each switch.
    pub fn hosts_per_switch(&self) -> u32 {
        self.ports.saturating_sub(self.network_ports)
    }
}

impl TopologyConfig {
    /// The topology kinds, as written in configs.
    pub const KINDS: [&'static str; 6] =
        ["single_switch", "dumbbell", "leaf_spine", "fat_tree", "bcube", "jellyfish"];

    /// The kind's name, as written in configs.
    pub fn kind(&self) -> &'static str {
        match self {
            TopologyConfig::SingleSwitch(_) => "single_switch",
            TopologyConfig::Dumbbell(_) => "dumbbell",
            TopologyConfig::LeafSpine(_) => "leaf_spine",
            TopologyConfig::FatTree(_) => "fat_tree",
            TopologyConfig::Bcube(_) => "bcube",
            TopologyConfig::Jellyfish(_) => "jellyfish",
        }
    }

    /// Number of hosts the topology has.
    pub fn hosts(&self) -> u32 {
        match self {
            TopologyConfig::SingleSwitch(t) => t.hosts,
            TopologyConfig::Dumbbell(t) => t.senders + t.receivers,
            TopologyConfig::LeafSpine(t) => t.leaves * t.hosts_per_leaf,
            TopologyConfig::FatTree(t) => t.k * (t.k / 2) * t.edge_hosts(),
            TopologyConfig::Bcube(t) => t.servers().min(u32::MAX as u64) as u32,
            TopologyConfig::Jellyfish(t) => t.switches.saturating_mul(t.hosts_per_switch()),
        }
    }

    /// Host link rate in Gbit/s (the rate the load is defined on).
    pub fn host_link_gbps(&self) -> f64 {
        match self {
            TopologyConfig::SingleSwitch(t) => t.host_link_gbps,
            TopologyConfig::Dumbbell(t) => t.host_link_gbps,
            TopologyConfig::LeafSpine(t) => t.host_link_gbps,
            TopologyConfig::FatTree(t) => t.host_link_gbps,
            TopologyConfig::Bcube(t) => t.host_link_gbps,
            TopologyConfig::Jellyfish(t) => t.host_link_gbps,
        }
    }
}
