//! On-CPU samples: where each thread was running when the recorder's sampling clock
//! fired, kept per thread in time order.
//!
//! A sample is a stack event of kind [`StackKind::Sample`](causeway_format::StackKind)
//! that stands alone (the other stack kinds belong to the switch-out or wake-up before
//! them). At a few dozen samples per second per CPU they are few, so they are kept
//! whole: analyses can count them over any thread set or time window.

use causeway_format::{StackId, Tid, Timestamp};
use std::collections::BTreeMap;

/// One on-CPU sample of a thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CpuSample {
    /// When it was taken.
    pub ts: Timestamp,
    /// User-space stack, if taken.
    pub user: Option<StackId>,
    /// Kernel stack (the thread was in the kernel), if taken.
    pub kernel: Option<StackId>,
}

/// Samples by thread.
#[derive(Clone, Debug, Default)]
pub(crate) struct Samples {
    by_thread: BTreeMap<Tid, Vec<CpuSample>>,
    total: u64,
}

impl Samples {
    /// Take one sample (in time order).
    pub(crate) fn push(&mut self, tid: Tid, sample: CpuSample) {
        self.by_thread.entry(tid).or_default().push(sample);
        self.total += 1;
    }

    /// A thread's samples in time order.
    pub(crate) fn of(&self, tid: Tid) -> &[CpuSample] {
        self.by_thread.get(&tid).map_or(&[], Vec::as_slice)
    }

    /// A thread's samples taken in `[from, to)`.
    pub(crate) fn between(&self, tid: Tid, from: Timestamp, to: Timestamp) -> &[CpuSample] {
        let all = self.of(tid);
        let a = all.partition_point(|s| s.ts < from);
        let b = all.partition_point(|s| s.ts < to);
        &all[a..b.max(a)]
    }

    /// Hand each sample taken in one of `carried`'s stretches (sorted by carrier and
    /// start) from the carrier thread to the goroutine it ran then; the rest stay.
    pub(crate) fn hand_to_goroutines(&mut self, carried: &[crate::goview::Carried]) {
        let mut i = 0;
        while i < carried.len() {
            let carrier = carried[i].carrier;
            let n = carried[i..].partition_point(|c| c.carrier == carrier);
            let stretches = &carried[i..i + n];
            i += n;
            let Some(all) = self.by_thread.remove(&carrier) else {
                continue;
            };
            let mut kept = Vec::new();
            for s in all {
                let at = stretches.partition_point(|c| c.start <= s.ts);
                match at.checked_sub(1).map(|k| &stretches[k]) {
                    Some(c) if s.ts < c.end => {
                        self.by_thread.entry(c.goroutine).or_default().push(s)
                    }
                    _ => kept.push(s),
                }
            }
            if !kept.is_empty() {
                self.by_thread.insert(carrier, kept);
            }
        }
        // A goroutine moves between carriers: its samples come from several, each in
        // time order.
        let goroutines: std::collections::BTreeSet<Tid> =
            carried.iter().map(|c| c.goroutine).collect();
        for g in goroutines {
            if let Some(v) = self.by_thread.get_mut(&g) {
                v.sort_by_key(|s| s.ts);
            }
        }
    }

    /// Threads with at least one sample.
    pub(crate) fn threads(&self) -> impl Iterator<Item = Tid> + '_ {
        self.by_thread.keys().copied()
    }

    /// Samples of all threads.
    pub(crate) fn total(&self) -> u64 {
        self.total
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(ts: u64) -> CpuSample {
        CpuSample {
            ts: Timestamp(ts),
            user: Some(StackId(1)),
            kernel: None,
        }
    }

    #[test]
    fn samples_are_kept_per_thread_and_found_by_time() {
        let mut x = Samples::default();
        for t in [10, 20, 30, 40] {
            x.push(Tid(1), s(t));
        }
        x.push(Tid(2), s(25));
        assert_eq!(x.total(), 5);
        assert_eq!(x.of(Tid(1)).len(), 4);
        assert_eq!(x.of(Tid(3)).len(), 0);
        let w = x.between(Tid(1), Timestamp(20), Timestamp(40));
        assert_eq!(w.iter().map(|s| s.ts.0).collect::<Vec<_>>(), vec![20, 30]);
        assert!(x.between(Tid(1), Timestamp(50), Timestamp(10)).is_empty());
        assert_eq!(x.threads().collect::<Vec<_>>(), vec![Tid(1), Tid(2)]);
    }

    #[test]
    fn a_carriers_samples_go_to_the_goroutine_it_ran_then() {
        use crate::goview::Carried;
        let mut x = Samples::default();
        for t in [10, 20, 30, 40, 50] {
            x.push(Tid(1), s(t));
        }
        x.push(Tid(2), s(35));
        let c = |carrier, start, end, goroutine| Carried {
            carrier: Tid(carrier),
            start: Timestamp(start),
            end: Timestamp(end),
            goroutine: Tid(goroutine),
        };
        // Goroutine 100 ran on thread 1 in [15, 35), then on thread 2 in [35, 45).
        x.hand_to_goroutines(&[c(1, 15, 35, 100), c(1, 45, 60, 101), c(2, 35, 45, 100)]);
        let ts = |t| x.of(Tid(t)).iter().map(|s| s.ts.0).collect::<Vec<_>>();
        assert_eq!(ts(100), vec![20, 30, 35]);
        assert_eq!(ts(101), vec![50]);
        assert_eq!(ts(1), vec![10, 40]);
        assert!(ts(2).is_empty());
        assert_eq!(x.total(), 6);
    }
}
