//! The fabric: nodes (hosts, then switches), directed ports, and routing tables.
//!
//! Node ids `0..hosts` are hosts (each with exactly one NIC port), the rest are switches. A duplex link is two
//! [`port::Port`]s, one per direction. A switch's candidates towards host d are its ports whose far end is
//! one hop closer to d (all shortest paths; hosts never forward). ECMP picks a candidate by hashing the flow's
//! 5-tuple with a per-switch salt drawn from the run's seed (so that tiers do not polarize); spraying picks
//! one at random for every packet. Both look up flat tables: no hash map on the per-packet path.
//!
//! The tables are indexed by the destination's *edge switch* (the switch its one link goes to), not by the
//! host: every path to host d ends with the hop from its edge switch E, so a switch other than E has the same
//! candidates towards d as towards E, and E's only candidate is its port facing d. Breadth-first search runs
//! once per edge switch, and the table (switches x edge switches, about 1 KiB for the 144-host leaf-spine
//! against 15 KiB per host) stays in the L1 cache, where a per-host table missed on half of all events.
//!
//! BCube's servers forward packets, which hosts never do: each server is a host plus a *relay*, a switch-kind
//! node that owns the server's ports, joined to the host by an internal link (see `config::Bcube`). The relays
//! are then the edge switches, one per host, and the same search finds every shortest path through servers;
//! the tables grow as servers x (servers + switches).

pub mod ideal;
pub mod jellyfish;
pub mod packet;
pub mod pfc;
pub mod port;
pub mod rank_queue;
pub mod route;
pub mod scale;
pub mod wire;

use crate::config::{BufferMode, Config, EcnMode, TopologyConfig};
use crate::units::{gbps_to_bps, ns_to_ps, Ps};
use packet::Header;
use port::Port;

/// A node's role.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeKind {
    Host,
    Switch,
}

#[derive(Debug, Clone)]
pub struct Node {
    pub kind: NodeKind,
    /// Egress ports of this node.
    pub ports: Vec<u32>,
    /// Tier for reporting (0 = host, 1 = edge/leaf, 2 = aggregation/spine, 3 = core).
    pub tier: u8,
}

/// Shared buffer pool of one switch.
#[derive(Debug, Clone, Copy)]
pub struct Pool {
    pub limit: u64,
    pub used: u64,
}

#[derive(Debug, Clone)]
pub struct Network<H: Header = ()> {
    pub hosts: u32,
    pub nodes: Vec<Node>,
    pub ports: Vec<Port<H>>,
    /// Per port: the address of its wire's head slot when its arrival event was scheduled (see
    /// [`Network::arrival_scheduled`]), for [`Network::prefetch_arrival`]; only ever prefetched, never read.
    head_addr: Vec<usize>,
    /// NIC port of each host.
    pub host_port: Vec<u32>,
    /// Each host's line rate in bit/s: the most one flow of its can send, the rate of its first link that
    /// is not internal (its NIC's rate, except on BCube, where the NIC port is the internal link to the
    /// server's relay and the line rate is the rate of the server's ports).
    line_bps: Vec<u64>,
    /// For each host: the dense index of its edge switch (see the module docs), and that switch's port
    /// facing the host.
    dests: Vec<(u32, u32)>,
    /// Switches with hosts attached (edge switches).
    edges: u32,
    /// `routes[(switch - hosts) * edges + e] = (a, len)` towards the hosts of edge switch `e`: with one next
    /// hop (len == 1), `a` is its port (a forwarding decision then reads one table entry); with several, they
    /// are `route_ports[a..a + len]`; len == 0 at the edge switch itself (the port is the destination's in
    /// `dests`).
    routes: Vec<(u32, u32)>,
    route_ports: Vec<u32>,
    /// Per-switch ECMP salt (indexed by switch - hosts).
    pub salts: Vec<u64>,
    pub pools: Vec<Pool>,
    pub dt_alpha: f64,
    /// Per port: its tier for drop counting, an index into `tier_names` (see [`Network::classify_tiers`]).
    /// Read only when a packet is dropped.
    pub port_tier: Vec<u8>,
    /// Names of the port tiers this fabric has, in path order (the NIC first, the ports facing hosts last).
    pub tier_names: Vec<&'static str>,
}

/// SplitMix64's finalizer: a fast, well-mixed 64-bit hash step.
#[inline]
pub fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Map a 64-bit hash uniformly onto 0..n without a division.
#[inline]
pub fn fast_range(h: u64, n: u32) -> u32 {
    (((h >> 32) * n as u64) >> 32) as u32
}

/// ECMP's hash of flow `flow` in one direction (`reverse`: its ACKs). A switch maps it, salted with its own
/// seed, onto its equal-cost ports ([`Network::ecmp_port`]), so every packet of a flow's direction takes one
/// path.
///
/// A real switch hashes the 5-tuple; here the hash is of the flow id and direction, which is what the
/// 5-tuple stands for in a simulation: every flow is its own TCP connection, so distinct flows have distinct
/// 5-tuples and, to a good hash, independent paths, exactly as they do here. (Hashing the id rather than
/// carrying a 5-tuple hash in each packet keeps `Packet` at 24 bytes.)
#[inline]
pub fn flow_hash(flow: u32, reverse: bool) -> u32 {
    (mix64(((flow as u64) << 1) | reverse as u64) >> 32) as u32
}

struct Builder<H: Header> {
    net: Network<H>,
    /// The nodes that are BCube servers' relays: their ports are the server's NIC ports, with the NIC's buffer
    /// and ECN setting, outside any shared switch pool.
    relays: std::ops::Range<u32>,
    queues: u32,
    switch_buffer: u64,
    nic_buffer: u64,
    ecn: EcnMode,
    nic_ecn: EcnMode,
    ecn_threshold: u64,
}

impl<H: Header> Builder<H> {
    fn add_node(&mut self, kind: NodeKind, tier: u8) -> u32 {
        self.net.nodes.push(Node { kind, ports: Vec::new(), tier });
        (self.net.nodes.len() - 1) as u32
    }

    fn add_port(&mut self, from: u32, to: u32, rate_bps: u64, delay_ps: Ps) {
        let is_host = self.net.nodes[from as usize].kind == NodeKind::Host;
        let nic = is_host || self.relays.contains(&from);
        let (buffer, ecn) = if nic { (self.nic_buffer, self.nic_ecn) } else { (self.switch_buffer, self.ecn) };
        let mut port = Port::new(from, to, rate_bps, delay_ps, self.queues, buffer, ecn, self.ecn_threshold);
        if !nic && !self.net.pools.is_empty() {
            port.set_pool(from - self.net.hosts);
        }
        let id = self.net.ports.len() as u32;
        self.net.ports.push(port);
        self.net.head_addr.push(0);
        self.net.nodes[from as usize].ports.push(id);
        if is_host {
            assert_eq!(self.net.host_port[from as usize], u32::MAX, "host {from} has two links");
            self.net.host_port[from as usize] = id;
        }
    }

    fn link(&mut self, a: u32, b: u32, gbps: f64, delay_ns: f64) {
        let rate = gbps_to_bps(gbps);
        let d = ns_to_ps(delay_ns);
        self.add_port(a, b, rate, d);
        self.add_port(b, a, rate, d);
    }
}

impl<H: Header> Network<H> {
    /// Build the fabric a config describes, with routing tables and ECMP salts drawn from `salt_seed`.
    pub fn build(cfg: &Config, salt_seed: u64) -> Network<H> {
        let hosts = cfg.topology.hosts();
        let sw = &cfg.switch;
        let ecn_mode = sw.ecn;
        let mut b = Builder {
            net: Network {
                hosts,
                nodes: Vec::new(),
                ports: Vec::new(),
                head_addr: Vec::new(),
                host_port: vec![u32::MAX; hosts as usize],
                line_bps: Vec::new(),
                dests: Vec::new(),
                edges: 0,
                routes: Vec::new(),
                route_ports: Vec::new(),
                salts: Vec::new(),
                pools: Vec::new(),
                dt_alpha: sw.dt_alpha,
                port_tier: Vec::new(),
                tier_names: Vec::new(),
            },
            relays: 0..0,
            queues: sw.queues,
            switch_buffer: if sw.buffer == BufferMode::Port { sw.buffer_bytes } else { 0 },
            nic_buffer: cfg.host.nic_buffer(cfg.switch.buffer_bytes),
            ecn: ecn_mode,
            nic_ecn: if cfg.host.nic_ecn { ecn_mode } else { EcnMode::Off },
            ecn_threshold: sw.ecn_threshold_bytes,
        };
        for _ in 0..hosts {
            b.add_node(NodeKind::Host, 0);
        }
        let count_switches = match &cfg.topology {
            TopologyConfig::SingleSwitch(_) => 1,
            TopologyConfig::Dumbbell(_) => 2,
            TopologyConfig::LeafSpine(t) => t.leaves + t.spines,
            TopologyConfig::FatTree(t) => t.k * t.k + t.k * t.k / 4,
            // (the relays come first and have no pool: their ports are the servers' NICs)
            TopologyConfig::Bcube(t) => (t.servers() + (t.k as u64 + 1) * t.switches_per_level()) as u32,
            TopologyConfig::Jellyfish(t) => t.switches,
        };
        if sw.buffer == BufferMode::Shared {
            b.net.pools = vec![Pool { limit: sw.shared_buffer_bytes, used: 0 }; count_switches as usize];
        }
        match &cfg.topology {
            TopologyConfig::SingleSwitch(t) => {
                let s = b.add_node(NodeKind::Switch, 1);
                for h in 0..hosts {
                    b.link(h, s, t.host_link_gbps, t.host_link_delay_ns);
                }
            }
            TopologyConfig::Dumbbell(t) => {
                let left = b.add_node(NodeKind::Switch, 1);
                let right = b.add_node(NodeKind::Switch, 1);
                for h in 0..t.senders {
                    b.link(h, left, t.host_link_gbps, t.host_link_delay_ns);
                }
                for h in t.senders..hosts {
                    b.link(h, right, t.host_link_gbps, t.host_link_delay_ns);
                }
                b.link(left, right, t.core_link_gbps, t.core_link_delay_ns);
            }
            TopologyConfig::LeafSpine(t) => {
                let leaves: Vec<u32> = (0..t.leaves).map(|_| b.add_node(NodeKind::Switch, 1)).collect();
                let spines: Vec<u32> = (0..t.spines).map(|_| b.add_node(NodeKind::Switch, 2)).collect();
                for h in 0..hosts {
                    b.link(h, leaves[(h / t.hosts_per_leaf) as usize], t.host_link_gbps, t.host_link_delay_ns);
                }
                for &l in &leaves {
                    for &s in &spines {
                        b.link(l, s, t.core_link_gbps, t.core_link_delay_ns);
                    }
                }
            }
            TopologyConfig::FatTree(t) => {
                let half = t.k / 2;
                let mut edges = Vec::new();
                let mut aggs = Vec::new();
                for _pod in 0..t.k {
                    edges.push((0..half).map(|_| b.add_node(NodeKind::Switch, 1)).collect::<Vec<_>>());
                }
                for _pod in 0..t.k {
                    aggs.push((0..half).map(|_| b.add_node(NodeKind::Switch, 2)).collect::<Vec<_>>());
                }
                let cores: Vec<u32> = (0..half * half).map(|_| b.add_node(NodeKind::Switch, 3)).collect();
                let per_edge = t.edge_hosts();
                for h in 0..hosts {
                    let edge_global = h / per_edge;
                    let e = edges[(edge_global / half) as usize][(edge_global % half) as usize];
                    b.link(h, e, t.host_link_gbps, t.host_link_delay_ns);
                }
                for pod in 0..t.k as usize {
                    for &e in &edges[pod] {
                        for &a in &aggs[pod] {
                            b.link(e, a, t.core_link_gbps, t.core_link_delay_ns);
                        }
                    }
                    for (j, &a) in aggs[pod].iter().enumerate() {
                        for c in 0..half as usize {
                            b.link(a, cores[j * half as usize + c], t.core_link_gbps, t.core_link_delay_ns);
                        }
                    }
                }
            }
            TopologyConfig::Bcube(t) => {
                // nodes: hosts 0..s, the relay of server a at s + a, then level i's switch j at
                // 2s + i n^k + j (see `Bcube` for the wiring)
                let (n, s, per_level) = (t.n, hosts, t.switches_per_level() as u32);
                let relays: Vec<u32> = (0..s).map(|_| b.add_node(NodeKind::Switch, 1)).collect();
                b.relays = relays[0]..relays[0] + s;
                for h in 0..s {
                    let (rate, d) = (t.relay_link_bps(), 0);
                    b.add_port(h, relays[h as usize], rate, d);
                    b.add_port(relays[h as usize], h, rate, d);
                }
                let mut pow = 1; // n^i
                for _level in 0..=t.k {
                    for j in 0..per_level {
                        let sw = b.add_node(NodeKind::Switch, 2);
                        // port p of the switch leads to the server whose digit i is p and whose other digits
                        // are the switch's address j
                        for p in 0..n {
                            let a = (j / pow) * pow * n + p * pow + j % pow;
                            b.link(relays[a as usize], sw, t.host_link_gbps, t.host_link_delay_ns);
                        }
                    }
                    pow *= n;
                }
            }
            TopologyConfig::Jellyfish(t) => {
                let links = jellyfish::graph(t).expect("validate checked the graph");
                let switches: Vec<u32> = (0..t.switches).map(|_| b.add_node(NodeKind::Switch, 1)).collect();
                let per = t.hosts_per_switch();
                for h in 0..hosts {
                    b.link(h, switches[(h / per) as usize], t.host_link_gbps, t.host_link_delay_ns);
                }
                for (x, y) in links {
                    b.link(switches[x as usize], switches[y as usize], t.core_link_gbps, t.core_link_delay_ns);
                }
            }
        }
        let mut net = b.net;
        net.line_bps = match &cfg.topology {
            TopologyConfig::Bcube(t) => vec![gbps_to_bps(t.host_link_gbps); hosts as usize],
            _ => net.host_port.iter().map(|&p| net.ports[p as usize].rate_bps).collect(),
        };
        net.compute_routes();
        let level_names: &[&'static str] = match &cfg.topology {
            TopologyConfig::LeafSpine(_) => &["host", "leaf", "spine"],
            TopologyConfig::FatTree(_) => &["host", "edge", "agg", "core"],
            TopologyConfig::Bcube(_) => &["host", "server", "bcube"],
            TopologyConfig::SingleSwitch(_) | TopologyConfig::Dumbbell(_) | TopologyConfig::Jellyfish(_) => {
                &["host", "switch"]
            }
        };
        net.classify_tiers(level_names);
        let switches = net.nodes.len() as u32 - hosts;
        net.salts = (0..switches as u64).map(|s| mix64(salt_seed ^ mix64(s + 1))).collect();
        net
    }

    /// Give every port its tier for drop counting, by where it sits: `host_nic` (a host's port), then for a
    /// switch at level L (`Node::tier`, named by `level_names[L]`: leaf/spine, edge/agg/core, switch)
    /// `L_up` (its peer is a switch of a higher level), `L_across` (a switch of the same level: the dumbbell's
    /// middle link), `L_down` (a lower level; a switch port facing a host is `leaf_down`, `edge_down` or
    /// `switch_down`). The leaf-spine fabric has `host_nic`, `leaf_up`, `spine_down`, `leaf_down`: the four
    /// hops of a path between racks, in order.
    /// BCube's relays are level `server`, its switches level `bcube`: `host_nic` (host to relay, the internal
    /// link), `server_out` (a server's ports to the switches), `bcube_down`, `server_in` (relay to host).
    fn classify_tiers(&mut self, level_names: &[&'static str]) {
        // (owner level, direction: 0 up, 1 across, 2 down); path order: up the levels, across, down the levels
        let class_of = |net: &Network<H>, p: &port::Port<H>| -> (u8, u8) {
            let (a, b) = (net.nodes[p.owner as usize].tier, net.nodes[p.peer as usize].tier);
            if net.is_host(p.owner) {
                (0, 0)
            } else {
                (a, if b > a { 0 } else if b == a { 1 } else { 2 })
            }
        };
        let key = |(level, dir): (u8, u8)| -> i32 {
            match dir {
                0 => level as i32,       // the NIC, then the ups, lowest level first
                1 => 100,                // across
                _ => 200 - level as i32, // the downs, highest level first
            }
        };
        let mut classes: Vec<(u8, u8)> = self.ports.iter().map(|p| class_of(self, p)).collect();
        classes.sort_by_key(|&c| key(c));
        classes.dedup();
        let name = |(level, dir): (u8, u8)| -> &'static str {
            let l = level_names.get(level as usize).copied().unwrap_or("switch");
            match (l, dir) {
                ("host", _) => "host_nic",
                (_, 1) => "switch_across",
                ("leaf", 0) => "leaf_up",
                ("leaf", _) => "leaf_down",
                ("spine", _) => "spine_down",
                ("edge", 0) => "edge_up",
                ("edge", _) => "edge_down",
                ("agg", 0) => "agg_up",
                ("agg", _) => "agg_down",
                ("core", _) => "core_down",
                ("server", 0) => "server_out",
                ("server", _) => "server_in",
                ("bcube", _) => "bcube_down",
                (_, 0) => "switch_up",
                _ => "switch_down",
            }
        };
        self.tier_names = classes.iter().map(|&c| name(c)).collect();
        self.port_tier = self
            .ports
            .iter()
            .map(|p| {
                let c = class_of(self, p);
                classes.iter().position(|&x| x == c).expect("every class was listed") as u8
            })
            .collect();
    }

    /// Equal-cost shortest-path next hops from every switch towards every edge switch (see the module docs).
    fn compute_routes(&mut self) {
        let n = self.nodes.len();
        let hosts = self.hosts as usize;
        let switches = n - hosts;
        // dense edge indices, in switch order
        let mut edge_index = vec![u32::MAX; n];
        let mut edge_nodes = Vec::new();
        for h in 0..hosts {
            let nic = self.host_port[h];
            assert_ne!(nic, u32::MAX, "host {h} has no link");
            let e = self.ports[nic as usize].peer as usize;
            if edge_index[e] == u32::MAX {
                edge_index[e] = 0; // numbered below, in switch order
                edge_nodes.push(e);
            }
        }
        edge_nodes.sort_unstable();
        for (i, &e) in edge_nodes.iter().enumerate() {
            edge_index[e] = i as u32;
        }
        self.dests = (0..hosts)
            .map(|h| {
                let e = self.ports[self.host_port[h] as usize].peer;
                let down = self.nodes[e as usize].ports.iter().copied().find(|&p| self.ports[p as usize].peer == h as u32);
                (edge_index[e as usize], down.expect("a host's switch has a port back to it"))
            })
            .collect();
        let edges = edge_nodes.len();
        self.edges = edges as u32;
        self.routes = vec![(0, 0); switches * edges];
        let mut dist = vec![u32::MAX; n];
        let mut frontier: Vec<u32> = Vec::new();
        let mut next: Vec<u32> = Vec::new();
        for (ei, &e) in edge_nodes.iter().enumerate() {
            dist.iter_mut().for_each(|x| *x = u32::MAX);
            dist[e] = 0;
            frontier.clear();
            frontier.push(e as u32);
            // Walk backwards over switches: a port u -> v leads towards e if v is closer. Links are symmetric,
            // so expanding v's neighbours through v's own ports finds them.
            while !frontier.is_empty() {
                next.clear();
                for &v in &frontier {
                    for &p in &self.nodes[v as usize].ports {
                        let u = self.ports[p as usize].peer as usize;
                        if dist[u] == u32::MAX && self.nodes[u].kind == NodeKind::Switch {
                            dist[u] = dist[v as usize] + 1;
                            next.push(u as u32);
                        }
                    }
                }
                std::mem::swap(&mut frontier, &mut next);
            }
            for s in hosts..n {
                assert!(dist[s] != u32::MAX, "switch {s} cannot reach switch {e}: the fabric is not connected");
                let start = self.route_ports.len() as u32;
                if s != e {
                    for &p in &self.nodes[s].ports {
                        let peer = self.ports[p as usize].peer as usize;
                        if self.nodes[peer].kind == NodeKind::Switch && dist[peer] + 1 == dist[s] {
                            self.route_ports.push(p);
                        }
                    }
                }
                let len = self.route_ports.len() as u32 - start;
                self.routes[(s - hosts) * edges + ei] =
                    if len == 1 { (self.route_ports.pop().unwrap(), 1) } else { (start, len) };
            }
        }
    }

    /// Index in `routes` of switch `node`'s entry towards host `dst`.
    #[inline(always)]
    fn route_index(&self, node: u32, dst: u32) -> usize {
        (node - self.hosts) as usize * self.edges as usize + self.dests[dst as usize].0 as usize
    }

    /// The equal-cost egress ports of switch `node` towards host `dst`.
    pub fn candidates(&self, node: u32, dst: u32) -> &[u32] {
        let r = &self.routes[self.route_index(node, dst)];
        match r.1 {
            0 => std::slice::from_ref(&self.dests[dst as usize].1),
            1 => std::slice::from_ref(&r.0),
            len => &self.route_ports[r.0 as usize..(r.0 + len) as usize],
        }
    }

    /// The egress port of switch `node` towards `dst` when there is one, else the equal-cost ports as `pick`
    /// chooses among them (`pick(n)` returns an index below n).
    #[inline(always)]
    pub fn next_port(&self, node: u32, dst: u32, pick: impl FnOnce(u32) -> u32) -> u32 {
        let (a, len) = self.routes[self.route_index(node, dst)];
        if len <= 1 {
            // one next hop: the entry's port, or at the destination's edge switch the port facing it
            if len == 0 {
                self.dests[dst as usize].1
            } else {
                a
            }
        } else {
            self.route_ports[(a + pick(len)) as usize]
        }
    }

    /// ECMP choice of switch `node` for a packet with flow hash `hash` ([`flow_hash`]) towards `dst`.
    #[inline]
    pub fn ecmp_port(&self, node: u32, dst: u32, hash: u32) -> u32 {
        let salt = self.salts[(node - self.hosts) as usize];
        self.next_port(node, dst, |n| fast_range(mix64(hash as u64 ^ salt), n))
    }

    /// The ports a packet with `hash` crosses from host `src` to host `dst` under ECMP.
    pub fn ecmp_path(&self, src: u32, dst: u32, hash: u32) -> Vec<u32> {
        let mut path = vec![self.host_port[src as usize]];
        let mut node = self.ports[path[0] as usize].peer;
        while node != dst {
            assert!(path.len() <= self.nodes.len(), "routing loop from {src} to {dst}");
            let p = self.ecmp_port(node, dst, hash);
            path.push(p);
            node = self.ports[p as usize].peer;
        }
        path
    }

    /// The (rate, propagation delay) of every port on that path: what an ideal FCT is computed from.
    pub fn path_hops(&self, src: u32, dst: u32, hash: u32) -> Vec<(u64, Ps)> {
        let hop = |p: &u32| (self.ports[*p as usize].rate_bps, self.ports[*p as usize].delay_ps);
        self.ecmp_path(src, dst, hash).iter().map(hop).collect()
    }

    /// Bytes the routing tables take (`dests`, `routes`, `route_ports`): (switches x edge switches) entries of
    /// 8 bytes plus the lists of equal-cost ports.
    pub fn routing_table_bytes(&self) -> usize {
        self.dests.len() * 8 + self.routes.len() * 8 + self.route_ports.len() * 4
    }

    /// Host `host`'s line rate in bit/s (see `line_bps`).
    pub fn line_rate_bps(&self, host: u32) -> u64 {
        self.line_bps[host as usize]
    }

    pub fn is_host(&self, node: u32) -> bool {
        node < self.hosts
    }

    /// Start loading what an arrival on port `id` reads first: the port's first cache line and the packet at
    /// the head of its wire. A hint to the CPU; no effect on the run.
    ///
    /// Both addresses are known without reading the port: the packet's is the one remembered when the arrival
    /// was scheduled. (Computing it from the port's ring fields made the hint wait for the port's line, a
    /// dependent miss; perf put ~10% of the samples on that wait, and the remembered address made 5,000
    /// reference flows ~3% faster, median of 10 interleaved runs. Prefetching the egress port's line too, with
    /// the port chosen when the arrival is scheduled where routing allows, made them 14% slower.)
    #[inline(always)]
    pub fn prefetch_arrival(&self, id: u32) {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            assert!(cfg!(not(debug_assertions)) || (id as usize) < self.ports.len(), "no port {id}");
            // SAFETY: `id` comes from an arrival event, so it is a port of this network (see `port_mut`; the
            // assertion above checks it where debug assertions are on), and `head_addr` has an entry per port; a
            // prefetch only touches caches and never faults, so an address that no longer holds the packet (its
            // ring grew since) is harmless.
            unsafe {
                let p = self.ports.get_unchecked(id as usize);
                _mm_prefetch(p as *const Port<H> as *const i8, _MM_HINT_T0);
                _mm_prefetch(*self.head_addr.get_unchecked(id as usize) as *const i8, _MM_HINT_T0);
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = id;
    }

    /// An arrival event for port `id` was just scheduled: its wire's head packet stays put until the event
    /// fires, so remember where it is, for [`Network::prefetch_arrival`] (which then does not wait for the
    /// port's record to know the address).
    #[inline(always)]
    pub fn arrival_scheduled(&mut self, id: u32) {
        let a = self.port_mut(id).wire.head_slot() as usize;
        // SAFETY: as in `port_mut`; `head_addr` has an entry per port.
        unsafe { *self.head_addr.get_unchecked_mut(id as usize) = a };
    }

    /// Port `id` on the per-packet path, without the bounds check. `id` must be a port of this network: the
    /// engine only holds ids that came from this network's tables (`host_port`, routes, event entries made
    /// for its ports), and `ports` is never resized after `build`.
    #[inline(always)]
    pub fn port_mut(&mut self, id: u32) -> &mut Port<H> {
        assert!(cfg!(not(debug_assertions)) || (id as usize) < self.ports.len(), "no port {id}");
        // SAFETY: see above. The assertion checks it in builds with debug assertions: the dev profile and the
        // optimised test profile of `cargo test` (scripts/test.sh); release builds, the installed engine's, do not.
        unsafe { self.ports.get_unchecked_mut(id as usize) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::*;

    fn cfg(t: TopologyConfig) -> Config {
        Config { topology: t, ..Config::default() }
    }

    #[test]
    fn leaf_spine_shape_and_paths() {
        let net: Network = Network::build(&Config::default(), 1);
        assert_eq!(net.hosts, 144);
        assert_eq!(net.nodes.len(), 144 + 13);
        assert_eq!(net.ports.len(), 2 * (144 + 9 * 4));
        // same leaf: host -> leaf -> host
        assert_eq!(net.ecmp_path(0, 1, 7).len(), 2);
        // across: host -> leaf -> spine -> leaf -> host, 4 candidate spines at the first leaf
        assert_eq!(net.ecmp_path(0, 143, 7).len(), 4);
        assert_eq!(net.candidates(144, 143).len(), 4);
        assert_eq!(net.candidates(144, 1).len(), 1);
    }

    #[test]
    fn fat_tree_shape_and_paths() {
        let net: Network = Network::build(&cfg(TopologyConfig::FatTree(FatTree::default())), 1);
        // k = 8: 128 hosts, 80 switches
        assert_eq!(net.hosts, 128);
        assert_eq!(net.nodes.len() - 128, 80);
        assert_eq!(net.ecmp_path(0, 1, 3).len(), 2); // same edge
        assert_eq!(net.ecmp_path(0, 4, 3).len(), 4); // same pod, other edge
        assert_eq!(net.ecmp_path(0, 127, 3).len(), 6); // other pod
        let edge = net.ports[net.host_port[0] as usize].peer;
        assert_eq!(net.candidates(edge, 127).len(), 4);
    }

    #[test]
    fn dumbbell_and_single_switch() {
        let net: Network = Network::build(&cfg(TopologyConfig::Dumbbell(Dumbbell::default())), 1);
        assert_eq!(net.ecmp_path(0, 4, 0).len(), 3);
        let net: Network = Network::build(&cfg(TopologyConfig::SingleSwitch(SingleSwitch::default())), 1);
        assert_eq!(net.ecmp_path(0, 7, 0).len(), 2);
    }

    /// The candidates of every switch towards every host, by a plain breadth-first search from that host
    /// (hosts other than it never forward), in the switch's port order.
    fn per_host_candidates(net: &Network) -> Vec<Vec<Vec<u32>>> {
        let (n, hosts) = (net.nodes.len(), net.hosts as usize);
        let mut all = Vec::new();
        for d in 0..hosts {
            let mut dist = vec![u32::MAX; n];
            dist[d] = 0;
            let mut frontier = vec![d];
            while !frontier.is_empty() {
                let mut next = Vec::new();
                for v in frontier {
                    if v != d && v < hosts {
                        continue;
                    }
                    for &p in &net.nodes[v].ports {
                        let u = net.ports[p as usize].peer as usize;
                        if dist[u] == u32::MAX {
                            dist[u] = dist[v] + 1;
                            next.push(u);
                        }
                    }
                }
                frontier = next;
            }
            let towards = |s: usize| -> Vec<u32> {
                let closer = |p: &u32| {
                    let peer = net.ports[*p as usize].peer as usize;
                    (peer >= hosts || peer == d) && dist[peer] + 1 == dist[s]
                };
                net.nodes[s].ports.iter().copied().filter(closer).collect()
            };
            all.push((hosts..n).map(towards).collect());
        }
        all
    }

    /// The tables indexed by edge switch give every switch the same candidates, in the same order, as a search
    /// from each destination host would (the order matters: ECMP and spraying pick by index).
    #[test]
    fn edge_indexed_routes_match_a_per_host_search() {
        let topologies = [
            Config::default().topology,
            TopologyConfig::FatTree(FatTree::default()),
            TopologyConfig::Dumbbell(Dumbbell::default()),
            TopologyConfig::SingleSwitch(SingleSwitch::default()),
            TopologyConfig::Bcube(Bcube { n: 3, k: 2, ..Bcube::default() }),
            TopologyConfig::Jellyfish(Jellyfish::default()),
        ];
        for t in topologies {
            let net: Network = Network::build(&cfg(t.clone()), 1);
            let want = per_host_candidates(&net);
            for d in 0..net.hosts {
                for s in net.hosts..net.nodes.len() as u32 {
                    let expect = &want[d as usize][(s - net.hosts) as usize];
                    assert!(!expect.is_empty(), "{t:?}: switch {s} has no way to host {d}");
                    assert_eq!(net.candidates(s, d), &expect[..], "{t:?}: switch {s} towards host {d}");
                    if expect.len() == 1 {
                        assert_eq!(net.next_port(s, d, |_| unreachable!()), expect[0]);
                    } else {
                        assert_eq!(net.next_port(s, d, |n| n / 3), expect[expect.len() / 3]);
                    }
                }
            }
        }
    }

    #[test]
    fn fast_range_is_in_range() {
        for h in [0u64, 1, u64::MAX, 0x8000_0000_0000_0000] {
            assert!(fast_range(h, 5) < 5);
        }
    }
}
