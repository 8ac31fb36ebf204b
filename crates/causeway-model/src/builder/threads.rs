//! The live threads by tid.
//!
//! Most events name a thread, and a handler often needs it more than once; a slot
//! index found once can be reused without hashing again and without holding a borrow
//! of the table across the handler's other work.

use crate::tracker::ThreadBuild;
use causeway_format::Tid;
use rustc_hash::FxHashMap;

/// Live threads: a dense vector of threads plus a tid index into it.
#[derive(Debug, Default)]
pub(super) struct ThreadTable {
    slots: Vec<ThreadBuild>,
    // Tids are small integers looked up on most events: a fast hash rather than the
    // default keyed one.
    by_tid: FxHashMap<Tid, u32>,
}

impl ThreadTable {
    /// The slot of `tid`, if it has a live incarnation.
    #[inline]
    pub(super) fn slot(&self, tid: Tid) -> Option<usize> {
        self.by_tid.get(&tid).map(|&i| i as usize)
    }

    /// The thread in slot `i` (from [`ThreadTable::slot`], with no removal since).
    #[inline]
    pub(super) fn at(&mut self, i: usize) -> &mut ThreadBuild {
        &mut self.slots[i]
    }

    pub(super) fn get(&self, tid: Tid) -> Option<&ThreadBuild> {
        self.slot(tid).map(|i| &self.slots[i])
    }

    pub(super) fn get_mut(&mut self, tid: Tid) -> Option<&mut ThreadBuild> {
        self.slot(tid).map(|i| &mut self.slots[i])
    }

    pub(super) fn contains(&self, tid: Tid) -> bool {
        self.by_tid.contains_key(&tid)
    }

    /// Add `th` (replacing any thread with its tid); returns its slot.
    pub(super) fn insert(&mut self, th: ThreadBuild) -> usize {
        if let Some(i) = self.slot(th.tid) {
            self.slots[i] = th;
            return i;
        }
        let i = self.slots.len();
        // More than 4 billion live threads cannot come from a trace that fits in memory.
        self.by_tid.insert(th.tid, i as u32);
        self.slots.push(th);
        i
    }

    /// Take `tid` out; the last slot moves into its place.
    pub(super) fn remove(&mut self, tid: Tid) -> Option<ThreadBuild> {
        let i = self.by_tid.remove(&tid)? as usize;
        let th = self.slots.swap_remove(i);
        if let Some(moved) = self.slots.get(i) {
            self.by_tid.insert(moved.tid, i as u32);
        }
        Some(th)
    }

    pub(super) fn values_mut(&mut self) -> std::slice::IterMut<'_, ThreadBuild> {
        self.slots.iter_mut()
    }

    pub(super) fn into_values(self) -> Vec<ThreadBuild> {
        self.slots
    }
}
