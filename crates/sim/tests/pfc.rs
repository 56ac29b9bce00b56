//! Priority Flow Control (`switch.pfc`, `net::pfc`): a protected class does not drop where it would without
//! PFC, an unprotected one still does, pauses spread upstream hop by hop, every byte is accounted for, and
//! the results are deterministic and the same on one thread or two; "next_queue" mode (`switch.pfc_mode`)
//! does the same without head-of-line blocking.

mod common;

use common::{comparable, dumbbell, flows};
use fctlab_sim::config::*;
use fctlab_sim::units::{NEVER, PS_PER_US};
use fctlab_sim::{run, FlowSet, RunOutput};

/// Plain TCP on two strict-priority queues, no ECN, 100-packet port buffers, unbounded NICs (so that a paused
/// NIC holds its packets rather than dropping them), a first window of 40 packets; PFC pauses queue 1 (the
/// default protected set) at 40 packets and resumes it below 30: 60 packets of headroom, enough for what the
/// senders have in flight when a pause leaves (a packet on the wire and one being serialized on each link).
fn base(topology: TopologyConfig, pfc: bool) -> Config {
    let mut cfg = Config::for_scheme(SchemeName::Tcp, Preset::Native);
    cfg.topology = topology;
    cfg.switch.queues = 2;
    cfg.switch.ecn = EcnMode::Off;
    cfg.switch.buffer_bytes = 150_000;
    cfg.host.nic_buffer_bytes = Some(0);
    cfg.transport.init_cwnd_packets = 40;
    cfg.switch.pfc = pfc;
    cfg.switch.pfc_pause_packets = 40;
    cfg.switch.pfc_resume_packets = 30;
    cfg
}

/// 10 hosts at 10 Gbps on one switch, 1 us links.
fn one_switch(pfc: bool) -> Config {
    base(
        TopologyConfig::SingleSwitch(SingleSwitch { hosts: 10, host_link_gbps: 10.0, host_link_delay_ns: 1_000.0 }),
        pfc,
    )
}

/// Two incasts from the same six senders: 600 KB each into host 8 at priority 1 (protected), and into host 9
/// at priority 0 (unprotected), all at once.
fn two_incasts() -> FlowSet {
    let mut list = Vec::new();
    for s in 0..6u32 {
        list.push((s, 8, 600_000, s as u64 * 100_000));
        list.push((s, 9, 600_000, s as u64 * 100_000 + 50_000));
    }
    let mut f = flows(&list);
    f.priority = (0..list.len()).map(|i| if i % 2 == 0 { 1 } else { 0 }).collect();
    f
}

/// [`one_switch`] with PFC in "next_queue" mode (the HyLine authors' model: no frames, ports skip the packets
/// bound for a paused queue).
fn next_queue(mut cfg: Config) -> Config {
    cfg.switch.pfc_mode = PfcMode::NextQueue;
    cfg
}

fn tier(out: &RunOutput, name: &str) -> u64 {
    out.stats.pfc_paused_ps_per_tier.iter().find(|p| p.0 == name).map(|p| p.1).expect(name)
}

/// Every flow finished with all its bytes, and sent = delivered + dropped, flow by flow.
fn all_delivered(f: &FlowSet, out: &RunOutput) {
    let r = &out.results;
    for i in 0..f.len() {
        assert_ne!(r.finish_ps[i], NEVER, "flow {i} did not finish");
        let (got, size) = (r.bytes_delivered[i], f.size_bytes[i]);
        assert!(got >= size, "flow {i}: {got} of {size} bytes");
        assert_eq!(r.bytes_sent[i], r.bytes_delivered[i] + r.bytes_dropped[i], "flow {i}");
    }
}

#[test]
fn the_protected_class_does_not_drop_in_an_incast_the_other_still_does() {
    let f = two_incasts();
    let off = run(&one_switch(false), &f, None, 1).unwrap();
    let on = run(&one_switch(true), &f, None, 1).unwrap();
    let (q_off, q_on) = (&off.stats.drops_per_queue, &on.stats.drops_per_queue);
    eprintln!(
        "drops per queue without PFC {q_off:?}, with {q_on:?}; pause/resume frames {} {}; paused {:?}",
        on.stats.pfc_pause_frames, on.stats.pfc_resume_frames, on.stats.pfc_paused_ps_per_tier
    );
    assert!(q_off[1] > 0, "without PFC the incast into host 8 drops: {q_off:?}");
    assert_eq!(q_on[1], 0, "with PFC the protected class never drops");
    assert!(q_on[0] > 0, "the unprotected class still drops: {q_on:?}");
    assert_eq!(off.stats.pfc_pause_frames + off.stats.pfc_resume_frames, 0);
    assert!(off.stats.pfc_paused_ps_per_tier.iter().all(|p| p.1 == 0));
    // pauses reached the senders' NICs (the only ports feeding the switch's port to host 8), and every one
    // was resumed: one RESUME per PAUSE
    assert!(on.stats.pfc_pause_frames > 0);
    assert_eq!(on.stats.pfc_pause_frames, on.stats.pfc_resume_frames);
    assert!(tier(&on, "host_nic") > 0);
    assert_eq!(tier(&on, "switch_down"), 0, "nothing feeds a switch's port but hosts here");
    // a NIC is paused at most for the run's length, per queue (6 NICs, 2 queues; the run now ends with its last
    // flow, no longer a retransmission timeout later, so the bound of one queue per NIC no longer holds: 21.2 ms
    // paused in all against 6 x 3.03 ms)
    assert!(tier(&on, "host_nic") <= 6 * 2 * on.stats.sim_time_ps);
    all_delivered(&f, &off);
    all_delivered(&f, &on);
}

/// HyLine's case: both classes into the same host. The unprotected class, served first, fills the port's
/// buffer, so protected packets still drop with PFC when the queues share the buffer; with 60 packets of
/// headroom that only the protected queue may use, they never do.
#[test]
fn headroom_keeps_the_protected_class_lossless_when_the_other_fills_the_port() {
    let mut list = Vec::new();
    for s in 0..6u32 {
        list.push((s, 8, 600_000, s as u64 * 100_000));
        list.push((s, 8, 600_000, s as u64 * 100_000 + 50_000));
    }
    let mut f = flows(&list);
    f.priority = (0..list.len()).map(|i| if i % 2 == 0 { 1 } else { 0 }).collect();
    let run_with = |pfc, headroom| {
        let mut cfg = one_switch(pfc);
        cfg.switch.pfc_headroom_bytes = headroom;
        let out = run(&cfg, &f, None, 1).unwrap();
        all_delivered(&f, &out);
        out
    };
    let off = run_with(false, 0);
    let shared = run_with(true, 0);
    let headroom = run_with(true, 90_000);
    let drops = |o: &RunOutput| o.stats.drops_per_queue.clone();
    eprintln!(
        "drops per queue: without PFC {:?}, PFC {:?}, PFC with headroom {:?}; max occupancy {} {} {}",
        drops(&off), drops(&shared), drops(&headroom), off.stats.max_port_occupancy_bytes,
        shared.stats.max_port_occupancy_bytes, headroom.stats.max_port_occupancy_bytes
    );
    assert!(off.stats.drops_per_queue[1] > 0);
    assert!(shared.stats.drops_per_queue[1] > 0, "the unprotected class takes the whole buffer");
    assert_eq!(headroom.stats.drops_per_queue[1], 0);
    assert!(headroom.stats.drops_per_queue[0] > 0);
    assert!(headroom.stats.max_port_occupancy_bytes > 150_000, "the headroom was used");
    assert!(headroom.stats.max_port_occupancy_bytes <= 240_000);
    let two = run(&one_switch_headroom(), &f, None, 2).unwrap();
    assert_eq!(two.results, headroom.results);
}

fn one_switch_headroom() -> Config {
    let mut cfg = one_switch(true);
    cfg.switch.pfc_headroom_bytes = 90_000;
    cfg
}

/// The congestion is at the far switch's port to the receiver (4 senders at 10 Gbps, a 40 Gbps core link):
/// PFC pauses the near switch's port onto the core link, whose queue then grows until it pauses the senders'
/// NICs in turn. The protected class does not drop anywhere; without PFC it does.
#[test]
fn backpressure_spreads_hop_by_hop() {
    let topo = |pfc| {
        let mut cfg = dumbbell(4, 10.0, 40.0);
        let t = cfg.topology.clone();
        cfg = base(t, pfc);
        cfg
    };
    let list: Vec<_> = (0..4u32).map(|s| (s, 4, 1_500_000, s as u64 * 200_000)).collect();
    let mut f = flows(&list);
    f.priority = vec![1; 4];
    let off = run(&topo(false), &f, None, 1).unwrap();
    let on = run(&topo(true), &f, None, 1).unwrap();
    eprintln!(
        "drops without PFC {:?}, with {:?}; frames {} {}; paused {:?}",
        off.stats.drops_per_queue, on.stats.drops_per_queue, on.stats.pfc_pause_frames, on.stats.pfc_resume_frames,
        on.stats.pfc_paused_ps_per_tier
    );
    assert!(off.stats.drops_per_queue[1] > 0);
    assert_eq!(on.stats.drops, 0);
    assert!(tier(&on, "switch_across") > 0, "the near switch's core port was paused");
    assert!(tier(&on, "host_nic") > 0, "and then the senders' NICs");
    all_delivered(&f, &on);
    // holding the senders back costs no throughput at the bottleneck: the last byte arrives about when the
    // receiver's link has carried them all (6 MB at 10 Gbps: 4.8 ms of serialization)
    let last = on.results.finish_ps.iter().max().copied().unwrap();
    assert!(last < 5_200 * PS_PER_US, "last flow done at {} us", last / PS_PER_US);
}

/// Head-of-line blocking, as real PFC has it: sender 0's NIC, paused for priority 1 because of the incast into
/// host 8, also holds sender 0's flow to host 9, whose own path is not congested at all.
#[test]
fn a_pause_blocks_the_paused_class_towards_uncongested_hosts_too() {
    let mut list: Vec<_> = (0..6u32).map(|s| (s, 8, 600_000, 0)).collect();
    list.push((0, 9, 300_000, 20 * PS_PER_US));
    let mut f = flows(&list);
    f.priority = vec![1; list.len()];
    let fct = |pfc| {
        let out = run(&one_switch(pfc), &f, None, 1).unwrap();
        all_delivered(&f, &out);
        out.results.finish_ps[6] - out.results.start_ps[6]
    };
    let (off, on) = (fct(false), fct(true));
    eprintln!("flow to the uncongested host: {} us without PFC, {} us with", off / PS_PER_US, on / PS_PER_US);
    assert!(on > off * 3 / 2, "{on} against {off}");
}

/// "next_queue" mode removes that head-of-line blocking: sender 0's NIC holds back its packets bound for the
/// paused queue towards host 8 and sends the ones for host 9, whose queue is not paused. The flow to host 9
/// finishes about as fast as without PFC; the incast into host 8 still never drops.
#[test]
fn next_queue_mode_lets_the_paused_class_through_to_uncongested_hosts() {
    let mut list: Vec<_> = (0..6u32).map(|s| (s, 8, 600_000, 0)).collect();
    list.push((0, 9, 300_000, 20 * PS_PER_US));
    let mut f = flows(&list);
    f.priority = vec![1; list.len()];
    let go = |cfg: Config| {
        let out = run(&cfg, &f, None, 1).unwrap();
        all_delivered(&f, &out);
        out
    };
    let fct = |o: &RunOutput| (o.results.finish_ps[6] - o.results.start_ps[6]) / PS_PER_US;
    let (off, port, nq) = (go(one_switch(false)), go(one_switch(true)), go(next_queue(one_switch(true))));
    eprintln!(
        "flow to the uncongested host: {} us without PFC, {} us port mode, {} us next_queue mode; drops {:?} {:?} {:?}",
        fct(&off), fct(&port), fct(&nq), off.stats.drops_per_queue, port.stats.drops_per_queue,
        nq.stats.drops_per_queue
    );
    assert!(fct(&port) > fct(&off) * 3 / 2);
    assert!(fct(&nq) <= fct(&off) * 11 / 10, "{} against {} without PFC", fct(&nq), fct(&off));
    assert_eq!(nq.stats.drops_per_queue[1], 0);
    assert_eq!(nq.stats.pfc_pause_frames + nq.stats.pfc_resume_frames, 0, "no frames in next_queue mode");
    // the paused time is the congested queue's own: the switch's port to host 8
    assert!(tier(&nq, "switch_down") > 0 && tier(&nq, "host_nic") == 0, "{:?}", nq.stats.pfc_paused_ps_per_tier);
}

/// "next_queue" mode on the two incasts: the protected class never drops, the other still does, every byte is
/// accounted for; same seed, same bits; asked for two threads, it runs on one (the NICs read the switch's
/// queues) with the same results.
#[test]
fn next_queue_mode_keeps_the_protected_class_lossless_and_is_deterministic() {
    let f = two_incasts();
    let cfg = next_queue(one_switch(true));
    let a = run(&cfg, &f, None, 1).unwrap();
    let (drops, paused) = (&a.stats.drops_per_queue, &a.stats.pfc_paused_ps_per_tier);
    eprintln!("next_queue mode: drops per queue {drops:?}, paused {paused:?}");
    assert_eq!(a.stats.drops_per_queue[1], 0);
    assert!(a.stats.drops_per_queue[0] > 0);
    assert!(tier(&a, "switch_down") > 0, "the queue to host 8 was paused");
    all_delivered(&f, &a);
    let b = run(&cfg, &f, None, 1).unwrap();
    assert_eq!(a.results, b.results);
    assert_eq!(comparable(&a.stats), comparable(&b.stats));
    let two = run(&cfg, &f, None, 2).unwrap();
    assert_eq!(two.stats.threads, 1);
    assert_eq!(a.results, two.results);
}

/// "next_queue" mode across switches: the near switch's core port holds back the packets bound for the far
/// switch's paused queue, its own queue grows until the senders' NICs hold theirs; the protected class does not
/// drop, and the fat tree under two-way load finishes every flow.
#[test]
fn next_queue_mode_backpressure_and_fat_tree() {
    let mut cfg = next_queue(base(dumbbell(4, 10.0, 40.0).topology, true));
    let list: Vec<_> = (0..4u32).map(|s| (s, 4, 1_500_000, s as u64 * 200_000)).collect();
    let mut f = flows(&list);
    f.priority = vec![1; 4];
    let out = run(&cfg, &f, None, 1).unwrap();
    eprintln!("dumbbell: drops {:?}, paused {:?}", out.stats.drops_per_queue, out.stats.pfc_paused_ps_per_tier);
    assert_eq!(out.stats.drops, 0);
    all_delivered(&f, &out);
    cfg = next_queue(base(
        TopologyConfig::FatTree(FatTree {
            k: 4,
            hosts_per_edge: 0,
            host_link_gbps: 10.0,
            core_link_gbps: 10.0,
            host_link_delay_ns: 1_000.0,
            core_link_delay_ns: 1_000.0,
        }),
        true,
    ));
    cfg.switch.buffer_bytes = 45_000;
    (cfg.switch.pfc_pause_packets, cfg.switch.pfc_resume_packets) = (12, 6);
    cfg.switch.pfc_queues = Some(vec![0]);
    let f = common::random_flows(600, 16, 400_000, PS_PER_US / 4, 3);
    let out = run(&cfg, &f, None, 1).unwrap();
    eprintln!("fat tree: drops {:?}, paused {:?}", out.stats.drops_per_tier, out.stats.pfc_paused_ps_per_tier);
    all_delivered(&f, &out);
}

/// The other families and tagging schemes that accept PFC run it to completion with every byte accounted for:
/// PIAS (packets of a flow move between queues), RCP and PDQ (explicit rates, event-driven agents; their
/// queues stay short, so they pause at 4 packets here, and both queues are protected). PIAS's protected queue 1
/// does drop: its queue 0 (the first 100 KB of every flow) fills the ports' buffers, and there is no headroom
/// here (`switch.pfc_headroom_bytes`, docs/schemes-hyline.md).
#[test]
fn other_strict_priority_schemes_run_with_pfc() {
    for scheme in [SchemeName::Pias, SchemeName::Rcp, SchemeName::Pdq] {
        let mut cfg = one_switch(true);
        cfg.scheme.name = scheme;
        cfg.scheme.thresholds_bytes = vec![100_000];
        let mut f = two_incasts();
        if scheme == SchemeName::Pias {
            f.priority.clear();
        } else {
            (cfg.switch.pfc_pause_packets, cfg.switch.pfc_resume_packets) = (4, 2);
            cfg.switch.pfc_queues = Some(vec![0, 1]);
        }
        let out = run(&cfg, &f, None, 1).unwrap();
        all_delivered(&f, &out);
        assert!(out.stats.pfc_pause_frames > 0, "{scheme:?}");
        let two = run(&cfg, &f, None, 2).unwrap();
        assert_eq!(out.results, two.results, "{scheme:?} on two threads");
        eprintln!("{scheme:?}: drops {:?}, pause frames {}", out.stats.drops_per_queue, out.stats.pfc_pause_frames);
    }
}

/// Heavy two-way traffic on a three-tier fat tree, every packet protected (data and ACKs in queue 0), low
/// thresholds: pauses at every tier, and yet every flow finishes. Pausing only the ports that feed a congested
/// queue keeps the pauses' dependencies along up-down paths, which form no cycle (`net::pfc`).
#[test]
fn a_fat_tree_under_two_way_load_does_not_deadlock() {
    use common::random_flows;
    let topo = TopologyConfig::FatTree(FatTree {
        k: 4,
        hosts_per_edge: 0,
        host_link_gbps: 10.0,
        core_link_gbps: 10.0,
        host_link_delay_ns: 1_000.0,
        core_link_delay_ns: 1_000.0,
    });
    let mut cfg = base(topo, true);
    cfg.switch.buffer_bytes = 45_000;
    (cfg.switch.pfc_pause_packets, cfg.switch.pfc_resume_packets) = (12, 6);
    cfg.switch.pfc_queues = Some(vec![0]);
    let f = random_flows(600, 16, 400_000, PS_PER_US / 4, 3);
    let out = run(&cfg, &f, None, 1).unwrap();
    all_delivered(&f, &out);
    let paused: Vec<_> = out.stats.pfc_paused_ps_per_tier.iter().filter(|p| p.1 > 0).map(|p| p.0.as_str()).collect();
    let (drops, frames) = (&out.stats.drops_per_tier, out.stats.pfc_pause_frames);
    eprintln!("drops {drops:?}, pause frames {frames}, tiers paused {paused:?}");
    for t in ["host_nic", "edge_up", "agg_up", "core_down", "agg_down"] {
        assert!(paused.contains(&t), "{t} never paused: {paused:?}");
    }
    let two = run(&cfg, &f, None, 2).unwrap();
    assert_eq!(out.results, two.results);
}

#[test]
fn deterministic_and_the_same_on_two_threads() {
    let f = two_incasts();
    let cfg = one_switch(true);
    let a = run(&cfg, &f, None, 1).unwrap();
    let b = run(&cfg, &f, None, 1).unwrap();
    assert_eq!(a.results, b.results);
    assert_eq!(comparable(&a.stats), comparable(&b.stats));
    let two = run(&cfg, &f, None, 2).unwrap();
    assert_eq!(two.stats.threads, 2);
    assert_eq!(a.results, two.results, "per-flow results differ on two threads");
    assert_eq!(comparable(&a.stats), comparable(&two.stats), "stats differ on two threads");
    assert!(two.stats.pfc_pause_frames > 0);
}

/// A run without PFC is the run it was before PFC existed: the keys' defaults leave it off, and a run with
/// PFC on but no queue ever reaching the pause threshold gives the same per-flow results as one without
/// (its ports are event-driven rather than FIFOs, which give identical results).
#[test]
fn pfc_that_never_pauses_changes_nothing() {
    assert!(!Config::default().switch.pfc);
    let f = flows(&[(0, 8, 200_000, 0), (1, 9, 100_000, 0)]);
    let off = run(&one_switch(false), &f, None, 1).unwrap();
    let on = run(&one_switch(true), &f, None, 1).unwrap();
    assert_eq!(on.stats.pfc_pause_frames, 0);
    assert_eq!(off.results, on.results);
}

fn bad(json: &str) -> (String, String) {
    let e = Config::from_json(json).expect_err(json);
    (e.key, e.message)
}

#[test]
fn bad_pfc_settings_are_refused_naming_the_key() {
    let (k, m) = bad(r#"{"switch": {"pfc": true, "pfc_pause_packets": 100, "pfc_resume_packets": 100}}"#);
    assert_eq!(k, "switch.pfc_resume_packets");
    assert!(m.contains("below switch.pfc_pause_packets (100)"), "{m}");
    let (k, _) = bad(r#"{"switch": {"pfc_resume_packets": 0}}"#);
    assert_eq!(k, "switch.pfc_resume_packets");
    let (k, m) = bad(r#"{"switch": {"pfc": true, "buffer_bytes": 150000}}"#);
    assert_eq!(k, "switch.pfc_pause_packets");
    assert!(m.contains("100 full packets"), "{m}");
    let (k, m) = bad(r#"{"switch": {"queues": 2, "pfc_queues": [1, 2]}}"#);
    assert_eq!(k, "switch.pfc_queues");
    assert!(m.contains("queue 2 does not exist"), "{m}");
    let (k, _) = bad(r#"{"switch": {"pfc_queues": []}}"#);
    assert_eq!(k, "switch.pfc_queues");
    let (k, _) = bad(r#"{"switch": {"pfc_queues": [1, 1]}}"#);
    assert_eq!(k, "switch.pfc_queues");
    let (k, _) = bad(r#"{"switch": {"pfc_frame_bytes": 0}}"#);
    assert_eq!(k, "switch.pfc_frame_bytes");
    let (k, m) = bad(r#"{"switch": {"buffer": "shared", "shared_buffer_bytes": 4000000, "pfc_headroom_bytes": 1}}"#);
    assert_eq!(k, "switch.pfc_headroom_bytes");
    assert!(m.contains("\"port\""), "{m}");
    // headroom counts towards what a pause threshold may need
    Config::from_json(r#"{"switch": {"pfc": true, "buffer_bytes": 150000, "pfc_headroom_bytes": 180000}}"#).unwrap();
    for scheme in ["pfabric", "las"] {
        let (k, m) = bad(&format!(r#"{{"scheme": {{"name": "{scheme}"}}, "switch": {{"pfc": true}}}}"#));
        assert_eq!(k, "switch.pfc");
        assert!(m.contains("rank queue"), "{m}");
    }
    let (k, m) = bad(r#"{"scheme": {"name": "homa"}, "switch": {"pfc": true}}"#);
    assert_eq!(k, "switch.pfc");
    assert!(m.contains("homa"), "{m}");
    let (k, m) = bad(r#"{"run": {"level": "flow"}, "switch": {"pfc": true}}"#);
    assert_eq!(k, "switch.pfc");
    assert!(m.contains("flow level"), "{m}");
    let (k, m) = bad(r#"{"switch": {"pfc": true, "pfc_mode": "voq"}}"#);
    assert_eq!(k, "switch.pfc_mode");
    assert!(m.contains("next_queue"), "{m}");
    let (k, m) = bad(r#"{"routing": {"mode": "spray"}, "switch": {"pfc": true, "pfc_mode": "next_queue"}}"#);
    assert_eq!(k, "switch.pfc_mode");
    assert!(m.contains("spray"), "{m}");
    Config::from_json(r#"{"routing": {"mode": "spray"}, "switch": {"pfc": true, "pfc_mode": "port"}}"#).unwrap();
    let (k, _) = bad(r#"{"switch": {"pfc": true, "pfc_typo": 3}}"#);
    assert_eq!(k, "switch.pfc_typo");
    // the good ones: the defaults, and PFC on a strict-priority scheme of each family that allows it
    for scheme in ["dctcp", "pias", "tcp", "pdq", "rcp"] {
        let json = format!(r#"{{"scheme": {{"name": "{scheme}", "thresholds_bytes": [100000]}}, "#)
            + r#""switch": {"pfc": true, "queues": 2}}"#;
        Config::from_json(&json).unwrap_or_else(|e| panic!("{scheme}: {e}"));
    }
}

/// A paused NIC: host 0 sends one protected flow into an incast at host 8 (which pauses the NICs feeding it,
/// in "next_queue" mode) and four unprotected flows to host 9 at the same time, through a 60,000 B NIC, every
/// window capped at 60 packets. While
/// its protected queue is held, the unprotected queue fills the NIC's shared buffer, and the protected packets
/// the host's TCP keeps handing down are dropped at their own NIC; with headroom (the HyLine scripts give every
/// port's protected queue its own longer limit, the hosts' included), none of them is.
#[test]
fn headroom_at_a_paused_nic_keeps_the_hosts_protected_packets() {
    let mut list = Vec::new();
    for s in 0..6u32 {
        list.push((s, 8, 600_000, s as u64 * 1_000));
    }
    for k in 0..4u64 {
        list.push((0, 9, 600_000, 20_000 + k));
    }
    let mut f = flows(&list);
    f.priority = (0..list.len()).map(|i| if i < 6 { 1 } else { 0 }).collect();
    let run_with = |headroom| {
        let mut cfg = next_queue(one_switch(true));
        cfg.host.nic_buffer_bytes = Some(60_000);
        // windows of at most 60 packets (90,000 B): what a paused NIC must hold of one flow, as HyLine's second
        // class (225 packets) fits the scripts' 326-packet protected queue
        cfg.transport.max_cwnd_packets = 60;
        cfg.switch.pfc_headroom_bytes = headroom;
        let out = run(&cfg, &f, None, 1).unwrap();
        all_delivered(&f, &out);
        out
    };
    let nic_drops = |o: &RunOutput| o.stats.drops_per_tier.iter().find(|p| p.0 == "host_nic").map(|p| p.1).unwrap();
    let shared = run_with(0);
    let headroom = run_with(90_000);
    eprintln!(
        "drops per queue: shared {:?} (NIC {}), headroom {:?} (NIC {})",
        shared.stats.drops_per_queue, nic_drops(&shared), headroom.stats.drops_per_queue, nic_drops(&headroom)
    );
    assert!(nic_drops(&shared) > 0 && shared.stats.drops_per_queue[1] > 0, "protected packets dropped at the NIC");
    assert_eq!(headroom.stats.drops_per_queue[1], 0, "the protected class is lossless, its own NIC included");
}
