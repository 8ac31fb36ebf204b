//! Which vertex each recorded wait points to, thread by thread: the analysis's own
//! attribution of waits to edges, kept for analyses that act on single waits (the
//! what-if replay shrinks the waits of one edge).

use crate::findings::VertexId;
use crate::waits::{OUTSIDE, Resolver, thread_waits_and_idle};
use crate::waker::WakerKey;
use causeway_format::Timestamp;
use std::collections::BTreeMap;

/// One wait of a thread and the vertex that ended it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AttributedWait {
    /// First nanosecond waiting (a blocked segment's start, or a busy-wait's).
    pub start: Timestamp,
    /// First nanosecond after.
    pub end: Timestamp,
    /// The vertex waited for.
    pub to: VertexId,
}

/// The waits of one model thread that became edges of the graph.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ThreadWaits {
    /// The vertex the thread is part of (`None`: a thread of a process that was not
    /// recorded, which has no vertex of its own).
    pub vertex: Option<VertexId>,
    /// Its attributed waits, in time order. Waits the analysis left out (unattributed,
    /// idle polls, the wait before exit, waits before exec) are not here.
    pub waits: Vec<AttributedWait>,
    /// Starts of its idle polls, in time order: readiness waits ended by their own
    /// timeout after which the thread woke nobody (it went on waiting for the same
    /// thing, or for work).
    pub idle_polls: Vec<Timestamp>,
}

/// Every model thread's attributed waits, by the thread's index in
/// [`causeway_model::Model::threads`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WaitMap {
    /// One entry per model thread.
    pub threads: Vec<ThreadWaits>,
}

impl WaitMap {
    /// True if the wait of thread `index` starting at `start` was an idle poll.
    pub fn is_idle_poll(&self, index: usize, start: Timestamp) -> bool {
        self.threads
            .get(index)
            .is_some_and(|t| t.idle_polls.binary_search(&start).is_ok())
    }

    /// The wait of thread `index` that starts at `start`, if it was attributed.
    pub fn wait_at(&self, index: usize, start: Timestamp) -> Option<&AttributedWait> {
        let waits = &self.threads.get(index)?.waits;
        let i = waits.binary_search_by_key(&start, |w| w.start).ok()?;
        waits.get(i)
    }
}

/// Build the map from the pipeline's intermediate results: each thread's waits as
/// the wait builders made them, with entities and pseudo threads renumbered to the
/// final (merged) vertices.
pub(crate) fn build(
    r: &Resolver<'_>,
    pseudo_vid: &BTreeMap<crate::waker::Pseudo, u32>,
    groups: &[u32],
) -> WaitMap {
    let final_of = |raw: u32| groups.get(raw as usize).map(|&g| VertexId(g as usize));
    let threads = r
        .threads
        .iter()
        .zip(r.entity_of)
        .enumerate()
        .map(|(i, (_, &e))| {
            if e == OUTSIDE {
                return ThreadWaits::default();
            }
            let (waits, _, idle) = thread_waits_and_idle(i, r);
            let waits = waits
                .iter()
                .filter_map(|w| {
                    let raw = match w.waker {
                        WakerKey::Entity(x) => x,
                        WakerKey::Pseudo(p) => *pseudo_vid.get(&p)?,
                        WakerKey::None => return None,
                    };
                    Some(AttributedWait {
                        start: Timestamp(w.start),
                        end: Timestamp(w.end),
                        to: final_of(raw)?,
                    })
                })
                .collect();
            ThreadWaits {
                vertex: final_of(e),
                waits,
                idle_polls: idle.into_iter().map(Timestamp).collect(),
            }
        })
        .collect();
    WaitMap { threads }
}
