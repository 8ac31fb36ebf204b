//! A thread as the model sees it: identity over time, timeline and totals.
//!
//! One [`Thread`] is one incarnation of a tid: if the kernel reuses a tid after its
//! thread exited, the model holds two `Thread`s with the same tid, ordered by time.

use crate::segment::{Segment, TimeSpan};
use crate::sockets::DataWake;
use crate::totals::ThreadTotals;
use causeway_format::{Marker, Tgid, Tid, Timestamp};
use serde::{Deserialize, Serialize};

/// A thread's process and name from `since` on.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ThreadIdentity {
    /// From when this identity holds (the trace start or earlier if from the tables).
    pub since: Timestamp,
    /// Its process, if known.
    pub tgid: Option<Tgid>,
    /// Its name (`comm`), empty if unknown.
    pub comm: String,
}

/// A program annotation relevant to wait analysis (wPerf §4.1): busy-wait spans and
/// false wake-ups.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Annotation {
    /// When the thread emitted it.
    pub ts: Timestamp,
    /// What it says ([`Marker::SpinBegin`], [`Marker::SpinEnd`] or
    /// [`Marker::FalseWakeup`]).
    pub marker: Marker,
}

/// One thread: identity, creation and exit, timeline and totals.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Thread {
    /// The thread id.
    pub tid: Tid,
    /// Latest known process.
    pub tgid: Option<Tgid>,
    /// Latest known name, empty if unknown.
    pub comm: String,
    /// Identity over time, oldest first.
    pub identity: Vec<ThreadIdentity>,
    /// When it was created, if its fork (or `wakeup_new`) was seen.
    pub created: Option<Timestamp>,
    /// The thread that created it, if its fork was seen.
    pub parent_tid: Option<Tid>,
    /// When it exited, if its exit (or final switch-out) was seen.
    pub exited: Option<Timestamp>,
    /// Contiguous, time-ordered segments covering its observed lifetime.
    pub segments: Vec<Segment>,
    /// Busy-wait and false wake-up annotations, in time order.
    pub annotations: Vec<Annotation>,
    /// Time per state and counters.
    pub totals: ThreadTotals,
    /// Waits ended by data that a recorded thread sent on a socket, in segment order
    /// (see [`crate::Model::data_wake`]).
    #[serde(default)]
    pub data_wakes: Vec<DataWake>,
}

impl Thread {
    /// The interval the timeline covers, `None` if it has no segments (a thread seen
    /// only in a fork that never ran).
    pub fn span(&self) -> Option<TimeSpan> {
        let first = self.segments.first()?;
        let last = self.segments.last()?;
        Some(TimeSpan {
            start: first.start,
            end: last.end,
        })
    }

    /// The segment containing `ts` (the later one if `ts` is a boundary).
    pub fn segment_at(&self, ts: Timestamp) -> Option<&Segment> {
        let i = self.segments.partition_point(|s| s.end <= ts);
        self.segments.get(i).filter(|s| s.start <= ts)
    }

    /// Segments overlapping the half-open interval `[start, end)`, in time order
    /// (wPerf's cascade looks up what the waker was doing during a wait this way).
    pub fn segments_overlapping(&self, start: Timestamp, end: Timestamp) -> &[Segment] {
        let lo = self.segments.partition_point(|s| s.end <= start);
        let hi = self.segments.partition_point(|s| s.start < end);
        self.segments.get(lo..hi.max(lo)).unwrap_or(&[])
    }

    /// Identity in force at `ts` (the earliest one if `ts` precedes them all).
    pub fn identity_at(&self, ts: Timestamp) -> Option<&ThreadIdentity> {
        let i = self.identity.partition_point(|r| r.since <= ts);
        self.identity.get(i.saturating_sub(1))
    }

    /// The data wake-up that ended blocked segment `index`, if data ended it.
    pub fn data_wake(&self, index: u32) -> Option<&DataWake> {
        self.data_wakes
            .binary_search_by_key(&index, |d| d.segment)
            .ok()
            .and_then(|i| self.data_wakes.get(i))
    }

    /// True if the thread was created during the recording.
    pub fn created_in_trace(&self) -> bool {
        self.created.is_some()
    }
}

/// A name with its digits removed, so `worker-3` and `worker-12` compare equal: the
/// threads of one pool.
pub fn strip_digits(name: &str) -> String {
    name.chars().filter(|c| !c.is_ascii_digit()).collect()
}
