//! Which threads a profile counts: by tid, by process, by name.

use causeway_format::{Tgid, Tid, Timestamp};
use causeway_model::{Thread, Trace};

/// A thread filter; the empty selection takes every thread. A thread must pass every
/// filter given.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Selection {
    /// Only these threads.
    pub tids: Vec<Tid>,
    /// Only threads of these processes.
    pub tgids: Vec<Tgid>,
    /// Only threads with this name, or of a process with this name or executable file
    /// name.
    pub comm: Option<String>,
}

impl Selection {
    /// True if no filter is set.
    pub fn is_all(&self) -> bool {
        self.tids.is_empty() && self.tgids.is_empty() && self.comm.is_none()
    }

    /// Does the thread pass?
    pub fn matches_thread(&self, trace: &Trace, t: &Thread) -> bool {
        if self.is_all() {
            return true;
        }
        if !self.tids.is_empty() && !self.tids.contains(&t.tid) {
            return false;
        }
        if !self.tgids.is_empty() && !t.tgid.is_some_and(|g| self.tgids.contains(&g)) {
            return false;
        }
        match &self.comm {
            None => true,
            Some(c) => t.comm == *c || process_named(trace, t.tgid, c),
        }
    }

    /// Does the thread `tid`, as it was at `ts`, pass? A thread the model does not
    /// know passes only the empty selection.
    pub fn matches_at(&self, trace: &Trace, tid: Tid, ts: Timestamp) -> bool {
        if self.is_all() {
            return true;
        }
        let model = trace.model();
        model
            .thread_index_at(tid, ts)
            .and_then(|i| model.thread_by_index(i))
            .is_some_and(|t| self.matches_thread(trace, t))
    }
}

fn process_named(trace: &Trace, tgid: Option<Tgid>, name: &str) -> bool {
    let Some(p) = tgid.and_then(|g| trace.model().process(g)) else {
        return false;
    };
    p.comm == name || p.exe().rsplit('/').next() == Some(name)
}
