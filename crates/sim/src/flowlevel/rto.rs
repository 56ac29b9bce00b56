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
//! A round whose modelled RTT exceeds the RTO the flow holds as it starts times out (the packet level's timer,
//! restarted by the last ACK of the round before, fires before the round's first ACK is back). What the packet
//! level then does, and the model with it:
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
//! - From ssthresh the packet level's window grows by a segment per round (congestion avoidance). The flow
//!   level models congestion avoidance for no flow (a flow whose window no longer binds takes its max-min share,
//!   which stands for the equilibrium of every flow's congestion avoidance), so a flow after a timeout goes back
//!   to the one growth rule the others follow: its window doubles per round from ssthresh until it holds a base
//!   RTT's worth at line rate. Measured on the reference fabric with a 10-packet window and ECMP (8,000 flows):
//!   growing by a segment per round instead brought the small flows' mean and p99 within 2% of the packet
//!   level's but made the medium flows 38% slower, with 4.4 timeouts per medium flow against the packet level's
//!   0.37: a flow in congestion avoidance stays in rounds for dozens of round trips, and the standing queues,
//!   which are there or not (a port's full operating point or nothing), come and go under it; each round without
//!   them brings the RTO down to its floor, and the next with them fires again, where the packet level's queues
//!   move by degrees.
//!
//! Which schemes: dctcp and l2dct by default (`run.flow_timeouts = "marking"`), tcp too with `"all"`
//! (`config::FlowTimeouts` says why not by default).
//!
//! Assumptions: the queues a round waits behind are the standing-queue model's (`Standing`), fixed for the
//! round; no queue above the operating point, so no timeout past slow start (a flow whose window no longer binds
//! has no rounds here, and its RTO has followed the queues it kept standing); no loss, so every timeout is
//! spurious, as 99.7% of the packet level's are on the reference fabric with the engine's RTO floor.

use crate::units::Ps;

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
        self.est[k] = Est { rto: self.rto_init, ..Est::default() };
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

    /// A round starts with window `win` (bits), `left` bits to send and the modelled round trip `rtt`: does it
    /// time out? If so, the next round's window and the duplicates are set (`next_window`, `take_dup`). The
    /// round's samples are taken either way. Returns the bits the flow has to send in addition (the
    /// duplicates), 0 without a timeout.
    pub(super) fn round(&mut self, k: u32, win: f64, left: f64, rtt: Ps) -> (bool, f64) {
        if !self.on {
            return (false, 0.0);
        }
        let ku = k as usize;
        let fired = rtt > self.est[ku].rto;
        let mut extra = 0.0;
        if fired {
            let seg = self.seg_bits;
            let e = &mut self.est[ku];
            e.cut = true;
            e.ssthresh = (win / 2.0).max(2.0 * seg);
            if left > win * (1.0 + 1e-9) {
                e.dup = win;
                extra = win;
            }
        }
        let n = (win.min(left.max(0.0)) / self.seg_bits).ceil().max(1.0) as u32;
        self.sample(ku, rtt as f64, n);
        (fired, extra)
    }

    /// The window of slot `k`'s next round, from `win` (bits) the window of the round that ends: doubled (slow
    /// start), or ssthresh after a timeout (and doubled again from there: see the module's docs).
    pub(super) fn next_window(&mut self, k: u32, win: f64) -> f64 {
        if !self.on {
            return win * 2.0;
        }
        let e = &mut self.est[k as usize];
        if std::mem::take(&mut e.cut) {
            e.ssthresh
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
        let (fired, _) = t.round(0, 10.0 * 12_000.0, 30.0 * 12_000.0, 85 * US);
        assert!(!fired, "85 us < 240 us");
        let want = ((srtt + 4.0 * var) * 1e6).round() as Ps;
        assert!(want < 200 * US);
        assert_eq!(t.rto(0), 200 * US, "the floor binds ({} ps from the samples)", want);
    }

    /// A round of 241 us behind an RTO of 200 us fires; the next window is half the round's, plus the round's
    /// window again as duplicates; then it doubles again.
    #[test]
    fn a_round_past_the_rto_fires_and_halves_the_window() {
        let seg = 12_000.0;
        let mut t = Timeouts::new(true, 200 * US, 200 * US, 1_000_000 * US, seg);
        t.open(0, Some(60 * US)); // RTO 180 us -> the floor, 200 us
        assert_eq!(t.rto(0), 200 * US);
        let (fired, extra) = t.round(0, 20.0 * seg, 50.0 * seg, 241 * US);
        assert!(fired);
        assert_eq!(extra, 20.0 * seg);
        assert_eq!(t.next_window(0, 20.0 * seg), 10.0 * seg);
        assert_eq!(t.take_dup(0), 20.0 * seg);
        assert_eq!(t.take_dup(0), 0.0);
        assert_eq!(t.next_window(0, 10.0 * seg), 20.0 * seg, "doubling again");
        // the round's 20 samples of 241 us lifted the RTO above it: the next round does not fire
        assert!(t.rto(0) > 241 * US);
        assert!(!t.round(0, 11.0 * seg, 10.0 * seg, 241 * US).0);
    }

    /// The last round fires without duplicates (they leave after the receiver holds every byte).
    #[test]
    fn the_last_round_fires_without_duplicates() {
        let seg = 12_000.0;
        let mut t = Timeouts::new(true, 200 * US, 200 * US, 1_000_000 * US, seg);
        t.open(0, None); // no set-up: rto_init
        let (fired, extra) = t.round(0, 10.0 * seg, 7.0 * seg, 250 * US);
        assert!(fired && extra == 0.0);
        assert_eq!(t.take_dup(0), 0.0);
    }
}
