//! Linking each wake-up to the waker's segment, once the threads are in their final
//! order (segment ids are positions in it).

use crate::segment::{Segment, SegmentId, SegmentState};
use crate::thread::Thread;
use causeway_format::{Tid, Timestamp, Waker};
use rustc_hash::FxHashMap;
use std::ops::Range;

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

/// The segment of `th` at `ts`: the one that contains it, or the running segment that
/// ends exactly then (a waker that switched out at the instant it woke someone).
fn segment_at(th: &Thread, ts: Timestamp) -> Option<u32> {
    let segs: &[Segment] = &th.segments;
    let i = segs.partition_point(|s| s.start <= ts).checked_sub(1)?;
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

/// Set `waker_segment` of every wake-up by a thread of the model.
pub(super) fn link_wakers(threads: &mut [Thread]) {
    // Found first, then written: the waker may be any thread, including the wakee.
    let ranges = tid_ranges(threads);
    let mut links: Vec<(usize, usize, SegmentId)> = Vec::new();
    for (ti, th) in threads.iter().enumerate() {
        for (si, seg) in th.segments.iter().enumerate() {
            let Some(w) = seg.wake() else { continue };
            let Waker::Thread { tid } = w.waker else {
                continue;
            };
            if tid.is_idle() {
                continue;
            }
            let Some(wt) = ranges
                .get(&tid)
                .and_then(|r| incarnation(threads, r.clone(), w.ts))
            else {
                continue;
            };
            let Some(ws) = threads.get(wt as usize).and_then(|t| segment_at(t, w.ts)) else {
                continue;
            };
            links.push((
                ti,
                si,
                SegmentId {
                    thread: wt,
                    index: ws,
                },
            ));
        }
    }
    for (ti, si, id) in links {
        if let Some(SegmentState::Blocked { waker: Some(w), .. }) = threads
            .get_mut(ti)
            .and_then(|t| t.segments.get_mut(si))
            .map(|s| &mut s.state)
        {
            w.waker_segment = Some(id);
        }
    }
}
