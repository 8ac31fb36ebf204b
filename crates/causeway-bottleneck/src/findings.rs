//! The result of the analysis: typed data with no prose. Times are integer
//! nanoseconds, vertices and edges are referred to by id, and the only strings are
//! facts from the trace (thread names, interface and interrupt names, frame texts).
//! Labels, seconds, sentences and output formats belong to the report layer
//! (`causeway-report`).

use crate::refine::Shape;
use crate::stacks::EdgeStack;
use causeway_format::{DevId, DurationNs, SoftirqVec, Tgid, Tid};
use std::ops::Index;

/// Index of a vertex in [`Findings::vertices`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct VertexId(pub usize);

/// Index of an edge in [`Findings::edges`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct EdgeId(pub usize);

impl Index<VertexId> for Vec<Vertex> {
    type Output = Vertex;
    fn index(&self, id: VertexId) -> &Vertex {
        &self[id.0]
    }
}

impl Index<EdgeId> for Vec<Edge> {
    type Output = Edge;
    fn index(&self, id: EdgeId) -> &Edge {
        &self[id.0]
    }
}

/// A thread behind a vertex.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ThreadRef {
    /// Thread id.
    pub tid: Tid,
    /// Process id, if the trace says.
    pub tgid: Option<Tgid>,
    /// Thread name (latest).
    pub comm: String,
    /// Its process's title (command line), when the thread is the process's only
    /// thread and the program set the title itself (`server: log flusher`); `None`
    /// for a plain command line, which only repeats the executable's name.
    pub title: Option<String>,
    /// The runtime's goroutine id, when the "thread" is a goroutine of a Go program
    /// (the goroutine view); its `comm` is then its start function.
    pub goroutine: Option<u64>,
}

/// A managed runtime whose own threads are modelled as its pauses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ManagedRuntime {
    /// A HotSpot JVM.
    Jvm,
}

/// What a vertex stands for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum VertexKind {
    /// One thread.
    Thread,
    /// Short-term threads merged into one virtual long-running thread.
    ShortTermThreads,
    /// Similar threads merged into one vertex.
    SimilarThreads,
    /// Similar single-threaded processes merged into one vertex: children of one
    /// parent running the same executable under the same name (pre-forked servers,
    /// worker pools of processes).
    SimilarProcesses,
    /// A block device pseudo thread.
    Disk {
        /// The device, or `None` when the trace does not say which disk.
        device: Option<DevId>,
    },
    /// A network device pseudo thread.
    Nic {
        /// Interface name, or `None` when the trace does not say which device.
        interface: Option<String>,
    },
    /// Timer expiry: sleeps and timeouts.
    Timer,
    /// A hard interrupt handler with no device behind it found.
    Interrupt {
        /// Handler name.
        name: String,
    },
    /// A softirq with no device behind it found.
    Softirq {
        /// Its vector.
        vec: SoftirqVec,
    },
    /// A managed runtime's own threads in one process, as the pauses its program's
    /// threads waited for (safepoints, collections): never a thread of the answer.
    RuntimePauses {
        /// Which runtime.
        runtime: ManagedRuntime,
        /// Its process.
        tgid: Tgid,
        /// How many pauses its program's threads waited for (waits released together
        /// count once).
        pauses: u64,
        /// The longest pause.
        longest: DurationNs,
        /// The pauses' lengths summed.
        total: DurationNs,
    },
    /// A cgroup's CPU quota: the runnable time of its threads held back while the quota
    /// of a period was spent (`causeway_model::quota`).
    CpuQuota {
        /// The cgroup's path.
        cgroup: String,
        /// CPU time allowed per period, µs.
        quota_us: u64,
        /// The period, µs.
        period_us: u64,
        /// Periods with runnable tasks during the recording.
        periods: u64,
        /// Periods in which the quota ran out.
        throttled: u64,
        /// Runnable time of the recorded threads held back, summed.
        held: DurationNs,
    },
    /// A process's CPU affinity or cpuset: the runnable time of its threads held back
    /// while CPUs it may not use sat idle (`causeway_model::quota`, affinity groups).
    CpuAffinity {
        /// The process.
        tgid: Tgid,
        /// Its name (its main thread's, else a thread's), empty if unknown.
        process: String,
        /// The CPUs it may run on, as the kernel lists them.
        cpus: String,
        /// CPUs online.
        online: u32,
        /// Idle time of the CPUs it may not use, summed over them.
        idle_outside: DurationNs,
        /// Runnable time of its threads held back, summed.
        held: DurationNs,
    },
    /// Threads of processes the recording did not follow (they woke recorded threads);
    /// their own waits are not in the trace, so nothing is known of what they wait for.
    OtherProcesses,
}

impl VertexKind {
    /// True for disks and NICs (wPerf's I/O threads).
    pub fn is_io(&self) -> bool {
        matches!(self, VertexKind::Disk { .. } | VertexKind::Nic { .. })
    }

    /// True for vertices standing for threads.
    pub fn is_thread(&self) -> bool {
        matches!(
            self,
            VertexKind::Thread
                | VertexKind::ShortTermThreads
                | VertexKind::SimilarThreads
                | VertexKind::SimilarProcesses
        )
    }
}

/// One vertex of the wait-for graph.
#[derive(Clone, Debug, PartialEq)]
pub struct Vertex {
    /// Its index in [`Findings::vertices`].
    pub id: VertexId,
    /// What it is.
    pub kind: VertexKind,
    /// Threads behind it (empty for pseudo threads).
    pub threads: Vec<ThreadRef>,
    /// Time on CPU, summed over its threads.
    pub running: DurationNs,
    /// Time runnable without a CPU, summed.
    pub runnable: DurationNs,
    /// Time waiting (after false wake-up removal and busy-wait annotations), summed.
    pub waiting: DurationNs,
    /// Where its threads ran, from on-CPU samples (`None`: no sample of them, or not a
    /// thread vertex).
    pub on_cpu: Option<CpuProfile>,
}

/// On-CPU samples of a vertex's threads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CpuProfile {
    /// Samples of its threads.
    pub samples: u64,
    /// Of them, samples taken while a thread ran in the kernel.
    pub in_kernel: u64,
    /// The most sampled stacks, most first.
    pub top: Vec<SampledStack>,
    /// The program's own code those samples ran, most first: what a running sink's
    /// advice names.
    pub sites: Vec<SampledSite>,
}

/// A place in the program's own code and how many samples ran there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SampledSite {
    /// Samples whose innermost own functions are these.
    pub samples: u64,
    /// The site in words (`keysCommand ← processCommand (dictNext)`): its own
    /// functions, innermost first, then the library leaf most of its samples were in.
    pub text: String,
}

/// One sampled stack and how many samples had it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SampledStack {
    /// Samples with this stack.
    pub samples: u64,
    /// User functions (inlined calls expanded), innermost first.
    pub user: Vec<String>,
    /// Kernel functions, innermost first (empty: the thread ran in user space).
    pub kernel: Vec<String>,
}

/// Where an edge's weight comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EdgeKind {
    /// Waits of the source ended by the target, with cascaded nested waits.
    Wait,
    /// A device's idle time, waiting for requests from the target.
    DeviceIdle,
}

/// One edge: the source waits for the target.
#[derive(Clone, Debug, PartialEq)]
pub struct Edge {
    /// Its index in [`Findings::edges`] (edges are sorted by weight, heaviest first).
    pub id: EdgeId,
    /// Waiting vertex.
    pub from: VertexId,
    /// Vertex waited for.
    pub to: VertexId,
    /// What the weight means.
    pub kind: EdgeKind,
    /// Weight after cascaded re-distribution.
    pub weight: DurationNs,
    /// Waits of the source ended directly by the target.
    pub direct_waits: u64,
    /// Their total length (the weight before cascading).
    pub direct: DurationNs,
    /// Heaviest stacks where the waiting threads blocked.
    pub wait_stacks: Vec<EdgeStack>,
    /// Heaviest stacks of the contexts that woke them.
    pub waker_stacks: Vec<EdgeStack>,
}

/// A knot (or, among sinks, a single vertex) to look at.
#[derive(Clone, Debug, PartialEq)]
pub struct Knot {
    /// Its vertices, sorted.
    pub vertices: Vec<VertexId>,
    /// Edges inside it, sorted by id (so heaviest first).
    pub edges: Vec<EdgeId>,
    /// Its shape after refinement.
    pub shape: Shape,
    /// Sum of its edge weights. Knots are ranked by this sum taken in floating-point
    /// seconds, edge by edge, as the analysis always has.
    pub weight: DurationNs,
    /// True if a disk or NIC is in it.
    pub has_io: bool,
    /// Runnable time of its threads: time they needed a CPU and had none.
    pub needs_cpu: DurationNs,
    /// Edges removed by refinement to get here (low impact), in removal order.
    pub removed_edges: Vec<EdgeId>,
    /// Light edges that left its component and were trimmed before knots were
    /// identified (small leaks, see `Options::leak_fraction`), heaviest first.
    pub leaks: Vec<EdgeId>,
    /// Edges from its vertices to a brief stopper ([`Pause`]), set aside before knots
    /// were identified, sorted by id.
    pub paused: Vec<EdgeId>,
    /// The closed loop this knot stood out of as its saturated stage, if it did.
    pub closed_loop: Option<ClosedLoop>,
}

/// A closed loop (a load generator recorded with the server it drives) whose saturated
/// stage is the knot: the one thread vertex busy most of its time (running, runnable or
/// at a device) while the rest of the loop mostly waits for it.
#[derive(Clone, Debug, PartialEq)]
pub struct ClosedLoop {
    /// The loop's other vertices, which wait on the stage.
    pub vertices: Vec<VertexId>,
    /// The loop's edges left out of the knot, sorted by id.
    pub edges: Vec<EdgeId>,
    /// Share of its threads' time the stage was busy.
    pub busy: f64,
    /// The highest busy share among the loop's other thread vertices.
    pub others_busy: f64,
}

/// A brief stopper: a thread vertex that many threads wait for, briefly each time and
/// for a small share of their waiting (a runtime's safepoint or stop-the-world thread).
/// The edges into it are set aside before knots and sinks are found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pause {
    /// The stopper.
    pub vertex: VertexId,
    /// Wait edges into it from other vertices, sorted by id.
    pub edges: Vec<EdgeId>,
    /// Threads of the vertices that wait on it.
    pub waiter_threads: usize,
}

/// A vertex with no outgoing edge that others wait for.
#[derive(Clone, Debug, PartialEq)]
pub struct Sink {
    /// The vertex.
    pub vertex: VertexId,
    /// Weight of all edges into it.
    pub incoming: DurationNs,
    /// Edges into it that count for the graph (at least the noise floor), sorted by id
    /// (so heaviest first).
    pub edges: Vec<EdgeId>,
    /// The heaviest chain of waits ending here: vertices from the first waiter to this
    /// sink (who waits for whom on the way to it).
    pub chain: Vec<VertexId>,
    /// Cycles of waits upstream of it (each sorted), heaviest first: the
    /// request/response loops that feed the sink.
    pub upstream_cycles: Vec<Vec<VertexId>>,
}

/// A vertex ranked by plain off-CPU time, for comparison with the knots.
#[derive(Clone, Debug, PartialEq)]
pub struct OffCpu {
    /// The vertex.
    pub vertex: VertexId,
    /// Waiting plus runnable time.
    pub off_cpu: DurationNs,
}

/// What the analysis could not attribute or had to change.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Quality {
    /// Events lost in recording.
    pub lost_events: u64,
    /// Model inconsistencies.
    pub model_anomalies: u64,
    /// Waits with no known waker (not on any edge).
    pub unattributed_waits: u64,
    /// Their total length.
    pub unattributed: DurationNs,
    /// Waits no wake-up ended (cut by the end of the recording or the thread's exit):
    /// not on any edge, and not counted as unattributed.
    pub unended_waits: u64,
    /// Their total length.
    pub unended: DurationNs,
    /// Waits of recorded processes that ended before the process exec'd the program
    /// (launcher code, such as the recorder's child waiting to exec): left out.
    pub before_exec_waits: u64,
    /// Their total length.
    pub before_exec: DurationNs,
    /// Threads' last waits ended just before they exited (told to stop, or a join
    /// of the last worker): left out.
    pub exit_waits: u64,
    /// Their total length.
    pub exit: DurationNs,
    /// Waits for work (epoll_wait, poll, select, a timed poll of a queue) ended by
    /// their own timeout after which the thread woke nobody: idle event loops and
    /// workers, left out of the edges.
    pub idle_polls: u64,
    /// Their total length.
    pub idle_poll: DurationNs,
    /// Waits ended by socket data that a recorded thread sent, whose waker is that
    /// thread rather than the device or kernel thread that carried the data.
    pub data_wakes: u64,
    /// Waits ended by socket data from outside the recording (their device stays
    /// the waker).
    pub data_wakes_from_outside: u64,
    /// Edges lighter than this are listed but not used to find knots and sinks (see
    /// [`crate::Options::min_edge_fraction`]).
    pub min_edge: DurationNs,
    /// False wake-ups removed (wait + wake pairs joined).
    pub false_wakeups_removed: u64,
    /// False wake-up markers with no wait on both sides.
    pub false_wakeups_unmatched: u64,
    /// Busy-wait spans counted as waits.
    pub spins: u64,
    /// Busy-wait spans with no flag write by another thread to end them (left as is).
    pub spins_unreleased: u64,
    /// Cascade steps (weight additions).
    pub cascade_steps: u64,
    /// Cascade re-entries of a wait already on the path (cycles), skipped.
    pub cascade_cycles_cut: u64,
    /// Root waits whose cascade hit the step budget.
    pub cascade_budget_cut: u64,
}

/// Everything the bottleneck analysis finds.
#[derive(Clone, Debug, PartialEq)]
pub struct Findings {
    /// When the recording began, in seconds since the Unix epoch (`None` for a
    /// synthetic trace, whose clock has no real time).
    pub started_unix_s: Option<i64>,
    /// How the recording sampled waker stacks of short waits (the edges' waker-stack
    /// weights count each sample that many times); `None`: every one was taken.
    pub waker_stack_sampling: Option<causeway_format::WakerStackSampling>,
    /// Recording length (at least 1 ns).
    pub duration: DurationNs,
    /// Refinement threshold.
    pub threshold: DurationNs,
    /// Whether similar and short-term threads were merged.
    pub merged: bool,
    /// The processes analyzed, when the trace is a per-process recording (threads of
    /// other processes there are the [`VertexKind::OtherProcesses`] vertex); `None`: all
    /// of them.
    pub processes: Option<Vec<Tgid>>,
    /// All vertices.
    pub vertices: Vec<Vertex>,
    /// All edges, heaviest first.
    pub edges: Vec<Edge>,
    /// Knots after refinement, most important first.
    pub knots: Vec<Knot>,
    /// Knots of background threads (no device, under one CPU in total): reported apart
    /// and removed before looking further.
    pub background_knots: Vec<Knot>,
    /// Sinks: vertices others wait for that wait for nobody, most waited for first.
    pub sinks: Vec<Sink>,
    /// Timer sinks that only background threads wait on (no worker: in no knot, waited
    /// for by nobody, mostly idle): reported apart, never the top finding.
    pub background_sinks: Vec<Sink>,
    /// Brief stoppers, whose incoming edges were set aside (never the top finding).
    pub pauses: Vec<Pause>,
    /// Disks and NICs.
    pub devices: Vec<Device>,
    /// Up to five thread vertices by plain off-CPU time, what an off-CPU ranking would
    /// name first.
    pub longest_off_cpu: Vec<OffCpu>,
    /// Data quality counters.
    pub quality: Quality,
    /// Names the host gave the disks in the findings (`vda`), where the trace says.
    pub disk_names: std::collections::BTreeMap<DevId, String>,
    /// Cgroups whose processes ran into their memory limit during the recording.
    pub memory_limits: Vec<causeway_model::MemoryGroup>,
    /// Each recorded process's cgroup (CPU controller), as last noted.
    pub cgroups: std::collections::BTreeMap<Tgid, String>,
}

impl Findings {
    /// True if the analysis found a knot or a sink to look at.
    pub fn found(&self) -> bool {
        !self.knots.is_empty() || !self.sinks.is_empty()
    }

    /// An edge's weight over the recording's duration.
    pub fn share(&self, e: &Edge) -> f64 {
        e.weight.0 as f64 / self.duration.0 as f64
    }

    /// Running time of the vertices over the recording, summed vertex by vertex: 1.0 is
    /// one CPU busy all the time.
    pub fn cpu_fraction(&self, vertices: &[VertexId]) -> f64 {
        cpu_fraction(&self.vertices, vertices, self.duration)
    }
}

/// [`Findings::cpu_fraction`] before the findings exist.
pub(crate) fn cpu_fraction(all: &[Vertex], vertices: &[VertexId], duration: DurationNs) -> f64 {
    vertices
        .iter()
        .map(|&v| all[v.0].running.0 as f64 / duration.0 as f64)
        .sum()
}

/// The part of a thread name that similar threads share: the name without its digits
/// (`worker-1`, `worker-2` → `worker-`). Threads merge only when this matches.
pub fn similar_name(name: &str) -> String {
    crate::entities::strip_digits(name)
}

/// One device pseudo thread's figures.
#[derive(Clone, Debug, PartialEq)]
pub struct Device {
    /// Its vertex in the graph.
    pub vertex: VertexId,
    /// Which device.
    pub kind: DeviceKind,
    /// Requests (disk) or 0 (NIC).
    pub requests: u64,
    /// Bytes transferred.
    pub bytes: u64,
    /// Estimated utilization, 0..=1, from all the device's traffic.
    pub utilization: f64,
    /// The share of the recording during which one of the analyzed processes' requests
    /// was in flight, 0..=1: what the idle edges use in a per-process recording (for a
    /// system-wide recording, and for NICs, equal to `utilization`).
    pub recorded_utilization: f64,
    /// Estimated idle time.
    pub idle: DurationNs,
    /// Capacity used for the estimate.
    pub capacity: Capacity,
}

/// Which device a [`Device`] is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DeviceKind {
    /// A block device.
    Disk(DevId),
    /// A network device, by interface name.
    Nic(String),
}

/// The capacity a device's utilization is estimated against.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Capacity {
    /// Requests per second (disks only; infinite when nothing bounds it).
    pub iops: Option<f64>,
    /// Bytes per second (infinite for a disk when nothing bounds it).
    pub bandwidth: f64,
    /// Where the figures came from.
    pub source: CapacitySource,
}

/// Where a device's capacity came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CapacitySource {
    /// An option of the analysis.
    Given,
    /// Estimated from the recorded disk requests' latencies.
    Estimated,
    /// The link speed stored in the trace.
    LinkSpeed,
    /// Nothing known: 10 Gbit/s.
    Default,
}
