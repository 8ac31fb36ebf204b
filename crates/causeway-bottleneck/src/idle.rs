//! Idle polls: an event loop's wait for readiness (epoll_wait, poll, select) that its
//! own timeout ended, after which the thread woke nobody before it waited again. It
//! waited for work that did not come; the timer is not what it depended on. As an edge
//! to the timer such a wait breaks the cycle of the threads that do the work: an
//! idle network thread beside a busy one (the same code, one vertex once merged), an
//! acceptor with no new connection, each polling with a timeout. Left out of the
//! edges and counted; still time off a CPU. A loop that uses the timeout as its clock
//! (it flushes or hands work on after it) wakes someone before its next wait and
//! keeps its edge.

use crate::waits::Wait;
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

/// Indices of the idle polls among a thread's time-ordered waits; `end` is when the
/// thread's timeline ends (the run after its last wait lasts until then).
pub(crate) fn idle_polls(
    tid: Tid,
    waits: &[Wait],
    end: u64,
    tables: &Tables,
    wakes: &WakesBy,
) -> Vec<usize> {
    let mut out = Vec::new();
    for (i, w) in waits.iter().enumerate() {
        if w.waker != WakerKey::Pseudo(Pseudo::Timer) {
            continue;
        }
        let Some(user) = w.wait_stack.user() else {
            continue;
        };
        let next = waits.get(i + 1).map_or(end, |n| n.start);
        if in_readiness_call(tables, user) && !wakes.any(tid, w.end, next) {
            out.push(i);
        }
    }
    out
}
