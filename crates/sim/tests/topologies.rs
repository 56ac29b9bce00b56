//! BCube and Jellyfish: their shape, their routing tables against a breadth-first search written here, and runs
//! on them at the packet and the flow level.

mod common;

use common::{comparable, flows};
use fctlab_sim::config::*;
use fctlab_sim::net::{Network, NodeKind};
use fctlab_sim::units::{tx_time, Ps, NEVER, PS_PER_US};
use fctlab_sim::FlowSet;

fn bcube(n: u32, k: u32) -> Config {
    Config { topology: TopologyConfig::Bcube(Bcube { n, k, ..Bcube::default() }), ..Config::default() }
}

fn jellyfish(switches: u32, ports: u32, network_ports: u32, graph_seed: u64) -> Config {
    let t = Jellyfish { switches, ports, network_ports, graph_seed, ..Jellyfish::default() };
    Config { topology: TopologyConfig::Jellyfish(t), ..Config::default() }
}

/// Base-n digits of `a`, the lowest first.
fn digits(mut a: u32, n: u32, count: u32) -> Vec<u32> {
    (0..count)
        .map(|_| {
            let d = a % n;
            a /= n;
            d
        })
        .collect()
}

#[test]
fn bcube_shape_and_wiring() {
    for (n, k) in [(4, 1), (3, 2), (2, 0), (5, 1)] {
        let cfg = bcube(n, k);
        cfg.validate().unwrap();
        let net: Network = Network::build(&cfg, 1);
        let s = n.pow(k + 1);
        let per_level = n.pow(k);
        assert_eq!(net.hosts, s);
        assert_eq!(net.nodes.len() as u32, 2 * s + (k + 1) * per_level, "BCube({n},{k}): hosts, relays, switches");
        // each server: 2 internal ports, and k+1 links of two ports each
        assert_eq!(net.ports.len() as u32, 2 * s + 2 * s * (k + 1));
        for a in 0..s {
            let relay = net.ports[net.host_port[a as usize] as usize].peer;
            assert_eq!(relay, s + a, "server {a}'s relay");
            assert_eq!(net.nodes[relay as usize].kind, NodeKind::Switch);
            let ports = &net.nodes[relay as usize].ports;
            assert_eq!(ports.len() as u32, k + 2, "server {a}: its host and k + 1 = {} NIC ports", k + 1);
            assert_eq!(net.ports[ports[0] as usize].peer, a);
            assert_eq!(net.ports[ports[0] as usize].delay_ps, 0);
            let da = digits(a, n, k + 1);
            for i in 0..=k {
                // level i: the switch whose address is a's digits without a_i, on its port a_i
                let sw = net.ports[ports[1 + i as usize] as usize].peer;
                let mut addr = 0;
                for (pos, &d) in da.iter().enumerate().rev() {
                    if pos as u32 != i {
                        addr = addr * n + d;
                    }
                }
                assert_eq!(sw, 2 * s + i * per_level + addr, "server {a} at level {i}");
                let sp = &net.nodes[sw as usize].ports;
                assert_eq!(sp.len() as u32, n);
                assert_eq!(net.ports[sp[da[i as usize] as usize] as usize].peer, relay, "switch {sw}, port a_{i}");
                assert_eq!(net.ports[ports[1 + i as usize] as usize].rate_bps, 1_000_000_000);
            }
            assert_eq!(net.line_rate_bps(a), 1_000_000_000);
        }
    }
    let names = |cfg: &Config| -> Vec<&'static str> { Network::<()>::build(cfg, 0).tier_names };
    assert_eq!(names(&bcube(4, 1)), ["host_nic", "server_out", "bcube_down", "server_in"]);
    assert_eq!(names(&jellyfish(20, 24, 16, 1)), ["host_nic", "switch_across", "switch_down"]);
}

/// The switch-to-switch links of a Jellyfish network, as (a, b) switch pairs with a < b, sorted.
fn jellyfish_links(net: &Network) -> Vec<(u32, u32)> {
    let mut links: Vec<(u32, u32)> = net
        .ports
        .iter()
        .filter(|p| !net.is_host(p.owner) && !net.is_host(p.peer) && p.owner < p.peer)
        .map(|p| (p.owner - net.hosts, p.peer - net.hosts))
        .collect();
    links.sort_unstable();
    links
}

#[test]
fn jellyfish_shape() {
    for (sw, ports, r, seed) in [(20, 24, 16, 1), (64, 24, 16, 3), (30, 8, 5, 2), (12, 6, 4, 9)] {
        let cfg = jellyfish(sw, ports, r, seed);
        cfg.validate().unwrap();
        let net: Network = Network::build(&cfg, 1);
        assert_eq!(net.hosts, sw * (ports - r));
        assert_eq!(net.nodes.len() as u32, net.hosts + sw);
        for h in 0..net.hosts {
            assert_eq!(net.ports[net.host_port[h as usize] as usize].peer, net.hosts + h / (ports - r));
        }
        let links = jellyfish_links(&net);
        let mut network = vec![0u32; sw as usize];
        for w in links.windows(2) {
            assert_ne!(w[0], w[1], "parallel link");
        }
        for &(a, b) in &links {
            assert_ne!(a, b, "self-loop");
            network[a as usize] += 1;
            network[b as usize] += 1;
        }
        let short: u32 = network.iter().map(|&d| r - d).sum();
        assert_eq!(short, (sw * r) % 2, "{sw} switches x {r}: network links per switch {network:?}");
        for s in 0..sw {
            let node = &net.nodes[(net.hosts + s) as usize];
            let hosts = node.ports.iter().filter(|&&p| net.is_host(net.ports[p as usize].peer)).count() as u32;
            assert_eq!(hosts, ports - r, "switch {s}'s hosts");
        }
        // connected: every switch reaches every host (compute_routes asserts it too)
        for s in net.hosts..net.nodes.len() as u32 {
            assert!(!net.candidates(s, 0).is_empty() || net.ports[net.host_port[0] as usize].peer == s);
        }
        // the graph is the graph seed's, whatever the run's seed
        let again: Network = Network::build(&Config { seed: 99, ..cfg.clone() }, 7);
        assert_eq!(jellyfish_links(&again), links);
        let other: Network = Network::build(&jellyfish(sw, ports, r, seed + 1), 1);
        assert_ne!(jellyfish_links(&other), links, "graph seeds {seed} and {}", seed + 1);
    }
    // an odd number of network ports in all: one switch keeps a free port
    let net: Network = Network::build(&jellyfish(21, 8, 5, 1), 1);
    assert_eq!(jellyfish_links(&net).len(), (21 * 5 - 1) / 2);
}

/// Hop distance from every node to host `d` over the whole node graph, where no host but `d` forwards.
fn bfs_to(net: &Network, d: u32) -> Vec<u32> {
    let n = net.nodes.len();
    let mut dist = vec![u32::MAX; n];
    dist[d as usize] = 0;
    let mut frontier = vec![d];
    while !frontier.is_empty() {
        let mut next = Vec::new();
        for v in frontier {
            if v != d && net.is_host(v) {
                continue; // a host is an end, never a way through
            }
            // links are duplex: the nodes with a port into v are v's peers
            for &p in &net.nodes[v as usize].ports {
                let u = net.ports[p as usize].peer;
                if dist[u as usize] == u32::MAX {
                    dist[u as usize] = dist[v as usize] + 1;
                    next.push(u);
                }
            }
        }
        frontier = next;
    }
    dist
}

/// Every equal-cost path from `src` to `dst` the tables allow, as port lists (the source's NIC first).
fn all_paths(net: &Network, src: u32, dst: u32) -> Vec<Vec<u32>> {
    fn walk(net: &Network, node: u32, dst: u32, path: &mut Vec<u32>, out: &mut Vec<Vec<u32>>) {
        if node == dst {
            out.push(path.clone());
            return;
        }
        assert!(path.len() <= net.nodes.len(), "routing loop towards {dst}");
        for &p in net.candidates(node, dst) {
            path.push(p);
            walk(net, net.ports[p as usize].peer, dst, path, out);
            path.pop();
        }
    }
    let nic = net.host_port[src as usize];
    let mut out = Vec::new();
    walk(net, net.ports[nic as usize].peer, dst, &mut vec![nic], &mut out);
    out
}

/// For every forwarding node (switch or relay) and destination host, the candidates are exactly the ports whose
/// far end is one hop closer in the search above; every path the tables allow between two hosts, and the one
/// ECMP takes, is as short as the search says.
#[test]
fn routes_match_an_independent_breadth_first_search() {
    let cases = [bcube(3, 2), bcube(4, 1), bcube(2, 3), jellyfish(12, 6, 4, 9), jellyfish(20, 24, 16, 1)];
    for cfg in cases {
        let kind = cfg.topology.kind();
        let net: Network = Network::build(&cfg, 5);
        for d in 0..net.hosts {
            let dist = bfs_to(&net, d);
            for s in net.hosts..net.nodes.len() as u32 {
                assert_ne!(dist[s as usize], u32::MAX, "{kind}: node {s} cannot reach host {d}");
                let mut want: Vec<u32> = net.nodes[s as usize]
                    .ports
                    .iter()
                    .copied()
                    .filter(|&p| {
                        let peer = net.ports[p as usize].peer;
                        (!net.is_host(peer) || peer == d) && dist[peer as usize] + 1 == dist[s as usize]
                    })
                    .collect();
                let mut got = net.candidates(s, d).to_vec();
                want.sort_unstable();
                got.sort_unstable();
                assert_eq!(got, want, "{kind}: node {s} towards host {d}");
            }
            for src in 0..net.hosts {
                if src == d {
                    continue;
                }
                for path in all_paths(&net, src, d) {
                    assert_eq!(path.len() as u32, dist[src as usize], "{kind}: a path from {src} to {d}");
                }
                for hash in [0, 7, 0xdead_beef] {
                    assert_eq!(net.ecmp_path(src, d, hash).len() as u32, dist[src as usize]);
                }
            }
        }
    }
}

/// Between servers that differ in d digits, every path crosses d BCube switches and d - 1 other servers (their
/// relays), and there are d! of them (one per order of correcting the digits).
#[test]
fn bcube_paths_cross_one_switch_per_differing_digit() {
    let (n, k) = (3, 2);
    let net: Network = Network::build(&bcube(n, k), 1);
    let s = net.hosts;
    for a in 0..s {
        for b in 0..s {
            if a == b {
                continue;
            }
            let (da, db) = (digits(a, n, k + 1), digits(b, n, k + 1));
            let d = da.iter().zip(&db).filter(|(x, y)| x != y).count();
            let paths = all_paths(&net, a, b);
            assert_eq!(paths.len(), (1..=d).product::<usize>(), "{a} -> {b}");
            for path in paths {
                // the nodes a path enters: relays of servers (below 2s) and BCube switches
                let entered: Vec<u32> = path.iter().map(|&p| net.ports[p as usize].peer).collect();
                let switches = entered.iter().filter(|&&v| v >= 2 * s).count();
                let relays: Vec<u32> = entered.iter().copied().filter(|&v| v >= s && v < 2 * s).collect();
                assert_eq!(switches, d, "{a} -> {b}: {entered:?}");
                // the source's relay is entered first, the destination's last; d - 1 others in between
                assert_eq!(relays.first(), Some(&(s + a)));
                assert_eq!(relays.last(), Some(&(s + b)));
                assert_eq!(relays.len(), d + 1, "{a} -> {b}: {entered:?}");
            }
        }
    }
}

/// An isolated single-packet flow takes exactly the analytic time: every hop's serialization and propagation,
/// the internal links' included (1,040 B at 8 Tbit/s: 1.04 ns, twice).
#[test]
fn bcube_isolated_packet_matches_the_analytic_time() {
    let cfg = bcube(4, 1);
    let f = flows(&[(0, 5, 1_000, 0)]); // servers 00 and 11: two switches, one server in between
    let out = fctlab_sim::run(&cfg, &f, None, 1).unwrap();
    let wire = 1_000 + cfg.transport.header_bytes;
    let link: Ps = tx_time(wire, 1_000_000_000) + 10 * PS_PER_US;
    let internal: Ps = tx_time(wire, 8_000_000_000_000);
    assert_eq!(internal, 1_040);
    let want = 4 * link + 2 * internal;
    assert_eq!(out.results.ideal_fct_ps[0], want);
    assert_eq!(out.results.finish_ps[0] - out.results.start_ps[0], want);
}

/// A random permutation (every host sends to one other, each receives from one), Poisson arrivals at `load` of
/// the host links, sizes uniform on 1 B to 2 x `mean`.
fn permutation(hosts: u32, flows_per_host: u32, mean: u64, load: f64, gbps: f64, seed: u64) -> FlowSet {
    let mut x = seed;
    let mut next = || {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        x >> 11
    };
    // a derangement: shuffle until no host sends to itself
    let mut perm: Vec<u32> = (0..hosts).collect();
    loop {
        for i in (1..hosts as usize).rev() {
            perm.swap(i, (next() % (i as u64 + 1)) as usize);
        }
        if perm.iter().enumerate().all(|(i, &p)| i as u32 != p) {
            break;
        }
    }
    let gap_ps = mean as f64 * 8.0 / (load * gbps * 1e9) * 1e12;
    let mut list = Vec::new();
    for h in 0..hosts {
        let mut t = 0.0;
        for _ in 0..flows_per_host {
            let u = (next() as f64 + 1.0) / (1u64 << 53) as f64;
            t += -u.ln() * gap_ps;
            list.push((h, perm[h as usize], 1 + next() % (2 * mean), t as u64));
        }
    }
    list.sort_by_key(|f| f.3);
    flows(&list)
}

/// DCTCP under a permutation at load 0.5: every flow finishes, at least its ideal time; the same bits on one
/// and two threads (BCube's internal links have no delay, so it runs on one thread: no lookahead) and run to
/// run.
#[test]
fn packet_level_permutation_finishes_deterministically() {
    for (cfg, threads) in [(bcube(4, 1), 1), (jellyfish(12, 6, 4, 9), 2)] {
        let mut cfg = cfg;
        cfg.scheme = Config::for_scheme(SchemeName::Dctcp, Preset::Native).scheme;
        let kind = cfg.topology.kind();
        let f = permutation(cfg.topology.hosts(), 20, 100_000, 0.5, 1.0, 3);
        let one = fctlab_sim::run(&cfg, &f, None, 1).unwrap();
        assert_eq!(one.stats.flows_finished, f.len() as u64, "{kind}");
        for i in 0..f.len() {
            assert_ne!(one.results.finish_ps[i], NEVER);
            let fct = one.results.finish_ps[i] - one.results.start_ps[i];
            assert!(fct >= one.results.ideal_fct_ps[i], "{kind}: flow {i}");
        }
        let two = fctlab_sim::run(&cfg, &f, None, 2).unwrap();
        assert_eq!(two.stats.threads, threads, "{kind}");
        assert_eq!(one.results, two.results, "{kind}: one and two threads");
        assert_eq!(comparable(&one.stats), comparable(&two.stats), "{kind}");
        let again = fctlab_sim::run(&cfg, &f, None, 1).unwrap();
        assert_eq!(one.results, again.results, "{kind}: run to run");
    }
}

/// The flow level runs on both, and an isolated flow takes the packet level's time there (within 0.2%, as on
/// the other fabrics in tests/flowlevel.rs), for a window scheme and the explicit-rate family (RCP's routers
/// from R = C, as in tests/flowlevel.rs: the flow level does not model the climb from R(0) = 0.05 C).
#[test]
fn an_isolated_flow_takes_the_same_time_at_both_levels() {
    let cases = [(bcube(4, 1), 0, 15), (bcube(3, 2), 0, 26), (jellyfish(20, 24, 16, 1), 0, 159)];
    for (topo, src, dst) in cases {
        for scheme in ["dctcp", "rcp", "pdq"] {
            for size in [1_000u64, 100_000, 1_000_000] {
                let mut cfg = Config::from_json(&format!(r#"{{"scheme": {{"name": "{scheme}"}}}}"#)).unwrap();
                cfg.topology = topo.topology.clone();
                cfg.scheme.rcp_init_rate_fraction = 1.0;
                let f = flows(&[(src, dst, size, 0)]);
                let p = fctlab_sim::run(&cfg, &f, None, 1).unwrap();
                cfg.run.level = Level::Flow;
                let q = fctlab_sim::run(&cfg, &f, None, 1).unwrap();
                let kind = cfg.topology.kind();
                assert_eq!(q.results.ideal_fct_ps[0], p.results.ideal_fct_ps[0], "{kind} {scheme} {size}");
                let (a, b) = (p.results.finish_ps[0] as f64, q.results.finish_ps[0] as f64);
                assert!((b / a - 1.0).abs() < 0.002, "{kind} {scheme} {size} B: packet {a} ps, flow {b} ps");
            }
        }
    }
}

#[test]
fn bad_keys_are_refused_naming_the_key() {
    let bad = [
        (r#"{"kind": "bcube", "n": 1}"#, "topology.n"),
        (r#"{"kind": "bcube", "n": 32, "k": 3}"#, "topology.n"),
        (r#"{"kind": "bcube", "k": 12}"#, "topology.k"),
        // 4,096 servers, but 24,576 switches: routing tables of 1.3 GB
        (r#"{"kind": "bcube", "n": 2, "k": 11}"#, "topology.k"),
        (r#"{"kind": "bcube", "host_link_gbps": 0}"#, "topology.host_link_gbps"),
        (r#"{"kind": "bcube", "switches": 4}"#, "topology.switches"),
        (r#"{"kind": "jellyfish", "network_ports": 24}"#, "topology.network_ports"),
        (r#"{"kind": "jellyfish", "network_ports": 0}"#, "topology.network_ports"),
        (r#"{"kind": "jellyfish", "switches": 16}"#, "topology.switches"),
        (r#"{"kind": "jellyfish", "switches": 2049}"#, "topology.switches"),
        (r#"{"kind": "jellyfish", "switches": 6, "ports": 3, "network_ports": 1}"#, "topology.network_ports"),
        (r#"{"kind": "jellyfish", "core_link_delay_ns": -1}"#, "topology.core_link_delay_ns"),
        (r#"{"kind": "jellyfish", "k": 4}"#, "topology.k"),
    ];
    let e = fctlab_sim::validate::config_from_json(r#"{"topology": {"kind": "bcube", "k": 3}, "run": {"level": "flow"}}"#).unwrap_err();
    assert_eq!(e.key, "topology.k", "{e}");
    Config::from_json(r#"{"topology": {"kind": "bcube", "k": 3}}"#).unwrap();
    for (topo, key) in bad {
        let e = fctlab_sim::validate::config_from_json(&format!(r#"{{"topology": {topo}}}"#)).unwrap_err();
        assert_eq!(e.key, key, "{topo}: {e}");
    }
    let e = Config::from_json(r#"{"topology": {"kind": "bcube", "n": 32, "k": 3}}"#).unwrap_err();
    assert!(e.message.contains("1048576 servers"), "{e}");
    // the largest BCube the tables allow
    Config::from_json(r#"{"topology": {"kind": "bcube", "n": 64, "k": 1}}"#).unwrap();
}

/// `switch.buffer = "shared"`: the BCube switches share a pool each, the relays' ports (the servers' NICs) are in
/// no pool; runs with shared buffers and with spraying finish every flow on both kinds.
#[test]
fn shared_buffers_and_spraying() {
    let mut cfg = bcube(4, 1);
    cfg.switch.buffer = BufferMode::Shared;
    cfg.switch.shared_buffer_bytes = 300_000;
    let net: Network = Network::build(&cfg, 1);
    let s = net.hosts;
    for p in &net.ports {
        let pooled = p.owner >= 2 * s;
        assert_eq!(p.pool().is_some(), pooled, "port of node {} towards {}", p.owner, p.peer);
    }
    for topo in [bcube(4, 1), jellyfish(12, 6, 4, 9)] {
        for (shared, spray) in [(true, false), (false, true), (true, true)] {
            let mut cfg = topo.clone();
            cfg.scheme = Config::for_scheme(SchemeName::Dctcp, Preset::Native).scheme;
            if shared {
                cfg.switch.buffer = BufferMode::Shared;
                cfg.switch.shared_buffer_bytes = 300_000;
            }
            if spray {
                cfg.routing.mode = RoutingMode::Spray;
            }
            cfg.validate().unwrap();
            let f = permutation(cfg.topology.hosts(), 10, 100_000, 0.5, 1.0, 4);
            let out = fctlab_sim::run(&cfg, &f, None, 1).unwrap();
            assert_eq!(
                out.stats.flows_finished,
                f.len() as u64,
                "{} shared {shared} spray {spray}",
                topo.topology.kind()
            );
        }
    }
}

/// A Jellyfish graph whose paths are longer than the flow level takes (4-port switches with 3 to the network, 300
/// of them: paths of 10 ports) is refused with the keys that shorten them named, and nothing is run.
#[test]
fn a_jellyfish_too_wide_for_the_flow_level_names_its_keys() {
    let cfg = Config::from_json(
        r#"{"topology": {"kind": "jellyfish", "switches": 300, "ports": 4, "network_ports": 3},
            "routing": {"mode": "ecmp"}, "run": {"level": "flow"}}"#,
    )
    .unwrap();
    let list: Vec<(u32, u32, u64, u64)> = (0..50).map(|i| (i, 299 - i, 1_000, 0)).collect();
    let e = fctlab_sim::run(&cfg, &flows(&list), None, 1).err().expect("refused").to_string();
    assert!(e.contains("topology.network_ports") && e.contains("topology.switches"), "{e}");
    // refused by the checks before a run, at the first flow whose pair is too far apart, naming its cell
    let cell = fctlab_sim::validate::flows(&cfg, &flows(&list)).unwrap_err().cell.expect("a cell");
    assert_eq!(cell.column, "dst");
    let far = list.iter().position(|&(s, d, _, _)| {
        let one: Vec<(u32, u32, u64, u64)> = vec![(s, d, 1_000, 0)];
        fctlab_sim::validate::flows(&cfg, &flows(&one)).is_err()
    });
    assert_eq!(cell.flow, far);
}
