//! `causeway rootpath --resume FILE` (DARC §3.4): read a previous run's `--json`
//! output, check that F0's latency distribution has not changed since (EMD), and
//! rebuild the path to continue below it.

use crate::flags::rootpath::RootpathArgs;
use anyhow::{Context, Result, bail};
use causeway_latency::{Histogram, Level, Peak, Resolution, emd_octaves};
use causeway_probe::callees::{Site, SymbolFinder};
use serde::Deserialize;
use std::path::Path;

/// What a saved run holds that a resumed one needs.
#[derive(Debug)]
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

/// Read a saved run.
pub fn load(path: &Path) -> Result<Saved> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let doc: SavedDoc = serde_json::from_str(&text).with_context(|| {
        format!(
            "{} is not the --json output of causeway rootpath",
            path.display()
        )
    })?;
    let mut hist = Histogram::new(Resolution::LOG2);
    for b in doc.profile.bins.iter().filter(|b| b.count > 0) {
        hist.add_bin(Resolution::LOG2.bin_of(b.from_ns), b.count);
    }
    if doc.path.first() != Some(&doc.f0) {
        bail!("{}: the saved path does not start at F0", path.display());
    }
    Ok(Saved {
        hist,
        peak: doc.peak,
        path: doc.path,
        levels: doc.levels,
    })
}

/// Check the new profile against the saved one and find the saved peak in it.
pub fn matching_peak(
    args: &RootpathArgs,
    saved: &Saved,
    hist: &Histogram,
    peaks: &[Peak],
) -> Result<Peak> {
    if saved.path.first() != Some(&args.func) {
        bail!("the saved run studied {}, not {}", saved.path[0], args.func);
    }
    let emd = emd_octaves(&saved.hist, hist)?;
    eprintln!("causeway: F0's profile moved {emd:.2} octaves (EMD) since the saved run");
    if emd > args.max_emd {
        bail!(
            "{}'s latency distribution changed since the saved run (EMD {emd:.2} octaves > --max-emd {}): start afresh",
            args.func,
            args.max_emd
        );
    }
    let mode_ns = Resolution::LOG2.lower_ns(saved.peak.mode_bin);
    peaks
        .iter()
        .find(|p| p.contains_ns(mode_ns))
        .copied()
        .with_context(|| {
            format!("no peak of the new profile holds the saved peak's mode ({mode_ns} ns)")
        })
}

/// The saved path's functions below F0, found again in the process.
pub fn path_sites(saved: &Saved, f0: &Site, finder: &SymbolFinder) -> Result<Vec<Site>> {
    let mut prev = f0.binary.clone();
    let mut sites = Vec::new();
    for name in saved.path.iter().skip(1) {
        let site = finder.find(name, &prev).with_context(|| {
            format!("{name}, on the saved path, is not in the process any more")
        })?;
        prev = site.binary.clone();
        sites.push(site);
    }
    Ok(sites)
}
