//! Peak detection that reads a latency histogram as a person reads an OSprof plot
//! (DARC §3): both axes logarithmic, so a peak is a hump that stands out on a log-count
//! scale, not any bin higher than its neighbours.
//!
//! The rule, and why:
//!
//! 1. Every local maximum of the counts is a candidate (a flat top counts once).
//! 2. Two neighbouring candidates are separate peaks only if the valley between them
//!    is deep on the log scale: the lower of the two is at least `min_dip_ratio` times
//!    the valley's count (2: one step down a log2 count axis, what the eye sees as a
//!    dip), *and* the dip is larger than counting noise: `lower - valley >=
//!    noise_sigmas * sqrt(lower)` (a count of `n` varies by about `sqrt(n)` from run
//!    to run, so 3, 1, 3 is noise, while 300, 100, 300 is two peaks). Otherwise the
//!    lower candidate is a shoulder of the higher one and is dropped, lowest first.
//! 3. A peak holding fewer than `min_ops` operations (a lone outlier) joins the
//!    neighbour whose valley is higher, as a person ignores a single stray bar.
//!
//! Peaks are numbered from 1, from the shortest latencies to the longest, which is
//! how `--peak N` names them. Each owns a contiguous range of bins split at the lowest
//! point of each valley, so every operation belongs to exactly one peak.

use crate::hist::Histogram;
use serde::{Deserialize, Serialize};

/// How demanding peak detection is.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct PeakOptions {
    /// The lower of two peaks must be this many times the valley between them.
    pub min_dip_ratio: f64,
    /// ... and above it by this many standard deviations of counting noise.
    pub noise_sigmas: f64,
    /// A peak holds at least this many operations.
    pub min_ops: u64,
}

impl Default for PeakOptions {
    fn default() -> PeakOptions {
        PeakOptions {
            min_dip_ratio: 2.0,
            noise_sigmas: 2.0,
            min_ops: 3,
        }
    }
}

/// One peak of a histogram.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Peak {
    /// 1 for the peak of the shortest latencies, then 2, 3, ...
    pub number: u32,
    /// The bin with the most operations.
    pub mode_bin: u32,
    /// First bin of the peak that holds an operation.
    pub first_bin: u32,
    /// Last bin of the peak that holds an operation.
    pub last_bin: u32,
    /// Operations in the peak's bins.
    pub ops: u64,
    /// Operations in the mode bin.
    pub mode_ops: u64,
    /// Shortest latency of the peak's range, nanoseconds (lower bound of `first_bin`).
    pub from_ns: u64,
    /// First latency after the peak's range, nanoseconds (upper bound of `last_bin`).
    pub to_ns: u64,
}

impl Peak {
    /// True if a latency falls in the peak's range.
    pub fn contains_ns(&self, ns: u64) -> bool {
        self.from_ns <= ns && ns < self.to_ns
    }
}

/// Find the peaks of a histogram (none if it is empty).
pub fn find_peaks(h: &Histogram, opts: &PeakOptions) -> Vec<Peak> {
    let Some((first, last)) = h.used_bins() else {
        return Vec::new();
    };
    let c: Vec<u64> = (first..=last).map(|b| h.count(b)).collect();
    let mut maxima = local_maxima(&c);
    drop_shoulders(&c, &mut maxima, opts);
    drop_small(&c, &mut maxima, opts.min_ops);
    let r = h.resolution();
    let cuts = boundaries(&c, &maxima);
    let mut peaks = Vec::with_capacity(maxima.len());
    for (i, _) in maxima.iter().enumerate() {
        let lo = if i == 0 { 0 } else { cuts[i - 1] };
        let hi = if i + 1 == maxima.len() {
            c.len() - 1
        } else {
            cuts[i] - 1
        };
        let Some(p) = describe(&c[lo..=hi], first + lo as u32, i as u32 + 1) else {
            continue;
        };
        peaks.push(Peak {
            from_ns: r.lower_ns(p.first_bin),
            to_ns: r.upper_ns(p.last_bin),
            ..p
        });
    }
    peaks
}

/// The peak a latency falls in.
pub fn peak_of(peaks: &[Peak], ns: u64) -> Option<&Peak> {
    peaks.iter().find(|p| p.contains_ns(ns))
}

/// Indices of local maxima; a plateau counts once, at its last bin.
fn local_maxima(c: &[u64]) -> Vec<usize> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < c.len() {
        let mut j = i;
        while j + 1 < c.len() && c[j + 1] == c[i] {
            j += 1;
        }
        let left_lower = i == 0 || c[i - 1] < c[i];
        let right_lower = j + 1 == c.len() || c[j + 1] < c[j];
        if c[i] > 0 && left_lower && right_lower {
            out.push(j);
        }
        i = j + 1;
    }
    out
}

/// Lowest count strictly between two bins, and the first bin where it is.
fn valley(c: &[u64], a: usize, b: usize) -> (u64, usize) {
    (a + 1..b)
        .map(|i| (c[i], i))
        .min_by_key(|&(v, i)| (v, i))
        .unwrap_or((c[b].min(c[a]), b))
}

fn separated(lower: u64, valley: u64, opts: &PeakOptions) -> bool {
    let (l, v) = (lower as f64, valley as f64);
    l >= opts.min_dip_ratio * v && l - v >= opts.noise_sigmas * l.sqrt()
}

/// Drop candidates that are shoulders of a higher neighbour, the lowest first.
fn drop_shoulders(c: &[u64], maxima: &mut Vec<usize>, opts: &PeakOptions) {
    loop {
        let worst = maxima
            .windows(2)
            .enumerate()
            .filter_map(|(i, w)| {
                let (a, b) = (w[0], w[1]);
                let (v, _) = valley(c, a, b);
                let (lower_idx, lower) = if c[a] <= c[b] {
                    (i, c[a])
                } else {
                    (i + 1, c[b])
                };
                (!separated(lower, v, opts)).then_some((lower, lower_idx))
            })
            .min();
        match worst {
            Some((_, idx)) => {
                maxima.remove(idx);
            }
            None => return,
        }
    }
}

/// Merge peaks with fewer than `min_ops` operations into a neighbour, smallest first.
fn drop_small(c: &[u64], maxima: &mut Vec<usize>, min_ops: u64) {
    while maxima.len() > 1 {
        let cuts = boundaries(c, maxima);
        let mass = |i: usize| -> u64 {
            let lo = if i == 0 { 0 } else { cuts[i - 1] };
            let hi = if i + 1 == maxima.len() {
                c.len()
            } else {
                cuts[i]
            };
            c[lo..hi].iter().sum()
        };
        let smallest = (0..maxima.len())
            .map(|i| (mass(i), i))
            .filter(|&(m, _)| m < min_ops)
            .min();
        let Some((_, i)) = smallest else { return };
        maxima.remove(i);
    }
}

/// For each pair of neighbouring peaks, the first bin of the right one: the lowest
/// point of the valley between them.
fn boundaries(c: &[u64], maxima: &[usize]) -> Vec<usize> {
    maxima.windows(2).map(|w| valley(c, w[0], w[1]).1).collect()
}

/// A peak over the bins `c` that start at bin `base`, trimmed to its nonempty bins.
fn describe(c: &[u64], base: u32, number: u32) -> Option<Peak> {
    let first = c.iter().position(|&n| n > 0)?;
    let last = c.iter().rposition(|&n| n > 0)?;
    let (mode_ops, mode) = c
        .iter()
        .enumerate()
        .map(|(i, &n)| (n, std::cmp::Reverse(i)))
        .max()
        .map(|(n, std::cmp::Reverse(i))| (n, i))?;
    Some(Peak {
        number,
        mode_bin: base + mode as u32,
        first_bin: base + first as u32,
        last_bin: base + last as u32,
        ops: c.iter().sum(),
        mode_ops,
        from_ns: 0,
        to_ns: 0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hist::Resolution;

    /// A log2 histogram whose bin `start + i` holds `counts[i]`.
    fn hist(start: u32, counts: &[u64]) -> Histogram {
        let mut h = Histogram::new(Resolution::LOG2);
        for (i, &n) in counts.iter().enumerate() {
            if n > 0 {
                h.add_bin(start + i as u32, n);
            }
        }
        h
    }

    fn modes(h: &Histogram) -> Vec<u32> {
        find_peaks(h, &PeakOptions::default())
            .iter()
            .map(|p| p.mode_bin)
            .collect()
    }

    #[test]
    fn empty_has_no_peak() {
        assert!(modes(&hist(0, &[])).is_empty());
    }

    #[test]
    fn one_peak() {
        let h = hist(10, &[5, 80, 900, 2000, 700, 40, 2]);
        let p = find_peaks(&h, &PeakOptions::default());
        assert_eq!(p.len(), 1);
        assert_eq!(p[0].number, 1);
        assert_eq!(p[0].mode_bin, 13);
        assert_eq!((p[0].first_bin, p[0].last_bin), (10, 16));
        assert_eq!(p[0].ops, h.total());
        assert_eq!(p[0].from_ns, 1024);
        assert_eq!(p[0].to_ns, 1 << 17);
    }

    #[test]
    fn two_peaks_like_the_two_peaks_workload() {
        // Fast path ~8-16 us (bins 13-14), slow path ~0.25-2 ms (bins 18-20).
        let h = hist(12, &[40, 5000, 3000, 20, 0, 0, 150, 500, 90, 6]);
        let p = find_peaks(&h, &PeakOptions::default());
        assert_eq!(
            p.iter().map(|p| p.mode_bin).collect::<Vec<_>>(),
            vec![13, 19]
        );
        assert_eq!(p[0].ops + p[1].ops, h.total());
        assert_eq!(p[0].last_bin, 15);
        assert_eq!(p[1].first_bin, 18);
        assert!(p[1].contains_ns(1 << 19));
        assert_eq!(peak_of(&p, 10_000).map(|p| p.number), Some(1));
    }

    #[test]
    fn three_peaks() {
        let h = hist(5, &[10, 400, 30, 9, 60, 200, 50, 4, 2, 40, 120, 30]);
        assert_eq!(modes(&h), vec![6, 10, 15]);
    }

    #[test]
    fn noise_does_not_make_peaks() {
        // One hump with +-15 % jitter on every bin, and a sparse tail of ones and twos.
        let h = hist(
            8,
            &[
                100, 460, 1100, 950, 1180, 700, 820, 300, 60, 2, 1, 2, 1, 0, 1,
            ],
        );
        assert_eq!(modes(&h), vec![12]);
    }

    #[test]
    fn shoulders_are_not_peaks() {
        // A flattening on the way down, and a small bump that does not dip enough.
        let down = hist(10, &[50, 3000, 1200, 1100, 1000, 200, 10]);
        assert_eq!(modes(&down), vec![11]);
        let bump = hist(10, &[50, 3000, 1000, 1300, 200, 10]);
        assert_eq!(modes(&bump), vec![11]);
    }

    #[test]
    fn a_small_peak_far_away_counts_but_a_lone_outlier_does_not() {
        let far = hist(10, &[100, 900, 100, 0, 0, 0, 0, 12, 30, 5]);
        assert_eq!(modes(&far), vec![11, 18]);
        let lone = hist(10, &[100, 900, 100, 0, 0, 0, 0, 0, 1]);
        assert_eq!(modes(&lone), vec![11]);
    }

    #[test]
    fn a_flat_top_counts_once() {
        let h = hist(10, &[10, 500, 500, 500, 10]);
        assert_eq!(modes(&h).len(), 1);
    }

    #[test]
    fn sub_log2_bins_find_the_same_peaks() {
        let mut h = Histogram::new(Resolution::per_octave(4).unwrap());
        for i in 0..2000u64 {
            h.record(9_000 + (i % 97) * 30);
        }
        for i in 0..300u64 {
            h.record(600_000 + (i % 89) * 2_000);
        }
        let p = find_peaks(&h, &PeakOptions::default());
        assert_eq!(p.len(), 2);
        assert!(p[0].contains_ns(10_000) && p[1].contains_ns(650_000));
    }
}
