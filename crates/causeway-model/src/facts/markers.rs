//! Flag accesses and span/method markers, kept as compact records.
//!
//! Flag writes are looked up by address (who ended a busy-wait on that flag), so they
//! are grouped by address; span and method markers are kept in trace order for the
//! analyses that rebuild call trees or spans from them.

use causeway_format::{Marker, Tid, Timestamp};
use rustc_hash::FxHashMap;

/// One access to a shared flag by a thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlagAccess {
    /// When the thread emitted the marker.
    pub ts: Timestamp,
    /// The thread.
    pub tid: Tid,
}

/// One span or method marker.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MarkerRecord {
    /// When the thread emitted it.
    pub ts: Timestamp,
    /// The thread.
    pub tid: Tid,
    /// What it says: one of [`Marker::SpanBegin`], [`Marker::SpanEnd`],
    /// [`Marker::MethodEnter`], [`Marker::MethodExit`].
    pub marker: Marker,
}

/// Markers gathered from the event stream.
#[derive(Clone, Debug, Default)]
pub(crate) struct Markers {
    writes: FxHashMap<u64, Vec<FlagAccess>>,
    reads: FxHashMap<u64, Vec<FlagAccess>>,
    records: Vec<MarkerRecord>,
}

impl Markers {
    /// Take one marker event (in time order). Busy-wait and false wake-up markers are
    /// the model builder's and are ignored here.
    pub(crate) fn push(&mut self, ts: Timestamp, tid: Tid, marker: Marker) {
        let access = FlagAccess { ts, tid };
        match marker {
            Marker::FlagWrite { addr } => self.writes.entry(addr).or_default().push(access),
            Marker::FlagRead { addr } => self.reads.entry(addr).or_default().push(access),
            // A watchpoint's hit is the same fact as the in-process recorder's marker.
            Marker::DataFlag {
                addr, access: a, ..
            } => {
                let list = if a.is_write() {
                    &mut self.writes
                } else {
                    &mut self.reads
                };
                list.entry(addr).or_default().push(access);
            }
            Marker::SpanBegin { .. }
            | Marker::SpanEnd { .. }
            | Marker::MethodEnter { .. }
            | Marker::MethodExit { .. } => self.records.push(MarkerRecord { ts, tid, marker }),
            Marker::SpinBegin { .. } | Marker::SpinEnd { .. } | Marker::FalseWakeup => {}
        }
    }

    pub(crate) fn flag_writes(&self, addr: u64) -> &[FlagAccess] {
        self.writes.get(&addr).map_or(&[], Vec::as_slice)
    }

    pub(crate) fn flag_reads(&self, addr: u64) -> &[FlagAccess] {
        self.reads.get(&addr).map_or(&[], Vec::as_slice)
    }

    /// Addresses of every flag written or read, sorted.
    pub(crate) fn flag_addresses(&self) -> Vec<u64> {
        let mut a: Vec<u64> = self
            .writes
            .keys()
            .chain(self.reads.keys())
            .copied()
            .collect();
        a.sort_unstable();
        a.dedup();
        a
    }

    pub(crate) fn records(&self) -> &[MarkerRecord] {
        &self.records
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use causeway_format::StringId;

    #[test]
    fn flags_by_address_and_spans_in_order() {
        let mut m = Markers::default();
        m.push(Timestamp(1), Tid(1), Marker::FlagWrite { addr: 8 });
        m.push(Timestamp(2), Tid(2), Marker::FlagRead { addr: 8 });
        m.push(Timestamp(3), Tid(3), Marker::FlagWrite { addr: 8 });
        let name = StringId(1);
        m.push(Timestamp(4), Tid(1), Marker::SpanBegin { name, id: 5 });
        m.push(Timestamp(5), Tid(1), Marker::FalseWakeup);
        m.push(Timestamp(6), Tid(1), Marker::SpanEnd { name, id: 5 });
        let w: Vec<u32> = m.flag_writes(8).iter().map(|a| a.tid.0).collect();
        assert_eq!(w, vec![1, 3]);
        assert_eq!(m.flag_reads(8).len(), 1);
        assert!(m.flag_writes(9).is_empty());
        let ts: Vec<u64> = m.records().iter().map(|r| r.ts.0).collect();
        assert_eq!(ts, vec![4, 6]);
    }

    #[test]
    fn watchpoint_hits_are_flag_writes_and_reads() {
        use causeway_format::DataFlagAccess;
        let mut m = Markers::default();
        let hit = |access| Marker::DataFlag {
            addr: 16,
            access,
            ip: 0x401000,
        };
        m.push(Timestamp(1), Tid(7), hit(DataFlagAccess::Write));
        m.push(Timestamp(2), Tid(8), hit(DataFlagAccess::Read));
        m.push(Timestamp(3), Tid(8), hit(DataFlagAccess::Read));
        assert_eq!(m.flag_writes(16).len(), 1);
        assert_eq!(m.flag_writes(16)[0].tid, Tid(7));
        let r: Vec<u64> = m.flag_reads(16).iter().map(|a| a.ts.0).collect();
        assert_eq!(r, vec![2, 3]);
        assert_eq!(m.flag_addresses(), vec![16]);
    }
}
