//! Idle polls: a wait for work that its own timeout ended, after which the thread woke
//! nobody before it waited again: an event loop's readiness call (epoll_wait, poll,
//! select), or a worker's timed poll of its queue (a call site where other threads end
//! most of its waits). It waited for work that did not come; the timer is not what it
//! depended on. As an edge
//! to the timer such a wait breaks the cycle of the threads that do the work: an
//! idle network thread beside a busy one (the same code, one vertex once merged), an
//! acceptor with no new connection, each polling with a timeout. Left out of the
//! edges and counted; still time off a CPU. A loop that uses the timeout as its clock
//! (it flushes or hands work on after it) wakes someone before its next wait and
//! keeps its edge.

use crate::wait::Wait;
use crate::waker::{Pseudo, WakerKey};
use causeway_format::{StackId, Tables, Tid};
use std::collections::HashMap;

/// The C library's readiness calls, by the name of their wrapper (leading underscores
/// removed).
const READINESS_CALLS: [&str; 8] = [
    "epoll_wait",
    "epoll_pwait",
    "epoll_pwait2",
    "poll",
    "ppoll",
    "select",
    "pselect",
    "pselect6",
];

/// Whether the innermost named frame of a user stack is a readiness call.
fn in_readiness_call(tables: &Tables, user: StackId) -> bool {
    let Some(stack) = tables.stack(user) else {
        return false;
    };
    let is_call = |name: &str| READINESS_CALLS.contains(&name.trim_start_matches('_'));
    stack
        .frames
        .iter()
        .filter_map(|&f| tables.frame(f))
        .find_map(|f| {
            let inner = f.inlined.first().map(|i| tables.string(i.symbol));
            let name = inner.unwrap_or_else(|| tables.string(f.symbol));
            (!name.is_empty()).then(|| is_call(name) || is_call(tables.string(f.symbol)))
        })
        .unwrap_or(false)
}

/// When each thread woke another, sorted, for the "woke nobody" test.
#[derive(Default)]
pub(crate) struct WakesBy(HashMap<Tid, Vec<u64>>);

impl WakesBy {
    /// Every wake-up by a thread in the model.
    pub(crate) fn of(model: &causeway_model::Model) -> WakesBy {
        let mut by: HashMap<Tid, Vec<u64>> = HashMap::new();
        for th in model.threads() {
            for seg in &th.segments {
                if let causeway_model::SegmentState::Blocked { waker: Some(w), .. } = &seg.state
                    && let causeway_format::Waker::Thread { tid } = w.waker
                {
                    by.entry(tid).or_default().push(w.ts.0);
                }
            }
        }
        for v in by.values_mut() {
            v.sort_unstable();
        }
        WakesBy(by)
    }

    /// Whether `tid` woke a thread in `[from, to)`.
    fn any(&self, tid: Tid, from: u64, to: u64) -> bool {
        self.0.get(&tid).is_some_and(|v| {
            let i = v.partition_point(|&t| t < from);
            v.get(i).is_some_and(|&t| t < to)
        })
    }
}

/// Per user stack (call site; `None` for waits without one), how many of a thread's
/// waits there other threads ended and how many its own timer did.
fn ended_by_site(waits: &[Wait]) -> HashMap<Option<StackId>, (u32, u32)> {
    let mut by: HashMap<Option<StackId>, (u32, u32)> = HashMap::new();
    for w in waits {
        let e = by.entry(w.wait_stack.user()).or_default();
        match w.waker {
            WakerKey::Entity(_) => e.0 += 1,
            WakerKey::Pseudo(Pseudo::Timer) => e.1 += 1,
            _ => {}
        }
    }
    by
}

/// Indices of the idle waits among a thread's time-ordered waits; `end` is when the
/// thread's timeline ends (the run after its last wait lasts until then). A wait its
/// own timer ended is idle when the thread woke nobody before its next wait and the
/// wait was for work: a readiness call, or a call site where other threads end most of
/// the thread's waits (a worker's timed poll of its queue: work comes from threads, and
/// the timeout only bounds the wait). A sleep loop's waits, all ended by the timer,
/// are never idle.
pub(crate) fn idle_polls(
    tid: Tid,
    waits: &[Wait],
    end: u64,
    tables: &Tables,
    wakes: &WakesBy,
) -> Vec<usize> {
    let mut out = Vec::new();
    let mut unknown = Vec::new();
    let mut timed = 0usize;
    let mut sites: Option<HashMap<Option<StackId>, (u32, u32)>> = None;
    for (i, w) in waits.iter().enumerate() {
        if w.waker != WakerKey::Pseudo(Pseudo::Timer) {
            continue;
        }
        let next = waits.get(i + 1).map_or(end, |n| n.start);
        if wakes.any(tid, w.end, next) {
            continue;
        }
        let Some(user) = w.wait_stack.user() else {
            unknown.push(i);
            continue;
        };
        timed += 1;
        let for_work = in_readiness_call(tables, user) || {
            let by = sites.get_or_insert_with(|| ended_by_site(waits));
            by.get(&Some(user))
                .is_some_and(|&(threads, timer)| threads > timer)
        };
        if for_work {
            out.push(i);
        }
    }
    // A wait with no stack (one that began before the recording) is like the thread's
    // other timed-out waits: idle when most of those were.
    if !out.is_empty() && out.len() * 2 >= timed {
        out.extend(unknown);
        out.sort_unstable();
    }
    out
}
