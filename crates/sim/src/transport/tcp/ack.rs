//! The sender's input: ACK processing, SACK scoreboard and loss recovery (RFC 5681, 6675, NewReno), the
//! retransmission timer (RFC 6298), DCTCP's and L2DCT's window cuts, and QCLIMB's priority-detected losses.

use super::{round_ps, Conn, Outcome, Recovery, TcpParams, SYN_SEQ};
use crate::net::packet::{flags, since, Packet, NO_SACK};
use crate::units::{Ps, NEVER};

impl Conn {
    /// Mark un-SACKed segments below `upto` lost (never below `snd_una`, never twice).
    fn mark_lost_upto(&mut self, upto: u32) {
        self.board.mark_lost_upto(&mut self.tally, &mut self.marks, self.snd_una, upto);
    }

    fn rtt_sample(&mut self, p: &TcpParams, rtt: Ps) {
        let r = rtt as f64;
        if !self.have_rtt {
            self.srtt = r;
            self.rttvar = r / 2.0;
            self.have_rtt = true;
        } else {
            self.rttvar = 0.75 * self.rttvar + 0.25 * (self.srtt - r).abs();
            self.srtt = 0.875 * self.srtt + 0.125 * r;
        }
        let rto = round_ps(self.srtt + 4.0 * self.rttvar);
        self.rto = rto.clamp(p.rto_min, p.rto_max);
    }

    /// Sender side: an ACK arrived. (Always inlined: with several families calling it the compiler stopped
    /// inlining it into the TCP family's run loop, which cost 6% more instructions per run.)
    #[inline(always)]
    pub fn on_ack(&mut self, p: &TcpParams, now: Ps, ack: &Packet, out: &mut Vec<Packet>) -> Outcome {
        let mut outcome = Outcome::default();
        if self.sender_done() {
            return outcome;
        }
        if ack.seq == SYN_SEQ {
            // a SYN-ACK: the connection is open (a late copy, for a retransmitted SYN, changes nothing)
            if !self.established {
                self.established = true;
                if ack.flags & flags::RETX == 0 {
                    self.rtt_sample(p, since(now, ack.ts));
                }
                self.rto_deadline = NEVER;
                self.start(p, now, out);
            }
            return outcome;
        }
        if !self.established {
            return outcome;
        }
        let cum = ack.seq.min(self.n_segs);
        let ece = ack.flags & flags::ECE != 0;
        if self.probing {
            // An ACK is back. If it acknowledges data the packets were trapped, not lost: carry on (the held
            // retransmissions are dropped). If not, they were lost: release the retransmissions now.
            self.probing = false;
            self.consecutive_timeouts = 0;
            if cum <= self.snd_una {
                self.mark_all_outstanding_lost();
                self.send_more(p, now, out);
                self.rto_deadline = now + self.rto;
            }
        }

        // Karn: only segments sent once give RTT samples; a valid sample also ends the back-off.
        if ack.flags & flags::RETX == 0 {
            self.rtt_sample(p, since(now, ack.ts));
        }

        // SACK information: one segment above the cumulative ACK.
        let mut new_sack = false;
        // (ACKs may arrive out of order under spraying: a block below snd_una is old news)
        if ack.sack != NO_SACK && ack.sack >= cum.max(self.snd_una) && ack.sack < self.snd_nxt {
            new_sack = self.board.sack(&mut self.tally, &mut self.marks, ack.sack);
        }

        // DCTCP: every ACK stands for one delivered segment; a delayed ACK for the segments it acknowledges
        if p.dctcp {
            let n = if p.delack_segments > 1 { cum.saturating_sub(self.snd_una).max(1) } else { 1 };
            self.win_acks += n;
            if ece {
                self.win_marks += n;
            }
        }

        let advanced = cum > self.snd_una;
        if advanced {
            let newly = self.board.ack_upto(&mut self.tally, self.snd_una, cum);
            if self.avail_segs < self.n_segs {
                // the application's writes up to now, under the buffer's bound before this ACK moves it
                self.app_advance(p, now);
            }
            self.snd_una = cum;
            let delivered = newly;
            self.dupacks = 0;
            self.consecutive_timeouts = 0;
            let was_fast = self.recovery == Some(Recovery::Fast);
            if self.snd_nxt < self.snd_una {
                self.snd_nxt = self.snd_una;
            }
            match self.recovery {
                Some(_) if cum >= self.recover => {
                    if self.recovery == Some(Recovery::Fast) && p.loss_cuts_window {
                        self.cwnd = self.ssthresh;
                    }
                    self.recovery = None;
                }
                Some(Recovery::Fast) => {
                    // partial ACK: the new first hole is lost (NewReno), if SACKs show data beyond it
                    if cum < self.marks.fack
                        && !self.board.is_sacked(cum)
                        && self.board.mark_lost(&mut self.tally, cum)
                    {
                        self.marks.lost_upto = self.marks.lost_upto.max(cum + 1);
                    }
                }
                _ => {}
            }
            // no growth during fast recovery, nor on the ACK that ends it
            if !was_fast {
                self.grow(p, delivered.max(1));
            }
            self.rto_deadline = if self.snd_una < self.snd_nxt { now + self.rto } else { NEVER };
        } else if new_sack && self.snd_una < self.snd_nxt && ack.flags & (flags::QC_UPDATE | flags::QC_RETX) == 0 {
            // (QCLIMB's customized ACKs for reordered data are not duplicate ACKs)
            self.dupacks += 1;
            self.grow_on_sack(p);
        }
        let qc = ack.flags & (flags::QC_RETX | flags::QC_UPDATE);
        if qc == flags::QC_RETX && !self.sender_done() {
            self.priority_detected_loss(p, now, cum, out);
        } else if qc == flags::QC_GAP && new_sack && !self.sender_done() {
            self.priority_detected_gap(ack.sack);
        }

        if self.sender_done() {
            self.rto_deadline = NEVER;
            outcome.sender_done = true;
            self.release();
            return outcome;
        }

        // DCTCP window bookkeeping: alpha once per window of data (the data outstanding when the window
        // began, new window starting after this ACK's transmissions); a cut at most once per window.
        let mut new_window = false;
        if p.dctcp {
            if self.snd_una >= self.win_end && self.win_acks > 0 {
                let f = self.win_marks as f64 / self.win_acks as f64;
                self.alpha = (1.0 - p.g) * self.alpha + p.g * f;
                self.win_acks = 0;
                self.win_marks = 0;
                new_window = true;
            }
            if ece && self.recovery.is_none() && self.snd_una >= self.cut_end {
                // L2DCT: penalty alpha^w_c instead of alpha
                let b = match p.l2dct {
                    Some(l) => self.alpha.powf(l.weight(self.bytes_sent_hwm(p))),
                    None => self.alpha,
                };
                self.cwnd = (self.cwnd * (1.0 - b / 2.0)).max(1.0);
                self.ssthresh = self.cwnd;
                self.cut_end = self.snd_nxt;
                self.counters.ecn_cuts += 1;
            }
        }

        // Loss detection and recovery (none from duplicate ACKs or SACKs when `dupack_threshold` is 0: the
        // timer alone finds losses, as in the ns-2 TCP of the pFabric and PIAS simulations).
        let thresh = p.dupack_threshold;
        if thresh > 0 && self.recovery.is_some() {
            if self.marks.fack > thresh {
                self.mark_lost_upto(self.marks.fack - thresh);
            }
        } else if thresh > 0 && self.dupacks >= thresh {
            if self.snd_una < self.app.rise_upto {
                // RAX: the priority rose; the duplicate ACKs may come from reordering, not loss
                if self.dupacks == thresh {
                    self.counters.reorderings += 1;
                }
            } else {
                self.enter_fast_recovery(p, now, out);
            }
        }
        self.send_more(p, now, out);
        if new_window {
            self.win_end = self.snd_nxt;
        }
        outcome
    }

    /// QCLIMB (section 3.2.3): the receiver saw a gap with the same priority on both sides: the hole at the
    /// cumulative ACK is lost. Retransmit it at once (a later hole only on a later, higher cumulative ACK) and
    /// halve the window, at most once per window of data (section 4.1, rate control).
    fn priority_detected_loss(&mut self, p: &TcpParams, now: Ps, hole: u32, out: &mut Vec<Packet>) {
        if hole >= self.snd_nxt || hole + 1 <= self.prio_retx_upto || self.board.is_sacked(hole) {
            return;
        }
        self.prio_retx_upto = hole + 1;
        if p.qclimb_every_gap && (self.board.is_lost(hole) || self.board.is_retx(hole)) {
            return; // already reported as the gap below a SACKed segment
        }
        self.counters.priority_losses += 1;
        if self.board.mark_lost(&mut self.tally, hole) {
            self.marks.lost_upto = self.marks.lost_upto.max(hole + 1);
        }
        if !self.board.is_retx(hole) {
            self.send_segment(p, hole, now, true, out);
        }
        self.halve_for_priority_loss();
    }

    /// QCLIMB's rate control on a priority-detected loss (section 4.1): halve the window, at most once per
    /// window of data, and no DCTCP cut on top of it in that window.
    fn halve_for_priority_loss(&mut self) {
        if self.snd_una >= self.prio_cut_end {
            self.ssthresh = (self.cwnd / 2.0).max(2.0);
            self.cwnd = self.ssthresh;
            self.prio_cut_end = self.snd_nxt;
            self.cut_end = self.snd_nxt;
        }
    }

    /// QCLIMB, `every_gap` repair: the receiver saw the same priority on both sides of the gap just below
    /// SACKed segment `s`: every un-SACKed segment between the SACKed (or acknowledged) one below it and `s` is
    /// lost. Mark them lost; `send_more` retransmits them before new data, as the window allows. The window is
    /// halved as for a loss at the cumulative ACK (at most once per window of data).
    fn priority_detected_gap(&mut self, s: u32) {
        let mut h = s;
        while h > self.snd_una && !self.board.is_sacked(h - 1) {
            h -= 1;
        }
        if h == s {
            return;
        }
        for seg in h..s {
            if !self.board.is_retx(seg) && self.board.mark_lost(&mut self.tally, seg) {
                self.counters.priority_losses += 1;
            }
        }
        self.marks.lost_upto = self.marks.lost_upto.max(s);
        self.marks.retx_ptr = self.marks.retx_ptr.min(h);
        self.halve_for_priority_loss();
    }

    fn grow(&mut self, p: &TcpParams, segs: u32) {
        if self.cwnd < self.ssthresh {
            self.cwnd += segs as f64;
        } else {
            let w = p.l2dct.map_or(1.0, |l| l.increase(self.bytes_sent_hwm(p)));
            self.cwnd += w * segs as f64 / self.cwnd;
        }
        self.cwnd = self.cwnd.min(p.max_cwnd);
    }

    /// Bytes of the flow sent so far (highest new segment), for L2DCT's weight.
    #[inline]
    fn bytes_sent_hwm(&self, p: &TcpParams) -> u64 {
        (self.snd_nxt as u64 * p.mss as u64).min(self.size)
    }

    /// A SACK of new data without cumulative progress: the window opens only through `pipe`.
    #[inline]
    fn grow_on_sack(&mut self, _p: &TcpParams) {}

    fn enter_fast_recovery(&mut self, p: &TcpParams, now: Ps, out: &mut Vec<Packet>) {
        self.counters.fast_recoveries += 1;
        if p.loss_cuts_window {
            self.ssthresh = (self.cwnd / 2.0).max(2.0);
            self.cwnd = self.ssthresh;
        }
        self.recovery = Some(Recovery::Fast);
        self.recover = self.snd_nxt;
        self.marks.retx_ptr = self.snd_una;
        self.marks.lost_upto = self.marks.lost_upto.max(self.snd_una);
        // the first hole is lost (that is what the duplicate ACKs say), and every hole with enough SACKed
        // segments above it
        let upto = self.marks.fack.saturating_sub(p.dupack_threshold).max(self.snd_una + 1);
        self.mark_lost_upto(upto);
        // fast retransmit, whatever the window says
        if let Some(s) = self.next_lost() {
            self.send_segment(p, s, now, true, out);
            self.marks.retx_ptr = s + 1;
        }
        self.cut_end = self.snd_nxt; // no DCTCP cut on top of the loss cut in this window
    }

    /// The retransmission timer fired (the engine checked `now >= rto_deadline`).
    pub fn on_timeout(&mut self, p: &TcpParams, now: Ps, out: &mut Vec<Packet>) {
        if self.stopped {
            // held while stopped: `go` restarts the timer
            self.rto_deadline = NEVER;
            return;
        }
        if !self.established {
            // the SYN or its SYN-ACK was lost: send the SYN again, backing off
            self.counters.timeouts += 1;
            self.rto = (self.rto.saturating_mul(2)).min(p.rto_max);
            out.push(self.syn_packet(p, now, true));
            self.rto_deadline = now + self.rto;
            return;
        }
        if self.sender_done() || self.snd_una == self.snd_nxt {
            self.rto_deadline = NEVER;
            return;
        }
        self.counters.timeouts += 1;
        self.consecutive_timeouts += 1;
        if p.pias_per_connection && p.pias_timeout_reset > 0 && self.consecutive_timeouts % p.pias_timeout_reset == 0 {
            // the PIAS kernel module's aging: after so many consecutive timeouts the count restarts from 0
            self.pias_base = 0;
            self.pias_reset_at = (self.snd_nxt as u64 * p.mss as u64).min(self.size);
        }
        if p.probe_after > 0 && self.consecutive_timeouts >= p.probe_after {
            // Probe mode: the packets may be trapped behind higher priorities rather than lost; hold the
            // retransmissions and ask the receiver with a probe, once per RTO (no further back-off).
            // pFabric (§4.2): after several consecutive timeouts, a minimum-size packet (header and one byte)
            // once per timeout instead of retransmissions, and slow start again once an ACK returns (`on_ack`:
            // window 1, the one the last timeout left). The probe carries its flow's remaining size like the
            // segment it stands for, so a long flow's probe is the least urgent packet wherever it waits and
            // stays in a busy queue; it used to cost other flows their packets because a full rank queue
            // evicted only that 41 B probe, which could not make room (see `net::rank_queue`).
            self.probing = true;
            self.counters.probes += 1;
            out.push(self.probe_packet(p, now));
            self.rto_deadline = now + self.rto;
            return;
        }
        self.ssthresh = (self.cwnd / 2.0).max(2.0);
        self.cwnd = 1.0;
        self.dupacks = 0;
        self.mark_all_outstanding_lost();
        self.cut_end = self.snd_nxt;
        self.rto = (self.rto.saturating_mul(2)).min(p.rto_max);
        self.rto_deadline = NEVER;
        self.send_more(p, now, out);
        if self.rto_deadline == NEVER {
            self.rto_deadline = now + self.rto;
        }
    }

    /// After a timeout (or a probe that found the data dropped): every outstanding un-SACKed segment is lost
    /// and earlier retransmissions are forgotten; recover by slow start through them.
    fn mark_all_outstanding_lost(&mut self) {
        self.recovery = Some(Recovery::Timeout);
        self.recover = self.snd_nxt;
        self.board.mark_all_lost(&mut self.tally, &mut self.marks, self.snd_una, self.snd_nxt);
    }
}
