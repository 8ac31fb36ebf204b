//! The Earth Mover's Distance between two latency profiles (OSprof's and DARC §3.4's
//! comparison of profiles).
//!
//! Both histograms are normalised to a total of 1 and compared on the log axis, so the
//! distance is the share of operations times how far they moved, in octaves (powers of
//! two): moving every operation from 10 us to 20 us costs 1.0; moving a tenth of them
//! from 10 us to 1.28 ms (seven octaves) costs 0.7. On one dimension the EMD is the
//! area between the two cumulative distributions, which is what is computed.

use crate::error::LatencyError;
use crate::hist::Histogram;

/// Both histograms at the coarser of their two resolutions.
pub fn common_resolution(a: &Histogram, b: &Histogram) -> (Histogram, Histogram) {
    if a.resolution().bins_per_octave() <= b.resolution().bins_per_octave() {
        let b2 = b.coarsen(a.resolution()).unwrap_or_else(|| b.clone());
        (a.clone(), b2)
    } else {
        let a2 = a.coarsen(b.resolution()).unwrap_or_else(|| a.clone());
        (a2, b.clone())
    }
}

/// EMD between two profiles, in octaves; 0 when either is empty (nothing to compare).
pub fn emd_octaves(a: &Histogram, b: &Histogram) -> Result<f64, LatencyError> {
    if a.resolution() != b.resolution() {
        return Err(LatencyError::Mismatch);
    }
    if a.is_empty() || b.is_empty() {
        return Ok(0.0);
    }
    let n = a.counts().len().max(b.counts().len());
    let (ta, tb) = (a.total() as f64, b.total() as f64);
    let (mut ca, mut cb, mut area) = (0.0f64, 0.0f64, 0.0f64);
    for bin in 0..n as u32 {
        ca += a.count(bin) as f64 / ta;
        cb += b.count(bin) as f64 / tb;
        area += (ca - cb).abs();
    }
    Ok(area / f64::from(a.resolution().bins_per_octave()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hist::Resolution;

    fn h(res: Resolution, bins: &[(u32, u64)]) -> Histogram {
        let mut h = Histogram::new(res);
        for &(b, n) in bins {
            h.add_bin(b, n);
        }
        h
    }

    #[test]
    fn identical_profiles_are_zero_apart() {
        let a = h(Resolution::LOG2, &[(10, 5), (13, 50), (19, 7)]);
        assert_eq!(emd_octaves(&a, &a).unwrap(), 0.0);
        // Only shares count, not the number of operations.
        let b = h(Resolution::LOG2, &[(10, 50), (13, 500), (19, 70)]);
        assert!(emd_octaves(&a, &b).unwrap().abs() < 1e-12);
    }

    #[test]
    fn a_shift_costs_its_distance() {
        let a = h(Resolution::LOG2, &[(10, 100)]);
        let b = h(Resolution::LOG2, &[(12, 100)]);
        assert!((emd_octaves(&a, &b).unwrap() - 2.0).abs() < 1e-12);
        // A tenth of the operations moving seven octaves.
        let c = h(Resolution::LOG2, &[(10, 90), (17, 10)]);
        assert!((emd_octaves(&a, &c).unwrap() - 0.7).abs() < 1e-12);
    }

    #[test]
    fn symmetric_and_in_octaves_at_any_resolution() {
        let r4 = Resolution::per_octave(4).unwrap();
        let a = h(r4, &[(40, 10), (41, 10)]);
        let b = h(r4, &[(44, 10), (45, 10)]);
        let ab = emd_octaves(&a, &b).unwrap();
        assert!((ab - 1.0).abs() < 1e-12);
        assert!((emd_octaves(&b, &a).unwrap() - ab).abs() < 1e-12);
    }

    #[test]
    fn the_triangle_inequality_holds() {
        let a = h(Resolution::LOG2, &[(5, 3), (9, 1)]);
        let b = h(Resolution::LOG2, &[(7, 2), (8, 2)]);
        let c = h(Resolution::LOG2, &[(12, 1)]);
        let d = |x: &Histogram, y: &Histogram| emd_octaves(x, y).unwrap();
        assert!(d(&a, &c) <= d(&a, &b) + d(&b, &c) + 1e-12);
    }

    #[test]
    fn different_layouts_are_refused_until_brought_together() {
        let a = h(Resolution::LOG2, &[(10, 1)]);
        let b = h(Resolution::per_octave(2).unwrap(), &[(21, 1)]);
        assert_eq!(emd_octaves(&a, &b), Err(LatencyError::Mismatch));
        let (a2, b2) = common_resolution(&a, &b);
        assert_eq!(emd_octaves(&a2, &b2).unwrap(), 0.0);
    }
}
