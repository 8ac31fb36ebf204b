//! The trace header and the end-of-trace statistics.
//!
//! Both are small and rarely read, so they are stored as JSON: a newer minor version can
//! add fields and an older reader ignores them.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The clock event timestamps are taken from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClockSource {
    /// `CLOCK_MONOTONIC` (what `bpf_ktime_get_ns` returns).
    Monotonic,
    /// `CLOCK_BOOTTIME` (monotonic, counting suspend).
    Boottime,
    /// perf's clock (`local_clock`, close to `CLOCK_MONOTONIC`), for imported perf data.
    Perf,
    /// A made-up clock for synthetic traces.
    Synthetic,
}

/// Which threads' scheduler events a trace holds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    /// Every switch on every CPU (system-wide recording, perf -a).
    #[default]
    System,
    /// Switches and wake-ups that involve the recorded processes only: switches among
    /// other threads are absent by design, so a CPU's next switch may name a thread
    /// the reader has not seen switched in.
    Processes,
}

impl Scope {
    fn is_system(&self) -> bool {
        *self == Scope::System
    }
}

/// Host the trace was recorded on.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostInfo {
    /// Host name.
    pub hostname: String,
    /// `uname -r`.
    pub kernel_release: String,
    /// `uname -m`.
    pub arch: String,
    /// Names of the block devices (`vda`, `nvme0n1`) by `major:minor`, as the host
    /// named them when the recording started (absent in older traces).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub block_devices: BTreeMap<String, String>,
}

/// Everything known when a trace starts.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Header {
    /// Clock of all timestamps.
    pub clock: ClockSource,
    /// Add to a timestamp to get nanoseconds since the Unix epoch (approximate).
    pub clock_to_realtime_ns: i64,
    /// Add to a timestamp to get `CLOCK_MONOTONIC` nanoseconds.
    pub clock_to_monotonic_ns: i64,
    /// Where it was recorded.
    pub host: HostInfo,
    /// Number of CPUs of the host.
    pub cpu_count: u32,
    /// The command line that produced the trace.
    pub command_line: Vec<String>,
    /// The program that wrote the trace and its version (`causeway-import 0.1.0`).
    pub writer: String,
    /// Which scheduler events the trace holds (absent in older traces: system).
    #[serde(default, skip_serializing_if = "Scope::is_system")]
    pub scope: Scope,
    /// In a per-process trace: the processes recorded from the start (their children
    /// are recorded too).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub target_pids: Vec<u32>,
    /// In a per-process trace: every process with this name was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_comm: Option<String>,
}

impl Header {
    /// A header for synthetic traces and tests: fixed values, no host details.
    pub fn synthetic(cpu_count: u32) -> Header {
        Header {
            clock: ClockSource::Synthetic,
            clock_to_realtime_ns: 0,
            clock_to_monotonic_ns: 0,
            host: HostInfo::default(),
            cpu_count,
            command_line: Vec::new(),
            writer: concat!("causeway-format ", env!("CARGO_PKG_VERSION")).to_string(),
            scope: Scope::System,
            target_pids: Vec::new(),
            target_comm: None,
        }
    }
}

/// Counters written at the end of a trace.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TraceStats {
    /// Events written (all kinds, including `lost` records).
    pub events: u64,
    /// Events lost per CPU (sum of all `lost` records), keyed by CPU number.
    pub lost_per_cpu: BTreeMap<u32, u64>,
    /// Events that arrived older than an event already written for their CPU: they are
    /// kept, but the merged stream is out of order around them.
    pub clock_inversions: u64,
    /// Recorder-specific counters (dropped stacks, failed unwinds, ...) by name.
    #[serde(default)]
    pub counters: BTreeMap<String, u64>,
}

impl TraceStats {
    /// Total events lost on all CPUs.
    pub fn lost_total(&self) -> u64 {
        self.lost_per_cpu.values().sum()
    }
}
