//! The timers' heap against an ordered set.

use super::*;

/// The timers against an ordered set of (time, slot): random sets, moves and removals, and every pop the set's
/// least entry.
#[test]
fn timers_pop_in_order_of_time_then_slot() {
    let mut t = Timers::default();
    let mut set = std::collections::BTreeSet::new();
    let mut at = vec![None; 64];
    let mut seed = 9u64;
    for step in 0..20_000 {
        seed = mix64(seed.wrapping_add(step));
        let k = (seed % 64) as u32;
        let when = (seed >> 8) % 50;
        let op = (seed >> 20) % 4;
        if op != 1 {
            if let Some(old) = at[k as usize].take() {
                set.remove(&(old, k));
            }
        }
        match op {
            0 => t.remove(k),
            1 => {
                if let Some((w, j)) = t.peek() {
                    assert_eq!(set.pop_first(), Some((w, j)));
                    t.remove(j);
                    at[j as usize] = None;
                }
            }
            _ => {
                t.set(k, when);
                set.insert((when, k));
                at[k as usize] = Some(when);
            }
        }
        assert_eq!(t.peek(), set.first().copied());
        assert_eq!(t.heap.len(), set.len());
    }
}
