//! What an import reports back: [`ImportSummary`] and the malformed lines it kept.
//!
//! The converter fills these in; this module only defines their shape.

use serde::Serialize;
use std::collections::BTreeMap;

/// A line that did not parse, kept as an example.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct MalformedLine {
    /// 1-based line number in the `perf script` output.
    pub line: u64,
    /// The line (first 200 bytes).
    pub text: String,
}

/// What an import did. Every count here (except totals) is also stored in the trace's
/// statistics as an `import.*` counter.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ImportSummary {
    /// Lines read.
    pub lines: u64,
    /// Sample lines recognized (mapped or ignored events).
    pub samples: u64,
    /// Side-band records recognized (`PERF_RECORD_*`).
    pub records: u64,
    /// Events written, including `Stack` and `Lost` events.
    pub events: u64,
    /// `Stack` events written.
    pub stacks: u64,
    /// Lines that could not be parsed (skipped).
    pub malformed_lines: u64,
    /// The first few malformed lines.
    pub malformed_examples: Vec<MalformedLine>,
    /// Samples of events causeway does not map, by event name (side-band records as
    /// `PERF_RECORD_<TYPE>`).
    pub ignored_events: BTreeMap<String, u64>,
    /// Events perf reported lost (sum of `PERF_RECORD_LOST`).
    pub lost_events: u64,
    /// `sched_wakeup` events dropped because their `sched_waking` was written.
    pub wakeups_deduplicated: u64,
    /// Wakers found from the callchain rather than from `irq:*` events.
    pub wakers_from_callchain: u64,
    /// Thread rows written.
    pub threads: u64,
    /// Process rows written.
    pub processes: u64,
    /// Mapping rows written.
    pub mappings: u64,
    /// All `import.*` counters written into the trace.
    pub counters: BTreeMap<String, u64>,
    /// Warnings perf printed on stderr (perf.data input only).
    pub perf_warnings: Vec<String>,
}
