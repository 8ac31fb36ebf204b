//! The diagnosis as a document: every vertex named, every decision spelled out.

use super::names::{Namer, VertexDoc};
use causeway_diagnose::{
    Case, Choice, DecidedBy, Diagnosis, EdgeKind, EventGraph, GraphCounts, QuestionKind, SliceEnd,
    Strength, WokenBy,
};
use causeway_model::Trace;
use serde::Serialize;

/// One step of a slice.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StepDoc {
    /// The vertex.
    pub vertex: VertexDoc,
    /// The edge from it to the step before (`None` for the first).
    pub edge: Option<&'static str>,
    /// `strong` or `weak`.
    pub strength: Option<&'static str>,
    /// How the edge was chosen.
    pub decided: Option<&'static str>,
}

/// A slice.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SliceDoc {
    /// Steps backwards from the sliced vertex.
    pub steps: Vec<StepDoc>,
    /// Why it ended.
    pub end: &'static str,
}

/// A thread compared with a wait.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ComparedDoc {
    /// Its vertex at the time.
    pub vertex: VertexDoc,
    /// Algorithm 1's case of it.
    pub case: &'static str,
    /// Share of the wait it covers, percent.
    pub overlap_percent: u32,
    /// From the normal wake-up path (else a recent peer: weak).
    pub from_normal_path: bool,
}

/// One reported vertex.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FindingDoc {
    /// The vertex.
    pub vertex: VertexDoc,
    /// Its case.
    pub case: &'static str,
    /// Recursion depth (0: the problem).
    pub depth: u32,
    /// The vertex it delayed.
    pub culprit_of: Option<u32>,
    /// The similar earlier vertex whose wake-up arrived.
    pub similar: Option<VertexDoc>,
    /// The slice (a run: back to its cause; a wait: the normal wake-up path).
    pub slice: Option<SliceDoc>,
    /// Threads compared.
    pub compared: Vec<ComparedDoc>,
    /// What ends the chain here, or how to read it, if anything.
    pub note: Option<String>,
    /// For a yield loop with a traced data flag: the vertex of the thread whose write
    /// of the flag ended the loop (the late writer).
    pub flag_writer: Option<VertexDoc>,
    /// How its culprits were chosen: `woke it` (its actual waker), `stopped it`,
    /// `wrote its flag`, `on its normal wake-up path` or `a peer, weak`.
    pub rule: Option<&'static str>,
}

/// A circular wait.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CircleDoc {
    /// The waits in the circle.
    pub vertices: Vec<VertexDoc>,
    /// The vertex whose wait ended from outside the circle, if one did.
    pub broken_at: Option<u32>,
    /// What ended it.
    pub broken_by: Option<&'static str>,
}

/// One question and its answer.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DecisionDoc {
    /// What was asked.
    pub question: &'static str,
    /// At which vertex.
    pub at: u32,
    /// The candidates' vertex ids.
    pub candidates: Vec<u32>,
    /// The heuristic's suggestion (1-based).
    pub suggested: usize,
    /// The answer: a candidate number (1-based) or `stop`.
    pub answer: String,
    /// How it was made.
    pub by: &'static str,
}

/// One hop of the culprit chain.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct HopDoc {
    /// The vertex.
    pub vertex: VertexDoc,
    /// What it waited on for the next hop (the last hop: what it waited on itself):
    /// `socket`, `pipe`, `lock`, `futex`, `child exit`, `signal`, `sleep`, `timer`,
    /// `disk`, `page fault`, `swap-in`, `reclaim`, `CPU`, `poll` or `wait`.
    pub kind: &'static str,
    /// How this hop was found from the one before (`None` for the problem): `woke it`,
    /// `stopped it`, `wrote its flag`, `on its normal wake-up path` or `a peer, weak`.
    pub found_as: Option<&'static str>,
}

/// The whole diagnosis.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DiagnosisDoc {
    /// The verdict: the culprit chain, the problem first, one hop per culprit.
    pub chain: Vec<HopDoc>,
    /// The problem vertex.
    pub problem: VertexDoc,
    /// Reported vertices.
    pub findings: Vec<FindingDoc>,
    /// Circular waits.
    pub circles: Vec<CircleDoc>,
    /// A yield loop with no traced data flag.
    pub needs_data_flag: Option<VertexDoc>,
    /// Questions and answers.
    pub decisions: Vec<DecisionDoc>,
    /// Questions answered by the user, a file or the heuristic (Argus Table 4).
    pub queries: usize,
    /// The event graph's size.
    pub graph: GraphCounts,
}

/// Algorithm 1's case in words.
pub fn case_word(c: Case) -> &'static str {
    match c {
        Case::LongRunning => "LongRunning",
        Case::LongRunnable => "LongRunnable",
        Case::RepeatedYield => "RepeatedYield",
        Case::LongWait => "LongWait",
        Case::Stopped => "Stopped",
        Case::Normal => "Normal",
    }
}

/// An edge kind in words.
pub fn edge_word(k: EdgeKind) -> &'static str {
    match k {
        EdgeKind::Wakeup => "wake-up",
        EdgeKind::Timer => "own timer",
        EdgeKind::Resume => "resumed after the wait",
        EdgeKind::Fork => "fork",
        EdgeKind::DataFlag => "data flag",
        EdgeKind::Data => "data written to the same object",
        EdgeKind::Signal => "signal",
        EdgeKind::SameThread => "same thread, before the wait",
        EdgeKind::PeerSplit => "same thread, before a peer change",
        EdgeKind::BatchItem => "same thread, the item before in a batch",
    }
}

/// How a decision was made, in words.
pub fn decided_word(d: DecidedBy) -> &'static str {
    match d {
        DecidedBy::Graph => "graph",
        DecidedBy::Heuristic => "heuristic",
        DecidedBy::Replayed => "answers file",
        DecidedBy::User => "user",
    }
}

fn strength_word(s: Strength) -> &'static str {
    match s {
        Strength::Strong => "strong",
        Strength::Weak => "weak",
    }
}

fn end_word(e: SliceEnd) -> &'static str {
    match e {
        SliceEnd::NoIncoming => "no earlier cause in the trace",
        SliceEnd::Timer => "the thread's own timer (the work began there)",
        SliceEnd::Stopped => "stopped by the answer",
        SliceEnd::Cycle => "came back to a vertex already on the slice",
        SliceEnd::Limit => "length limit",
    }
}

/// How to read a finding, if it needs a word: a sleep ends the chain; a stop names
/// the stop signal and its sender when the trace recorded them.
fn note(
    f: &causeway_diagnose::Finding,
    trace: &Trace,
    g: &EventGraph,
    n: &mut Namer<'_>,
) -> Option<String> {
    if f.slept {
        return Some("slept until its own timer: the end of the chain".into());
    }
    if f.case != Case::Stopped {
        return None;
    }
    let sent = f
        .stopped_by
        .and_then(|e| g.edge(e))
        .and_then(|e| Some((n.vertex(e.from)?, g.vertex(e.to)?)));
    let Some((from, stopped)) = sent else {
        return Some(
            "stopped (a stop signal or a tracer): the slice follows the wake-up that \
             continued it; no stop signal was recorded"
                .into(),
        );
    };
    let sent = causeway_diagnose::stop_signal(trace, stopped);
    let sig = sent.map_or_else(|| "a stop signal".to_string(), |s| s.sig.name());
    let at = sent
        .and_then(|s| s.stack)
        .and_then(|st| n.place(st))
        .map(|p| format!(", sent in {p}"))
        .unwrap_or_default();
    let who = match (&from.title, from.pid) {
        (Some(t), Some(p)) => format!("{t} (pid {p}, thread {})", from.thread),
        (None, Some(p)) => format!("{} (pid {p})", from.thread),
        _ => format!("{} (tid {})", from.thread, from.tid),
    };
    Some(format!("stopped by {sig} from {who}{at}"))
}

/// Build the document.
pub fn build(d: &Diagnosis, trace: &Trace, g: &EventGraph) -> Option<DiagnosisDoc> {
    let mut n = Namer::new(trace, g);
    let mut findings = Vec::new();
    for f in &d.findings {
        let slice = f.slice.as_ref().map(|s| SliceDoc {
            steps: s
                .steps
                .iter()
                .filter_map(|st| {
                    Some(StepDoc {
                        vertex: n.vertex(st.vertex)?,
                        edge: st.kind.map(edge_word),
                        strength: st.strength.map(strength_word),
                        decided: st.decided.map(decided_word),
                    })
                })
                .collect(),
            end: end_word(s.end),
        });
        let compared = f
            .compared
            .iter()
            .filter_map(|c| {
                Some(ComparedDoc {
                    vertex: n.vertex(c.vertex)?,
                    case: case_word(c.case),
                    overlap_percent: c.overlap_percent,
                    from_normal_path: c.from_normal_path,
                })
            })
            .collect();
        findings.push(FindingDoc {
            vertex: n.vertex(f.vertex)?,
            case: case_word(f.case),
            depth: f.depth,
            culprit_of: f.culprit_of.map(|v| v.0),
            similar: f.similar.and_then(|s| n.vertex(s)),
            flag_writer: f.flag_writer.and_then(|w| n.vertex(w)),
            rule: f.rule.map(|r| r.phrase()),
            slice,
            compared,
            note: note(f, trace, g, &mut n),
        });
    }
    let circles = d
        .circles
        .iter()
        .map(|c| CircleDoc {
            vertices: c.vertices.iter().filter_map(|&v| n.vertex(v)).collect(),
            broken_at: c.broken_by.map(|(v, _)| v.0),
            broken_by: c.broken_by.map(|(_, w)| match w {
                WokenBy::Timer => "a timeout",
                WokenBy::Interrupt { .. } => "an interrupt",
                WokenBy::Thread { .. } => "a thread outside the circle",
                WokenBy::Unknown => "an unknown context",
            }),
        })
        .collect();
    let decisions = d
        .decisions
        .iter()
        .map(|x| DecisionDoc {
            question: match x.question.kind {
                QuestionKind::MultipleIncoming => "several incoming edges",
                QuestionKind::WeakEdge => "weak edge",
                QuestionKind::Proceed => "go on into the culprit",
            },
            at: x.question.at.0,
            candidates: x.question.candidates.iter().map(|c| c.vertex.0).collect(),
            suggested: x.question.suggested + 1,
            answer: match x.choice {
                Choice::Take { index } => (index + 1).to_string(),
                Choice::Stop => "stop".to_string(),
            },
            by: decided_word(x.by),
        })
        .collect();
    let chain = d
        .chain
        .iter()
        .filter_map(|h| {
            Some(HopDoc {
                vertex: n.vertex(h.vertex)?,
                kind: h.kind.name(),
                found_as: h.rule.map(|r| r.phrase()),
            })
        })
        .collect();
    Some(DiagnosisDoc {
        chain,
        problem: n.vertex(d.problem)?,
        findings,
        circles,
        needs_data_flag: d.needs_data_flag.and_then(|v| n.vertex(v)),
        decisions,
        queries: d.queries(),
        graph: d.counts,
    })
}
