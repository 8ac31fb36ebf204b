//! The result of the analysis: plain data for renderers (text, JSON, DOT), with every
//! time in seconds. Nothing here formats or prints.

use crate::devices::DeviceReport;
use crate::refine::Shape;
use crate::stacks::StackReport;
use serde::Serialize;

/// A thread behind a vertex.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ThreadRef {
    /// Thread id.
    pub tid: u32,
    /// Process id (0 if unknown).
    pub pid: u32,
    /// Thread name.
    pub comm: String,
}

/// What a vertex stands for.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum VertexKind {
    /// One thread.
    Thread,
    /// Short-term threads merged into one virtual long-running thread.
    ShortTermThreads,
    /// Similar threads merged into one vertex.
    SimilarThreads,
    /// A block device pseudo thread.
    Disk {
        /// `major:minor`, or `?` when the trace does not say which disk.
        device: String,
    },
    /// A network device pseudo thread.
    Nic {
        /// Interface name, or `?`.
        interface: String,
    },
    /// Timer expiry: sleeps and timeouts.
    Timer,
    /// An interrupt handler or softirq with no device behind it found.
    Interrupt {
        /// Handler or softirq name.
        name: String,
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
            VertexKind::Thread | VertexKind::ShortTermThreads | VertexKind::SimilarThreads
        )
    }
}

/// One vertex of the wait-for graph.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Vertex {
    /// Index in [`Report::vertices`].
    pub id: usize,
    /// Short human name (`consumer (1234)`, `worker-* ×4`, `disk 8:0`).
    pub label: String,
    /// What it is.
    pub kind: VertexKind,
    /// Threads behind it (empty for pseudo threads).
    pub threads: Vec<ThreadRef>,
    /// Time on CPU, summed over its threads.
    pub running_s: f64,
    /// Time runnable without a CPU, summed.
    pub runnable_s: f64,
    /// Time waiting (after false wake-up removal and busy-wait annotations), summed.
    pub waiting_s: f64,
    /// Running time over the recording: 1.0 is one CPU busy all the time.
    pub cpu_fraction: f64,
}

/// Where an edge's weight comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EdgeKind {
    /// Waits of the source ended by the target, with cascaded nested waits.
    Wait,
    /// A device's idle time, waiting for requests from the target.
    DeviceIdle,
}

/// One edge: the source waits for the target.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Edge {
    /// Index in [`Report::edges`] (edges are sorted by weight, heaviest first).
    pub id: usize,
    /// Waiting vertex.
    pub from: usize,
    /// Vertex waited for.
    pub to: usize,
    /// What the weight means.
    pub kind: EdgeKind,
    /// Weight after cascaded re-distribution, seconds.
    pub weight_s: f64,
    /// Weight over the recording's duration.
    pub share: f64,
    /// Waits of the source ended directly by the target.
    pub direct_waits: u64,
    /// Their total length, seconds (the weight before cascading).
    pub direct_s: f64,
    /// Heaviest stacks where the waiting threads blocked.
    pub wait_stacks: Vec<StackReport>,
    /// Heaviest stacks of the contexts that woke them.
    pub waker_stacks: Vec<StackReport>,
}

/// A knot (or, among sinks, a single vertex) to look at.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Knot {
    /// 1 for the most important.
    pub rank: usize,
    /// Vertex ids.
    pub vertices: Vec<usize>,
    /// Edge ids inside it, heaviest first.
    pub edges: Vec<usize>,
    /// Its shape after refinement.
    pub shape: Shape,
    /// Sum of its edge weights, seconds (the ranking key).
    pub weight_s: f64,
    /// Sum of its vertices' CPU fractions.
    pub cpu_fraction: f64,
    /// True if a disk or NIC is in it.
    pub has_io: bool,
    /// Runnable time of its threads: time they needed a CPU and had none, seconds.
    pub needs_cpu_s: f64,
    /// Edges removed by refinement to get here (low impact), ids.
    pub removed_edges: Vec<usize>,
    /// One plain sentence saying what to look at.
    pub advice: String,
}

/// A vertex with no outgoing edge that others wait for.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Sink {
    /// Vertex id.
    pub vertex: usize,
    /// Weight of the edges into it, seconds.
    pub incoming_s: f64,
    /// Edges into it that count for the graph (at least the noise floor), heaviest
    /// first.
    pub edges: Vec<usize>,
    /// The heaviest chain of waits ending here: vertex ids from the first waiter to
    /// this sink (who waits for whom on the way to it).
    pub chain: Vec<usize>,
    /// Cycles of waits upstream of it (vertex ids, each sorted), heaviest first: the
    /// request/response loops that feed the sink.
    pub upstream_cycles: Vec<Vec<usize>>,
    /// What it means.
    pub advice: String,
}

/// A vertex ranked by plain off-CPU time, for comparison with the knots.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct OffCpu {
    /// Vertex id.
    pub vertex: usize,
    /// Waiting plus runnable time, seconds.
    pub off_cpu_s: f64,
}

/// What the analysis could not attribute or had to change; shown in every report.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Quality {
    /// Events lost in recording.
    pub lost_events: u64,
    /// Model inconsistencies.
    pub model_anomalies: u64,
    /// Waits with no known waker (not on any edge).
    pub unattributed_waits: u64,
    /// Their total length, seconds.
    pub unattributed_s: f64,
    /// Waits no wake-up ended (cut by the end of the recording or the thread's exit):
    /// not on any edge, and not counted as unattributed.
    pub unended_waits: u64,
    /// Their total length, seconds.
    pub unended_s: f64,
    /// Waits of recorded processes that ended before the process exec'd the program
    /// (launcher code, such as the recorder's child waiting to exec): left out.
    pub before_exec_waits: u64,
    /// Their total length, seconds.
    pub before_exec_s: f64,
    /// Edges lighter than this (seconds) are listed but not used to find knots and
    /// sinks (see [`crate::Options::min_edge_fraction`]).
    pub min_edge_s: f64,
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

/// Everything `causeway bottleneck` reports.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Report {
    /// Recording length, seconds.
    pub duration_s: f64,
    /// Refinement threshold, seconds.
    pub threshold_s: f64,
    /// Whether similar and short-term threads were merged.
    pub merged: bool,
    /// The processes analyzed, when the trace is a per-process recording (threads of
    /// other processes there are the `other processes` vertex); `None`: all of them.
    pub processes: Option<Vec<u32>>,
    /// All vertices.
    pub vertices: Vec<Vertex>,
    /// All edges, heaviest first.
    pub edges: Vec<Edge>,
    /// Knots after refinement, most important first.
    pub knots: Vec<Knot>,
    /// Knots of background threads (no device, under one CPU in total): reported apart
    /// and removed before looking further.
    pub background_knots: Vec<Knot>,
    /// Sinks: vertices others wait for that wait for nobody.
    pub sinks: Vec<Sink>,
    /// Disks and NICs.
    pub devices: Vec<DeviceReport>,
    /// Vertices by plain off-CPU time, what an off-CPU ranking would name first.
    pub longest_off_cpu: Vec<OffCpu>,
    /// One sentence: what to look at first.
    pub summary: String,
    /// Data quality counters.
    pub quality: Quality,
}
