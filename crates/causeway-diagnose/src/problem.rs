//! The problem vertex (Argus's spinning vertex): a thread at a time, or the longest
//! stall (blocked, stopped, runnable or busy) of a thread or of the recorded
//! processes; by default, when the trace was dumped by a trigger that names a thread
//! and a time (libcauseway's stall watchdog, signal or call), what that thread was
//! doing then.

use crate::error::DiagnoseError;
use crate::graph::VertexKind;
use crate::graph::{EdgeKind, EventGraph, VertexId};
use crate::options::{Problem, StallKind, ThreadSelector};
use causeway_format::{Tid, Timestamp, TriggerMark};
use causeway_model::Trace;

/// Statistics counters an in-process dump writes: the thread and time of its trigger.
const TRIGGER_TID: &str = "inproc.trigger_tid";
/// See [`TRIGGER_TID`].
const TRIGGER_TS: &str = "inproc.trigger_ts_ns";

/// The vertex of the thread a trigger named, at the trigger's time, if the trace says:
/// the recorder's trigger mark first, then an in-process dump's counters.
fn triggered(trace: &Trace, g: &EventGraph) -> Option<VertexId> {
    if let Some(m) = trace.stats().trigger {
        return marked(trace, g, &m);
    }
    let c = &trace.stats().counters;
    let tid = Tid(u32::try_from(*c.get(TRIGGER_TID)?)
        .ok()
        .filter(|&t| t > 0)?);
    let ts = Timestamp(*c.get(TRIGGER_TS)?);
    let t = trace.model().thread_index_at(tid, ts)?;
    g.vertex_at(t, ts)
}

/// The vertex a flight-recorder trigger points at. A condition names a thread and when
/// its stall began: the vertex in the middle of that stall (its start may also be the
/// end of the run before it). A dump the user asked for names no thread: the longest
/// vertex of a recorded process going on when it was asked (it may not have ended:
/// the dump cut it).
fn marked(trace: &Trace, g: &EventGraph, m: &TriggerMark) -> Option<VertexId> {
    let at = Timestamp(m.ts_ns);
    if let Some(tid) = m.tid.filter(|&t| t > 0) {
        let from = m.stall_start_ns.unwrap_or(m.ts_ns);
        let mid = Timestamp(from + (m.ts_ns.saturating_sub(from)) / 2);
        let t = trace.model().thread_index_at(Tid(tid), mid)?;
        return g.vertex_at(t, mid);
    }
    let facts = trace.facts();
    (0..g.vertices().len() as u32)
        .map(VertexId)
        .filter(|&v| {
            g.vertex(v).is_some_and(|x| {
                x.span.start <= at
                    && at <= x.span.end
                    && x.kind == VertexKind::Wait
                    && match (facts.recorded(), x.tgid) {
                        (Some(rec), Some(p)) => rec.contains(&p),
                        _ => true,
                    }
            })
        })
        .max_by_key(|&v| (g.vertex(v).map(|x| x.duration()), std::cmp::Reverse(v)))
}

/// Model thread indices the selector names (every incarnation of a tid; every thread
/// with that name).
fn selected(trace: &Trace, sel: &ThreadSelector) -> Vec<u32> {
    (0u32..)
        .zip(trace.model().threads())
        .filter(|(_, t)| match sel {
            ThreadSelector::Tid(tid) => t.tid == *tid,
            ThreadSelector::Name(n) => t.comm == *n || t.identity.iter().any(|i| i.comm == *n),
        })
        .map(|(i, _)| i)
        .collect()
}

/// True if a vertex may be the default problem: both ends seen, in a recorded process,
/// after that process's exec (before it, the launcher's code ran).
fn eligible(trace: &Trace, g: &EventGraph, v: VertexId) -> bool {
    let Some(x) = g.vertex(v) else { return false };
    if !x.complete {
        return false;
    }
    let facts = trace.facts();
    if let (Some(rec), Some(tgid)) = (facts.recorded(), x.tgid)
        && !rec.contains(&tgid)
    {
        return false;
    }
    x.tgid
        .and_then(|p| facts.exec_time(p))
        .is_none_or(|e| x.span.start >= e)
}

/// Whether vertex `v` is of the kind of stall asked for.
fn kind_ok(g: &EventGraph, v: VertexId, stall: StallKind) -> bool {
    let k = g.vertex(v).map(|x| x.kind);
    match stall {
        StallKind::Any => true,
        StallKind::Wait => k == Some(VertexKind::Wait),
        StallKind::Run => k == Some(VertexKind::Exec),
    }
}

/// The longest eligible vertex of the kind asked among `threads` (all if `None`).
fn longest(
    trace: &Trace,
    g: &EventGraph,
    threads: Option<&[u32]>,
    stall: StallKind,
) -> Option<VertexId> {
    let ids: Box<dyn Iterator<Item = VertexId>> = match threads {
        Some(ts) => Box::new(
            ts.iter()
                .flat_map(|&t| g.thread_vertices(t).iter().copied()),
        ),
        None => Box::new((0..g.vertices().len() as u32).map(VertexId)),
    };
    ids.filter(|&v| kind_ok(g, v, stall) && eligible(trace, g, v))
        .max_by_key(|&v| (g.vertex(v).map(|x| x.duration()), std::cmp::Reverse(v)))
}

/// How close to a thread's exit a wait ends for it to count as a hand-off at exit
/// (the same grace as the bottleneck analysis's shutdown rule).
const EXIT_GRACE_NS: u64 = 10_000_000;

/// A wait that is a hand-off at a thread's exit rather than a delay: its thread exits
/// right after it (shutdown), or the thread that woke it exited right after the
/// wake-up (a join on a worker, a wait for a child). Such a wait lasts as long as the
/// other thread's whole work; as the default problem it would only point at that work.
fn exit_handoff(trace: &Trace, g: &EventGraph, v: VertexId) -> bool {
    let Some(x) = g.vertex(v) else { return false };
    if x.kind != VertexKind::Wait {
        return false;
    }
    let exits_soon = |thread: u32, after: Timestamp| {
        trace
            .model()
            .thread_by_index(thread)
            .and_then(|t| t.exited)
            .is_some_and(|e| e.0 >= after.0 && e.0 - after.0 <= EXIT_GRACE_NS)
    };
    let wakers: Vec<u32> = g
        .incoming(v)
        .filter(|(_, e)| e.kind == EdgeKind::Wakeup)
        .filter_map(|(_, e)| g.vertex(e.from).map(|w| w.thread))
        .filter(|&w| w != x.thread)
        .collect();
    if wakers.is_empty() {
        return false;
    }
    exits_soon(x.thread, x.span.end) || wakers.iter().any(|&w| exits_soon(w, x.span.end))
}

/// The longest eligible vertex that is not a hand-off at exit ([`exit_handoff`]): the
/// default problem of a trace whose longest wait is a main thread joining its workers.
fn longest_that_matters(trace: &Trace, g: &EventGraph, stall: StallKind) -> Option<VertexId> {
    (0..g.vertices().len() as u32)
        .map(VertexId)
        .filter(|&v| kind_ok(g, v, stall) && eligible(trace, g, v) && !exit_handoff(trace, g, v))
        .max_by_key(|&v| (g.vertex(v).map(|x| x.duration()), std::cmp::Reverse(v)))
}

/// The problem vertex the options ask for; `stall` limits the longest-stall choice.
pub fn problem_vertex(
    trace: &Trace,
    g: &EventGraph,
    problem: &Problem,
    stall: StallKind,
) -> Result<VertexId, DiagnoseError> {
    match problem {
        Problem::Longest => triggered(trace, g)
            .or_else(|| longest_that_matters(trace, g, stall))
            .or_else(|| longest(trace, g, None, stall))
            .ok_or(DiagnoseError::NoStall),
        Problem::Thread(sel) => {
            let ts = selected(trace, sel);
            if ts.is_empty() {
                return Err(DiagnoseError::NoSuchThread(sel.to_string()));
            }
            longest(trace, g, Some(&ts), stall).ok_or(DiagnoseError::NoStall)
        }
        Problem::ThreadAt(sel, at) => {
            let ts = selected(trace, sel);
            if ts.is_empty() {
                return Err(DiagnoseError::NoSuchThread(sel.to_string()));
            }
            ts.iter()
                .find_map(|&t| g.vertex_at(t, *at))
                .ok_or(DiagnoseError::NothingAt {
                    thread: sel.to_string(),
                    at_ns: at.0,
                })
        }
    }
}

impl std::fmt::Display for ThreadSelector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ThreadSelector::Tid(t) => write!(f, "tid {}", t.0),
            ThreadSelector::Name(n) => write!(f, "`{n}`"),
        }
    }
}
