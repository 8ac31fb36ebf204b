//! The three flame graphs and their options.

use crate::error::StacksError;
use crate::extras::Extras;
use crate::folded::Folded;
use crate::frames::{FrameNamer, thread_label};
use crate::{oncpu, wakechain};
use causeway_format::Tgid;
use causeway_model::{SegmentState, Trace};

/// Which flame graph.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlameKind {
    /// Where threads ran: sample stacks, one unit of weight per sample.
    OnCpu,
    /// Where threads blocked: switch-out stacks weighted by blocked nanoseconds.
    OffCpu,
    /// Why they stayed blocked: each blocked stack with the stacks of the wakers that
    /// ended the wait stacked on top, hop after hop; weighted by blocked nanoseconds.
    WakeChain,
}

impl FlameKind {
    /// Short name (`on-cpu`, `off-cpu`, `wake-chain`).
    pub fn name(self) -> &'static str {
        match self {
            FlameKind::OnCpu => "on-cpu",
            FlameKind::OffCpu => "off-cpu",
            FlameKind::WakeChain => "wake-chain",
        }
    }

    /// What one unit of weight is (`samples` or `ns`).
    pub fn unit(self) -> &'static str {
        match self {
            FlameKind::OnCpu => "samples",
            FlameKind::OffCpu | FlameKind::WakeChain => "ns",
        }
    }
}

/// What to fold.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    /// Only threads of these processes; `None`: every thread.
    pub processes: Option<Vec<Tgid>>,
    /// Wake-up chains: how many wakers to stack on a blocked stack at most.
    pub hops: usize,
    /// Blocked segments without a switch-out stack count under one `[no stack]` frame,
    /// so the off-CPU total is the whole blocked time; false leaves them out.
    pub keep_unstacked: bool,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            processes: None,
            // Three hops cover a request going through a queue and a worker pool
            // without letting long chains of unrelated wakers take over the graph.
            hops: 3,
            keep_unstacked: true,
        }
    }
}

/// Frame standing for a blocked segment without a recorded stack.
pub const NO_STACK: &str = "[no stack]";

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

/// True if the thread's process is among those asked for.
pub(crate) fn selected(opts: &Options, tgid: Option<Tgid>) -> bool {
    match &opts.processes {
        None => true,
        Some(ps) => tgid.is_some_and(|t| ps.contains(&t)),
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
