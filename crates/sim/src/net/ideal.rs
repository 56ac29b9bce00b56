//! The idle fabric's physics: how long a flow takes alone on its path ([`ideal_fct`]), the yardstick of
//! slowdowns at both levels and what drawn deadlines are floored at ([`ideal_fcts`]).

use super::{flow_hash, Network};
use crate::config::Config;
use crate::units::{tx_time, Ps};
use rand::{RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// The ideal FCT (`ideal_fct`, no handshake) of each flow `src[i]` -> `dst[i]` of `size[i]` bytes, on the path
/// its ECMP hash picks in a run of `cfg` (the run's own salts: the first draw of its seeder, as `run` and the flow
/// level build the network): what drawn deadlines are floored at (`workload.deadline_floor = "ideal"`).
pub fn ideal_fcts(cfg: &Config, src: &[u32], dst: &[u32], size: &[u64]) -> Vec<Ps> {
    let net: Network = Network::build(cfg, Xoshiro256PlusPlus::seed_from_u64(cfg.seed).next_u64());
    let (mss, header) = (cfg.transport.mss_bytes, cfg.transport.header_bytes);
    (0..src.len())
        .map(|i| ideal_fct(&net.path_hops(src[i], dst[i], flow_hash(i as u32, false)), size[i].max(1), mss, header))
        .collect()
}

/// Exact completion time of `size` bytes sent back to back from t = 0 over `hops` (rate, delay), store and
/// forward, in packets of `mss` payload plus `header` bytes (the last one shorter): the arrival of the last
/// byte at the receiver. For n identical packets of service s_i at hop i the departure of packet j from hop
/// i is sum_{k<=i} s_k + sum_{k<i} d_k + (j-1) max_{k<=i} s_k (a tandem of deterministic servers); the last,
/// shorter packet then follows its own recurrence D_i = max(D_{i-1} + d_{i-1}, D_i(previous packet)) + s'_i.
pub fn ideal_fct(hops: &[(u64, Ps)], size: u64, mss: u32, header: u32) -> Ps {
    let n = size.div_ceil(mss as u64);
    let last_wire = (size - (n - 1) * mss as u64) as u32 + header;
    let full_wire = mss + header;
    let mut sum_s = 0u64;
    let mut sum_d = 0u64;
    let mut max_s = 0u64;
    let mut d_last: Ps = 0; // departure of the last packet from the previous hop (+ that hop's delay)
    for (i, &(rate, delay)) in hops.iter().enumerate() {
        let s_full = tx_time(full_wire, rate);
        let s_last = tx_time(last_wire, rate);
        sum_s += s_full;
        max_s = max_s.max(s_full);
        // departure of packet n-1 (the last full one) from this hop, if there is one
        let prev_done = if n >= 2 { Some(sum_s + sum_d + (n - 2) * max_s) } else { None };
        let arrive = if i == 0 { 0 } else { d_last };
        let start = match prev_done {
            Some(t) => arrive.max(t),
            None => arrive,
        };
        let done = start + s_last;
        d_last = done + delay;
        sum_d += delay;
    }
    d_last
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ideal_single_packet_is_sum_of_serialization_and_delays() {
        let hops = [(10_000_000_000u64, 1_000u64), (40_000_000_000, 2_000)];
        // 100 B payload + 40 B header = 140 B: 112 ns at 10G, 28 ns at 40G
        assert_eq!(ideal_fct(&hops, 100, 1460, 40), 112_000 + 1_000 + 28_000 + 2_000);
    }

    #[test]
    fn ideal_train_is_paced_by_the_bottleneck() {
        let hops = [(10_000_000_000u64, 500u64), (1_000_000_000, 500), (10_000_000_000, 500)];
        // 10 full packets: 1.2 us at 10G, 12 us at 1G
        let t = ideal_fct(&hops, 14_600, 1460, 40);
        assert_eq!(t, 1_200_000 + 12_000_000 + 1_200_000 + 1_500 + 9 * 12_000_000);
    }

    #[test]
    fn ideal_short_last_packet_on_uniform_path() {
        let hops = [(10_000_000_000u64, 0u64), (10_000_000_000, 0)];
        // 2 packets, 1500 B then 140 B: the last leaves host at 1.2+0.112, the switch at max(that, 2.4)+0.112
        assert_eq!(ideal_fct(&hops, 1560, 1460, 40), 2_400_000 + 112_000);
    }
}
