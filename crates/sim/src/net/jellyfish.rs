//! Jellyfish's random regular graph between switches (Singla et al., NSDI 2012, §3), as the paper builds it:
//! join a random pair of switches that both have a free network port and are not neighbours yet, until no such
//! pair is left; then, while a switch has two or more free ports, take a random existing link (x, y) that
//! neither end already shares with it apart and join the switch to x and to y. That fix-up leaves at most
//! single free ports on distinct switches that are neighbours of one another; two such switches s and t take a
//! random link (x, y) apart likewise and become linked to x and y (s-x, t-y), so that every switch ends with
//! exactly `network_ports` links, except one switch with one port free when switches x network_ports is odd.
//!
//! The draw comes from `graph_seed` alone (not the run's seed): every scheme and every run seed sees the same
//! graph. A draw that is not connected (or whose fix-up found no link to take apart) is redrawn from the next
//! seed derived from `graph_seed`, up to [`ATTEMPTS`] times.

use crate::config::Jellyfish;
use crate::net::mix64;
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// Draws tried before the graph is refused.
pub const ATTEMPTS: u64 = 64;

/// The links between switches (0-based switch indices, each pair (a, b) with a < b, sorted), or why there is
/// no connected graph for these keys.
pub fn graph(t: &Jellyfish) -> Result<Vec<(u32, u32)>, String> {
    let (n, r) = (t.switches, t.network_ports);
    for attempt in 0..ATTEMPTS {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(mix64(t.graph_seed ^ mix64(attempt)));
        if let Some(mut links) = draw(n, r, &mut rng) {
            if connected(n, &links) {
                links.sort_unstable();
                return Ok(links);
            }
        }
    }
    Err(format!(
        "no connected Jellyfish graph of topology.switches = {n} with topology.network_ports = {r} links each in \
         {ATTEMPTS} draws from topology.graph_seed = {}: use more network ports (at least 3) or another seed",
        t.graph_seed
    ))
}

/// One draw of the graph (see the module docs); None when a fix-up found no link to take apart.
fn draw(n: u32, r: u32, rng: &mut Xoshiro256PlusPlus) -> Option<Vec<(u32, u32)>> {
    let mut free = vec![r; n as usize];
    let mut adj: Vec<Vec<u32>> = vec![Vec::with_capacity(r as usize); n as usize];
    let mut links: Vec<(u32, u32)> = Vec::with_capacity((n as usize * r as usize) / 2);
    let join = |a: u32, b: u32, adj: &mut Vec<Vec<u32>>, links: &mut Vec<(u32, u32)>| {
        adj[a as usize].push(b);
        adj[b as usize].push(a);
        links.push((a.min(b), a.max(b)));
    };
    // random pairing of free ports
    let mut open: Vec<u32> = (0..n).collect();
    loop {
        open.retain(|&s| free[s as usize] > 0);
        if open.len() < 2 {
            break;
        }
        let mut pair = None;
        for _ in 0..32 {
            let (i, j) = (rng.gen_range(0..open.len()), rng.gen_range(0..open.len()));
            let (a, b) = (open[i], open[j]);
            if a != b && !adj[a as usize].contains(&b) {
                pair = Some((a, b));
                break;
            }
        }
        if pair.is_none() {
            // few switches left, or most of them neighbours already: choose among the pairs that remain
            let mut pairs = Vec::new();
            for (i, &a) in open.iter().enumerate() {
                for &b in &open[i + 1..] {
                    if !adj[a as usize].contains(&b) {
                        pairs.push((a, b));
                    }
                }
            }
            if pairs.is_empty() {
                break;
            }
            pair = Some(pairs[rng.gen_range(0..pairs.len())]);
        }
        let (a, b) = pair.expect("set above");
        join(a, b, &mut adj, &mut links);
        free[a as usize] -= 1;
        free[b as usize] -= 1;
    }
    // Take a random link (x, y) apart, x and y not neighbours of s (of t), and join s-x, t-y.
    let mut rewire = |s: u32, t: u32, adj: &mut Vec<Vec<u32>>, links: &mut Vec<(u32, u32)>| -> bool {
        let ok = |x: u32, y: u32, adj: &Vec<Vec<u32>>| {
            x != s && x != t && y != s && y != t && !adj[s as usize].contains(&x) && !adj[t as usize].contains(&y)
        };
        let mut pick = None;
        for _ in 0..64 {
            let i = rng.gen_range(0..links.len());
            let (x, y) = links[i];
            let (x, y) = if rng.gen_bool(0.5) { (x, y) } else { (y, x) };
            if ok(x, y, adj) {
                pick = Some((i, x, y));
                break;
            }
        }
        if pick.is_none() {
            let all: Vec<(usize, u32, u32)> = links
                .iter()
                .enumerate()
                .flat_map(|(i, &(x, y))| [(i, x, y), (i, y, x)])
                .filter(|&(_, x, y)| ok(x, y, adj))
                .collect();
            if all.is_empty() {
                return false;
            }
            pick = Some(all[rng.gen_range(0..all.len())]);
        }
        let (i, x, y) = pick.expect("set above");
        links.swap_remove(i);
        adj[x as usize].retain(|&v| v != y);
        adj[y as usize].retain(|&v| v != x);
        join(s, x, adj, links);
        join(t, y, adj, links);
        true
    };
    // the paper's fix-up: a switch with two free ports or more
    for s in 0..n {
        while free[s as usize] >= 2 {
            if links.is_empty() || !rewire(s, s, &mut adj, &mut links) {
                return None;
            }
            free[s as usize] -= 2;
        }
    }
    // single free ports left: join two such switches, or, when they are neighbours already, pair them up through
    // a link taken apart
    let singles: Vec<u32> = (0..n).filter(|&s| free[s as usize] == 1).collect();
    for pair in singles.chunks(2) {
        if let [s, t] = *pair {
            if !adj[s as usize].contains(&t) {
                join(s, t, &mut adj, &mut links);
            } else if !rewire(s, t, &mut adj, &mut links) {
                return None;
            }
            free[s as usize] = 0;
            free[t as usize] = 0;
        }
    }
    Some(links)
}

/// Does the graph of `n` switches and `links` have a single component?
fn connected(n: u32, links: &[(u32, u32)]) -> bool {
    let mut adj: Vec<Vec<u32>> = vec![Vec::new(); n as usize];
    for &(a, b) in links {
        adj[a as usize].push(b);
        adj[b as usize].push(a);
    }
    let mut seen = vec![false; n as usize];
    let mut stack = vec![0u32];
    seen[0] = true;
    let mut count = 1;
    while let Some(v) = stack.pop() {
        for &u in &adj[v as usize] {
            if !seen[u as usize] {
                seen[u as usize] = true;
                count += 1;
                stack.push(u);
            }
        }
    }
    count == n
}

#[cfg(test)]
mod tests {
    use super::*;

    fn jf(switches: u32, ports: u32, network_ports: u32, graph_seed: u64) -> Jellyfish {
        Jellyfish { switches, ports, network_ports, graph_seed, ..Jellyfish::default() }
    }

    /// Every switch has exactly r links (one switch r - 1 when n x r is odd), no self-loop, no parallel link.
    #[test]
    fn regular_simple_and_connected() {
        for (n, r, seed) in
            [(17, 16, 1), (20, 16, 2), (21, 5, 8), (20, 7, 3), (9, 3, 4), (50, 5, 5), (100, 16, 6), (5, 4, 7)]
        {
            let links = graph(&jf(n, r + 2, r, seed)).unwrap();
            let mut degree = vec![0u32; n as usize];
            for w in links.windows(2) {
                assert_ne!(w[0], w[1], "parallel link {:?}", w[0]);
            }
            for &(a, b) in &links {
                assert!(a < b, "self-loop or unordered link ({a}, {b})");
                degree[a as usize] += 1;
                degree[b as usize] += 1;
            }
            let short: Vec<u32> = degree.iter().map(|&d| r - d).collect();
            let missing: u32 = short.iter().sum();
            assert_eq!(missing, (n * r) % 2, "n = {n}, r = {r}: degrees {degree:?}");
            assert!(connected(n, &links));
        }
    }

    #[test]
    fn same_seed_same_graph() {
        assert_eq!(graph(&jf(40, 24, 16, 1)).unwrap(), graph(&jf(40, 24, 16, 1)).unwrap());
        assert_ne!(graph(&jf(40, 24, 16, 1)).unwrap(), graph(&jf(40, 24, 16, 2)).unwrap());
    }

    #[test]
    fn a_disconnected_graph_is_refused() {
        // one network port each: a perfect matching, never connected for more than 2 switches
        let e = graph(&jf(6, 3, 1, 1)).unwrap_err();
        assert!(e.contains("topology.network_ports") && e.contains("topology.graph_seed"), "{e}");
        assert!(graph(&jf(2, 3, 1, 1)).is_ok());
    }
}
