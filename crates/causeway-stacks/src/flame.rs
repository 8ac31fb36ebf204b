//! The three flame graphs: which to fold, and off-CPU folding itself.

use crate::error::StacksError;
use crate::extras::Extras;
use crate::folded::Folded;
use crate::frames::{FrameNamer, thread_label};
use crate::options::{FlameKind, NO_STACK, Options, selected};
use crate::{oncpu, wakechain};
use causeway_model::{SegmentState, Trace};

/// Fold the trace's stacks into one flame graph. On-CPU needs the `extras` gathered
/// from the events (its samples); the others read only the model.
pub fn fold(
    trace: &Trace,
    extras: Option<&Extras>,
    kind: FlameKind,
    opts: &Options,
) -> Result<Folded, StacksError> {
    let mut namer = FrameNamer::new(trace.tables());
    match kind {
        FlameKind::OnCpu => {
            let x = extras.ok_or(StacksError::NoSamples)?;
            Ok(oncpu::fold(trace, x, opts, &mut namer))
        }
        FlameKind::OffCpu => Ok(off_cpu(trace, opts, &mut namer)),
        FlameKind::WakeChain => Ok(wakechain::fold(trace, opts, &mut namer)),
    }
}

fn off_cpu(trace: &Trace, opts: &Options, namer: &mut FrameNamer<'_>) -> Folded {
    let mut out = Folded::new();
    for t in trace.model().threads() {
        if !selected(opts, t.tgid) {
            continue;
        }
        let label = thread_label(t);
        for seg in &t.segments {
            let SegmentState::Blocked {
                switch_out_stack, ..
            } = &seg.state
            else {
                continue;
            };
            let mut frames = vec![label.clone()];
            match switch_out_stack {
                Some(s) => frames.extend(namer.both(s)),
                None if opts.keep_unstacked => frames.push(NO_STACK.to_string()),
                None => continue,
            }
            out.add(&frames, seg.duration().0);
        }
    }
    out
}
