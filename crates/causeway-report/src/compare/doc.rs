//! The comparison's document: what the text and JSON forms show.

use serde::Serialize;

/// What the caller knows about each run besides the comparison: its file, wall-clock
/// time and bottleneck verdict.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct RunLabel {
    /// The trace file as given.
    pub path: String,
    /// Wall-clock start of the recording, if known.
    pub recorded_at: Option<String>,
    /// The bottleneck analysis's one-sentence summary, if it found anything.
    pub bottleneck: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct Doc {
    pub(crate) normal: RunDoc,
    pub(crate) slow: RunDoc,
    pub(crate) only_in_slow: Vec<SiteDoc>,
    pub(crate) only_in_normal: Vec<SiteDoc>,
    pub(crate) syscalls: Vec<SyscallDoc>,
    pub(crate) wait_histogram: Vec<BucketDoc>,
    /// Earth mover's distance of the wait-time distributions, in log2 buckets.
    pub(crate) wait_emd_buckets: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct RunDoc {
    #[serde(flatten)]
    pub(crate) label: RunLabel,
    pub(crate) duration_ns: u64,
    pub(crate) syscalls: u64,
    pub(crate) waits: u64,
    pub(crate) waited_ns: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct SiteDoc {
    pub(crate) syscall: String,
    pub(crate) call_site: String,
    pub(crate) calls: u64,
    pub(crate) time_ns: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct SyscallDoc {
    pub(crate) syscall: String,
    pub(crate) normal_calls: u64,
    pub(crate) slow_calls: u64,
    pub(crate) normal_ns: u64,
    pub(crate) slow_ns: u64,
    pub(crate) call_sites: Vec<SiteRow>,
    /// Call durations by log2 bucket, both runs.
    pub(crate) durations: Vec<BucketDoc>,
    /// `None` when one run has no such call.
    pub(crate) durations_emd_buckets: Option<f64>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct SiteRow {
    pub(crate) call_site: String,
    pub(crate) normal_calls: u64,
    pub(crate) slow_calls: u64,
    pub(crate) normal_ns: u64,
    pub(crate) slow_ns: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct BucketDoc {
    /// Durations from this many nanoseconds...
    pub(crate) from_ns: u64,
    /// ...to below this many.
    pub(crate) to_ns: u64,
    pub(crate) normal: u64,
    pub(crate) slow: u64,
}
