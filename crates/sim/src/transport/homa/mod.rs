//! Homa (Montazeri, Li, Alizadeh, Ousterhout, "Homa: A Receiver-Driven Low-Latency Transport Protocol Using
//! Network Priorities", SIGCOMM 2018): receiver-driven scheduling over the switches' strict-priority queues.
//!
//! Each flow is one Homa message. What the sender and receiver do, and where each rule comes from:
//! - **Unscheduled bytes** (paper §3.2-3.4): the sender sends the first `rtt_bytes` of every message at once,
//!   blind, at an unscheduled priority chosen from the message's length by the cutoffs (see [`cutoffs`]).
//! - **Grants** (§3.3-3.5): every data packet that reaches the receiver may trigger a GRANT. The receiver ranks
//!   the messages it is receiving that still need grants by bytes left to receive (fewest first: SRPT) and
//!   grants only to the first `overcommit` of them from distinct senders ("controlled overcommitment"; a
//!   sender sends one message at a time, and the authors' simulator, HomaSimulation, grants to its most urgent
//!   senders, each for its shortest message); each granted message is kept
//!   `rtt_bytes` ahead of what has arrived (a grant to received + `rtt_bytes`). A grant names the priority of
//!   the scheduled packets it allows: with m messages granted and S scheduled levels, the receiver uses the m
//!   lowest scheduled levels, the most urgent message on the highest of them (§3.4: leaving the higher
//!   scheduled levels free for shorter messages that arrive later).
//! - **Sender SRPT** (§3.2): a host transmits, whenever its NIC is free, a packet of the message with the
//!   fewest bytes left to send among those with bytes it may send (unscheduled or granted). The NIC is kept
//!   at most one data packet deep so that this choice is made at the moment the link frees (the engine's
//!   per-host timer, `engine::family::homa`); control packets (GRANT, RESEND, BUSY, DONE, PING) go at the highest
//!   priority and are never held back.
//! - **Loss recovery** (§3.7): no acknowledgements of data and no congestion window. A receiver that expects
//!   data (below what it granted, or unscheduled) and hears nothing of a message for `resend_timeout` sends
//!   RESEND for its missing ranges; the sender resends them, or answers BUSY when it has not sent them yet
//!   (it is sending more urgent messages), which resets the receiver's timer.
//!
//! Choices where the paper is silent, each a key where it matters:
//! - **DONE.** Homa has no acknowledgement of a one-way message (an RPC's response acknowledges its request).
//!   fctlab's flows are one-way messages, so the receiver sends a header-only DONE when a message is complete,
//!   as Homa's Linux implementation acknowledges completed RPCs; the sender then forgets the message.
//! - **Sender timeout.** A sender with nothing left to send and no DONE, that has heard nothing of the message
//!   for `resend_timeout`, sends a header-only PING. The receiver answers DONE (the DONE was lost), RESEND for
//!   what it misses, a GRANT restating its grant (it is busy with more urgent messages), or UNKNOWN if no packet
//!   of the message has reached it; then the sender sends its unscheduled segments again. (Homa's client does
//!   the same by timing out on an RPC's missing response; Homa's Linux code answers RESEND with UNKNOWN.)
//!   A RESEND also grants what it asks for, so a lost GRANT costs one timeout.
//! - **Cutoffs from the run's own messages.** The paper derives the unscheduled levels and cutoffs from the
//!   workload's size distribution; fctlab derives them from the sizes of the run's messages (the same
//!   distribution, sampled), unless `homa_unscheduled_cutoffs_bytes` gives them.
//! - **RTTbytes** (the paper's 9.7 KB for its 10 Gbps, 7.8 us fabric): by default the bytes the sender's link
//!   carries in the time a full data packet takes to reach the farthest host plus a control packet's way back
//!   (`engine::family::homa`), rounded up to whole segments.
//! - **What the authors' simulator adds** (HomaSimulation, the OMNeT++ code of the paper's §5.2; both off by
//!   default, on in the Homa recipe's "as the authors' simulator" series):
//!   - `homa_tail_boost`: the last RTTbytes of a scheduled message go at an unscheduled level. The first grant
//!     that reaches into them names the segment where they start ([`HomaParams::tail_start`], in the GRANT's
//!     `len`), and the sender sends each of them at the better of its scheduled level and the unscheduled
//!     level it would have if unscheduled ([`HomaParams::unsched_prio_at`]), as HomaSimulation's receiver
//!     grants each tail packet at the level for the bytes it has left to grant;
//!   - `homa_unscheduled_priority = "remaining"`: an unscheduled packet's level follows the bytes its message
//!     has left including it, not the message's length, with cutoffs over the remaining sizes of the run's
//!     unscheduled packets ([`remaining_cutoffs`]).
//!   
//!   Not built: the paper's incast optimisation (§3.6: a client with many RPCs outstanding marks them so that
//!   their responses carry fewer unscheduled bytes). fctlab's flows are one-way messages without an RPC that
//!   could carry the mark, and HomaSimulation does not do it either: its unscheduled-bytes allocator keeps
//!   one fixed value per receiver (`UnschedByteAllocator::updateUnschedBytes` is empty).
//! - **Imprecise sizes** (`scheme.size_info`, or `homa_sizes`; QCLIMB paper App. D asks how Homa fares with estimated sizes): the
//!   message's length as the sender announces it (in every data packet) is the trace's estimate, lower or
//!   upper bound instead of its true size; it sets the unscheduled priority, the sender's SRPT order and the
//!   receiver's grant order. The unscheduled bytes stay the first `rtt_bytes` of the data the sender has
//!   (it knows what it holds, not the message's final length). Once more bytes than announced have been sent,
//!   every packet announces RTTbytes beyond itself, so the message ranks as having RTTbytes left at the sender
//!   and the receiver, and the receiver grants on; it learns the true end from the LAST flag of the final
//!   segment and grants up to it.

#[cfg(test)]
mod tests;

use crate::config::{Config, HomaUnschedPrio, SizeInfo};
use crate::net::packet::{flags, stamp, Header, Packet};
use crate::transport::bitset::BitSet;
use crate::units::{tx_time, Ps, NEVER, PS_PER_US};

/// Homa's header beyond the common fields.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct HomaHdr {
    /// Data: the message's length in bytes as the sender announces it (see the module docs). GRANT, with the tail
    /// boost: 1 + the first segment of the message's last RTTbytes, once the grant reaches into them (else 0).
    pub len: u64,
    /// Data: how many of the message's first segments are unscheduled.
    pub unsched: u32,
    /// What the packet is ([`kind`]).
    pub kind: u8,
    /// GRANT: the priority of the scheduled packets it allows. Data: [`LAST`] on the message's final segment.
    pub arg: u8,
}

impl Header for HomaHdr {}

/// Values of [`HomaHdr::kind`]. Every kind but DATA travels as a header-only packet with `flags::ACK`.
pub mod kind {
    pub const DATA: u8 = 0;
    /// Receiver to sender: you may send segments below `seq` (scheduled ones at priority `hdr.arg`).
    pub const GRANT: u8 = 1;
    /// Receiver to sender: send segments `seq .. sack` again.
    pub const RESEND: u8 = 2;
    /// Sender to receiver: alive, but busy with more urgent messages.
    pub const BUSY: u8 = 3;
    /// Receiver to sender: the message is complete.
    pub const DONE: u8 = 4;
    /// Sender to receiver: is the message complete? (see the module docs: sender timeout).
    pub const PING: u8 = 5;
    /// Receiver to sender, answering a PING: no packet of this message has arrived.
    pub const UNKNOWN: u8 = 6;
}

/// [`HomaHdr::arg`] of a message's final data segment.
pub const LAST: u8 = 1;

/// [`HomaHdr::arg`] of a GRANT that restates a grant (answering a PING): the sender keeps its priority.
pub const KEEP_PRIO: u8 = u8::MAX;

/// Homa's parameters (`scheme.homa_*` keys; see the module docs).
#[derive(Debug, Clone)]
pub struct HomaParams {
    pub mss: u32,
    pub header: u32,
    pub ctrl_bytes: u32,
    /// Priority levels in all (the switches' queues).
    pub levels: u8,
    /// The highest `unsched_levels` levels (0 ..) carry unscheduled packets; the rest scheduled ones.
    pub unsched_levels: u8,
    /// Upper size of each unscheduled level but the last, in bytes, ascending (`unsched_levels - 1` of them).
    pub cutoffs: Vec<u64>,
    /// Unscheduled segments per message, and how far ahead of arrivals a granted message is kept.
    pub rtt_segs: u32,
    /// How many messages a receiver grants to at once.
    pub overcommit: usize,
    pub resend_timeout: Ps,
    /// At most this many missing ranges per RESEND round.
    pub resend_ranges: usize,
    /// What the sender knows of its message's length (`scheme.size_info` or `homa_sizes`).
    pub sizes: SizeInfo,
    /// Unscheduled priority per packet from the bytes left (`homa_unscheduled_priority = "remaining"`) rather
    /// than per message from its length.
    pub graduated: bool,
    /// The last RTTbytes of a scheduled message go at an unscheduled priority (`homa_tail_boost`).
    pub tail_boost: bool,
}

impl HomaParams {
    /// The parameters of a run: `sizes` are the run's message sizes (for the cutoffs), `rtt_bytes` the default
    /// RTTbytes of the run's fabric (used when `scheme.homa_rtt_bytes` is 0).
    pub fn from_config(cfg: &Config, sizes: &[u64], rtt_bytes: u64) -> Self {
        let s = &cfg.scheme;
        let t = &cfg.transport;
        let levels = cfg.switch.queues.min(255) as u8;
        let rtt = if s.homa_rtt_bytes > 0 { s.homa_rtt_bytes } else { rtt_bytes };
        let rtt_segs = rtt.div_ceil(t.mss_bytes as u64).clamp(1, u32::MAX as u64) as u32;
        let rtt_bytes = rtt_segs as u64 * t.mss_bytes as u64;
        let graduated = s.homa_unscheduled_priority == HomaUnschedPrio::Remaining;
        // the bytes of a message that travel at unscheduled levels: its first RTTbytes, and with the tail boost
        // its last RTTbytes as well
        let unsched_cap = if s.homa_tail_boost { 2 * rtt_bytes } else { rtt_bytes };
        let (unsched_levels, cutoffs) = if !s.homa_unscheduled_cutoffs_bytes.is_empty() {
            let c = s.homa_unscheduled_cutoffs_bytes.clone();
            ((c.len() + 1).min(levels as usize) as u8, c)
        } else {
            let u = if s.homa_unscheduled_levels > 0 {
                s.homa_unscheduled_levels.min(levels as u32) as u8
            } else {
                unscheduled_levels(sizes, unsched_cap, levels)
            };
            // (equal cutoffs merge: the levels they would have left empty go to the scheduled packets)
            let c = if graduated {
                let w = PacketWeights {
                    mss: t.mss_bytes as u64,
                    header: t.header_bytes as u64,
                    grant: t.ack_bytes as u64,
                    rtt_segs: rtt_segs as u64,
                    tail_boost: s.homa_tail_boost,
                };
                remaining_cutoffs(sizes, &w, u)
            } else {
                cutoffs(sizes, unsched_cap, u)
            };
            ((c.len() + 1).min(u as usize) as u8, c)
        };
        let sched = (levels - unsched_levels).max(1) as usize;
        HomaParams {
            mss: t.mss_bytes,
            header: t.header_bytes,
            ctrl_bytes: t.ack_bytes,
            levels,
            unsched_levels,
            cutoffs,
            rtt_segs,
            overcommit: if s.homa_overcommit > 0 { s.homa_overcommit as usize } else { sched },
            resend_timeout: ((s.homa_resend_timeout_us * PS_PER_US as f64).round() as Ps).max(1),
            resend_ranges: 8,
            sizes: s.size_view(),
            graduated,
            tail_boost: s.homa_tail_boost,
        }
    }

    /// RTTbytes, in payload bytes (whole segments).
    #[inline]
    pub fn rtt_bytes(&self) -> u64 {
        self.rtt_segs as u64 * self.mss as u64
    }

    /// The first segment of the tail of a message announced as `len` bytes long: the first with at most
    /// RTTbytes left, itself included (`homa_tail_boost`).
    #[inline]
    pub fn tail_start(&self, len: u64) -> u32 {
        let mss = self.mss as u64;
        (len.saturating_sub(self.rtt_bytes()).div_ceil(mss)).min(u32::MAX as u64 - 1) as u32
    }

    /// The unscheduled level of segment `seg` of a message announced as `len` bytes long, when it goes at one
    /// (an unscheduled segment, or a boosted segment of the tail): for the bytes left including it
    /// (`homa_unscheduled_priority = "remaining"`) or for the message's length.
    #[inline]
    pub fn unsched_prio_at(&self, len: u64, seg: u32) -> u8 {
        if self.graduated {
            self.unsched_prio(len.saturating_sub(seg as u64 * self.mss as u64).max(1))
        } else {
            self.unsched_prio(len)
        }
    }

    /// The unscheduled priority of a message announced as `bytes` long: level i for the i-th cutoff range.
    pub fn unsched_prio(&self, bytes: u64) -> u8 {
        let i = self.cutoffs.iter().take_while(|&&c| bytes > c).count();
        (i as u8).min(self.unsched_levels.saturating_sub(1))
    }

    /// The priority of scheduled packets for the message ranked `rank` (0: most urgent) among `m` granted.
    pub fn sched_prio(&self, rank: usize, m: usize) -> u8 {
        let s = (self.levels.saturating_sub(self.unsched_levels)).max(1) as usize;
        let base = self.unsched_levels.min(self.levels - 1) as usize;
        (base + s.saturating_sub(m) + rank.min(s - 1)).min(self.levels as usize - 1) as u8
    }
}

/// RTTbytes of a fabric: the bytes host 0's link carries while a full data packet goes from host 0 to the last
/// host (store and forward at every hop) and a control packet comes back along the same links (the packet
/// level's and the flow level's default RTTbytes).
pub fn fabric_rtt_bytes<H: Header>(net: &crate::net::Network<H>, cfg: &Config) -> u64 {
    let t = &cfg.transport;
    if net.hosts < 2 {
        return t.mss_bytes as u64;
    }
    let path = net.ecmp_path(0, net.hosts - 1, 0);
    let mut time: Ps = 0;
    for &p in &path {
        let port = &net.ports[p as usize];
        time += tx_time(t.mss_bytes + t.header_bytes, port.rate_bps) + port.delay_ps;
        time += tx_time(t.ack_bytes, port.rate_bps) + port.delay_ps;
    }
    let rate = net.line_rate_bps(0) as u128;
    ((rate * time as u128).div_ceil(8 * crate::units::PS_PER_S as u128)) as u64
}

/// The unscheduled levels for messages of these sizes: the levels' share of the unscheduled bytes (paper
/// §3.4: "in proportion to the bytes"), rounded, at least one and leaving at least one scheduled level.
pub fn unscheduled_levels(sizes: &[u64], rtt_bytes: u64, levels: u8) -> u8 {
    if levels <= 1 {
        return 1;
    }
    let total: u128 = sizes.iter().map(|&s| s as u128).sum();
    if total == 0 {
        return levels - 1;
    }
    let unsched: u128 = sizes.iter().map(|&s| s.min(rtt_bytes) as u128).sum();
    let share = unsched as f64 / total as f64;
    ((share * levels as f64).round() as u8).clamp(1, levels - 1)
}

/// Cutoffs that give each of `u` unscheduled levels an equal share of the unscheduled bytes, shorter messages
/// on higher levels (paper §3.4): sizes sorted, the i-th cutoff is the size at which the running sum of
/// min(size, rtt_bytes) reaches i/u of the total. `u - 1` values, strictly ascending (equal ones merged, so
/// fewer levels may be used when the sizes are few).
pub fn cutoffs(sizes: &[u64], rtt_bytes: u64, u: u8) -> Vec<u64> {
    if u <= 1 || sizes.is_empty() {
        return Vec::new();
    }
    let mut s: Vec<u64> = sizes.to_vec();
    s.sort_unstable();
    let total: u128 = s.iter().map(|&x| x.min(rtt_bytes) as u128).sum();
    let mut out: Vec<u64> = Vec::with_capacity(u as usize - 1);
    let mut acc: u128 = 0;
    let mut next = 1u128;
    for &x in &s {
        acc += x.min(rtt_bytes) as u128;
        while next < u as u128 && acc * u as u128 >= total * next {
            if out.last() != Some(&x) {
                out.push(x);
            }
            next += 1;
        }
    }
    // the largest size needs no cutoff above it
    if out.last() == s.last() {
        out.pop();
    }
    out
}

/// How [`remaining_cutoffs`] packetises a message.
#[derive(Debug, Clone, Copy)]
pub struct PacketWeights {
    pub mss: u64,
    pub header: u64,
    /// Wire bytes of a grant (one per scheduled segment).
    pub grant: u64,
    pub rtt_segs: u64,
    pub tail_boost: bool,
}

/// Cutoffs for per-packet unscheduled priorities (`homa_unscheduled_priority = "remaining"`): every packet that
/// travels at an unscheduled level (a message's first `rtt_segs` segments; with the tail boost also those with
/// at most RTTbytes left) counts its wire bytes at the bytes its message has left including it; every grant
/// counts its bytes at 0 (grants go at the top level). Sorted by that key, the i-th of the `u - 1` cutoffs is
/// the key at which the running sum reaches i/u of the total, equal ones merged (as in [`cutoffs`]); a cutoff
/// of 0 leaves the top level to the grants. The authors' simulator computes the same from the workload's CDF
/// (`WorkloadEstimator::getRemainSizeCdfCbf`); fctlab from the run's messages.
pub fn remaining_cutoffs(sizes: &[u64], w: &PacketWeights, u: u8) -> Vec<u64> {
    if u <= 1 || sizes.is_empty() {
        return Vec::new();
    }
    let mss = w.mss.max(1);
    let rtt_bytes = w.rtt_segs * mss;
    let mut grants: u128 = 0;
    let mut items: Vec<(u64, u64)> = Vec::new();
    for &size in sizes {
        let size = size.max(1);
        let segs = size.div_ceil(mss);
        grants += segs.saturating_sub(w.rtt_segs) as u128 * w.grant as u128;
        for k in 0..segs {
            let left = size - k * mss;
            if k < w.rtt_segs || (w.tail_boost && left <= rtt_bytes) {
                items.push((left, left.min(mss) + w.header));
            }
        }
    }
    items.sort_unstable();
    let total: u128 = grants + items.iter().map(|&(_, b)| b as u128).sum::<u128>();
    let mut out: Vec<u64> = Vec::with_capacity(u as usize - 1);
    let mut acc: u128 = grants;
    let mut next = 1u128;
    // the grants, at key 0, come first
    while next < u as u128 && acc * u as u128 >= total * next {
        if out.is_empty() {
            out.push(0);
        }
        next += 1;
    }
    for &(x, b) in &items {
        acc += b as u128;
        while next < u as u128 && acc * u as u128 >= total * next {
            if out.last() != Some(&x) {
                out.push(x);
            }
            next += 1;
        }
    }
    if out.last() == items.last().map(|&(x, _)| x).as_ref() {
        out.pop();
    }
    out
}

/// Counters of one message.
#[derive(Debug, Clone, Copy, Default)]
pub struct HomaCounters {
    /// Segments sent again (asked for by RESEND, or after UNKNOWN).
    pub retransmits: u32,
    /// The receiver's RESEND rounds (its timer fired with data missing).
    pub timeouts: u32,
    /// The sender's PINGs (its timer fired with nothing to send and no DONE).
    pub pings: u32,
    pub bytes_sent: u64,
}

/// One message, both ends (each end reads only its own fields and what packets told it).
#[derive(Debug)]
pub struct HomaMsg {
    pub flow: u32,
    pub src: u32,
    pub dst: u32,
    pub size: u64,
    /// True length in segments.
    pub segs: u32,
    /// The length the sender announces, in segments (the true one unless `homa_sizes` says otherwise).
    pub announced: u32,
    /// The announced length in bytes (the SRPT keys count bytes, as the paper's "fewest remaining bytes").
    pub announced_bytes: u64,
    pub unsched: u32,
    pub unsched_prio: u8,
    // ---- sender
    /// The next segment never sent.
    pub next_seg: u32,
    /// Segments below this may be sent (the unscheduled ones, then grants).
    pub granted: u32,
    pub sched_prio: u8,
    /// With the tail boost: the first segment of the message's last RTTbytes, once a grant has said so
    /// (`NONE` before).
    pub tail_from: u32,
    /// Ranges [from, to) the receiver asked for again.
    resend: Vec<(u32, u32)>,
    /// In its host's list of messages with something to send.
    pub ready: bool,
    /// Last time the sender sent or heard something of this message.
    sender_active: Ps,
    // ---- receiver
    /// The receiver knows of the message (a data packet arrived).
    pub known: bool,
    got: BitSet,
    pub received: u32,
    pub r_len: u32,
    /// The announced length in bytes, and the payload bytes received (distinct segments).
    r_len_bytes: u64,
    received_bytes: u64,
    r_unsched: u32,
    /// The true end (LAST seen, or the length in exact mode); `u32::MAX` until known.
    r_end: u32,
    /// What the receiver granted (segments).
    pub r_granted: u32,
    /// Last time the receiver heard from the sender.
    receiver_active: Ps,
    /// The receiver grants to this message now (it is among its first `overcommit`): only then does it expect
    /// the scheduled data it granted to arrive (granted packets of a message it has since passed over may wait
    /// in low-priority queues for as long as more urgent messages keep the link busy).
    r_active: bool,
    pub complete: bool,
    /// Time of the flow's queued timer entry (lazy timers), or `NEVER`.
    pub timer_queued_at: Ps,
    pub counters: HomaCounters,
}

/// What a step of a message asks of the engine.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HomaOutcome {
    /// The receiver has the whole message (now).
    pub complete: bool,
    /// The sender has DONE: forget the message.
    pub sender_done: bool,
    /// The sender has something new to send (put it on its host's list, wake the host).
    pub ready: bool,
    /// The receiver's view changed in a way that may call for grants (a data packet of a message that needs
    /// them, or a completion).
    pub grants: bool,
}

const NONE: u32 = u32::MAX;

impl HomaMsg {
    /// A message starting now (`view`: the size the sender announces).
    #[allow(clippy::too_many_arguments)]
    pub fn new(p: &HomaParams, flow: u32, src: u32, dst: u32, size: u64, view: u64, now: Ps) -> Self {
        let mss = p.mss as u64;
        let segs = size.div_ceil(mss).max(1) as u32;
        let announced = view.max(1).div_ceil(mss).min(u32::MAX as u64 - 1) as u32;
        let unsched = segs.min(p.rtt_segs);
        HomaMsg {
            flow,
            src,
            dst,
            size,
            segs,
            announced,
            announced_bytes: view.max(1),
            unsched,
            unsched_prio: p.unsched_prio(view.max(1)),
            next_seg: 0,
            granted: unsched,
            sched_prio: p.levels - 1,
            tail_from: NONE,
            resend: Vec::new(),
            ready: false,
            sender_active: now,
            known: false,
            got: BitSet::default(),
            received: 0,
            r_len: 0,
            r_len_bytes: 0,
            received_bytes: 0,
            r_unsched: 0,
            r_end: NONE,
            r_granted: 0,
            receiver_active: now,
            r_active: false,
            complete: false,
            timer_queued_at: NEVER,
            counters: HomaCounters::default(),
        }
    }

    /// Payload bytes of segment `seg`.
    #[inline]
    fn payload(&self, p: &HomaParams, seg: u32) -> u32 {
        if seg + 1 < self.segs {
            p.mss
        } else {
            (self.size - (self.segs as u64 - 1) * p.mss as u64) as u32
        }
    }

    /// Does the sender have a data packet it may send now?
    #[inline]
    pub fn can_send(&self) -> bool {
        !self.resend.is_empty() || self.next_seg < self.granted.min(self.segs)
    }

    /// The length the sender announces in segment `seg`'s header: the announced length, until the sender has
    /// more data than it announced (imprecise sizes): then RTTbytes beyond the segment, and on the last
    /// segment the segment's own end.
    #[inline]
    fn len_at(&self, p: &HomaParams, seg: u32) -> u64 {
        if seg + 1 < self.announced {
            self.announced_bytes
        } else if seg + 1 == self.segs {
            self.announced_bytes.max(self.size)
        } else {
            (seg + 1 + p.rtt_segs) as u64 * p.mss as u64
        }
    }

    /// The sender's SRPT key: bytes left to send by its announcement (RTTbytes once it is passed).
    #[inline]
    pub fn send_key(&self, p: &HomaParams) -> u64 {
        if self.next_seg < self.announced {
            self.announced_bytes.saturating_sub(self.next_seg as u64 * p.mss as u64)
        } else {
            p.rtt_segs as u64 * p.mss as u64
        }
    }

    /// The receiver's SRPT key: bytes left to receive by the length the packets announce.
    #[inline]
    pub fn recv_key(&self) -> u64 {
        self.r_len_bytes.saturating_sub(self.received_bytes)
    }

    /// Does the receiver still have grants to give this message? (With imprecise sizes, until the LAST flag
    /// shows the end, it does.)
    #[inline]
    pub fn needs_grants(&self) -> bool {
        !self.complete && self.cap() > self.r_granted.max(self.r_unsched)
    }

    /// How far the receiver grants: the announced length, or the true end once the LAST flag has shown it.
    #[inline]
    fn cap(&self) -> u32 {
        self.r_len.min(self.r_end)
    }

    /// The sender's next data packet (a requested resend first, else the next new segment).
    pub fn next_packet(&mut self, p: &HomaParams, now: Ps) -> Packet<HomaHdr> {
        let (seg, retx) = if let Some(r) = self.resend.first_mut() {
            let seg = r.0;
            r.0 += 1;
            if r.0 >= r.1 {
                self.resend.remove(0);
            }
            (seg, true)
        } else {
            let seg = self.next_seg;
            self.next_seg += 1;
            (seg, false)
        };
        let payload = self.payload(p, seg);
        self.counters.bytes_sent += payload as u64;
        if retx {
            self.counters.retransmits += 1;
        }
        self.sender_active = now;
        let prio = if seg >= self.unsched {
            if seg >= self.tail_from {
                // the receiver's grant said the tail starts here: at an unscheduled level, if that is better
                self.sched_prio.min(p.unsched_prio_at(self.len_at(p, seg), seg))
            } else {
                self.sched_prio
            }
        } else if p.graduated {
            p.unsched_prio_at(self.len_at(p, seg), seg)
        } else {
            self.unsched_prio
        };
        Packet {
            flow: self.flow,
            seq: seg,
            sack: 0,
            dst: self.dst,
            wire: (payload + p.header) as u16,
            prio,
            flags: if retx { flags::RETX } else { 0 },
            ts: stamp(now),
            hdr: HomaHdr {
                len: self.len_at(p, seg),
                unsched: self.unsched,
                kind: kind::DATA,
                arg: if seg + 1 == self.segs { LAST } else { 0 },
            },
        }
    }

    /// A header-only control packet of kind `k` from this message's sender (`to_receiver`) or receiver.
    #[allow(clippy::too_many_arguments)]
    fn ctrl(&self, p: &HomaParams, now: Ps, k: u8, to_receiver: bool, seq: u32, sack: u32, arg: u8) -> Packet<HomaHdr> {
        Packet {
            flow: self.flow,
            seq,
            sack,
            dst: if to_receiver { self.dst } else { self.src },
            wire: p.ctrl_bytes as u16,
            prio: 0,
            flags: flags::ACK,
            ts: stamp(now),
            hdr: HomaHdr { len: 0, unsched: 0, kind: k, arg },
        }
    }

    /// The receiver: a data packet arrived. Packets to send go to `out`.
    pub fn on_data(
        &mut self,
        p: &HomaParams,
        now: Ps,
        pkt: &Packet<HomaHdr>,
        out: &mut Vec<Packet<HomaHdr>>,
    ) -> HomaOutcome {
        self.r_len_bytes = self.r_len_bytes.max(pkt.hdr.len);
        self.r_len = self.r_len_bytes.div_ceil(p.mss as u64).clamp(1, u32::MAX as u64 - 1) as u32;
        if !self.known {
            self.known = true;
            self.r_unsched = pkt.hdr.unsched;
            if p.sizes == SizeInfo::Exact {
                self.r_end = self.r_len;
            }
            // (sized by what the receiver knows: the announced length; grown if the message turns out longer)
            self.got = BitSet::new(self.r_len.max(pkt.seq + 1));
        }
        if pkt.hdr.arg & LAST != 0 {
            self.r_end = pkt.seq + 1;
        }
        if self.complete {
            // a resent segment of a message already complete: the DONE was lost, or the sender timed out
            out.push(self.ctrl(p, now, kind::DONE, false, 0, 0, 0));
            return HomaOutcome::default();
        }
        let seg = pkt.seq;
        if self.got_get(seg) {
            return HomaOutcome::default();
        }
        self.receiver_active = now;
        self.got_set(seg);
        self.received += 1;
        self.received_bytes += (pkt.wire as u32).saturating_sub(p.header) as u64;
        if self.r_end != NONE && self.received >= self.r_end {
            self.complete = true;
            out.push(self.ctrl(p, now, kind::DONE, false, 0, 0, 0));
            return HomaOutcome { complete: true, grants: true, ..HomaOutcome::default() };
        }
        HomaOutcome { grants: true, ..HomaOutcome::default() }
    }

    #[inline]
    fn got_get(&self, seg: u32) -> bool {
        (seg as usize) < self.got_bits() && self.got.get(seg)
    }

    fn got_set(&mut self, seg: u32) {
        if seg as usize >= self.got_bits() {
            // (imprecise sizes only: the message is longer than the receiver first allocated for)
            let mut bigger = BitSet::new((seg + 1).max(2 * self.got_bits() as u32));
            for i in 0..self.got_bits() as u32 {
                if self.got.get(i) {
                    bigger.set(i);
                }
            }
            self.got = bigger;
        }
        self.got.set(seg);
    }

    #[inline]
    fn got_bits(&self) -> usize {
        self.got.capacity()
    }

    /// The receiver grants up to received + RTTbytes (capped at the end when known) at priority `prio`, if
    /// that is more than it granted before.
    pub fn grant(&mut self, p: &HomaParams, now: Ps, prio: u8, out: &mut Vec<Packet<HomaHdr>>) {
        let to = self.received.saturating_add(p.rtt_segs).min(self.cap());
        if to > self.r_granted.max(self.r_unsched) {
            self.r_granted = to;
            let mut g = self.ctrl(p, now, kind::GRANT, false, to, 0, prio);
            if p.tail_boost {
                // a grant reaching into the message's last RTTbytes tells the sender where they start: they go at
                // unscheduled levels (see `homa_tail_boost`)
                let t = p.tail_start(self.r_len_bytes);
                if to > t {
                    g.hdr.len = t as u64 + 1;
                }
            }
            out.push(g);
        }
    }

    /// The sender: a control packet from the receiver.
    pub fn on_ctrl_at_sender(
        &mut self,
        p: &HomaParams,
        now: Ps,
        pkt: &Packet<HomaHdr>,
        out: &mut Vec<Packet<HomaHdr>>,
    ) -> HomaOutcome {
        self.sender_active = now;
        let could = self.can_send();
        match pkt.hdr.kind {
            kind::GRANT => {
                self.granted = self.granted.max(pkt.seq);
                if pkt.hdr.arg != KEEP_PRIO {
                    self.sched_prio = pkt.hdr.arg;
                }
                if pkt.hdr.len > 0 {
                    self.tail_from = self.tail_from.min((pkt.hdr.len - 1).min(NONE as u64 - 1) as u32);
                }
            }
            kind::RESEND => {
                // (what the receiver asks for, it has granted: a lost GRANT is made good here)
                let (from, to) = (pkt.seq, pkt.sack.min(self.segs));
                self.granted = self.granted.max(to);
                let sent_to = to.min(self.next_seg);
                if from < sent_to {
                    self.add_resend(from, sent_to);
                }
                if to > self.next_seg {
                    // the rest was never sent: the sender is busy with more urgent messages
                    out.push(self.ctrl(p, now, kind::BUSY, true, 0, 0, 0));
                }
            }
            kind::DONE => return HomaOutcome { sender_done: true, ..HomaOutcome::default() },
            kind::UNKNOWN => {
                // every packet it sent was lost: the unscheduled ones go again
                let sent = self.next_seg.min(self.unsched);
                if sent > 0 {
                    self.add_resend(0, sent);
                }
            }
            _ => {}
        }
        HomaOutcome { ready: !could && self.can_send(), ..HomaOutcome::default() }
    }

    /// Queue segments [from, to) to be sent again, less what is queued already (a RESEND repeated before the
    /// sender got to the first one must not send the segments twice).
    fn add_resend(&mut self, from: u32, to: u32) {
        let mut a = from;
        while a < to {
            // skip what a queued range covers
            if let Some(&(_, e)) = self.resend.iter().find(|&&(s, e)| s <= a && a < e) {
                a = e;
                continue;
            }
            // up to the next queued range's start
            let b = self.resend.iter().map(|&(s, _)| s).filter(|&s| s > a).min().unwrap_or(to).min(to);
            self.resend.push((a, b));
            a = b;
        }
    }

    /// The receiver: a control packet from the sender (BUSY, PING).
    pub fn on_ctrl_at_receiver(
        &mut self,
        p: &HomaParams,
        now: Ps,
        pkt: &Packet<HomaHdr>,
        out: &mut Vec<Packet<HomaHdr>>,
    ) {
        if pkt.hdr.kind == kind::BUSY {
            // the sender is alive: wait a full timeout more (a PING does not reset the timer, so that the
            // sender's timeouts cannot keep the receiver's from firing)
            self.receiver_active = now;
        } else if pkt.hdr.kind == kind::PING {
            if !self.known {
                out.push(self.ctrl(p, now, kind::UNKNOWN, false, 0, 0, 0));
            } else if self.complete {
                out.push(self.ctrl(p, now, kind::DONE, false, 0, 0, 0));
            } else {
                // restate the grant; what is missing the receiver's own timer asks for
                out.push(self.ctrl(p, now, kind::GRANT, false, self.r_granted.max(self.r_unsched), 0, KEEP_PRIO));
            }
        }
    }

    /// When this message's timer should fire: the receiver's RESEND timeout if it expects data, the sender's
    /// timeout if it has nothing left to send and no DONE.
    pub fn deadline(&self, p: &HomaParams) -> Ps {
        let mut d = NEVER;
        if self.known && !self.complete && self.received < self.expected() {
            d = self.receiver_active + p.resend_timeout;
        }
        if !self.can_send() {
            d = d.min(self.sender_active + p.resend_timeout);
        }
        d
    }

    /// Segments the receiver expects to have by now: everything unscheduled, and what it granted if it is
    /// granting to the message now, up to the end.
    #[inline]
    fn expected(&self) -> u32 {
        // (a message granted to its end leaves the receiver's list, active or not: all of it is expected)
        let granted = if self.r_active || self.r_granted >= self.cap() { self.r_granted } else { 0 };
        granted.max(self.r_unsched).min(self.cap())
    }

    /// The receiver starts or stops granting to this message (its rank crossed `overcommit`); a message taken
    /// up again gets a full timeout before the receiver asks for its data.
    #[inline]
    pub fn set_active(&mut self, now: Ps, active: bool) {
        if active && !self.r_active {
            self.receiver_active = now;
        }
        self.r_active = active;
    }

    /// The message's timer fired at `now`: the receiver's RESEND round and the sender's timeout, each if due.
    pub fn on_timer(&mut self, p: &HomaParams, now: Ps, out: &mut Vec<Packet<HomaHdr>>) -> HomaOutcome {
        let o = HomaOutcome::default();
        if self.known
            && !self.complete
            && self.received < self.expected()
            && now >= self.receiver_active + p.resend_timeout
        {
            self.receiver_active = now;
            self.counters.timeouts += 1;
            self.ask_again(p, now, out);
        }
        if !self.can_send() && now >= self.sender_active + p.resend_timeout {
            self.sender_active = now;
            self.counters.pings += 1;
            out.push(self.ctrl(p, now, kind::PING, true, 0, 0, 0));
        }
        o
    }

    /// The receiver asks for what it misses of what it expects: a RESEND per missing range (at most
    /// `resend_ranges`).
    fn ask_again(&self, p: &HomaParams, now: Ps, out: &mut Vec<Packet<HomaHdr>>) {
        let upto = self.expected();
        let mut from = 0;
        let mut ranges = 0;
        while ranges < p.resend_ranges {
            let a = self.first_missing(from, upto);
            if a >= upto {
                break;
            }
            let mut b = a + 1;
            while b < upto && !self.got_get(b) {
                b += 1;
            }
            out.push(self.ctrl(p, now, kind::RESEND, false, a, b, 0));
            ranges += 1;
            from = b;
        }
    }

    fn first_missing(&self, from: u32, upto: u32) -> u32 {
        let mut a = from;
        while a < upto && self.got_get(a) {
            a += 1;
        }
        a
    }
}
