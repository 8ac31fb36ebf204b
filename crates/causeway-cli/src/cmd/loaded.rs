//! A trace read for the views: the model and facts, the per-event extras (system
//! calls, samples) from a second pass over the events, the bottleneck verdict and the
//! automatic diagnosis of the longest stall.
//! Shared by `export`, `flamegraph`, `compare` and `report`.

use crate::trace::{ingest_trace, open_trace, read_traces};
use anyhow::{Context, Result};
use causeway_diagnose::{AutoOracle, Problem, ThreadSelector};
use causeway_format::Tid;
use causeway_model::Trace;
use causeway_report::{BottleneckView, DiagnosisView};
use causeway_stacks::{EventExtras, Extras};
use std::path::Path;

/// A trace with everything the views draw from.
pub struct Loaded {
    /// Model and facts.
    pub trace: Trace,
    /// System calls and samples.
    pub extras: Extras,
    /// For several hosts' traces joined into one: how each host entered it (empty for
    /// one trace).
    pub hosts: Vec<causeway_join::HostJoin>,
}

/// Read the trace, then its events once more for the extras (the model keeps neither
/// every system call nor the samples).
pub fn load(path: &Path) -> Result<Loaded> {
    load_with(path, |_| {})
}

/// [`load`], with the goroutine view of a trace that has goroutine events unless
/// `os_threads` (see `Trace::into_goroutine_view`): for the analyses whose vertices
/// are the things that wait (diagnosis, off-CPU and wake-up flame graphs).
pub fn load_view(path: &Path, os_threads: bool) -> Result<Loaded> {
    let mut l = load(path)?;
    if !os_threads {
        l.trace = l.trace.into_goroutine_view();
    }
    Ok(l)
}

/// [`load`], and every event of the second pass handed to `also` too (what else a
/// view needs from the events, read in the same pass).
pub fn load_with(path: &Path, mut also: impl FnMut(&causeway_format::Event)) -> Result<Loaded> {
    let mut rd = open_trace(path)?;
    let trace = ingest_trace(&mut rd, path)?;
    let mut rd = open_trace(path)?;
    let mut x = EventExtras::new();
    for ev in rd.events() {
        let ev = ev.with_context(|| format!("reading events of {}", path.display()))?;
        x.push(&ev);
        also(&ev);
    }
    Ok(Loaded {
        trace,
        extras: x.finish(),
        hosts: Vec::new(),
    })
}

/// [`load_view`] of one trace, or of several hosts' traces joined into one (the extras
/// taken from the joined events in the same pass).
pub fn load_joined_view(paths: &[std::path::PathBuf], os_threads: bool) -> Result<Loaded> {
    if let [one] = paths {
        return load_view(one, os_threads);
    }
    let mut x = EventExtras::new();
    let (trace, hosts) = read_traces(paths, |ev| x.push(ev))?;
    let trace = if os_threads {
        trace
    } else {
        trace.into_goroutine_view()
    };
    Ok(Loaded {
        trace,
        extras: x.finish(),
        hosts,
    })
}

/// The bottleneck verdict with default options, `None` when the trace has nothing to
/// analyze.
pub fn bottleneck(trace: &Trace) -> Option<BottleneckView> {
    bottleneck_in(goroutine_view(trace).as_ref().unwrap_or(trace))
}

/// The trace with goroutines standing in for the threads that carry them, as
/// `causeway bottleneck` and `causeway diagnose` analyse it by default; `None` when it
/// has no goroutines (the trace is its own view).
pub fn goroutine_view(trace: &Trace) -> Option<Trace> {
    trace
        .model()
        .has_goroutines()
        .then(|| trace.clone().into_goroutine_view())
}

/// [`bottleneck`] of a trace already in the view to analyse.
pub fn bottleneck_in(trace: &Trace) -> Option<BottleneckView> {
    let findings =
        causeway_bottleneck::analyze(trace, &causeway_bottleneck::Options::default()).ok()?;
    Some(BottleneckView::new(&findings))
}

/// The diagnosis the report and the export draw: Algorithm 1 on the trace's longest
/// stall (or `thread`'s), every question answered by the heuristic, since a page or a
/// file cannot ask what `causeway diagnose` asks at a terminal. The view, if there is
/// one, and a sentence saying what was diagnosed and how, or why nothing was.
pub fn auto_diagnosis(l: &Loaded, thread: Option<&str>) -> (Option<DiagnosisView>, String) {
    auto_diagnosis_of(&l.trace, &l.extras.syscalls, thread)
}

/// [`auto_diagnosis`] of a trace and its system calls.
pub fn auto_diagnosis_of(
    trace: &Trace,
    syscalls: &[causeway_stacks::SyscallSpan],
    thread: Option<&str>,
) -> (Option<DiagnosisView>, String) {
    let problem = match thread {
        None => Problem::Longest,
        Some(t) => Problem::Thread(match t.parse::<u32>() {
            Ok(n) => ThreadSelector::Tid(Tid(n)),
            Err(_) => ThreadSelector::Name(t.to_string()),
        }),
    };
    let opts = causeway_diagnose::Options {
        problem,
        ..causeway_diagnose::Options::default()
    };
    let graph = causeway_diagnose::build(trace, syscalls, &opts);
    let vertex = match causeway_diagnose::problem_vertex(trace, &graph, &opts.problem, opts.stall) {
        Ok(v) => v,
        Err(e) => return (None, format!("No diagnosis: {e}.")),
    };
    let d = causeway_diagnose::diagnose(&graph, vertex, &opts, &mut AutoOracle);
    let Some(view) = DiagnosisView::new(&d, trace, &graph) else {
        return (
            None,
            "No diagnosis: the problem vertex is not in the graph.".into(),
        );
    };
    // As `causeway diagnose` exits 1 then: a stall that is normal for its thread, with
    // no circular wait, is nothing to show as a culprit chain.
    if !causeway_report::View::found(&view) {
        return (
            None,
            "No stall to diagnose: the longest wait that matters is normal for its thread.".into(),
        );
    }
    let what = thread.map_or_else(
        || "The trace's longest stall".to_string(),
        |t| format!("The longest stall of thread {t}"),
    );
    let how = format!(
        "{what}, diagnosed as `causeway diagnose --auto` does: the heuristic answered its \
         {} question(s). Run `causeway diagnose` on the trace to answer them yourself.",
        d.decisions.len()
    );
    (Some(view), how)
}
