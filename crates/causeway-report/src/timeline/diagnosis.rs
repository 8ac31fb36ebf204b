//! The diagnosis (Argus) as tracks: every vertex of the culprit chain and of the slices
//! that explain it, as a slice at its real time, and an arrow (a flow) from each cause
//! to the vertex it delayed, so the chain reads across the recording.
//!
//! Vertices of one chain overlap in time (a wait and the run of the thread that ended
//! it), and a track holds only non-overlapping slices, so they are laid out on as few
//! rows as fit, each row a track under one `diagnosis` track.

use super::states::{arg_s, arg_u};
use super::tracks::ANALYSIS;
use super::types::{Arg, Category, Instant, Slice, Timeline, Track, TrackKind};
use crate::diagnose::{DiagnosisDoc, VertexDoc};
use std::collections::BTreeMap;

/// The diagnosis's track is `ANALYSIS | DIAGNOSIS`, its rows the numbers after it.
/// Knot tracks use small numbers under `ANALYSIS`; the Chrome JSON export keeps the
/// low 32 bits as a thread id, so this stays inside them.
const DIAGNOSIS: u64 = 1 << 28;

/// One vertex to draw, with what the diagnosis says of it.
struct Item<'a> {
    vertex: &'a VertexDoc,
    name: String,
    args: Vec<Arg>,
    /// Items it delayed: an arrow goes from this one to each.
    delayed: Vec<usize>,
}

/// The chain's vertices, each once, and who delayed whom.
#[derive(Default)]
struct Chain<'a> {
    items: Vec<Item<'a>>,
    by_vertex: BTreeMap<u32, usize>,
}

impl<'a> Chain<'a> {
    /// The item of `v`, added with `name` and `args` if new.
    fn item(&mut self, v: &'a VertexDoc, name: impl FnOnce() -> String, args: Vec<Arg>) -> usize {
        if let Some(&i) = self.by_vertex.get(&v.id) {
            return i;
        }
        self.items.push(Item {
            vertex: v,
            name: name(),
            args,
            delayed: Vec::new(),
        });
        self.by_vertex.insert(v.id, self.items.len() - 1);
        self.items.len() - 1
    }

    fn link(&mut self, cause: usize, effect: usize) {
        if cause != effect && !self.items[cause].delayed.contains(&effect) {
            self.items[cause].delayed.push(effect);
        }
    }
}

fn vertex_args(v: &VertexDoc) -> Vec<Arg> {
    let mut a = vec![
        arg_u("vertex", u64::from(v.id)),
        arg_u("tid", u64::from(v.tid)),
        arg_s("block", v.block.to_string()),
    ];
    if let Some(w) = &v.woken_by {
        a.push(arg_s("woken_by", w.clone()));
    }
    if let Some(c) = &v.wait_call {
        a.push(arg_s("wait_call", c.clone()));
    }
    if !v.syscalls.is_empty() {
        a.push(arg_s("syscalls", v.syscalls.join(", ")));
    }
    if !v.frames.is_empty() {
        a.push(arg_s("stack", v.frames.join("\n")));
    }
    a
}

fn chain(d: &DiagnosisDoc) -> Chain<'_> {
    let mut c = Chain::default();
    let problem = c.item(
        &d.problem,
        || {
            format!(
                "problem: {} ({}) {}",
                d.problem.thread, d.problem.tid, d.problem.block
            )
        },
        vertex_args(&d.problem),
    );
    for f in &d.findings {
        let mut args = vertex_args(&f.vertex);
        args.push(arg_s("case", f.case.to_string()));
        args.push(arg_u("depth", u64::from(f.depth)));
        if let Some(n) = &f.note {
            args.push(arg_s("note", n.to_string()));
        }
        let me = c.item(
            &f.vertex,
            || format!("{}: {} ({})", f.case, f.vertex.thread, f.vertex.tid),
            args,
        );
        if let Some(of) = f.culprit_of.and_then(|v| c.by_vertex.get(&v).copied()) {
            c.link(me, of);
        } else if f.depth > 0 {
            c.link(me, problem);
        }
        // A slice goes backwards: each step caused the one before it.
        let Some(s) = &f.slice else { continue };
        let mut after = me;
        for st in s.steps.iter().filter(|st| st.vertex.id != f.vertex.id) {
            let mut args = vertex_args(&st.vertex);
            for (k, v) in [
                ("edge", st.edge),
                ("strength", st.strength),
                ("decided", st.decided),
            ] {
                if let Some(v) = v {
                    args.push(arg_s(k, v.to_string()));
                }
            }
            let i = c.item(
                &st.vertex,
                || {
                    format!(
                        "step: {} ({}) {}",
                        st.vertex.thread, st.vertex.tid, st.vertex.block
                    )
                },
                args,
            );
            c.link(i, after);
            after = i;
        }
    }
    c
}

/// Rows for the items: the first row each fits in without overlapping, by start time.
fn rows(items: &[Item<'_>]) -> (Vec<usize>, usize) {
    let mut order: Vec<usize> = (0..items.len()).collect();
    order.sort_by_key(|&i| (items[i].vertex.start_ns, items[i].vertex.end_ns));
    let mut ends: Vec<u64> = Vec::new();
    let mut row = vec![0; items.len()];
    for i in order {
        let v = items[i].vertex;
        let r = ends
            .iter()
            .position(|&e| e <= v.start_ns)
            .unwrap_or_else(|| {
                ends.push(0);
                ends.len() - 1
            });
        ends[r] = v.end_ns.max(v.start_ns + 1);
        row[i] = r;
    }
    (row, ends.len())
}

/// Add the diagnosis's tracks; `origin_ns` is the trace time its `_ns` times count from.
pub(super) fn add(d: &DiagnosisDoc, origin_ns: u64, tl: &mut Timeline) {
    let c = chain(d);
    let (row, n_rows) = rows(&c.items);
    let parent = ANALYSIS | DIAGNOSIS;
    tl.tracks.push(Track {
        uuid: parent,
        parent: None,
        kind: TrackKind::Analysis,
        name: "diagnosis: culprit chain".to_string(),
    });
    for r in 0..n_rows {
        tl.tracks.push(Track {
            uuid: parent + 1 + r as u64,
            parent: Some(parent),
            kind: TrackKind::Analysis,
            name: format!("diagnosis row {}", r + 1),
        });
    }
    let track = |i: usize| parent + 1 + row[i] as u64;
    let mut flows_in: Vec<Vec<u64>> = vec![Vec::new(); c.items.len()];
    for (i, it) in c.items.iter().enumerate() {
        // The arrow leaves the cause where it ended: that is when it released the
        // vertex it delayed.
        let mut out = Vec::new();
        for &e in &it.delayed {
            tl.flows += 1;
            out.push(tl.flows);
            flows_in[e].push(tl.flows);
        }
        if !out.is_empty() {
            tl.instants.push(Instant {
                track: track(i),
                ts_ns: origin_ns + it.vertex.end_ns,
                name: "delayed".to_string(),
                category: Category::Diagnosis,
                args: Vec::new(),
                flows_out: out,
            });
        }
    }
    for (i, (it, fin)) in c.items.iter().zip(flows_in).enumerate() {
        tl.slices.push(Slice {
            track: track(i),
            start_ns: origin_ns + it.vertex.start_ns,
            end_ns: origin_ns + it.vertex.end_ns.max(it.vertex.start_ns + 1),
            name: it.name.clone(),
            category: Category::Diagnosis,
            args: it.args.clone(),
            flows_in: fin,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnose::DiagnosisView;
    use crate::diagnose::tests::trace;
    use causeway_diagnose::{AutoOracle, Options, VertexKind, build, diagnose};

    #[test]
    fn the_chain_is_drawn_at_its_times_on_rows_that_never_overlap() {
        let t = trace();
        let g = build(&t, &[], &Options::default());
        let wait = *g
            .thread_vertices(0)
            .iter()
            .find(|&&v| g.vertex(v).unwrap().kind == VertexKind::Wait)
            .unwrap();
        let d = diagnose(&g, wait, &Options::default(), &mut AutoOracle);
        let view = DiagnosisView::new(&d, &t, &g).unwrap();
        let mut tl = Timeline::default();
        tl.add_diagnosis(&t, &view);
        let parent = ANALYSIS | DIAGNOSIS;
        assert_eq!(tl.tracks[0].name, "diagnosis: culprit chain");
        let rows: Vec<u64> = tl
            .tracks
            .iter()
            .filter(|r| r.parent == Some(parent))
            .map(|r| r.uuid)
            .collect();
        // The waiter's wait and the worker's run overlap: two rows.
        assert_eq!(rows.len(), 2, "{:?}", tl.tracks);
        for r in &rows {
            let mut s: Vec<&Slice> = tl.slices_on(*r).collect();
            s.sort_by_key(|s| s.start_ns);
            assert!(s.windows(2).all(|w| w[0].end_ns <= w[1].start_ns), "{s:?}");
        }
        // The problem is the wait, at its own time (the trace starts at 0).
        let problem = tl
            .slices
            .iter()
            .find(|s| s.name.starts_with("problem: waiter (1)"))
            .expect("problem slice");
        let v = g.vertex(wait).unwrap();
        assert_eq!(
            (problem.start_ns, problem.end_ns),
            (v.span.start.0, v.span.end.0)
        );
        // The worker's run delayed it: an arrow from the run's end to the wait.
        let worker = tl
            .slices
            .iter()
            .find(|s| s.name.contains("worker (2)"))
            .expect("the worker in the chain");
        assert_eq!(problem.flows_in.len(), 1, "{:?}", tl.slices);
        let arrow = tl
            .instants
            .iter()
            .find(|i| i.flows_out == problem.flows_in)
            .expect("the arrow's start");
        assert_eq!(arrow.ts_ns, worker.end_ns);
        assert_eq!(tl.flows, 1);
    }
}
