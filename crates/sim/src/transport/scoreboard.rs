//! The sender's SACK scoreboard (RFC 6675, section 2-5), shared by TCP (`transport::tcp`) and the explicit-rate
//! family (`transport::rate`): per segment whether it is SACKed, marked lost, or retransmitted since it was
//! marked; counts of those marks at or above the cumulative ACK; and the marking of losses.
//!
//! The state comes in three parts, each a plain struct, so that `tcp::Conn` can keep each part where its cache
//! layout wants it (the counts with the per-ACK window state, the scan positions with the recovery bookkeeping,
//! the bit sets with the other per-flow allocations): [`Tally`], [`Marks`] and the bits, [`Scoreboard`], whose
//! methods take the other two. The callers keep their own policy: when a loss is declared (duplicate ACKs,
//! SACKs above a hole, a partial ACK, a priority gap, a timeout) and when a retransmission may leave.
//!
//! Invariants, for the segments at or above the cumulative ACK: a SACKed segment is neither lost nor
//! retransmitted (a SACK clears both marks); a retransmitted segment is marked lost (only lost segments are
//! retransmitted, and a timeout that forgets the retransmissions marks every un-SACKed segment lost again). So
//! `lost - retx` counts the lost segments still waiting for their retransmission ([`Tally::lost_unsent`]).

use super::bitset::BitSet;

/// Segments at or above the cumulative ACK that are SACKed, marked lost, and retransmitted since they were
/// marked (the last two never SACKed).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[repr(C)]
pub struct Tally {
    pub sacked: u32,
    pub lost: u32,
    pub retx: u32,
}

impl Tally {
    /// Segments in flight by the RFC 6675 estimate: outstanding - SACKed - lost + retransmitted.
    #[inline]
    pub fn pipe(&self, snd_una: u32, snd_nxt: u32) -> u32 {
        (snd_nxt - snd_una) + self.retx - self.sacked - self.lost
    }

    /// Lost segments not retransmitted since they were marked.
    #[inline]
    pub fn lost_unsent(&self) -> u32 {
        self.lost - self.retx
    }
}

/// Where the scoreboard's marking and scanning stand.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[repr(C)]
pub struct Marks {
    /// One past the highest SACKed segment.
    pub fack: u32,
    /// Segments below this have been examined for loss marking.
    pub lost_upto: u32,
    /// Lost segments below this have been retransmitted in the current recovery (the scan for the next one
    /// starts here).
    pub retx_ptr: u32,
}

/// The per-segment marks of one flow's sender: three bits per segment, allocated once per flow.
#[derive(Debug, Clone)]
pub struct Scoreboard {
    sacked: BitSet,
    lost: BitSet,
    retx: BitSet,
}

impl Scoreboard {
    pub fn new(n_segs: u32) -> Self {
        Scoreboard { sacked: BitSet::new(n_segs), lost: BitSet::new(n_segs), retx: BitSet::new(n_segs) }
    }

    /// Free the bits once the sender is done.
    pub fn release(&mut self) {
        self.sacked.release();
        self.lost.release();
        self.retx.release();
    }

    #[inline]
    pub fn is_sacked(&self, s: u32) -> bool {
        self.sacked.get(s)
    }

    #[inline]
    pub fn is_lost(&self, s: u32) -> bool {
        self.lost.get(s)
    }

    #[inline]
    pub fn is_retx(&self, s: u32) -> bool {
        self.retx.get(s)
    }

    /// A SACK block for segment `s`, which the caller found at or above the cumulative ACK and below the next
    /// new segment: `false` if `s` was SACKed already, else it is SACKed now (no longer lost nor counted as
    /// retransmitted) and `fack` moves past it.
    #[inline]
    pub fn sack(&mut self, t: &mut Tally, m: &mut Marks, s: u32) -> bool {
        if self.sacked.get(s) {
            return false;
        }
        self.sacked.set(s);
        t.sacked += 1;
        if self.lost.get(s) {
            self.lost.clear(s);
            t.lost -= 1;
        }
        if self.retx.get(s) {
            self.retx.clear(s);
            t.retx -= 1;
        }
        m.fack = m.fack.max(s + 1);
        true
    }

    /// The cumulative ACK moves from `snd_una` up to `cum`: the segments in between leave the counts. Returns
    /// how many of them were not SACKed before (delivered by this ACK). (Always inlined: TCP's ACK path is one
    /// inlined body, and a call here cost about 1% more instructions per run.)
    #[inline(always)]
    pub fn ack_upto(&mut self, t: &mut Tally, snd_una: u32, cum: u32) -> u32 {
        // With no segment SACKed, marked lost or retransmitted at or above snd_una (the counts count exactly
        // those bits), every newly acknowledged segment is newly delivered: skip the bits.
        let clean = t.sacked == 0 && t.lost == 0 && t.retx == 0;
        debug_assert!(
            !clean || (snd_una..cum).all(|s| !self.sacked.get(s) && !self.lost.get(s) && !self.retx.get(s)),
            "scoreboard counts out of step with its bits"
        );
        let mut newly = if clean { cum - snd_una } else { 0 };
        for s in (if clean { cum } else { snd_una })..cum {
            if self.sacked.get(s) {
                t.sacked -= 1;
            } else {
                newly += 1;
                if self.lost.get(s) {
                    t.lost -= 1;
                }
                if self.retx.get(s) {
                    t.retx -= 1;
                }
            }
        }
        newly
    }

    /// Mark segment `s` lost unless it is already (the caller checked that it is not SACKed): whether it was
    /// marked now. Leaves `lost_upto` to the caller.
    #[inline]
    pub fn mark_lost(&mut self, t: &mut Tally, s: u32) -> bool {
        if self.lost.get(s) {
            return false;
        }
        self.lost.set(s);
        t.lost += 1;
        true
    }

    /// Mark the un-SACKed segments below `upto` lost (never below `snd_una`, never twice: the scan resumes where
    /// the last one stopped).
    pub fn mark_lost_upto(&mut self, t: &mut Tally, m: &mut Marks, snd_una: u32, upto: u32) {
        let mut s = m.lost_upto.max(snd_una);
        while s < upto {
            if !self.sacked.get(s) && !self.lost.get(s) {
                self.lost.set(s);
                t.lost += 1;
            }
            s += 1;
        }
        if upto > m.lost_upto {
            m.lost_upto = upto;
        }
    }

    /// A timeout: every un-SACKed segment in `snd_una..snd_nxt` is lost and the retransmissions are forgotten
    /// (they are to go out again); the scan for lost segments starts over at `snd_una`.
    pub fn mark_all_lost(&mut self, t: &mut Tally, m: &mut Marks, snd_una: u32, snd_nxt: u32) {
        debug_assert!(m.lost_upto <= snd_nxt, "loss marking beyond the segments sent");
        t.lost = 0;
        t.retx = 0;
        for s in snd_una..snd_nxt {
            self.retx.clear(s);
            if self.sacked.get(s) {
                self.lost.clear(s);
            } else {
                self.lost.set(s);
                t.lost += 1;
            }
        }
        m.lost_upto = snd_nxt;
        m.retx_ptr = snd_una;
    }

    /// The next lost segment not retransmitted since, from `retx_ptr` (at least `snd_una`) up to `lost_upto`;
    /// `retx_ptr` is left on it (or at the end of the scan). The caller moves `retx_ptr` past it once it is
    /// sent. A lost segment below `retx_ptr` (one a partial ACK marked after the scan passed it) is not found
    /// until the scan starts over. (The test for no loss at all is inlined, the scan is not.)
    #[inline(always)]
    pub fn next_lost(&self, t: &Tally, m: &mut Marks, snd_una: u32) -> Option<u32> {
        if t.lost == 0 {
            return None;
        }
        self.scan_lost(m, snd_una)
    }

    #[inline(never)]
    fn scan_lost(&self, m: &mut Marks, snd_una: u32) -> Option<u32> {
        m.retx_ptr = m.retx_ptr.max(snd_una);
        while m.retx_ptr < m.lost_upto {
            let s = m.retx_ptr;
            if self.lost.get(s) && !self.retx.get(s) && !self.sacked.get(s) {
                return Some(s);
            }
            m.retx_ptr += 1;
        }
        None
    }

    /// Segment `s` (marked lost) goes out again.
    #[inline]
    pub fn retransmitted(&mut self, t: &mut Tally, s: u32) {
        if !self.retx.get(s) {
            self.retx.set(s);
            t.retx += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sack_clears_the_marks_and_the_cumulative_ack_the_counts() {
        let (mut b, mut t, mut m) = (Scoreboard::new(10), Tally::default(), Marks::default());
        assert!(b.sack(&mut t, &mut m, 5));
        assert!(!b.sack(&mut t, &mut m, 5), "a second SACK of a segment is old news");
        assert_eq!((m.fack, t.sacked), (6, 1));
        // 5, 6, 7 SACKed: with a threshold of 3 every un-SACKed segment below 8 - 3 is lost
        for s in [6, 7] {
            b.sack(&mut t, &mut m, s);
        }
        let upto = m.fack - 3;
        b.mark_lost_upto(&mut t, &mut m, 0, upto);
        assert_eq!((t.lost, m.lost_upto), (5, 5));
        assert_eq!(b.next_lost(&t, &mut m, 0), Some(0));
        b.retransmitted(&mut t, 0);
        m.retx_ptr = 1;
        assert_eq!((t.retx, t.lost_unsent(), t.pipe(0, 8)), (1, 4, 8 + 1 - 3 - 5));
        // the retransmitted segment is SACKed: no longer lost nor retransmitted
        b.sack(&mut t, &mut m, 0);
        assert!(!b.is_lost(0) && !b.is_retx(0));
        assert_eq!((t.sacked, t.lost, t.retx), (4, 4, 0));
        // the cumulative ACK reaches 3: segments 1 and 2 are delivered now, 0 was delivered by its SACK
        assert_eq!(b.ack_upto(&mut t, 0, 3), 2);
        assert_eq!((t.sacked, t.lost, t.retx), (3, 2, 0));
    }

    #[test]
    fn a_timeout_marks_every_unsacked_segment_lost_and_forgets_retransmissions() {
        let (mut b, mut t, mut m) = (Scoreboard::new(8), Tally::default(), Marks::default());
        b.sack(&mut t, &mut m, 3);
        b.mark_lost_upto(&mut t, &mut m, 0, 2);
        b.retransmitted(&mut t, 0);
        m.retx_ptr = 1;
        b.mark_all_lost(&mut t, &mut m, 0, 6);
        assert_eq!((t.sacked, t.lost, t.retx, t.lost_unsent()), (1, 5, 0, 5));
        assert_eq!((m.lost_upto, m.retx_ptr), (6, 0));
        assert_eq!(b.next_lost(&t, &mut m, 0), Some(0));
        assert!(!b.is_lost(3));
    }
}
