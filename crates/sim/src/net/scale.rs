//! The fabric's own yardsticks: its longest base RTT and that path's bandwidth-delay product ([`FabricScale`]),
//! which the keys stated in the fabric's terms (`transport.rto_min_rtts`, `transport.init_cwnd_bdp`,
//! `transport.max_cwnd_bdp`, `switch.buffer_bdp`) are resolved against before a run ([`resolve`]), and the
//! offered load each tier of links carries for a set of flows ([`tier_loads`]), which the pre-run check reads.
//!
//! A preset tied to one fabric's RTT or BDP (pFabric's "RTO about 3 RTTs", "window about the BDP") thus means
//! the same on every fabric; the absolute values of the papers' own fabrics stay available as labelled presets.

use super::{flow_hash, Network};
use crate::config::{Config, TransportConfig};
use crate::units::{tx_time, Ps, PS_PER_S, PS_PER_US};
use rand::{RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// A fabric's yardsticks for the keys in RTTs and BDPs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FabricScale {
    /// The longest base RTT: over the paths from host 0 and from the last host to every other host (both
    /// directions), a full-size data packet (`mss_bytes + header_bytes`) out and an ACK (`ack_bytes`) back on
    /// the idle fabric, store and forward at every hop (serialization plus propagation per port), on the ECMP
    /// path of hash 0 each way. Every path of the regular fabrics (fat-tree, leaf-spine, dumbbell, BCube) has
    /// a twin among these; on a Jellyfish it is the longest of those paths, not necessarily the fabric's.
    pub rtt_ps: Ps,
    /// Ports the data packet crosses on that path.
    pub hops: u32,
    /// The bandwidth-delay product of that path: `rtt_ps` times the sending host's line rate, in bytes.
    pub bdp_bytes: u64,
    /// The BDP in full-size packets on the wire (`mss_bytes + header_bytes`), not rounded.
    pub bdp_packets: f64,
}

/// The base RTT of the path `src` -> `dst` (data) and back (ACK), and the ports of the data's path.
fn path_rtt<H: super::packet::Header>(net: &Network<H>, t: &TransportConfig, src: u32, dst: u32) -> (Ps, u32) {
    let out = net.ecmp_path(src, dst, 0);
    let back = net.ecmp_path(dst, src, 0);
    let data = out.iter().map(|&p| {
        let port = &net.ports[p as usize];
        tx_time(t.mss_bytes + t.header_bytes, port.rate_bps) + port.delay_ps
    });
    let ack = back.iter().map(|&p| {
        let port = &net.ports[p as usize];
        tx_time(t.ack_bytes, port.rate_bps) + port.delay_ps
    });
    (data.sum::<Ps>() + ack.sum::<Ps>(), out.len() as u32)
}

/// The yardsticks of a built fabric (see [`FabricScale`]).
pub fn fabric_scale_of<H: super::packet::Header>(net: &Network<H>, t: &TransportConfig) -> FabricScale {
    let mut best = (0, 0, 0u32);
    if net.hosts >= 2 {
        let last = net.hosts - 1;
        for src in [0, last] {
            for dst in 0..net.hosts {
                if dst != src {
                    let (rtt, hops) = path_rtt(net, t, src, dst);
                    if rtt > best.0 {
                        best = (rtt, hops, src);
                    }
                }
            }
        }
    }
    let (rtt_ps, hops, src) = best;
    let rate = if net.hosts > 0 { net.line_rate_bps(src) as u128 } else { 0 };
    let bdp_bytes = (rate * rtt_ps as u128 / (8 * PS_PER_S as u128)) as u64;
    let bdp_packets = bdp_bytes as f64 / (t.mss_bytes + t.header_bytes) as f64;
    FabricScale { rtt_ps, hops, bdp_bytes, bdp_packets }
}

/// The yardsticks of the fabric `cfg` describes (built with the run's own salts, as [`crate::run`] builds it).
pub fn fabric_scale(cfg: &Config) -> FabricScale {
    let net: Network = Network::build(cfg, Xoshiro256PlusPlus::seed_from_u64(cfg.seed).next_u64());
    fabric_scale_of(&net, &cfg.transport)
}

/// Does `cfg` hold a key in the fabric's terms still to be resolved?
pub fn needs_resolving(cfg: &Config) -> bool {
    let t = &cfg.transport;
    t.rto_min_rtts.is_some() || t.init_cwnd_bdp.is_some() || t.max_cwnd_bdp.is_some() || cfg.switch.buffer_bdp.is_some()
}

/// Resolve the keys in the fabric's terms into their absolute keys, and clear them (so a resolved config, written
/// out and read again, runs the same): `rto_min_us` = `rto_min_rtts` x the longest base RTT (in us, as a float);
/// `init_cwnd_packets` and `max_cwnd_packets` = that many BDPs in full-size packets, rounded to the nearest, at
/// least 1; `switch.buffer_bytes` = that many BDPs rounded up to whole full-size packets, at least one. In a
/// config built in code a relative key that is set wins over its absolute one (the parser,
/// [`Config::from_json`], drops a preset's relative key wherever the text gives the absolute one). Returns the
/// yardsticks used, `None` when nothing needed them (the fabric is then not built).
pub fn resolve(cfg: &mut Config) -> Option<FabricScale> {
    if !needs_resolving(cfg) {
        return None;
    }
    let scale = fabric_scale(cfg);
    let t = &mut cfg.transport;
    let wire = (t.mss_bytes + t.header_bytes) as u64;
    let packets = |bdps: f64| ((bdps * scale.bdp_packets).round() as u64).clamp(1, u32::MAX as u64) as u32;
    if let Some(r) = t.rto_min_rtts.take() {
        t.rto_min_us = r * scale.rtt_ps as f64 / PS_PER_US as f64;
    }
    if let Some(b) = t.init_cwnd_bdp.take() {
        t.init_cwnd_packets = packets(b);
    }
    if let Some(b) = t.max_cwnd_bdp.take() {
        t.max_cwnd_packets = packets(b);
    }
    if let Some(b) = cfg.switch.buffer_bdp.take() {
        let n = ((b * scale.bdp_bytes as f64) / wire as f64).ceil().max(1.0) as u64;
        cfg.switch.buffer_bytes = n * wire;
    }
    Some(scale)
}

/// Offered load of one tier of links (`Network::tier_names`) for a set of flows.
#[derive(Debug, Clone, PartialEq)]
pub struct TierLoad {
    pub tier: &'static str,
    /// Ports in the tier.
    pub ports: u32,
    /// The tier's mean offered load: wire bytes of every flow's data crossing its ports over the span of the
    /// arrivals, divided by the ports' capacity over that span.
    pub mean: f64,
    /// The most loaded port's offered load (per-flow ECMP hashes flows unevenly: a few ports above the mean).
    pub max: f64,
}

/// The offered load each tier of links of `cfg`'s fabric carries when flows `src[i]` -> `dst[i]` of `size[i]`
/// bytes arrive over `span_ps` (the data only, with its headers; each flow on the path its ECMP hash picks in a
/// run of `cfg`, as [`super::ideal::ideal_fcts`]). Ports no flow crosses count in their tier's mean (idle
/// capacity); tiers are listed in `Network::tier_names`' order. Also returns the data packets' port crossings
/// (each flow's full-size-or-shorter packets times its path's ports), what the cost estimate counts events from.
pub fn tier_loads(cfg: &Config, src: &[u32], dst: &[u32], size: &[u64], span_ps: Ps) -> (Vec<TierLoad>, u64) {
    let net: Network = Network::build(cfg, Xoshiro256PlusPlus::seed_from_u64(cfg.seed).next_u64());
    let t = &cfg.transport;
    let mut bytes = vec![0u128; net.ports.len()];
    let mut packet_hops = 0u64;
    for i in 0..src.len() {
        let n = size[i].max(1).div_ceil(t.mss_bytes as u64);
        let wire = (size[i].max(1) + n * t.header_bytes as u64) as u128;
        let path = net.ecmp_path(src[i], dst[i], flow_hash(i as u32, false));
        packet_hops += n * path.len() as u64;
        for p in path {
            bytes[p as usize] += wire;
        }
    }
    let span = span_ps.max(1) as f64 / PS_PER_S as f64;
    let mut out: Vec<TierLoad> =
        net.tier_names.iter().map(|&tier| TierLoad { tier, ports: 0, mean: 0.0, max: 0.0 }).collect();
    let mut offered = vec![0f64; out.len()];
    let mut capacity = vec![0f64; out.len()];
    for (p, port) in net.ports.iter().enumerate() {
        let k = net.port_tier[p] as usize;
        let cap = port.rate_bps as f64 * span / 8.0;
        let load = bytes[p] as f64 / cap;
        out[k].ports += 1;
        out[k].max = out[k].max.max(load);
        offered[k] += bytes[p] as f64;
        capacity[k] += cap;
    }
    for (k, tl) in out.iter_mut().enumerate() {
        tl.mean = if capacity[k] > 0.0 { offered[k] / capacity[k] } else { 0.0 };
    }
    out.retain(|tl| tl.ports > 0);
    (out, packet_hops)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Preset, SchemeName};

    fn fat_tree(k: u32) -> Config {
        let text = format!(r#"{{"topology": {{"kind": "fat_tree", "k": {k}}}, "scheme": {{"name": "pfabric"}}}}"#);
        Config::from_json(&text).unwrap()
    }

    /// The k = 8 fat-tree's defaults (1 Gbps, 25 us per link): the longest path crosses 6 links each way. By
    /// hand: data 6 x (12 us + 25 us) = 222 us, ACK 6 x (0.32 us + 25 us) = 151.92 us: 373.92 us; its BDP at 1
    /// Gbps 46,740 B, 31.16 packets of 1,500 B.
    #[test]
    fn fat_tree_longest_rtt_by_hand() {
        let s = fabric_scale(&fat_tree(8));
        assert_eq!(s.hops, 6);
        assert_eq!(s.rtt_ps, 373_920_000);
        assert_eq!(s.bdp_bytes, 46_740);
        assert!((s.bdp_packets - 31.16).abs() < 1e-9);
    }

    /// pFabric's native preset resolves to 3 RTTs, 1 and 1.25 BDPs, 2 BDPs of buffer; explicit keys win.
    #[test]
    fn pfabric_native_scales_and_explicit_keys_win() {
        let mut cfg = fat_tree(8);
        assert_eq!(cfg.transport.rto_min_rtts, Some(3.0));
        let s = resolve(&mut cfg).unwrap();
        assert_eq!(s.rtt_ps, 373_920_000);
        assert!((cfg.transport.rto_min_us - 1121.76).abs() < 1e-6);
        assert_eq!((cfg.transport.init_cwnd_packets, cfg.transport.max_cwnd_packets), (31, 39));
        assert_eq!(cfg.switch.buffer_bytes, 63 * 1500);
        assert!(!needs_resolving(&cfg) && resolve(&mut cfg).is_none());
        let text = r#"{"topology": {"kind": "fat_tree", "k": 8}, "scheme": {"name": "pfabric"},
                       "transport": {"rto_min_us": 77, "init_cwnd_bdp": 0.5}, "switch": {"buffer_bytes": 30000}}"#;
        let mut cfg = Config::from_json(text).unwrap();
        assert_eq!((cfg.transport.rto_min_rtts, cfg.switch.buffer_bdp), (None, None));
        resolve(&mut cfg);
        assert_eq!(cfg.transport.rto_min_us, 77.0);
        assert_eq!(cfg.switch.buffer_bytes, 30_000);
        assert_eq!((cfg.transport.init_cwnd_packets, cfg.transport.max_cwnd_packets), (16, 39));
    }

    /// The absolute preset keeps the ns-2 scripts' values whatever the fabric.
    #[test]
    fn pfabric_ns2_preset_is_absolute() {
        let mut cfg = Config::for_scheme(SchemeName::Pfabric, Preset::PfabricNs2);
        assert!(!needs_resolving(&cfg));
        assert!(resolve(&mut cfg).is_none());
        assert_eq!((cfg.transport.rto_min_us, cfg.transport.init_cwnd_packets, cfg.switch.buffer_bytes), (45.0, 12, 36_000));
    }

    /// All-to-all on a 2:1 oversubscribed leaf-spine: the leaves' uplinks carry twice the hosts' load, up to
    /// the share of traffic that stays in the rack. 2 leaves of 4 hosts at 10 Gbps, 1 spine at 20 Gbps: each
    /// host sends 1 MB to each of the 7 others over 1 ms; 4 of each host's 7 destinations are across the spine.
    #[test]
    fn tier_loads_of_an_oversubscribed_leaf_spine() {
        let text = r#"{"topology": {"kind": "leaf_spine", "leaves": 2, "hosts_per_leaf": 4, "spines": 1,
                        "host_link_gbps": 10, "core_link_gbps": 20}}"#;
        let cfg = Config::from_json(text).unwrap();
        let (mut src, mut dst) = (Vec::new(), Vec::new());
        for s in 0..8u32 {
            for d in 0..8u32 {
                if s != d {
                    src.push(s);
                    dst.push(d);
                }
            }
        }
        let size = vec![1_000_000u64; src.len()];
        let (loads, packet_hops) = tier_loads(&cfg, &src, &dst, &size, 1_000_000_000);
        // 685 packets per flow; 2 ports in the rack (3 x 8 flows), 4 across the spine (4 x 8)
        assert_eq!(packet_hops, 685 * (24 * 2 + 32 * 4));
        let get = |name: &str| loads.iter().find(|t| t.tier == name).unwrap().clone();
        let wire = 1_000_000.0 + 685.0 * 40.0; // 685 packets of headers
        let nic = get("host_nic");
        assert!((nic.mean - 7.0 * wire * 8.0 / 1e7).abs() < 1e-9, "{nic:?}");
        // per leaf uplink: 4 hosts x 4 remote destinations, at 20 Gbps
        let up = get("leaf_up");
        assert!((up.mean - 16.0 * wire * 8.0 / 2e7).abs() < 1e-9, "{up:?}");
        assert!((up.mean / nic.mean - 16.0 / 7.0 / 2.0).abs() < 1e-9);
    }
}
