//! Homa's rules one at a time: priority levels and cutoffs (paper §3.4), and one message's two ends driven by
//! hand (grants, RESEND, BUSY, PING, DONE).

use super::*;
use crate::config::{Config, SchemeName};

fn params(sizes: &[u64]) -> HomaParams {
    let cfg = Config::from_json(r#"{"scheme": {"name": "homa"}}"#).unwrap();
    assert_eq!(cfg.scheme.name, SchemeName::Homa);
    HomaParams::from_config(&cfg, sizes, 10_000)
}

/// Levels in proportion to the unscheduled bytes: all messages shorter than RTTbytes leave one scheduled level;
/// all far longer leave one unscheduled level.
#[test]
fn unscheduled_levels_follow_the_unscheduled_share_of_bytes() {
    assert_eq!(unscheduled_levels(&[100, 2_000, 5_000], 10_000, 8), 7);
    assert_eq!(unscheduled_levels(&[10_000_000; 5], 10_000, 8), 1);
    // half the bytes unscheduled: 4 of 8; 60%: 4.8, rounded to 5
    assert_eq!(unscheduled_levels(&[10_000, 30_000], 10_000, 8), 4);
    assert_eq!(unscheduled_levels(&[5_000, 20_000, 5_000, 20_000], 10_000, 8), 5);
}

/// Each unscheduled level carries an equal share of the unscheduled bytes: 1,000 messages of 1..=1000 bytes
/// (all unscheduled) over 4 levels cut where the running sum reaches 1/4, 1/2 and 3/4 of the total.
#[test]
fn cutoffs_split_unscheduled_bytes_equally() {
    let sizes: Vec<u64> = (1..=1000).collect();
    let c = cutoffs(&sizes, 10_000, 4);
    // running sum n(n+1)/2 reaches k/4 of 500,500 at n = 500, 707, 866
    assert_eq!(c, vec![500, 707, 866]);
    let total: u64 = sizes.iter().sum();
    let mut lo = 0;
    for (i, &hi) in c.iter().chain(std::iter::once(&1000)).enumerate() {
        let share: u64 = sizes.iter().filter(|&&s| s > lo && s <= hi).sum();
        assert!((share as f64 / total as f64 - 0.25).abs() < 0.01, "level {i}: {share}");
        lo = hi;
    }
    // bytes beyond RTTbytes do not count: sizes 1..=1000 capped at 500 put half the bytes above 500
    let c = cutoffs(&sizes, 500, 2);
    assert_eq!(c.len(), 1);
    assert!((600..=720).contains(&c[0]), "{c:?}");
    assert!(cutoffs(&[7; 10], 500, 4).is_empty(), "one size: one level");
}

/// Scheduled priorities: the m granted messages use the m lowest scheduled levels, the most urgent on the
/// highest of them; unscheduled priorities by size.
#[test]
fn priorities() {
    let mut p = params(&[]);
    p.levels = 8;
    p.unsched_levels = 3;
    p.cutoffs = vec![1_000, 10_000];
    assert_eq!((p.sched_prio(0, 1)), 7);
    assert_eq!((0..3).map(|r| p.sched_prio(r, 3)).collect::<Vec<_>>(), vec![5, 6, 7]);
    assert_eq!((0..5).map(|r| p.sched_prio(r, 5)).collect::<Vec<_>>(), vec![3, 4, 5, 6, 7]);
    // more granted than scheduled levels: the extra share the lowest
    assert_eq!((0..7).map(|r| p.sched_prio(r, 7)).collect::<Vec<_>>(), vec![3, 4, 5, 6, 7, 7, 7]);
    assert_eq!([1, 1_000, 1_001, 10_000, 10_001, u64::MAX].map(|b| p.unsched_prio(b)), [0, 0, 1, 1, 2, 2]);
}

/// One 10-segment message with 3 unscheduled segments, its two ends driven by hand.
#[test]
fn one_message_by_hand() {
    let mut p = params(&[]);
    p.rtt_segs = 3;
    p.mss = 1_000;
    p.header = 40;
    p.resend_timeout = 1_000;
    let mut m = HomaMsg::new(&p, 0, 1, 2, 10_000, 10_000, 0);
    let mut out = Vec::new();
    // the sender may send the 3 unscheduled segments, no more
    let sent: Vec<_> = (0..3).map(|t| m.next_packet(&p, t)).collect();
    assert!(!m.can_send());
    assert_eq!(sent.iter().map(|k| k.seq).collect::<Vec<_>>(), vec![0, 1, 2]);
    assert!(sent.iter().all(|k| k.hdr.len == 10_000 && k.hdr.unsched == 3 && k.wire == 1_040));
    // segment 1 is lost; 0 and 2 arrive; the receiver grants 2 + 3 = 5
    assert_eq!(m.on_data(&p, 10, &sent[0], &mut out), HomaOutcome { grants: true, ..Default::default() });
    m.on_data(&p, 11, &sent[2], &mut out);
    assert!(out.is_empty(), "data alone sends nothing back; grants come from the receiver's list");
    assert!(m.needs_grants());
    m.set_active(11, true);
    m.grant(&p, 11, 6, &mut out);
    assert_eq!((out[0].hdr.kind, out[0].seq, out[0].hdr.arg, out[0].dst), (kind::GRANT, 5, 6, 1));
    let g = out.pop().unwrap();
    m.on_ctrl_at_sender(&p, 20, &g, &mut out);
    assert_eq!((m.granted, m.sched_prio), (5, 6));
    let (a, b) = (m.next_packet(&p, 21), m.next_packet(&p, 22));
    assert_eq!((a.seq, a.prio, b.seq, b.prio), (3, 6, 4, 6));
    m.on_data(&p, 30, &a, &mut out);
    m.on_data(&p, 31, &b, &mut out);
    // nothing more arrives: the sender (last sent at 22) times out first, and PINGs; the receiver answers with
    // its grant (what it misses, its own timer asks for)
    assert_eq!(m.deadline(&p), 22 + 1_000);
    m.on_timer(&p, 1_022, &mut out);
    let ping = out.pop().unwrap();
    assert!(out.is_empty());
    assert_eq!(ping.hdr.kind, kind::PING);
    m.on_ctrl_at_receiver(&p, 1_025, &ping, &mut out);
    assert_eq!((out[0].hdr.kind, out[0].seq, out[0].hdr.arg), (kind::GRANT, 5, KEEP_PRIO));
    out.clear();
    // after its own timeout the receiver asks for segment 1 (and only it)
    assert_eq!(m.deadline(&p), 31 + 1_000);
    m.on_timer(&p, 1_031, &mut out);
    assert_eq!(out.len(), 1);
    assert_eq!((out[0].hdr.kind, out[0].seq, out[0].sack), (kind::RESEND, 1, 2));
    let r = out.pop().unwrap();
    m.on_ctrl_at_sender(&p, 1_040, &r, &mut out);
    assert!(out.is_empty(), "segment 1 was sent: no BUSY");
    let again = m.next_packet(&p, 1_041);
    assert_eq!((again.seq, again.flags & flags::RETX != 0), (1, true));
    assert_eq!(m.counters.retransmits, 1);
    // a RESEND for segments never sent (the sender is busy elsewhere): BUSY, and they count as granted
    let resend = Packet { seq: 5, sack: 7, ..r };
    m.on_ctrl_at_sender(&p, 1_050, &resend, &mut out);
    assert_eq!(out.pop().map(|k| k.hdr.kind), Some(kind::BUSY));
    assert_eq!(m.granted, 7);
    // the rest arrives: complete at the last one, DONE goes back, the sender is done
    m.on_data(&p, 1_060, &again, &mut out);
    for s in 5..10 {
        m.granted = 10;
        let k = m.next_packet(&p, 1_100 + s as u64);
        let o = m.on_data(&p, 1_200 + s as u64, &k, &mut out);
        assert_eq!(o.complete, s == 9, "segment {s}");
    }
    assert_eq!(out.pop().map(|k| k.hdr.kind), Some(kind::DONE));
    let done = Packet { hdr: HomaHdr { kind: kind::DONE, ..HomaHdr::default() }, ..r };
    assert!(m.on_ctrl_at_sender(&p, 1_300, &done, &mut out).sender_done);
}

/// The sender's timeout: a PING; the receiver answers UNKNOWN if nothing arrived, and the sender then resends
/// its unscheduled segments.
#[test]
fn a_message_whose_packets_were_all_lost_starts_again() {
    let mut p = params(&[]);
    p.rtt_segs = 2;
    p.mss = 1_000;
    p.resend_timeout = 500;
    let mut m = HomaMsg::new(&p, 0, 1, 2, 5_000, 5_000, 0);
    let mut out = Vec::new();
    m.next_packet(&p, 0);
    m.next_packet(&p, 1);
    assert_eq!(m.deadline(&p), 501);
    m.on_timer(&p, 501, &mut out);
    let ping = out.pop().unwrap();
    assert_eq!((ping.hdr.kind, ping.dst), (kind::PING, 2));
    m.on_ctrl_at_receiver(&p, 510, &ping, &mut out);
    let unknown = out.pop().unwrap();
    assert_eq!((unknown.hdr.kind, unknown.dst), (kind::UNKNOWN, 1));
    let o = m.on_ctrl_at_sender(&p, 520, &unknown, &mut out);
    assert!(o.ready);
    assert_eq!([m.next_packet(&p, 521).seq, m.next_packet(&p, 522).seq], [0, 1]);
    assert!(!m.can_send());
}

/// Imprecise sizes: a message announced as 3 segments but 6 long announces RTTbytes beyond each segment once
/// past its announcement, and the receiver grants on until the LAST flag shows the end.
#[test]
fn a_message_longer_than_announced() {
    let mut p = params(&[]);
    p.rtt_segs = 2;
    p.mss = 1_000;
    p.sizes = crate::config::SizeInfo::Estimate;
    let mut m = HomaMsg::new(&p, 0, 1, 2, 6_000, 3_000, 0);
    let mut out = Vec::new();
    m.granted = 6;
    let pk: Vec<_> = (0..6).map(|t| m.next_packet(&p, t)).collect();
    assert_eq!(pk.iter().map(|k| k.hdr.len).collect::<Vec<_>>(), vec![3_000, 3_000, 5_000, 6_000, 7_000, 6_000]);
    assert_eq!(pk[5].hdr.arg & LAST, LAST);
    for k in &pk[..5] {
        assert!(!m.on_data(&p, 10, k, &mut out).complete);
    }
    assert!(m.needs_grants(), "the end is not known yet");
    assert!(m.on_data(&p, 11, &pk[5], &mut out).complete);
}

/// A RESEND repeated before the sender got to the first one queues nothing twice.
#[test]
fn repeated_resends_queue_each_segment_once() {
    let mut p = params(&[]);
    p.rtt_segs = 8;
    p.mss = 1_000;
    let mut m = HomaMsg::new(&p, 0, 1, 2, 8_000, 8_000, 0);
    let mut out = Vec::new();
    for t in 0..8 {
        m.next_packet(&p, t);
    }
    let resend = |a, b| Packet {
        seq: a,
        sack: b,
        hdr: HomaHdr { kind: kind::RESEND, ..HomaHdr::default() },
        flags: flags::ACK,
        ..Packet::default()
    };
    m.on_ctrl_at_sender(&p, 10, &resend(2, 5), &mut out);
    m.on_ctrl_at_sender(&p, 11, &resend(1, 7), &mut out);
    let mut again: Vec<u32> = std::iter::from_fn(|| m.can_send().then(|| m.next_packet(&p, 20).seq)).collect();
    again.sort();
    assert_eq!(again, vec![1, 2, 3, 4, 5, 6]);
}

/// A message granted to its end that the receiver then passes over (a shorter one arrived) still expects its
/// granted data: a lost segment is asked for after the timeout.
#[test]
fn a_fully_granted_message_passed_over_still_expects_its_data() {
    let mut p = params(&[]);
    p.rtt_segs = 3;
    p.mss = 1_000;
    p.resend_timeout = 1_000;
    let mut m = HomaMsg::new(&p, 0, 1, 2, 6_000, 6_000, 0);
    let mut out = Vec::new();
    m.granted = 6;
    let pk: Vec<_> = (0..6).map(|t| m.next_packet(&p, t)).collect();
    m.set_active(0, true);
    for k in &pk[..3] {
        m.on_data(&p, 10, k, &mut out);
    }
    m.grant(&p, 10, 7, &mut out);
    assert_eq!(out.pop().map(|k| k.seq), Some(6), "granted to its end");
    m.set_active(11, false);
    // segment 3 is lost; 4 and 5 arrive
    m.on_data(&p, 20, &pk[4], &mut out);
    m.on_data(&p, 21, &pk[5], &mut out);
    assert!(m.deadline(&p) <= 21 + 1_000);
    m.on_timer(&p, 1_021, &mut out);
    assert!(out.iter().any(|k| k.hdr.kind == kind::RESEND && k.seq == 3 && k.sack == 4), "{out:?}");
}

/// Parameters for the two options' tests: 1,000 B segments, 40 B headers, RTTbytes 4 segments, 8 levels of which
/// 4 unscheduled with the cutoffs 1,000, 2,000 and 3,000 B.
fn four_levels(graduated: bool, tail_boost: bool) -> HomaParams {
    let mut p = params(&[]);
    (p.mss, p.header, p.rtt_segs, p.levels, p.unsched_levels) = (1_000, 40, 4, 8, 4);
    p.cutoffs = vec![1_000, 2_000, 3_000];
    (p.graduated, p.tail_boost) = (graduated, tail_boost);
    p
}

/// Sends one message alone, granting after every arrival as the engine does (one granted message: the
/// scheduler's level is 7), and returns each segment's priority.
fn priorities_alone(p: &HomaParams, size: u64) -> Vec<u8> {
    let mut m = HomaMsg::new(p, 0, 1, 2, size, size, 0);
    let mut out = Vec::new();
    let mut prio = vec![u8::MAX; m.segs as usize];
    let mut t = 0;
    while !m.complete {
        t += 1;
        let k = m.next_packet(p, t);
        prio[k.seq as usize] = k.prio;
        m.on_data(p, t, &k, &mut out);
        if m.needs_grants() {
            m.set_active(t, true);
            m.grant(p, t, p.sched_prio(0, 1), &mut out);
        }
        for g in out.drain(..).filter(|g| g.hdr.kind == kind::GRANT).collect::<Vec<_>>() {
            m.on_ctrl_at_sender(p, t, &g, &mut out);
        }
        out.retain(|g| g.hdr.kind == kind::GRANT);
    }
    prio
}

/// Tail boost: a 10-segment message (4 unscheduled, 6 scheduled) whose last RTTbytes (segments 6-9, 4,000 B
/// to 1,000 B left) go at an unscheduled level: with per-message levels, the level of a 10,000 B message (3);
/// with per-packet levels, the level for the bytes left (4,000 B: 3, 3,000 B: 2, 2,000 B: 1, 1,000 B: 0). The
/// scheduled segments before the tail (4 and 5) keep the scheduler's level, 7. Without the option every
/// scheduled segment is at 7.
#[test]
fn the_last_rtt_bytes_of_a_scheduled_message_go_at_an_unscheduled_level() {
    assert_eq!(priorities_alone(&four_levels(false, false), 10_000), [3, 3, 3, 3, 7, 7, 7, 7, 7, 7]);
    assert_eq!(priorities_alone(&four_levels(false, true), 10_000), [3, 3, 3, 3, 7, 7, 3, 3, 3, 3]);
    assert_eq!(priorities_alone(&four_levels(true, true), 10_000), [3, 3, 3, 3, 7, 7, 3, 2, 1, 0]);
    // a short last segment: 9,500 B leaves 3,500 B from segment 6 on (level 3), then 2,500, 1,500, 500
    assert_eq!(priorities_alone(&four_levels(true, true), 9_500), [3, 3, 3, 3, 7, 7, 3, 2, 1, 0]);
    // the tail starts at the first segment with at most RTTbytes (4,000 B) left
    let p = four_levels(false, true);
    assert_eq!((p.tail_start(10_000), p.tail_start(9_500), p.tail_start(4_000), p.tail_start(100)), (6, 6, 0, 0));
    // a message granted to its end by one grant (its receiver was busy elsewhere): the tail is still boosted
    let mut m = HomaMsg::new(&p, 0, 1, 2, 10_000, 10_000, 0);
    let mut out = Vec::new();
    let first = m.next_packet(&p, 0);
    m.on_data(&p, 1, &first, &mut out);
    m.received = 6;
    m.set_active(1, true);
    m.grant(&p, 1, 7, &mut out);
    let g = out.pop().unwrap();
    assert_eq!((g.seq, g.hdr.arg, g.hdr.len), (10, 7, 7));
    m.on_ctrl_at_sender(&p, 2, &g, &mut out);
    let prios: Vec<u8> = (0..9).map(|t| m.next_packet(&p, 3 + t).prio).collect();
    assert_eq!(prios, [3, 3, 3, 7, 7, 3, 3, 3, 3]);
}

/// Per-packet unscheduled levels: a 3,500 B message sends 3,500, 2,500, 1,500 and 500 B left at levels 3, 2,
/// 1, 0 (per message: all at 3); a 1,000 B message at 0 either way.
#[test]
fn an_unscheduled_packets_level_follows_the_bytes_its_message_has_left() {
    assert_eq!(priorities_alone(&four_levels(true, false), 3_500), [3, 2, 1, 0]);
    assert_eq!(priorities_alone(&four_levels(false, false), 3_500), [3, 3, 3, 3]);
    assert_eq!(priorities_alone(&four_levels(true, false), 1_000), [0]);
    // scheduled segments keep the scheduler's level
    assert_eq!(priorities_alone(&four_levels(true, false), 6_000), [3, 3, 3, 2, 7, 7]);
}

/// Remaining-size cutoffs by hand. 1,000 B segments, 40 B headers, RTTbytes 2 segments, grants of 100 B.
/// Messages of 1,000 B (one packet: 1,040 B at key 1,000) and 4,000 B (unscheduled packets at keys 4,000 and
/// 3,000, 1,040 B each; two grants of 100 B at key 0): keys 0: 200, 1,000: 1,040, 3,000: 1,040, 4,000: 1,040 B,
/// 3,320 B in all. Two levels: half is 1,660 B; the running sum is 1,240 B after key 1,000 and 2,280 B after
/// key 3,000, so the cutoff is 3,000. Four levels: quarters at 830 (key 1,000), 1,660 (3,000) and 2,490 (4,000,
/// the largest key: no cutoff needed above it).
/// With the tail boost the 4,000 B message's last 2,000 B (keys 2,000 and 1,000) count too.
#[test]
fn remaining_cutoffs_by_hand() {
    let w = PacketWeights { mss: 1_000, header: 40, grant: 100, rtt_segs: 2, tail_boost: false };
    assert_eq!(remaining_cutoffs(&[1_000, 4_000], &w, 2), vec![3_000]);
    assert_eq!(remaining_cutoffs(&[1_000, 4_000], &w, 4), vec![1_000, 3_000]);
    // tail: keys 0: 200, 1,000: 2,080, 2,000: 1,040, 3,000: 1,040, 4,000: 1,040; 5,400 in all; thirds at 1,800
    // (key 1,000) and 3,600 (key 3,000)
    let w = PacketWeights { tail_boost: true, ..w };
    assert_eq!(remaining_cutoffs(&[1_000, 4_000], &w, 3), vec![1_000, 3_000]);
    // grants heavy enough to fill a level of their own: the top level is left to them (cutoff 0)
    let w = PacketWeights { grant: 10_000, tail_boost: false, ..w };
    assert_eq!(remaining_cutoffs(&[1_000, 4_000], &w, 2), vec![0]);
    assert!(remaining_cutoffs(&[], &w, 4).is_empty());
}
