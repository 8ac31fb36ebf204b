//! A trace read for the views: the model and facts, the per-event extras (system
//! calls, samples) from a second pass over the events, and the bottleneck verdict.
//! Shared by `export`, `flamegraph`, `compare` and `report`.

use crate::trace::{ingest_trace, open_trace};
use anyhow::{Context, Result};
use causeway_model::Trace;
use causeway_report::BottleneckView;
use causeway_stacks::{EventExtras, Extras};
use std::path::Path;

/// A trace with everything the views draw from.
pub struct Loaded {
    /// Model and facts.
    pub trace: Trace,
    /// System calls and samples.
    pub extras: Extras,
}

/// Read the trace, then its events once more for the extras (the model keeps neither
/// every system call nor the samples).
pub fn load(path: &Path) -> Result<Loaded> {
    load_with(path, |_| {})
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
    })
}

/// The bottleneck verdict with default options, `None` when the trace has nothing to
/// analyze.
pub fn bottleneck(trace: &Trace) -> Option<BottleneckView> {
    let findings =
        causeway_bottleneck::analyze(trace, &causeway_bottleneck::Options::default()).ok()?;
    Some(BottleneckView::new(&findings))
}
