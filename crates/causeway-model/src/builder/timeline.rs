//! Thread incarnations: creating, backfilling, retiring and invalidating timelines.

use super::{FirstSeen, ModelBuilder, blocked_unseen, unknown};
use crate::segment::{SegmentState, UnknownCause};
use crate::tracker::{IdentityRow, Life, ThreadBuild};
use causeway_format::{ThreadInfo, Tid, Timestamp};

impl ModelBuilder<'_> {
    /// Identity rows for a thread not created in the trace.
    pub(super) fn table_identity(&self, tid: Tid) -> Vec<IdentityRow> {
        self.table_threads
            .rows(tid)
            .iter()
            .map(|t| identity_row(t))
            .collect()
    }

    /// The first loss window that may hide a state change of a segment that began at
    /// `seg_start`; returns where certainty ends.
    pub(super) fn loss_split(&self, seg_start: Timestamp, ts: Timestamp) -> Option<Timestamp> {
        let i = self.losses.partition_point(|l| l.to <= seg_start);
        self.losses.get(i).map(|l| l.from.max(seg_start).min(ts))
    }

    /// Move the current incarnation of `tid` (if any) to the retired list, closing its
    /// timeline at `ts` with an unknown end.
    pub(super) fn retire(&mut self, tid: Tid, ts: Timestamp) -> Option<Timestamp> {
        let mut old = self.threads.remove(tid)?;
        old.close(ts, false);
        let end = old.timeline_end();
        self.retired.push(old);
        end
    }

    /// Make sure `tid` has a live timeline, creating or backfilling it per `hint`.
    /// Returns `None` for the idle task.
    #[inline]
    pub(super) fn ensure(
        &mut self,
        tid: Tid,
        ts: Timestamp,
        hint: FirstSeen,
    ) -> Option<&mut ThreadBuild> {
        let i = self.ensure_slot(tid, ts, hint)?;
        Some(self.threads.at(i))
    }

    /// [`ModelBuilder::ensure`], returning the thread's slot in the thread table (valid
    /// until a thread is retired).
    #[inline]
    pub(super) fn ensure_slot(
        &mut self,
        tid: Tid,
        ts: Timestamp,
        hint: FirstSeen,
    ) -> Option<usize> {
        if tid.is_idle() {
            return None;
        }
        let slot = self.threads.slot(tid);
        // The common case: a thread already live, found with one lookup.
        if let Some(i) = slot {
            let th = self.threads.at(i);
            if matches!(th.life, Life::Live(_)) {
                th.touch(ts);
                return Some(i);
            }
        }
        self.revive(tid, ts, hint, slot)
    }

    /// [`ModelBuilder::ensure_slot`] for a thread that is not live: new, created by a
    /// fork and not yet run, or ended.
    fn revive(
        &mut self,
        tid: Tid,
        ts: Timestamp,
        hint: FirstSeen,
        slot: Option<usize>,
    ) -> Option<usize> {
        let mut floor = self.trace_start();
        match slot.map(|i| self.threads.at(i).life) {
            Some(Life::Live(_)) => {}
            Some(Life::Created { at }) => {
                let th = self.threads.get_mut(tid)?;
                let state = match hint {
                    FirstSeen::Running { .. } => SegmentState::Unknown {
                        cause: UnknownCause::BeforeFirstEvent,
                    },
                    FirstSeen::Runnable { cpu } => SegmentState::Runnable {
                        cpu: Some(cpu),
                        preempted: false,
                    },
                    FirstSeen::Blocked => blocked_unseen(),
                };
                th.open(at, false, state);
            }
            Some(Life::Ended) => {
                self.stats.events_after_exit += 1;
                if let Some(end) = self.retire(tid, ts) {
                    floor = floor.max(end);
                }
                self.create(tid, ts, hint, floor);
            }
            None => self.create(tid, ts, hint, floor),
        }
        // Retiring moved slots: look the thread up again.
        let i = self.threads.slot(tid)?;
        self.threads.at(i).touch(ts);
        Some(i)
    }

    /// Create a thread that existed before its first event at `ts`, backfilling its
    /// timeline from `floor` (or the last loss) per `hint`.
    pub(super) fn create(&mut self, tid: Tid, ts: Timestamp, hint: FirstSeen, floor: Timestamp) {
        let mut th = ThreadBuild::new(tid, ts, self.table_identity(tid));
        let mut start = floor.min(ts);
        if let Some(l) = self.losses.iter().rev().find(|l| l.to <= ts)
            && l.to > start
        {
            th.open(start, false, unknown(UnknownCause::LostEvents));
            th.close(l.to, false);
            start = l.to;
        }
        let state = match hint {
            FirstSeen::Running {
                cpu,
                consistent: true,
            } => SegmentState::Running { cpu },
            FirstSeen::Running {
                consistent: false, ..
            } => unknown(UnknownCause::BeforeFirstEvent),
            FirstSeen::Runnable { cpu } => SegmentState::Runnable {
                cpu: Some(cpu),
                preempted: false,
            },
            FirstSeen::Blocked => blocked_unseen(),
        };
        th.open(start, false, state);
        self.threads.insert(th);
    }

    /// The events contradict `tid`'s open segment at `ts`. If lost events can explain
    /// it, the segment ends at the loss and an unknown segment follows; otherwise it
    /// ends at `ts` with an unknown end. Returns true if a loss explains it.
    pub(super) fn invalidate(&mut self, tid: Tid, ts: Timestamp) -> bool {
        let Some(open) = self.threads.get(tid).and_then(|t| t.open_seg()).copied() else {
            return true;
        };
        if open.state.is_unknown() {
            return true;
        }
        if let SegmentState::Running { cpu } = open.state
            && let Some(cs) = self.cpus.get_mut(cpu)
            && cs.current == Some(tid)
        {
            cs.current = None;
        }
        let split = self.loss_split(open.start, ts);
        let Some(th) = self.threads.get_mut(tid) else {
            return true;
        };
        match split {
            Some(p) => {
                th.mark_unknown(p, UnknownCause::LostEvents);
                true
            }
            None => {
                th.mark_unknown(ts, UnknownCause::Inconsistent);
                false
            }
        }
    }
}

/// A table row as an identity row.
pub(super) fn identity_row(t: &ThreadInfo) -> IdentityRow {
    IdentityRow {
        since: t.since,
        tgid: Some(t.tgid),
        comm: Some(t.comm),
    }
}
