//! Linking each wake-up to the waker's segment, once the threads are in their final
//! order (segment ids are positions in it).

use crate::model::thread_index_at;
use crate::segment::{Segment, SegmentId, SegmentState};
use crate::thread::Thread;
use causeway_format::{Timestamp, Waker};

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
            let Some(wt) = thread_index_at(threads, tid, w.ts) else {
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
