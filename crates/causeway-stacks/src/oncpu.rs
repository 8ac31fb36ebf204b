//! On-CPU flame graph: one unit of weight per sample stack.

use crate::extras::Extras;
use crate::folded::Folded;
use crate::frames::{FrameNamer, thread_label};
use crate::options::{Options, selected};
use causeway_model::Trace;

/// Frame for a sample of a thread the model does not know.
const UNKNOWN_THREAD: &str = "[unknown thread]";

pub(crate) fn fold(
    trace: &Trace,
    x: &Extras,
    opts: &Options,
    namer: &mut FrameNamer<'_>,
) -> Folded {
    let model = trace.model();
    let mut out = Folded::new();
    for s in &x.samples {
        let thread = model
            .thread_index_at(s.tid, s.ts)
            .and_then(|i| model.thread_by_index(i));
        if !selected(opts, thread.and_then(|t| t.tgid)) {
            continue;
        }
        let mut frames = vec![thread.map_or_else(|| UNKNOWN_THREAD.to_string(), thread_label)];
        frames.extend(namer.both(&s.stack));
        out.add(&frames, 1);
    }
    out
}
