//! The event graph's types: vertices (execution segments and waits), edges (strong
//! or weak, with what proved or suggested them), and the graph with its incoming-edge
//! index. Building it from a trace is [`crate::build`]'s job; this module only holds
//! it and answers lookups, so the diagnosis can be tested on graphs built by hand.

use crate::adjacency::Adjacency;
use causeway_format::{DurationNs, StackId, Tgid, Tid, Timestamp};
use causeway_model::{StackRef, TimeSpan};
use serde::Serialize;

/// Position of a vertex in [`EventGraph::vertices`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct VertexId(pub u32);

/// Position of an edge in [`EventGraph::edges`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct EdgeId(pub u32);

/// What a vertex covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum VertexKind {
    /// The thread ran or waited for a CPU (one stretch between two blocking waits, or a
    /// part of one split where its peers changed).
    Exec,
    /// The thread was off the CPU in one blocking wait (or stopped).
    Wait,
}

/// What a vertex was doing, for Algorithm 1's switch and for reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BlockType {
    /// On a CPU doing work (Argus LongRunning when long).
    Running,
    /// Mostly queued for a CPU it did not get.
    Runnable,
    /// On a CPU, but calling `sched_yield` over and over: a busy-wait on a data flag
    /// (Argus RepeatedYield).
    Yielding,
    /// Blocked in a wait (Argus LongWait when long).
    Wait,
    /// Stopped (`T`): by a stop signal or a tracer.
    Stopped,
    /// The model does not know (lost events, before the first event).
    Unknown,
}

/// What ended a wait vertex.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "by", rename_all = "snake_case")]
pub enum WokenBy {
    /// A thread woke it (the strong wake-up edge names its vertex).
    Thread {
        /// The waking thread.
        tid: Tid,
    },
    /// A timer expired: the wait's own timeout or sleep.
    Timer,
    /// A device interrupt or softirq unrelated to the application's intent (§3.1
    /// filters these out of the graph).
    Interrupt {
        /// Interrupt number, or the softirq vector.
        number: u32,
        /// True for a softirq.
        softirq: bool,
    },
    /// The trace does not say.
    Unknown,
}

impl WokenBy {
    /// True when a device ended the wait: a hardware interrupt other than the timer's,
    /// or the block-completion softirq (a disk request done). Such a wait waited on
    /// the device, not on a thread.
    pub fn is_device(self) -> bool {
        match self {
            WokenBy::Interrupt { softirq: false, .. } => true,
            WokenBy::Interrupt {
                softirq: true,
                number,
            } => number == u32::from(causeway_format::SoftirqVec::BLOCK.0),
            _ => false,
        }
    }
}

/// One system call in a vertex, repeats collapsed (Argus §3.3 keeps one of a run of
/// the same call).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Call {
    /// Syscall number (x86-64).
    pub nr: u32,
    /// Key arguments (the first three, zero unless the recording kept them).
    pub args: [u64; 3],
    /// Return value of the first call of the run, if its exit was seen.
    pub ret: Option<i64>,
    /// How many calls in a row the run holds.
    pub repeats: u32,
    /// Stacks at the first call of the run, if taken.
    pub stack: Option<StackRef>,
}

/// An execution segment or a wait of one thread: a vertex of the event graph.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Vertex {
    /// Index of the thread in the model's thread list.
    pub thread: u32,
    /// The thread's id.
    pub tid: Tid,
    /// Its process, if known.
    pub tgid: Option<Tgid>,
    /// The interval covered.
    pub span: TimeSpan,
    /// Exec or wait.
    pub kind: VertexKind,
    /// What it was doing.
    pub block: BlockType,
    /// Time on a CPU inside the span.
    pub running: DurationNs,
    /// Time queued for a CPU inside the span.
    pub runnable: DurationNs,
    /// System calls entered inside the span, repeats collapsed.
    pub calls: Vec<Call>,
    /// `sched_yield` calls inside the span (before collapsing).
    pub yields: u32,
    /// For a wait: the system call it blocked in, if known.
    pub wait_call: Option<u32>,
    /// For a wait: where it blocked (switch-out stacks).
    pub stack: Option<StackRef>,
    /// For a wait: what ended it (`None` if it did not end in the trace).
    pub woken_by: Option<WokenBy>,
    /// For a wait: what it waited on (a socket, a lock, a sleep...), see
    /// [`crate::WaitKind`]; `None` for runs.
    pub waits_on: Option<crate::WaitKind>,
    /// On-CPU samples inside the span, counted by user stack (most first).
    pub samples: Vec<(Option<StackId>, u32)>,
    /// True if both ends were observed (not a bound of the recording or of a loss).
    pub complete: bool,
}

impl Vertex {
    /// Length of the vertex.
    pub fn duration(&self) -> DurationNs {
        self.span.duration()
    }
}

/// Why an edge is in the graph.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EdgeKind {
    /// A thread woke the wait (futex, pipe, socket, eventfd and every other kernel
    /// wait queue end here: the kernel's wake-up names the waker).
    Wakeup,
    /// The wait ended by the timer its own thread armed when it began waiting.
    Timer,
    /// A wait's end lets its thread run again (same thread, after the wake-up).
    Resume,
    /// The parent created the thread (fork or clone).
    Fork,
    /// A write of a data flag seen by a later read.
    DataFlag,
    /// A write to a pipe, socket or eventfd → the read that took its data when the
    /// read found it queued (no wake-up links them); strong when the data came from
    /// one thread, weak when one read took several threads' data.
    Data,
    /// A signal: its sender to the thread it stopped, or to where it was taken.
    Signal,
    /// Program order across a blocking wait that split the thread's execution
    /// (§4.2.1); weak, since the work after the wait may serve another request.
    SameThread,
    /// Program order across a split where the thread's peers changed (§4.2.1); weak.
    PeerSplit,
    /// Program order across a split between two items of a batching loop (an event
    /// loop serving several peers in one wake-up, §4.2.1); weak.
    BatchItem,
}

/// How sure the graph is of an edge (§3.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Strength {
    /// The trace proves the causal link.
    Strong,
    /// A heuristic added it; the diagnosis asks before following it.
    Weak,
}

/// A causal edge: `from` happened before and (perhaps) caused `to`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Edge {
    /// The cause.
    pub from: VertexId,
    /// The effect.
    pub to: VertexId,
    /// Why the edge exists.
    pub kind: EdgeKind,
    /// Strong or weak.
    pub strength: Strength,
    /// When the link happened (the wake-up, the write, the fork).
    pub ts: Timestamp,
}

/// Counts of a graph, for reports and benchmarks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct GraphCounts {
    /// Vertices.
    pub vertices: u64,
    /// Edges.
    pub edges: u64,
    /// Strong edges.
    pub strong: u64,
    /// Weak edges.
    pub weak: u64,
    /// Exec vertices split where their peers changed.
    pub peer_splits: u64,
    /// Exec vertices of batching loops split per item.
    pub batch_splits: u64,
    /// Write → read edges on a kernel object (reads that found the data queued).
    pub data_edges: u64,
    /// Wake-ups by interrupts left out of the graph (§3.1).
    pub interrupt_wakeups: u64,
    /// Wake-up edges from the thread that sent a socket's data to the wait it ended
    /// (the recorder's socket events; the network stack ran the wake-up).
    pub socket_wakeups: u64,
}

/// The counts only the builder knows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct BuildCounts {
    /// Peer-set splits.
    pub peer_splits: u64,
    /// Batch item splits.
    pub batch_splits: u64,
    /// Data edges.
    pub data_edges: u64,
    /// Wake-ups by interrupts left out.
    pub interrupt_wakeups: u64,
    /// Socket data wake-ups linked to their sender.
    pub socket_wakeups: u64,
}

/// Vertices, edges and the index of incoming edges.
#[derive(Clone, Debug, Default)]
pub struct EventGraph {
    vertices: Vec<Vertex>,
    edges: Vec<Edge>,
    /// Incoming edges of each vertex, by position.
    incoming: Adjacency,
    /// Outgoing edges of each vertex, by position.
    outgoing: Adjacency,
    /// Vertices of each thread (by model thread index), in time order.
    by_thread: Vec<Vec<VertexId>>,
    /// The start of each of `by_thread`'s vertices: the time lookups search this compact
    /// array rather than following each id to its vertex.
    starts: Vec<Vec<Timestamp>>,
    counts: GraphCounts,
}

impl EventGraph {
    /// A graph from its parts (edges naming vertices that do not exist are dropped).
    /// Each thread's vertices must be given in time order.
    pub fn from_parts(vertices: Vec<Vertex>, edges: Vec<Edge>) -> EventGraph {
        let threads = vertices.iter().map(|v| v.thread as usize + 1).max();
        let mut by_thread = vec![Vec::new(); threads.unwrap_or(0)];
        let mut starts = vec![Vec::new(); threads.unwrap_or(0)];
        for (i, v) in (0u32..).zip(&vertices) {
            if let (Some(list), Some(at)) = (
                by_thread.get_mut(v.thread as usize),
                starts.get_mut(v.thread as usize),
            ) {
                list.push(VertexId(i));
                at.push(v.span.start);
            }
        }
        EventGraph {
            vertices,
            by_thread,
            starts,
            ..EventGraph::default()
        }
        .with_edges(edges)
    }

    /// The same vertices with these edges instead (the per-thread index is kept; the
    /// edge index and the counts are made anew, the builder's counts reset).
    pub fn with_edges(self, edges: Vec<Edge>) -> EventGraph {
        let n = self.vertices.len();
        let edges: Vec<Edge> = edges
            .into_iter()
            .filter(|e| (e.from.0 as usize) < n && (e.to.0 as usize) < n)
            .collect();
        let incoming = Adjacency::new(n, edges.len(), |i| edges[i].to.0 as usize);
        let outgoing = Adjacency::new(n, edges.len(), |i| edges[i].from.0 as usize);
        let strong = edges
            .iter()
            .filter(|e| e.strength == Strength::Strong)
            .count() as u64;
        let counts = GraphCounts {
            vertices: n as u64,
            edges: edges.len() as u64,
            strong,
            weak: edges.len() as u64 - strong,
            ..GraphCounts::default()
        };
        EventGraph {
            edges,
            incoming,
            outgoing,
            counts,
            ..self
        }
    }

    /// Set the counts only the builder knows.
    pub(crate) fn set_build_counts(&mut self, c: BuildCounts) {
        self.counts.peer_splits = c.peer_splits;
        self.counts.batch_splits = c.batch_splits;
        self.counts.data_edges = c.data_edges;
        self.counts.interrupt_wakeups = c.interrupt_wakeups;
        self.counts.socket_wakeups = c.socket_wakeups;
    }

    /// All vertices.
    pub fn vertices(&self) -> &[Vertex] {
        &self.vertices
    }

    /// All edges.
    pub fn edges(&self) -> &[Edge] {
        &self.edges
    }

    /// A vertex by id.
    pub fn vertex(&self, id: VertexId) -> Option<&Vertex> {
        self.vertices.get(id.0 as usize)
    }

    /// An edge by id.
    pub fn edge(&self, id: EdgeId) -> Option<&Edge> {
        self.edges.get(id.0 as usize)
    }

    /// Edges into a vertex, in the order they were added.
    pub fn incoming(&self, id: VertexId) -> impl Iterator<Item = (EdgeId, &Edge)> + '_ {
        self.incoming
            .of(id.0 as usize)
            .iter()
            .map(|&e| EdgeId(e))
            .filter_map(|e| self.edge(e).map(|edge| (e, edge)))
    }

    /// Edges out of a vertex.
    pub fn outgoing(&self, id: VertexId) -> impl Iterator<Item = (EdgeId, &Edge)> + '_ {
        self.outgoing
            .of(id.0 as usize)
            .iter()
            .map(|&e| EdgeId(e))
            .filter_map(|e| self.edge(e).map(|edge| (e, edge)))
    }

    /// A thread's vertices in time order.
    pub fn thread_vertices(&self, thread: u32) -> &[VertexId] {
        self.by_thread
            .get(thread as usize)
            .map_or(&[], Vec::as_slice)
    }

    /// The vertex of a thread at `ts`: the last one starting at or before it, or the
    /// exec vertex that ended exactly then (a thread that blocked at the instant it
    /// woke someone).
    pub fn vertex_at(&self, thread: u32, ts: Timestamp) -> Option<VertexId> {
        let list = self.thread_vertices(thread);
        let starts = self
            .starts
            .get(thread as usize)
            .map_or(&[][..], Vec::as_slice);
        let i = starts.partition_point(|&s| s <= ts);
        let last = *list.get(i.checked_sub(1)?)?;
        let lv = self.vertex(last)?;
        if lv.kind == VertexKind::Wait && lv.span.start == ts {
            let prev = i.checked_sub(2).and_then(|p| list.get(p)).copied();
            if let Some(p) = prev.filter(|&p| {
                self.vertex(p)
                    .is_some_and(|x| x.kind == VertexKind::Exec && x.span.end == ts)
            }) {
                return Some(p);
            }
        }
        (ts <= lv.span.end).then_some(last)
    }

    /// The vertices of a thread that overlap `span`, in time order, each with the
    /// length of the overlap.
    pub fn overlapping(&self, thread: u32, span: TimeSpan) -> Vec<(VertexId, DurationNs)> {
        let list = self.thread_vertices(thread);
        let lo =
            list.partition_point(|&v| self.vertex(v).is_some_and(|x| x.span.end <= span.start));
        let mut out = Vec::new();
        for &v in list.get(lo..).unwrap_or(&[]) {
            let Some(x) = self.vertex(v) else { continue };
            if x.span.start >= span.end {
                break;
            }
            let a = x.span.start.max(span.start);
            let b = x.span.end.min(span.end);
            out.push((v, b.saturating_since(a)));
        }
        out
    }

    /// Vertex, edge and strong/weak counts.
    pub fn counts(&self) -> GraphCounts {
        self.counts
    }
}
