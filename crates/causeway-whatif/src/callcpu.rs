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
use causeway_format::StackId;
use causeway_model::{Facts, Model, Segment, SegmentId, SegmentState, strip_digits};
use std::collections::{BTreeMap, HashSet};

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

/// One thread's removed waits and what its samples say about their calls.
struct Calls {
    thread: u32,
    removed: u64,
    running: u64,
    samples: usize,
    /// Its samples in the kernel under a user stack some removed wait of its pool
    /// switched out from.
    in_call: usize,
}

impl CallCpu {
    /// The calls' CPU of the waits `sel` removes.
    ///
    /// A thread's own samples give the share of its running time in the calls; with
    /// fewer than [`MIN_SAMPLES`], its pool's (the threads of its process with its name
    /// but for digits, the way thread pools are named): they run the same code, and a
    /// sampling clock of a few dozen hertz leaves each thread of a busy pool only a
    /// handful.
    pub(crate) fn of(model: &Model, facts: &Facts, sel: &Selection<'_>) -> CallCpu {
        let mut per_wait = vec![0; model.threads().count()];
        if !sel.removes_waits() {
            return CallCpu {
                per_wait,
                ..CallCpu::default()
            };
        }
        // Per pool: its members and the user stacks of their removed waits.
        let mut pools: BTreeMap<(u32, String), (Vec<Calls>, HashSet<StackId>)> = BTreeMap::new();
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
            if removed == 0 || stacks.is_empty() {
                continue;
            }
            let key = (t.tgid.map_or(0, |g| g.0), strip_digits(&t.comm));
            let pool = pools.entry(key).or_default();
            pool.1.extend(stacks);
            pool.0.push(Calls {
                thread: ti,
                removed,
                running,
                samples: 0,
                in_call: 0,
            });
        }
        let (mut total_ns, mut in_calls) = (0u64, 0u64);
        for (members, stacks) in pools.values_mut() {
            for c in members.iter_mut() {
                let tid = model.thread_by_index(c.thread).map(|t| t.tid);
                let samples = tid.map_or(&[][..], |tid| facts.samples(tid));
                c.samples = samples.len();
                c.in_call = samples
                    .iter()
                    .filter(|s| s.kernel.is_some() && s.user.is_some_and(|u| stacks.contains(&u)))
                    .count();
            }
            let pool = (
                members.iter().map(|c| c.samples).sum(),
                members.iter().map(|c| c.in_call).sum(),
            );
            for c in members.iter() {
                let Some(share) = in_call_share((c.samples, c.in_call), pool) else {
                    continue;
                };
                let call_ns = c.running as f64 * share;
                per_wait[c.thread as usize] = (call_ns / c.removed as f64).round() as u64;
                total_ns += call_ns.round() as u64;
                in_calls += c.in_call as u64;
            }
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

/// The share of a thread's running time in the calls, from its own `(samples, in
/// call)` when it has [`MIN_SAMPLES`], else from its pool's; `None` with too few.
fn in_call_share(own: (usize, usize), pool: (usize, usize)) -> Option<f64> {
    let (samples, in_call) = if own.0 >= MIN_SAMPLES { own } else { pool };
    (samples >= MIN_SAMPLES).then(|| in_call as f64 / samples as f64)
}

/// True when `sel` removes the wait `id` (a blocked segment).
fn removes(sel: &Selection<'_>, id: SegmentId) -> bool {
    sel.factor_of(id).is_some_and(|f| f.removes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_thread_with_few_samples_takes_its_pools_share() {
        // Its own 12 samples decide.
        assert_eq!(in_call_share((12, 3), (40, 30)), Some(0.25));
        // 4 of its own are too few: the pool's 40 say three quarters.
        assert_eq!(in_call_share((4, 0), (40, 30)), Some(0.75));
        // Too few in the pool too: no estimate.
        assert_eq!(in_call_share((4, 4), (9, 9)), None);
    }
}
