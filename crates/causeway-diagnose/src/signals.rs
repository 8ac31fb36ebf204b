//! Edges from recorded signals and timers (Argus §3.1: strong where the trace proves
//! the link).
//!
//! - A stop: a stopped wait vertex gets a strong [`EdgeKind::Signal`] edge from the
//!   vertex that sent the stop signal (`SIGSTOP`, `SIGTSTP`, ...) to its thread or
//!   process: the latest one before the stop with no `SIGCONT` in between. Without it
//!   (a trace from before format 1.3, or signals not recorded) only the wake-up that
//!   continued the thread links it.
//! - A delivery: a signal a thread took (`signal_deliver`) gets a strong edge from the
//!   vertex that sent it to the vertex that took it; stop signals are left to the rule
//!   above, and a thread signalling itself adds nothing.
//! - A timer: a wait its timer ended is linked from the vertex that armed that timer
//!   (usually the thread's own run before the wait; another thread for a timerfd or a
//!   POSIX timer it set), when the trace recorded the arm.

use crate::graph::{Edge, EdgeKind, EventGraph, Strength, Vertex, VertexId};
use causeway_format::{Signal, Timestamp};
use causeway_model::{SignalSent, Trace};

/// The latest stop signal that reached `v`'s thread or process before `v` began, with
/// no `SIGCONT` to the process between them.
pub fn stop_signal<'t>(trace: &'t Trace, v: &Vertex) -> Option<&'t SignalSent> {
    let sent = trace.facts().signals_sent();
    let aimed = |s: &SignalSent| s.target == v.tid || (s.group && Some(s.target_tgid) == v.tgid);
    let before = sent.partition_point(|s| s.ts <= v.span.start);
    for s in sent.get(..before)?.iter().rev() {
        if !aimed(s) && Some(s.target_tgid) != v.tgid {
            continue;
        }
        if s.sig == Signal::CONT {
            return None;
        }
        if s.sig.is_stop() && aimed(s) && s.result.reaches() {
            return Some(s);
        }
    }
    None
}

/// The vertex a thread was in at `ts`.
fn vertex_of(
    trace: &Trace,
    g: &EventGraph,
    tid: causeway_format::Tid,
    ts: Timestamp,
) -> Option<VertexId> {
    let t = trace.model().thread_index_at(tid, ts)?;
    g.vertex_at(t, ts)
}

/// Strong edges for stops and signal deliveries.
pub fn signal_edges(trace: &Trace, g: &EventGraph) -> Vec<Edge> {
    let mut out = Vec::new();
    for (i, v) in (0u32..).zip(g.vertices()) {
        if v.block != crate::graph::BlockType::Stopped {
            continue;
        }
        let Some(s) = stop_signal(trace, v) else {
            continue;
        };
        let Some(from) = s.sender.and_then(|tid| vertex_of(trace, g, tid, s.ts)) else {
            continue;
        };
        if from != VertexId(i) {
            out.push(Edge {
                from,
                to: VertexId(i),
                kind: EdgeKind::Signal,
                strength: Strength::Strong,
                ts: s.ts,
            });
        }
    }
    let sent = trace.facts().signals_sent();
    let model = trace.model();
    for taken in trace.facts().signals_taken() {
        if taken.sig.is_stop() {
            continue;
        }
        let tgid = model
            .thread_index_at(taken.tid, taken.ts)
            .and_then(|t| model.thread_by_index(t))
            .and_then(|t| t.tgid);
        let before = sent.partition_point(|s| s.ts <= taken.ts);
        let Some(s) = sent.get(..before).and_then(|list| {
            list.iter().rev().find(|s| {
                s.sig == taken.sig
                    && (s.target == taken.tid || (s.group && Some(s.target_tgid) == tgid))
            })
        }) else {
            continue;
        };
        let Some(sender) = s.sender.filter(|&t| t != taken.tid) else {
            continue;
        };
        let (Some(from), Some(to)) = (
            vertex_of(trace, g, sender, s.ts),
            vertex_of(trace, g, taken.tid, taken.ts),
        ) else {
            continue;
        };
        if from != to {
            out.push(Edge {
                from,
                to,
                kind: EdgeKind::Signal,
                strength: Strength::Strong,
                ts: s.ts,
            });
        }
    }
    out
}

/// For a wait its timer ended: the vertex that armed the timer and when, if the trace
/// recorded the arm.
pub fn timer_source(trace: &Trace, g: &EventGraph, v: &Vertex) -> Option<(VertexId, Timestamp)> {
    let w = trace.facts().timer_wake(v.tid, v.span.end)?;
    Some((vertex_of(trace, g, w.armed_by, w.armed_at)?, w.armed_at))
}
