//! Linking each wake-up to the waker's segment (segment ids are positions in the
//! finished model's thread list, so this runs on a finished model).

use crate::segment::{Segment, SegmentId};
use crate::thread::Thread;
use causeway_format::{Tid, Timestamp, Waker};
use rayon::prelude::*;
use rustc_hash::FxHashMap;
use std::ops::Range;
use std::sync::OnceLock;

/// The links of a model, computed on first use. Derived data: two models are equal
/// whether or not either has computed them yet.
#[derive(Clone, Debug, Default)]
pub(crate) struct WakeLinks(OnceLock<Vec<(SegmentId, SegmentId)>>);

impl WakeLinks {
    /// The links of `threads` (the model's), computing them the first time.
    pub(crate) fn get(&self, threads: &[Thread]) -> &[(SegmentId, SegmentId)] {
        self.0.get_or_init(|| link_wakers(threads))
    }
}

impl PartialEq for WakeLinks {
    fn eq(&self, _: &WakeLinks) -> bool {
        true
    }
}

impl Eq for WakeLinks {}

/// Positions of each tid's threads in the sorted thread list: one hash lookup per
/// wake-up instead of two binary searches over every thread.
fn tid_ranges(threads: &[Thread]) -> FxHashMap<Tid, Range<usize>> {
    let mut ranges: FxHashMap<Tid, Range<usize>> = FxHashMap::default();
    for (i, t) in threads.iter().enumerate() {
        ranges
            .entry(t.tid)
            .and_modify(|r| r.end = i + 1)
            .or_insert(i..i + 1);
    }
    ranges
}

/// The incarnation of a tid alive at `ts`, as [`crate::Model::thread_index_at`] picks it.
fn incarnation(threads: &[Thread], range: Range<usize>, ts: Timestamp) -> Option<u32> {
    let first = range.start;
    let started = range.rev().find(|&i| {
        threads
            .get(i)
            .and_then(|t| t.span())
            .is_some_and(|s| s.start <= ts)
    });
    u32::try_from(started.unwrap_or(first)).ok()
}

/// The segment of a thread at `ts`, given `i`, the last segment that starts at or
/// before `ts`: that one, or the running segment that ends exactly then (a waker that
/// switched out at the instant it woke someone).
fn pick(segs: &[Segment], i: usize, ts: Timestamp) -> Option<u32> {
    let seg = segs.get(i)?;
    let before = i.checked_sub(1).and_then(|p| segs.get(p));
    let found =
        if !seg.state.is_running() && before.is_some_and(|p| p.end == ts && p.state.is_running()) {
            i - 1
        } else if ts < seg.end || seg.state.is_running() {
            // `ts == end` only for the last segment: a running thread at the trace's end.
            i
        } else {
            return None;
        };
    u32::try_from(found).ok()
}

/// For every wake-up by a thread of the model, `(wakee's segment, waker's segment)`,
/// in the order of the wakee's id.
///
/// A binary search in the waker's timeline per wake-up touches cache lines all over a
/// model of millions of segments. Instead the wake-ups are sorted by waker and time
/// and each waker's timeline is swept once with a cursor, then the links are put back
/// in wakee order: two sorts and sequential passes.
fn link_wakers(threads: &[Thread]) -> Vec<(SegmentId, SegmentId)> {
    let ranges = tid_ranges(threads);
    let mut wakes: Vec<(u32, Timestamp, SegmentId)> = threads
        .par_iter()
        .enumerate()
        .map(|(ti, th)| thread_wakes(threads, &ranges, ti, th))
        .flatten_iter()
        .collect();
    wakes.par_sort_unstable_by_key(|&(waker, ts, wakee)| (waker, ts, wakee));
    let mut links: Vec<(SegmentId, SegmentId)> = wakes
        .par_chunk_by(|a, b| a.0 == b.0)
        .flat_map_iter(|group| sweep(threads, group))
        .collect();
    links.par_sort_unstable_by_key(|&(wakee, _)| wakee);
    links
}

/// `(waker thread, time, wakee's segment)` of one wakee thread's waits ended by a
/// thread of the model.
fn thread_wakes(
    threads: &[Thread],
    ranges: &FxHashMap<Tid, Range<usize>>,
    ti: usize,
    th: &Thread,
) -> Vec<(u32, Timestamp, SegmentId)> {
    let mut out = Vec::new();
    let Ok(ti) = u32::try_from(ti) else {
        return out;
    };
    for (si, seg) in (0u32..).zip(&th.segments) {
        let Some(w) = seg.wake() else { continue };
        let Waker::Thread { tid } = w.waker else {
            continue;
        };
        if tid.is_idle() {
            continue;
        }
        // Data a thread sent: its segment when it sent it (see DataWake::link_time).
        let at = match th.data_wakes.is_empty() {
            true => w.ts,
            false => th.data_wake(si).map_or(w.ts, |d| d.link_time(w.ts)),
        };
        if let Some(wt) = ranges
            .get(&tid)
            .and_then(|r| incarnation(threads, r.clone(), at))
        {
            let wakee = SegmentId {
                thread: ti,
                index: si,
            };
            out.push((wt, at, wakee));
        }
    }
    out
}

/// The links of one waker's wake-ups (all with the same waker, in time order).
fn sweep(threads: &[Thread], group: &[(u32, Timestamp, SegmentId)]) -> Vec<(SegmentId, SegmentId)> {
    let Some(&(wt, _, _)) = group.first() else {
        return Vec::new();
    };
    let Some(segs) = threads.get(wt as usize).map(|t| t.segments.as_slice()) else {
        return Vec::new();
    };
    let mut out = Vec::with_capacity(group.len());
    // The last segment starting at or before the current time; times only grow.
    let mut cursor = 0usize;
    for &(_, ts, wakee) in group {
        while segs.get(cursor + 1).is_some_and(|s| s.start <= ts) {
            cursor += 1;
        }
        if segs.first().is_none_or(|s| s.start > ts) {
            continue;
        }
        if let Some(index) = pick(segs, cursor, ts) {
            out.push((wakee, SegmentId { thread: wt, index }));
        }
    }
    out
}
