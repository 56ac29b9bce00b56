//! Quantities of the simulation: integer time in picoseconds, link rates, and the one formula that turns
//! bytes into serialization delay. No floating-point clock anywhere: results must not depend on rounding.

/// Simulated time or a duration, in picoseconds. `u64` picoseconds last 213 days of simulated time.
pub type Ps = u64;

pub const PS_PER_NS: Ps = 1_000;
pub const PS_PER_US: Ps = 1_000_000;
pub const PS_PER_MS: Ps = 1_000_000_000;
pub const PS_PER_S: Ps = 1_000_000_000_000;

/// "Never" (an unset deadline or an unfinished flow).
pub const NEVER: Ps = u64::MAX;

/// Nanoseconds (as written in configs) to picoseconds, rounded to the nearest picosecond.
pub fn ns_to_ps(ns: f64) -> Ps {
    (ns * PS_PER_NS as f64).round() as Ps
}

/// Gigabits per second (as written in configs) to bits per second, rounded to the nearest bit/s.
pub fn gbps_to_bps(gbps: f64) -> u64 {
    (gbps * 1e9).round() as u64
}

/// Serialization delay of `bytes` on a link of `rate_bps`: bytes x 8 / rate, rounded up to a whole picosecond
/// so that a busy link is never faster than its rate. Exact for the usual rates (1, 10, 25, 40, 100 Gbps).
/// (Up to 2.3 MB, bytes x 8 x 10^12 fits in 64 bits and one 64-bit division gives the same quotient as the
/// 128-bit one, which is a library call; the per-packet uses are all far below that.)
#[inline]
pub fn tx_time(bytes: u32, rate_bps: u64) -> Ps {
    const MAX_64: u32 = (u64::MAX / (8 * PS_PER_S)) as u32;
    if bytes <= MAX_64 {
        return (bytes as u64 * 8 * PS_PER_S).div_ceil(rate_bps);
    }
    let bits_ps = bytes as u128 * 8 * PS_PER_S as u128;
    bits_ps.div_ceil(rate_bps as u128) as Ps
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The 64-bit quotient is the 128-bit one, at the edge of the 64-bit range, above it, and at odd rates.
    #[test]
    fn serialization_64_and_128_bit_agree() {
        let wide = |bytes: u32, rate: u64| (bytes as u128 * 8 * PS_PER_S as u128).div_ceil(rate as u128) as Ps;
        let edge = (u64::MAX / (8 * PS_PER_S)) as u32;
        for bytes in [0, 1, 40, 64, 1500, 9000, 65_535, edge - 1, edge, edge + 1, 10_000_000, u32::MAX] {
            for rate in [1, 7, 999_999_937, 1_000_000_000, 9_999_999_967, 10_000_000_000, 40_000_000_000, u64::MAX / 3] {
                assert_eq!(tx_time(bytes, rate), wide(bytes, rate), "{bytes} B at {rate} b/s");
            }
        }
    }

    #[test]
    fn serialization_of_common_rates_is_exact() {
        assert_eq!(tx_time(1500, 10_000_000_000), 1_200_000); // 1.2 us
        assert_eq!(tx_time(1500, 40_000_000_000), 300_000);
        assert_eq!(tx_time(40, 10_000_000_000), 32_000);
        assert_eq!(tx_time(1500, 1_000_000_000), 12_000_000);
        assert_eq!(tx_time(1500, 25_000_000_000), 480_000);
    }

    #[test]
    fn odd_rates_round_up() {
        // 1 byte at 3 bit/s = 8/3 s -> ceil in ps
        assert_eq!(tx_time(1, 3), 2_666_666_666_667);
    }

    #[test]
    fn unit_conversions() {
        assert_eq!(ns_to_ps(0.2), 200);
        assert_eq!(ns_to_ps(20_200.0), 20_200_000);
        assert_eq!(gbps_to_bps(2.5), 2_500_000_000);
    }
}
