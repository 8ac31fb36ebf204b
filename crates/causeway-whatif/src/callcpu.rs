//! The CPU of the calls a removal takes out with their waits. Removing a wait
//! (`--factor inf`) predicts the fix that drops the call that waited (no fsync per
//! commit, an asynchronous commit, a flush moved off the loop): the call's own time
//! on CPU in the kernel goes too. Kept, it held an fsync-per-row loop's prediction
//! at 2.8x where dropping the fsync gave 5x on a virtual machine, whose disk
//! notifications trap to the host inside the call. A shortened wait (a faster
//! device) keeps the call.
//!
//! Without syscall events the call's CPU is known from the on-CPU samples: those
//! taken in the kernel under the same user stack as the removed waits' switch-outs
//! are in the call. Their share of the thread's samples, times its time on CPU, is
//! the call's CPU; each removed wait takes its part out of the runs around it, half
//! from the run before (entering the call) and half from the run after (leaving it).

use crate::select::Selection;
use causeway_model::{Facts, Model, Segment, SegmentId, SegmentState};
use std::collections::HashSet;

/// Fewest samples of a thread to estimate its calls' CPU from.
const MIN_SAMPLES: usize = 10;

/// Per model thread: the CPU (ns) each removed wait's call takes out of the runs
/// around it (0: none removed, or too few samples to say).
#[derive(Clone, Debug, Default)]
pub(crate) struct CallCpu {
    per_wait: Vec<u64>,
    /// The calls' CPU estimated, ns, over every thread.
    pub(crate) total_ns: u64,
    /// The samples found in the calls, which the estimate rests on.
    pub(crate) samples: u64,
}

impl CallCpu {
    /// The calls' CPU of the waits `sel` removes.
    pub(crate) fn of(model: &Model, facts: &Facts, sel: &Selection<'_>) -> CallCpu {
        let mut per_wait = vec![0; model.threads().count()];
        let (mut total_ns, mut in_calls) = (0u64, 0u64);
        if !sel.removes_waits() {
            return CallCpu {
                per_wait,
                ..CallCpu::default()
            };
        }
        for (ti, t) in (0u32..).zip(model.threads()) {
            let mut stacks = HashSet::new();
            let (mut removed, mut running) = (0u64, 0u64);
            for (si, s) in (0u32..).zip(&t.segments) {
                let id = SegmentId {
                    thread: ti,
                    index: si,
                };
                match s.state {
                    SegmentState::Running { .. } => running += s.duration().0,
                    SegmentState::Blocked {
                        switch_out_stack, ..
                    } if removes(sel, id) => {
                        removed += 1;
                        stacks.extend(switch_out_stack.and_then(|st| st.user));
                    }
                    _ => {}
                }
            }
            let samples = facts.samples(t.tid);
            if removed == 0 || stacks.is_empty() || samples.len() < MIN_SAMPLES {
                continue;
            }
            let in_call = samples
                .iter()
                .filter(|s| s.kernel.is_some() && s.user.is_some_and(|u| stacks.contains(&u)))
                .count();
            let call_ns = running as f64 * in_call as f64 / samples.len() as f64;
            per_wait[ti as usize] = (call_ns / removed as f64).round() as u64;
            total_ns += call_ns.round() as u64;
            in_calls += in_call as u64;
        }
        CallCpu {
            per_wait,
            total_ns,
            samples: in_calls,
        }
    }

    /// How much of running segment `id` (`seg`) the removed calls around it take out.
    pub(crate) fn taken(
        &self,
        model: &Model,
        sel: &Selection<'_>,
        id: SegmentId,
        seg: &Segment,
    ) -> u64 {
        let c = self.per_wait.get(id.thread as usize).copied().unwrap_or(0);
        if c == 0 || !seg.state.is_running() {
            return 0;
        }
        let at = |i: Option<u32>| {
            i.map(|index| SegmentId { index, ..id })
                .filter(|&s| model.segment(s).is_some())
        };
        let removed = |i: Option<u32>| at(i).is_some_and(|s| removes(sel, s));
        let runnable = |i: Option<u32>| {
            at(i)
                .and_then(|s| model.segment(s))
                .is_some_and(|s| s.state.is_runnable())
        };
        // The call it leaves: a removed wait just before (its wake-up's runnable
        // delay may lie between).
        let before = id.index.checked_sub(1);
        let after_wait = removed(before) || (runnable(before) && removed(id.index.checked_sub(2)));
        // The call it enters: a removed wait just after.
        let before_wait = removed(id.index.checked_add(1));
        let take = c / 2 * (u64::from(after_wait) + u64::from(before_wait));
        take.min(seg.duration().0)
    }
}

/// True when `sel` removes the wait `id` (a blocked segment).
fn removes(sel: &Selection<'_>, id: SegmentId) -> bool {
    sel.factor_of(id).is_some_and(|f| f.removes())
}
