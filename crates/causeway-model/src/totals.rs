//! Per-thread and per-CPU time totals.
//!
//! Totals are derived from the timelines, so they always agree with the segments: a
//! thread's running, runnable, blocked and unknown time add up to its timeline's span.

use crate::segment::{Segment, SegmentState};
use causeway_format::{Cpu, DurationNs, TaskState, Timestamp};
use serde::{Deserialize, Serialize};

/// Where one thread's time went.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ThreadTotals {
    /// On a CPU.
    pub running: DurationNs,
    /// Waiting for a CPU (after a wake-up or a preemption).
    pub runnable: DurationNs,
    /// The part of `runnable` that followed a preemption.
    pub runnable_preempted: DurationNs,
    /// Blocked in interruptible sleep (`S`).
    pub blocked_interruptible: DurationNs,
    /// Blocked in uninterruptible sleep (`D`), usually I/O.
    pub blocked_uninterruptible: DurationNs,
    /// Blocked in any other state, or in a state not seen (blocked since before the
    /// trace began).
    pub blocked_other: DurationNs,
    /// Time the model cannot account for (see [`crate::UnknownCause`]).
    pub unknown: DurationNs,
    /// Wake-ups that ended a blocked (or unknown) segment.
    pub wakeups: u64,
    /// Wake-ups received while already running or runnable.
    pub wakeups_not_blocked: u64,
    /// Times the thread was preempted.
    pub preemptions: u64,
    /// Time of the first event naming the thread.
    pub first_seen: Timestamp,
    /// Time of the last event naming the thread.
    pub last_seen: Timestamp,
}

impl ThreadTotals {
    /// All blocked time, whatever the state.
    pub fn blocked(&self) -> DurationNs {
        self.blocked_interruptible + self.blocked_uninterruptible + self.blocked_other
    }

    /// Off-CPU time in the wPerf sense: blocked plus runnable.
    pub fn off_cpu(&self) -> DurationNs {
        self.blocked() + self.runnable
    }

    /// Sum of all time categories: equals the timeline's span.
    pub fn accounted(&self) -> DurationNs {
        self.running + self.runnable + self.blocked() + self.unknown
    }

    /// Add one segment's time to its state's total (and count a preemption); the
    /// other counters are left as they are.
    #[inline]
    pub(crate) fn add_segment(&mut self, s: &Segment) {
        let d = s.duration();
        match s.state {
            SegmentState::Running { .. } => self.running += d,
            SegmentState::Runnable { preempted, .. } => {
                self.runnable += d;
                if preempted {
                    self.runnable_preempted += d;
                    self.preemptions += 1;
                }
            }
            SegmentState::Blocked { state, .. } => match state {
                Some(st) if st.0 & TaskState::INTERRUPTIBLE.0 != 0 => {
                    self.blocked_interruptible += d
                }
                Some(st) if st.0 & TaskState::UNINTERRUPTIBLE.0 != 0 => {
                    self.blocked_uninterruptible += d
                }
                _ => self.blocked_other += d,
            },
            SegmentState::Unknown { .. } => self.unknown += d,
        }
    }
}

/// One CPU's time, split by what it ran.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpuData {
    /// The CPU.
    pub cpu: Cpu,
    /// Running a thread other than the idle task.
    pub busy: DurationNs,
    /// Running the idle task (tid 0).
    pub idle: DurationNs,
    /// Not known (before its first switch when that is ambiguous, or after lost events
    /// until the next switch).
    pub unknown: DurationNs,
    /// Time in hard interrupt handlers (within busy or idle time).
    pub irq: DurationNs,
    /// Time in softirqs (within busy or idle time).
    pub softirq: DurationNs,
    /// Context switches seen.
    pub switches: u64,
}

impl CpuData {
    /// Fraction of known time spent busy, in `[0, 1]`; `None` if no time is known.
    pub fn utilization(&self) -> Option<f64> {
        let known = (self.busy + self.idle).0;
        (known > 0).then(|| self.busy.0 as f64 / known as f64)
    }
}
