//! Drops counted by where the dropping port sits (`RunStats::drops_per_tier`), on every topology, and the
//! rank queue's drops (several evictions for one arrival) counted one by one.

use fctlab_sim::config::*;
use fctlab_sim::net::Network;
use fctlab_sim::units::PS_PER_US;
use fctlab_sim::{run, RunOutput};
mod common;
use common::{dumbbell, flows};

fn names(cfg: &Config) -> Vec<&'static str> {
    Network::<()>::build(cfg, 0).tier_names
}

fn tiers(out: &RunOutput) -> Vec<(&str, u64)> {
    out.stats.drops_per_tier.iter().map(|(k, v)| (k.as_str(), *v)).collect()
}

fn total(pairs: &[(String, u64)]) -> u64 {
    pairs.iter().map(|p| p.1).sum()
}

#[test]
fn every_topology_names_its_tiers_in_path_order() {
    let leaf_spine = Config::default();
    assert_eq!(names(&leaf_spine), ["host_nic", "leaf_up", "spine_down", "leaf_down"]);
    let fat_tree = Config { topology: TopologyConfig::FatTree(FatTree::default()), ..Config::default() };
    assert_eq!(names(&fat_tree), ["host_nic", "edge_up", "agg_up", "core_down", "agg_down", "edge_down"]);
    assert_eq!(names(&dumbbell(2, 10.0, 10.0)), ["host_nic", "switch_across", "switch_down"]);
    let single = Config { topology: TopologyConfig::SingleSwitch(SingleSwitch::default()), ..Config::default() };
    assert_eq!(names(&single), ["host_nic", "switch_down"]);
    // every port has a tier, and the ports facing hosts are the last one
    let net: Network = Network::build(&leaf_spine, 0);
    for (id, p) in net.ports.iter().enumerate() {
        let t = net.tier_names[net.port_tier[id] as usize];
        match (net.is_host(p.owner), net.is_host(p.peer)) {
            (true, _) => assert_eq!(t, "host_nic"),
            (false, true) => assert_eq!(t, "leaf_down"),
            _ => assert!(t == "leaf_up" || t == "spine_down", "{t}"),
        }
    }
}

#[test]
fn a_dumbbell_drops_at_its_bottleneck_and_the_tiers_add_up() {
    // 4 senders at 10G into a 2.5G core link: the left switch's port onto the core drops
    let mut cfg = dumbbell(4, 10.0, 2.5);
    cfg.switch.buffer_bytes = 30_000;
    cfg.switch.ecn = EcnMode::Off;
    cfg.host.nic_buffer_bytes = Some(0); // unbounded NICs: a first window of 40 packets would overflow 30 KB there
    cfg.transport.init_cwnd_packets = 40;
    let f = flows(&(0..4).map(|s| (s, 4, 500_000, 0)).collect::<Vec<_>>());
    let out = run(&cfg, &f, None, 1).unwrap();
    let t = tiers(&out);
    assert_eq!(t.iter().map(|p| p.0).collect::<Vec<_>>(), ["host_nic", "switch_across", "switch_down"]);
    assert!(out.stats.drops > 0 && t[1].1 == out.stats.drops, "{t:?}");
    assert_eq!(total(&out.stats.ack_drops_per_tier) + total(&out.stats.probe_drops_per_tier), 0);
}

#[test]
fn rank_queue_evictions_are_each_counted_with_their_bytes() {
    // pFabric on a leaf-spine: many senders into one receiver overflow its leaf's port towards it (and the
    // NICs, whose small buffers hold a whole initial window); every dropped data byte is in the flows' columns
    // and every drop in one tier
    let mut cfg = Config::for_scheme(SchemeName::Pfabric, Preset::PfabricNs2);
    cfg.routing.mode = RoutingMode::Spray;
    let list: Vec<_> = (0..40u32).map(|s| (s + 16, 0, 30_000 + 7_000 * s as u64, s as u64 * PS_PER_US)).collect();
    let f = flows(&list);
    let out = run(&cfg, &f, None, 1).unwrap();
    assert_eq!(out.stats.flows_finished, 40);
    let t = tiers(&out);
    assert!(out.stats.drops > 0 && total(&out.stats.drops_per_tier) == out.stats.drops, "{t:?}");
    assert!(t[3].1 > 0, "the receiver's leaf port drops: {t:?}");
    let r = &out.results;
    for i in 0..f.len() {
        assert_eq!(r.bytes_sent[i], r.bytes_delivered[i] + r.bytes_dropped[i], "flow {i}");
    }
}
