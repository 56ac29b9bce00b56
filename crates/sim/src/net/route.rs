//! Source routes: a path chosen at the source, carried in the packet, and followed by the switches instead of
//! their ECMP hash. HyLine's manager gives its large flows routes (`engine::family::hyline`), and a trace's `path`
//! column gives TCP-family flows theirs (`engine::family::routed`); both encode and decode routes here.
//!
//! A host's equal-cost paths to a destination are enumerated in a fixed order ([`paths`]): at every switch with
//! n > 1 candidate ports (`Network::candidates`) the path takes one of them, and that index is one digit of the
//! path's code, in mixed radix with the first such switch as the least significant digit. A data packet carries
//! `ROUTED | code` in `Packet::sack` (the field rank-queue switches read as the rank, which is why only
//! strict-priority schemes can carry routes); each switch on the way takes its digit off ([`route_step`]), and
//! [`decode`] reads the choice without taking it (what PFC's "next_queue" mode looks ahead at). ACKs and
//! packets without the flag go by ECMP. A trace's path index k is the k-th code of [`paths`] ([`route_codes`]).

use super::packet::Packet;
use super::Network;
use crate::flows::{FlowError, FlowSet, NO_PATH};

/// The flag bit of a data packet's route code (in `Packet::sack`, the rank field of rank-queue switches).
pub(crate) const ROUTED: u32 = 1 << 31;

/// Every equal-cost path from host `src` to host `dst`: (route code, the ports crossed, the source's NIC first).
/// The code's digit at the k-th switch with n > 1 choices is the index of the port taken among
/// `Network::candidates`, in mixed radix (the first such switch is the least significant digit).
pub(crate) fn paths<H: crate::net::packet::Header>(net: &Network<H>, src: u32, dst: u32) -> Vec<(u32, Vec<u32>)> {
    fn walk<H: crate::net::packet::Header>(
        net: &Network<H>,
        node: u32,
        dst: u32,
        code: u32,
        mult: u32,
        path: &mut Vec<u32>,
        out: &mut Vec<(u32, Vec<u32>)>,
    ) {
        if node == dst {
            out.push((code, path.clone()));
            return;
        }
        assert!(path.len() <= net.nodes.len(), "routing loop towards host {dst}");
        let cands = net.candidates(node, dst);
        let n = cands.len() as u32;
        for (d, &p) in cands.iter().enumerate() {
            path.push(p);
            let (c, m) = if n > 1 { (code + d as u32 * mult, mult.saturating_mul(n)) } else { (code, mult) };
            walk(net, net.ports[p as usize].peer, dst, c, m, path, out);
            path.pop();
        }
    }
    let first = net.host_port[src as usize];
    let mut path = vec![first];
    let mut out = Vec::new();
    walk(net, net.ports[first as usize].peer, dst, 0, 1, &mut path, &mut out);
    out
}

/// Switch `node`'s egress port for `pkt` if it is a data packet that carries a route: it takes its digit (and
/// drops it from the route); None for the rest (ECMP).
#[inline]
pub(crate) fn route_step(net: &Network, node: u32, pkt: &mut Packet) -> Option<u32> {
    let (port, rest) = decode(net, node, pkt)?;
    pkt.sack = rest;
    Some(port)
}

/// A routed data packet at switch `node`: the egress port its route's digit picks, and the route as the next
/// switch reads it (`sack`, unchanged where there is no choice); None for the others (ECMP).
#[inline]
pub(crate) fn decode(net: &Network, node: u32, pkt: &Packet) -> Option<(u32, u32)> {
    if pkt.is_ack() || pkt.sack & ROUTED == 0 {
        return None;
    }
    let cands = net.candidates(node, pkt.dst);
    let n = cands.len() as u32;
    if n <= 1 {
        return cands.first().map(|&p| (p, pkt.sack));
    }
    let code = pkt.sack & !ROUTED;
    Some((cands[(code % n) as usize], ROUTED | (code / n)))
}

/// Each flow's route (`ROUTED | code`, or 0 for ECMP) from its path index; an error names the first flow whose
/// index is past its pair's paths.
pub(crate) fn route_codes<H: crate::net::packet::Header>(net: &Network<H>, flows: &FlowSet) -> Result<Vec<u32>, FlowError> {
    let mut cache: std::collections::HashMap<(u32, u32), Vec<u32>> = std::collections::HashMap::new();
    let mut out = Vec::with_capacity(flows.path.len());
    for (i, &p) in flows.path.iter().enumerate() {
        if p == NO_PATH {
            out.push(0);
            continue;
        }
        let (src, dst) = (flows.src[i], flows.dst[i]);
        let codes = cache.entry((src, dst)).or_insert_with(|| paths(net, src, dst).into_iter().map(|(c, _)| c).collect());
        let Some(&code) = codes.get(p as usize) else {
            let paths =
                format!("host {src} has {} equal-cost paths to host {dst} (paths 0 to {})", codes.len(), codes.len() - 1);
            return Err(FlowError::at(
                Some(i),
                "path",
                format!("path {p} does not exist: {paths}"),
                format!("flow {i} has path {p}, but {paths}"),
            ));
        };
        out.push(ROUTED | code);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn route_codes_decode_to_their_paths() {
        let cfg = crate::config::Config::from_json(r#"{"topology": {"kind": "fat_tree", "k": 4}}"#).unwrap();
        let net: Network = Network::build(&cfg, 7);
        let hosts = net.hosts;
        for (src, dst) in [(0, hosts - 1), (0, 1), (0, 2), (3, 8)] {
            let ps = paths(&net, src, dst);
            let codes: std::collections::BTreeSet<u32> = ps.iter().map(|(c, _)| *c).collect();
            assert_eq!(codes.len(), ps.len(), "codes are distinct");
            for (code, ports) in &ps {
                // follow the code as switches decode it
                let mut c = *code;
                let mut node = net.ports[ports[0] as usize].peer;
                let mut walked = vec![ports[0]];
                while node != dst {
                    let cands = net.candidates(node, dst);
                    let n = cands.len() as u32;
                    let c_before = c;
                    let p = if n <= 1 {
                        cands[0]
                    } else {
                        let p = cands[(c % n) as usize];
                        c /= n;
                        p
                    };
                    // what PFC's "next_queue" mode reads ahead: the same port, without rewriting the route
                    let pkt = Packet { dst, sack: ROUTED | c_before, ..Packet::default() };
                    assert_eq!(decode(&net, node, &pkt).map(|(port, _)| port), Some(p));
                    walked.push(p);
                    node = net.ports[p as usize].peer;
                }
                assert_eq!(&walked, ports);
            }
        }
        // a k = 4 fat-tree: 4 paths between pods, 2 within a pod, 1 under one edge switch
        assert_eq!(paths(&net, 0, hosts - 1).len(), 4);
    }
}
