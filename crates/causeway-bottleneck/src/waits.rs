//! One thread's waits: its blocked segments with the waker of each, after removing
//! declared false wake-ups and adding declared busy-waits (wPerf §4.1, §4.2).
//!
//! Running and runnable time are not waits (wPerf treats them alike here; runnable
//! time is reported separately as "needs CPU"). Unknown segments are neither.

use crate::stacks::PackedStack;
pub(crate) use crate::wait::Wait;
use crate::waker::{DeviceSet, Pseudo, WaitContext, WakerKey, classify};
use causeway_format::{Marker, Tables, TaskState, Tid, Timestamp, Waker};
use causeway_model::Facts;
use causeway_model::facts::FlagAccess;
use causeway_model::{Model, SegmentState, Thread, WakeInfo};

/// Counters of what wait building changed or could not attribute.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct WaitStats {
    pub(crate) false_wakeups_removed: u64,
    pub(crate) false_wakeups_unmatched: u64,
    pub(crate) spins: u64,
    pub(crate) spins_unreleased: u64,
    pub(crate) unattributed_waits: u64,
    pub(crate) unattributed_ns: u64,
    /// Waits that no wake-up ended: cut by the end of the recording or the thread's
    /// exit (not counted as unattributed).
    pub(crate) unended_waits: u64,
    pub(crate) unended_ns: u64,
    /// Waits that ended before the thread's process exec'd (launcher code).
    pub(crate) before_exec_waits: u64,
    pub(crate) before_exec_ns: u64,
    /// A thread's last wait, ended just before it exited: it waited to be told to
    /// stop, not for work (see [`EXIT_GRACE_NS`]).
    pub(crate) exit_waits: u64,
    pub(crate) exit_ns: u64,
    /// Readiness waits ended by their own timeout, after which the thread woke
    /// nobody ([`crate::idle`]): idle, not waiting for the timer.
    pub(crate) idle_polls: u64,
    pub(crate) idle_poll_ns: u64,
}

impl WaitStats {
    pub(crate) fn add(&mut self, o: &WaitStats) {
        self.false_wakeups_removed += o.false_wakeups_removed;
        self.false_wakeups_unmatched += o.false_wakeups_unmatched;
        self.spins += o.spins;
        self.spins_unreleased += o.spins_unreleased;
        self.unattributed_waits += o.unattributed_waits;
        self.unattributed_ns += o.unattributed_ns;
        self.unended_waits += o.unended_waits;
        self.unended_ns += o.unended_ns;
        self.before_exec_waits += o.before_exec_waits;
        self.before_exec_ns += o.before_exec_ns;
        self.exit_waits += o.exit_waits;
        self.exit_ns += o.exit_ns;
        self.idle_polls += o.idle_polls;
        self.idle_poll_ns += o.idle_poll_ns;
    }
}

/// A thread's last wait counts as a shutdown hand-off when another thread ended it and
/// the thread exits within this long of its wake-up: a worker parked on its queue until the program tells it
/// to stop, a main thread joining the last worker. Such a wait is for the end of the
/// run, not for work, and its waker (the thread that shut the program down) made
/// every worker look like it waited for it: in `pipeline-commit` the reply threads'
/// last waits on the main thread closed a cycle clients → reply → main → client
/// process → clients that hid the knot {sync, disk}. A recording of a running
/// server (`-p`, `--duration`) has no such waits.
pub(crate) const EXIT_GRACE_NS: u64 = 10_000_000;

/// `entity_of` value of a thread outside the analysis: a thread of a process the
/// recording did not follow. It has no entity; its wake-ups point to the "other
/// processes" pseudo thread.
pub(crate) const OUTSIDE: u32 = u32::MAX;

/// Maps a thread id at a time to its timeline entity.
pub(crate) struct Resolver<'a> {
    pub(crate) tables: &'a Tables,
    pub(crate) facts: &'a Facts,
    pub(crate) devices: DeviceSet,
    pub(crate) model: &'a Model,
    pub(crate) threads: &'a [Thread],
    /// Entity of each model thread (same index as `threads`); [`OUTSIDE`] for threads
    /// of processes that were not recorded.
    pub(crate) entity_of: &'a [u32],
    /// Per model thread: the process whose managed runtime it belongs to (`jvm`);
    /// such threads have no entity, and the waits they end point to the runtime's
    /// pauses.
    pub(crate) runtime_of: &'a [Option<causeway_format::Tgid>],
    /// When each thread woke another (for idle polls).
    pub(crate) wakes: &'a crate::idle::WakesBy,
    /// Runnable time held back by cgroup CPU quotas.
    pub(crate) quota: &'a causeway_model::quota::Throttling,
}

impl Resolver<'_> {
    /// Index of the incarnation of `tid` alive at `ts` (the latest one started by then,
    /// else the first).
    pub(crate) fn thread_index(&self, tid: Tid, ts: Timestamp) -> Option<usize> {
        self.model.thread_index_at(tid, ts).map(|i| i as usize)
    }

    /// Entity of thread `tid` at `ts`.
    pub(crate) fn entity(&self, tid: Tid, ts: Timestamp) -> WakerKey {
        if tid.is_idle() {
            return WakerKey::None;
        }
        let Some(i) = self.thread_index(tid, ts) else {
            return WakerKey::None;
        };
        if let Some(&Some(g)) = self.runtime_of.get(i) {
            return WakerKey::Pseudo(Pseudo::Runtime(g));
        }
        self.entity_of.get(i).map_or(WakerKey::None, |&e| {
            if e == OUTSIDE {
                WakerKey::Pseudo(Pseudo::Outside)
            } else {
                WakerKey::Entity(e)
            }
        })
    }

    /// True when a managed runtime's thread ended the wait by ending its process (a
    /// JVM's `System.exit` runs on its VM Thread, and a parent's `wait4` for the
    /// child ends with it): the waker exits right after. That is the end of the run,
    /// not a pause, and like a shutdown hand-off it is on no edge.
    pub(crate) fn runtime_exit(&self, w: &WakeInfo) -> bool {
        let Waker::Thread { tid } = w.waker else {
            return false;
        };
        self.thread_index(tid, w.ts).is_some_and(|i| {
            self.runtime_of.get(i).is_some_and(Option::is_some)
                && self.threads[i]
                    .exited
                    .is_some_and(|x| x.0.saturating_sub(w.ts.0) <= EXIT_GRACE_NS)
        })
    }

    /// Who ended a wait of `wakee`; `uninterruptible`: it waited in state `D`.
    pub(crate) fn waker(&self, wakee: Tid, w: &WakeInfo, uninterruptible: bool) -> WakerKey {
        let hint = self.facts.device_hint(wakee, w.ts).copied();
        let kernel = w.waker_stack.and_then(|s| s.kernel);
        let wait = WaitContext {
            waker_kernel_stack: kernel,
            hint,
            uninterruptible,
        };
        if let Some(k) = classify(self.tables, w.waker, wait, self.devices) {
            return k;
        }
        match w.waker {
            Waker::Thread { tid } => self.entity(tid, w.ts),
            _ => WakerKey::None,
        }
    }
}

/// The waits of one thread, time-ordered and non-overlapping, with counters.
pub(crate) fn thread_waits(i: usize, r: &Resolver<'_>) -> (Vec<Wait>, WaitStats) {
    let (waits, stats, _) = thread_waits_and_idle(i, r);
    (waits, stats)
}

/// [`thread_waits`] of model thread `i`, and the starts of the waits left out as idle polls (timed-out
/// readiness waits after which the thread woke nobody).
pub(crate) fn thread_waits_and_idle(
    ti: usize,
    r: &Resolver<'_>,
) -> (Vec<Wait>, WaitStats, Vec<u64>) {
    let th = &r.threads[ti];
    let mut stats = WaitStats::default();
    let mut waits: Vec<Wait> = Vec::new();
    for (i, seg) in (0u32..).zip(&th.segments) {
        if seg.state.is_runnable()
            && let Some((held, group)) = r.quota.held(ti as u32, i)
        {
            // Runnable while its cgroup's quota was spent: a wait on the quota
            // (`causeway_model::quota`), placed at the start of the stretch.
            waits.push(Wait {
                start: seg.start.0,
                end: seg.start.0 + held.min(seg.duration().0),
                waker: WakerKey::Pseudo(Pseudo::Quota(group)),
                wait_stack: PackedStack::EMPTY,
                waker_stack: PackedStack::EMPTY,
                waker_weight: 1,
            });
            continue;
        }
        if let SegmentState::Blocked {
            waker,
            switch_out_stack,
            state,
            ..
        } = seg.state
        {
            let uninterruptible = state.is_some_and(|s| s.0 & TaskState::UNINTERRUPTIBLE.0 != 0);
            let waker_weight = waker.map_or(1, |w| w.waker_stack_weight);
            let (key, waker_stack) = match &waker {
                // Data a recorded thread sent: that thread, never the device or the
                // kernel thread that carried it (wPerf's NIC pseudo thread is for data
                // from outside the recording).
                Some(w) if let Some(d) = th.data_wake(i) => (
                    r.entity(d.sender, d.link_time(w.ts)),
                    PackedStack::from_ref(w.waker_stack),
                ),
                Some(w) if r.runtime_exit(w) => {
                    stats.exit_waits += 1;
                    stats.exit_ns += seg.duration().0;
                    continue;
                }
                Some(w) => (
                    r.waker(th.tid, w, uninterruptible),
                    PackedStack::from_ref(w.waker_stack),
                ),
                None if !seg.end_known => {
                    // The recording (or the thread) ended during the wait.
                    stats.unended_waits += 1;
                    stats.unended_ns += seg.duration().0;
                    continue;
                }
                None => (WakerKey::None, PackedStack::EMPTY),
            };
            waits.push(Wait {
                start: seg.start.0,
                end: seg.end.0,
                waker: key,
                wait_stack: PackedStack::from_ref(switch_out_stack),
                waker_stack,
                waker_weight,
            });
        }
    }
    if !th.annotations.is_empty() {
        remove_false_wakeups(th, &mut waits, &mut stats);
        add_spins(th, r, &mut waits, &mut stats);
    }
    let exec = th
        .tgid
        .and_then(|g| r.facts.exec_time(g))
        .map_or(0, |t| t.0);
    // The last wait, if the thread exits right after it.
    let exit_wait = th.exited.and_then(|x| {
        let last = waits.last()?;
        // A JVM's exit runs on its VM Thread (the runtime's pauses here): it tells
        // every thread to stop as a program's own thread would.
        let told = matches!(
            last.waker,
            WakerKey::Entity(_) | WakerKey::Pseudo(Pseudo::Runtime(_))
        );
        (told && x.0.saturating_sub(last.end) <= EXIT_GRACE_NS).then_some(last.start)
    });
    let th_end = th
        .exited
        .map_or_else(|| th.segments.last().map_or(0, |s| s.end.0), |x| x.0);
    let idle = crate::idle::idle_polls(th.tid, &waits, th_end, r.tables, r.wakes);
    let idle_starts: Vec<u64> = idle.iter().map(|&i| waits[i].start).collect();
    waits.retain(|w| {
        if idle_starts.binary_search(&w.start).is_ok() {
            stats.idle_polls += 1;
            stats.idle_poll_ns += w.len();
            return false;
        }
        if Some(w.start) == exit_wait {
            stats.exit_waits += 1;
            stats.exit_ns += w.len();
            return false;
        }
        if w.end <= exec {
            stats.before_exec_waits += 1;
            stats.before_exec_ns += w.len();
            return false;
        }
        let keep = w.waker != WakerKey::None && w.len() > 0;
        if !keep && w.len() > 0 {
            stats.unattributed_waits += 1;
            stats.unattributed_ns += w.len();
        }
        keep
    });
    (waits, stats, idle_starts)
}

/// A false wake-up declared at `m` sits between the wait that ended just before it and
/// the next wait: drop that wake-up and that wait event, so the two waits and the run
/// between them become one wait ended by the second wait's waker.
fn remove_false_wakeups(th: &Thread, waits: &mut Vec<Wait>, stats: &mut WaitStats) {
    for a in &th.annotations {
        if a.marker != Marker::FalseWakeup {
            continue;
        }
        let m = a.ts.0;
        let first_after = waits.partition_point(|w| w.end <= m);
        let (Some(before), Some(next)) = (first_after.checked_sub(1), Some(first_after)) else {
            stats.false_wakeups_unmatched += 1;
            continue;
        };
        match waits.get(next).copied() {
            Some(w2) if w2.start >= m => {
                let w1 = &mut waits[before];
                w1.end = w2.end;
                w1.waker = w2.waker;
                w1.waker_stack = w2.waker_stack;
                w1.waker_weight = w2.waker_weight;
                waits.remove(next);
                stats.false_wakeups_removed += 1;
            }
            _ => stats.false_wakeups_unmatched += 1,
        }
    }
}

/// Busy-wait spans (`SpinBegin`..`SpinEnd` with the same id) become waits ended by the
/// thread that last wrote the flag with that id (a `FlagWrite` marker whose address is
/// the id) during the span; kernel waits inside the span are folded into it.
fn add_spins(th: &Thread, r: &Resolver<'_>, waits: &mut Vec<Wait>, stats: &mut WaitStats) {
    let mut open: Vec<(u64, Timestamp)> = Vec::new();
    let mut spans: Vec<(u64, Timestamp, Timestamp)> = Vec::new();
    for a in &th.annotations {
        match a.marker {
            Marker::SpinBegin { id } => open.push((id, a.ts)),
            Marker::SpinEnd { id } => {
                if let Some(p) = open.iter().rposition(|(i, _)| *i == id) {
                    let (_, b) = open.remove(p);
                    spans.push((id, b, a.ts));
                }
            }
            _ => {}
        }
    }
    for (id, b, e) in spans {
        stats.spins += 1;
        let releaser = r
            .facts
            .flag_writes(id)
            .iter()
            .rev()
            .find(|w| w.ts <= e && w.ts >= b && w.tid != th.tid);
        let Some(&FlagAccess { ts, tid }) = releaser else {
            stats.spins_unreleased += 1;
            continue;
        };
        let key = r.entity(tid, ts);
        if key == WakerKey::None || e <= b {
            stats.spins_unreleased += 1;
            continue;
        }
        let (b, e) = (b.0, e.0);
        let mut out: Vec<Wait> = Vec::with_capacity(waits.len() + 1);
        for w in waits.drain(..) {
            if w.end <= b || w.start >= e {
                out.push(w);
            } else if w.start < b {
                out.push(Wait { end: b, ..w });
            } else if w.end > e {
                out.push(Wait { start: e, ..w });
            }
        }
        out.push(Wait {
            start: b,
            end: e,
            waker: key,
            wait_stack: PackedStack::EMPTY,
            waker_stack: PackedStack::EMPTY,
            waker_weight: 1,
        });
        out.sort_by_key(|w| w.start);
        *waits = out;
    }
}
