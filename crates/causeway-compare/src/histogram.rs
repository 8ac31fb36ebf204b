//! Log2 histograms of durations and the earth mover's distance between two.

/// Counts of durations by power of two: bucket `i` holds `[2^i, 2^(i+1))` ns (bucket 0
/// also holds 0).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Log2Histogram {
    /// Counts, bucket 0 first; trailing empty buckets are not stored.
    pub buckets: Vec<u64>,
}

impl Log2Histogram {
    /// Count one duration.
    pub fn add(&mut self, ns: u64) {
        let i = if ns == 0 { 0 } else { ns.ilog2() as usize };
        if self.buckets.len() <= i {
            self.buckets.resize(i + 1, 0);
        }
        if let Some(b) = self.buckets.get_mut(i) {
            *b += 1;
        }
    }

    /// Number of durations counted.
    pub fn count(&self) -> u64 {
        self.buckets.iter().sum()
    }
}

/// Earth mover's distance between the two histograms as distributions (each scaled to
/// a total of 1), in buckets: 1.0 means all the mass moved one power of two. For
/// one-dimensional histograms it is the area between the cumulative distributions.
/// Zero if either is empty.
pub fn emd(a: &Log2Histogram, b: &Log2Histogram) -> f64 {
    let (na, nb) = (a.count(), b.count());
    if na == 0 || nb == 0 {
        return 0.0;
    }
    let n = a.buckets.len().max(b.buckets.len());
    let (mut ca, mut cb, mut d) = (0.0f64, 0.0f64, 0.0f64);
    for i in 0..n {
        ca += a.buckets.get(i).copied().unwrap_or(0) as f64 / na as f64;
        cb += b.buckets.get(i).copied().unwrap_or(0) as f64 / nb as f64;
        d += (ca - cb).abs();
    }
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hist(v: &[u64]) -> Log2Histogram {
        let mut h = Log2Histogram::default();
        for &x in v {
            h.add(x);
        }
        h
    }

    #[test]
    fn buckets_are_powers_of_two() {
        let h = hist(&[0, 1, 2, 3, 4, 1023, 1024]);
        assert_eq!(h.buckets[0], 2);
        assert_eq!(h.buckets[1], 2);
        assert_eq!(h.buckets[2], 1);
        assert_eq!(h.buckets[9], 1);
        assert_eq!(h.buckets[10], 1);
        assert_eq!(h.count(), 7);
    }

    #[test]
    fn emd_measures_how_far_mass_moves() {
        let a = hist(&[1000, 1000]);
        assert_eq!(emd(&a, &a), 0.0);
        // Half the mass moves three buckets.
        let b = hist(&[1000, 8000]);
        assert!((emd(&a, &b) - 1.5).abs() < 1e-9);
        assert_eq!(emd(&a, &Log2Histogram::default()), 0.0);
        assert_eq!(emd(&a, &b), emd(&b, &a));
    }
}
