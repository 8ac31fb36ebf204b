//! Errors of live measurement.

use std::path::PathBuf;

/// What stopped a live measurement.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LiveError {
    /// A probe could not be attached or read.
    #[error(transparent)]
    Probe(#[from] causeway_probe::ProbeError),
    /// The function's probe could not be attached.
    #[error("probing {symbol}")]
    Attach {
        /// The function.
        symbol: String,
        /// Why.
        #[source]
        source: causeway_probe::ProbeError,
    },
    /// An analysis step refused its input.
    #[error(transparent)]
    Latency(#[from] causeway_latency::LatencyError),
    /// The peak asked for is not in F0's profile.
    #[error("{f0} has {peaks} peak(s) after {calls} calls; --peak {asked} does not exist")]
    NoSuchPeak {
        /// F0.
        f0: String,
        /// Peaks found.
        peaks: usize,
        /// Calls profiled.
        calls: u64,
        /// The peak asked for.
        asked: u32,
    },
    /// A saved run could not be read.
    #[error("reading {}", path.display())]
    ReadSaved {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A saved run is not a root-cause path document.
    #[error("{} is not the --json output of causeway rootpath", path.display())]
    NotSaved {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: serde_json::Error,
    },
    /// A saved run's path does not start at its F0.
    #[error("{}: the saved path does not start at F0", path.display())]
    SavedPathNotAtF0 {
        /// The file.
        path: PathBuf,
    },
    /// A saved run studied another function.
    #[error("the saved run studied {saved}, not {f0}")]
    OtherF0 {
        /// The saved run's F0.
        saved: String,
        /// This run's.
        f0: String,
    },
    /// F0's latency distribution moved too far since the saved run.
    #[error(
        "{f0}'s latency distribution changed since the saved run (EMD {emd:.2} octaves > --max-emd {max}): start afresh"
    )]
    ProfileMoved {
        /// F0.
        f0: String,
        /// The distance, in octaves.
        emd: f64,
        /// The most allowed.
        max: f64,
    },
    /// No peak of the new profile holds the saved peak's mode.
    #[error("no peak of the new profile holds the saved peak's mode ({mode_ns} ns)")]
    PeakGone {
        /// The saved mode's lower bound.
        mode_ns: u64,
    },
    /// A function of the saved path is not in the process any more.
    #[error("{function}, on the saved path, is not in the process any more")]
    PathFunctionGone {
        /// The function.
        function: String,
    },
}
