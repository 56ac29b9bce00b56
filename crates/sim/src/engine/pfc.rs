//! The run loop's side of Priority Flow Control (the model is in `net::pfc`): a switch port's pushes and pops
//! of a protected queue may pause or release the ports feeding it; PAUSE and RESUME frames travel to those
//! ports as events (`Event::Timer` past the flow ids, see `Sim::pfc_base`), and a port that receives a RESUME
//! starts sending again. All of it is cold: a run without PFC never calls into this file.
//!
//! Two-thread runs (`engine::parallel`): the switches' side keeps the switches' queues and so sends every frame;
//! a frame for a host's NIC port crosses to the hosts' side as a message ([`parallel::PFC_FRAME`]), like a
//! packet. It arrives no earlier than the link's propagation delay after it was sent, which is at least the
//! lookahead into the hosts' side, so the two sides process the same frame events as one thread does.

use super::family::Family;
use super::parallel;
use super::queue::Event;
use super::Sim;
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
