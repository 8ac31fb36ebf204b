//! The bottleneck findings as shown: labels, seconds, shares and sentences, in the
//! shape of the `--json` document. The text and DOT forms are drawn from it too, so all
//! three agree. The types only: `build` fills them in from the findings, so the label
//! and advice helpers can read them without depending on the builder.

use causeway_bottleneck::{EdgeKind, Shape};
use serde::{Serialize, Serializer};

/// Writes a time the view keeps in seconds (its sentences use them) as integer
/// nanoseconds: every JSON form of causeway names its times `_ns` and counts them in
/// integer ns, so the JSON of a bottleneck report follows the same convention.
fn secs_as_ns<S: Serializer>(secs: &f64, s: S) -> Result<S::Ok, S::Error> {
    // Seconds were made from integer ns; rounding recovers them (f64 is exact to well
    // under a nanosecond for any recording shorter than days).
    s.serialize_u64((secs * 1e9).round().max(0.0) as u64)
}

/// A thread behind a vertex.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub(crate) struct ThreadDoc {
    pub(crate) tid: u32,
    /// 0 if unknown.
    pub(crate) pid: u32,
    pub(crate) comm: String,
    /// The process title, when the program set one (see `causeway_bottleneck::ThreadRef`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) title: Option<String>,
    /// The goroutine id, when the thread is a goroutine (its `comm` its start
    /// function).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) goroutine: Option<u64>,
    /// The process's cgroup (CPU controller), when it is not the root.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) cgroup: Option<String>,
}

/// What a vertex stands for, with device and interrupt names spelled out.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum KindDoc {
    Thread,
    ShortTermThreads,
    SimilarThreads,
    SimilarProcesses,
    /// `major:minor`, or `?`.
    Disk {
        device: String,
    },
    /// Interface name, or `?`.
    Nic {
        interface: String,
    },
    Timer,
    /// Handler name, or `softirq NAME`.
    Interrupt {
        name: String,
    },
    OtherProcesses,
    /// A managed runtime's own threads in one process, as the pauses its program's
    /// threads waited for.
    RuntimePauses {
        /// `JVM`.
        runtime: String,
        pid: u32,
        pauses: u64,
        longest_ns: u64,
        total_ns: u64,
    },
    /// A cgroup's CPU quota, as the runnable time its threads were held back.
    CpuQuota {
        /// The cgroup's path.
        cgroup: String,
        /// What the path names (`container 3f2a9c1b0d4e`, `unit redis.service`), if
        /// anything.
        owner: Option<String>,
        quota_us: u64,
        period_us: u64,
        periods: u64,
        throttled: u64,
        held_ns: u64,
    },
    /// A process's CPU affinity or cpuset, as the runnable time its threads were held
    /// back while CPUs it may not use idled.
    CpuAffinity {
        /// The process's name and id.
        process: String,
        pid: u32,
        /// The CPUs it may run on, as the kernel lists them.
        cpus: String,
        online: u32,
        idle_outside_ns: u64,
        held_ns: u64,
    },
}

impl KindDoc {
    /// True for disks and NICs.
    pub(crate) fn is_io(&self) -> bool {
        matches!(self, KindDoc::Disk { .. } | KindDoc::Nic { .. })
    }

    /// True for vertices standing for threads.
    pub(crate) fn is_thread(&self) -> bool {
        matches!(
            self,
            KindDoc::Thread
                | KindDoc::ShortTermThreads
                | KindDoc::SimilarThreads
                | KindDoc::SimilarProcesses
        )
    }
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct VertexDoc {
    pub(crate) id: usize,
    /// Short human name (`consumer (1234)`, `worker-* ×4 threads`, `disk 8:0`).
    pub(crate) label: String,
    pub(crate) kind: KindDoc,
    pub(crate) threads: Vec<ThreadDoc>,
    #[serde(rename = "running_ns", serialize_with = "secs_as_ns")]
    pub(crate) running_s: f64,
    #[serde(rename = "runnable_ns", serialize_with = "secs_as_ns")]
    pub(crate) runnable_s: f64,
    #[serde(rename = "waiting_ns", serialize_with = "secs_as_ns")]
    pub(crate) waiting_s: f64,
    /// Running time over the recording: 1.0 is one CPU busy all the time.
    pub(crate) cpu_fraction: f64,
    /// Where its threads ran, from on-CPU samples.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) on_cpu: Option<CpuProfileDoc>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct CpuProfileDoc {
    pub(crate) samples: u64,
    /// Share of the samples taken in the kernel.
    pub(crate) kernel_share: f64,
    pub(crate) stacks: Vec<SampledStackDoc>,
    /// The program's own code the samples ran, most first.
    pub(crate) sites: Vec<SampledSiteDoc>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct SampledSiteDoc {
    pub(crate) samples: u64,
    /// Share of the vertex's samples.
    pub(crate) share: f64,
    /// Its own functions, innermost first, then the library leaf in parentheses.
    pub(crate) text: String,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct SampledStackDoc {
    pub(crate) samples: u64,
    /// Share of the vertex's samples.
    pub(crate) share: f64,
    pub(crate) user: Vec<String>,
    pub(crate) kernel: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct StackDoc {
    #[serde(rename = "weight_ns", serialize_with = "secs_as_ns")]
    pub(crate) weight_s: f64,
    pub(crate) user: Vec<String>,
    pub(crate) call_site: Option<usize>,
    pub(crate) kernel: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct EdgeDoc {
    pub(crate) id: usize,
    pub(crate) from: usize,
    pub(crate) to: usize,
    #[serde(serialize_with = "edge_kind")]
    pub(crate) kind: EdgeKind,
    #[serde(rename = "weight_ns", serialize_with = "secs_as_ns")]
    pub(crate) weight_s: f64,
    /// Weight over the recording's duration.
    pub(crate) share: f64,
    /// Weight over the summed weight of all edges: its share of all waiting, which adds
    /// up to 1 over the edges (the text report's % column).
    pub(crate) share_of_waits: f64,
    pub(crate) direct_waits: u64,
    #[serde(rename = "direct_ns", serialize_with = "secs_as_ns")]
    pub(crate) direct_s: f64,
    pub(crate) wait_stacks: Vec<StackDoc>,
    pub(crate) waker_stacks: Vec<StackDoc>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct KnotDoc {
    /// 1 for the most important; 0 for background knots.
    pub(crate) rank: usize,
    pub(crate) vertices: Vec<usize>,
    pub(crate) edges: Vec<usize>,
    #[serde(serialize_with = "shape")]
    pub(crate) shape: Shape,
    #[serde(rename = "weight_ns", serialize_with = "secs_as_ns")]
    pub(crate) weight_s: f64,
    pub(crate) cpu_fraction: f64,
    pub(crate) has_io: bool,
    #[serde(rename = "needs_cpu_ns", serialize_with = "secs_as_ns")]
    pub(crate) needs_cpu_s: f64,
    pub(crate) removed_edges: Vec<usize>,
    /// Light edges out of its component trimmed before knots were identified.
    pub(crate) leaks: Vec<usize>,
    /// Its waits on brief stoppers, set aside before knots were identified.
    pub(crate) paused: Vec<usize>,
    /// The closed loop it stood out of as the loop's saturated stage.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) closed_loop: Option<ClosedLoopDoc>,
    /// One plain sentence saying what to look at.
    pub(crate) advice: String,
}

/// A closed loop whose saturated stage a knot is (`causeway_bottleneck::ClosedLoop`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct ClosedLoopDoc {
    /// The loop's other vertices, which wait on the stage.
    pub(crate) vertices: Vec<usize>,
    /// The loop's edges left out of the knot.
    pub(crate) edges: Vec<usize>,
    /// Share of its threads' time the stage was busy (running, runnable, at a device).
    pub(crate) busy: f64,
    /// The highest busy share among the loop's other thread vertices.
    pub(crate) others_busy: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct SinkDoc {
    pub(crate) vertex: usize,
    #[serde(rename = "incoming_ns", serialize_with = "secs_as_ns")]
    pub(crate) incoming_s: f64,
    pub(crate) edges: Vec<usize>,
    pub(crate) chain: Vec<usize>,
    pub(crate) upstream_cycles: Vec<Vec<usize>>,
    pub(crate) advice: String,
}

/// A brief stopper (`causeway_bottleneck::Pause`) and the waits on it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct PauseDoc {
    pub(crate) vertex: usize,
    /// Wait edges into it, set aside.
    pub(crate) edges: Vec<usize>,
    pub(crate) waiter_threads: usize,
    /// Direct waits on it and their total length.
    pub(crate) waits: u64,
    #[serde(rename = "direct_ns", serialize_with = "secs_as_ns")]
    pub(crate) direct_s: f64,
    /// The direct waiting on it over all the waiting of the vertices that wait on it.
    pub(crate) share_of_waiting: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct OffCpuDoc {
    pub(crate) vertex: usize,
    #[serde(rename = "off_cpu_ns", serialize_with = "secs_as_ns")]
    pub(crate) off_cpu_s: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct DeviceDoc {
    pub(crate) vertex: usize,
    /// `disk` or `nic`.
    pub(crate) kind: &'static str,
    pub(crate) name: String,
    pub(crate) requests: u64,
    pub(crate) bytes: u64,
    pub(crate) utilization: f64,
    /// Utilization by the recorded processes' requests (what the idle edges use).
    pub(crate) recorded_utilization: f64,
    #[serde(rename = "idle_ns", serialize_with = "secs_as_ns")]
    pub(crate) idle_s: f64,
    /// Capacity used for the estimate and where it came from.
    pub(crate) capacity: String,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub(crate) struct QualityDoc {
    pub(crate) lost_events: u64,
    pub(crate) model_anomalies: u64,
    pub(crate) unattributed_waits: u64,
    #[serde(rename = "unattributed_ns", serialize_with = "secs_as_ns")]
    pub(crate) unattributed_s: f64,
    pub(crate) unended_waits: u64,
    #[serde(rename = "unended_ns", serialize_with = "secs_as_ns")]
    pub(crate) unended_s: f64,
    pub(crate) before_exec_waits: u64,
    #[serde(rename = "before_exec_ns", serialize_with = "secs_as_ns")]
    pub(crate) before_exec_s: f64,
    pub(crate) exit_waits: u64,
    #[serde(rename = "exit_ns", serialize_with = "secs_as_ns")]
    pub(crate) exit_s: f64,
    pub(crate) idle_polls: u64,
    #[serde(rename = "idle_poll_ns", serialize_with = "secs_as_ns")]
    pub(crate) idle_poll_s: f64,
    pub(crate) data_wakes: u64,
    pub(crate) data_wakes_from_outside: u64,
    #[serde(rename = "min_edge_ns", serialize_with = "secs_as_ns")]
    pub(crate) min_edge_s: f64,
    pub(crate) false_wakeups_removed: u64,
    pub(crate) false_wakeups_unmatched: u64,
    pub(crate) spins: u64,
    pub(crate) spins_unreleased: u64,
    pub(crate) cascade_steps: u64,
    pub(crate) cascade_cycles_cut: u64,
    pub(crate) cascade_budget_cut: u64,
}

/// Everything `causeway bottleneck` shows.
/// A cgroup whose processes ran into its memory limit.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct MemoryLimitDoc {
    pub(crate) cgroup: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) owner: Option<String>,
    pub(crate) limit_bytes: u64,
    pub(crate) peak_usage_bytes: u64,
    /// Times the usage hit the limit.
    pub(crate) hits: u64,
    pub(crate) major_faults: u64,
    /// Evicted file pages read again.
    pub(crate) refaults: u64,
    /// Bytes the processes read from disks during the recording.
    pub(crate) read_bytes: u64,
    /// Share of those bytes that were evicted pages read again (at most 1).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) refault_share: Option<f64>,
    /// Share of the processes' on-CPU samples taken in page reclaim.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) reclaim_share: Option<f64>,
    /// Time its processes' threads spent in page reclaim, timed by the recorder (0:
    /// not timed, a trace before 1.9).
    #[serde(skip_serializing_if = "is_zero")]
    pub(crate) reclaim_ns: u64,
    /// Reclaims so timed.
    #[serde(skip_serializing_if = "is_zero")]
    pub(crate) reclaims: u64,
    /// Memory stalls over the recording (PSI) of the cgroup, else of the system.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) memory_pressure: Option<StallDoc>,
    pub(crate) pids: Vec<u32>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// PSI's stall shares of one resource over the recording.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct StallDoc {
    /// Share of the time some tasks stalled, 0 to 1.
    pub(crate) some: f64,
    /// Share of the time all non-idle tasks stalled at once, 0 to 1.
    pub(crate) full: f64,
    /// `system` (the cgroup keeps no PSI of its own) or `cgroup`.
    pub(crate) of: &'static str,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct Doc {
    /// Wall-clock start, `YYYY-MM-DD HH:MM:SS UTC` (absent for synthetic traces).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) recorded_at: Option<String>,
    /// Waker stacks of short waits were sampled: each kept one weighs `one_in`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) waker_stack_sampling: Option<causeway_format::WakerStackSampling>,
    #[serde(rename = "duration_ns", serialize_with = "secs_as_ns")]
    pub(crate) duration_s: f64,
    #[serde(rename = "threshold_ns", serialize_with = "secs_as_ns")]
    pub(crate) threshold_s: f64,
    pub(crate) merged: bool,
    pub(crate) processes: Option<Vec<u32>>,
    pub(crate) vertices: Vec<VertexDoc>,
    pub(crate) edges: Vec<EdgeDoc>,
    pub(crate) knots: Vec<KnotDoc>,
    pub(crate) background_knots: Vec<KnotDoc>,
    pub(crate) sinks: Vec<SinkDoc>,
    /// Timer sinks only background threads wait on: never in the summary.
    pub(crate) background_sinks: Vec<SinkDoc>,
    /// Brief stoppers: never in the summary.
    pub(crate) pauses: Vec<PauseDoc>,
    pub(crate) devices: Vec<DeviceDoc>,
    pub(crate) longest_off_cpu: Vec<OffCpuDoc>,
    /// One sentence: what to look at first.
    pub(crate) summary: String,
    /// Cgroups whose processes ran into their memory limit.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) memory_limits: Vec<MemoryLimitDoc>,
    pub(crate) quality: QualityDoc,
    /// Predicted gains of the knots' and sinks' edges (`--what-if`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) what_if: Option<crate::whatif::GainsDoc>,
}

/// An edge kind's name in the JSON and the tables.
pub(crate) fn edge_kind_name(k: &EdgeKind) -> &'static str {
    match k {
        EdgeKind::Wait => "wait",
        EdgeKind::DeviceIdle => "device_idle",
    }
}

/// A knot shape's name in the JSON and the tables.
pub(crate) fn shape_name(k: &Shape) -> &'static str {
    match k {
        Shape::Single => "single",
        Shape::Cycle => "cycle",
        Shape::Complex => "complex",
    }
}

fn edge_kind<S: Serializer>(k: &EdgeKind, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(edge_kind_name(k))
}

fn shape<S: Serializer>(k: &Shape, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(shape_name(k))
}
