//! Latency profiles after OSprof (DARC §2): logarithmic histograms of how long
//! operations take, their peaks read as a person reads them, time-lapse profiles, and
//! comparisons by the Earth Mover's Distance.
//!
//! - [`hist`]: log2 and finer (sub-log2) histograms, one bin axis for all resolutions.
//! - [`peaks`]: numbered peaks on the log-log plot ([`find_peaks`]).
//! - [`emd`], [`diff`]: how far apart two profiles are, and which peaks appeared,
//!   vanished or moved ([`diff()`]).
//! - [`profile`]: the profiles of a trace ([`analyze`]): system calls by number (from
//!   [`SyscallCollector`], fed during the trace's one read), blocked and runnable waits
//!   (the model's segments), user functions (method and span markers).
//!
//! - [`rootcause`]: DARC's decision of which callees make a peak ([`Tally`]).
//! - [`preempt`]: preemption and interrupts as pseudo-callees (DARC §3.6).
//! - [`offline`]: the root-cause path from a trace where every call is recorded
//!   ([`offline::rootpath`]), with [`offcpu`] for its preemption and interrupts.
//!
//! It is pure: no BPF, no printing, no command line. Live profiles (uprobes and
//! in-kernel aggregation) are made elsewhere and handed over as log2 counts
//! ([`Histogram::from_log2_slots`]); names and sentences are the report layer's.

pub mod calls;
pub mod diff;
pub mod emd;
mod error;
pub mod hist;
pub mod offcpu;
pub mod offline;
pub mod peaks;
pub mod preempt;
pub mod profile;
pub mod rootcause;
mod select;

pub use calls::{SyscallCollector, SyscallSpan, SyscallSpans};
pub use diff::{PeakChange, ProfileDiff, diff};
pub use emd::emd_octaves;
pub use error::LatencyError;
pub use hist::{Histogram, Resolution};
pub use peaks::{Peak, PeakOptions, find_peaks, peak_of};
pub use preempt::{Culprit, Culprits, Pseudo};
pub use profile::{Kind, Options, Profile, Profiles, Slice, Subject, Unmeasured, analyze};
pub use rootcause::{Candidate, Decision, Level, RootPath, Sample, Stop, Tally};
pub use select::Selection;

#[cfg(test)]
mod tests;
