//! The per-thread state machine the builder drives: one open segment per live thread,
//! closed into the timeline when the thread changes state.
//!
//! This module knows how to open, close and re-label segments; deciding *which*
//! transition an event implies is the builder's job.

use crate::segment::{Segment, SegmentState, UnknownCause, WakeInfo};
use crate::thread::Annotation;
use crate::totals::ThreadTotals;
use causeway_format::{StringId, Tgid, Tid, Timestamp};

/// The segment a live thread is in now; its end is not known yet.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Open {
    pub(crate) start: Timestamp,
    pub(crate) start_known: bool,
    pub(crate) state: SegmentState,
}

/// Where a thread is in its life.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Life {
    /// Forked at `at`, not yet scheduled.
    Created { at: Timestamp },
    /// Has a timeline; `Open` is its current segment.
    Live(Open),
    /// Its timeline ended (final switch-out, or replaced by a new thread with its tid).
    Ended,
}

/// One identity row before strings are resolved.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct IdentityRow {
    pub(crate) since: Timestamp,
    pub(crate) tgid: Option<Tgid>,
    pub(crate) comm: Option<StringId>,
}

/// A thread being built.
#[derive(Debug)]
pub(crate) struct ThreadBuild {
    pub(crate) tid: Tid,
    pub(crate) identity: Vec<IdentityRow>,
    pub(crate) created: Option<Timestamp>,
    pub(crate) parent_tid: Option<Tid>,
    pub(crate) exited: Option<Timestamp>,
    pub(crate) segments: Vec<Segment>,
    /// Time per state of `segments`, kept as they are pushed (they never change length
    /// afterwards) so finishing does not walk every timeline again.
    pub(crate) segment_totals: ThreadTotals,
    pub(crate) annotations: Vec<Annotation>,
    pub(crate) life: Life,
    /// System call in progress (entry seen, exit not yet).
    pub(crate) syscall: Option<u32>,
    /// A wake-up received while running since the last switch-in (see
    /// [`crate::ModelStats::wakeups_before_switch_out`]).
    pub(crate) wake_while_running: Option<WakeInfo>,
    /// Socket data that came with `wake_while_running`, attached to the wait that
    /// wake-up ends once the switch-out it raced with is seen.
    pub(crate) ready_while_running: Option<crate::sockets::Ready>,
    pub(crate) wakeups: u64,
    pub(crate) wakeups_not_blocked: u64,
    pub(crate) first_seen: Timestamp,
    pub(crate) last_seen: Timestamp,
    /// Socket data that ended waits of this thread, until its senders are found.
    pub(crate) readies: Vec<crate::sockets::Ready>,
    /// Waits ended by data a recorded thread sent, by segment.
    pub(crate) data_wakes: Vec<crate::sockets::DataWake>,
}

impl ThreadBuild {
    pub(crate) fn new(tid: Tid, ts: Timestamp, identity: Vec<IdentityRow>) -> ThreadBuild {
        ThreadBuild {
            tid,
            identity,
            created: None,
            parent_tid: None,
            exited: None,
            segments: Vec::new(),
            segment_totals: ThreadTotals::default(),
            annotations: Vec::new(),
            life: Life::Ended,
            syscall: None,
            wake_while_running: None,
            ready_while_running: None,
            wakeups: 0,
            wakeups_not_blocked: 0,
            first_seen: ts,
            last_seen: ts,
            readies: Vec::new(),
            data_wakes: Vec::new(),
        }
    }

    /// The current segment, if the thread is live.
    pub(crate) fn open_seg(&self) -> Option<&Open> {
        match &self.life {
            Life::Live(o) => Some(o),
            _ => None,
        }
    }

    /// The current state, if the thread is live.
    pub(crate) fn state(&self) -> Option<SegmentState> {
        self.open_seg().map(|o| o.state)
    }

    /// Record that an event named the thread at `ts`.
    pub(crate) fn touch(&mut self, ts: Timestamp) {
        self.first_seen = self.first_seen.min(ts);
        self.last_seen = self.last_seen.max(ts);
    }

    /// End time of the timeline so far (the open segment's start if live).
    pub(crate) fn timeline_end(&self) -> Option<Timestamp> {
        match &self.life {
            Life::Live(o) => Some(o.start),
            _ => self.segments.last().map(|s| s.end),
        }
    }

    /// Append a finished segment. Zero-length segments that are unknown or whose start
    /// was not observed (a backfill at the trace start) carry no information and are
    /// dropped. Returns the index of the segment if it was kept.
    pub(crate) fn push_segment(&mut self, seg: Segment) -> Option<usize> {
        if seg.end <= seg.start && (seg.state.is_unknown() || !seg.start_known) {
            return None;
        }
        self.segment_totals.add_segment(&seg);
        self.segments.push(seg);
        Some(self.segments.len() - 1)
    }

    /// Close the open segment at `at` (never before its start); the thread is then not
    /// live until [`ThreadBuild::open`]. Returns the index of the closed segment.
    pub(crate) fn close(&mut self, at: Timestamp, end_known: bool) -> Option<usize> {
        let Life::Live(o) = self.life else {
            return None;
        };
        self.life = Life::Ended;
        self.push_segment(Segment {
            start: o.start,
            end: at.max(o.start),
            start_known: o.start_known,
            end_known,
            state: o.state,
        })
    }

    /// Start a new open segment at `at`, or where the timeline ends if it already has
    /// segments, so the timeline stays contiguous.
    pub(crate) fn open(&mut self, at: Timestamp, start_known: bool, state: SegmentState) {
        let start = self.segments.last().map_or(at, |s| s.end);
        self.life = Life::Live(Open {
            start,
            start_known,
            state,
        });
    }

    /// An observed state change at `at`: close the open segment (end known) and open
    /// `state` (start known).
    pub(crate) fn transition(&mut self, at: Timestamp, state: SegmentState) {
        self.close(at, true);
        self.open(at, true, state);
    }

    /// What the model believed is no longer reliable from `at` on.
    pub(crate) fn mark_unknown(&mut self, at: Timestamp, cause: UnknownCause) {
        if matches!(self.state(), Some(SegmentState::Unknown { .. })) {
            return;
        }
        self.close(at, false);
        self.open(at, false, SegmentState::Unknown { cause });
    }

    /// A wake-up at `at` ends the open blocked segment; opens the runnable one.
    /// Returns the index of the closed blocked segment.
    pub(crate) fn wake(&mut self, wake: WakeInfo, runnable: SegmentState) -> Option<usize> {
        if let Life::Live(Open {
            state: SegmentState::Blocked { waker, .. },
            ..
        }) = &mut self.life
        {
            *waker = Some(wake);
        }
        let idx = self.close(wake.ts, true);
        self.open(wake.ts, true, runnable);
        idx
    }
}
