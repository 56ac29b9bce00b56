//! QCLIMB's and RAX's tags at the flow level, by hand.

use super::*;
use crate::policy::rax::RaxParams;
use crate::policy::{Bounds, Tagging};

/// QCLIMB's tag at the flow level is Algorithm 1's at every byte count (the appendix's example of
/// `policy::tests::qclimb_follows_algorithm_1`: queues <= 2, [3, 5], >= 6, L = 6, U = 9, slack 1), and the
/// byte count at which it is due again is never past a change of it.
#[test]
fn qclimb_tags_follow_algorithm_1() {
    let bounds = vec![Bounds { lower: 6, upper: 9, estimate: 7, pias: false }];
    let tags = Tags::Qclimb {
        tagging: Tagging::Qclimb { thresholds: vec![2, 5], slack: 1 },
        thresholds: vec![2, 5],
        slack: 1,
        bounds,
        per_byte: 8.0,
    };
    let want = [2u8, 1, 1, 1, 0, 0, 0, 2, 2, 2, 2];
    for b in 0..want.len() {
        let (tag, at) = tags.at(0, b as f64 * 8.0);
        assert_eq!(tag, want[b], "{b} bytes sent");
        let next = if at.is_finite() { (at / 8.0) as usize } else { want.len() };
        assert!(next > b && want[b..next.min(want.len())].iter().all(|&t| t == tag), "{b}: due at {next}");
    }
    assert_eq!(tags.at(0, 7.0 * 8.0), (2, 9.0 * 8.0), "demoted by bytes sent until U");
}

/// RAX at 10 Gbps (Q_1 = 160 us, E = 2): RAX+ ranks a 1 MB flow by its unsent bytes at line rate, 800 us
/// (queue 3: 640 <= T < 1280) until more than 200,000 bytes are sent (T < 640 us: queue 2); RAX's estimate
/// of a 100 KB flow is its size plus its unsent bytes at line rate, 160 us at first (queue 1), below Q_1
/// after one byte.
#[test]
fn rax_tags_by_hand() {
    let cfg = Config::from_json(r#"{"scheme": {"name": "rax-plus"}}"#).unwrap();
    assert_eq!(cfg.topology.host_link_gbps(), 10.0);
    let rax = RaxParams::from_config(&cfg, true);
    let tags = Tags::Rax { rax: rax.clone(), size: vec![1_000_000], per_byte: 8.0 };
    assert_eq!(tags.at(0, 0.0), (3, 200_001.0 * 8.0));
    assert_eq!(tags.at(0, 200_001.0 * 8.0).0, 2);
    let tags = Tags::Rax { rax: RaxParams { plus: false, ..rax }, size: vec![100_000], per_byte: 8.0 };
    assert_eq!(tags.at(0, 0.0), (1, 8.0));
    assert_eq!(tags.at(0, 8.0).0, 0);
}
