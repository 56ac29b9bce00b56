//! Host-side tagging hooks: QCLIMB's bounds, PIAS inside a QCLIMB run, and RAX's priority from the remaining
//! time (section III of the RAX paper).

use super::{Conn, TcpParams};
use crate::policy::rax::RaxParams;
use crate::units::Ps;

impl Conn {
    /// Give the flow its predicted bounds (QCLIMB); by default both are the estimate.
    pub fn set_bounds(&mut self, lower: u64, upper: u64) {
        self.bounds.lower = lower;
        self.bounds.upper = upper;
    }

    /// Schedule this flow as PIAS inside a QCLIMB run (a flow QCLIMB has no bounds for, section 5.2.2): tagged
    /// by bytes sent over the same thresholds, TCP's own out-of-order handling (duplicate ACKs), retransmissions
    /// at the priority of the original transmission.
    pub fn use_pias(&mut self) {
        self.bounds.pias = true;
        self.qclimb_ooo = false;
        self.retx_top = false;
        self.rx_prio = Vec::new();
    }

    /// RAX, before a data segment: the written bytes up to date, a copy-rate sample if the interval has passed
    /// (while the application writes), and the priority from the remaining time.
    #[inline(never)]
    pub(super) fn rax_update(&mut self, p: &TcpParams, r: &RaxParams, now: Ps) {
        if self.avail_segs < self.n_segs {
            self.app_advance(p, now);
        }
        let a = &mut self.app;
        // (no sample once everything is written: as the kernel hook, which samples at the application's writes)
        if now >= a.rc_t + r.interval_ps && a.written < self.size {
            a.copy_rate_bps = r.smooth(a.copy_rate_bps, a.written - a.rc_written, now - a.rc_t);
            a.rc_t = now;
            a.rc_written = a.written;
        }
        let sent = (self.snd_nxt as u64 * p.mss as u64).min(self.size);
        let t = if r.plus {
            // (the size it knows of: the true size unless `scheme.size_info` says otherwise)
            let b = &self.bounds;
            let known = r.known_total(self.size, b.estimate, b.lower, b.upper, sent);
            r.true_remaining_ps(known, a.written.min(known), sent, a.rate_bps)
        } else {
            // (`carried`: the connection's earlier flows' bytes, with the state per connection; 0 otherwise)
            r.estimate_ps(a.written + a.carried, sent + a.carried, a.copy_rate_bps)
        };
        let prio = r.priority(t);
        if prio < self.prio && self.snd_nxt > 0 {
            self.counters.priority_rises += 1;
            a.rise_upto = self.snd_nxt;
        }
        self.prio = prio;
    }
}
