//! `run.fct_at = "sender"`: a flow completes when the cumulative ACK of its last byte reaches the sender. On an
//! idle path that is the receiver's completion plus the last ACK's way back, which the test computes by hand;
//! the ideal FCT includes the same return, so a lone flow's slowdown is 1 in both modes.

mod common;

use common::flows;
use fctlab_sim::config::*;
use fctlab_sim::units::NEVER;
use fctlab_sim::validate::config_from_json;
use fctlab_sim::{run, RunOutput};

/// One sender, one receiver: sender - left switch - right switch - receiver, 10 Gbps and 1 us per link.
fn lone(scheme: SchemeName, sender: bool) -> Config {
    let mut cfg = Config::for_scheme(scheme, Preset::Native);
    cfg.topology = TopologyConfig::Dumbbell(Dumbbell {
        senders: 1,
        receivers: 1,
        host_link_gbps: 10.0,
        core_link_gbps: 10.0,
        host_link_delay_ns: 1_000.0,
        core_link_delay_ns: 1_000.0,
    });
    // a window that holds the whole flow, so that alone it meets its ideal (in a config built in code a window
    // in BDPs, as pFabric's native preset sets, wins over one in packets: clear it)
    cfg.transport.init_cwnd_packets = 20;
    cfg.transport.max_cwnd_packets = 20;
    (cfg.transport.init_cwnd_bdp, cfg.transport.max_cwnd_bdp) = (None, None);
    if scheme == SchemeName::Qclimb {
        cfg.scheme.qclimb_info = QclimbInfo::Precise;
    }
    if sender {
        cfg.run.fct_at = FctAt::Sender;
    }
    cfg
}

/// The last ACK's way back by hand: three store-and-forward hops, each 40 B at 10 Gbps (32 ns) and 1 us.
const ACK_RETURN_PS: u64 = 3 * (32_000 + 1_000_000);

fn one_flow(cfg: &Config) -> RunOutput {
    // 10 full segments and a short last one
    let out = run(cfg, &flows(&[(0, 1, 15_000, 0)]), None, 1).unwrap();
    assert_eq!(out.stats.flows_finished, 1);
    out
}

#[test]
fn a_lone_flow_completes_at_the_sender_one_ack_return_after_the_receiver() {
    let schemes = [
        SchemeName::Tcp,
        SchemeName::Dctcp,
        SchemeName::Pfabric,
        SchemeName::Las,
        SchemeName::Pias,
        SchemeName::L2dct,
        SchemeName::Qclimb,
        SchemeName::Hyline,
        SchemeName::Qjump,
    ];
    for scheme in schemes {
        let mut variants = vec![(lone(scheme, false), lone(scheme, true))];
        if scheme == SchemeName::Qjump {
            let (mut a, mut b) = (lone(scheme, false), lone(scheme, true));
            a.scheme.qjump_queue = QjumpQueue::Ranked;
            b.scheme.qjump_queue = QjumpQueue::Ranked;
            variants.push((a, b));
        }
        if scheme == SchemeName::Tcp {
            let (mut a, mut b) = (lone(scheme, false), lone(scheme, true));
            a.transport.handshake = true;
            b.transport.handshake = true;
            variants.push((a, b));
        }
        for (rc, sc) in variants {
            let (r, s) = (one_flow(&rc), one_flow(&sc));
            let (r, s) = (&r.results, &s.results);
            let what = format!("{} handshake={}", scheme.as_str(), rc.transport.handshake);
            // the simulation is the same: only what is reported moves
            assert_eq!(r.sender_done_ps, s.sender_done_ps, "{what}");
            assert_eq!(s.finish_ps, s.sender_done_ps, "{what}");
            assert_eq!(s.finish_ps[0], r.finish_ps[0] + ACK_RETURN_PS, "{what}");
            assert_eq!(s.ideal_fct_ps[0], r.ideal_fct_ps[0] + ACK_RETURN_PS, "{what}");
            // slowdown 1 in both modes
            assert_eq!(r.finish_ps[0] - r.start_ps[0], r.ideal_fct_ps[0], "{what}: receiver");
            assert_eq!(s.finish_ps[0] - s.start_ps[0], s.ideal_fct_ps[0], "{what}: sender");
        }
    }
}

/// A flow whose last ACK has not come back when the run stops is unfinished at the sender, though its receiver
/// holds every byte.
#[test]
fn a_flow_whose_last_ack_is_still_on_its_way_is_unfinished() {
    let r = one_flow(&lone(SchemeName::Tcp, false));
    let mut cfg = lone(SchemeName::Tcp, true);
    // stop between the receiver's completion and the ACK's arrival
    cfg.run.time_limit_ms = (r.results.finish_ps[0] + ACK_RETURN_PS / 2) as f64 / 1e9;
    let out = run(&cfg, &flows(&[(0, 1, 15_000, 0)]), None, 1).unwrap();
    assert_eq!(out.results.bytes_delivered[0], 15_000);
    assert_eq!(out.results.finish_ps[0], NEVER);
    assert_eq!(out.stats.flows_finished, 0);
}

#[test]
fn families_without_it_are_refused_naming_the_key() {
    for scheme in ["rcp", "d3", "pdq", "homa"] {
        let e = config_from_json(&format!(r#"{{"scheme": {{"name": "{scheme}"}}, "run": {{"fct_at": "sender"}}}}"#))
            .unwrap_err();
        assert_eq!(e.key, "run.fct_at", "{scheme}: {e}");
        assert!(e.message.contains("control packets"), "{e}");
    }
    let e = config_from_json(r#"{"scheme": {"name": "tcp"}, "run": {"fct_at": "sender", "level": "flow"}}"#).unwrap_err();
    assert_eq!(e.key, "run.fct_at", "{e}");
    assert!(e.message.contains("flow level"), "{e}");
    // (pias and qclimb need thresholds: the first test runs them)
    for scheme in ["tcp", "dctcp", "pfabric", "las", "l2dct", "hyline", "qjump"] {
        let json = format!(r#"{{"scheme": {{"name": "{scheme}"}}, "run": {{"fct_at": "sender"}}}}"#);
        assert!(config_from_json(&json).is_ok(), "{scheme}");
    }
    assert_eq!(Config::default().run.fct_at, FctAt::Receiver);
}
