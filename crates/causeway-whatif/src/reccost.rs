//! The recorder's own cost inside the recorded threads' runs. The recording ran with
//! the recorder's programs on every switch and wake-up; the programs a prediction is
//! checked against run without them. The kernel measured each program's run time
//! while recording (trace counters `bpf_run_ns.*` and `bpf_runs.*`), so the replay
//! takes the cost of the programs that ran in a thread's context out of its runs: the
//! switch program's work after its timestamp (the user stack of the thread switching
//! out), which lands at the start of the next thread's run, and the wake-up program of
//! each wake-up the thread made. Both the unchanged and the changed replay lose it, so
//! a prediction compares two unrecorded programs, as a measured fix does. The traps
//! of uprobes (Go's scheduler probes) cost more than their programs and are not
//! measured: that part stays.

use causeway_format::{BPF_RUN_NS, BPF_RUNS, TraceStats, Waker};
use causeway_model::{Model, Segment, SegmentId, SegmentState};

/// No more than this share of a run is taken as the recorder's.
const MAX_SHARE: f64 = 0.5;

/// Per-event costs and where the events fell.
#[derive(Clone, Debug, Default)]
pub(crate) struct RecorderCost {
    /// Mean run time of the switch program, ns.
    pub(crate) switch_ns: u64,
    /// Mean run time of the wake-up program, ns.
    pub(crate) wake_ns: u64,
    /// Per model thread: when it woke another thread (sorted).
    wakes_by: Vec<Vec<u64>>,
}

/// Mean run time of the programs whose names end with `suffix` (their BTF and raw
/// entry points alike), ns; 0 when the trace does not say.
fn mean(stats: &TraceStats, suffix: &str) -> u64 {
    let (mut ns, mut runs) = (0u64, 0u64);
    for (k, &v) in &stats.counters {
        if let Some(name) = k.strip_prefix(BPF_RUN_NS)
            && name.ends_with(suffix)
        {
            ns += v;
            runs += stats
                .counters
                .get(&format!("{BPF_RUNS}{name}"))
                .copied()
                .unwrap_or(0);
        }
    }
    ns.checked_div(runs).unwrap_or(0)
}

impl RecorderCost {
    /// The costs the trace measured (none for a trace without them).
    pub(crate) fn new(model: &Model, stats: &TraceStats) -> RecorderCost {
        let (switch_ns, wake_ns) = (mean(stats, "sched_switch"), mean(stats, "sched_waking"));
        if switch_ns == 0 && wake_ns == 0 {
            return RecorderCost::default();
        }
        let mut wakes_by = vec![Vec::new(); model.threads().count()];
        for t in model.threads() {
            for s in &t.segments {
                let Some(w) = s.wake() else { continue };
                let Waker::Thread { tid } = w.waker else {
                    continue;
                };
                if let Some(i) = model.thread_index_at(tid, w.ts) {
                    wakes_by[i as usize].push(w.ts.0);
                }
            }
        }
        for v in &mut wakes_by {
            v.sort_unstable();
        }
        RecorderCost {
            switch_ns,
            wake_ns,
            wakes_by,
        }
    }

    /// True when the trace measured the recorder's costs.
    pub(crate) fn known(&self) -> bool {
        self.switch_ns > 0 || self.wake_ns > 0
    }

    /// The recorder's time in running segment `id` (`seg`) of a thread.
    pub(crate) fn in_run(&self, model: &Model, id: SegmentId, seg: &Segment) -> u64 {
        if !self.known() || !seg.state.is_running() {
            return 0;
        }
        // Switched in (not the thread's first segment): the switch program's tail.
        let switched_in = id.index > 0
            && model
                .segment(SegmentId {
                    index: id.index - 1,
                    ..id
                })
                .is_some_and(|p| matches!(p.state, SegmentState::Runnable { .. }));
        let wakes = self.wakes_by.get(id.thread as usize).map_or(0, |v| {
            let a = v.partition_point(|&t| t < seg.start.0);
            let b = v.partition_point(|&t| t < seg.end.0);
            (b - a) as u64
        });
        let cost = u64::from(switched_in) * self.switch_ns + wakes * self.wake_ns;
        cost.min((seg.duration().0 as f64 * MAX_SHARE) as u64)
    }
}
