//! Connection reuse (`transport.connections`): which flows share a connection, what carries over, and what
//! the trace's connection ids do.

mod common;

use common::{dumbbell, flows};
use fctlab_sim::config::*;
use fctlab_sim::units::PS_PER_US;
use fctlab_sim::{run, FlowSet};

/// Two long flows into one receiver (marks, so alpha grows), then a late flow from host 0 and one from host 1.
fn congested_then_late() -> FlowSet {
    let late = 20_000 * PS_PER_US;
    flows(&[(0, 2, 3_000_000, 0), (1, 2, 3_000_000, 0), (0, 2, 2_000_000, late), (0, 2, 2_000_000, late)])
}

fn dctcp(connections: Connections) -> Config {
    let mut cfg = dumbbell(2, 10.0, 10.0);
    cfg.scheme.name = SchemeName::Dctcp;
    cfg.switch.ecn_threshold_bytes = 30_000;
    cfg.transport.connections = connections;
    cfg
}

#[test]
fn per_host_pair_reuses_an_idle_connection_and_opens_one_when_all_are_busy() {
    let f = congested_then_late();
    let fresh = run(&dctcp(Connections::PerFlow), &f, None, 1).unwrap();
    let pooled = run(&dctcp(Connections::PerHostPair), &f, None, 1).unwrap();
    assert_eq!((fresh.stats.connections_opened, fresh.stats.connections_reused), (4, 0));
    // flows 2 and 3 start together on pair 0 -> 2: one takes flow 0's idle connection, the other opens a new one
    assert_eq!((pooled.stats.connections_opened, pooled.stats.connections_reused), (3, 1));
    let r = (&fresh.results, &pooled.results);
    for i in 0..2 {
        assert_eq!(r.0.finish_ps[i], r.1.finish_ps[i], "the first flows run on new connections either way");
    }
    // the reused connection starts with its alpha and ssthresh: it cannot blast a window as a fresh one does
    assert_ne!((r.0.finish_ps[2], r.0.finish_ps[3]), (r.1.finish_ps[2], r.1.finish_ps[3]));
    assert!(pooled.results.finish_ps.iter().all(|&t| t != fctlab_sim::units::NEVER));
}

#[test]
fn only_the_first_flow_of_a_connection_has_a_handshake() {
    let mut cfg = dumbbell(1, 10.0, 10.0);
    cfg.transport.handshake = true;
    cfg.transport.connections = Connections::PerHostPair;
    let f = flows(&[(0, 1, 10_000, 0), (0, 1, 10_000, 1_000 * PS_PER_US)]);
    let out = run(&cfg, &f, None, 1).unwrap();
    let r = &out.results;
    let fct = |i: usize| r.finish_ps[i] - r.start_ps[i];
    assert_eq!(fct(0), r.ideal_fct_ps[0], "alone: the ideal, handshake included");
    assert_eq!(fct(1), r.ideal_fct_ps[1], "alone on an open connection: the ideal without a handshake");
    assert!(r.ideal_fct_ps[1] < r.ideal_fct_ps[0]);
    assert_eq!(out.stats.connections_reused, 1);
}

#[test]
fn trace_connections_follow_the_ids_and_are_required() {
    let mut cfg = dctcp(Connections::Trace);
    let mut f = flows(&[(0, 2, 50_000, 0), (0, 2, 50_000, 1_000 * PS_PER_US), (0, 2, 50_000, 2_000 * PS_PER_US)]);
    let err = run(&cfg, &f, None, 1).unwrap_err();
    assert!(err.message.contains("conn"), "{}", err.message);
    f.conn = vec![7, 8, 7];
    let out = run(&cfg, &f, None, 1).unwrap();
    assert_eq!((out.stats.connections_opened, out.stats.connections_reused), (2, 1));
    // one connection joins one pair of hosts
    f.src[2] = 1;
    let err = f.validate(3).unwrap_err();
    assert!(err.message.contains("conn 7"), "{}", err.message);
    cfg.transport.connections = Connections::PerFlow;
    f.src[2] = 0;
    assert_eq!(run(&cfg, &f, None, 1).unwrap().stats.connections_reused, 0, "ids are ignored per flow");
}

#[test]
fn a_trace_connection_is_taken_over_once_its_flow_has_sent_everything() {
    // a request/response chain on one connection: flow 1 starts when flow 0's receiver holds every byte, before
    // flow 0's last ACK is back, so it takes the connection over; flow 2 starts while flow 1 is still sending
    let mut cfg = dctcp(Connections::Trace);
    cfg.transport.init_cwnd_packets = 100;
    let mut f = flows(&[(0, 2, 1_000_000, 0), (0, 2, 20_000, 0), (0, 2, 2_000_000, 0), (0, 2, 20_000, 0)]);
    f.after = vec![fctlab_sim::flows::NO_PARENT, 0, 1, fctlab_sim::flows::NO_PARENT];
    f.conn = vec![1, 1, 1, 1];
    let out = run(&cfg, &f, None, 1).unwrap();
    // flows 0, 1, 2 form one chain on one connection; flow 3 starts at 0 while flow 0 (more than a window) is
    // still sending: a second connection
    assert_eq!((out.stats.connections_opened, out.stats.connections_reused), (2, 2));
}

/// The host's NIC queue is a switch-like port by default: the switches' buffer and ECN threshold.
#[test]
fn the_default_nic_is_bounded_and_marks_like_a_switch_port() {
    // one sender, one receiver: only the NIC sees the sender's bursts queue (every later hop drains as fast)
    let mut cfg = dumbbell(1, 10.0, 100.0);
    cfg.scheme.name = SchemeName::Dctcp;
    let f = flows(&[(0, 1, 3_000_000, 0)]);
    cfg.transport.init_cwnd_packets = 200; // 300 KB at once: above the 97.5 KB ECN threshold
    let marked = run(&cfg, &f, None, 1).unwrap();
    assert!(marked.stats.ecn_marks > 0, "{:?}", marked.stats);
    cfg.host.nic_ecn = false;
    assert_eq!(run(&cfg, &f, None, 1).unwrap().stats.ecn_marks, 0, "no other port queues");
    // a 1,000-packet burst overflows the 360 KB NIC buffer, which an unbounded NIC (0) absorbs
    cfg.transport.init_cwnd_packets = 1_000;
    let bounded = run(&cfg, &f, None, 1).unwrap();
    assert!(bounded.stats.drops > 0 && bounded.stats.drops_per_tier[0] == ("host_nic".to_string(), bounded.stats.drops));
    cfg.host.nic_buffer_bytes = Some(0);
    assert_eq!(run(&cfg, &f, None, 1).unwrap().stats.drops, 0);
}
