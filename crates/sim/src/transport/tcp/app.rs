//! The application model (the RAX paper, section II: generation rate, cached bytes, send buffer), connection
//! reuse (what one flow hands to the next on the same connection) and HyLine's stop and go.

use super::{round_ps, Conn, TcpParams};
use crate::net::packet::Packet;
use crate::units::{Ps, NEVER};

/// A flow's application (the application model): what it has written into the send buffer, and RAX's measure of
/// the copy rate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct App {
    /// Generation rate in bit/s (0: everything at once).
    pub rate_bps: u64,
    /// Bytes available at once, written before the generation at `rate_bps` starts.
    pub cached: u64,
    /// The generation's reference point: `base` bytes written at `t0`; at a later time t, base + floor(rate
    /// (t - t0)) unless the buffer blocked it.
    pub(super) base: u64,
    pub(super) t0: Ps,
    /// Bytes written so far (as of the last update).
    pub written: u64,
    /// When the last byte was written (NEVER until then).
    pub done_ps: Ps,
    /// RAX: the copy rate (bit/s), and the time and written bytes of the last sample.
    pub copy_rate_bps: f64,
    pub(super) rc_t: Ps,
    pub(super) rc_written: u64,
    /// RAX: new segments below this were sent before the latest rise of the flow's priority.
    pub(super) rise_upto: u32,
    /// RAX with its state per connection: the bytes the connection's earlier flows wrote (0 otherwise).
    pub(super) carried: u64,
}

/// Bytes generated in `dt` ps at `rate_bps` bit/s (rounded down).
#[inline]
fn bytes_in(dt: Ps, rate_bps: u64) -> u64 {
    let b = dt as u128 * rate_bps as u128 / 8_000_000_000_000u128;
    b.min(u64::MAX as u128) as u64
}

/// Time in ps to generate `bytes` at `rate_bps` bit/s (rounded up: the instant the last byte exists).
#[inline]
pub fn time_to_generate(bytes: u64, rate_bps: u64) -> Ps {
    let t = (bytes as u128 * 8_000_000_000_000u128).div_ceil(rate_bps as u128);
    t.min(Ps::MAX as u128) as Ps
}

/// What a connection carries from one flow to the next (`transport.connections` other than "per_flow"; see
/// [`crate::config::Connections`] for what is kept and what is reset, and why).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ConnState {
    pub alpha: f64,
    pub ssthresh: f64,
    srtt: f64,
    rttvar: f64,
    have_rtt: bool,
    /// PIAS per connection: the bytes counted when the last flow ended, and when that flow was written.
    pias_count: u64,
    last_write: Ps,
    /// RAX per connection: the copy rate the last flow left, and the bytes the connection's flows have written.
    rax_rate: f64,
    rax_bytes: u64,
}

impl Conn {
    /// This flow runs on a connection that carried earlier flows, whose state is `st`; the flow is written at
    /// `now`. Call before [`Conn::start`]. cwnd stays at the initial window; see [`ConnState`].
    pub fn resume(&mut self, p: &TcpParams, st: &ConnState, now: Ps) {
        self.alpha = st.alpha;
        self.ssthresh = st.ssthresh;
        if st.have_rtt {
            self.srtt = st.srtt;
            self.rttvar = st.rttvar;
            self.have_rtt = true;
            self.rto = round_ps(st.srtt + 4.0 * st.rttvar).clamp(p.rto_min, p.rto_max);
        }
        // the connection was open already: no second handshake
        self.established = true;
        // the PIAS kernel module's idle rule: a message written more than the idle time after the previous write
        // (the send buffer being empty: the connection is idle) starts counting from 0
        if p.pias_per_connection && now.saturating_sub(st.last_write) <= p.pias_idle {
            self.pias_base = st.pias_count;
        }
        // RAX's flow table keyed by 5-tuple: the entry, copy rate and byte count, runs on
        if p.rax.as_ref().is_some_and(|r| r.per_connection) {
            self.app.copy_rate_bps = st.rax_rate;
            self.app.carried = st.rax_bytes;
        }
    }

    /// The application model: the flow's application starts writing at `now`, its bytes generated at
    /// `rate_bps` (0: all at once) after `cached` bytes available at once. Call before [`Conn::start`]. A flow
    /// whose bytes are all ready and fit the send buffer is not limited at all (and writes at `now`).
    pub fn set_app(&mut self, p: &TcpParams, rate_bps: u64, cached: u64, now: Ps) {
        let size = self.size;
        let cached = if rate_bps == 0 { size } else { cached.min(size) };
        self.app = App { rate_bps, cached, base: 0, t0: now, written: 0, rc_t: now, ..self.app };
        if rate_bps > 0 {
            self.ns_per_byte = 8e9 / (rate_bps as f64).min(p.line_rate_bps);
        }
        if rate_bps == 0 && size <= p.send_buffer {
            self.app.base = size;
            self.app.written = size;
            self.app.done_ps = now;
            return;
        }
        self.avail_segs = 0;
        self.app_advance(p, now);
    }

    /// The flow's application so far.
    pub fn app(&self) -> &App {
        &self.app
    }

    /// The most bytes the send buffer lets the application have written: the bytes acknowledged plus the buffer.
    #[inline]
    fn app_bound(&self, p: &TcpParams) -> u64 {
        let acked = (self.snd_una as u64 * p.mss as u64).min(self.size);
        acked.saturating_add(p.send_buffer).min(self.size)
    }

    /// Bring the application's written bytes up to `now` under the send buffer's current bound (call before the
    /// bound moves), and the segments available to the sender with them. (Out of line and cold: only
    /// application-limited flows come here, and the per-packet paths of the others stay as small as they were.)
    #[cold]
    #[inline(never)]
    pub(super) fn app_advance(&mut self, p: &TcpParams, now: Ps) {
        let bound = self.app_bound(p);
        let a = &mut self.app;
        if a.base < a.cached {
            // the cached bytes are written as fast as the buffer takes them; the generation starts after them
            let w = a.cached.min(bound);
            a.base = w;
            a.t0 = now;
            a.written = w;
            if w == self.size && a.done_ps == NEVER {
                a.done_ps = now;
            }
            if w < a.cached {
                self.refresh_avail(p);
                return;
            }
        }
        let generated =
            if a.rate_bps == 0 { self.size } else { a.base.saturating_add(bytes_in(now - a.t0, a.rate_bps)) };
        if generated >= bound {
            if bound == self.size && a.done_ps == NEVER {
                // the last byte was written when it was generated (the buffer had room for it)
                a.done_ps = if a.rate_bps == 0 {
                    now
                } else {
                    (a.t0 + time_to_generate(self.size - a.base, a.rate_bps)).min(now)
                };
            }
            // blocked (or done): nothing more is generated until the bound moves, from then on
            a.base = bound;
            a.t0 = now;
            a.written = bound;
        } else {
            a.written = generated;
        }
        self.refresh_avail(p);
    }

    #[inline]
    fn refresh_avail(&mut self, p: &TcpParams) {
        self.avail_segs =
            if self.app.written >= self.size { self.n_segs } else { (self.app.written / p.mss as u64) as u32 };
    }

    /// The sender has sent every written segment and its windows would allow more: whether the application has
    /// written more since; if not, set the timer for the instant it will have.
    #[cold]
    #[inline(never)]
    pub(super) fn app_refill(&mut self, p: &TcpParams, now: Ps) -> bool {
        let before = self.avail_segs;
        self.app_advance(p, now);
        if self.avail_segs > before {
            return true;
        }
        self.app_schedule(p);
        false
    }

    /// When will the next segment be written? (No timer while the buffer blocks the application: an ACK will
    /// free space.)
    fn app_schedule(&mut self, p: &TcpParams) {
        let target = ((self.avail_segs as u64 + 1) * p.mss as u64).min(self.size);
        let a = &self.app;
        self.app_deadline = if target > self.app_bound(p) || a.base < a.cached || a.rate_bps == 0 {
            NEVER
        } else {
            a.t0 + time_to_generate(target - a.base, a.rate_bps)
        };
    }

    /// The application timer fired: send what has been written since.
    pub fn on_app_timer(&mut self, p: &TcpParams, now: Ps, out: &mut Vec<Packet>) {
        self.app_deadline = NEVER;
        if !self.established || self.sender_done() || self.avail_segs >= self.n_segs {
            return;
        }
        self.app_advance(p, now);
        self.send_more(p, now, out);
    }

    /// The state this connection hands to the next flow on it (the flow started at `started`).
    pub fn carry(&self, p: &TcpParams, started: Ps) -> ConnState {
        let hwm = (self.snd_nxt as u64 * p.mss as u64).min(self.size);
        ConnState {
            alpha: self.alpha,
            ssthresh: self.ssthresh,
            srtt: self.srtt,
            rttvar: self.rttvar,
            have_rtt: self.have_rtt,
            pias_count: self.pias_base + hwm.saturating_sub(self.pias_reset_at),
            last_write: started,
            rax_rate: self.app.copy_rate_bps,
            rax_bytes: self.app.carried.saturating_add(self.app.written),
        }
    }

    /// HyLine's STS: stop sending (see `stopped`). Packets already sent are still acknowledged.
    pub fn stop(&mut self) {
        self.stopped = true;
    }

    /// Is the flow stopped (HyLine)?
    pub fn is_stopped(&self) -> bool {
        self.stopped
    }

    /// HyLine's CTS to a flow that [`Conn::stop`] stopped: send again, from the initial window (the authors' ns-2
    /// agent resets its window to the initial one on every CTS), with the retransmission timer restarted if data
    /// is outstanding. A flow stopped during its handshake goes on with it: its SYN timer, held while stopped
    /// (`on_timeout`), is restarted, so a lost SYN or SYN-ACK is sent again (without it such a flow never opened,
    /// and the manager kept its path reserved for it: found at the HyLine recipe's paper scale, 44 of 40,000
    /// flows stuck).
    pub fn go(&mut self, p: &TcpParams, now: Ps, out: &mut Vec<Packet>) {
        self.stopped = false;
        if !self.established {
            // the handshake goes on; its SYN-ACK starts the data
            if self.rto_deadline == NEVER {
                self.rto_deadline = now + self.rto;
            }
            return;
        }
        self.cwnd = p.init_cwnd.min(p.max_cwnd);
        if self.snd_una < self.snd_nxt && self.rto_deadline == NEVER {
            self.rto_deadline = now + self.rto;
        }
        self.send_more(p, now, out);
    }
}
