//! What flows share: resources, the ports of a flow's path (under packet spraying, each hop's ports pooled),
//! built as flows first use them; and the resources that cannot bind (`Implied`), left out of the paths. See
//! "What a flow uses" in the flow level's module docs.

use crate::net::Network;
use std::collections::{BTreeMap, HashMap};

/// Resources: ports, or pooled sets of ports under spraying; built as flows first use them.
#[derive(Default)]
pub(super) struct Resources {
    pub(super) capacity: Vec<f64>,
    /// Per resource: whether flows' paths list it (false: its constraint is implied by their first and last
    /// hops, `Implied`), and whether to look (false keeps every resource; for tests).
    pub(super) kept: Vec<bool>,
    pub(super) prune: bool,
    pub(super) implied: Option<Implied>,
    pub(super) ids: BTreeMap<Vec<u32>, u32>,
    /// Per resource: its first port (all of a pooled resource's ports have one rate and one kind of buffer).
    pub(super) first_port: Vec<u32>,
    /// A single port's resource (u32::MAX until used).
    pub(super) port: Vec<u32>,
    /// Under spraying: the pooled resources past the source's NIC, by (the NIC's switch, destination), so that
    /// an arrival does not walk the routes again (at most switches x hosts entries).
    pub(super) pooled: HashMap<(u32, u32), Box<[u32]>>,
}

impl Resources {
    fn id(&mut self, ports: Vec<u32>, net: &Network) -> u32 {
        if let Some(&id) = self.ids.get(&ports) {
            return id;
        }
        let id = self.capacity.len() as u32;
        let capacity = ports.iter().map(|&p| net.ports[p as usize].rate_bps as f64).sum();
        let implied = self.prune && self.implied.get_or_insert_with(|| Implied::new(net)).holds(net, &ports, capacity);
        self.capacity.push(capacity);
        self.first_port.push(ports[0]);
        self.kept.push(!implied);
        self.ids.insert(ports, id);
        id
    }

    pub(super) fn of_port(&mut self, port: u32, net: &Network) -> u32 {
        if self.port.len() <= port as usize {
            self.port.resize(net.ports.len().max(port as usize + 1), u32::MAX);
        }
        if self.port[port as usize] == u32::MAX {
            self.port[port as usize] = self.id(vec![port], net);
        }
        self.port[port as usize]
    }
}

/// Which resources cannot bind: a resource no more than the sources that can send through it can fill (the sum
/// of their NICs' rates), or no more than the destinations that can receive through it can drain (the sum of the
/// rates of their last hops), is never over its capacity in any allocation that keeps the flows' first and last
/// hops within theirs, and every flow's path keeps those. Its constraint is implied by theirs, so leaving it out
/// of the flows' paths leaves the feasible rates, and with them every allocation rule's rates, as they are (a
/// greedy grant's minimum over the path is never reached there alone; max-min's fair point is a function of the
/// feasible set), while the updates touch fewer resources per flow. A fabric of full bisection under spraying
/// (the leaf-spine's and fat-tree's pooled uplinks and downlinks, whose capacity equals their hosts') keeps only
/// the hosts' links: on the reference leaf-spine (DCTCP, 20,000 flows) the paths fall from 4 resources to 2 and
/// the engine's time by a fifth, with every flow's FCT bit-identical. Under ECMP a single port is kept unless its
/// rate covers all its sources or destinations.
///
/// Who can send or receive through a port is over-approximated from the routing tables (which depend only on the
/// destination's edge switch): the destinations are the hosts of every edge switch towards which the port is a
/// candidate of its switch; the sources, those from which a walk back along the candidate ports towards that
/// edge switch reaches the port's switch. A bigger set only makes a resource look less bound, so the test errs
/// towards keeping it. Ports leaving or entering a host (first and last hops) are always kept: they are what
/// the bound rests on.
pub(super) struct Implied {
    /// Per node, the ports into it; per edge switch (a switch with hosts), one of its hosts (whose routes stand for
    /// all of them) and its hosts; the visit stamps of the walk.
    into: Vec<Vec<u32>>,
    edges: Vec<(u32, Vec<u32>)>,
    seen: Vec<u32>,
    counted: Vec<u32>,
    stamp: u32,
    stack: Vec<u32>,
}

impl Implied {
    fn new(net: &Network) -> Self {
        let mut into = vec![Vec::new(); net.nodes.len()];
        for (p, port) in net.ports.iter().enumerate() {
            into[port.peer as usize].push(p as u32);
        }
        let mut by_switch: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
        for h in 0..net.hosts {
            by_switch.entry(net.ports[net.host_port[h as usize] as usize].peer).or_default().push(h);
        }
        let edges = by_switch.into_values().map(|hosts| (hosts[0], hosts)).collect();
        let (seen, counted) = (vec![0; net.nodes.len()], vec![0; net.hosts as usize]);
        Implied { into, edges, seen, counted, stamp: 0, stack: Vec::new() }
    }

    /// Whether a resource of `ports` (their rates summing to `capacity`) cannot bind.
    fn holds(&mut self, net: &Network, ports: &[u32], capacity: f64) -> bool {
        let owner = |p: u32| net.ports[p as usize].owner;
        let peer = |p: u32| net.ports[p as usize].peer;
        if ports.iter().any(|&p| net.is_host(owner(p)) || net.is_host(peer(p))) {
            return false;
        }
        let towards = |e: &(u32, Vec<u32>)| ports.iter().any(|&p| net.candidates(owner(p), e.0).contains(&p));
        // what the destinations can drain
        let mut sum = 0.0;
        for e in &self.edges {
            if towards(e) {
                for &h in &e.1 {
                    sum += self.into[h as usize].iter().map(|&q| net.ports[q as usize].rate_bps as f64).sum::<f64>();
                }
                if sum > capacity {
                    break;
                }
            }
        }
        if sum <= capacity {
            return true;
        }
        // what the sources can fill: a walk back from the ports' switches along the ports that lead towards
        // each destination switch
        self.stamp = self.stamp.wrapping_add(1);
        let hosts_stamp = self.stamp;
        let mut sum = 0.0;
        for e in &self.edges {
            if !towards(e) {
                continue;
            }
            self.stamp = self.stamp.wrapping_add(1);
            let walk = self.stamp;
            self.stack.clear();
            for &p in ports {
                let u = owner(p);
                if self.seen[u as usize] != walk && net.candidates(u, e.0).contains(&p) {
                    self.seen[u as usize] = walk;
                    self.stack.push(u);
                }
            }
            while let Some(w) = self.stack.pop() {
                for &q in &self.into[w as usize] {
                    let x = owner(q);
                    if net.is_host(x) {
                        if self.counted[x as usize] != hosts_stamp {
                            self.counted[x as usize] = hosts_stamp;
                            sum += net.ports[q as usize].rate_bps as f64;
                            if sum > capacity {
                                return false;
                            }
                        }
                    } else if self.seen[x as usize] != walk && net.candidates(x, e.0).contains(&q) {
                        self.seen[x as usize] = walk;
                        self.stack.push(x);
                    }
                }
            }
        }
        true
    }
}

/// Under spraying: at each hop, every port a packet of the flow may take, pooled (see the module docs).
pub(super) fn pooled_path(net: &Network, src: u32, dst: u32, res: &mut Resources) -> Vec<u32> {
    let nic = net.host_port[src as usize];
    let first = net.ports[nic as usize].peer;
    let mut path = vec![res.of_port(nic, net)];
    if let Some(rest) = res.pooled.get(&(first, dst)) {
        path.extend_from_slice(rest);
        return path;
    }
    let mut nodes = vec![first];
    while !(nodes.len() == 1 && nodes[0] == dst) {
        let mut ports: Vec<u32> = nodes.iter().flat_map(|&n| net.candidates(n, dst).iter().copied()).collect();
        ports.sort_unstable();
        ports.dedup();
        let mut next: Vec<u32> = ports.iter().map(|&p| net.ports[p as usize].peer).collect();
        next.sort_unstable();
        next.dedup();
        path.push(res.id(ports, net));
        nodes = next;
        assert!(path.len() <= net.nodes.len(), "routing loop from {src} to {dst}");
    }
    res.pooled.insert((first, dst), path[1..].into());
    path
}
