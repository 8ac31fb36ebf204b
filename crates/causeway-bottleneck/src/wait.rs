//! One waiting interval of a timeline entity: the unit the wait builders (`waits`)
//! make and the rules over a thread's waits (`idle`) read.

use crate::stacks::PackedStack;
use crate::waker::WakerKey;

/// One waiting interval `[start, end)` of a timeline entity and who ended it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Wait {
    /// First nanosecond waiting.
    pub(crate) start: u64,
    /// First nanosecond after.
    pub(crate) end: u64,
    /// Who ended the wait.
    pub(crate) waker: WakerKey,
    /// Where the thread blocked.
    pub(crate) wait_stack: PackedStack,
    /// The waking context's stack.
    pub(crate) waker_stack: PackedStack,
    /// How many wake-ups `waker_stack` stands for (the model's `waker_stack_weight`: above
    /// 1 for a sampled stack of a short wait).
    pub(crate) waker_weight: u32,
}

impl Wait {
    pub(crate) fn len(&self) -> u64 {
        self.end.saturating_sub(self.start)
    }
}
