//! `run.monitor_host`: the time series of one host's last hop, checked against what an idle path and a
//! two-flow bottleneck must give.

mod common;

use common::flows;
use fctlab_sim::config::Config;

const US: u64 = 1_000_000;

fn star(scheme: &str, hosts: u32) -> Config {
    let text = format!(
        r#"{{"scheme": {{"name": "{scheme}"}},
            "topology": {{"kind": "single_switch", "hosts": {hosts}, "host_link_gbps": 1.0, "host_link_delay_ns": 10000}},
            "switch": {{"queues": 1}},
            "run": {{"monitor_host": {}, "monitor_interval_us": 50}}}}"#,
        hosts - 1
    );
    Config::from_json(&text).unwrap()
}

/// One TCP flow alone: samples every 50 us from 0 until the flow is done; delivered bytes never decrease and
/// end at the flow's size; between two samples no more than the link can carry arrives; the queue of the
/// receiver's port stays empty (one sender at the same rate as the receiver's link).
#[test]
fn a_lone_flow_fills_its_series_at_line_rate_at_most() {
    let cfg = star("tcp", 2);
    let out = fctlab_sim::run(&cfg, &flows(&[(0, 1, 300_000, 0)]), None, 1).unwrap();
    let m = out.stats.monitor.as_ref().expect("monitored");
    assert_eq!(m.flows, vec![0]);
    assert_eq!(m.time_ps[0], 0);
    for w in m.time_ps.windows(2) {
        assert_eq!(w[1] - w[0], 50 * US);
    }
    let d = &m.flow_delivered_bytes[0];
    assert_eq!(d.len(), m.time_ps.len());
    assert!(d.windows(2).all(|w| w[1] >= w[0]));
    assert_eq!(*d.last().unwrap(), 300_000, "the last sample follows the flow's end");
    assert_eq!(m.delivered_bytes, *d);
    // 50 us at 1 Gbps = 6,250 bytes on the wire, of which at most 1460/1500 payload (plus one packet of slack
    // for a sample that falls between a packet's start and its arrival)
    assert!(d.windows(2).all(|w| w[1] - w[0] <= 6_250 * 1460 / 1500 + 1460));
    assert!(m.queue_bytes.iter().all(|&q| q == 0));
    // and monitoring changes no result
    let mut plain = cfg.clone();
    plain.run.monitor_host = None;
    let p = fctlab_sim::run(&plain, &flows(&[(0, 1, 300_000, 0)]), None, 1).unwrap();
    assert_eq!(p.results, out.results);
}

/// Two senders into one receiver: the receiver's port queues (two 1 Gbps senders, one 1 Gbps link), and the
/// delivered total grows at the line rate while both send.
#[test]
fn two_senders_build_the_monitored_queue() {
    let cfg = star("dctcp", 3);
    let out = fctlab_sim::run(&cfg, &flows(&[(0, 2, 500_000, 0), (1, 2, 500_000, 0)]), None, 1).unwrap();
    let m = out.stats.monitor.as_ref().unwrap();
    assert_eq!(m.flows, vec![0, 1]);
    assert!(m.queue_bytes.iter().any(|&q| q > 10_000), "max queue {:?}", m.queue_bytes.iter().max());
    let n = m.time_ps.len();
    // in the middle of the transfer, the link is busy: 20 samples (1 ms) carry about 125,000 wire bytes
    let (a, b) = (n / 4, n / 4 + 20);
    let payload = (m.delivered_bytes[b] - m.delivered_bytes[a]) as f64;
    assert!(payload > 0.9 * 125_000.0 * 1460.0 / 1500.0, "{payload}");
}
