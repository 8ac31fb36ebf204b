//! Device hints of wake-ups, by woken thread and wake-up time.
//!
//! One hint is stored per interrupt-context wake-up, millions in a long trace. A hash
//! map keyed by `(thread, time)` touched a random cache line per insert; appending to
//! the woken thread's own list in time order is sequential, and the analysis, which
//! walks each thread's waits in time order, looks them up close to each other.

use causeway_format::{DevId, StringId, Tid, Timestamp};
use rustc_hash::FxHashMap;

/// Which devices may be behind one wake-up, from the device events just before it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DeviceHint {
    /// Block device whose request completed just before, on the waking CPU.
    pub disk_here: Option<DevId>,
    /// Block device whose request completed just before, on any CPU (kworker hand-off).
    pub disk_any: Option<DevId>,
    /// Network device that received a packet just before, on the waking CPU.
    pub nic_here: Option<StringId>,
    /// Block device the waking kernel I/O thread last issued a request to (ext4's
    /// journal thread writes the commit an fsync waits for, then wakes it).
    pub disk_issued: Option<DevId>,
}

/// Hints by thread, each thread's in wake-up time order once [`DeviceHints::finish`]ed.
#[derive(Clone, Debug, Default)]
pub(crate) struct DeviceHints {
    by_tid: FxHashMap<Tid, Vec<(Timestamp, DeviceHint)>>,
}

impl DeviceHints {
    /// Remember the hint of `tid`'s wake-up at `ts` (a later one for the same key wins).
    pub(crate) fn insert(&mut self, tid: Tid, ts: Timestamp, hint: DeviceHint) {
        self.by_tid.entry(tid).or_default().push((ts, hint));
    }

    /// Order each thread's hints by time, keeping the last one given for a time. Events
    /// come in time order, so this is normally a check.
    pub(crate) fn finish(&mut self) {
        for v in self.by_tid.values_mut() {
            if !v.is_sorted_by_key(|(ts, _)| *ts) {
                v.sort_by_key(|(ts, _)| *ts);
            }
            // `later` follows `kept` in insertion order (the sort is stable).
            v.dedup_by(|later, kept| {
                let same = later.0 == kept.0;
                if same {
                    *kept = *later;
                }
                same
            });
        }
    }

    /// The hint of `tid`'s wake-up at `ts`, if one was stored.
    pub(crate) fn get(&self, tid: Tid, ts: Timestamp) -> Option<&DeviceHint> {
        let v = self.by_tid.get(&tid)?;
        let i = v.binary_search_by_key(&ts, |(t, _)| *t).ok()?;
        v.get(i).map(|(_, h)| h)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hint(d: u32) -> DeviceHint {
        DeviceHint {
            disk_here: Some(DevId(d)),
            ..DeviceHint::default()
        }
    }

    #[test]
    fn out_of_order_and_repeated_keys_behave_like_a_map() {
        let mut h = DeviceHints::default();
        h.insert(Tid(1), Timestamp(30), hint(1));
        h.insert(Tid(1), Timestamp(10), hint(2));
        h.insert(Tid(1), Timestamp(30), hint(3));
        h.insert(Tid(2), Timestamp(10), hint(4));
        h.finish();
        assert_eq!(h.get(Tid(1), Timestamp(30)), Some(&hint(3)));
        assert_eq!(h.get(Tid(1), Timestamp(10)), Some(&hint(2)));
        assert_eq!(h.get(Tid(2), Timestamp(10)), Some(&hint(4)));
        assert_eq!(h.get(Tid(2), Timestamp(30)), None);
        assert_eq!(h.get(Tid(3), Timestamp(10)), None);
    }
}
