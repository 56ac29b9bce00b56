//! Priority Flow Control (IEEE 802.1Qbb), on/off as the HyLine paper builds it in ns-2 (§V-A, "PFC
//! Implementation in ns2"): "when the queue size hits a threshold (pause threshold), the switch sends pause
//! signal to upstream switch. When the queue size becomes less than another threshold (resume threshold) the
//! switch sends resume message." Its parameters are Table I's: pause at 215 packets, resume below 205, in
//! queues of 225 packets. HyLine uses it (§IV-A, §IV-D) to keep the low-priority class from being dropped when
//! the high-priority class fills the buffers, at the price of head-of-line blocking in the paused class.
//!
//! The model (`switch.pfc`, and the choices where the paper is silent):
//! - **Trigger.** A switch's egress queue q of a protected priority (`switch.pfc_queues`) starts to count as
//!   *congested* when a push leaves it holding `pfc_pause_packets` packets or more, and stops when a pop leaves
//!   it below `pfc_resume_packets` (hysteresis). Packets are counted as the paper counts them, waiting in the
//!   queue (not the one being serialized). Hosts never pause: they take whatever reaches them.
//! - **Whom it pauses.** The *upstream ports that feed that queue*: every port into the switch (a host's NIC or
//!   another switch's port) from which the routing tables can send a packet out of that egress port. Per
//!   (upstream port, priority) the model counts the congested queues it feeds; the switch sends PAUSE when the
//!   count goes from 0 to 1 and RESUME when it returns to 0. A paused upstream port holds *every* packet of that
//!   priority, also those bound for uncongested egress queues: head-of-line blocking, as real PFC has it.
//!   Why not every port into the switch (the plainest reading of "pauses its upstream")? That adds
//!   dependencies no packet follows (a spine's port down to a leaf paused because the leaf's uplink is full,
//!   though nothing from the spine goes up again), and under two-way load they close cycles (spine -> leaf 1
//!   -> spine 2 -> leaf 2 -> spine) in which every queue waits for the next: a PFC deadlock that real switches,
//!   which account buffers by ingress port, do not have under up-down routing. Feeding is what ingress
//!   accounting tracks, so the dependencies stay along routable paths, which have no cycle in these fabrics.
//!   (Measured: `tests/pfc.rs`'s fat tree under two-way load finishes all 600 flows with pauses at every tier;
//!   with every port into the switch paused instead, not one flow finished in 200 ms of simulated time.)
//!   (The authors' ns-2 code does otherwise, like virtual output queues: `switch.pfc_mode = "next_queue"`, below.)
//! - **Frames.** A PAUSE or RESUME takes the reverse link's serialization of `pfc_frame_bytes` (64) plus its
//!   propagation delay; it is not queued behind data (a MAC control frame). Frames on one link arrive in the
//!   order they were sent. On/off: a pause has no quanta and lasts until its resume.
//! - **The paused port.** While paused for q it starts no packet of q (one already on the wire finishes); its
//!   strict-priority scheduler serves the highest-priority non-empty queue that is not paused
//!   ([`super::port::Port::pop`]). Packets keep arriving into the paused queue and are admitted or dropped by the
//!   port's own buffer: at a host's NIC the sender's transport does not know (its packets wait in the NIC
//!   queue, or are dropped there if it fills); at a switch the queue grows and may in turn pause that switch's
//!   upstream, so backpressure spreads hop by hop.
//! - **Headroom** (`switch.pfc_headroom_bytes`, 0 by default). A port's queues share its buffer, so a full
//!   port would drop protected packets whatever PFC does (HyLine's case: the high-priority class fills the
//!   buffer, which PFC is meant to keep from dropping the low-priority class). With headroom, a protected
//!   queue of a switch port, or of a host's NIC, may hold that many bytes beyond the port's buffer, which the
//!   other queues cannot use, as a switch reserves headroom for its lossless classes; the HyLine scripts'
//!   per-queue buffers give the protected queue 100 packets more with PFC on, at every port, the hosts' links
//!   included. At a NIC it matters when a pause holds the host's protected queue while its other queue fills
//!   the buffer: without it, the protected packets would be dropped at their own host (measured on the HyLine
//!   recipe's web search at 0.7: 2,583 NIC drops, 74 of 836 flows of 1-10 MB stalled for a 1 s timeout; with
//!   it, none).
//! - **Modes** (`switch.pfc_mode`). The above is `"port"` (the default). `"next_queue"` is the HyLine
//!   authors' ns-2 code, which says it simulates virtual output queues ("if one output queue is paused other
//!   packets should be able to go to other outputs"): there are no frames; a protected queue is *paused* per
//!   the same thresholds and hysteresis (the `congested` state here), and a port into a switch (a host's NIC
//!   or a switch's port towards another switch), about to start a packet of protected queue q, takes the
//!   first packet of q, in FIFO order, whose *next queue* is not paused: the queue it will join at that switch,
//!   i.e. the egress port the switch will route it to (ECMP, or the family's own route: `Family::next_port`,
//!   decoded without rewriting the packet, so that the choice ahead and the one on arrival are the same) and
//!   the packet's priority. That packet may come out of the middle of the FIFO; when every packet of q is
//!   bound for a paused queue, the strict-priority scheduler moves on to the next queue, or idles. A port
//!   whose far end is a host holds nothing back (nothing pauses a host). The state is read directly, with no
//!   delay (as the ns-2 code reads it); when a paused queue resumes, the ports feeding it that hold packets of
//!   that priority and have no transmitter event pending are woken at once (the ns-2 code polls every few
//!   microseconds instead; waking at the instant of the change is the exact form of the same idea). Spraying is
//!   refused (the next switch draws its port at random on arrival, which no port can read ahead). It runs on
//!   one thread: the hosts' NICs read the edge switches' state, which the other thread of a two-thread run
//!   holds (asked for two, the engine runs one, as with `run.monitor_host`). Its paused time
//!   (`pfc_paused_ps_per_tier`) is the paused queue's own, counted at that queue's port's tier; frames are 0.
//!   Cost: the ports' choice is a scan of the protected queue per packet started on a port into a switch; a
//!   run in the other mode, or without PFC, tests one flag per packet started.
//! - **Counters.** Frames sent (`pfc_pause_frames`, `pfc_resume_frames`), and paused time per port tier
//!   (`pfc_paused_ps_per_tier`): for every (port, queue), the picoseconds from the PAUSE's arrival to the
//!   RESUME's (or to the end of the run), summed over the ports of the tier and their queues.
//!
//! Cost: a run without PFC has no per-packet work from it beyond the ports' paused mask, always 0, in
//! [`super::port::Port::pop`] and `can_send_now`, and one flag test per push and pop on event-driven ports:
//! 0.67% more instructions on PIAS's event-driven ports (cachegrind, 500 reference flows), none on the FIFO
//! ports. The per-queue admission limit that carries the headroom replaced a test for unbounded buffers, and
//! with it PIAS runs 2.4% fewer instructions than before PFC (same flows; DCTCP's FIFO ports 0.3% fewer). With
//! PFC the FIFO fast path is off (it puts packets on the wire ahead of time, which a pause could not stop).

use super::packet::Header;
use super::Network;
use crate::config::{Config, PfcMode};
use crate::units::{Ps, NEVER};
use std::collections::VecDeque;

/// A PAUSE or RESUME frame in flight to the upstream port it acts on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Frame {
    /// Its arrival at the upstream port's owner.
    pub at: Ps,
    pub queue: u8,
    /// PAUSE (`true`) or RESUME.
    pub pause: bool,
}

/// A run's PFC state: the switches' congested queues, who feeds them, and the frames in flight.
#[derive(Debug, Clone)]
pub struct Pfc {
    pause_packets: usize,
    resume_packets: usize,
    /// Queues per port.
    queues: usize,
    /// Protected queues, as a bit mask.
    mask: u64,
    /// `switch.pfc_mode = "next_queue"` (see the module docs): no frames; ports read the congested state.
    pub next_queue: bool,
    pub frame_bytes: u32,
    /// Per egress port: its protected queues that count as congested (bit q).
    congested: Vec<u64>,
    /// The upstream ports feeding egress port e: `feed_ports[feed_start[e]..feed_start[e + 1]]`.
    feed_start: Vec<u32>,
    feed_ports: Vec<u32>,
    /// Per (upstream port, queue): the congested queues it feeds (paused while > 0).
    blockers: Vec<u32>,
    /// Per (port, queue): since when the port holds the queue paused (`NEVER`: it does not).
    since: Vec<Ps>,
    /// Per port: the frames in flight to it, in arrival order.
    inflight: Vec<VecDeque<Frame>>,
    /// Scratch list of the upstream ports a transition changes (reused: no allocation per transition).
    pub scratch: Vec<u32>,
}

impl Pfc {
    /// The PFC state of the fabric `net` that `cfg` describes (`switch.pfc` on), with the switches' egress ports
    /// marked as watched (`Port::pfc_watch`).
    pub fn new<H: Header>(cfg: &Config, net: &mut Network<H>) -> Pfc {
        let s = &cfg.switch;
        let mask = s.pfc_mask();
        let queues = s.queues as usize;
        let n = net.ports.len();
        let (feed_start, feed_ports) = feeders(net);
        let next_queue = s.pfc_mode == PfcMode::NextQueue;
        for p in net.ports.iter_mut() {
            p.pfc_watch = mask != 0 && p.owner >= net.hosts;
            if next_queue && p.peer >= net.hosts {
                // gated: its protected queues are served by the engine's per-packet check (`Port::set_gated`)
                p.set_gated(mask);
            }
            // (headroom at the switches' ports and at the hosts' NICs: the HyLine scripts give every RPQ queue,
            // the hosts' too, its own limit, the protected one 100 packets longer)
            let nic = p.owner < net.hosts && p.bounded_own_buffer();
            if (p.pfc_watch || nic) && mask != 0 && s.pfc_headroom_bytes > 0 {
                for q in (0..queues).filter(|&q| mask >> q & 1 != 0) {
                    p.add_headroom(q, s.pfc_headroom_bytes);
                }
            }
        }
        Pfc {
            pause_packets: s.pfc_pause_packets as usize,
            resume_packets: s.pfc_resume_packets as usize,
            queues,
            mask,
            next_queue,
            frame_bytes: s.pfc_frame_bytes,
            congested: vec![0; n],
            feed_start,
            feed_ports,
            blockers: vec![0; n * queues],
            since: vec![NEVER; n * queues],
            inflight: vec![VecDeque::new(); n],
            scratch: Vec::new(),
        }
    }

    /// The protected queues (bit q for queue q).
    pub fn protected(&self) -> u64 {
        self.mask
    }

    /// Egress port `port`'s queues that count as congested (bit q for queue q).
    pub fn congested(&self, port: u32) -> u64 {
        self.congested[port as usize]
    }

    /// The upstream ports feeding egress port `port`.
    pub fn feeders(&self, port: u32) -> &[u32] {
        let p = port as usize;
        &self.feed_ports[self.feed_start[p] as usize..self.feed_start[p + 1] as usize]
    }

    /// A packet joined queue `q` of egress port `port`, which now holds `len` packets: if the queue becomes
    /// congested, the upstream ports this makes paused are added to `out` ("next_queue" mode: none; the
    /// ports feeding it read its state).
    pub fn pushed(&mut self, port: u32, q: usize, len: usize, out: &mut Vec<u32>) {
        let p = port as usize;
        if self.mask >> q & 1 == 0 || len < self.pause_packets || self.congested[p] >> q & 1 != 0 {
            return;
        }
        self.congested[p] |= 1 << q;
        if self.next_queue {
            return;
        }
        for i in self.feed_start[p]..self.feed_start[p + 1] {
            let u = self.feed_ports[i as usize];
            let b = &mut self.blockers[u as usize * self.queues + q];
            *b += 1;
            if *b == 1 {
                out.push(u);
            }
        }
    }

    /// A packet left queue `q` of egress port `port`, which now holds `len` packets: if the queue stops being
    /// congested, the upstream ports this releases are added to `out` ("next_queue" mode: every port feeding
    /// it, which may hold packets bound for it).
    pub fn popped(&mut self, port: u32, q: usize, len: usize, out: &mut Vec<u32>) {
        let p = port as usize;
        if self.congested[p] >> q & 1 == 0 || len >= self.resume_packets {
            return;
        }
        self.congested[p] &= !(1 << q);
        if self.next_queue {
            out.extend_from_slice(self.feeders(port));
            return;
        }
        for i in self.feed_start[p]..self.feed_start[p + 1] {
            let u = self.feed_ports[i as usize];
            let b = &mut self.blockers[u as usize * self.queues + q];
            *b -= 1;
            if *b == 0 {
                out.push(u);
            }
        }
    }

    /// A frame sent to port `port`: in flight until `frame.at`. Returns `true` when it is the only one in flight
    /// to that port (the caller then schedules its arrival; the next ones are scheduled by [`Pfc::take_frame`]).
    pub fn send(&mut self, port: u32, frame: Frame) -> bool {
        let q = &mut self.inflight[port as usize];
        debug_assert!(q.back().is_none_or(|f| f.at <= frame.at), "frames on a link arrive in order");
        q.push_back(frame);
        q.len() == 1
    }

    /// The frame at the head of port `port`'s in-flight list, which arrives now, and the arrival time of the
    /// next one, if any.
    pub fn take_frame(&mut self, port: u32) -> (Frame, Option<Ps>) {
        let q = &mut self.inflight[port as usize];
        let f = q.pop_front().expect("a frame event with no frame in flight");
        (f, q.front().map(|n| n.at))
    }

    /// Port `port` pauses or resumes queue `q` at `now`. A resume returns how long the queue was paused.
    pub fn apply(&mut self, port: u32, q: usize, pause: bool, now: Ps) -> Option<Ps> {
        let since = &mut self.since[port as usize * self.queues + q];
        if pause {
            if *since == NEVER {
                *since = now;
            }
            None
        } else if *since == NEVER {
            Some(0)
        } else {
            let d = now - *since;
            *since = NEVER;
            Some(d)
        }
    }

    /// The pauses still held at `until` (the end of the run): (port, how long so far), one per (port, queue).
    pub fn open_pauses(&self, until: Ps) -> impl Iterator<Item = (u32, Ps)> + '_ {
        let k = self.queues;
        self.since
            .iter()
            .enumerate()
            .filter(|(_, &t)| t != NEVER)
            .map(move |(i, &t)| ((i / k) as u32, until.saturating_sub(t)))
    }
}

/// For every egress port of a switch, the ports into that switch that feed it (see the module docs): port u
/// (from node N into switch S) feeds S's egress port e (towards node M) when a packet that N sends to S can
/// leave S by e: for some destination host d, N is a host other than d or a switch with S among its next hops
/// towards d, and M is among S's next hops towards d. Destinations are taken one per edge switch (a switch
/// other than d's edge switch routes towards d as towards that switch), plus each host at S itself. As
/// adjacency lists (offsets per port, then the feeding ports ascending).
fn feeders<H: Header>(net: &Network<H>) -> (Vec<u32>, Vec<u32>) {
    let n = net.ports.len();
    let hosts = net.hosts;
    // one host per edge switch, as a representative destination
    let mut reps: Vec<u32> = Vec::new();
    let mut seen = vec![false; net.nodes.len()];
    for h in 0..hosts {
        let e = net.ports[net.host_port[h as usize] as usize].peer as usize;
        if !seen[e] {
            seen[e] = true;
            reps.push(h);
        }
    }
    // ports into each node
    let mut into: Vec<Vec<u32>> = vec![Vec::new(); net.nodes.len()];
    for (i, p) in net.ports.iter().enumerate() {
        into[p.peer as usize].push(i as u32);
    }
    let mut lists: Vec<Vec<u32>> = vec![Vec::new(); n];
    for s in hosts..net.nodes.len() as u32 {
        let mut dests: Vec<u32> = reps.clone();
        // the hosts attached to s (its ports facing hosts), each its own destination
        dests.extend(net.nodes[s as usize].ports.iter().map(|&p| net.ports[p as usize].peer).filter(|&m| m < hosts));
        for d in dests {
            let outs = net.candidates(s, d);
            for &u in &into[s as usize] {
                let from = net.ports[u as usize].owner;
                let feeds = if from < hosts {
                    from != d
                } else {
                    from != net.ports[net.host_port[d as usize] as usize].peer
                        && net.candidates(from, d).iter().any(|&c| net.ports[c as usize].peer == s)
                };
                if feeds {
                    for &e in outs {
                        lists[e as usize].push(u);
                    }
                }
            }
        }
    }
    let mut start = Vec::with_capacity(n + 1);
    let mut ports = Vec::new();
    start.push(0);
    for mut l in lists {
        l.sort_unstable();
        l.dedup();
        ports.extend_from_slice(&l);
        start.push(ports.len() as u32);
    }
    (start, ports)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    fn leaf_spine() -> (Config, Network) {
        let cfg = Config::from_json(
            r#"{"topology": {"kind": "leaf_spine", "leaves": 3, "hosts_per_leaf": 2, "spines": 2},
                "switch": {"pfc": true, "queues": 2}}"#,
        )
        .unwrap();
        let net = Network::build(&cfg, 1);
        (cfg, net)
    }

    fn port(net: &Network, from: u32, to: u32) -> u32 {
        net.ports.iter().position(|p| p.owner == from && p.peer == to).unwrap() as u32
    }

    /// Feeding follows the routes: a leaf's port to a host is fed by its other host and every spine; its uplink
    /// only by its own hosts; a spine's port down to a leaf by the other leaves, not by that leaf.
    #[test]
    fn feeders_follow_up_down_routes() {
        let (cfg, mut net) = leaf_spine();
        let pfc = Pfc::new(&cfg, &mut net);
        // hosts 0-5, leaves 6-8, spines 9-10; host h on leaf 6 + h / 2
        let f = |from, to| {
            let mut v: Vec<(u32, u32)> =
                pfc.feeders(port(&net, from, to)).iter().map(|&u| (net.ports[u as usize].owner, to)).collect();
            v.sort();
            v.into_iter().map(|x| x.0).collect::<Vec<u32>>()
        };
        assert_eq!(f(6, 0), vec![1, 9, 10]);
        assert_eq!(f(6, 9), vec![0, 1]);
        assert_eq!(f(9, 6), vec![7, 8]);
        // hosts' ports are never watched, switches' are
        assert!(!net.ports[net.host_port[0] as usize].pfc_watch);
        assert!(net.ports[port(&net, 9, 6) as usize].pfc_watch);
    }

    /// Hysteresis and counting: a second congested queue fed by the same port pauses nothing new, and the
    /// resume comes when the last of them falls below the resume threshold.
    #[test]
    fn pause_once_resume_when_the_last_queue_drains() {
        let (cfg, mut net) = leaf_spine();
        let mut pfc = Pfc::new(&cfg, &mut net);
        let (a, b) = (port(&net, 6, 0), port(&net, 6, 9)); // both fed by host 1
        let nic1 = net.host_port[1];
        let mut out = Vec::new();
        pfc.pushed(a, 1, 214, &mut out);
        assert!(out.is_empty());
        pfc.pushed(a, 0, 215, &mut out); // queue 0 is not protected by default
        assert!(out.is_empty());
        pfc.pushed(a, 1, 215, &mut out);
        assert!(out.contains(&nic1) && out.len() == 3, "{out:?}");
        out.clear();
        pfc.pushed(b, 1, 216, &mut out);
        assert_eq!(out, vec![net.host_port[0]], "host 1 is paused already; host 0 feeds only the uplink");
        out.clear();
        pfc.popped(a, 1, 205, &mut out);
        assert!(out.is_empty(), "205 is not below the resume threshold");
        pfc.popped(a, 1, 204, &mut out);
        assert!(!out.contains(&nic1) && out.len() == 2, "{out:?}");
        out.clear();
        pfc.popped(b, 1, 0, &mut out);
        let mut got = out.clone();
        got.sort();
        assert_eq!(got, vec![net.host_port[0], nic1]);
    }

    /// "next_queue" mode: the same thresholds and hysteresis, per queue, pausing no upstream port; a resume
    /// lists every port feeding the queue (to be woken).
    #[test]
    fn next_queue_mode_keeps_the_state_and_lists_the_feeders_on_resume() {
        let cfg = Config::from_json(
            r#"{"topology": {"kind": "leaf_spine", "leaves": 3, "hosts_per_leaf": 2, "spines": 2},
                "switch": {"pfc": true, "pfc_mode": "next_queue", "queues": 2}}"#,
        )
        .unwrap();
        let mut net: Network = Network::build(&cfg, 1);
        let mut pfc = Pfc::new(&cfg, &mut net);
        assert!(pfc.next_queue);
        // ports into a switch are gated (their protected queue 1), ports to hosts are not
        assert_eq!(net.ports[net.host_port[0] as usize].paused(), 0b10);
        assert_eq!(net.ports[port(&net, 6, 0) as usize].paused(), 0);
        assert_eq!(net.ports[port(&net, 6, 9) as usize].paused(), 0b10);
        let a = port(&net, 6, 0);
        let mut out = Vec::new();
        pfc.pushed(a, 1, 215, &mut out);
        assert!(out.is_empty());
        assert_eq!(pfc.congested(a), 0b10);
        pfc.popped(a, 1, 205, &mut out);
        assert_eq!(pfc.congested(a), 0b10, "205 is not below the resume threshold");
        pfc.popped(a, 1, 204, &mut out);
        assert_eq!(pfc.congested(a), 0);
        assert_eq!(out, pfc.feeders(a).to_vec());
    }

    #[test]
    fn paused_time_and_frames_in_order() {
        let (cfg, mut net) = leaf_spine();
        let mut pfc = Pfc::new(&cfg, &mut net);
        assert!(pfc.send(3, Frame { at: 10, queue: 1, pause: true }));
        assert!(!pfc.send(3, Frame { at: 30, queue: 1, pause: false }));
        assert_eq!(pfc.take_frame(3), (Frame { at: 10, queue: 1, pause: true }, Some(30)));
        assert_eq!(pfc.apply(3, 1, true, 10), None);
        assert_eq!(pfc.open_pauses(25).collect::<Vec<_>>(), vec![(3, 15)]);
        assert_eq!(pfc.take_frame(3).1, None);
        assert_eq!(pfc.apply(3, 1, false, 30), Some(20));
        assert_eq!(pfc.open_pauses(40).count(), 0);
    }
}
