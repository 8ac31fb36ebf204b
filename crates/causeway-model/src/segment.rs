//! Timeline segments: what one thread was doing over one interval of time.
//!
//! A thread's timeline is a list of contiguous [`Segment`]s. Each segment says which
//! [`SegmentState`] the thread was in and whether its two ends were observed
//! (`start_known` / `end_known`) or are bounds imposed by the edge of the recording, a
//! loss of events or an inconsistency. This module only defines the types; the
//! [`crate::builder`] fills them in.

use causeway_format::{Cpu, DurationNs, StackId, TaskState, Timestamp, Waker};
use serde::{Deserialize, Serialize};

/// A half-open interval `[start, end)` on the trace clock.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct TimeSpan {
    /// First instant inside.
    pub start: Timestamp,
    /// First instant after.
    pub end: Timestamp,
}

impl TimeSpan {
    /// Length of the span (zero if `end` precedes `start`).
    pub fn duration(&self) -> DurationNs {
        self.end.saturating_since(self.start)
    }

    /// True if the half-open span `[start, end)` overlaps `self`.
    pub fn overlaps(&self, start: Timestamp, end: Timestamp) -> bool {
        self.start < end && start < self.end
    }
}

/// The user and kernel stacks of one [`causeway_format::EventKind::Stack`] event.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct StackRef {
    /// User-space stack, if taken.
    pub user: Option<StackId>,
    /// Kernel stack, if taken.
    pub kernel: Option<StackId>,
}

/// Stable id of a segment in a finished [`crate::Model`]: the position of its thread in
/// [`crate::Model::threads`] and its index in that thread's timeline. Ids do not change
/// once the model is built, so analyses can use them as graph vertices.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct SegmentId {
    /// Index of the thread in [`crate::Model::threads`].
    pub thread: u32,
    /// Index of the segment in the thread's `segments`.
    pub index: u32,
}

/// The wake-up that ended a [`SegmentState::Blocked`] segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct WakeInfo {
    /// When the wake-up happened (the end of the blocked segment).
    pub ts: Timestamp,
    /// CPU the waker ran on.
    pub cpu: Cpu,
    /// CPU the woken thread was queued on.
    pub target_cpu: Cpu,
    /// Who woke the thread: a thread, an interrupt, a softirq or unknown.
    pub waker: Waker,
    /// Stacks of the waking context, from the [`causeway_format::StackKind::Waker`]
    /// (or [`causeway_format::StackKind::WakerSample`]) stack event that followed the
    /// wake-up, if there was one.
    pub waker_stack: Option<StackRef>,
    /// How many wake-ups `waker_stack` stands for: 1, or for a sampled stack the
    /// recording's [`causeway_format::WakerStackSampling::one_in`] (the short waits whose
    /// waker stack was left out are represented by the sampled ones). Weigh a waker stack
    /// by it when summing time or counts per stack.
    #[serde(default = "one")]
    pub waker_stack_weight: u32,
}

fn one() -> u32 {
    1
}

/// Why the model does not know what a thread was doing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UnknownCause {
    /// The thread existed before its first event, but that event does not tell what it
    /// was doing before (or contradicts what the model knew about its CPU).
    BeforeFirstEvent,
    /// Events were lost (a `lost` record) while the thread might have changed state.
    LostEvents,
    /// The events about the thread contradict each other (for example a thread switched
    /// out on a CPU where another thread was running) and no loss explains it.
    Inconsistent,
}

/// What a thread was doing during a segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum SegmentState {
    /// On a CPU.
    Running {
        /// The CPU it ran on.
        cpu: Cpu,
    },
    /// Ready to run and waiting for a CPU: after a wake-up or a preemption.
    Runnable {
        /// CPU whose run queue it waited on, if known (the wake-up's target CPU, or the
        /// CPU it was preempted on).
        cpu: Option<Cpu>,
        /// True only when the model saw the preemption (`sched_switch` with a runnable
        /// `prev_state`); false after a wake-up or when the reason is unknown.
        preempted: bool,
    },
    /// Off CPU and not runnable: waiting for something.
    Blocked {
        /// The task state it left the CPU in (`S`, `D`, ...), `None` if it was already
        /// blocked when recording began (its switch-out was not seen).
        state: Option<TaskState>,
        /// The wake-up that ended the wait; `None` if the wait did not end in the trace
        /// or ended without a recorded wake-up.
        waker: Option<WakeInfo>,
        /// Where it blocked: stacks from the [`causeway_format::StackKind::SwitchOut`]
        /// stack event that followed the switch-out.
        switch_out_stack: Option<StackRef>,
        /// Number of the system call in progress when it blocked, if syscalls were
        /// recorded and the entry was seen.
        syscall: Option<u32>,
    },
    /// The model cannot tell; see the cause. Nothing is guessed for this interval.
    Unknown {
        /// Why.
        cause: UnknownCause,
    },
}

impl SegmentState {
    /// True for [`SegmentState::Running`].
    pub fn is_running(&self) -> bool {
        matches!(self, SegmentState::Running { .. })
    }
    /// True for [`SegmentState::Runnable`].
    pub fn is_runnable(&self) -> bool {
        matches!(self, SegmentState::Runnable { .. })
    }
    /// True for [`SegmentState::Blocked`].
    pub fn is_blocked(&self) -> bool {
        matches!(self, SegmentState::Blocked { .. })
    }
    /// True for [`SegmentState::Unknown`].
    pub fn is_unknown(&self) -> bool {
        matches!(self, SegmentState::Unknown { .. })
    }
}

/// One interval of a thread's timeline in one state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Segment {
    /// First instant in this state.
    pub start: Timestamp,
    /// First instant after (the next segment's `start`).
    pub end: Timestamp,
    /// True if an event marked the start of this state; false if `start` is only a bound
    /// (the trace start, a loss of events, or an inconsistency).
    pub start_known: bool,
    /// True if an event marked the end of this state; false if `end` is only a bound
    /// (the trace end, a loss of events, or an inconsistency).
    pub end_known: bool,
    /// The state.
    pub state: SegmentState,
}

impl Segment {
    /// Length of the segment.
    pub fn duration(&self) -> DurationNs {
        self.end.saturating_since(self.start)
    }

    /// The segment's interval.
    pub fn span(&self) -> TimeSpan {
        TimeSpan {
            start: self.start,
            end: self.end,
        }
    }

    /// The wake-up that ended this segment, for a blocked segment that had one.
    pub fn wake(&self) -> Option<&WakeInfo> {
        match &self.state {
            SegmentState::Blocked { waker, .. } => waker.as_ref(),
            _ => None,
        }
    }

    pub(crate) fn wake_mut(&mut self) -> Option<&mut WakeInfo> {
        match &mut self.state {
            SegmentState::Blocked { waker, .. } => waker.as_mut(),
            _ => None,
        }
    }
}
