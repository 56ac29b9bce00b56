//! The retransmission timer of the TCP family at the flow level (`run.flow_timeouts`, see
//! [`crate::config::RunConfig::flow_timeouts`]): each flow keeps the packet level's RTO estimator (RFC 6298 as
//! `transport::tcp` computes it: the first sample sets SRTT = R and RTTVAR = R / 2, each later one
//! RTTVAR = 3/4 RTTVAR + 1/4 |SRTT - R| and SRTT = 7/8 SRTT + 1/8 R, RTO = SRTT + 4 RTTVAR within
//! [`rto_min`, `rto_max`], `rto_init` before any sample), fed with the flow level's own round trips: the set-up's
//! (header-only packets, no queue: the set-up is not lengthened by the standing queues) and, for each slow-start
//! round, the round's modelled RTT (the base RTT plus the standing queues on its data's and its ACKs' paths, as
//! the round starts), once per segment of the round (the packet level samples every ACK; the flow level's
//! segments of one round share one RTT).
//!
//! The timer restarts at every ACK (RFC 6298, 5.3), so it runs from the last ACK of the round before: that
//! round's ACKs came back over as long as it took to send its window at its rate (the packet level's ACKs return
//! at the rate the window drained; a window that did not bind kept them coming for the whole round), and this
//! round's first segment left as that round's first ACK came back. A round whose modelled RTT exceeds the RTO the
//! flow holds as it starts plus that span times out; a first round (no round before it) when its RTT exceeds the
//! RTO. What the packet level then does, and the model with it:
//! - ssthresh = cwnd / 2 (at least 2 segments), cwnd = 1, every outstanding segment marked lost and the RTO
//!   doubled. The originals were not lost: their ACKs come back at the round's modelled end, each a clean sample
//!   (Karn: they acknowledge segments sent once), so the back-off is undone and the estimator takes the round's
//!   RTT. The model: the round ends when it would have, its samples are taken, and the back-off is not kept.
//! - While those ACKs come back the sender, in slow start from 1 up to ssthresh, retransmits the segments marked
//!   lost ahead of the cumulative ACK (spurious: the receiver holds them; the packet level's timed-out small
//!   flows on the reference fabric retransmit 9 segments each, about their window) and sends new data, so the
//!   next round carries about ssthresh segments of new data and the round's window again as duplicates. The
//!   model: the next round's window is ssthresh, its allowance ssthresh plus the duplicates' bits (which are added
//!   to the bits the flow has to send: they take its share of the path and its time). If the round that timed out
//!   carries the flow's last bits, its duplicates leave after the receiver holds them all: they cost the flow
//!   nothing and are not modelled (nor is the bandwidth they take from others).
//! - From ssthresh the window grows by a segment per round (congestion avoidance), as the packet level's, until
//!   it holds a base RTT's worth at line rate (where every flow's rounds end at the flow level: it takes its
//!   max-min share from then on). Measured on the reference fabric with a 10-packet window and ECMP (8,000 flows,
//!   DCTCP, RTO floor 200 us), a timeout costs the packet level's small flows of three rounds 918 us (1,298 us
//!   against 380 us) and of four 1,650 us; doubling from ssthresh instead cost 508 us and 723 us, and left the small
//!   flows' p99 22% low. Congestion avoidance needs the timer to restart at every ACK: with the timer run from the
//!   round's start instead, a flow in congestion avoidance, dozens of rounds long, fired again whenever the
//!   standing queues (a port's full operating point or nothing) came back after rounds without them had brought
//!   the RTO to its floor (4.4 timeouts per medium flow against the packet level's 0.37, and the medium flows 38%
//!   slow); with it, 0.8.
//!
//! Which schemes: dctcp and l2dct by default (`run.flow_timeouts = "marking"`), tcp too with `"all"`
//! (`config::FlowTimeouts` says why not by default).
//!
//! Assumptions: the queues a round waits behind are the standing-queue model's (`Standing`), fixed for the
//! round; no queue above the operating point, so no timeout once a flow's rounds have ended (its window no longer
//! binds, and its RTO has followed the queues it kept standing); the round trips of one round's segments are
//! equal (the packet level's differ by the queue the window builds behind itself at its bottleneck: not
//! modelled); no loss, so every timeout is spurious, as 99.7% of the packet level's are on the reference fabric
//! with the engine's RTO floor.

use crate::units::{Ps, NEVER};

/// One flow's estimator and what a timeout left it.
#[derive(Clone, Copy, Default)]
struct Est {
    srtt: f64,
    rttvar: f64,
    have: bool,
    rto: Ps,
    /// Set by a timeout in the round under way: the next round's window is ssthresh, and the duplicates' bits.
    cut: bool,
    ssthresh: f64,
    dup: f64,
    /// In congestion avoidance since a timeout: the window grows by a segment per round.
    ca: bool,
    /// When the round under way began sending, and when its window was used up (`NEVER`: not yet, or not at
    /// all: the window did not bind in the round).
    began: Ps,
    used: Ps,
}

/// The flows' retransmission timers (per flow slot).
pub(super) struct Timeouts {
    pub(super) on: bool,
    rto_min: Ps,
    rto_max: Ps,
    rto_init: Ps,
    /// One segment on the wire (bits).
    seg_bits: f64,
    est: Vec<Est>,
}

impl Timeouts {
    pub(super) fn new(on: bool, rto_min: Ps, rto_init: Ps, rto_max: Ps, seg_bits: f64) -> Self {
        Timeouts { on, rto_min, rto_max, rto_init, seg_bits, est: Vec::new() }
    }

    /// Slot `k` holds a new flow; its set-up round trip took `setup` (None: no set-up, no sample).
    pub(super) fn open(&mut self, k: u32, setup: Option<Ps>) {
        if !self.on {
            return;
        }
        let k = k as usize;
        if self.est.len() <= k {
            self.est.resize(k + 1, Est::default());
        }
        self.est[k] = Est { rto: self.rto_init, began: NEVER, used: NEVER, ..Est::default() };
        if let Some(r) = setup {
            self.sample(k, r as f64, 1);
        }
    }

    /// `n` samples of the round trip `r` (ps), as the packet level takes them one ACK at a time.
    fn sample(&mut self, k: usize, r: f64, n: u32) {
        let e = &mut self.est[k];
        for _ in 0..n {
            if !e.have {
                e.srtt = r;
                e.rttvar = r / 2.0;
                e.have = true;
            } else {
                e.rttvar = 0.75 * e.rttvar + 0.25 * (e.srtt - r).abs();
                e.srtt = 0.875 * e.srtt + 0.125 * r;
            }
        }
        if n > 0 {
            let rto = (e.srtt + 4.0 * e.rttvar).round() as Ps;
            e.rto = rto.clamp(self.rto_min, self.rto_max);
        }
    }

    /// Slot `k`'s RTO now.
    #[cfg(test)]
    pub(super) fn rto(&self, k: u32) -> Ps {
        self.est[k as usize].rto
    }

    /// A round starts at `now` with window `win` (bits), `left` bits to send and the modelled round trip `rtt`:
    /// does it time out? If so, the next round's window and the duplicates are set (`next_window`, `take_dup`).
    /// The round's samples are taken either way. Returns the bits the flow has to send in addition (the
    /// duplicates), 0 without a timeout.
    ///
    /// The timer restarts at every ACK (RFC 6298, 5.3), so it runs from the last ACK of the round before, which
    /// comes back as long after that round's first as the round took to send its window (the ACKs return at the
    /// rate the window left at; a window that did not bind kept ACKs coming the whole round). This round's first
    /// segment left as that round's first ACK came back, now; it fires if its round trip exceeds the RTO plus
    /// that span. The first round has no round before it: its timer starts with its first segment.
    pub(super) fn round(&mut self, k: u32, win: f64, left: f64, rtt: Ps, now: Ps) -> (bool, f64) {
        if !self.on {
            return (false, 0.0);
        }
        let ku = k as usize;
        let e = &mut self.est[ku];
        let span = if e.began == NEVER { 0 } else { e.used.min(now).saturating_sub(e.began) };
        (e.began, e.used) = (now, NEVER);
        let fired = rtt.saturating_sub(span) > e.rto;
        let mut extra = 0.0;
        if fired {
            e.cut = true;
            e.ssthresh = (win / 2.0).max(2.0 * self.seg_bits);
            if left > win * (1.0 + 1e-9) {
                e.dup = win;
                extra = win;
            }
        }
        let n = (win.min(left.max(0.0)) / self.seg_bits).ceil().max(1.0) as u32;
        self.sample(ku, rtt as f64, n);
        (fired, extra)
    }

    /// Slot `k`'s round used up its window at `now` (the first time in the round counts).
    pub(super) fn used_up(&mut self, k: u32, now: Ps) {
        if self.on {
            let e = &mut self.est[k as usize];
            if e.used == NEVER {
                e.used = now;
            }
        }
    }

    /// The window of slot `k`'s next round, from `win` (bits) the window of the round that ends: doubled (slow
    /// start), or ssthresh after a timeout (and doubled again from there: see the module's docs).
    pub(super) fn next_window(&mut self, k: u32, win: f64) -> f64 {
        if !self.on {
            return win * 2.0;
        }
        let e = &mut self.est[k as usize];
        if std::mem::take(&mut e.cut) {
            e.ca = true;
            e.ssthresh
        } else if e.ca {
            win + self.seg_bits
        } else {
            win * 2.0
        }
    }

    /// The duplicates slot `k` sends with its next round's new data (bits; taken once).
    pub(super) fn take_dup(&mut self, k: u32) -> f64 {
        if !self.on {
            return 0.0;
        }
        std::mem::take(&mut self.est[k as usize].dup)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const US: Ps = 1_000_000;

    /// The estimator against RFC 6298 worked by hand: a sample of 80 us gives SRTT 80, RTTVAR 40, RTO 240 us;
    /// ten more of 85 us give the values of the recurrence, and the RTO floor binds.
    #[test]
    fn estimator_follows_rfc6298() {
        let mut t = Timeouts::new(true, 200 * US, 200 * US, 1_000_000 * US, 12_000.0);
        t.open(0, Some(80 * US));
        assert_eq!(t.rto(0), 240 * US);
        let (mut srtt, mut var) = (80.0, 40.0);
        for _ in 0..10 {
            var = 0.75 * var + 0.25 * (srtt - 85.0f64).abs();
            srtt = 0.875 * srtt + 0.125 * 85.0;
        }
        let (fired, _) = t.round(0, 10.0 * 12_000.0, 30.0 * 12_000.0, 85 * US, 0);
        assert!(!fired, "85 us < 240 us");
        let want = ((srtt + 4.0 * var) * 1e6).round() as Ps;
        assert!(want < 200 * US);
        assert_eq!(t.rto(0), 200 * US, "the floor binds ({} ps from the samples)", want);
    }

    /// A round of 241 us behind an RTO of 200 us fires; the next window is half the round's, plus the round's
    /// window again as duplicates; then it grows by a segment per round (congestion avoidance).
    #[test]
    fn a_round_past_the_rto_fires_and_halves_the_window() {
        let seg = 12_000.0;
        let mut t = Timeouts::new(true, 200 * US, 200 * US, 1_000_000 * US, seg);
        t.open(0, Some(60 * US)); // RTO 180 us -> the floor, 200 us
        assert_eq!(t.rto(0), 200 * US);
        let (fired, extra) = t.round(0, 20.0 * seg, 50.0 * seg, 241 * US, 0);
        assert!(fired);
        assert_eq!(extra, 20.0 * seg);
        assert_eq!(t.next_window(0, 20.0 * seg), 10.0 * seg);
        assert_eq!(t.take_dup(0), 20.0 * seg);
        assert_eq!(t.take_dup(0), 0.0);
        assert_eq!(t.next_window(0, 10.0 * seg), 11.0 * seg, "congestion avoidance");
        assert_eq!(t.next_window(0, 11.0 * seg), 12.0 * seg);
        // the round's 20 samples of 241 us lifted the RTO above it: the next round does not fire
        assert!(t.rto(0) > 241 * US);
        assert!(!t.round(0, 11.0 * seg, 10.0 * seg, 241 * US, 0).0);
    }

    /// The last round fires without duplicates (they leave after the receiver holds every byte).
    #[test]
    fn the_last_round_fires_without_duplicates() {
        let seg = 12_000.0;
        let mut t = Timeouts::new(true, 200 * US, 200 * US, 1_000_000 * US, seg);
        t.open(0, None); // no set-up: rto_init
        let (fired, extra) = t.round(0, 10.0 * seg, 7.0 * seg, 250 * US, 0);
        assert!(fired && extra == 0.0);
        assert_eq!(t.take_dup(0), 0.0);
    }

    /// The timer restarts at every ACK: a round fires only if its round trip exceeds the RTO by more than the
    /// time the round before took to send its window (over which its ACKs came back); a window that did not
    /// bind kept ACKs coming for the whole round.
    #[test]
    fn the_timer_runs_from_the_last_ack_of_the_round_before() {
        let seg = 12_000.0;
        let mut t = Timeouts::new(true, 200 * US, 200 * US, 1_000_000 * US, seg);
        for k in 0..3 {
            t.open(k, Some(60 * US));
            // the first round at 0: 100 us, no timeout; its samples leave the RTO at the floor
            assert!(!t.round(k, 10.0 * seg, 100.0 * seg, 100 * US, 0).0);
            assert_eq!(t.rto(k), 200 * US);
        }
        t.used_up(0, 30 * US); // ACKs back over 30 us: the timer runs from 130 us
        t.used_up(0, 60 * US); // (a later call in the same round changes nothing)
        t.used_up(1, 10 * US); // over 10 us: from 110 us
        // slot 2 never used its window up: ACKs the whole round, from 200 us
        // the second round at 100 us: a round trip of 220 us, its first ACK at 320 us
        assert!(!t.round(0, 20.0 * seg, 90.0 * seg, 220 * US, 100 * US).0, "220 - 30 < 200");
        assert!(t.round(1, 20.0 * seg, 90.0 * seg, 220 * US, 100 * US).0, "220 - 10 > 200");
        assert!(!t.round(2, 20.0 * seg, 90.0 * seg, 290 * US, 100 * US).0, "290 - 100 < 200");
    }
}
