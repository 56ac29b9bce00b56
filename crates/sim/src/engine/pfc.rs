//! The run loop's side of Priority Flow Control (the model is in `net::pfc`): a switch port's pushes and pops
//! of a protected queue may pause or release the ports feeding it; PAUSE and RESUME frames travel to those
//! ports as events (`Event::Timer` past the flow ids, see `Sim::pfc_base`), and a port that receives a RESUME
//! starts sending again. All of it is cold: a run without PFC never calls into this file.
//!
//! In `switch.pfc_mode = "next_queue"` (see `net::pfc`) there are no frames: every port picks its next packet
//! with [`Sim::pfc_pop`], which skips the packets bound for a paused queue at the next switch, and a queue that
//! resumes wakes the ports feeding it. Such runs are on one thread (see `run_family`).
//!
//! Two-thread runs (`engine::parallel`): the switches' side keeps the switches' queues and so sends every frame;
//! a frame for a host's NIC port crosses to the hosts' side as a message ([`parallel::PFC_FRAME`]), like a
//! packet. It arrives no earlier than the link's propagation delay after it was sent, which is at least the
//! lookahead into the hosts' side, so the two sides process the same frame events as one thread does.

use super::family::Family;
use super::parallel;
use super::queue::Event;
use super::Sim;
use crate::net::flow_hash;
use crate::net::packet::Packet;
use crate::net::pfc::Frame;
use crate::units::Ps;

impl<F: Family> Sim<'_, F> {
    /// A packet joined a queue of watched switch port `port`: pause the upstream ports it congests. (Every
    /// protected queue is looked at, not just the packet's: the engine's hot path then keeps no queue index
    /// alive for this call; only the packet's queue can have changed.)
    #[cold]
    #[inline(never)]
    pub(super) fn pfc_pushed(&mut self, port: u32) {
        self.pfc_check(port, true);
    }

    /// A packet left a queue of watched switch port `port`: release the upstream ports no longer congested.
    #[cold]
    #[inline(never)]
    pub(super) fn pfc_popped(&mut self, port: u32) {
        self.pfc_check(port, false);
    }

    /// [`Sim::pfc_pushed`] (`pushed`) or [`Sim::pfc_popped`].
    fn pfc_check(&mut self, port: u32, pushed: bool) {
        let pfc = self.pfc.as_mut().expect("a watched port in a run with PFC");
        if pfc.next_queue {
            return self.next_queue_check(port, pushed);
        }
        let mut out = std::mem::take(&mut pfc.scratch);
        let mut queues = if pushed { pfc.protected() } else { pfc.congested(port) };
        while queues != 0 {
            let q = queues.trailing_zeros() as usize;
            queues &= queues - 1;
            let len = self.net.ports[port as usize].queue_len(q);
            let pfc = self.pfc.as_mut().expect("PFC state");
            if pushed {
                pfc.pushed(port, q, len, &mut out);
            } else {
                pfc.popped(port, q, len, &mut out);
            }
            for &u in &out {
                self.send_frame(u, q, pushed);
            }
            out.clear();
        }
        self.pfc.as_mut().expect("PFC state").scratch = out;
    }

    /// Send a PAUSE (`pause`) or RESUME for queue `q` to upstream port `u`, back over its link: it arrives after
    /// the frame's serialization at the link's rate and the link's propagation delay.
    fn send_frame(&mut self, u: u32, q: usize, pause: bool) {
        if pause {
            self.stats.pfc_pause_frames += 1;
        } else {
            self.stats.pfc_resume_frames += 1;
        }
        let pfc = self.pfc.as_ref().expect("PFC state");
        let p = &self.net.ports[u as usize];
        let at = self.now + p.tx_time(pfc.frame_bytes) + p.delay_ps;
        let frame = Frame { at, queue: q as u8, pause };
        if self.pfc_frames_cross && self.net.is_host(p.owner) {
            let pkt = Packet { seq: q as u32, flags: pause as u8, ..Packet::default() };
            self.outbox.push(parallel::Msg { port: u | parallel::PFC_FRAME, at, pkt });
            return;
        }
        self.pfc_frame_in_flight(u, frame);
    }

    /// A frame is on its way to port `u` (sent here, or handed over by the other side of a two-thread run).
    pub(super) fn pfc_frame_in_flight(&mut self, u: u32, frame: Frame) {
        let pfc = self.pfc.as_mut().expect("a PFC frame in a run without PFC");
        if pfc.send(u, frame) {
            let id = self.pfc_base + u;
            self.events.push(frame.at, Event::Timer(id));
        }
    }

    /// A frame for a host's NIC port handed over by the switches' side (see [`Sim::send_frame`]).
    pub(super) fn pfc_receive(&mut self, u: u32, at: Ps, pkt: &Packet<F::Hdr>) {
        self.pfc_frame_in_flight(u, Frame { at, queue: pkt.seq as u8, pause: pkt.flags != 0 });
    }

    /// The frame at the head of port `u`'s link arrives: the port pauses or resumes the queue; a resumed port
    /// with packets ready and no transmitter event pending gets one (now, or when its current packet ends).
    #[cold]
    #[inline(never)]
    pub(super) fn on_pfc_frame(&mut self, u: u32) {
        let now = self.now;
        let pfc = self.pfc.as_mut().expect("a PFC frame in a run without PFC");
        let (frame, next) = pfc.take_frame(u);
        debug_assert_eq!(frame.at, now);
        let q = frame.queue as usize;
        let held = pfc.apply(u, q, frame.pause, now);
        if let Some(at) = next {
            self.events.push(at, Event::Timer(self.pfc_base + u));
        }
        if let Some(d) = held {
            let t = self.net.port_tier[u as usize] as usize;
            self.stats.pfc_paused_ps_per_tier[t].1 += d;
        }
        let p = &mut self.net.ports[u as usize];
        p.set_paused(q, frame.pause);
        if !frame.pause && !p.tx_event_pending && p.has_ready() {
            p.tx_event_pending = true;
            let at = p.busy_until.max(now);
            self.events.push(at, Event::TxFree(u));
        }
    }

    /// [`Sim::pfc_check`] in "next_queue" mode: no frames. A queue that becomes paused only starts its paused
    /// time (counted at its own port's tier); one that resumes ends it and wakes the ports feeding it that hold
    /// packets of that priority and have no transmitter event pending (they may be idle with packets bound for
    /// it): their transmitter looks again now, or when its current packet ends.
    fn next_queue_check(&mut self, port: u32, pushed: bool) {
        let now = self.now;
        let pfc = self.pfc.as_mut().expect("PFC state");
        let mut out = std::mem::take(&mut pfc.scratch);
        let mut queues = if pushed { pfc.protected() } else { pfc.congested(port) };
        while queues != 0 {
            let q = queues.trailing_zeros() as usize;
            queues &= queues - 1;
            let len = self.net.ports[port as usize].queue_len(q);
            let pfc = self.pfc.as_mut().expect("PFC state");
            let was = pfc.congested(port) >> q & 1 != 0;
            if pushed {
                pfc.pushed(port, q, len, &mut out);
            } else {
                pfc.popped(port, q, len, &mut out);
            }
            if was == (pfc.congested(port) >> q & 1 != 0) {
                continue;
            }
            if let Some(d) = pfc.apply(port, q, pushed, now) {
                let t = self.net.port_tier[port as usize] as usize;
                self.stats.pfc_paused_ps_per_tier[t].1 += d;
            }
            for &u in &out {
                let p = &mut self.net.ports[u as usize];
                if !p.tx_event_pending && p.nonempty() >> q & 1 != 0 {
                    p.tx_event_pending = true;
                    let at = p.busy_until.max(now);
                    self.events.push(at, Event::TxFree(u));
                }
            }
            out.clear();
        }
        self.pfc.as_mut().expect("PFC state").scratch = out;
    }

    /// "next_queue" mode: take port `port`'s next packet to serve, the strict-priority scheduler's choice
    /// among the packets that may go. A queue that is not protected, or a port whose far end is a host, serves
    /// its head; a protected queue of a port into a switch serves its first packet (FIFO order) whose queue at
    /// that switch (the egress port the switch will route it to, and the packet's priority) is not paused,
    /// and is skipped when every packet in it is bound for a paused queue. None when nothing may go.
    #[cold]
    #[inline(never)]
    pub(super) fn pfc_pop(&mut self, port: u32) -> Option<Packet<F::Hdr>> {
        let pfc = self.pfc.as_ref().expect("PFC state");
        let p = &self.net.ports[port as usize];
        let node = p.peer;
        let gated = if self.net.is_host(node) { 0 } else { pfc.protected() };
        let mut ready = p.nonempty();
        while ready != 0 {
            let q = ready.trailing_zeros() as usize;
            ready &= ready - 1;
            let pick = if gated >> q & 1 == 0 {
                Some(0)
            } else {
                p.packets(q).position(|pkt| {
                    let e = self.next_egress(node, pkt) as usize;
                    pfc.congested(e as u32) >> self.net.ports[e].queue_of(pkt.prio) & 1 == 0
                })
            };
            if let Some(i) = pick {
                return Some(self.net.ports[port as usize].take(q, i));
            }
        }
        None
    }

    /// The egress port switch `node` will send `pkt` out of when it arrives there: what [`Sim::on_arrive`]
    /// will decide (the family's route, else ECMP; `Config::validate` refuses "next_queue" with spraying).
    fn next_egress(&self, node: u32, pkt: &Packet<F::Hdr>) -> u32 {
        let routed = if F::ROUTED { F::next_port(&self.net, node, pkt) } else { None };
        routed.unwrap_or_else(|| self.net.ecmp_port(node, pkt.dst, flow_hash(pkt.flow, pkt.is_ack())))
    }

    /// At the end of the run: count the pauses still held up to the last event.
    pub(super) fn pfc_close_pauses(&mut self) {
        if let Some(pfc) = &self.pfc {
            add_open_pauses(pfc, &self.net.port_tier, self.now, &mut self.stats.pfc_paused_ps_per_tier);
        }
    }
}

/// Add the pauses `pfc` still holds at `until` to `per_tier` (ports' tiers from `port_tier`).
pub(super) fn add_open_pauses(
    pfc: &crate::net::pfc::Pfc,
    port_tier: &[u8],
    until: Ps,
    per_tier: &mut [(String, u64)],
) {
    for (port, d) in pfc.open_pauses(until) {
        per_tier[port_tier[port as usize] as usize].1 += d;
    }
}
