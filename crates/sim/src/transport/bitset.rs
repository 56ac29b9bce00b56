//! A fixed-size bit set over a flow's segments (allocated once when the flow starts, never per packet).

#[derive(Debug, Clone, Default)]
pub struct BitSet {
    words: Vec<u64>,
}

impl BitSet {
    pub fn new(bits: u32) -> Self {
        BitSet { words: vec![0; (bits as usize).div_ceil(64)] }
    }

    /// How many bits it holds (a multiple of 64).
    #[inline]
    pub fn capacity(&self) -> usize {
        self.words.len() * 64
    }

    #[inline]
    pub fn get(&self, i: u32) -> bool {
        self.words[(i >> 6) as usize] >> (i & 63) & 1 != 0
    }

    #[inline]
    pub fn set(&mut self, i: u32) {
        self.words[(i >> 6) as usize] |= 1 << (i & 63);
    }

    #[inline]
    pub fn clear(&mut self, i: u32) {
        self.words[(i >> 6) as usize] &= !(1 << (i & 63));
    }

    /// First index >= `from` whose bit is clear (may be past the end: then it is `words.len() * 64`).
    #[inline]
    pub fn first_zero_from(&self, from: u32) -> u32 {
        let mut w = (from >> 6) as usize;
        if w >= self.words.len() {
            return from;
        }
        // ones below `from` in its word are treated as set
        let mut word = self.words[w] | ((1u64 << (from & 63)) - 1);
        loop {
            if word != u64::MAX {
                return (w as u32) * 64 + (!word).trailing_zeros();
            }
            w += 1;
            if w == self.words.len() {
                return (w as u32) * 64;
            }
            word = self.words[w];
        }
    }

    /// First index >= `from` whose bit is set, if any.
    #[inline]
    pub fn first_one_from(&self, from: u32) -> Option<u32> {
        let mut w = (from >> 6) as usize;
        if w >= self.words.len() {
            return None;
        }
        let mut word = self.words[w] & !((1u64 << (from & 63)) - 1);
        loop {
            if word != 0 {
                return Some((w as u32) * 64 + word.trailing_zeros());
            }
            w += 1;
            if w == self.words.len() {
                return None;
            }
            word = self.words[w];
        }
    }

    /// Drop the storage (the flow is done).
    pub fn release(&mut self) {
        self.words = Vec::new();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_zero_scans_words() {
        let mut b = BitSet::new(200);
        assert_eq!(b.first_zero_from(0), 0);
        for i in 0..130 {
            b.set(i);
        }
        assert_eq!(b.first_zero_from(0), 130);
        assert_eq!(b.first_zero_from(129), 130);
        assert_eq!(b.first_zero_from(131), 131);
        b.clear(5);
        assert_eq!(b.first_zero_from(0), 5);
        assert_eq!(b.first_zero_from(6), 130);
        for i in 130..256 {
            if i < 200 {
                b.set(i);
            }
        }
        assert!(b.first_zero_from(6) >= 200);
        let mut c = BitSet::new(300);
        assert_eq!(c.first_one_from(0), None);
        c.set(70);
        c.set(250);
        assert_eq!(c.first_one_from(0), Some(70));
        assert_eq!(c.first_one_from(70), Some(70));
        assert_eq!(c.first_one_from(71), Some(250));
        assert_eq!(c.first_one_from(251), None);
    }
}
