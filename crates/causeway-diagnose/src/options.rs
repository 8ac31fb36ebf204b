//! What the diagnosis can be told.

use causeway_format::{DurationNs, Tid, Timestamp};

/// Which vertex to start from.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Problem {
    /// The longest stall of the recorded processes.
    #[default]
    Longest,
    /// The longest stall of the threads with this tid or name (`comm`).
    Thread(ThreadSelector),
    /// The vertex of the selected thread at this time.
    ThreadAt(ThreadSelector, Timestamp),
}

/// A thread by id or by name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ThreadSelector {
    /// By thread id.
    Tid(Tid),
    /// By `comm` (exact).
    Name(String),
}

/// Which vertices may be the default problem (the longest stall).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum StallKind {
    /// Any: blocked, stopped, runnable or busy.
    #[default]
    Any,
    /// Waits only (blocked or stopped).
    Wait,
    /// Runs only (busy, yielding or queued for a CPU).
    Run,
}

/// Options of [`crate::diagnose`] and [`crate::build`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    /// The problem vertex.
    pub problem: Problem,
    /// Which vertices the longest-stall choice considers.
    pub stall: StallKind,
    /// A wait or a run at least this long is "long" (LongWait, LongRunning).
    pub long: DurationNs,
    /// An exec vertex with at least this many `sched_yield` calls is RepeatedYield (a
    /// yield to a busy CPU may cost a whole time slice: a spinner yields few times).
    pub yield_min: u32,
    /// Cut exec vertices where their peers change (§4.2.1).
    pub split_peers: bool,
    /// Cut exec vertices of batching loops per item (§4.2.1, [`crate::build`]).
    pub split_batches: bool,
    /// A slice stops after this many vertices.
    pub max_slice: usize,
    /// Culprit recursion stops at this depth.
    pub max_depth: usize,
    /// Another thread's vertex counts as the culprit only if it covers at least this
    /// share (percent) of the stalled vertex.
    pub overlap_percent: u32,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            problem: Problem::Longest,
            stall: StallKind::Any,
            long: DurationNs(5_000_000),
            yield_min: 3,
            split_peers: true,
            split_batches: true,
            max_slice: 64,
            max_depth: 8,
            overlap_percent: 50,
        }
    }
}
