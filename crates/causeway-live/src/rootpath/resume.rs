//! Continuing a saved run (DARC §3.4): read a previous run's JSON result, check that
//! F0's latency distribution has not changed since (EMD), and rebuild the path to
//! continue below it.

use crate::error::LiveError;
use causeway_latency::{Histogram, Level, Peak, Resolution, emd_octaves};
use causeway_probe::callees::{Site, SymbolFinder};
use serde::Deserialize;
use std::path::Path;

/// What a saved run holds that a resumed one needs.
#[derive(Clone, Debug)]
pub struct Saved {
    /// F0's saved profile.
    pub hist: Histogram,
    /// The saved peak.
    pub peak: Peak,
    /// F0 and the path below it.
    pub path: Vec<String>,
    /// The levels already decided.
    pub levels: Vec<Level>,
}

#[derive(Deserialize)]
struct BinDoc {
    from_ns: u64,
    count: u64,
}

#[derive(Deserialize)]
struct ProfileDoc {
    bins: Vec<BinDoc>,
}

#[derive(Deserialize)]
struct SavedDoc {
    f0: String,
    profile: ProfileDoc,
    peak: Peak,
    path: Vec<String>,
    levels: Vec<Level>,
}

/// Read a saved run (the JSON result of an earlier run).
pub fn load(path: &Path) -> Result<Saved, LiveError> {
    let text = std::fs::read_to_string(path).map_err(|source| LiveError::ReadSaved {
        path: path.to_path_buf(),
        source,
    })?;
    let doc: SavedDoc = serde_json::from_str(&text).map_err(|source| LiveError::NotSaved {
        path: path.to_path_buf(),
        source,
    })?;
    let mut hist = Histogram::new(Resolution::LOG2);
    for b in doc.profile.bins.iter().filter(|b| b.count > 0) {
        hist.add_bin(Resolution::LOG2.bin_of(b.from_ns), b.count);
    }
    if doc.path.first() != Some(&doc.f0) {
        return Err(LiveError::SavedPathNotAtF0 {
            path: path.to_path_buf(),
        });
    }
    Ok(Saved {
        hist,
        peak: doc.peak,
        path: doc.path,
        levels: doc.levels,
    })
}

/// How far F0's new profile moved from the saved one (EMD, octaves); the saved run
/// must have studied the same F0.
pub fn distance(f0: &str, saved: &Saved, hist: &Histogram) -> Result<f64, LiveError> {
    if saved.path.first().map(String::as_str) != Some(f0) {
        return Err(LiveError::OtherF0 {
            saved: saved.path[0].clone(),
            f0: f0.to_string(),
        });
    }
    Ok(emd_octaves(&saved.hist, hist)?)
}

/// The peak of the new profile holding the saved peak's mode, if the profile moved
/// (`emd`) at most `max_emd` octaves.
pub fn matching_peak(
    f0: &str,
    saved: &Saved,
    peaks: &[Peak],
    (emd, max_emd): (f64, f64),
) -> Result<Peak, LiveError> {
    if emd > max_emd {
        return Err(LiveError::ProfileMoved {
            f0: f0.to_string(),
            emd,
            max: max_emd,
        });
    }
    let mode_ns = Resolution::LOG2.lower_ns(saved.peak.mode_bin);
    peaks
        .iter()
        .find(|p| p.contains_ns(mode_ns))
        .copied()
        .ok_or(LiveError::PeakGone { mode_ns })
}

/// The saved path's functions below F0, found again in the process.
pub fn path_sites(saved: &Saved, f0: &Site, finder: &SymbolFinder) -> Result<Vec<Site>, LiveError> {
    let mut prev = f0.binary.clone();
    let mut sites = Vec::new();
    for name in saved.path.iter().skip(1) {
        let site = finder
            .find(name, &prev)
            .ok_or_else(|| LiveError::PathFunctionGone {
                function: name.clone(),
            })?;
        prev = site.binary.clone();
        sites.push(site);
    }
    Ok(sites)
}
