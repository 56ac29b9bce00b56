//! The windowed fluid model (`run.flow_model = "window"`; tcp, dctcp, pias): instead of rates from an allocation
//! rule, each flow keeps the packet level's congestion window and sends against it, and each port keeps a fluid
//! queue. Time advances in fixed steps of `run.flow_step_ns` (1,000 ns by default: a 1,500-byte segment at 12
//! Gbps, so a step's worth of a flow at 10 Gbps is about a segment). Per step:
//!
//! - **Sending.** A flow hands its host's NIC what its window allows (the window less the bits in flight, which
//!   count the bits still in the NIC), as the packet level's TCP writes segments into the NIC's queue. Each NIC
//!   is a FIFO of those hand-overs and sends its rate's worth per step from its head: what leaves for a flow in
//!   a step is one chunk on the rest of its path. The NIC takes what its buffer has room for; the rest of a
//!   hand-over, its tail, is lost there.
//! - **A chunk's way.** It takes the round trip of its path as the queues stand when it leaves the NIC: the base
//!   RTT plus every queue's delay (bits over the port's rate) on its data's path past the NIC and on its ACKs'
//!   path. It carries an ECN mark if a port of its data path (the NIC included) holds more than its marking
//!   threshold (dctcp: `switch.ecn_threshold_bytes` where the ports mark, the NIC's with `host.nic_ecn`), and is
//!   lost if a port past the NIC is full (its buffer: `switch.buffer_bytes` per port, or the dynamic threshold's
//!   share of a shared pool for one congested port). A chunk counts at every port of its path in the same step
//!   (no pacing by the ports before: the usual approximation of a fluid network), and each port's queue grows by
//!   what enters it and falls by its rate times the step. A port takes, in the order the chunks come in a step,
//!   what its buffer holds beyond what it serves in the step, and the rest is lost: a full port drops the
//!   arrivals it has no room for, not every arrival of the step.
//! - **PIAS.** Each port and NIC has strict-priority levels (`switch.queues`, as many as the thresholds make):
//!   a flow's bits take the level of their offset in its data, a segment going below threshold j once its
//!   payload offset is past it, as the packet level tags a segment (`policy::Tagging`), so a hand-over that
//!   spans a threshold enters two NIC queues. A NIC serves its most urgent queue first; a chunk (what left the
//!   NIC for a flow in a step) takes the level of its first bits and waits behind its own level and the more
//!   urgent ones at every port; ACKs at `transport.ack_priority`. Marking compares the port's total with the
//!   threshold (`switch.ecn = "port"`, PIAS's) or the chunk's own queue (`"queue"`); losses the port's total
//!   with its buffer (no push-out, as at the packet level). Bits sent again take the level of
//!   where new data stands less them (the packet level: the level of their own offset), and PIAS's probes are
//!   not modelled (probe mode starts after 2 timeouts in a row).
//! - **ACKs.** A chunk's ACK comes back after its round trip (and not before the ACK of the chunk before it).
//!   As the packet level's TCP (`transport::tcp`): the window grows by what is acked in slow start and by one
//!   segment per window after; DCTCP's alpha is updated once per window of data from the fraction marked
//!   (`transport.dctcp_g`, from `transport.dctcp_alpha_init`), and the window is cut once per window in which a
//!   mark comes back, by alpha / 2 after that ACK's growth, which ends slow start (ssthresh = the cut window).
//! - **Losses found.** As the packet level's SACK scoreboard (RFC 6675): a lost chunk stays in flight for the sender,
//!   unknown, until `transport.dupack_threshold` segments' worth of data past it has been delivered (their duplicate
//!   ACKs, one per segment: a burst of losses with fewer delivered behind it waits for the timer; within a recovery,
//!   FACK-style as the scoreboard, the ACK of data that many segments past it; the unknown losses before it are then
//!   all known) or the timer fires (a tail loss: the last segments of a flow, or a window too small to send more).
//!   Counting the distance instead, as before, took a burst for a fast recovery where the packet level waits for its
//!   timer: TCP at window 70 and 0.8 on the leaf-spine made 137 of the 2,785 small flows time out against the packet
//!   level's 273 (196 with the count); PIAS's small flows' p99 on the fat-tree at 0.8 with ECMP and window 70 was 73%
//!   short of the packet level's (0.3% with the count). A lost chunk that held bits sent again is found only by the
//!   timer, as the scoreboard does not mark a retransmission lost twice. While a loss is unknown the ACKs of data past
//!   it are duplicates with SACKs: they neither restart the timer nor grow the window (those of older data, still in
//!   the NIC behind a loss there, move the cumulative ACK). A known loss is sent again, before new data.
//! - **Timer.** RFC 6298 as the packet level's: `rto_init_us` before a sample (3 x the handshake's round trip
//!   after it), then SRTT + 4 RTTVAR within `rto_min_us` and `rto_max_us`, restarted at each ACK that advances.
//!   Not modelled: after a loss is known, the ACKs of the data after it restart the timer here, where the packet
//!   level's cumulative ACK stands at the hole until the retransmission is acked (a lost retransmission times
//!   out here up to a round trip later). Every acked chunk is a sample (the packet level's ACK echoes its
//!   segment's own send time, so the originals' ACKs after a spurious timeout are samples too), but for the
//!   chunks of data sent again under spraying over ports (Karn's rule, as the packet level; with ECMP they are
//!   samples too, a difference kept for the results it gave). It fires when an
//!   ACK is later than the RTO: the window falls to one segment, ssthresh to half the window (at least two
//!   segments), the RTO backs off, no ECN cut is made for the data sent before it, and the losses not yet known
//!   are sent again.
//! - **Fast recovery.** A lost chunk halves the window once per window, and not for data sent before the last
//!   timeout; until the data sent before the loss is acked the window neither grows nor is cut for ECN (the
//!   packet level's recovery). An ECN cut keeps at least one segment.
//!
//! A flow's last bit arrives after its chunk's queueing on the data path and the path's pipeline (the isolated
//! flow's ideal FCT minus its wire bits at the bottleneck rate); the flow is done when every chunk is acked.
//! Set-up as the rate model: the handshake's round trip before the data.
//!
//! - **Spraying** (`run.flow_spray`). By default (`"ports"`) every port is a queue of its own, and each chunk draws its
//!   way hop by hop among the ports its packets may take, as the packet level draws one per packet; its ACK draws its
//!   own way back. Chunks that cross queues of different lengths come back out of order, and the sender reads their
//!   ACKs as the packet level's SACK scoreboard does (`ports_acks`): an ACK behind a chunk not yet acked is a SACK,
//!   which neither grows the window nor restarts the timer; a chunk with three segments' worth SACKed above it is taken
//!   for lost and sent again, halving the window (a spurious fast recovery when it was only late). Through the ports
//!   every way shares (the NICs, the last hops) an ACK comes after the one before it, as through one FIFO, by at least
//!   the chunk's time at the line rate: only the ports that vary from way to way let it pass (the queues are read at
//!   the step a chunk leaves its NIC, so without that several queues draining at once would let a later chunk pass by
//!   up to a step each). The window is measured against the pipe (the bits in flight less those SACKed), a chunk is
//!   taken for lost by the bits SACKed above it in the flow, and a SACK with a mark cuts DCTCP's window, as at the
//!   packet level. A chunk taken for lost while only late stays in flight and the receiver takes it when it comes, as
//!   the packet level's receiver takes the late original: its copy is sent (first, as a retransmission, when the window
//!   has room) as a ghost, load on the NIC and the ports that no one waits for, unless the original's ACK comes first
//!   (the scoreboard does not send again what the cumulative ACK has passed), and the original's own ACK, when it
//!   comes, ends it (no RTT sample: Karn). Before, the copy completed the flow: small flows sprayed across the fat-tree
//!   beside large ones took 75.6 us where they made a spurious fast recovery, against the packet level's 58.4 us (62.4
//!   us now), and DCTCP's small flows at window 70 and 0.8 were 19% slow (6% fast now). Not modelled there: the chunks
//!   SACKed behind a chunk only late pass the cumulative ACK when it is taken for lost rather than when it comes (the
//!   window does not grow for them either way, within the recovery; the timer restarts sooner); the bits SACKed above a
//!   chunk count from the first SACK, where the packet level counts duplicate ACKs since the last advance of the
//!   cumulative ACK; a chunk that holds both new data and data sent again is left to the timer whole if lost.
//!   `"pooled"`: a hop's ports as one resource (the rate model's), its queue and thresholds the sum of theirs,
//!   and no reordering.
//!
//! Not modelled: the packets within a chunk (a chunk is marked or lost whole), the spurious retransmissions that
//! follow a timeout at the packet level (the originals' ACKs end the recovery here), delayed ACKs, reordering
//! under ECMP (a flow's packets keep one path there), flows that wait for others (refused). Measured against the
//! packet level in docs/flow-level.md.

use super::release::Release;
use super::resources::{pooled_path, Resources};
use super::{path_times, PathTimes};
use crate::config::{BufferMode, Config, EcnMode, FlowSpray, RoutingMode, SchemeName};
use crate::flows::{FlowError, FlowSet};
use crate::net::{flow_hash, Network};
use crate::record::{Progress, RunStats};
use crate::transport::tcp::TcpParams;
use crate::units::{tx_time, Ps, NEVER, PS_PER_MS};
use rand::{RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::collections::VecDeque;

/// What one step's sending of a flow put on its path beyond the NIC.
struct Chunk {
    sent_at: Ps,
    ack_at: Ps,
    bits: f64,
    marked: bool,
    lost: bool,
    /// The flow's bits handed to the NIC up to the end of this chunk (its snd_nxt after it).
    seq: f64,
    /// It holds data sent again: lost, only the timer finds it (the scoreboard does not mark a retransmission
    /// lost a second time, RFC 6675).
    retx: bool,
    /// Under spraying over ports: the earliest its ACK can come, its time through the ports every way shares
    /// (never before the chunk's before it, so that the chunks after one not due yet need not be looked at);
    /// whether its ACK is back, and whether that ACK came behind a chunk not yet acked (a SACK: the cumulative
    /// ACK does not move, the window does not grow).
    floor: Ps,
    arrived: bool,
    sacked: bool,
}

/// The strict-priority levels of the ports (pias: `switch.queues`, a chunk's level from its offset over
/// `scheme.thresholds_bytes`; tcp and dctcp: one). Queues and NIC FIFOs are kept per resource and level,
/// `r * levels + level`.
struct Levels {
    n: usize,
    /// Where each level after the first starts, in the flow's wire bits: a segment goes to queue j + 1 when its
    /// payload offset is past threshold j (the packet level's `queue_for`), so from segment `a_j / mss + 1` on.
    starts: Vec<f64>,
    /// The ACKs' level (`transport.ack_priority`).
    ack: usize,
    /// Marking by the chunk's own queue (`switch.ecn = "queue"`) rather than the port's total.
    per_queue_ecn: bool,
}

impl Levels {
    /// The level of the bit at `pos` of a flow's data.
    #[inline]
    fn of(&self, pos: f64) -> usize {
        self.starts.iter().take_while(|&&s| pos + 1e-6 >= s).count()
    }

    /// Bits that a chunk of level `p` finds ahead of it in resource `r`'s queues (its own and the more urgent).
    #[inline]
    fn ahead(&self, q: &[f64], r: usize, p: usize) -> f64 {
        q[r * self.n..=r * self.n + p].iter().sum()
    }

    /// Bits in all of resource `r`'s queues.
    #[inline]
    fn total(&self, q: &[f64], r: usize) -> f64 {
        q[r * self.n..(r + 1) * self.n].iter().sum()
    }

    /// What a marking threshold is compared with for a chunk of level `p` at resource `r`.
    #[inline]
    fn occupancy(&self, q: &[f64], r: usize, p: usize) -> f64 {
        if self.per_queue_ecn {
            q[r * self.n + p]
        } else {
            self.total(q, r)
        }
    }
}

/// An open flow: its path, its window's state and its chunks in flight.
struct Flow {
    id: u32,
    src: u32,
    dst: u32,
    /// Incremented when the slot is reused, so that a NIC's queue never credits a later flow of the slot.
    gen: u32,
    data: Vec<u32>,
    back: Vec<u32>,
    nic: u32,
    line: f64,
    rtt: Ps,
    tail: Ps,
    data_at: Ps,
    /// The wire bits of the flow's data (what `left` started at).
    size_bits: f64,
    /// What the NIC sent for it in this step: the level of its first bits, where its last bits end in the
    /// flow's snd_nxt, whether it holds bits sent again.
    drain_level: usize,
    drain_end: f64,
    drain_retx: bool,
    /// Bits still to hand to the NIC (new data, and lost chunks to send again); bits in flight (the NIC's
    /// backlog included); bits handed to the NIC so far (snd_nxt); bits still in the NIC; bits the NIC sent for
    /// it in this step.
    left: f64,
    inflight: f64,
    seq: f64,
    backlog: f64,
    drained: f64,
    cwnd: f64,
    ssthresh: f64,
    alpha: f64,
    /// DCTCP's accounting: bits acked, the count at which the current window of data ends, its bits acked and
    /// marked. A cut is made for a chunk past `cut_until` (snd_nxt at the last cut: once per window).
    acked: f64,
    win_end: f64,
    win_bits: f64,
    win_marked: f64,
    cut_until: f64,
    chunks: VecDeque<Chunk>,
    /// The first chunk's ACK time (NEVER with none), kept here so that a step need not read the chunks of a flow
    /// whose next ACK is still to come.
    next_ack: Ps,
    srtt: f64,
    rttvar: f64,
    rto: Ps,
    timer: Ps,
    /// Fast recovery: snd_nxt when the last loss was found (no growth, no ECN cut for data sent before it).
    recover: f64,
    /// snd_nxt at the last timeout: a loss of data sent before it does not halve the window again (the packet
    /// level's recovery after a timeout).
    rto_recover: f64,
    /// A segment's serialization at the NIC (the base RTT holds it).
    first_tx: Ps,
    last_arrival: Ps,
    last_ack: Ps,
    timeouts: u32,
    lost_bits: f64,
    /// Lost bits the sender does not know of yet (still in flight for it): found when the ACK of data at least
    /// `dupack_threshold` segments past the first of them comes (their duplicate ACKs), or by the timer. The
    /// end (snd_nxt) of the first of them.
    hidden: f64,
    hidden_seq: f64,
    /// The bits delivered since the first of them was lost (their duplicate ACKs, one per segment).
    dup_seen: f64,
    /// Of `left`, the bits to send again; lost retransmissions, which only the timer finds (in flight for the
    /// sender until then).
    resend: f64,
    stuck: f64,
    /// Under spraying over ports: the bits of the chunks acked but not yet passed by the cumulative ACK (SACKed),
    /// and the bits taken for lost while they were only late, sent again.
    sacked_bits: f64,
    spurious_bits: f64,
    /// Under spraying over ports: the copies of the chunks taken for lost while only late, still to hand to the
    /// NIC (they go first, as a retransmission does), and what the NIC sent of them in this step, at which level.
    ghost: f64,
    ghost_drained: f64,
    ghost_level: usize,
    /// Under spraying over ports: the chunks taken for lost while only late, by their ACK's time, bits and mark;
    /// the first of those times (NEVER with none).
    late: Vec<(Ps, f64, bool)>,
    late_next: Ps,
    /// Under spraying over ports: the last chunk's ACK time less its delay on the ports that vary from way to
    /// way (see `sprayed`).
    shared_ack: Ps,
    /// Under spraying over ports: the chunks from the front that are acked or lost (`ports_acks` looks past them).
    scan: usize,
    /// Halvings for losses found by duplicate ACKs (the results' `fast_recoveries`).
    fast_recoveries: u32,
}

impl Flow {
    /// An ACK's round-trip sample (RFC 6298, as the packet level's), and the RTO from it.
    #[inline]
    fn sample(&mut self, sent_at: Ps, ack_at: Ps, tp: &TcpParams) {
        let sample = (ack_at - sent_at) as f64;
        if self.srtt == 0.0 {
            self.srtt = sample;
            self.rttvar = sample / 2.0;
        } else {
            self.rttvar = 0.75 * self.rttvar + 0.25 * (self.srtt - sample).abs();
            self.srtt = 0.875 * self.srtt + 0.125 * sample;
        }
        self.rto = ((self.srtt + 4.0 * self.rttvar) as Ps).clamp(tp.rto_min, tp.rto_max);
    }

    /// DCTCP's count of the bits acked and marked: alpha is updated once per window of data.
    #[inline]
    fn count(&mut self, bits: f64, marked: bool, dctcp: bool, g: f64, seg_bits: f64) {
        self.acked += bits;
        self.win_bits += bits;
        if marked {
            self.win_marked += bits;
        }
        if dctcp && self.acked >= self.win_end {
            let frac = if self.win_bits > 0.0 { self.win_marked / self.win_bits } else { 0.0 };
            self.alpha = (1.0 - g) * self.alpha + g * frac;
            self.win_bits = 0.0;
            self.win_marked = 0.0;
            self.win_end = self.seq.max(self.acked + seg_bits);
        }
    }

    /// The window grows for an acked chunk, then a mark cuts it: once per window, not during a recovery (the
    /// caller checks that the chunk is past `recover`).
    #[inline]
    fn grow(&mut self, bits: f64, seq: f64, marked: bool, seg_bits: f64, max_cwnd: f64) {
        if self.cwnd < self.ssthresh {
            self.cwnd += bits;
        } else {
            self.cwnd += seg_bits * bits / self.cwnd;
        }
        self.cwnd = self.cwnd.min(max_cwnd);
        if marked {
            self.cut(seq, seg_bits);
        }
    }

    /// DCTCP's cut for a mark on the ACK of data ending at `seq`: by alpha / 2, once per window (an ECN cut keeps
    /// at least one segment), which ends slow start.
    #[inline]
    fn cut(&mut self, seq: f64, seg_bits: f64) {
        if seq > self.cut_until {
            self.cwnd = (self.cwnd * (1.0 - self.alpha / 2.0)).max(seg_bits);
            self.ssthresh = self.cwnd;
            self.cut_until = self.seq;
        }
    }

    /// A loss found by duplicate ACKs, of data ending at `seq`: the window halved once per window as fast
    /// recovery does, which neither grows the window nor cuts it for ECN until the data sent before the loss is
    /// acked, and not again for data sent before a timeout.
    #[inline]
    fn halve_for(&mut self, seq: f64, seg_bits: f64) {
        if seq > self.recover && seq > self.rto_recover {
            self.ssthresh = (self.cwnd / 2.0).max(2.0 * seg_bits);
            self.cwnd = self.ssthresh;
            self.recover = self.seq;
            self.fast_recoveries += 1;
        }
    }
}

/// At each hop from `port` on towards host `dst`, one of the ports a packet may take, drawn at random (the
/// packet level's spraying): the resources of the way, `port`'s first. Returns where the ports that vary from
/// way to way start: the first drawn among several (those after it depend on it, but for the last hop, into
/// `dst`, which every way shares).
fn sprayed(
    net: &Network,
    of_port: &[u32],
    peer: &[u32],
    rng: &mut Xoshiro256PlusPlus,
    port: u32,
    dst: u32,
    way: &mut Vec<u32>,
) -> usize {
    way.clear();
    way.push(of_port[port as usize]);
    let mut varies = usize::MAX;
    // (32 random bits per choice, two choices per draw)
    let (mut bits, mut left) = (0u64, 0);
    let mut node = peer[port as usize];
    while node != dst {
        let mut chose = false;
        let p = net.next_port(node, dst, |n| {
            chose = true;
            if left == 0 {
                bits = rng.next_u64();
                left = 2;
            }
            left -= 1;
            let x = bits as u32;
            bits >>= 32;
            ((x as u64 * n as u64) >> 32) as u32
        });
        if chose {
            varies = varies.min(way.len());
        }
        way.push(of_port[p as usize]);
        node = peer[p as usize];
    }
    varies
}

/// Under spraying over ports, where ACKs come out of order: the ACKs back by `now` (read in the order their
/// chunks were sent, as far as a chunk whose ACK cannot be back yet), then the cumulative ACK. As the packet
/// level's SACK scoreboard: an ACK that comes behind a chunk not yet acked is a SACK (a sample, DCTCP's count of
/// marks, but no growth of the window, no restart of the timer); the cumulative ACK moves over the acked chunks
/// at the front, growing the window for those not SACKed before; a chunk not acked with `dup_bits` of data
/// SACKed above it (RFC 6675's IsLost: the packet level's three segments) is taken for lost and sent again,
/// halving the window once per window, whether it was lost or only late (then a spurious retransmission, and the
/// original, still on its way, is kept in flight until its ACK comes: `late`). A lost retransmission is left to
/// the timer, as the scoreboard does not mark a retransmission lost twice.
fn ports_acks(f: &mut Flow, now: Ps, dup_bits: f64, tp: &TcpParams, seg_bits: f64, max_cwnd: f64) {
    if f.next_ack <= now {
        // (the chunks before `scan` are acked or lost: the scan starts past them, and is behind a hole if there
        // are any, as the front is then a lost chunk)
        let mut blocked = f.scan > 0;
        let mut next = NEVER;
        let mut first_pending = None;
        for i in f.scan..f.chunks.len() {
            let c = &mut f.chunks[i];
            if c.floor > now {
                next = next.min(c.floor);
                first_pending.get_or_insert(i);
                break;
            }
            if !c.arrived && !c.lost && c.ack_at <= now {
                c.arrived = true;
                c.sacked = blocked;
                let (sent_at, ack_at, bits, marked, seq, retx) = (c.sent_at, c.ack_at, c.bits, c.marked, c.seq, c.retx);
                f.sacked_bits += bits;
                // (Karn: the ACK of data sent again is no sample, as at the packet level)
                if !retx {
                    f.sample(sent_at, ack_at, tp);
                }
                f.count(bits, marked, tp.dctcp, tp.g, seg_bits);
                if blocked && marked && seq > f.recover {
                    // (a SACK with a mark cuts the window as any ACK with ECE does, outside a recovery)
                    f.cut(seq, seg_bits);
                }
                continue;
            }
            if !c.arrived {
                blocked = true;
                if !c.lost {
                    next = next.min(c.ack_at);
                    first_pending.get_or_insert(i);
                }
            }
        }
        f.next_ack = next;
        f.scan = first_pending.unwrap_or(f.chunks.len());
    }
    let mut advanced: Option<Ps> = None;
    // (the originals of chunks taken for lost while only late, as they come: the receiver takes them, and the
    // cumulative ACK moves over their copies)
    if f.late_next <= now {
        let mut next = NEVER;
        let mut i = 0;
        while i < f.late.len() {
            let (at, bits, marked) = f.late[i];
            if at <= now {
                f.late.swap_remove(i);
                f.inflight -= bits;
                // (a copy not yet sent is not sent: its data is acked, as the packet level's scoreboard skips what
                // lies below the cumulative ACK; the window's halving had usually kept it back)
                f.ghost -= f.ghost.min(bits);
                f.count(bits, marked, tp.dctcp, tp.g, seg_bits);
                advanced = Some(advanced.map_or(at, |a| a.max(at)));
                f.last_ack = f.last_ack.max(at);
            } else {
                next = next.min(at);
                i += 1;
            }
        }
        f.late_next = next;
    }
    loop {
        while f.chunks.front().is_some_and(|c| c.arrived) {
            let c = f.chunks.pop_front().unwrap();
            f.scan = f.scan.saturating_sub(1);
            f.inflight -= c.bits;
            f.sacked_bits -= c.bits;
            // (a chunk SACKed before moves the cumulative ACK now, when the hole before it is filled)
            let at = if c.sacked { now } else { c.ack_at };
            advanced = Some(advanced.map_or(at, |a| a.max(at)));
            f.last_ack = f.last_ack.max(at);
            if !c.sacked && c.seq > f.recover {
                f.grow(c.bits, c.seq, c.marked, seg_bits, max_cwnd);
            }
        }
        // (the front, a hole: taken for lost with enough SACKed above it)
        let Some(c) = f.chunks.front() else { break };
        if c.retx || f.sacked_bits < dup_bits - 1e-6 || sacked_above(&f.chunks, c.seq) < dup_bits - 1e-6 {
            break;
        }
        let c = f.chunks.pop_front().unwrap();
        f.scan = f.scan.saturating_sub(1);
        if c.lost {
            f.inflight -= c.bits;
            f.left += c.bits;
            f.resend += c.bits;
            f.lost_bits += c.bits;
        } else {
            // (only late: still in flight, and the receiver takes it when it comes, as the packet level's; its
            // copy sent now is a ghost, load on the NIC and the ports that no one waits for. The pipe leaves the
            // chunk out until its copy is handed over, as the scoreboard counts a lost segment sent again. No RTT
            // sample from its ACK: its data was sent again)
            f.late.push((c.ack_at, c.bits, c.marked));
            f.late_next = f.late_next.min(c.ack_at);
            f.ghost += c.bits;
        }
        f.halve_for(c.seq, seg_bits);
    }
    if let Some(at) = advanced {
        f.timer = if f.inflight > 1e-9 { at + f.rto } else { NEVER };
    }
}

/// The bits SACKed above `seq` in the flow (the chunks acked past it): a chunk lost in the NIC is queued for its
/// ACK when it is handed over, ahead of older data still in the NIC, so the order of the chunks is not quite
/// the order of the data.
fn sacked_above(chunks: &VecDeque<Chunk>, seq: f64) -> f64 {
    chunks.iter().filter(|c| c.arrived && c.seq > seq + 1e-6).map(|c| c.bits).sum()
}

/// A hand-over waiting in a NIC's queue: the flow's slot and generation, its bits not yet sent, where it ends in
/// the flow's snd_nxt, whether it holds bits sent again.
struct HandOver {
    slot: u32,
    gen: u32,
    bits: f64,
    end: f64,
    retx: bool,
    /// A copy of a chunk taken for lost while only late: load on the NIC and the ports, awaited by no one.
    ghost: bool,
}

/// Whether the windowed model runs this scheme.
pub(super) fn supports(name: SchemeName) -> bool {
    matches!(name, SchemeName::Tcp | SchemeName::Dctcp | SchemeName::Pias)
}

/// Run `flows` with the windowed model; returns the time the run ended.
pub(super) fn run(
    cfg: &Config,
    flows: &FlowSet,
    net: &Network,
    results: &mut Release<'_>,
    stats: &mut RunStats,
    progress: Option<&Progress>,
) -> Result<Ps, FlowError> {
    if !supports(cfg.scheme.name) {
        return Err(FlowError::new(format!(
            "run.flow_model = \"window\" models tcp, dctcp and pias, not {} (the rate model, \"rates\", has the \
             others)",
            cfg.scheme.name.as_str()
        )));
    }
    if (0..flows.len()).any(|i| flows.parent(i).is_some()) {
        return Err(FlowError::new(
            "run.flow_model = \"window\" does not take flows that wait for others (a trace's after column); \
             the rate model (\"rates\") does",
        ));
    }
    let t = &cfg.transport;
    let (mss, header) = (t.mss_bytes, t.header_bytes);
    let seg_bits = (mss + header) as f64 * 8.0;
    let max_cwnd = if t.max_cwnd_packets > 0 { t.max_cwnd_packets as f64 * seg_bits } else { f64::INFINITY };
    let spray = cfg.routing.mode == RoutingMode::Spray;
    // (under spraying over ports: every port a resource of its own, a chunk's way drawn hop by hop)
    let ports_spray = spray && cfg.run.flow_spray == FlowSpray::Ports;
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(cfg.seed ^ 0x5350_5241_5900);
    let (mut way, mut way_back): (Vec<u32>, Vec<u32>) = (Vec::new(), Vec::new());
    // (where the ports that vary from way to way start on each, as `sprayed` finds)
    let (mut varies, mut varies_back) = (usize::MAX, usize::MAX);
    let tp = TcpParams::from_config(cfg);
    // (the data past a lost chunk that its duplicate ACKs need; none with `dupack_threshold` 0, where only the
    // timer finds a loss)
    let dup_bits = if tp.dupack_threshold > 0 { tp.dupack_threshold as f64 * seg_bits } else { f64::INFINITY };
    let dctcp = tp.dctcp;
    let pias = cfg.scheme.name == SchemeName::Pias;
    // (the levels a chunk can take: the thresholds' queues, within the ports' queues)
    let nl = if pias { (cfg.switch.queues.max(1) as usize).min(cfg.scheme.thresholds_bytes.len() + 1) } else { 1 };
    let lv = Levels {
        n: nl,
        starts: if pias {
            cfg.scheme.thresholds_bytes.iter().map(|&a| (a / mss as u64 + 1) as f64 * seg_bits).collect()
        } else {
            Vec::new()
        },
        ack: (t.ack_priority as usize).min(nl - 1),
        per_queue_ecn: cfg.switch.ecn == EcnMode::Queue,
    };
    let step: Ps = (cfg.run.flow_step_ns * 1000.0).round().max(1.0) as Ps;
    let dt = step as f64 / 1e12;
    let limit = (cfg.run.time_limit_ms * PS_PER_MS as f64).round() as Ps;
    // per resource: the queue (bits), marking threshold and buffer (bits), what enters it in this step, whether
    // it is a NIC (a FIFO of hand-overs: slot, generation, bits)
    let sw = &cfg.switch;
    let switch_full = match sw.buffer {
        BufferMode::Port => sw.buffer_bytes,
        _ => (sw.shared_buffer_bytes as f64 * sw.dt_alpha / (1.0 + sw.dt_alpha)) as u64,
    };
    let nic_full = cfg.host.nic_buffer(sw.buffer_bytes);
    let switch_k = (dctcp && sw.ecn != EcnMode::Off).then_some(sw.ecn_threshold_bytes);
    let nic_k = (dctcp && cfg.host.nic_ecn).then_some(sw.ecn_threshold_bytes);
    let mut is_nic_port = vec![false; net.ports.len()];
    for &p in &net.host_port {
        is_nic_port[p as usize] = true;
    }
    let mut res = Resources::default();
    // (each port's far end, in a table of its own: a chunk's way is walked at every step)
    let peer: Vec<u32> = if ports_spray { net.ports.iter().map(|p| p.peer).collect() } else { Vec::new() };
    if ports_spray {
        for p in 0..net.ports.len() as u32 {
            res.of_port(p, net);
        }
    }
    let mut q: Vec<f64> = Vec::new();
    let mut ps_per_bit: Vec<f64> = Vec::new();
    // (switch ports whose queue is not empty or that something entered in this step)
    let mut busy: Vec<u32> = Vec::new();
    let mut is_busy: Vec<bool> = Vec::new();
    let mut k_bits: Vec<f64> = Vec::new();
    let mut b_bits: Vec<f64> = Vec::new();
    let mut inflow: Vec<f64> = Vec::new();
    // (per resource: the bits that entered it in this step, all levels)
    let mut entered: Vec<f64> = Vec::new();
    let mut fifo: Vec<VecDeque<HandOver>> = Vec::new();
    // (the NICs that hold anything, and whether each resource is one of them)
    let mut nics: Vec<u32> = Vec::new();
    let mut nic_on: Vec<bool> = Vec::new();
    // (per NIC: the bits in its FIFO)
    let mut nic_q: Vec<f64> = Vec::new();

    let mut order: Vec<u32> = (0..flows.len() as u32).collect();
    order.sort_by_key(|&i| (flows.start_ps[i as usize], i));
    let mut next = 0;
    // the flows' slots (reused), those open (past their set-up) and those in their set-up
    let mut slots: Vec<Flow> = Vec::new();
    let mut free: Vec<u32> = Vec::new();
    let mut open: Vec<u32> = Vec::new();
    let mut setting_up: Vec<u32> = Vec::new();
    // (per slot, compact so that an idle flow costs a step no more than a look here: the earliest time its flow
    // has anything to do, an ACK or its timer, or 0 while its window has room for data it has; and whether its
    // NIC sent it more than a trace in this step. A flow waiting on its ACKs is not visited, and the results are
    // the same bits: 3-9% less time on 8,000 flows of web search on the leaf-spine at 0.6 and 0.8, as the chunks
    // that leave the NICs, one per step and sending flow, take most of it)
    let mut wake: Vec<Ps> = Vec::new();
    let mut sent: Vec<bool> = Vec::new();
    let mut now: Ps = 0;
    loop {
        let end = now + step;
        // arrivals in this step
        while next < order.len() && flows.start_ps[order[next] as usize] < end {
            let id = order[next];
            next += 1;
            let i = id as usize;
            let (src, dst, size) = (flows.src[i], flows.dst[i], flows.size_bytes[i]);
            let hops = net.ecmp_path(src, dst, flow_hash(id, false));
            let PathTimes { hop_list, ideal, rtt, ctrl_rtt, wire_bits, tail } = path_times(net, &hops, size, t);
            let (data, back): (Vec<u32>, Vec<u32>) = if ports_spray {
                // (the ways are drawn chunk by chunk: the NICs alone are the flow's own)
                let (nic, nic_back) = (net.host_port[src as usize], net.host_port[dst as usize]);
                (vec![res.of_port(nic, net)], vec![res.of_port(nic_back, net)])
            } else if spray {
                (pooled_path(net, src, dst, &mut res), pooled_path(net, dst, src, &mut res))
            } else {
                (
                    hops.iter().map(|&p| res.of_port(p, net)).collect(),
                    net.ecmp_path(dst, src, flow_hash(id, true)).iter().map(|&p| res.of_port(p, net)).collect(),
                )
            };
            for r in nic_on.len()..res.capacity.len() {
                let p = res.first_port[r] as usize;
                let nic = is_nic_port[p];
                let (kk, bb) = if nic { (nic_k, nic_full) } else { (switch_k, switch_full) };
                let ports = (res.capacity[r] / net.ports[p].rate_bps as f64).round().max(1.0);
                ps_per_bit.push(1e12 / res.capacity[r]);
                k_bits.push(kk.map_or(f64::INFINITY, |k| k as f64 * 8.0 * ports));
                b_bits.push(bb as f64 * 8.0 * ports);
                is_busy.push(false);
                entered.push(0.0);
                for _ in 0..nl {
                    q.push(0.0);
                    inflow.push(0.0);
                    fifo.push(VecDeque::new());
                    nic_q.push(0.0);
                }
                nic_on.push(false);
            }
            let r = results.row(i);
            results.cols.start_ps[r] = flows.start_ps[i];
            results.cols.ideal_fct_ps[r] = ideal;
            stats.connections_opened += 1;
            let srtt = if t.handshake { ctrl_rtt as f64 } else { 0.0 };
            let rto = if t.handshake { ((3.0 * srtt) as Ps).clamp(tp.rto_min, tp.rto_max) } else { tp.rto_init };
            let cwnd = (t.init_cwnd_packets as f64 * seg_bits).min(max_cwnd);
            let f = Flow {
                id,
                src,
                dst,
                gen: 0,
                nic: data[0],
                data,
                back,
                line: net.line_rate_bps(src) as f64,
                rtt,
                tail,
                data_at: flows.start_ps[i] + if t.handshake { ctrl_rtt } else { 0 },
                left: wire_bits,
                size_bits: wire_bits,
                drain_level: 0,
                drain_end: 0.0,
                drain_retx: false,
                inflight: 0.0,
                seq: 0.0,
                backlog: 0.0,
                drained: 0.0,
                cwnd,
                ssthresh: f64::INFINITY,
                alpha: tp.alpha_init,
                acked: 0.0,
                win_end: cwnd,
                win_bits: 0.0,
                win_marked: 0.0,
                cut_until: 0.0,
                chunks: VecDeque::new(),
                next_ack: NEVER,
                srtt,
                rttvar: srtt / 2.0,
                rto,
                timer: NEVER,
                recover: -1.0,
                rto_recover: -1.0,
                first_tx: tx_time(mss + header, hop_list[0].0),
                last_arrival: 0,
                last_ack: 0,
                timeouts: 0,
                lost_bits: 0.0,
                hidden: 0.0,
                hidden_seq: 0.0,
                dup_seen: 0.0,
                resend: 0.0,
                stuck: 0.0,
                sacked_bits: 0.0,
                shared_ack: 0,
                scan: 0,
                spurious_bits: 0.0,
                ghost: 0.0,
                ghost_drained: 0.0,
                ghost_level: 0,
                late: Vec::new(),
                late_next: NEVER,
                fast_recoveries: 0,
            };
            let k = match free.pop() {
                Some(k) => {
                    let gen = slots[k as usize].gen.wrapping_add(1);
                    slots[k as usize] = Flow { gen, ..f };
                    wake[k as usize] = 0;
                    sent[k as usize] = false;
                    k
                }
                None => {
                    slots.push(f);
                    wake.push(0);
                    sent.push(false);
                    (slots.len() - 1) as u32
                }
            };
            setting_up.push(k);
        }
        // set-ups done by the end of this step
        let mut j = 0;
        while j < setting_up.len() {
            if slots[setting_up[j] as usize].data_at < end {
                open.push(setting_up.swap_remove(j));
            } else {
                j += 1;
            }
        }
        stats.max_concurrent_flows = stats.max_concurrent_flows.max((open.len() + setting_up.len()) as u64);
        if open.is_empty() && setting_up.is_empty() && next >= order.len() {
            break;
        }
        if now > limit {
            stats.hit_time_limit = true;
            break;
        }
        stats.events += 1;
        if let Some(p) = progress.filter(|_| stats.events % 1024 == 0) {
            p.set(stats.flows_finished, now);
        }
        let mut finished = false;
        let mut j = 0;
        while j < open.len() {
            let k = open[j];
            if wake[k as usize] > now {
                j += 1;
                continue;
            }
            let f = &mut slots[k as usize];
            // the ACKs back by now
            if ports_spray {
                ports_acks(f, now, dup_bits, &tp, seg_bits, max_cwnd);
            }
            while !ports_spray && f.next_ack <= now {
                let c = f.chunks.pop_front().unwrap();
                f.next_ack = f.chunks.front().map_or(NEVER, |c| c.ack_at);
                if c.lost {
                    // (unknown to the sender until data past it is acked; a lost retransmission until the timer)
                    if c.retx {
                        f.stuck += c.bits;
                    } else {
                        if f.hidden == 0.0 {
                            f.hidden_seq = c.seq;
                            f.dup_seen = 0.0;
                        }
                        f.hidden += c.bits;
                    }
                    continue;
                }
                f.inflight -= c.bits;
                // (an ACK behind an unknown loss is a duplicate with a SACK: it neither restarts the timer nor grows
                // the window, as the packet level's cumulative ACK stands at the hole)
                let duplicate = (f.hidden > 0.0 && c.seq > f.hidden_seq) || f.stuck > 0.0;
                // (outside a recovery the packet level's sender needs `dupack_threshold` duplicate ACKs, one per
                // segment delivered past the hole, so a burst of losses with fewer delivered behind it waits for the
                // timer; within one, the scoreboard marks lost what lies that many segments below the highest
                // SACKed, FACK-style)
                // (a chunk lost in the NIC is queued for its ACK ahead of older data still in the NIC: that data
                // moves the cumulative ACK, it is no duplicate)
                if f.hidden > 0.0 && c.seq > f.hidden_seq {
                    f.dup_seen += c.bits;
                }
                // (a recovery after a timeout too: the packet level has marked what was outstanding lost)
                let past =
                    if f.hidden_seq <= f.recover.max(f.rto_recover) { c.seq - f.hidden_seq } else { f.dup_seen };
                if f.hidden > 0.0 && past >= dup_bits - 1e-6 {
                    // (enough data past the unknown losses has come: their duplicate ACKs tell them; sent again)
                    f.inflight -= f.hidden;
                    f.left += f.hidden;
                    f.resend += f.hidden;
                    f.lost_bits += f.hidden;
                    f.hidden = 0.0;
                    f.halve_for(f.hidden_seq, seg_bits);
                }
                // (each ACK echoes its segment's send time, as the packet level's: a sample even after a timeout)
                f.sample(c.sent_at, c.ack_at, &tp);
                if !duplicate {
                    f.timer = if f.inflight > 1e-9 { c.ack_at + f.rto } else { NEVER };
                }
                f.last_ack = c.ack_at;
                f.count(c.bits, c.marked, dctcp, tp.g, seg_bits);
                if c.seq > f.recover && !duplicate {
                    f.grow(c.bits, c.seq, c.marked, seg_bits, max_cwnd);
                }
            }
            // the retransmission timer: ssthresh half the window, the window one segment, the RTO backed off (the
            // originals' ACKs then end the recovery; no ECN cut for the data sent before it)
            let fired = f.timer <= now;
            if fired {
                f.timeouts += 1;
                // (the losses it did not know of, and the lost retransmissions, are sent again; under spraying
                // over ports, the lost chunks whose ACK is overdue)
                let mut found = f.hidden + f.stuck;
                if ports_spray {
                    f.scan = 0;
                    f.chunks.retain(|c| {
                        let overdue = c.lost && c.ack_at <= now;
                        if overdue {
                            found += c.bits;
                        }
                        !overdue
                    });
                }
                f.inflight -= found;
                f.left += found;
                f.resend += found;
                f.lost_bits += found;
                f.hidden = 0.0;
                f.stuck = 0.0;
                f.ssthresh = (f.cwnd / 2.0).max(2.0 * seg_bits);
                f.cwnd = seg_bits;
                f.rto = (f.rto * 2).min(tp.rto_max);
                f.timer = now + f.rto;
                f.cut_until = f.seq;
                f.rto_recover = f.seq;
            }
            // done: everything handed over and acked
            if f.left <= 1e-6 && f.inflight <= 1e-6 {
                let i = f.id as usize;
                let r = results.row(i);
                results.cols.finish_ps[r] = f.last_arrival;
                results.cols.sender_done_ps[r] = f.last_ack;
                results.cols.bytes_sent[r] =
                    flows.size_bytes[i] + super::payload_of(f.lost_bits + f.spurious_bits, mss, header);
                results.cols.bytes_delivered[r] = flows.size_bytes[i];
                results.cols.timeouts[r] = f.timeouts;
                results.cols.fast_recoveries[r] = f.fast_recoveries;
                results.cols.bytes_dropped[r] = (f.lost_bits / 8.0) as u64;
                results.done(i);
                stats.flows_finished += 1;
                finished = true;
                free.push(k);
                open.swap_remove(j);
                continue;
            }
            // what the window allows goes into the NIC's queue (lost if its buffer is full)
            // (the window less the pipe: bits in flight, less those SACKed, as the packet level's scoreboard
            // counts it, and those taken for lost whose copy is still to go; nothing is SACKed but under spraying
            // over ports)
            let room = (f.cwnd - (f.inflight - f.sacked_bits - f.ghost)).max(0.0);
            // (the copies of chunks only late go first, as a retransmission does; the NIC keeps what it has room
            // for)
            let ghost = f.ghost.min(room);
            if ghost > 1e-6 {
                f.ghost -= ghost;
                let n = f.nic as usize;
                let taken = ghost.min((b_bits[n] - lv.total(&nic_q, n)).max(0.0));
                f.spurious_bits += taken;
                if taken > 1e-6 {
                    // (at the level of bits sent again: where new data stands less them)
                    let l = lv.of((f.size_bits - (f.left - f.resend) - ghost).max(0.0)).min(nl - 1);
                    if !nic_on[n] {
                        nic_on[n] = true;
                        nics.push(n as u32);
                    }
                    let ghost_hand = HandOver { slot: k, gen: f.gen, bits: taken, end: f.seq, retx: true, ghost: true };
                    fifo[n * nl + l].push_back(ghost_hand);
                    nic_q[n * nl + l] += taken;
                }
            }
            let push = f.left.min(room - ghost);
            if push > 1e-6 {
                // (where in the flow's data this starts: the lost bits to send again count from where new data
                // stands less them, as if sent again at the offset they were lost at)
                let mut pos = f.size_bits - f.left;
                // (what is sent again goes first: snd_nxt up to `again_end`)
                let again = push.min(f.resend);
                f.resend -= again;
                let again_end = f.seq + again;
                let start = f.seq;
                f.left -= push;
                f.inflight += push;
                f.seq += push;
                let n = f.nic as usize;
                let at = f.data_at.max(now);
                // (the NIC takes what its buffer has room for; the rest, the hand-over's tail, is lost there)
                let nic_bits = lv.total(&nic_q, n);
                let taken = push.min((b_bits[n] - nic_bits).max(0.0));
                if push - taken > 1e-6 {
                    let wait = (nic_bits * ps_per_bit[n]) as Ps;
                    let ack_at = (at + wait + f.rtt).max(f.chunks.back().map_or(0, |c| c.ack_at));
                    let retx = again_end > start + taken + 1e-9;
                    let bits = push - taken;
                    let lost = Chunk {
                        sent_at: at,
                        ack_at,
                        bits,
                        marked: false,
                        lost: true,
                        seq: f.seq,
                        retx,
                        floor: f.shared_ack,
                        arrived: false,
                        sacked: false,
                    };
                    f.chunks.push_back(lost);
                    f.next_ack = f.next_ack.min(ack_at);
                }
                if taken > 1e-6 {
                    f.backlog += taken;
                    if !nic_on[n] {
                        nic_on[n] = true;
                        nics.push(n as u32);
                    }
                    // (into the NIC's queue of each level it spans)
                    let (mut rest, mut end) = (taken, start);
                    while rest > 1e-9 {
                        let l = lv.of(pos).min(nl - 1);
                        let to_next = if l + 1 < nl { lv.starts.get(l).map_or(rest, |&s| s - pos) } else { rest };
                        let piece = rest.min(to_next);
                        let retx = again_end > end + 1e-9;
                        end += piece;
                        let hand = HandOver { slot: k, gen: f.gen, bits: piece, end, retx, ghost: false };
                        fifo[n * nl + l].push_back(hand);
                        nic_q[n * nl + l] += piece;
                        pos += piece;
                        rest -= piece;
                    }
                }
                if f.timer == NEVER {
                    f.timer = at + f.rto;
                }
            }
            // (nothing changes the window, the pipe or the data left but an ACK or the timer)
            let room = (f.cwnd - (f.inflight - f.sacked_bits - f.ghost)).max(0.0);
            // (after a timeout under spraying over ports, the SACKed chunks behind the lost ones it took away move
            // the cumulative ACK at the next step)
            wake[k as usize] =
                if fired || (f.left + f.ghost).min(room) > 1e-6 { 0 } else { f.next_ack.min(f.timer).min(f.late_next) };
            j += 1;
        }
        if finished {
            results.release()?;
        }
        // each NIC sends its rate's worth from the head of its most urgent queue that holds anything
        for &n in &nics {
            let n = n as usize;
            let mut budget = res.capacity[n] * dt;
            for l in 0..nl {
                let i = n * nl + l;
                while budget > 1e-9 {
                    let Some(head) = fifo[i].front_mut() else { break };
                    let take = head.bits.min(budget);
                    budget -= take;
                    head.bits -= take;
                    nic_q[i] -= take;
                    let f = &mut slots[head.slot as usize];
                    if f.gen == head.gen && head.ghost {
                        f.ghost_drained += take;
                        f.ghost_level = l;
                        sent[head.slot as usize] |= f.ghost_drained > 1e-6;
                    } else if f.gen == head.gen {
                        if f.drained <= 1e-6 {
                            f.drain_level = l;
                        }
                        f.drained += take;
                        f.drain_end = head.end - head.bits;
                        f.drain_retx |= head.retx;
                        sent[head.slot as usize] |= f.drained > 1e-6;
                    }
                    if head.bits <= 1e-9 {
                        fifo[i].pop_front();
                    }
                }
            }
        }
        // what left each NIC: a chunk on the rest of the path (from a flow that moves on every step, so that no
        // flow is always first to a full port's room)
        let first = if open.is_empty() { 0 } else { (stats.events % open.len() as u64) as usize };
        for &k in open[first..].iter().chain(&open[..first]) {
            if !sent[k as usize] {
                continue;
            }
            sent[k as usize] = false;
            let f = &mut slots[k as usize];
            // (a ghost alone makes no chunk: only its load on the way)
            let real = f.drained > 1e-6;
            let bits = if real { f.drained.min(f.backlog) } else { 0.0 };
            if real {
                f.drained = 0.0;
                f.backlog -= bits;
            }
            let ghost = std::mem::take(&mut f.ghost_drained);
            let n = f.nic as usize;
            let p = if real { f.drain_level } else { f.ghost_level };
            let from = f.data_at.max(now);
            if ports_spray {
                let (nic, nic_back) = (net.host_port[f.src as usize], net.host_port[f.dst as usize]);
                varies = sprayed(net, &res.port, &peer, &mut rng, nic, f.dst, &mut way);
                if real {
                    // (a ghost alone has no ACK to draw a way for)
                    varies_back = sprayed(net, &res.port, &peer, &mut rng, nic_back, f.src, &mut way_back);
                }
            } else {
                way.clear();
                way.extend_from_slice(&f.data);
                way_back.clear();
                way_back.extend_from_slice(&f.back);
            }
            let wait = (lv.ahead(&q, n, p) * ps_per_bit[n]) as Ps;
            // (the queues' delays on the ways there and back; of which, on the ports that vary from way to way)
            let (mut qd, mut qb, mut qv): (Ps, Ps, Ps) = (0, 0, 0);
            let mut marked = lv.occupancy(&q, n, p) > k_bits[n];
            let mut lost = false;
            for (h, &l) in way.iter().enumerate().skip(1) {
                let l = l as usize;
                let d = (lv.ahead(&q, l, p) * ps_per_bit[l]) as Ps;
                qd += d;
                if h >= varies && h + 1 < way.len() {
                    qv += d;
                }
                marked |= lv.occupancy(&q, l, p) > k_bits[l];
                // (a port takes what its buffer holds beyond what it serves in the step, in the order the
                // chunks come; the rest is lost, as a full port drops only the arrivals it has no room for)
                lost |= lv.total(&q, l) + entered[l] + (bits + ghost) > b_bits[l] + res.capacity[l] * dt + 1e-6;
            }
            if !lost {
                for &l in &way[1..] {
                    inflow[l as usize * nl + p] += bits;
                    if ghost > 0.0 {
                        inflow[l as usize * nl + f.ghost_level] += ghost;
                    }
                    entered[l as usize] += bits + ghost;
                    if !is_busy[l as usize] {
                        is_busy[l as usize] = true;
                        busy.push(l);
                    }
                }
            }
            if !real {
                continue;
            }
            for (h, &l) in way_back.iter().enumerate() {
                let d = (lv.ahead(&q, l as usize, lv.ack) * ps_per_bit[l as usize]) as Ps;
                qb += d;
                if h >= varies_back && h + 1 < way_back.len() {
                    qv += d;
                }
            }
            let out = from + (bits / f.line * 1e12) as Ps;
            // (the base RTT holds a segment's serialization at the NIC already)
            let mut ack_at = out.saturating_sub(f.first_tx).max(from) + f.rtt + qd + qb;
            let mut floor = 0;
            if ports_spray {
                // (an ACK overtakes the one before it only by the ports their ways do not share: through the
                // ports every way takes, as through one FIFO, it comes after it, by at least the chunk's time at
                // the line rate. The queues are read at the step a chunk leaves its NIC, not when it reaches each
                // port, so that several queues draining at once would otherwise let a later chunk pass by up to
                // a step per queue, which the packet level never does; and chunks given one time would pass one
                // another by the few ns of the core's queues. On the leaf-spine, whose 40 Gbps core queues hold
                // a few ns, that made 7.1 spurious fast recoveries per large DCTCP flow, then 2.2 with the FIFO
                // order alone, against the packet level's 0.32; 0.23 with both.)
                let shared = (ack_at - qv).max(f.shared_ack + (bits / f.line * 1e12) as Ps);
                f.shared_ack = shared;
                ack_at = shared + qv;
                floor = shared;
            } else {
                // (one way for all: an ACK does not overtake the one before it)
                ack_at = ack_at.max(f.chunks.back().map_or(0, |c| c.ack_at));
            }
            let (seq, retx) = (f.drain_end, f.drain_retx);
            f.drain_retx = false;
            let sent_at = from.saturating_sub(wait);
            let chunk = Chunk { sent_at, ack_at, bits, marked, lost, seq, retx, floor, arrived: false, sacked: false };
            f.chunks.push_back(chunk);
            f.next_ack = f.next_ack.min(ack_at);
            wake[k as usize] = wake[k as usize].min(ack_at);
            if !lost {
                f.last_arrival = f.last_arrival.max(out + qd + f.tail);
            }
        }
        // the queues: a NIC's is its flows' backlog, a switch port's grows by what entered and falls by its rate
        let mut b = 0;
        while b < nics.len() {
            let n = nics[b] as usize;
            let mut empty = true;
            for i in n * nl..(n + 1) * nl {
                if fifo[i].is_empty() {
                    nic_q[i] = 0.0; // (no rounding left over)
                } else {
                    empty = false;
                }
                q[i] = nic_q[i];
            }
            if empty {
                nic_on[n] = false;
                nics.swap_remove(b);
            } else {
                b += 1;
            }
        }
        let mut b = 0;
        while b < busy.len() {
            let l = busy[b] as usize;
            // (the rate's worth served from the most urgent queue down; a full buffer keeps the more urgent)
            let mut budget = res.capacity[l] * dt;
            let mut kept = 0.0;
            entered[l] = 0.0;
            for i in l * nl..(l + 1) * nl {
                let x = q[i] + inflow[i];
                inflow[i] = 0.0;
                if x > budget {
                    q[i] = x - budget;
                    budget = 0.0;
                } else {
                    q[i] = 0.0;
                    budget -= x;
                }
                q[i] = q[i].min(b_bits[l] - kept);
                kept += q[i];
            }
            if kept > 0.0 {
                b += 1;
            } else {
                is_busy[l] = false;
                busy.swap_remove(b);
            }
        }
        now = end;
    }
    if let Some(p) = progress {
        p.set(stats.flows_finished, now);
    }
    Ok(now)
}
