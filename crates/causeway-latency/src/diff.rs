//! Comparing two latency profiles: how far apart they are (EMD) and what happened to
//! each peak.
//!
//! Peaks are paired across the two profiles, nearest modes first, when their ranges
//! overlap or their modes are at most one octave apart; a paired peak whose mode bin
//! changed has *moved*, a peak of the first profile left without a partner has
//! *vanished* and one of the second has *appeared*. One octave is the tolerance
//! because a peak whose mode slides to the next power of two is what people call "the
//! same peak, a bit slower"; farther than that, with no overlap, it is a different path.

use crate::emd::{common_resolution, emd_octaves};
use crate::error::LatencyError;
use crate::hist::Histogram;
use crate::peaks::{Peak, PeakOptions, find_peaks};
use serde::{Deserialize, Serialize};

/// What happened to one peak between the two profiles.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "change", rename_all = "snake_case")]
pub enum PeakChange {
    /// In both, at the same mode bin.
    Kept {
        /// The peak in the first profile.
        before: Peak,
        /// The peak in the second profile.
        after: Peak,
    },
    /// In both, at a different mode bin.
    Moved {
        /// The peak in the first profile.
        before: Peak,
        /// The peak in the second profile.
        after: Peak,
    },
    /// Only in the first profile.
    Vanished {
        /// The peak.
        before: Peak,
    },
    /// Only in the second profile.
    Appeared {
        /// The peak.
        after: Peak,
    },
}

impl PeakChange {
    /// Where the change sits on the latency axis (for ordering): the earlier mode bin.
    fn bin(&self) -> u32 {
        match self {
            PeakChange::Kept { before, .. }
            | PeakChange::Moved { before, .. }
            | PeakChange::Vanished { before } => before.mode_bin,
            PeakChange::Appeared { after } => after.mode_bin,
        }
    }

    /// True unless the peak was kept in place.
    pub fn is_change(&self) -> bool {
        !matches!(self, PeakChange::Kept { .. })
    }
}

/// The comparison of two profiles.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProfileDiff {
    /// Earth Mover's Distance between them, in octaves.
    pub emd_octaves: f64,
    /// The first profile at the common resolution.
    pub before: Histogram,
    /// The second profile at the common resolution.
    pub after: Histogram,
    /// Peaks of the first profile.
    pub before_peaks: Vec<Peak>,
    /// Peaks of the second profile.
    pub after_peaks: Vec<Peak>,
    /// Each peak's fate, by position on the latency axis.
    pub changes: Vec<PeakChange>,
}

impl ProfileDiff {
    /// True if a peak appeared, vanished or moved.
    pub fn peaks_changed(&self) -> bool {
        self.changes.iter().any(PeakChange::is_change)
    }
}

/// Compare two profiles (brought to the coarser of their resolutions first).
pub fn diff(a: &Histogram, b: &Histogram, opts: &PeakOptions) -> Result<ProfileDiff, LatencyError> {
    let (a, b) = common_resolution(a, b);
    let emd = emd_octaves(&a, &b)?;
    let pa = find_peaks(&a, opts);
    let pb = find_peaks(&b, opts);
    let octave = a.resolution().bins_per_octave();
    let changes = pair_peaks(&pa, &pb, octave);
    Ok(ProfileDiff {
        emd_octaves: emd,
        before: a,
        after: b,
        before_peaks: pa,
        after_peaks: pb,
        changes,
    })
}

fn can_pair(x: &Peak, y: &Peak, octave: u32) -> bool {
    let overlap = x.first_bin <= y.last_bin && y.first_bin <= x.last_bin;
    overlap || x.mode_bin.abs_diff(y.mode_bin) <= octave
}

/// Pair peaks nearest modes first; the rest appeared or vanished.
fn pair_peaks(pa: &[Peak], pb: &[Peak], octave: u32) -> Vec<PeakChange> {
    let mut candidates: Vec<(u32, usize, usize)> = Vec::new();
    for (i, x) in pa.iter().enumerate() {
        for (j, y) in pb.iter().enumerate() {
            if can_pair(x, y, octave) {
                candidates.push((x.mode_bin.abs_diff(y.mode_bin), i, j));
            }
        }
    }
    candidates.sort_unstable();
    let mut used_a = vec![false; pa.len()];
    let mut used_b = vec![false; pb.len()];
    let mut changes = Vec::new();
    for (dist, i, j) in candidates {
        if used_a[i] || used_b[j] {
            continue;
        }
        used_a[i] = true;
        used_b[j] = true;
        let (before, after) = (pa[i], pb[j]);
        changes.push(if dist == 0 {
            PeakChange::Kept { before, after }
        } else {
            PeakChange::Moved { before, after }
        });
    }
    for (i, &before) in pa.iter().enumerate() {
        if !used_a[i] {
            changes.push(PeakChange::Vanished { before });
        }
    }
    for (j, &after) in pb.iter().enumerate() {
        if !used_b[j] {
            changes.push(PeakChange::Appeared { after });
        }
    }
    changes.sort_by_key(PeakChange::bin);
    changes
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hist::Resolution;

    fn hist(start: u32, counts: &[u64]) -> Histogram {
        let mut h = Histogram::new(Resolution::LOG2);
        for (i, &n) in counts.iter().enumerate() {
            if n > 0 {
                h.add_bin(start + i as u32, n);
            }
        }
        h
    }

    fn kinds(d: &ProfileDiff) -> Vec<&'static str> {
        d.changes
            .iter()
            .map(|c| match c {
                PeakChange::Kept { .. } => "kept",
                PeakChange::Moved { .. } => "moved",
                PeakChange::Vanished { .. } => "vanished",
                PeakChange::Appeared { .. } => "appeared",
            })
            .collect()
    }

    const TWO: &[u64] = &[40, 5000, 3000, 20, 0, 0, 150, 500, 90, 6];
    const FIXED: &[u64] = &[40, 5600, 3100, 20];

    #[test]
    fn the_fix_makes_the_slow_peak_vanish() {
        let d = diff(&hist(12, TWO), &hist(12, FIXED), &PeakOptions::default()).unwrap();
        assert_eq!(kinds(&d), vec!["kept", "vanished"]);
        assert!(d.peaks_changed());
        assert!(d.emd_octaves > 0.3, "{}", d.emd_octaves);
        let PeakChange::Vanished { before } = d.changes[1] else {
            panic!("{:?}", d.changes);
        };
        assert_eq!(before.mode_bin, 19);
    }

    #[test]
    fn a_regression_makes_it_appear() {
        let d = diff(&hist(12, FIXED), &hist(12, TWO), &PeakOptions::default()).unwrap();
        assert_eq!(kinds(&d), vec!["kept", "appeared"]);
    }

    #[test]
    fn a_slower_fast_path_moves_its_peak() {
        let slower = hist(12, &[0, 40, 5000, 3000, 20, 0, 150, 500, 90, 6]);
        let d = diff(&hist(12, TWO), &slower, &PeakOptions::default()).unwrap();
        assert_eq!(kinds(&d), vec!["moved", "kept"]);
        let PeakChange::Moved { before, after } = d.changes[0] else {
            panic!()
        };
        assert_eq!((before.mode_bin, after.mode_bin), (13, 14));
    }

    #[test]
    fn the_same_profile_changes_nothing() {
        let d = diff(&hist(12, TWO), &hist(12, TWO), &PeakOptions::default()).unwrap();
        assert_eq!(kinds(&d), vec!["kept", "kept"]);
        assert!(!d.peaks_changed());
        assert_eq!(d.emd_octaves, 0.0);
    }

    #[test]
    fn a_far_jump_is_a_new_peak_not_a_move() {
        let a = hist(10, &[10, 500, 10]);
        let b = hist(10, &[0, 0, 0, 0, 0, 0, 10, 500, 10]);
        let d = diff(&a, &b, &PeakOptions::default()).unwrap();
        assert_eq!(kinds(&d), vec!["vanished", "appeared"]);
        assert!((d.emd_octaves - 6.0).abs() < 1e-9);
    }
}
