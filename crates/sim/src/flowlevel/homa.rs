//! Homa's grants at the flow level (homa): the pass below, on the messages an event can move (`prio`, as LAS:
//! each receiver's grants start from those of its messages the event leaves alone), or on all of them (the
//! global pass the incremental update is tested against).
//!
//! The packet level (`transport::homa`, `engine::family::homa`) has three rules that decide who sends:
//! - a message's first RTTbytes go blind, at once, on the unscheduled priorities, which are above every
//!   scheduled one;
//! - a receiver grants the rest only to the first `overcommit` messages of its list of messages that need
//!   grants (in order of fewest bytes left to receive), one per sender;
//! - a sender puts on its link a packet of the message with the fewest bytes left among those it may send.
//!
//! The pass: messages in order of (phase, bits left, id), the unscheduled phase first; a message in its
//! scheduled phase that its receiver does not grant gets nothing; every other one, in that order, takes what its
//! path has left (as pFabric's SRPT). A receiver's grants go, in order of fewest bits left, to its messages
//! larger than RTTbytes (in either phase: the receiver grants a message from its first packet on, so that its
//! grants arrive as its unscheduled bytes run out), the first of each sender, at most `overcommit`.

use super::maxmin::FillScratch;
use super::open::Open;
use super::ordered::crumb;

/// The rates of the messages `set` (slots of `flows`; sorted from the order given, the last event's) on what
/// `residual` holds (the resources' capacities), with receivers granting to `overcommit` messages at once.
pub(super) fn homa(flows: &mut [Open], set: &[u32], residual: &mut [f64], s: &mut FillScratch) {
    for v in s.granting.values_mut() {
        v.clear();
    }
    homa_pass(flows, set, residual, s);
}

/// `homa`, each receiver's grants starting from the senders `s.granting` holds for it (the incremental update:
/// those of its messages outside `set`, all with fewer bits left than the messages of `set`).
pub(super) fn homa_pass(flows: &mut [Open], set: &[u32], residual: &mut [f64], s: &mut FillScratch) {
    let overcommit = s.homa_overcommit.max(1);
    // the receivers' grants: by bits left, the first message of each sender, `overcommit` per receiver
    s.sorted.clear();
    s.sorted.extend_from_slice(set);
    s.sorted.sort_by(|&a, &b| {
        let (fa, fb) = (&flows[a as usize], &flows[b as usize]);
        fa.left.total_cmp(&fb.left).then(fa.id.cmp(&fb.id))
    });
    for &k in &s.sorted {
        let f = &mut flows[k as usize];
        // (a message larger than RTTbytes: scheduled now, or unscheduled with its phase's end ahead)
        let needs = f.class == 1 || f.tag_at.is_finite();
        f.granted = false;
        if !needs {
            continue;
        }
        let senders = s.granting.entry(f.dst).or_default();
        if senders.len() < overcommit && !senders.contains(&f.src) {
            senders.push(f.src);
            f.granted = true;
        }
    }
    // the unscheduled phase ahead of every scheduled byte, then fewest bits left
    s.order.clear();
    s.order.extend_from_slice(set);
    s.order.sort_by(|&a, &b| {
        let (fa, fb) = (&flows[a as usize], &flows[b as usize]);
        fa.class.cmp(&fb.class).then(fa.left.total_cmp(&fb.left)).then(fa.id.cmp(&fb.id))
    });
    for &k in &s.order {
        let f = &mut flows[k as usize];
        let r = if f.class == 1 && !f.granted {
            0.0
        } else {
            crumb(f.path().iter().map(|&l| residual[l as usize]).fold(f.cap, f64::min).max(0.0), f.line)
        };
        for &l in f.path() {
            residual[l as usize] -= r;
        }
        f.rate = r;
    }
}
