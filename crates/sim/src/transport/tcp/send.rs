//! The sender's output: which segment goes next under the congestion and receive windows (lost segments
//! first, RFC 6675), and the packets it builds (data with its priority and rank, SYN, probe).

use super::{Conn, TcpParams, SYN_SEQ};
use crate::net::packet::{flags, stamp, Packet};
use crate::units::{Ps, NEVER};

impl Conn {
    /// The SYN: no payload, the priority and rank of the first segment, `ack_bytes` on the wire.
    pub(super) fn syn_packet(&self, p: &TcpParams, now: Ps, retx: bool) -> Packet {
        let mut pkt = self.data_packet(p, 0, now, retx);
        pkt.seq = SYN_SEQ;
        pkt.wire = p.ack_bytes as u16;
        pkt.flags |= flags::PROBE;
        pkt
    }

    fn data_packet(&self, p: &TcpParams, seg: u32, now: Ps, retx: bool) -> Packet {
        let payload = self.payload_of(p, seg);
        let mut f = if p.dctcp { flags::ECT } else { 0 };
        if retx {
            f |= flags::RETX;
        }
        let mss = p.mss as u64;
        let offset = seg as u64 * mss;
        let (acked, sent) = if p.rank_at_packet {
            (offset, offset)
        } else {
            ((self.snd_una as u64 * mss).min(self.size), (self.snd_nxt as u64 * mss).min(self.size))
        };
        // PIAS per connection: the bytes the connection counted before this flow, since its last reset
        let count = if p.pias_per_connection {
            self.pias_base + offset.saturating_sub(self.pias_reset_at)
        } else {
            offset
        };
        Packet {
            flow: self.flow,
            seq: seg,
            sack: p.rank.of(self.size, self.estimate, &self.bounds, acked, sent, self.ns_per_byte),
            dst: self.dst,
            wire: (payload + p.header) as u16,
            prio: if retx && self.retx_top { 0 } else { p.tagging.priority(self.prio, count, &self.bounds) },
            flags: f,
            ts: stamp(now),
            hdr: (),
        }
    }

    /// A probe (probe mode): one byte of payload that the receiver only acknowledges, carrying the priority
    /// and rank the flow's next segment would have, so that it waits where that segment would wait.
    pub(super) fn probe_packet(&self, p: &TcpParams, now: Ps) -> Packet {
        let mut pkt = self.data_packet(p, self.snd_una.min(self.n_segs - 1), now, true);
        pkt.wire = (p.header + 1) as u16;
        pkt.flags |= flags::PROBE;
        pkt
    }

    pub(super) fn send_segment(&mut self, p: &TcpParams, seg: u32, now: Ps, retx: bool, out: &mut Vec<Packet>) {
        if let Some(r) = &p.rax {
            self.rax_update(p, r, now);
        }
        let pkt = self.data_packet(p, seg, now, retx);
        self.counters.bytes_sent += (pkt.wire as u32 - p.header) as u64;
        if retx {
            self.counters.retransmits += 1;
            self.board.retransmitted(&mut self.tally, seg);
        }
        out.push(pkt);
        if self.rto_deadline == NEVER {
            self.rto_deadline = now + self.rto;
        }
    }

    /// The next lost segment not yet retransmitted in this recovery, if any.
    pub(super) fn next_lost(&mut self) -> Option<u32> {
        self.board.next_lost(&self.tally, &mut self.marks, self.snd_una)
    }

    /// Whether the receive window lets new segment `seg` go out: its last byte lies within snd_una + rwnd.
    /// (Segments below `seg` are whole, so the byte offsets are `seg * mss`; always true for `seg == snd_una`,
    /// since rwnd >= mss.)
    #[inline]
    fn rwnd_allows(&self, p: &TcpParams, seg: u32) -> bool {
        let mss = p.mss as u64;
        let end = ((seg as u64 + 1) * mss).min(self.size);
        end <= (self.snd_una as u64 * mss).saturating_add(p.rwnd)
    }

    /// Send what the windows allow: lost segments first (congestion window only), then new data (congestion
    /// window and receive window).
    pub(super) fn send_more(&mut self, p: &TcpParams, now: Ps, out: &mut Vec<Packet>) {
        if self.stopped {
            return;
        }
        // cwnd >= 1 > 0, so the truncating cast is floor (without a libm call on baseline x86-64)
        let window = (self.cwnd as u32).max(1);
        while self.pipe() < window {
            if let Some(s) = self.next_lost() {
                self.send_segment(p, s, now, true, out);
                self.marks.retx_ptr = s + 1;
            } else if self.snd_nxt < self.avail_segs && self.rwnd_allows(p, self.snd_nxt) {
                let s = self.snd_nxt;
                self.snd_nxt += 1;
                self.send_segment(p, s, now, false, out);
            } else {
                // application-limited: take what has been written since, else wait for it
                if self.avail_segs < self.n_segs && self.snd_nxt >= self.avail_segs && self.app_refill(p, now) {
                    continue;
                }
                break;
            }
        }
    }

    /// The flow starts: send the initial window, or the SYN when there is a handshake.
    pub fn start(&mut self, p: &TcpParams, now: Ps, out: &mut Vec<Packet>) {
        if !self.established {
            out.push(self.syn_packet(p, now, false));
            self.rto_deadline = now + self.rto;
            return;
        }
        self.send_more(p, now, out);
        self.win_end = self.snd_nxt;
    }
}
