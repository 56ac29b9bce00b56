//! `Open`: its layout, and when a flow gives up.

use super::*;

/// What SRPT's update reads of each flow behind a change of grant (its path, grant, cap, line rate and
/// `ahead`) spans the first three cache lines of `Open`, the path in the first as the max-min update wants.
#[test]
fn layout_puts_the_ordered_update_in_three_lines() {
    use std::mem::offset_of;
    assert!(offset_of!(Open, hops) + 4 * MAX_HOPS <= 64 && offset_of!(Open, hops_len) < 64);
    for off in [offset_of!(Open, grant), offset_of!(Open, cap), offset_of!(Open, line)] {
        assert!((64..128).contains(&off), "{off}");
    }
    assert_eq!(offset_of!(Open, ahead), 128);
}

/// Giving up: at line rate 1 with 10 bits left and the deadline 20 s away, a flow at rate 0.5 can make it
/// until t + (10 - 0.5 t) > 20, t > 20 s; at rate 1 it never gives up before its deadline; a paused PDQ flow
/// with a 5 s RTT gives up once t + 10 + 5 > 20, t > 5 s; one past its deadline at once.
#[test]
fn give_up_times_by_hand() {
    let s = 1_000_000_000_000u64;
    let mut f = flow(0, &[0], 1.0);
    f.left = 10.0;
    f.deadline = 20 * s;
    f.rtt = 5 * s;
    f.term = TERM_LINE;
    f.rate = 0.5;
    assert_eq!(f.give_up_at(0), 20 * s, "(20 s is also its deadline)");
    f.left = 12.0;
    assert_eq!(f.give_up_at(0), 16 * s + 1, "t + 12 - 0.5 t > 20: t > 16 s");
    f.rate = 1.0;
    assert_eq!(f.give_up_at(0), 20 * s);
    f.left = 10.0;
    f.rate = 0.0;
    f.term = TERM_PAUSED;
    assert_eq!(f.give_up_at(0), 5 * s + 1);
    f.left = 16.0;
    assert_eq!(f.give_up_at(0), 0, "16 + 5 > 20: at once");
    f.term = TERM_DEADLINE;
    assert_eq!(f.give_up_at(0), 20 * s);
    assert_eq!(f.give_up_at(21 * s), 21 * s);
    f.term = TERM_NEVER;
    assert_eq!(f.give_up_at(21 * s), NEVER);
}
