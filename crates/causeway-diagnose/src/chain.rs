//! The culprit chain of a diagnosis: the problem, its culprit, the culprit's culprit…
//! each with what it waited on for the next, so a report can open with the verdict
//! ("victim ← worker (socket) ← holder (lock) ← script (pipe) ← sleep").

use crate::WaitKind;
use crate::graph::{EventGraph, VertexId};
use crate::result::{Case, Diagnosis, Finding, Hop};

/// What finding `f` waited on. A wait that a timeout ended (a poll with a progress
/// timer) is named by its similar earlier wait, whose wake-up arrived: that says what
/// it normally waits for, and so what it waited for this time.
fn hop_kind(g: &EventGraph, f: &Finding) -> WaitKind {
    match f.case {
        Case::LongRunning | Case::LongRunnable | Case::RepeatedYield => return WaitKind::Cpu,
        Case::Stopped => return WaitKind::Signal,
        _ => {}
    }
    if f.slept {
        return WaitKind::Sleep;
    }
    let own = g
        .vertex(f.vertex)
        .and_then(|v| v.waits_on)
        .unwrap_or(WaitKind::Other);
    let vague = matches!(own, WaitKind::Timer | WaitKind::Poll | WaitKind::Other);
    let similar = f
        .similar
        .and_then(|s| g.vertex(s))
        .and_then(|v| v.waits_on)
        .filter(|k| !matches!(k, WaitKind::Timer | WaitKind::Other));
    match similar {
        Some(k) if vague => k,
        _ => own,
    }
}

/// The chain from the problem along each finding's first culprit.
pub(crate) fn culprit_chain(g: &EventGraph, d: &Diagnosis) -> Vec<Hop> {
    let mut out = Vec::new();
    let mut at: Option<VertexId> = Some(d.problem);
    while let Some(v) = at {
        let Some(f) = d.findings.iter().find(|f| f.vertex == v) else {
            break;
        };
        if out.iter().any(|h: &Hop| h.vertex == v) {
            break;
        }
        let rule = f
            .culprit_of
            .and_then(|p| d.findings.iter().find(|x| x.vertex == p))
            .and_then(|p| p.rule);
        out.push(Hop {
            vertex: v,
            kind: hop_kind(g, f),
            rule,
        });
        at = d
            .findings
            .iter()
            .find(|c| c.culprit_of == Some(v))
            .map(|c| c.vertex);
    }
    out
}
