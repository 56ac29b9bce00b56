//! An egress port: the queues in front of one direction of a link, its transmitter, and its wire.
//!
//! A port holds K strict-priority FIFO queues (priority p goes to queue min(p, K-1); queue 0 is served first),
//! a buffer limit (bytes per port, or a switch-wide shared pool with dynamic thresholds), ECN marking on the
//! instantaneous occupancy, and drop-tail. Occupancy counts the packets *waiting* in the queues, not the one
//! being serialized (as ns-2's queues do). ECN marks an ECN-capable packet when the occupancy including the
//! arriving packet exceeds the threshold (per port or per queue).
//!
//! Tie rule: a packet that arrives at the instant the transmitter becomes free is admitted after the
//! transmitter has started the next waiting packet, so the occupancy it sees excludes that packet (the engine
//! enforces this; see `engine`).
//!
//! The transmitter serializes one packet at a time at the link rate (store and forward). The wire is a FIFO
//! of packets in flight, each with its arrival time at the far end: every packet on a link has the same
//! propagation delay, so they arrive in the order they left, and the event queue needs one entry per link
//! (for the head packet), not one per packet.
//!
//! Two ways to run a port, with bit-identical results:
//! - *Event-driven* (any discipline): waiting packets sit in their queues; the engine serves the next one
//!   when the transmitter becomes free (a "transmitter free" event, or inline under the tie rule; with lazy
//!   departures, below, when the port is next looked at, with no event).
//! - *FIFO* (`fifo`; when the engine knows that all of the run's traffic maps to one queue): a FIFO's
//!   departure times are known at enqueue, since a packet starts exactly when the packets ahead of it are
//!   done. [`Port::commit`] puts an admitted packet on the wire at once with its future start time
//!   (start = max(now, busy_until)), so the port needs no event of its own. The packets committed to start
//!   strictly after `now` are the port's occupancy at `now` (tie rule: a packet starting at `now` has left
//!   the queue). The port keeps a ledger of the last `waiting` entries of the wire (back to back, the
//!   oldest starting at `next_start`, `bytes` in all), and [`Port::retire_started`] drops the ones that
//!   have started (amortised O(1)), after which the ledger is exactly that occupancy. The queue's counters
//!   live in port fields ([`Port::counters`] assembles them). A port's admissions must come in time order
//!   (the engine's do: each at its event's time, or on the hosts' side of a two-thread run in the order the
//!   switches' side made them).
//!
//!   Retirement is lazy: [`Port::offer_fifo`] first bounds the occupancy by the time the transmitter is
//!   still booked for. With `ps_per_byte` picoseconds per byte, the bytes waiting at `now` take at most
//!   `busy_until - now` to serialize, so when that plus the new packet's own serialization is within the
//!   time to serialize the smallest of the buffer limit, the ECN threshold and the largest occupancy seen so
//!   far ([`Port::quiet_ps`]), the packet is admitted, unmarked, and cannot raise the maximum: every decision
//!   is already known, and it is committed without reading a single waiting packet. Otherwise the port
//!   retires what has started and decides on the exact occupancy, as an event-driven port would. Packets
//!   that are never retired that way are retired as they reach the far end ([`Port::take_arrival`]), whose
//!   slot is being read then anyway; and a packet that starts at once finds nothing waiting, which retires
//!   every packet ahead of it without reading them. Between exact admissions `bytes` therefore runs ahead
//!   of the occupancy; the decisions, counters and maxima are exact. (A remote port of a two-thread run
//!   retires at every admission: its wire does not keep the packets that have started.)
//!
//! *Lazy departures* (`lazy`, any discipline, the engine's default for event-driven ports that allow it:
//! see [`Port::set_lazy`]). In a strict-priority or rank port a later arrival can overtake a waiting
//! packet, so a departure is fixed only at the instant the transmitter frees. But nothing outside the port
//! sees a departure happen: it pops the best waiting packet and puts it on the wire behind the packet that
//! just finished, which is still on the wire (it reaches the far end one propagation delay later). So the
//! engine performs a departure due at `t` (at `busy_until`, with packets waiting) when the port is next
//! looked at, instead of at an event of its own at `t`: when a packet arrives at the port (the departures due
//! at or before the arrival go first, the tie rule), and when the packet ahead of it reaches the far end at
//! `t + delay` (departures due at or before `now - delay`: every arrival at the port before then has been
//! admitted, and later ones were not there at `t`). The waiting packets at `t` are then exactly the ones the
//! event-driven port had, and every decision is the same; a busy period costs no event beyond the arrivals at
//! the far end. A remote port of a two-thread run, whose far end is on the other side, is brought up to
//! date before its side publishes its clock (`engine::parallel`).

use super::packet::{flags, Header, Packet};
use crate::config::EcnMode;
use crate::units::{tx_time, Ps};
use super::wire::Wire;

/// What [`Port::transmit`] and [`Port::commit`] return for a remote port (see [`Port::remote`]): hand the
/// packet over with [`Port::hand_over`] (no arrival time is `Ps::MAX`).
pub const HAND_OVER: Ps = Ps::MAX;

/// What [`Port::transmit`] returns on a lossy link ([`Port::set_lossy`]): the packet has taken the transmitter
/// but is not on the wire yet; the engine draws whether the link loses it, and if not puts it there with
/// [`Port::put_on_wire`]. Above every real time, as [`HAND_OVER`] is (the engine tells the two apart from
/// arrival times with one comparison).
pub const LOSSY: Ps = Ps::MAX - 1;

/// `Port::pool_id` of a port with its own buffer.
const NO_POOL: u32 = u32::MAX;

/// Why a port refused a packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admission {
    /// Accepted; `true` if the packet now carries a fresh CE mark.
    Accepted { marked: bool },
    /// Dropped at the tail: the port or shared buffer had no room.
    Dropped,
}

/// [`Port::offer_fifo`]: the packet was dropped at the tail (the port's buffer had no room).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dropped;

/// Per-queue counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct QueueCounters {
    pub enqueued: u64,
    pub dropped: u64,
    pub marked: u64,
    pub max_bytes: u64,
}

/// End of a level's list of waiting packets (and of the free list) in a port's slab.
const NIL: u32 = u32::MAX;

/// One strict-priority queue (a *level*) of an event-driven port: its list of waiting packets in the port's
/// slab, its occupancy and its counters, in one cache line of its own, so that an admission, a push or a pop
/// touches one line for the level (a record of 80 bytes, as the level's `VecDeque` with its counters was,
/// straddled two lines for most levels).
#[derive(Debug, Clone)]
#[repr(C, align(64))]
struct Level {
    /// Oldest and newest waiting packets: slots of [`Port::slab`], linked oldest first through
    /// [`Waiting::next`]; meaningless when the level is empty (`len == 0`).
    head: u32,
    tail: u32,
    /// Packets waiting.
    len: u32,
    bytes: u64,
    /// Event-driven admission with the port's own buffer: a packet of this level is admitted while the port's
    /// occupancy with it stays within this: the port's buffer limit (`u64::MAX` when unbounded), plus PFC's
    /// headroom for a protected queue ([`Port::add_headroom`]).
    limit: u64,
    counters: QueueCounters,
}

/// A waiting packet of an event-driven port, in its port's slab: the packet and the slot of the next packet of
/// its level (or of the next free slot). 32 bytes for the TCP family's packets, aligned so that a slot never
/// straddles two cache lines.
#[derive(Debug, Clone, Copy)]
#[repr(C, align(32))]
struct Waiting<H: Header = ()> {
    pkt: Packet<H>,
    next: u32,
}

/// Field order is layout: `repr(C)` on a 64-byte-aligned record keeps what a FIFO-mode port touches per
/// packet in the first two cache lines (line 0: wire, transmitter, occupancy, all that an arrival at the far
/// end reads; line 1: admission parameters and counters); an event-driven port also reads line 2 (its levels,
/// the slab of its waiting packets, its flags), and the rarely read fields follow in line 3.
///
/// An event-driven port's waiting packets sit in one slab per port (`slab`), linked into one FIFO list per
/// level, with a free list that hands out the slot freed last: a packet that joins a queue is written into the
/// slot that the last departure has just read, and the slots in use stay as few as the packets waiting (a
/// `VecDeque` per level swept its whole capacity, the most the level ever held, and at 2,000 reference flows
/// PIAS's queues were a fifth of its L2 misses). The slab starts over at slot 0 whenever the port empties.
#[derive(Debug, Clone)]
#[repr(C, align(64))]
pub struct Port<H: Header = ()> {
    /// Packets in flight on the wire, with their arrival time at `peer` (FIFO mode: also the packets
    /// committed to start later; see the module docs).
    pub wire: Wire<H>,
    /// The transmitter is busy until then.
    pub busy_until: Ps,
    /// Bytes waiting in all queues (FIFO mode: in the `waiting` packets).
    pub bytes: u64,
    /// FIFO mode: start time of the oldest of the `waiting` packets (valid when `waiting > 0`).
    next_start: Ps,
    /// Node at the far end of the link.
    pub peer: u32,
    /// FIFO mode: the ledger's length (see the module docs): the last `waiting` packets of `wire`, each of
    /// which had not started when it was admitted or last retired (some may have since: retirement is lazy).
    waiting: u32,
    // --- line 1 ---
    pub delay_ps: Ps,
    /// Serialization delay per byte when the rate divides 8e12 exactly (the common case), else 0.
    ps_per_byte: Ps,
    /// Port buffer limit; 0 = unbounded.
    buffer_limit: u64,
    ecn_threshold: u64,
    pub max_bytes: u64,
    /// Packets put on the wire.
    pub transmitted: u64,
    /// FIFO mode: [`Port::offer_fifo`] admits a packet without computing the occupancy when the transmitter's
    /// remaining booking plus the packet's serialization is at most this (see the module docs). 0 when it
    /// never may (a rate without a whole number of picoseconds per byte, or a remote port), and while the
    /// port's maximum or its ECN threshold is 0.
    quiet_ps: Ps,
    ecn: EcnMode,
    /// FIFO mode (see the module docs): set by the engine before the run with [`Port::set_fifo`].
    fifo: bool,
    /// FIFO mode: the queue every packet maps to.
    fifo_queue: u8,
    /// Index of the last queue (queues - 1), here so that mapping a priority reads no other line.
    last_queue: u8,
    /// Two-thread runs (`engine::parallel`): the far end belongs to the other thread. Its packets are handed
    /// over (with their arrival times) as they go onto the wire, and the wire here keeps only what the FIFO
    /// bookkeeping needs (see [`Port::hand_over`]); the other thread's copy of this port holds the packets in
    /// flight. Set with [`Port::set_remote`], which also keeps the port from quiet admissions.
    remote: bool,
    /// The link loses packets at random ([`Port::set_loss`]); event-driven ports only.
    lossy: bool,
    /// `remote || lossy`: the one flag [`Port::transmit`] tests on its way.
    unusual: bool,
    /// Two-thread runs, on the switches' side, for a FIFO-mode port facing a host: the whole queue belongs to
    /// the hosts' side, which performs each enqueue (at the time it happened) when it receives the packet. A
    /// FIFO port's admission and departure times follow from its enqueues alone, in order; nothing on the
    /// switches' side reads them (see `engine::parallel`).
    pub remote_queue: bool,
    // --- line 2: the event-driven discipline ---
    /// The levels (queues), one cache line each.
    levels: Box<[Level]>,
    /// The waiting packets of every level (see the type's docs): slots `..slab_used` are in use, in a level's
    /// list or in the free list; the rest are spare capacity. (A boxed slice and a count rather than a `Vec`:
    /// 8 bytes fewer, which keeps the flags below in this line.)
    slab: Box<[Waiting<H>]>,
    /// Slots of `slab` handed out since the port last emptied (then it starts over at slot 0).
    slab_used: u32,
    /// Head of the slab's free list (`NIL`: none free; the next slot is `slab_used`).
    free: u32,
    /// Bit q set when queue q is non-empty.
    nonempty: u64,
    /// Event-driven mode: PFC's paused queues (`net::pfc`): bit q set while the downstream neighbour holds
    /// queue q paused, so that the transmitter starts no packet of it ([`Port::pop`] skips it); always 0
    /// without PFC. FIFO mode (never used with PFC): the packets dropped, the counter of the port's one queue
    /// ([`Port::counters`]). One field for the two keeps the event-driven fields in one line.
    paused_or_dropped: u64,
    /// Index of the switch's shared pool, NO_POOL if the buffer is per port (see [`Port::pool`]).
    pool_id: u32,
    /// A "transmitter free" event is in the event queue.
    pub tx_event_pending: bool,
    /// PFC: this is a switch's egress port whose protected queues the engine watches after every push and
    /// pop (`net::pfc`); false without PFC, and on every port of a run without it.
    pub pfc_watch: bool,
    /// Event-driven mode with departures timed without events (see the module docs, *Lazy departures*;
    /// set with [`Port::set_lazy`]): `tx_event_pending` then means that packets wait and the departure
    /// due at `busy_until` has not been performed yet, with no event in the queue for it.
    lazy: bool,
    // --- line 3: cold ---
    /// FIFO mode: packets marked (the counters of the port's one queue live here; see [`Port::counters`]).
    fifo_marked: u64,
    /// Node that transmits on this port.
    pub owner: u32,
    pub rate_bps: u64,
    /// Unused: makes a port five cache lines rather than four. The ports sit in one array, and with a stride
    /// of four lines their first lines (the hot ones) fall in a quarter of the L1's sets, evicting each other;
    /// an odd number of lines spreads them over every set.
    _stride: [u64; 8],
}

impl<H: Header> Port<H> {
    pub fn new(
        owner: u32,
        peer: u32,
        rate_bps: u64,
        delay_ps: Ps,
        queues: u32,
        buffer_limit: u64,
        ecn: EcnMode,
        ecn_threshold: u64,
    ) -> Self {
        let k = queues as usize;
        assert!((1..=64).contains(&k), "a port has 1 to 64 queues");
        let exact = 8 * crate::units::PS_PER_S;
        Port {
            wire: Wire::new(),
            busy_until: 0,
            bytes: 0,
            delay_ps,
            next_start: 0,
            ps_per_byte: if exact % rate_bps == 0 { exact / rate_bps } else { 0 },
            buffer_limit,
            ecn_threshold,
            max_bytes: 0,
            transmitted: 0,
            quiet_ps: 0,
            fifo_marked: 0,
            peer,
            waiting: 0,
            ecn,
            fifo: false,
            levels: (0..k)
                .map(|_| Level {
                    head: NIL,
                    tail: NIL,
                    len: 0,
                    bytes: 0,
                    limit: if buffer_limit == 0 { u64::MAX } else { buffer_limit },
                    counters: QueueCounters::default(),
                })
                .collect(),
            slab: Box::new([]),
            slab_used: 0,
            free: NIL,
            nonempty: 0,
            paused_or_dropped: 0,
            pool_id: NO_POOL,
            tx_event_pending: false,
            pfc_watch: false,
            lazy: false,
            fifo_queue: 0,
            last_queue: (k - 1) as u8,
            remote: false,
            lossy: false,
            unusual: false,

            remote_queue: false,
            owner,
            rate_bps,
            _stride: [0; 8],
        }
    }

    /// Index of the switch's shared pool, if the buffer is shared.
    #[inline]
    pub fn pool(&self) -> Option<u32> {
        (self.pool_id != NO_POOL).then_some(self.pool_id)
    }

    pub fn set_pool(&mut self, pool: u32) {
        assert_ne!(pool, NO_POOL);
        self.pool_id = pool;
    }

    /// Run this port in FIFO mode (before any packet): every packet it will see maps to queue `q`, and its
    /// buffer is its own.
    pub fn set_fifo(&mut self, q: usize) {
        assert!(self.pool().is_none() && q < self.levels.len() && self.wire.is_empty() && self.paused_or_dropped == 0);
        self.fifo = true;
        self.fifo_queue = q as u8;
        self.quiet_ps = self.quiet_limit();
    }

    /// Make this a remote port (see [`Port::remote`]). A FIFO-mode remote port retires eagerly (no quiet
    /// admissions): its wire keeps only the packets that were waiting at the last admission.
    /// Make the link lossy (`[link_loss]`): [`Port::transmit`] then hands every packet back to the engine
    /// ([`LOSSY`]), which draws whether the link loses it. A lost packet has still taken its serialization time
    /// on the transmitter (the link carried it) and never reaches the far end. Only for an event-driven port (the
    /// engine keeps lossy ports out of FIFO mode).
    pub fn set_lossy(&mut self) {
        debug_assert!(!self.fifo);
        self.lossy = true;
        self.unusual = true;
    }

    /// Does the link lose packets ([`Port::set_lossy`])?
    pub fn is_lossy(&self) -> bool {
        self.lossy
    }

    pub fn set_remote(&mut self) {
        self.remote = true;
        self.unusual = true;
        self.quiet_ps = 0;
    }

    /// What [`Port::quiet_ps`] should be now: the time to serialize the smallest of the buffer limit, the ECN
    /// threshold and the largest occupancy so far.
    fn quiet_limit(&self) -> Ps {
        if self.ps_per_byte == 0 || self.remote || !self.fifo {
            return 0;
        }
        let mut bytes = self.max_bytes;
        if self.buffer_limit != 0 {
            bytes = bytes.min(self.buffer_limit);
        }
        if self.ecn != EcnMode::Off {
            bytes = bytes.min(self.ecn_threshold);
        }
        bytes.saturating_mul(self.ps_per_byte)
    }

    #[inline]
    pub fn is_fifo(&self) -> bool {
        self.fifo
    }

    /// Time this event-driven port's departures without "transmitter free" events (see the module docs,
    /// *Lazy departures*). Before any packet; only for a port with its own buffer, a link with a propagation
    /// delay and no loss: a departure then changes nothing but the port and its wire (no shared pool to
    /// release, no loss to draw), and the packet it follows is still on the wire when it is due.
    pub fn set_lazy(&mut self) {
        assert!(
            !self.fifo && self.pool().is_none() && self.delay_ps > 0 && !self.lossy && self.wire.is_empty(),
            "lazy departures need an event-driven port with its own buffer, a delay and no loss"
        );
        self.lazy = true;
    }

    /// Are this port's departures timed without events ([`Port::set_lazy`])?
    #[inline]
    pub fn is_lazy(&self) -> bool {
        self.lazy
    }

    /// Is this a remote port of a two-thread run ([`Port::set_remote`])?
    #[inline]
    pub fn is_remote(&self) -> bool {
        self.remote
    }

    /// FIFO mode: the queue every packet maps to.
    pub fn fifo_queue(&self) -> usize {
        self.fifo_queue as usize
    }

    pub fn num_queues(&self) -> usize {
        self.levels.len()
    }

    /// Serialization delay of `wire_bytes` on this port's link.
    #[inline]
    pub fn tx_time(&self, wire_bytes: u32) -> Ps {
        if self.ps_per_byte != 0 {
            wire_bytes as Ps * self.ps_per_byte
        } else {
            tx_time(wire_bytes, self.rate_bps)
        }
    }

    #[inline]
    pub fn queue_of(&self, prio: u8) -> usize {
        prio.min(self.last_queue) as usize
    }

    /// Is the port idle with nothing waiting at time `now`, and no queue paused? Then a packet can go straight
    /// onto the wire. (A port with a paused queue leaves the choice to [`Port::pop`], which knows which queues
    /// may send.)
    #[inline]
    pub fn can_send_now(&self, now: Ps) -> bool {
        (self.nonempty | self.paused_or_dropped) == 0 && now >= self.busy_until
    }

    /// Is the port's buffer its own and bounded (what headroom extends)?
    pub fn bounded_own_buffer(&self) -> bool {
        self.pool().is_none() && self.buffer_limit != 0
    }

    /// PFC: let queue `q` hold `bytes` beyond the port's buffer (`switch.pfc_headroom_bytes`, a protected queue
    /// of a switch port or a host's NIC with its own bounded buffer; `net::pfc`): the other queues still stop at
    /// the buffer.
    pub fn add_headroom(&mut self, q: usize, bytes: u64) {
        assert!(self.bounded_own_buffer(), "headroom extends a port's own bounded buffer");
        self.levels[q].limit = self.buffer_limit + bytes;
    }

    /// PFC: pause (`true`) or resume queue `q` (`net::pfc`). A packet already on the wire finishes.
    pub fn set_paused(&mut self, q: usize, pause: bool) {
        debug_assert!(!self.fifo, "PFC pauses event-driven ports only");
        if pause {
            self.paused_or_dropped |= 1 << q;
        } else {
            self.paused_or_dropped &= !(1 << q);
        }
    }

    /// PFC's "next_queue" mode (`net::pfc`): the protected queues `mask` are served only by the engine's
    /// per-packet check, never by [`Port::pop`] or straight onto the wire: they count as paused here for good.
    pub fn set_gated(&mut self, mask: u64) {
        debug_assert!(!self.fifo, "PFC gates event-driven ports only");
        self.paused_or_dropped |= mask & (u64::MAX >> (64 - self.levels.len()));
    }

    /// The non-empty queues (bit q for queue q).
    pub fn nonempty(&self) -> u64 {
        self.nonempty
    }

    /// The packets waiting in queue `q`, in FIFO order (event-driven mode).
    pub fn packets(&self, q: usize) -> impl Iterator<Item = &Packet<H>> {
        let mut x = self.levels[q].head;
        std::iter::from_fn(move || {
            (x != NIL).then(|| {
                let w = &self.slab[x as usize];
                x = w.next;
                &w.pkt
            })
        })
    }

    /// Take the `i`-th packet of queue `q` (FIFO order) out of the queue: [`Port::pop`] for a packet that need
    /// not be the head (PFC's "next_queue" mode).
    pub fn take(&mut self, q: usize, i: usize) -> Packet<H> {
        assert!(i < self.levels[q].len as usize, "take: no such packet");
        if i == 0 {
            return self.unlink_head(q);
        }
        let mut prev = self.levels[q].head;
        for _ in 1..i {
            prev = self.slab[prev as usize].next;
        }
        let x = self.slab[prev as usize].next;
        let Waiting { pkt, next } = self.slab[x as usize];
        self.slab[prev as usize].next = next;
        let level = &mut self.levels[q];
        if level.tail == x {
            level.tail = prev;
        }
        self.release(q, x, pkt)
    }

    /// Take the oldest packet of non-empty level `q` out of it.
    #[inline(always)]
    fn unlink_head(&mut self, q: usize) -> Packet<H> {
        let x = self.levels[q].head;
        debug_assert!(x != NIL, "nonempty bit set on an empty queue");
        let Waiting { pkt, next } = self.slab[x as usize];
        self.levels[q].head = next;
        self.release(q, x, pkt)
    }

    /// Slot `x`, holding `pkt`, just unlinked from level `q`: it leaves the level's count and the occupancy,
    /// and goes to the free list (or the slab starts over, when nothing waits any more).
    #[inline(always)]
    fn release(&mut self, q: usize, x: u32, pkt: Packet<H>) -> Packet<H> {
        let w = pkt.wire as u64;
        let level = &mut self.levels[q];
        level.len -= 1;
        level.bytes -= w;
        debug_assert!(level.len > 0 || level.bytes == 0);
        self.nonempty &= !(((level.len == 0) as u64) << q);
        self.bytes -= w;
        if self.nonempty == 0 {
            // nothing waits: start over from slot 0 (keeps the slots in use on a few cache-warm lines)
            self.slab_used = 0;
            self.free = NIL;
        } else {
            self.slab[x as usize].next = self.free;
            self.free = x;
        }
        pkt
    }

    /// PFC: the queues held paused (bit q for queue q).
    pub fn paused(&self) -> u64 {
        if self.fifo {
            0
        } else {
            self.paused_or_dropped
        }
    }

    /// Is a packet waiting in a queue that is not paused (one [`Port::pop`] would return)?
    #[inline]
    pub fn has_ready(&self) -> bool {
        self.nonempty & !self.paused_or_dropped != 0
    }

    /// Decide whether a packet may join its queue, given the shared pool's state when the buffer is shared
    /// (`pool_free`: bytes free in the pool, `dt_alpha`). Marks ECN; does not enqueue.
    #[inline]
    pub fn admit(&mut self, pkt: &mut Packet<H>, pool_free: Option<(u64, f64)>) -> Admission {
        let q = self.queue_of(pkt.prio);
        let w = pkt.wire as u64;
        let fifo = &mut self.levels[q];
        let fits = match pool_free {
            // (the port's buffer limit, or more for a queue with PFC headroom)
            None => self.bytes + w <= fifo.limit,
            Some((free, alpha)) => w <= free && (fifo.bytes + w) as f64 <= alpha * free as f64,
        };
        if !fits {
            fifo.counters.dropped += 1;
            return Admission::Dropped;
        }
        let mut marked = false;
        if pkt.flags & flags::ECT != 0 && pkt.flags & flags::CE == 0 {
            let occupancy = match self.ecn {
                EcnMode::Port => self.bytes + w,
                EcnMode::Queue => fifo.bytes + w,
                EcnMode::Off => 0,
            };
            if self.ecn != EcnMode::Off && occupancy > self.ecn_threshold {
                pkt.flags |= flags::CE;
                fifo.counters.marked += 1;
                marked = true;
            }
        }
        fifo.counters.enqueued += 1;
        Admission::Accepted { marked }
    }

    /// Put an admitted packet in its queue.
    #[inline(always)]
    pub fn push(&mut self, pkt: Packet<H>) {
        let q = self.queue_of(pkt.prio);
        let w = pkt.wire as u64;
        // the slot freed last (its line was just read by a departure), else the next unused one
        let x = self.free;
        let x = if x != NIL {
            let slot = &mut self.slab[x as usize];
            self.free = slot.next;
            *slot = Waiting { pkt, next: NIL };
            x
        } else {
            let x = self.slab_used;
            if x as usize == self.slab.len() {
                self.grow_slab();
            }
            self.slab[x as usize] = Waiting { pkt, next: NIL };
            self.slab_used = x + 1;
            x
        };
        let level = &mut self.levels[q];
        if level.len == 0 {
            level.head = x;
        } else {
            self.slab[level.tail as usize].next = x;
        }
        level.tail = x;
        level.len += 1;
        level.bytes += w;
        level.counters.max_bytes = level.counters.max_bytes.max(level.bytes);
        self.nonempty |= 1 << q;
        self.bytes += w;
        self.max_bytes = self.max_bytes.max(self.bytes);
    }

    /// [`Port::push`] with every slot of the slab in use: twice as many (at least 16), the packets kept where
    /// they are.
    #[cold]
    #[inline(never)]
    fn grow_slab(&mut self) {
        let n = self.slab.len();
        assert!(n < (NIL as usize + 1) / 2, "a port with 2^31 packets waiting");
        let spare = Waiting { pkt: Packet::default(), next: NIL };
        let mut slab = vec![spare; (2 * n).max(16)].into_boxed_slice();
        slab[..n].copy_from_slice(&self.slab);
        self.slab = slab;
    }

    /// FIFO mode: forget the committed packets that have started by `now` (one starting at `now` counts as
    /// started: tie rule), so that `bytes` is the occupancy at `now`.
    #[inline]
    pub fn retire_started(&mut self, now: Ps) {
        debug_assert!(self.fifo);
        if self.waiting > 0 && self.next_start <= now {
            self.retire_slow(now);
        }
    }

    #[inline(never)]
    fn retire_slow(&mut self, now: Ps) {
        let mut i = self.wire.len() - self.waiting as usize;
        loop {
            let w = self.wire.get(i).1.wire as u32;
            self.bytes -= w as u64;
            self.waiting -= 1;
            // a waiting packet starts exactly when the one ahead of it is done
            self.next_start += self.tx_time(w);
            i += 1;
            if self.waiting == 0 || self.next_start > now {
                return;
            }
        }
    }

    /// FIFO mode: admission (drop-tail on the port buffer, ECN on the occupancy; per port and per queue are
    /// the same thing when one queue is in use). Call [`Port::retire_started`] first. A mark is counted here
    /// and set on the packet by [`Port::commit`].
    #[inline]
    pub fn admit_fifo(&mut self, pkt: &Packet<H>) -> Admission {
        self.check_fifo_queue(pkt);
        let w = pkt.wire as u64;
        if self.buffer_limit != 0 && self.bytes + w > self.buffer_limit {
            self.paused_or_dropped += 1;
            return Admission::Dropped;
        }
        // Branch-free: whether a packet is marked is as good as random to a branch predictor.
        let ect = pkt.flags & (flags::ECT | flags::CE) == flags::ECT;
        let marked = ect & (self.ecn != EcnMode::Off) & (self.bytes + w > self.ecn_threshold);
        self.fifo_marked += marked as u64;
        Admission::Accepted { marked }
    }

    /// FIFO mode: put an admitted packet on the wire now, to start serializing when the packets ahead of it
    /// are done, with a CE mark if admission `marked` it. Returns its arrival time at the far end if the wire
    /// was empty, i.e. when the caller must schedule that arrival ([`HAND_OVER`] on a remote port). Call
    /// [`Port::retire_started`] first (the new maximum occupancy is read from the ledger).
    ///
    /// (The mark is set on the packet in its wire slot rather than by `admit_fifo` on the caller's copy: a
    /// one-byte store into that copy, then read back as part of a wider load when the packet is copied to
    /// the wire, defeats the CPU's store-to-load forwarding and stalls the hot path.)
    #[inline(always)]
    pub fn commit(&mut self, now: Ps, pkt: Packet<H>, marked: bool) -> Option<Ps> {
        debug_assert!(self.fifo);
        let start = self.busy_until.max(now);
        let arrival = self.place(now, start, self.tx_time(pkt.wire as u32), pkt, marked);
        self.max_bytes = self.max_bytes.max(self.bytes);
        arrival
    }

    /// FIFO mode: offer `pkt` to the port at `now`: admission ([`Port::admit_fifo`]), then, if accepted,
    /// [`Port::commit`]. Returns what `commit` returns, or `Err(Dropped)`. The occupancy is computed only
    /// when the decisions depend on it (see the module docs: quiet admissions).
    #[inline(always)]
    pub fn offer_fifo(&mut self, now: Ps, pkt: Packet<H>) -> Result<Option<Ps>, Dropped> {
        debug_assert!(self.fifo);
        self.check_fifo_queue(&pkt);
        let tx = self.tx_time(pkt.wire as u32);
        let start = self.busy_until.max(now);
        if start - now + tx <= self.quiet_ps {
            // The waiting bytes take at most `start - now` to serialize, so with this packet the occupancy is
            // within the buffer limit, the ECN threshold and the maximum so far: admitted, not marked, and
            // no new maximum.
            return Ok(self.place(now, start, tx, pkt, false));
        }
        self.offer_exact(now, pkt)
    }

    #[inline(never)]
    fn offer_exact(&mut self, now: Ps, pkt: Packet<H>) -> Result<Option<Ps>, Dropped> {
        self.retire_started(now);
        match self.admit_fifo(&pkt) {
            Admission::Dropped => Err(Dropped),
            Admission::Accepted { marked } => {
                let arrival = self.commit(now, pkt, marked);
                self.quiet_ps = self.quiet_limit();
                Ok(arrival)
            }
        }
    }

    /// Cheap insurance: the engine decides FIFO mode from the run's priority sources once, up front
    /// (`engine::run::single_queue_run`); a packet for another queue means that analysis missed one.
    #[inline(always)]
    fn check_fifo_queue(&self, pkt: &Packet<H>) {
        assert!(
            self.queue_of(pkt.prio) == self.fifo_queue as usize,
            "a FIFO-mode port got a packet of priority {} (queue {}), not queue {}: engine::run::single_queue_run \
             missed a priority source",
            pkt.prio,
            self.queue_of(pkt.prio),
            self.fifo_queue
        );
    }

    /// FIFO mode: put `pkt` (serialization `tx`) on the wire to start at `start`, with a CE mark if `marked`,
    /// and count it as waiting if it starts after `now`; what [`Port::commit`] returns.
    #[inline(always)]
    fn place(&mut self, now: Ps, start: Ps, tx: Ps, pkt: Packet<H>, marked: bool) -> Option<Ps> {
        let done = start + tx;
        self.busy_until = done;
        let arrival = done + self.delay_ps;
        let was_empty = self.wire.is_empty();
        // (a plain store of the flags, not `|=`: reading back a byte of the entry just stored stalled)
        self.wire.push_back((arrival, pkt)).1.flags = pkt.flags | flags::CE * marked as u8;
        self.transmitted += 1;
        // Branch-free (whether the packet waits is data-dependent): when it starts later, it joins the waiting
        // packets, and is the oldest of them if there were none. When it starts at once, every packet ahead of
        // it has started too: none is waiting (what retiring them would find, without reading them; this also
        // keeps the waiting packets the last ones on the wire).
        let waits = start > now;
        if self.waiting == 0 {
            self.next_start = start;
        }
        let keep = 0u64.wrapping_sub(waits as u64); // all ones if it waits
        self.waiting = (self.waiting + 1) & keep as u32;
        self.bytes = (self.bytes + pkt.wire as u64) & keep;
        if self.remote {
            return Some(HAND_OVER);
        }
        was_empty.then_some(arrival)
    }

    /// Take the next packet to serve: the head of the highest-priority non-empty queue that is not paused (PFC).
    #[inline]
    pub fn pop(&mut self) -> Option<Packet<H>> {
        let ready = self.nonempty & !self.paused_or_dropped;
        if ready == 0 {
            return None;
        }
        let q = ready.trailing_zeros() as usize;
        Some(self.unlink_head(q))
    }

    /// Start serializing `pkt` at `now` (the transmitter must be free). Returns its arrival time at the far end
    /// if the wire was empty, i.e. when the caller must schedule that arrival ([`HAND_OVER`] on a remote port).
    #[inline(always)]
    pub fn transmit(&mut self, now: Ps, pkt: Packet<H>) -> Option<Ps> {
        debug_assert!(now >= self.busy_until);
        let done = now + self.tx_time(pkt.wire as u32);
        self.busy_until = done;
        let arrival = done + self.delay_ps;
        self.transmitted += 1;
        if self.unusual {
            return self.transmit_unusual(arrival, pkt);
        }
        let was_empty = self.wire.is_empty();
        self.wire.push_back((arrival, pkt));
        was_empty.then_some(arrival)
    }

    /// The rest of [`Port::transmit`] on a lossy link ([`LOSSY`]) or a remote port ([`HAND_OVER`]).
    #[cold]
    #[inline(never)]
    fn transmit_unusual(&mut self, arrival: Ps, pkt: Packet<H>) -> Option<Ps> {
        if self.lossy {
            return Some(LOSSY);
        }
        self.put_on_wire(arrival, pkt)
    }

    /// Put a packet whose serialization has started onto the wire, arriving at `arrival`: what
    /// [`Port::transmit`] returns ([`HAND_OVER`] on a remote port). For a packet a lossy link did not lose.
    pub fn put_on_wire(&mut self, arrival: Ps, pkt: Packet<H>) -> Option<Ps> {
        let was_empty = self.wire.is_empty();
        self.wire.push_back((arrival, pkt));
        if self.remote {
            return Some(HAND_OVER);
        }
        was_empty.then_some(arrival)
    }

    /// A remote port (see [`Port::remote`]): the packet just put on the wire (by `transmit` or `commit`) with its
    /// arrival time, for the other thread. The wire then keeps only the packets still waiting to start, the
    /// ones [`Port::retire_started`] reads (FIFO mode; none in event-driven mode): the far end's copy of the
    /// port is where they arrive.
    #[inline]
    pub fn hand_over(&mut self) -> (Ps, Packet<H>) {
        debug_assert!(self.remote);
        let sent = *self.wire.back().expect("hand_over with nothing sent");
        while self.wire.len() > self.waiting as usize {
            self.wire.pop_front();
        }
        sent
    }

    /// Take the packet at the head of the wire, which reaches the far end now.
    #[inline]
    pub fn take_arrival(&mut self) -> Packet::<H> {
        let (_, pkt) = self.wire.pop_front().expect("arrival on an empty wire");
        if self.waiting as usize > self.wire.len() {
            // FIFO mode: not retired yet, so it still counted as waiting (retirement is lazy: see the module
            // docs); it has long started.
            self.waiting -= 1;
            self.bytes -= pkt.wire as u64;
            self.next_start += self.tx_time(pkt.wire as u32);
        }
        pkt
    }

    /// Bytes waiting in queue `q` (FIFO mode: the ledger's, exact only right after an admission that retired;
    /// see the module docs).
    pub fn queue_bytes(&self, q: usize) -> u64 {
        match self.fifo {
            true if q == self.fifo_queue as usize => self.bytes,
            _ => self.levels[q].bytes,
        }
    }

    /// Packets waiting in queue `q` (FIFO mode: the ledger's, as for [`Port::queue_bytes`]).
    pub fn queue_len(&self, q: usize) -> usize {
        match self.fifo {
            true if q == self.fifo_queue as usize => self.waiting as usize,
            _ => self.levels[q].len as usize,
        }
    }

    /// Counters of queue `q`.
    pub fn counters(&self, q: usize) -> QueueCounters {
        match self.fifo {
            true if q == self.fifo_queue as usize => QueueCounters {
                enqueued: self.transmitted,
                dropped: self.paused_or_dropped,
                marked: self.fifo_marked,
                max_bytes: self.max_bytes,
            },
            _ => self.levels[q].counters,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hot_fields_fit_two_cache_lines() {
        let p = Port::new(0, 1, 10_000_000_000, 0, 8, 0, EcnMode::Off, 0);
        let base = &p as *const Port as usize;
        assert_eq!(base % 64, 0);
        // what a FIFO-mode port touches per packet
        assert!(&p.busy_until as *const Ps as usize - base < 64);
        assert!(&p.next_start as *const Ps as usize - base < 64);
        assert!(&p.peer as *const u32 as usize - base < 64);
        assert!(&p.waiting as *const u32 as usize - base < 64);
        assert!(&p.fifo as *const bool as usize - base < 128);
        assert!(&p.waiting as *const u32 as usize - base < 128);
        assert!(&p.transmitted as *const u64 as usize - base < 128);
        assert!(&p.quiet_ps as *const Ps as usize - base < 128);
        // and an event-driven one besides (its flags too: an arrival at the far end that empties the wire
        // reads them to know whether a lazy departure is due)
        assert!(&p.levels as *const _ as usize - base >= 128);
        assert!(&p.tx_event_pending as *const bool as usize - base < 192);
        assert!(&p.lazy as *const bool as usize - base < 192);
        assert!(&p.pfc_watch as *const bool as usize - base < 192);
        assert!(&p.slab as *const _ as usize - base < 192);
        assert!(&p.slab_used as *const u32 as usize - base < 192);
        assert!(&p.nonempty as *const u64 as usize - base < 192);
        assert!(&p.free as *const u32 as usize - base < 192);
        assert!(&p.pool_id as *const u32 as usize - base < 192);
        assert_eq!(std::mem::size_of::<Port>(), 320);
        // a level is one cache line, a waiting packet half of one
        assert_eq!((std::mem::size_of::<Level>(), std::mem::align_of::<Level>()), (64, 64));
        assert_eq!(std::mem::size_of::<Waiting>(), 32);
    }

    fn pkt(prio: u8, wire: u16, ect: bool) -> Packet {
        Packet {
            flow: 0,
            seq: 0,
            sack: 0,
            dst: 0,
           
            wire,
            prio,
            flags: if ect { flags::ECT } else { 0 },
            ts: 0,
            hdr: (),
        }
    }

    #[test]
    fn strict_priority_serves_lowest_index_first_fifo_within() {
        let mut p = Port::new(0, 1, 10_000_000_000, 0, 4, 0, EcnMode::Off, 0);
        for (i, prio) in [3u8, 1, 7, 1, 0].iter().enumerate() {
            let mut x = pkt(*prio, 100, false);
            x.seq = i as u32;
            assert!(matches!(p.admit(&mut x, None), Admission::Accepted { .. }));
            p.push(x);
        }
        let order: Vec<u32> = std::iter::from_fn(|| p.pop()).map(|x| x.seq).collect();
        // prio 0 (seq 4), prio 1 in FIFO order (seq 1, 3), prio 3 (seq 0), prio 7 -> queue 3 (seq 2, behind 0)
        assert_eq!(order, vec![4, 1, 3, 0, 2]);
        assert_eq!(p.bytes, 0);
    }

    /// PFC: a paused queue is skipped by the scheduler (the next non-empty queue is served), keeps its
    /// packets, and is served again once resumed; a port with a paused queue never sends straight away.
    #[test]
    fn a_paused_queue_is_skipped_until_resumed() {
        let mut p = Port::new(0, 1, 10_000_000_000, 0, 3, 0, EcnMode::Off, 0);
        for (i, prio) in [1u8, 2, 1].iter().enumerate() {
            let mut x = pkt(*prio, 100, false);
            x.seq = i as u32;
            assert!(matches!(p.admit(&mut x, None), Admission::Accepted { .. }));
            p.push(x);
        }
        p.set_paused(1, true);
        assert_eq!(p.paused(), 0b10);
        assert!(p.has_ready());
        assert_eq!(p.pop().map(|x| x.seq), Some(1), "queue 1 is paused: queue 2 goes first");
        assert!(!p.has_ready());
        assert_eq!(p.pop(), None);
        assert_eq!((p.queue_len(1), p.bytes), (2, 200));
        p.set_paused(1, false);
        let order: Vec<u32> = std::iter::from_fn(|| p.pop()).map(|x| x.seq).collect();
        assert_eq!(order, vec![0, 2]);
        // empty and idle, but a queue is paused: the scheduler decides, not the fast path
        assert!(p.can_send_now(0));
        p.set_paused(2, true);
        assert!(!p.can_send_now(0));
    }

    /// PFC's "next_queue" mode: a gated queue is never served by `pop` nor straight onto the wire; `take`
    /// removes a packet from the middle of its FIFO and keeps the occupancy and the non-empty bits right.
    #[test]
    fn gated_queues_are_left_to_take() {
        let mut p = Port::new(0, 1, 10_000_000_000, 0, 2, 0, EcnMode::Off, 0);
        p.set_gated(0b110); // queue 2 does not exist: ignored
        assert_eq!(p.paused(), 0b10);
        assert!(!p.can_send_now(0));
        for i in 0..3u32 {
            let mut x = pkt(1, 100 + i as u16, false);
            x.seq = i;
            assert!(matches!(p.admit(&mut x, None), Admission::Accepted { .. }));
            p.push(x);
        }
        assert_eq!(p.pop(), None);
        assert_eq!(p.packets(1).map(|x| x.seq).collect::<Vec<_>>(), vec![0, 1, 2]);
        assert_eq!(p.take(1, 1).seq, 1);
        assert_eq!((p.queue_len(1), p.bytes, p.queue_bytes(1)), (2, 202, 202));
        assert_eq!(p.take(1, 1).seq, 2);
        assert_eq!(p.take(1, 0).seq, 0);
        assert_eq!((p.nonempty(), p.bytes), (0, 0));
    }

    /// The slab of waiting packets against a `VecDeque` per level: random pushes, pops (some levels paused) and
    /// takes from the middle, across levels and sizes; same packets in the same order, same occupancy, lengths,
    /// non-empty bits and counters. The slab holds no more slots than the most packets ever waiting at once,
    /// and starts over whenever the port empties.
    #[test]
    fn slab_levels_behave_like_a_vecdeque_per_level() {
        use rand::{Rng, SeedableRng};
        use std::collections::VecDeque;
        for seed in 0..20u64 {
            let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(seed);
            let k = rng.gen_range(1..=12u32);
            let mut p = Port::new(0, 1, 10_000_000_000, 0, k, 0, EcnMode::Off, 0);
            let mut model: Vec<VecDeque<Packet>> = vec![VecDeque::new(); k as usize];
            let (mut most, mut n, mut seq) = (0usize, 0usize, 0u32);
            for step in 0..4_000 {
                // phases that fill and phases that drain, so that the port empties now and then
                let push_bias = if step / 300 % 2 == 0 { 0.65 } else { 0.35 };
                if rng.gen_bool(push_bias) {
                    let mut x = pkt(rng.gen_range(0..k as u8 + 2), rng.gen_range(40..=1500), false);
                    x.seq = seq;
                    seq += 1;
                    assert!(matches!(p.admit(&mut x, None), Admission::Accepted { .. }));
                    p.push(x);
                    model[p.queue_of(x.prio)].push_back(x);
                    n += 1;
                    most = most.max(n);
                } else if rng.gen_bool(0.2) && n > 0 {
                    let q = (0..k as usize).filter(|&q| !model[q].is_empty()).nth(0).unwrap();
                    let q = if rng.gen_bool(0.5) { q } else { (q..k as usize).rev().find(|&q| !model[q].is_empty()).unwrap() };
                    let i = rng.gen_range(0..model[q].len());
                    assert_eq!(p.take(q, i), model[q].remove(i).unwrap());
                    n -= 1;
                } else {
                    let paused = if rng.gen_bool(0.3) { rng.gen::<u64>() & ((1u64 << k) - 1) } else { 0 };
                    for q in 0..k as usize {
                        p.set_paused(q, paused >> q & 1 == 1);
                    }
                    let want = (0..k as usize).find(|&q| paused >> q & 1 == 0 && !model[q].is_empty());
                    assert_eq!(p.pop(), want.map(|q| model[q].pop_front().unwrap()), "seed {seed} step {step}");
                    n -= want.is_some() as usize;
                }
                let mut bytes = 0;
                for q in 0..k as usize {
                    assert!(p.packets(q).eq(model[q].iter()), "seed {seed} step {step} queue {q}");
                    let b: u64 = model[q].iter().map(|x| x.wire as u64).sum();
                    assert_eq!((p.queue_len(q), p.queue_bytes(q)), (model[q].len(), b));
                    assert_eq!(p.nonempty() >> q & 1 == 1, !model[q].is_empty());
                    bytes += b;
                }
                assert_eq!(p.bytes, bytes);
                assert!(p.slab_used as usize <= most);
                if n == 0 {
                    assert!(p.slab_used == 0 && p.free == NIL, "the slab starts over when the port empties");
                }
            }
            let enqueued: u64 = (0..k as usize).map(|q| p.counters(q).enqueued).sum();
            assert_eq!(enqueued, seq as u64);
        }
    }

    #[test]
    fn many_queues() {
        let mut p = Port::new(0, 1, 10_000_000_000, 0, 20, 0, EcnMode::Off, 0);
        for (i, prio) in [19u8, 9, 30, 3, 8].iter().enumerate() {
            let mut x = pkt(*prio, 100 + i as u16, false);
            x.seq = i as u32;
            assert!(matches!(p.admit(&mut x, None), Admission::Accepted { .. }));
            p.push(x);
        }
        assert_eq!(p.num_queues(), 20);
        assert_eq!((p.queue_len(19), p.queue_bytes(19)), (2, 100 + 102));
        assert_eq!(p.counters(8).enqueued, 1);
        let order: Vec<u32> = std::iter::from_fn(|| p.pop()).map(|x| x.seq).collect();
        assert_eq!(order, vec![3, 4, 1, 0, 2]);
        assert_eq!(p.bytes, 0);
    }

    #[test]
    fn drop_tail_at_the_port_limit() {
        let mut p = Port::new(0, 1, 10_000_000_000, 0, 1, 3000, EcnMode::Off, 0);
        for _ in 0..2 {
            let mut x = pkt(0, 1500, false);
            assert!(matches!(p.admit(&mut x, None), Admission::Accepted { .. }));
            p.push(x);
        }
        let mut x = pkt(0, 1500, false);
        assert_eq!(p.admit(&mut x, None), Admission::Dropped);
        assert_eq!(p.counters(0).dropped, 1);
        let mut small = pkt(0, 40, false);
        assert_eq!(p.admit(&mut small, None), Admission::Dropped);
    }

    #[test]
    fn ecn_marks_above_threshold_only_ect_packets() {
        let mut p = Port::new(0, 1, 10_000_000_000, 0, 2, 0, EcnMode::Port, 3000);
        let mut marks = vec![];
        for i in 0..4 {
            let mut x = pkt((i % 2) as u8, 1500, true);
            let a = p.admit(&mut x, None);
            marks.push(matches!(a, Admission::Accepted { marked: true }));
            p.push(x);
        }
        // occupancy incl. arrival: 1500, 3000, 4500, 6000 -> marks on the 3rd and 4th
        assert_eq!(marks, vec![false, false, true, true]);
        let mut plain = pkt(0, 1500, false);
        assert_eq!(p.admit(&mut plain, None), Admission::Accepted { marked: false });
    }

    #[test]
    fn per_queue_ecn_looks_at_own_queue() {
        let mut p = Port::new(0, 1, 10_000_000_000, 0, 2, 0, EcnMode::Queue, 3000);
        for _ in 0..3 {
            let mut x = pkt(1, 1500, true);
            p.admit(&mut x, None);
            p.push(x);
        }
        let mut hi = pkt(0, 1500, true);
        assert_eq!(p.admit(&mut hi, None), Admission::Accepted { marked: false });
    }

    #[test]
    fn shared_pool_dynamic_threshold() {
        let mut p = Port::new(0, 1, 10_000_000_000, 0, 1, 0, EcnMode::Off, 0);
        let mut x = pkt(0, 1000, false);
        // free 4000, alpha 0.5 -> queue may hold up to 2000
        assert!(matches!(p.admit(&mut x, Some((4000, 0.5))), Admission::Accepted { .. }));
        p.push(x);
        let mut y = pkt(0, 1000, false);
        assert!(matches!(p.admit(&mut y, Some((3000, 0.5))), Admission::Accepted { .. }) == false);
    }

    /// A FIFO-mode port and an event-driven port (served here by hand under the tie rule) see the same random
    /// arrivals, ECN-capable or not, data or ACK sized, with arrivals at the far end taken as they fall
    /// due: same admissions, marks, occupancy, wire and counters, with quiet (lazy) admissions among them.
    #[test]
    fn fifo_mode_matches_the_event_driven_port() {
        use rand::{Rng, SeedableRng};
        for (seed, ecn) in [(1u64, EcnMode::Port), (2, EcnMode::Queue), (3, EcnMode::Off)] {
            let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(seed);
            let new = || Port::new(0, 1, 10_000_000_000, 2_000_000, 3, 30_000, ecn, 12_000); // priorities 2-4 -> queue 2
            let (mut fast, mut slow) = (new(), new());
            fast.set_fifo(2);
            let (mut now, mut quiet_admissions) = (0, 0u32);
            for i in 0..20_000 {
                // a coarse time lattice, so that arrivals often tie with the end of a serialization; phases of
                // overload (drops, marks, new maxima) and of load about 0.55 (quiet admissions)
                now += 40_000 * rng.gen_range(0..if i / 1000 % 2 == 0 { 40 } else { 80 });
                for (p, is_fast) in [(&mut fast, true), (&mut slow, false)] {
                    if !is_fast {
                        // the event-driven port's departures due by now, before the arrival (tie rule)
                        while p.busy_until <= now {
                            let Some(x) = p.pop() else { break };
                            let t = p.busy_until;
                            p.transmit(t, x);
                        }
                    }
                    while p.wire.front().is_some_and(|e| e.0 <= now) {
                        p.take_arrival();
                    }
                }
                let mut a = pkt(2 + rng.gen_range(0..3), if rng.gen_bool(0.3) { 40 } else { 1500 }, rng.gen_bool(0.5));
                let mut b = a;
                // the occupancy the fast port would compute now (retiring changes no decision, but would make
                // the next admission less lazy: do it on a copy)
                let mut probe = fast.clone();
                probe.retire_started(now);
                let quiet = fast.busy_until.max(now) - now + fast.tx_time(a.wire as u32) <= fast.quiet_ps;
                quiet_admissions += quiet as u32;
                let ra = fast.offer_fifo(now, a);
                let rb = slow.admit(&mut b, None);
                assert_eq!(probe.bytes, slow.bytes, "occupancy at {now}");
                assert_eq!(ra.is_err(), rb == Admission::Dropped);
                if let Admission::Accepted { marked } = rb {
                    assert!(!(quiet && marked), "a quiet admission is never marked");
                    a.flags |= flags::CE * marked as u8;
                    assert_eq!(fast.wire.back(), Some(&(fast.busy_until + fast.delay_ps, a)));
                    assert_eq!(a, b);
                    if slow.can_send_now(now) {
                        slow.transmit(now, b);
                    } else {
                        slow.push(b);
                    }
                }
            }
            // drain the event-driven port; the wires must then hold the same packets at the same times
            while let Some(x) = slow.pop() {
                let t = slow.busy_until;
                slow.transmit(t, x);
            }
            assert_eq!(fast.wire, slow.wire);
            assert_eq!(fast.max_bytes, slow.max_bytes);
            // both kinds of admission were exercised
            assert!((2_000..19_500).contains(&quiet_admissions), "{quiet_admissions} quiet admissions");
            assert!(slow.counters(2).dropped > 0 && (ecn == EcnMode::Off || slow.counters(2).marked > 0));
            for q in 0..3 {
                assert_eq!(fast.counters(q), slow.counters(q), "queue {q}");
            }
        }
    }

    /// The FIFO ledger's invariant (module docs): the last `waiting` wire entries, back to back from
    /// `next_start` to `busy_until`, `bytes` in all.
    fn check_ledger(p: &Port) {
        let n = p.wire.len();
        let w = p.waiting as usize;
        assert!(w <= n, "waiting {w} > wire {n}");
        if w == 0 {
            return;
        }
        let mut bytes = 0u64;
        let mut expect_start = p.next_start;
        for i in n - w..n {
            let (arr, pk) = *p.wire.get(i);
            let tx = p.tx_time(pk.wire as u32);
            let done = arr - p.delay_ps;
            assert_eq!(done - tx, expect_start, "ledger not back to back at {i}");
            expect_start = done;
            bytes += pk.wire as u64;
        }
        assert_eq!(expect_start, p.busy_until, "ledger does not end at busy_until");
        assert_eq!(bytes, p.bytes, "ledger bytes");
    }

    /// Quiet admissions across the settings that decide them: link rates with and without a whole number of
    /// picoseconds per byte, delays, unbounded and tiny buffers, ECN per port, per queue and off with
    /// thresholds down to 0 and 1, odd packet sizes, pre-marked packets, fine and coarse time lattices, and
    /// arrivals at the far end taken up to one delay early (as the hosts' side of a two-thread run may). A
    /// port driven through `offer_fifo`, one retiring at every admission, and an event-driven one must agree
    /// on every decision, mark, wire entry, maximum and counter, and the lazy port's ledger must hold.
    #[test]
    fn fifo_mode_matches_across_rates_buffers_and_thresholds() {
        use rand::{Rng, SeedableRng};
        // (3 and 7 Gbps: no whole number of picoseconds per byte, so never quiet)
        let rates = [1u64, 10, 40, 100, 3, 25, 7].map(|g| g * 1_000_000_000);
        let mut total_quiet = 0u64;
        let mut total = 0u64;
        for seed in 0..400u64 {
            let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(seed);
            let rate = rates[rng.gen_range(0..rates.len())];
            let delay: Ps = [1u64, 1000, 2_000_000, 20_200_000, 37][rng.gen_range(0..5)];
            let limit = [0u64, 30_000, 3_000, 1_500, 100_000, 1_600][rng.gen_range(0..6)];
            let ecn = [EcnMode::Port, EcnMode::Queue, EcnMode::Off][rng.gen_range(0..3)];
            let thr = [0u64, 12_000, 1, 1_500, 100_000, 3_001][rng.gen_range(0..6)];
            let queues = rng.gen_range(1..4u32);
            let q = (queues - 1) as usize;
            let new = || Port::new(0, 1, rate, delay, queues, limit, ecn, thr);
            let (mut fast, mut old, mut slow) = (new(), new(), new());
            fast.set_fifo(q);
            old.set_fifo(q);
            // arrivals may be taken this early (a two-thread run's hosts' side runs ahead by up to a delay)
            let early: Ps = if rng.gen_bool(0.5) { 0 } else { rng.gen_range(0..=delay) };
            let unit: Ps = [1u64, 1000, 40_000, 8 * 40, 320][rng.gen_range(0..5)];
            let mut now: Ps = 0;
            let (mut popped_f, mut popped_o) = (Vec::new(), Vec::new());
            let steps = 4000;
            let sizes_mode = rng.gen_range(0..3);
            for i in 0..steps {
                let hi = if i / 500 % 2 == 0 { rng.gen_range(1..60) } else { rng.gen_range(1..400) };
                if rng.gen_bool(0.2) {
                    // same instant
                } else {
                    now += unit * rng.gen_range(0..hi);
                }
                // event-driven departures due by now (tie rule)
                while slow.busy_until <= now {
                    let Some(x) = slow.pop() else { break };
                    let t = slow.busy_until;
                    slow.transmit(t, x);
                }
                for (p, popped) in [(&mut fast, &mut popped_f), (&mut old, &mut popped_o)] {
                    while p.wire.front().is_some_and(|e| e.0 < now + early || e.0 <= now) {
                        let e = *p.wire.front().unwrap();
                        p.take_arrival();
                        popped.push(e);
                        check_ledger(p);
                    }
                }
                let size: u16 = match sizes_mode {
                    0 => if rng.gen_bool(0.3) { 40 } else { 1500 },
                    1 => rng.gen_range(1..=9000),
                    _ => [64u16, 1500, 1, 9000, 40][rng.gen_range(0..5)],
                };
                let flags_ect = rng.gen_bool(0.6);
                let mut a = pkt(q as u8 + rng.gen_range(0..2) * (q == queues as usize - 1) as u8, size, flags_ect);
                if rng.gen_bool(0.05) {
                    a.flags |= flags::CE;
                }
                let mut b = a;
                let c = a;
                let quiet = fast.busy_until.max(now) - now + fast.tx_time(a.wire as u32) <= fast.quiet_ps;
                total_quiet += quiet as u64;
                total += 1;
                let ra = fast.offer_fifo(now, a);
                check_ledger(&fast);
                old.retire_started(now);
                let occ_old = old.bytes;
                let ro = old.admit_fifo(&c);
                if let Admission::Accepted { marked } = ro {
                    old.commit(now, c, marked);
                }
                check_ledger(&old);
                let rb = slow.admit(&mut b, None);
                assert_eq!(occ_old, slow.bytes, "seed {seed} occupancy at {now}");
                assert_eq!(ro, rb, "seed {seed} step {i}");
                assert_eq!(ra.is_err(), rb == Admission::Dropped, "seed {seed} step {i}");
                if let Admission::Accepted { .. } = rb {
                    assert_eq!(fast.wire.back(), old.wire.back(), "seed {seed} step {i}");
                    assert_eq!(fast.wire.back().unwrap().1, b);
                    if slow.can_send_now(now) {
                        slow.transmit(now, b);
                    } else {
                        slow.push(b);
                    }
                }
                assert_eq!(fast.max_bytes, old.max_bytes, "seed {seed} step {i}");
                assert_eq!(fast.max_bytes, slow.max_bytes, "seed {seed} step {i}");
                assert_eq!(fast.busy_until, old.busy_until);
                assert!(fast.waiting as usize <= fast.wire.len());
            }
            while let Some(x) = slow.pop() {
                let t = slow.busy_until;
                slow.transmit(t, x);
            }
            let mut wf: Vec<_> = popped_f.clone();
            while let Some(e) = fast.wire.pop_front() {
                wf.push(e);
            }
            let mut wo: Vec<_> = popped_o.clone();
            while let Some(e) = old.wire.pop_front() {
                wo.push(e);
            }
            let mut ws = Vec::new();
            while let Some(e) = slow.wire.pop_front() {
                ws.push(e);
            }
            assert_eq!(wf, wo, "seed {seed}");
            assert_eq!(wf, ws, "seed {seed}");
            for qq in 0..queues as usize {
                assert_eq!(fast.counters(qq), slow.counters(qq), "seed {seed} queue {qq}");
                assert_eq!(fast.counters(qq), old.counters(qq), "seed {seed} queue {qq}");
            }
        }
        assert!(total_quiet > total / 20, "{total_quiet} quiet admissions of {total}");
    }

    #[test]
    fn transmit_reports_empty_wire_and_serializes() {
        let mut p = Port::new(0, 1, 10_000_000_000, 500, 1, 0, EcnMode::Off, 0);
        assert_eq!(p.transmit(0, pkt(0, 1500, false)), Some(1_200_000 + 500));
        assert_eq!(p.busy_until, 1_200_000);
        assert_eq!(p.transmit(1_200_000, pkt(0, 1500, false)), None);
        assert_eq!(p.wire.back().unwrap().0, 2_400_000 + 500);
    }
}
