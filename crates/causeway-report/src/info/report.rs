//! The `info` report's data: the types [`InfoReport::new`] fills in and the text form
//! reads. The JSON form is these types serialized as is.

use serde::Serialize;
use std::collections::BTreeMap;

/// One thread in a ranking.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ThreadRow {
    /// Thread id.
    pub tid: u32,
    /// Process id (0 if unknown).
    pub pid: u32,
    /// Thread name (latest).
    pub comm: String,
    /// Time on CPU, ns.
    pub cpu_ns: u64,
    /// Time blocked (any sleep state), ns.
    pub blocked_ns: u64,
    /// Time runnable, waiting for a CPU, ns.
    pub runnable_ns: u64,
    /// On-CPU samples of the thread.
    pub samples: u64,
    /// False for a thread of a process a per-process recording did not follow: it is
    /// seen only where it switches with or wakes a recorded thread, so its times are
    /// partial (ranked apart, in `others_partial`).
    pub recorded: bool,
}

/// Everything `info` reports; serialized as is for `--json`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct InfoReport {
    /// Trace file.
    pub file: String,
    /// File size.
    pub bytes: u64,
    /// Format version.
    pub format_version: String,
    /// Program that wrote the trace.
    pub writer: String,
    /// Command line that produced it.
    pub command_line: Vec<String>,
    /// Host name and kernel.
    pub host: String,
    /// CPUs of the host.
    pub cpu_count: u32,
    /// Wall-clock time of the first event (`YYYY-MM-DD HH:MM:SS UTC`), when the trace
    /// has a real clock.
    pub recorded_at: Option<String>,
    /// First event time (trace clock, ns).
    pub start_ns: u64,
    /// Last minus first event time.
    pub duration_ns: u64,
    /// All events.
    pub events: u64,
    /// Events by kind name.
    pub events_by_kind: BTreeMap<&'static str, u64>,
    /// Threads seen (idle tasks excluded), or the selected ones.
    pub threads: usize,
    /// Processes seen.
    pub processes: usize,
    /// Events lost in recording, by CPU.
    pub lost_events_by_cpu: BTreeMap<u32, u64>,
    /// Events lost in recording, total.
    pub lost_events: u64,
    /// Events of unknown kinds skipped (newer format minor version).
    pub skipped_unknown_events: u64,
    /// Blocks of unknown kinds skipped (newer format minor version).
    pub skipped_unknown_blocks: u64,
    /// Events that arrived out of time order.
    pub clock_inversions: u64,
    /// On-CPU samples of all threads.
    pub cpu_samples: u64,
    /// Recorder counters stored in the trace.
    pub counters: BTreeMap<String, u64>,
    /// How many user frames have names, and why the others do not.
    pub frame_names: super::FrameNames,
    /// What made a flight recorder dump this trace, if it is a dump.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trigger: Option<causeway_format::TriggerMark>,
    /// Model inconsistencies (events that contradict the thread states seen so far).
    pub model_anomalies: u64,
    /// All model counters, anomalies and informational ones.
    pub model_stats: causeway_model::ModelStats,
    /// Threads with the most CPU time.
    pub top_cpu: Vec<ThreadRow>,
    /// Threads with the most blocked time.
    pub top_blocked: Vec<ThreadRow>,
    /// Threads of processes not recorded, by CPU time seen (partial: see
    /// [`ThreadRow::recorded`]); empty for a system-wide trace.
    pub others_partial: Vec<ThreadRow>,
    /// Set when the trace was salvaged from a damaged or interrupted file.
    pub salvaged: Option<causeway_format::SalvageMark>,
    /// Lines qualifying the whole report (`salvaged: covers ...`), as every report
    /// prints them ([`crate::trace_notes`]).
    pub notes: Vec<String>,
    /// How the recording was made where that shapes what reports show (waker stacks of
    /// short waits sampled), [`crate::recording_notes`]; empty otherwise.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub recording_notes: Vec<String>,
    /// The recorded processes' cgroups, with their CPU quotas.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cgroups: Vec<super::cgroups::CgroupSummary>,
    /// Recorded processes whose CPU affinity (or cpuset) kept their threads off idle
    /// CPUs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub affinity: Vec<super::cgroups::AffinitySummary>,
    /// Stalls on CPU, memory and I/O over the recording (PSI) of the system and of
    /// the recorded processes' v2 cgroups, where the recording sampled them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pressure: Vec<super::cgroups::PressureSummary>,
}
