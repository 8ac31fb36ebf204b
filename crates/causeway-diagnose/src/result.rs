//! The diagnosis: ids, cases, slices and every decision, no sentences.

use crate::graph::{EdgeId, EdgeKind, GraphCounts, Strength, VertexId, WokenBy};
use crate::oracle::{Choice, DecidedBy, Question};
use serde::Serialize;

/// Algorithm 1's case for a vertex.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Case {
    /// Long on a CPU.
    LongRunning,
    /// Long queued for a CPU (runnable, starved).
    LongRunnable,
    /// A `sched_yield` loop: waiting on a data flag.
    RepeatedYield,
    /// A long blocking wait.
    LongWait,
    /// Stopped (`T`) for long.
    Stopped,
    /// Nothing long: not a stall.
    Normal,
}

impl Case {
    /// True for every case but [`Case::Normal`].
    pub fn is_stall(self) -> bool {
        self != Case::Normal
    }
}

/// Why a slice ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SliceEnd {
    /// The vertex has no incoming edge: the origin.
    NoIncoming,
    /// The last edge was the thread's own timer: the work began there.
    Timer,
    /// An answer said stop.
    Stopped,
    /// The slice came back to a vertex it had passed.
    Cycle,
    /// The slice reached its length limit.
    Limit,
}

/// One vertex of a slice and the edge that led to it (backwards: each step is the
/// cause of the one before).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct SliceStep {
    /// The vertex.
    pub vertex: VertexId,
    /// The edge from this vertex to the previous step (`None` for the first step).
    pub edge: Option<EdgeId>,
    /// Its kind.
    pub kind: Option<EdgeKind>,
    /// Its strength.
    pub strength: Option<Strength>,
    /// How it was chosen.
    pub decided: Option<DecidedBy>,
}

/// A backward slice.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Slice {
    /// Steps, starting at the sliced vertex.
    pub steps: Vec<SliceStep>,
    /// Why it ended.
    pub end: SliceEnd,
}

/// Another thread's vertex compared with a long wait (Algorithm 1, line 16).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Compared {
    /// The thread (model index).
    pub thread: u32,
    /// Its vertex that overlaps the wait the most.
    pub vertex: VertexId,
    /// That vertex's case.
    pub case: Case,
    /// Share of the wait it covers, percent.
    pub overlap_percent: u32,
    /// True if the thread came from the normal wake-up path; false if it is only a
    /// recent peer (no similar normal wait was found: a weak link).
    pub from_normal_path: bool,
}

/// One vertex the diagnosis reports.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// The vertex.
    pub vertex: VertexId,
    /// Its case.
    pub case: Case,
    /// 0 for the problem vertex, 1 for its culprit, 2 for the culprit's culprit...
    pub depth: u32,
    /// The vertex it delayed (`None` for the problem vertex).
    pub culprit_of: Option<VertexId>,
    /// For a wait: the most similar earlier vertex whose wake-up did arrive.
    pub similar: Option<VertexId>,
    /// For a run: the slice back to the input that caused the work. For a wait: the
    /// normal wake-up path sliced from the similar vertex.
    pub slice: Option<Slice>,
    /// For a wait: the threads compared and their vertices at the time.
    pub compared: Vec<Compared>,
    /// True for a wait in a sleep its own timer ended: the thread chose to wait, the
    /// end of the chain.
    pub slept: bool,
    /// For a yield loop with a traced data flag: the vertex of the thread whose write
    /// of the flag ended the loop (the last data-flag edge into it), the late writer.
    pub flag_writer: Option<VertexId>,
    /// For a stopped vertex: the signal edge from the vertex that sent its stop signal,
    /// when the trace recorded it.
    pub stopped_by: Option<EdgeId>,
    /// How its culprits were chosen (`None` for a run, a sleep, or a wait that had
    /// none to look for).
    pub rule: Option<HopRule>,
}

/// The rule that chose a wait's culprits: which threads were compared with it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum HopRule {
    /// The thread that ended the wait this time (its wake-up, the data it sent, the
    /// signal that continued a stopped thread): what kept it from doing so sooner.
    Waker,
    /// The sender of the signal that stopped a stopped thread.
    StopSender,
    /// The writer of the data flag a yield loop watched.
    FlagWriter,
    /// Argus's normal path: the threads on the wake-up path of a similar earlier wait
    /// (for a wait that never ended in the trace, or whose waker is unknown).
    NormalPath,
    /// The threads it exchanged wake-ups with just before (no known waker and no
    /// similar wait): the weakest rule.
    Peers,
}

impl HopRule {
    /// A short phrase for a verdict line: how the hop after the finding was found.
    pub fn phrase(self) -> &'static str {
        match self {
            Self::Waker => "woke it",
            Self::StopSender => "stopped it",
            Self::FlagWriter => "wrote its flag",
            Self::NormalPath => "on its normal wake-up path",
            Self::Peers => "a peer, weak",
        }
    }
}

/// A circle of waits: each waits for the next, the last for the first.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CircularWait {
    /// The vertices in the circle, in the order the diagnosis went round it.
    pub vertices: Vec<VertexId>,
    /// The vertex whose wait ended without a wake-up from the circle, and what ended
    /// it (a timeout breaks the circle), if one did.
    pub broken_by: Option<(VertexId, WokenBy)>,
}

/// One question and its answer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Decision {
    /// What was asked.
    pub question: Question,
    /// The answer.
    pub choice: Choice,
    /// How it was made.
    pub by: DecidedBy,
}

/// The result of [`crate::diagnose`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Diagnosis {
    /// Where the diagnosis started.
    pub problem: VertexId,
    /// Reported vertices, the problem first, culprits in the order found.
    pub findings: Vec<Finding>,
    /// Circular waits found.
    pub circles: Vec<CircularWait>,
    /// A RepeatedYield vertex with no traced data flag: trace the flag and diagnose
    /// again (Algorithm 1, line 8).
    pub needs_data_flag: Option<VertexId>,
    /// Every question asked, in order.
    pub decisions: Vec<Decision>,
    /// The graph's size.
    pub counts: GraphCounts,
    /// The culprit chain, the problem first: each vertex with what it waited on for
    /// the next one (the last: what it waited on itself, or the CPU for a run).
    pub chain: Vec<Hop>,
}

/// One hop of the culprit chain.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Hop {
    /// The vertex (a finding's).
    pub vertex: VertexId,
    /// What it waited on.
    pub kind: crate::WaitKind,
    /// How this hop was found from the one before it (`None` for the problem).
    pub rule: Option<HopRule>,
}

impl Diagnosis {
    /// Questions that were not decided by the graph itself (the "user queries" of
    /// Argus Table 4).
    pub fn queries(&self) -> usize {
        self.decisions
            .iter()
            .filter(|d| d.by != DecidedBy::Graph)
            .count()
    }
}
