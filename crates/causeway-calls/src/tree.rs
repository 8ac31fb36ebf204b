//! Per-thread call trees from method markers.
//!
//! Calls are kept in one vector per thread in entry order (a pre-order walk of the
//! tree), each with its parent, so subtrees are contiguous. An exit closes the
//! innermost open call; an exit with nothing open is counted and ignored; calls still
//! open at the end end at the given end time (the dump), or at the thread's last
//! marker, and are flagged `open` (a thread stuck at the dump has its stuck chain open).

use causeway_format::{Marker, StringId, Tid, Timestamp};
use causeway_model::facts::MarkerRecord;
use rustc_hash::FxHashMap;

/// Index of a call in its thread's [`crate::ThreadCalls::calls`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CallId(pub u32);

/// One call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Call {
    /// Function name.
    pub name: StringId,
    /// Entry.
    pub start: Timestamp,
    /// Exit (or the thread's last marker if `open`).
    pub end: Timestamp,
    /// The caller, if recorded.
    pub parent: Option<CallId>,
    /// Depth (0 for a root).
    pub depth: u32,
    /// Time in children, nanoseconds.
    pub child_ns: u64,
    /// No exit was recorded.
    pub open: bool,
}

impl Call {
    /// Inclusive duration in nanoseconds.
    pub fn total_ns(&self) -> u64 {
        self.end.0.saturating_sub(self.start.0)
    }

    /// Self time (not in a child) in nanoseconds.
    pub fn self_ns(&self) -> u64 {
        self.total_ns().saturating_sub(self.child_ns)
    }
}

/// Trees of one thread.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tree {
    /// Calls in entry order.
    pub calls: Vec<Call>,
    /// Exits that closed nothing.
    pub stray_exits: u64,
    /// Exits whose name differed from the call they closed.
    pub mismatched_exits: u64,
}

#[derive(Default)]
struct Builder {
    tree: Tree,
    open: Vec<u32>,
    last: Timestamp,
}

impl Builder {
    fn enter(&mut self, ts: Timestamp, name: StringId) {
        let parent = self.open.last().copied();
        let id = self.tree.calls.len() as u32;
        self.tree.calls.push(Call {
            name,
            start: ts,
            end: ts,
            parent: parent.map(CallId),
            depth: self.open.len() as u32,
            child_ns: 0,
            open: false,
        });
        self.open.push(id);
    }

    fn exit(&mut self, ts: Timestamp, name: StringId) {
        let Some(id) = self.open.pop() else {
            self.tree.stray_exits += 1;
            return;
        };
        self.close(id, ts, false);
        if self.tree.calls[id as usize].name != name {
            self.tree.mismatched_exits += 1;
        }
    }

    fn close(&mut self, id: u32, ts: Timestamp, open: bool) {
        let c = &mut self.tree.calls[id as usize];
        c.end = ts.max(c.start);
        c.open = open;
        let (total, parent) = (c.total_ns(), c.parent);
        if let Some(p) = parent {
            self.tree.calls[p.0 as usize].child_ns += total;
        }
    }

    fn finish(mut self, end: Option<Timestamp>) -> Tree {
        let ts = end.map_or(self.last, |e| e.max(self.last));
        while let Some(id) = self.open.pop() {
            self.close(id, ts, true);
        }
        self.tree
    }
}

/// Build every thread's tree from markers in trace order (threads sorted by tid);
/// calls still open end at `end` if given (the dump), else at their thread's last marker.
pub fn build(markers: &[MarkerRecord], end: Option<Timestamp>) -> Vec<(Tid, Tree)> {
    let mut by_tid: FxHashMap<Tid, Builder> = FxHashMap::default();
    for m in markers {
        let b = by_tid.entry(m.tid).or_default();
        b.last = b.last.max(m.ts);
        match m.marker {
            Marker::MethodEnter { method } => b.enter(m.ts, method),
            Marker::MethodExit { method } => b.exit(m.ts, method),
            _ => {}
        }
    }
    let mut out: Vec<(Tid, Tree)> = by_tid
        .into_iter()
        .map(|(t, b)| (t, b.finish(end)))
        .filter(|(_, t)| !t.calls.is_empty())
        .collect();
    out.sort_by_key(|(t, _)| *t);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(ts: u64, tid: u32, marker: Marker) -> MarkerRecord {
        MarkerRecord {
            ts: Timestamp(ts),
            tid: Tid(tid),
            marker,
        }
    }

    #[test]
    fn nested_calls_get_self_time_and_open_calls_end_at_the_last_marker() {
        let (a, b) = (StringId(1), StringId(2));
        let m = vec![
            rec(0, 1, Marker::MethodEnter { method: a }),
            rec(2, 1, Marker::MethodEnter { method: b }),
            rec(5, 1, Marker::MethodExit { method: b }),
            rec(6, 1, Marker::MethodEnter { method: b }),
            rec(9, 1, Marker::MethodExit { method: a }), // wrong name: counted
            rec(10, 1, Marker::MethodExit { method: a }),
            rec(11, 1, Marker::MethodExit { method: a }), // stray
            rec(12, 1, Marker::MethodEnter { method: b }),
            rec(20, 1, Marker::MethodEnter { method: a }),
        ];
        let trees = build(&m, None);
        let t = &trees[0].1;
        assert_eq!(t.calls.len(), 5);
        assert_eq!((t.calls[0].total_ns(), t.calls[0].self_ns()), (10, 4));
        assert_eq!((t.stray_exits, t.mismatched_exits), (1, 1));
        assert!(t.calls[3].open && t.calls[4].open);
        assert_eq!(t.calls[3].end, Timestamp(20));
        assert_eq!(t.calls[4].parent, Some(CallId(3)));
    }
}
