//! The receiver: in-order and out-of-order segments, the ACKs it returns (delayed ACKs and DCTCP's CE state,
//! the DCTCP paper, section 3.1), and QCLIMB's priority-based loss detection (section 3.2.1).

use super::{Conn, Outcome, TcpParams, SYN_SEQ};
use crate::net::packet::{flags, Packet, NO_SACK};
use crate::units::{Ps, NEVER};

impl Conn {
    /// Receiver side: a data segment arrived. Pushes the ACK into `out`. (Always inlined, as `on_ack`.)
    #[inline(always)]
    pub fn on_data(&mut self, p: &TcpParams, now: Ps, pkt: &Packet, out: &mut Vec<Packet>) -> Outcome {
        let _ = now;
        let mut outcome = Outcome::default();
        let s = pkt.seq;
        let ce = pkt.flags & flags::CE != 0;
        if s == SYN_SEQ {
            // a SYN: answer with a SYN-ACK (again, for a retransmitted SYN)
            out.push(Packet {
                flow: self.flow,
                seq: SYN_SEQ,
                sack: NO_SACK,
                dst: self.src,
                wire: p.ack_bytes as u16,
                prio: p.ack_priority,
                flags: flags::ACK | flags::PROBE | (pkt.flags & flags::RETX),
                ts: pkt.ts,
                hdr: (),
            });
            return outcome;
        }
        if pkt.flags & flags::PROBE != 0 {
            self.flush_delayed_ack();
            // a probe carries no data: acknowledge what is held
            out.push(Packet {
                flow: self.flow,
                seq: self.rcv_nxt,
                sack: NO_SACK,
                dst: self.src,
                wire: p.ack_bytes as u16,
                prio: p.ack_priority,
                flags: flags::ACK | flags::RETX | flags::PROBE,
                ts: pkt.ts,
                hdr: (),
            });
            return outcome;
        }
        if ce {
            self.counters.ecn_marked += 1;
        }
        let mut sack = NO_SACK;
        let mut in_order = false;
        let rcv_before = self.rcv_nxt;
        if s >= self.rcv_nxt && s < self.n_segs && !self.rcvd.get(s) {
            self.rcvd.set(s);
            if self.qclimb_ooo {
                self.rx_prio[s as usize] = pkt.prio;
            }
            if s == self.rcv_nxt {
                let before = self.rcv_nxt;
                self.rcv_nxt = self.rcvd.first_zero_from(s).min(self.n_segs);
                // segments above s that were held out of order are now delivered
                self.ooo_held -= self.rcv_nxt - before - 1;
                if self.rcv_nxt > before + 1 {
                    let mss = p.mss as u64;
                    self.ooo_bytes -= (self.rcv_nxt as u64 * mss).min(self.size) - (before as u64 + 1) * mss;
                }
                if self.rcv_nxt == self.n_segs {
                    outcome.receiver_done = true;
                }
                in_order = self.rcv_nxt == before + 1 && self.ooo_held == 0 && !outcome.receiver_done;
            } else {
                sack = s;
                self.ooo_held += 1;
                self.ooo_bytes += self.payload_bytes(p, pkt) as u64;
                self.counters.ooo_max_segments = self.counters.ooo_max_segments.max(self.ooo_held);
            }
        } else {
            self.counters.duplicate_data += 1;
        }
        if p.delack_segments > 1 && self.delay_ack(p, now, pkt, ce, in_order, rcv_before, out) {
            return outcome;
        }
        let mut f = flags::ACK | (pkt.flags & flags::RETX);
        if self.qclimb_ooo && self.ooo_held > 0 {
            f |= if p.qclimb_every_gap && sack != NO_SACK && self.gap_below_is_loss(sack) {
                flags::QC_GAP
            } else {
                self.qclimb_gap_flag()
            };
        }
        if ce {
            f |= flags::ECE;
        }
        out.push(Packet {
            flow: self.flow,
            seq: self.rcv_nxt,
            sack,
            dst: self.src,
            wire: p.ack_bytes as u16,
            prio: p.ack_priority,
            flags: f,
            ts: pkt.ts,
            hdr: (),
        });
        outcome
    }

    /// Delayed ACKs, for a data segment that just arrived: `true` if its acknowledgement is held back (it is
    /// then owed by a later segment or the delayed-ACK timer). Any other segment first flushes what is owed,
    /// and is acknowledged at once by the caller. A DCTCP receiver whose CE state changes first acknowledges
    /// what it holds with the old state (the DCTCP paper, section 3.1).
    #[allow(clippy::too_many_arguments)]
    fn delay_ack(
        &mut self,
        p: &TcpParams,
        now: Ps,
        pkt: &Packet,
        ce: bool,
        in_order: bool,
        rcv_before: u32,
        out: &mut Vec<Packet>,
    ) -> bool {
        if ce != self.ce_state {
            if self.ack_pending > 0 {
                // the owed segments all lie below this one: acknowledge exactly them, with the old state
                self.push_delayed_ack(p, rcv_before, out);
            }
            self.ce_state = ce;
            if in_order {
                // with the new state, this segment starts a new delayed ACK
                self.owe_ack(p, now, pkt);
                return self.send_owed_if_due(p, out);
            }
            return false;
        }
        if !in_order {
            self.flush_delayed_ack();
            return false;
        }
        self.owe_ack(p, now, pkt);
        self.send_owed_if_due(p, out)
    }

    fn owe_ack(&mut self, p: &TcpParams, now: Ps, pkt: &Packet) {
        if self.ack_pending == 0 {
            self.ack_pending_ts = pkt.ts;
            self.ack_pending_retx = false;
            self.delack_deadline = now + p.delack_timeout;
        }
        self.ack_pending += 1;
        self.ack_pending_retx |= pkt.flags & flags::RETX != 0;
    }

    /// Send the owed ACK once enough segments are owed; `true` either way (the segment is accounted for).
    fn send_owed_if_due(&mut self, p: &TcpParams, out: &mut Vec<Packet>) -> bool {
        if self.ack_pending >= p.delack_segments {
            self.push_delayed_ack(p, self.rcv_nxt, out);
        }
        true
    }

    /// Forget what is owed: the caller's immediate ACK (cumulative) acknowledges it too.
    fn flush_delayed_ack(&mut self) {
        self.ack_pending = 0;
        self.delack_deadline = NEVER;
    }

    fn push_delayed_ack(&mut self, p: &TcpParams, cum: u32, out: &mut Vec<Packet>) {
        let mut f = flags::ACK;
        if self.ack_pending_retx {
            f |= flags::RETX;
        }
        if self.ce_state {
            f |= flags::ECE;
        }
        out.push(Packet {
            flow: self.flow,
            seq: cum,
            sack: NO_SACK,
            dst: self.src,
            wire: p.ack_bytes as u16,
            prio: p.ack_priority,
            flags: f,
            ts: self.ack_pending_ts,
            hdr: (),
        });
        self.ack_pending = 0;
        self.delack_deadline = NEVER;
    }

    /// The delayed-ACK timer fired: acknowledge what is owed.
    pub fn on_delack_timer(&mut self, p: &TcpParams, now: Ps, out: &mut Vec<Packet>) {
        if self.delack_deadline <= now && self.ack_pending > 0 {
            self.push_delayed_ack(p, self.rcv_nxt, out);
        }
        self.delack_deadline = NEVER;
    }

    /// QCLIMB's priority-based loss detection (section 3.2.1): with data held out of order, compare the
    /// priority of the last in-order segment with that of the first held segment. The same priority on both
    /// sides of the gap means the gap is a loss (packets of one priority cross the same queues in order, on one
    /// ECMP path); different priorities mean reordering by the scheduler: only the scoreboard is updated. A
    /// gap before any in-order segment, or at a priority boundary, is left to the timeout, as in the paper.
    fn qclimb_gap_flag(&self) -> u8 {
        if self.rcv_nxt == 0 {
            return flags::QC_UPDATE;
        }
        match self.rcvd.first_one_from(self.rcv_nxt) {
            Some(first) if self.rx_prio[(self.rcv_nxt - 1) as usize] == self.rx_prio[first as usize] => flags::QC_RETX,
            _ => flags::QC_UPDATE,
        }
    }

    /// `every_gap` repair: whether segment `s`, just received out of order, has a gap right below it with the
    /// same priority on both sides (the segment received last below the gap, which may be the last in-order one).
    /// A gap with nothing received below it is left alone, as at the cumulative ACK.
    fn gap_below_is_loss(&self, s: u32) -> bool {
        if s == 0 || self.rcvd.get(s - 1) {
            return false;
        }
        let mut r = s - 1;
        while r >= self.rcv_nxt && !self.rcvd.get(r) {
            if r == 0 {
                return false;
            }
            r -= 1;
        }
        self.rx_prio[r as usize] == self.rx_prio[s as usize]
    }

    pub fn receiver_done(&self) -> bool {
        self.rcv_nxt == self.n_segs
    }

    /// Free the receiver's bitmap once the receiver is done (the sender may still be waiting for ACKs).
    pub fn release_receiver(&mut self) {
        self.rcvd.release();
        self.rx_prio = Vec::new();
    }
}
