//! One flow as the flow level holds it (`Open`): its path, rate and lazy progress, its slow-start window, its
//! queue or tag, its deadline and when it gives up, and the incremental updates' bookkeeping, laid out for them
//! (`repr(C)`, a cache line's alignment); and the time of its next own event.

use super::ordered::crumb;
use super::MAX_HOPS;
use crate::units::{Ps, NEVER};

/// One flow, open or in its set-up wait. Progress is applied lazily: `left`, `allow` and `sent` hold the values
/// at `at`, and are brought up to date (`sync`) only at the flow's own events and when its rate is about to
/// change, so an event costs nothing for the flows it does not touch.
///
/// `repr(C)` and aligned to a cache line, with the fields the max-min update reads of every flow it meets
/// first (rate, old rate, path, marks): they share one cache line, where the compiler's own order spread them
/// over three (the scans of a resource's users read the rate and mark of every user).
#[derive(Debug, Clone)]
#[repr(C, align(64))]
pub(super) struct Open {
    pub(super) rate: f64,
    /// The reallocation's bookkeeping: the rate before this event, the event that put the flow in the set
    /// being refilled (and the one that rescheduled it), and what froze its rate in the last filling (a
    /// resource, or FROZE_CAP for its own cap).
    pub(super) old_rate: f64,
    /// Resources (indices into the resource table) its path uses: the first `hops_len` (held in the flow, not
    /// behind a pointer: the updates walk them for every flow they touch).
    pub(super) hops: [u32; MAX_HOPS],
    pub(super) mark: u32,
    pub(super) froze: u32,
    pub(super) hops_len: u8,
    pub(super) sched: u32,
    pub(super) id: u32,
    /// For each hop, the flow's index in that resource's list of users (removal in constant time).
    pub(super) pos: [u32; MAX_HOPS],
    /// D3: the part of the rate granted from the desired rate. SRPT and PDQ: the rate its path grants (a PDQ
    /// flow may not be sending it yet; -1 before its first grant). (With the cap and line rate it sits in the
    /// second cache line and `ahead` fills the third: SRPT's update reads them of every flow behind a change of
    /// grant, `layout_puts_the_ordered_update_in_three_lines`.)
    pub(super) grant: f64,
    /// Its own cap on the rate for the allocation (bit/s): `line`, or 0 while its window is used up. D3: the
    /// cap on its grant (`Open::asks`; the cap on its fair share, `line` less its grant, is in `Fluid::shares`).
    pub(super) cap: f64,
    /// The NIC's rate (and `max_cwnd_packets` per base RTT, when set).
    pub(super) line: f64,
    /// SRPT and criticality order (`Fluid::update_ordered`): per hop, what the flows ahead of it in the order
    /// leave of that resource (its capacity less their grants).
    pub(super) ahead: [f64; MAX_HOPS],
    /// Wire bits still to send.
    pub(super) left: f64,
    /// Slow start: the window (bits), the bits it still allows in this round, and when the next round starts
    /// (NEVER once the window no longer binds: at least a base RTT's worth at `line`).
    pub(super) win: f64,
    pub(super) allow: f64,
    pub(super) round_at: Ps,
    pub(super) rtt: Ps,
    /// Added to the time the last bit leaves: the path's pipeline latency.
    pub(super) tail: Ps,
    /// MLFQ: wire bits sent, and the queue (thresholds passed; QCLIMB and RAX: the tag of the bytes sent),
    /// and (QCLIMB, RAX) the wire bits sent at which the tag is due again (infinite: never).
    pub(super) sent: f64,
    pub(super) class: u8,
    pub(super) tag_at: f64,
    /// D3 and PDQ: the flow's deadline (absolute; NO_DEADLINE if none), and when it gives up (`TERM_*`).
    pub(super) deadline: Ps,
    pub(super) term: u8,
    /// D3: the desired rate of its last request (bit/s; 0 without a deadline) and when the next is due.
    pub(super) desired: f64,
    pub(super) req_at: Ps,
    /// PDQ's size-unaware criticality: the flow's rank (random, or bytes-sent steps passed), and the wire bits
    /// of one step of the bytes-sent estimate (0: no steps).
    pub(super) rank: f64,
    pub(super) rank_bits: f64,
    /// PDQ: the wait between a paused flow's new grant and its data (`gap`) and when that wait ends (`wake`,
    /// 0 when not waiting).
    pub(super) gap: Ps,
    pub(super) wake: Ps,
    /// LAS: when the flow, at its rate, catches up with the next flow of one of its resources in the order of
    /// service (NEVER: it does not).
    pub(super) catch_at: Ps,
    /// When `left`, `allow` and `sent` were last brought up to date.
    pub(super) at: Ps,
    /// Its position in the list of active flows (u32::MAX while in its set-up wait).
    pub(super) act: u32,
    /// SRPT and criticality order: whether it waits in the queue of flows to regrant; the event that last put
    /// it in the list of flows whose catching up is recomputed.
    pub(super) queued: bool,
    pub(super) cstamp: u32,
    /// D3: the flow's place in the order of arrival (its data's start; numbered by `Fluid::activate`).
    pub(super) seq: u64,
    /// Its source and destination hosts (Homa: a receiver grants to one message per sender).
    pub(super) src: u32,
    pub(super) dst: u32,
    /// Homa: its receiver grants to it (set by each pass).
    pub(super) granted: bool,
    /// HyLine: stopped by the manager (its cap 0 until a CTS restarts it), and the initial window (bits) a
    /// restart starts from.
    pub(super) stopped: bool,
    pub(super) win0: f64,
    /// The window's cap (bits; infinite without `max_cwnd_packets`).
    pub(super) win_max: f64,
}

/// When an explicit-rate flow with a deadline gives up: never; once its deadline has passed (PDQ with a
/// size-unaware criticality); once it cannot make it at line rate (D3's quenching: its desired rate exceeds the
/// line rate); that, or while paused, once it cannot make it at line rate one RTT from now (PDQ's Early
/// Termination).
pub(super) const TERM_NEVER: u8 = 0;
pub(super) const TERM_DEADLINE: u8 = 1;
pub(super) const TERM_LINE: u8 = 2;
pub(super) const TERM_PAUSED: u8 = 3;

impl Open {
    #[inline]
    pub(super) fn path(&self) -> &[u32] {
        &self.hops[..self.hops_len as usize]
    }

    /// Wire bits left at `now` at the current rate: what `sync` would make `left`, without writing it.
    #[inline]
    pub(super) fn left_at(&self, now: Ps) -> f64 {
        if now > self.at {
            self.left - self.rate * ((now - self.at) as f64 / 1e12)
        } else {
            self.left
        }
    }

    /// Wire bits sent at `now` at the current rate: what `sync` would make `sent`, without writing it.
    #[inline]
    pub(super) fn sent_at(&self, now: Ps) -> f64 {
        if now > self.at {
            self.sent + self.rate * ((now - self.at) as f64 / 1e12)
        } else {
            self.sent
        }
    }

    /// SRPT, criticality order: the rate the flow holds on its resources (its grant; 0 before the first).
    #[inline]
    pub(super) fn held(&self) -> f64 {
        self.grant.max(0.0)
    }

    /// SRPT, criticality order: the grant the greedy pass gives the flow from what the flows ahead of it leave
    /// on each hop (`ahead`) and its own cap. A grant below a billionth of the line rate is none: float rounding
    /// leaves such crumbs on a resource that the flows ahead use up, and a crumb must not count as a grant
    /// (PDQ's hand-over starts from a grant of 0).
    #[inline]
    pub(super) fn potential(&self) -> f64 {
        let r = self.ahead[..self.hops_len as usize].iter().fold(self.cap, |a, &b| a.min(b)).max(0.0);
        crumb(r, self.line)
    }

    /// D3: the most its grant may be: its desired rate, up to its line rate (0 without a deadline).
    #[inline]
    pub(super) fn asks(&self) -> f64 {
        if self.desired > 0.0 {
            self.desired.min(self.line)
        } else {
            0.0
        }
    }

    /// Its index among the hops of its path of resource `l`.
    #[inline]
    pub(super) fn hop_of(&self, l: u32) -> usize {
        self.path().iter().position(|&x| x == l).unwrap()
    }

    /// The greedy pass grants the flow `r` (SRPT, criticality order). PDQ's hand-over: a flow that was paused
    /// (not a new one) and is granted a rate holds it from now, but its data follows `gap` later (its probe's
    /// round trip; the link idles meanwhile), so its rate stays 0 until `wake`.
    #[inline]
    pub(super) fn take_grant(&mut self, r: f64, paused: bool, now: Ps) {
        self.grant = r;
        self.rate = r;
        if self.gap > 0 && r > 0.0 {
            if paused {
                self.wake = now + self.gap;
            }
            if self.wake > now {
                self.rate = 0.0;
            }
        }
    }

    /// Bring `left`, `allow` and `sent` to `now` at the current rate.
    #[inline]
    pub(super) fn sync(&mut self, now: Ps) {
        if now > self.at {
            let bits = self.rate * ((now - self.at) as f64 / 1e12);
            self.left -= bits;
            self.allow -= bits;
            self.sent += bits;
            self.at = now;
        }
    }

    /// The flow's next own event (last bit, window used up, a threshold passed, the next round, D3's next
    /// request, PDQ's data after a hand-over, its criticality's next step, giving up); its state must be up to
    /// date at `now`.
    pub(super) fn next_event(&self, now: Ps, th_bits: &[f64]) -> Ps {
        let mut next = self.round_at.min(self.req_at).min(self.give_up_at(now)).min(self.catch_at);
        if self.wake > now {
            next = next.min(self.wake);
        }
        if self.rate > 0.0 {
            next = next.min(after(now, self.left, self.rate));
            if self.round_at != NEVER && self.allow > 0.0 {
                next = next.min(after(now, self.allow, self.rate));
            }
            if let Some(&th) = th_bits.get(self.class as usize) {
                next = next.min(after(now, (th - self.sent).max(0.0), self.rate));
            }
            if self.tag_at.is_finite() {
                next = next.min(after(now, (self.tag_at - self.sent).max(0.0), self.rate));
            }
            if self.rank_bits > 0.0 {
                next = next.min(after(now, ((self.rank + 1.0) * self.rank_bits - self.sent).max(0.0), self.rate));
            }
        }
        next
    }

    /// When the flow gives up at its current rate (`now` if it does now; NEVER if it never does); its state
    /// must be up to date at `now`. At line rate L with B bits left and rate r, it cannot make it once
    /// t + B(t) / L > deadline, B(t) falling at r: from now + (slack - B / L) / (1 - r / L) on (rounded to the
    /// next picosecond, so that the test at that time holds).
    pub(super) fn give_up_at(&self, now: Ps) -> Ps {
        if self.term == TERM_NEVER {
            return NEVER;
        }
        if now >= self.deadline {
            return now;
        }
        if self.term == TERM_DEADLINE {
            return self.deadline;
        }
        let slack = (self.deadline - now) as f64;
        let mut need = self.left / self.line * 1e12;
        if self.term == TERM_PAUSED && self.rate <= 0.0 {
            need += self.rtt as f64;
        }
        if need > slack {
            return now;
        }
        let fall = 1.0 - self.rate / self.line;
        if fall <= 1e-12 {
            return self.deadline;
        }
        let t = ((slack - need) / fall).floor() + 1.0;
        if t < (self.deadline - now) as f64 {
            now + t as Ps
        } else {
            self.deadline
        }
    }
}

/// When `bits` at `rate` (bit/s) are sent, from `now` (rounded up to the picosecond); NEVER if not within the
/// clock's range (a rate that float rounding left a hair above zero must not wrap the clock around).
#[inline]
pub(super) fn after(now: Ps, bits: f64, rate: f64) -> Ps {
    let t = (bits / rate * 1e12).ceil();
    if t.is_finite() && t < (NEVER - now) as f64 {
        now + t as Ps
    } else {
        NEVER
    }
}
