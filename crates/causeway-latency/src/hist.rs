//! Latency histograms on a logarithmic axis (OSprof §2): one bin per power of two, or
//! finer, `2^k` bins per power of two.
//!
//! Bins are numbered from 0 on one axis for every resolution: bin `b` of a histogram
//! with `k` bins per octave covers `[2^(b/k) , 2^((b+1)/k))` nanoseconds, rounded to
//! integers as the bit pattern of the latency gives them (the top `log2 k` bits below
//! the leading one pick the sub-bin). A latency of 0 ns goes to bin 0 with 1 ns.

use crate::error::LatencyError;
use serde::{Deserialize, Serialize};

/// The largest number of bins per octave (16: a bin is then about 4.4 % wide).
pub const MAX_BINS_PER_OCTAVE: u8 = 16;

/// How finely a histogram divides each power of two.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Resolution {
    /// log2 of the bins per octave: 0 for OSprof's log2 bins, 1 for two per octave, ...
    shift: u8,
}

impl Resolution {
    /// One bin per power of two, as OSprof and BCC print.
    pub const LOG2: Resolution = Resolution { shift: 0 };

    /// `bins` bins per power of two: 1, 2, 4, 8 or 16.
    pub fn per_octave(bins: u8) -> Result<Resolution, LatencyError> {
        if bins == 0 || !bins.is_power_of_two() || bins > MAX_BINS_PER_OCTAVE {
            return Err(LatencyError::Resolution(bins));
        }
        Ok(Resolution {
            shift: bins.trailing_zeros() as u8,
        })
    }

    /// Bins per power of two.
    pub fn bins_per_octave(self) -> u32 {
        1 << self.shift
    }

    /// The bin a latency falls in.
    pub fn bin_of(self, ns: u64) -> u32 {
        let ns = ns.max(1);
        let octave = 63 - ns.leading_zeros();
        let s = u32::from(self.shift);
        // The bits just below the leading one choose the sub-bin; for latencies shorter
        // than the sub-bin count there are fewer bits, and the lower sub-bins hold
        // nothing (there is no integer latency between 1 and 2 ns).
        let sub = if octave >= s {
            (ns >> (octave - s)) & ((1 << s) - 1)
        } else {
            (ns << (s - octave)) & ((1 << s) - 1)
        };
        (octave << s) | sub as u32
    }

    /// First latency (ns) in bin `bin`.
    pub fn lower_ns(self, bin: u32) -> u64 {
        let s = u32::from(self.shift);
        let octave = bin >> s;
        let sub = u64::from(bin & ((1 << s) - 1));
        if octave >= 64 {
            return u64::MAX;
        }
        let base = 1u64 << octave;
        if octave >= s {
            base + (sub << (octave - s))
        } else {
            // Sub-bins below 1 ns resolution: rounded up to the next integer.
            let num = (u128::from((1u64 << s) + sub)) << octave;
            num.div_ceil(1u128 << s) as u64
        }
    }

    /// First latency (ns) after bin `bin` (saturates at `u64::MAX`).
    pub fn upper_ns(self, bin: u32) -> u64 {
        self.lower_ns(bin + 1)
    }

    /// Number of bins that cover every `u64` latency.
    pub fn bin_count(self) -> u32 {
        64 << self.shift
    }
}

/// Counts of operations per latency bin, with their total, sum, minimum and maximum.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Histogram {
    resolution: Resolution,
    /// Count per bin, from bin 0 to the highest bin used.
    counts: Vec<u64>,
    total: u64,
    sum_ns: u128,
    min_ns: u64,
    max_ns: u64,
}

impl Histogram {
    /// An empty histogram.
    pub fn new(resolution: Resolution) -> Histogram {
        Histogram {
            resolution,
            counts: Vec::new(),
            total: 0,
            sum_ns: 0,
            min_ns: u64::MAX,
            max_ns: 0,
        }
    }

    /// A log2 histogram from per-bin counts (bin `b` holds `[2^b, 2^(b+1))` ns), as an
    /// in-kernel aggregation hands them over. Sum, minimum and maximum are estimated from
    /// the bins' bounds.
    pub fn from_log2_slots(slots: &[u64]) -> Histogram {
        let mut h = Histogram::new(Resolution::LOG2);
        for (bin, &n) in slots.iter().enumerate() {
            if n > 0 {
                h.add_bin(bin as u32, n);
            }
        }
        h
    }

    /// Count one operation of `ns` nanoseconds.
    pub fn record(&mut self, ns: u64) {
        let bin = self.resolution.bin_of(ns) as usize;
        if bin >= self.counts.len() {
            self.counts.resize(bin + 1, 0);
        }
        self.counts[bin] += 1;
        self.total += 1;
        self.sum_ns += u128::from(ns);
        self.min_ns = self.min_ns.min(ns);
        self.max_ns = self.max_ns.max(ns);
    }

    /// Count `n` operations in `bin` whose exact latencies are unknown (their sum is
    /// taken at the bin's lower bound).
    pub fn add_bin(&mut self, bin: u32, n: u64) {
        let b = bin as usize;
        if b >= self.counts.len() {
            self.counts.resize(b + 1, 0);
        }
        self.counts[b] += n;
        self.total += n;
        let lo = self.resolution.lower_ns(bin);
        self.sum_ns += u128::from(lo) * u128::from(n);
        self.min_ns = self.min_ns.min(lo);
        self.max_ns = self
            .max_ns
            .max(self.resolution.upper_ns(bin).saturating_sub(1));
    }

    /// Add every operation of `other` (same resolution).
    pub fn merge(&mut self, other: &Histogram) -> Result<(), LatencyError> {
        if other.resolution != self.resolution {
            return Err(LatencyError::Mismatch);
        }
        if other.counts.len() > self.counts.len() {
            self.counts.resize(other.counts.len(), 0);
        }
        for (a, b) in self.counts.iter_mut().zip(&other.counts) {
            *a += b;
        }
        self.total += other.total;
        self.sum_ns += other.sum_ns;
        self.min_ns = self.min_ns.min(other.min_ns);
        self.max_ns = self.max_ns.max(other.max_ns);
        Ok(())
    }

    /// The bin layout.
    pub fn resolution(&self) -> Resolution {
        self.resolution
    }

    /// Counts per bin, from bin 0; bins past the end are empty.
    pub fn counts(&self) -> &[u64] {
        &self.counts
    }

    /// Count of one bin (0 past the end).
    pub fn count(&self, bin: u32) -> u64 {
        self.counts.get(bin as usize).copied().unwrap_or(0)
    }

    /// Number of operations.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// True if no operation was counted.
    pub fn is_empty(&self) -> bool {
        self.total == 0
    }

    /// Sum of the latencies, nanoseconds.
    pub fn sum_ns(&self) -> u128 {
        self.sum_ns
    }

    /// Mean latency, nanoseconds (0 when empty).
    pub fn mean_ns(&self) -> u64 {
        if self.total == 0 {
            return 0;
        }
        (self.sum_ns / u128::from(self.total)) as u64
    }

    /// Shortest latency, `None` when empty.
    pub fn min_ns(&self) -> Option<u64> {
        (self.total > 0).then_some(self.min_ns)
    }

    /// Longest latency, `None` when empty.
    pub fn max_ns(&self) -> Option<u64> {
        (self.total > 0).then_some(self.max_ns)
    }

    /// First and last bin holding an operation, `None` when empty.
    pub fn used_bins(&self) -> Option<(u32, u32)> {
        let first = self.counts.iter().position(|&c| c > 0)?;
        let last = self.counts.iter().rposition(|&c| c > 0)?;
        Some((first as u32, last as u32))
    }

    /// The same operations at a coarser resolution (fewer bins per octave); `None` if
    /// `to` is finer than this histogram.
    pub fn coarsen(&self, to: Resolution) -> Option<Histogram> {
        let from = self.resolution.shift;
        if to.shift > from {
            return None;
        }
        let drop = from - to.shift;
        let mut h = Histogram::new(to);
        for (bin, &n) in self.counts.iter().enumerate() {
            if n > 0 {
                let b = (bin >> drop) as u32;
                if b as usize >= h.counts.len() {
                    h.counts.resize(b as usize + 1, 0);
                }
                h.counts[b as usize] += n;
            }
        }
        h.total = self.total;
        h.sum_ns = self.sum_ns;
        h.min_ns = self.min_ns;
        h.max_ns = self.max_ns;
        Some(h)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log2_bins_are_powers_of_two() {
        let r = Resolution::LOG2;
        assert_eq!(r.bin_of(0), 0);
        assert_eq!(r.bin_of(1), 0);
        assert_eq!(r.bin_of(2), 1);
        assert_eq!(r.bin_of(3), 1);
        assert_eq!(r.bin_of(1023), 9);
        assert_eq!(r.bin_of(1024), 10);
        assert_eq!(r.bin_of(u64::MAX), 63);
        assert_eq!(r.lower_ns(10), 1024);
        assert_eq!(r.upper_ns(10), 2048);
        assert_eq!(r.upper_ns(63), u64::MAX);
    }

    #[test]
    fn finer_bins_split_each_octave() {
        let r = Resolution::per_octave(4).unwrap();
        // 1024..1280 is the first quarter of octave 10, 1792..2048 the last.
        assert_eq!(r.bin_of(1024), 40);
        assert_eq!(r.bin_of(1279), 40);
        assert_eq!(r.bin_of(1280), 41);
        assert_eq!(r.bin_of(2047), 43);
        assert_eq!(r.bin_of(2048), 44);
        assert_eq!(r.lower_ns(41), 1280);
        assert_eq!(r.upper_ns(43), 2048);
        for ns in [
            1u64,
            2,
            3,
            5,
            7,
            100,
            1000,
            123_456,
            9_999_999,
            u64::MAX / 3,
        ] {
            let b = r.bin_of(ns);
            assert!(
                r.lower_ns(b) <= ns && ns < r.upper_ns(b).max(ns + 1),
                "{ns} in {b}"
            );
        }
    }

    #[test]
    fn bad_resolutions_are_refused() {
        for bad in [0u8, 3, 32] {
            assert!(Resolution::per_octave(bad).is_err());
        }
        assert_eq!(Resolution::per_octave(8).unwrap().bins_per_octave(), 8);
    }

    #[test]
    fn record_merge_and_coarsen() {
        let mut a = Histogram::new(Resolution::per_octave(2).unwrap());
        for ns in [100, 150, 4000] {
            a.record(ns);
        }
        let mut b = Histogram::new(Resolution::per_octave(2).unwrap());
        b.record(5000);
        a.merge(&b).unwrap();
        assert_eq!(a.total(), 4);
        assert_eq!(a.min_ns(), Some(100));
        assert_eq!(a.max_ns(), Some(5000));
        assert_eq!(a.mean_ns(), (100 + 150 + 4000 + 5000) / 4);
        let c = a.coarsen(Resolution::LOG2).unwrap();
        assert_eq!(c.count(6), 1); // 100
        assert_eq!(c.count(7), 1); // 150
        assert_eq!(c.count(11), 1); // 4000
        assert_eq!(c.count(12), 1); // 5000
        assert!(a.merge(&c).is_err());
    }

    #[test]
    fn log2_slots_round_trip() {
        let h = Histogram::from_log2_slots(&[0, 0, 3, 0, 1]);
        assert_eq!(h.total(), 4);
        assert_eq!(h.used_bins(), Some((2, 4)));
        assert_eq!(h.min_ns(), Some(4));
        assert_eq!(h.max_ns(), Some(31));
    }
}
