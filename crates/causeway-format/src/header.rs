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
    /// The host's IP addresses when the recording started, `interface address`
    /// (loopback left out; absent in older traces): which machine a trace is from when
    /// several hosts' traces are read together.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub addresses: Vec<String>,
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
    /// Random id of this file, repeated (its low 16 bits, [`Header::file_tag`]) in every
    /// block header, so salvage can tell blocks of concatenated files apart. 0 = none
    /// (files before 1.2, synthetic and imported traces). Added in 1.2.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub file_id: u64,
    /// Set in a trace written by salvage: what it holds of the damaged original.
    /// Added in 1.2.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub salvaged: Option<SalvageMark>,
    /// How waker stacks of short waits were sampled; `None`: every waker stack was
    /// taken. Added in 1.6.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waker_stack_sampling: Option<WakerStackSampling>,
}

/// The recorder kept the stack of a wake-up that ended a wait shorter than
/// `min_wait_ns` one time in `one_in`, at random, as a [`crate::StackKind::WakerSample`]
/// stack; longer waits kept every waker stack. An analysis weighs a sampled stack by
/// `one_in`, so stack shares stay unbiased.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WakerStackSampling {
    /// Waits at least this long (from the blocking switch-out to the wake-up) keep
    /// every waker stack.
    pub min_wait_ns: u64,
    /// One short wait's waker stack in this many is kept.
    pub one_in: u32,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

/// What a salvaged trace holds of the file it was salvaged from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SalvageMark {
    /// Time covered by at least one kept event chunk, in nanoseconds.
    pub covered_ns: u64,
    /// From the first to the last event of the original, when the damaged file still
    /// said so (its index was intact); absent when unknown (an interrupted recording).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub original_ns: Option<u64>,
    /// From the first to the last kept event, in nanoseconds.
    pub span_ns: u64,
    /// True if the original's end-of-trace statistics (lost-event counts of the
    /// recorder) were not found: losses the kept chunks do not record are unknown.
    pub stats_lost: bool,
    /// Damaged bytes skipped in the original.
    pub damaged_bytes: u64,
}

impl SalvageMark {
    /// One line for reports: `salvaged: covers 2.9 of 3.0 s, statistics lost`.
    pub fn summary(&self) -> String {
        let s = |ns: u64| ns as f64 / 1e9;
        let of = match self.original_ns {
            Some(o) => format!("covers {:.2} of {:.2} s", s(self.covered_ns), s(o)),
            None => format!(
                "covers {:.2} s (the recording's full length is unknown: it was interrupted)",
                s(self.covered_ns)
            ),
        };
        let stats = if self.stats_lost {
            "statistics lost (lost-event counts may be too low)"
        } else {
            "statistics kept"
        };
        format!("salvaged: {of}, {stats}")
    }
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
            file_id: 0,
            salvaged: None,
            waker_stack_sampling: None,
        }
    }

    /// The 16-bit tag of this file written in every block header (bytes 6..8): the low
    /// bits of [`Header::file_id`], 0 if the file has no id.
    pub fn file_tag(&self) -> u16 {
        self.file_id as u16
    }

    /// A fresh random file id whose tag is never 0. Taken from the standard library's
    /// per-process random hash keys, the clock and the process id, so two recordings
    /// started at once differ too.
    pub fn random_file_id() -> u64 {
        use std::hash::{BuildHasher, Hasher};
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        h.write_u128(now);
        h.write_u32(std::process::id());
        h.finish() | 1
    }
}

/// Counter-name prefix of a recorder program's total run time in ns, as the kernel
/// measured it (`bpf_run_ns.btf_sched_switch`); with [`BPF_RUNS`], its cost per run.
pub const BPF_RUN_NS: &str = "bpf_run_ns.";

/// Counter-name prefix of a recorder program's runs (`bpf_runs.btf_sched_switch`).
pub const BPF_RUNS: &str = "bpf_runs.";

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
    /// Why and when a flight recorder dumped this trace; absent in a plain recording.
    /// Added in 1.3.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trigger: Option<TriggerMark>,
}

/// What made a flight recorder dump its window.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TriggerReason {
    /// The user asked (`SIGUSR1` to the recorder).
    Asked,
    /// A `--trigger blocked>T` condition: a thread stayed blocked too long.
    Blocked,
    /// A `--trigger runnable>T` condition: a thread waited too long for a CPU.
    Runnable,
}

impl TriggerReason {
    /// A word for reports.
    pub fn name(self) -> &'static str {
        match self {
            TriggerReason::Asked => "asked",
            TriggerReason::Blocked => "blocked",
            TriggerReason::Runnable => "runnable",
        }
    }
}

/// The trigger of a flight-recorder dump: its reason and time, and for a condition,
/// the thread and the stall that fired it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TriggerMark {
    /// Why the dump was made.
    pub reason: TriggerReason,
    /// When the trigger fired, on the trace clock (nanoseconds).
    pub ts_ns: u64,
    /// The thread whose stall fired a condition.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tid: Option<u32>,
    /// When that thread's stall began, on the trace clock.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stall_start_ns: Option<u64>,
}

impl TraceStats {
    /// Total events lost on all CPUs.
    pub fn lost_total(&self) -> u64 {
        self.lost_per_cpu.values().sum()
    }
}
