//! The replay: every segment of every thread gets a new start and end, computed in the
//! order of the recorded ends, from rules that keep the recorded dependencies.

use causeway_format::Waker;
use causeway_model::{Model, SegmentId, SegmentState};

/// How long a segment lasts in the replay.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Rule {
    /// A fixed length (CPU bursts, runnable delays, timers, devices, changed waits).
    Fixed(u64),
    /// Until another thread reaches a point of its timeline: `offset` nanoseconds
    /// (replayed) into its segment `seg`.
    Point { seg: SegmentId, offset: u64 },
    /// No earlier than this recorded time (waits on the world outside the recording).
    Until(u64),
}

/// Not yet computed.
const UNSET: u64 = u64::MAX;

/// The replayed timelines: a new end for every segment of every thread.
#[derive(Clone, Debug)]
pub(crate) struct Replayed {
    /// By thread index, then segment index.
    ends: Vec<Vec<u64>>,
}

impl Replayed {
    /// The replayed end of a segment.
    pub(crate) fn end(&self, id: SegmentId) -> Option<u64> {
        let v = *self.ends.get(id.thread as usize)?.get(id.index as usize)?;
        (v != UNSET).then_some(v)
    }
}

/// Where a thread's timeline begins: at the point of its creator's timeline where it
/// was created (so a thread started earlier in the replay starts earlier), else at its
/// recorded start.
fn start_rule(model: &Model, thread: u32) -> Rule {
    let Some(t) = model.thread_by_index(thread) else {
        return Rule::Until(0);
    };
    let first = t.segments.first().map_or(0, |s| s.start.0);
    let creator = t.created.zip(t.parent_tid).and_then(|(at, parent)| {
        let pi = model.thread_index_at(parent, at)?;
        let p = model.thread_by_index(pi)?;
        let index = p
            .segments
            .partition_point(|s| s.start <= at)
            .checked_sub(1)?;
        let seg = p.segments.get(index)?;
        Some(Rule::Point {
            seg: SegmentId {
                thread: pi,
                index: index as u32,
            },
            offset: at.0.saturating_sub(seg.start.0),
        })
    });
    creator.unwrap_or(Rule::Until(first))
}

/// What every replay of one model shares: the order segments are computed in and
/// where each thread begins.
#[derive(Clone, Debug)]
pub(crate) struct Plan {
    /// Segments by recorded end (then start): a segment's replayed end needs its own
    /// start (the end of the thread's segment before) and, for a point, the start of
    /// the other thread's segment, which began before the recorded wake-up and so
    /// ended earlier.
    order: Vec<SegmentId>,
    /// Each thread's start rule.
    starts: Vec<Rule>,
}

impl Plan {
    /// The plan of a model.
    pub(crate) fn new(model: &Model) -> Plan {
        let threads = model.threads().as_slice();
        let mut keyed: Vec<(u64, u64, SegmentId)> = Vec::new();
        for (ti, t) in (0u32..).zip(threads) {
            for (si, s) in (0u32..).zip(&t.segments) {
                let id = SegmentId {
                    thread: ti,
                    index: si,
                };
                keyed.push((s.end.0, s.start.0, id));
            }
        }
        keyed.sort_unstable();
        Plan {
            order: keyed.into_iter().map(|(_, _, id)| id).collect(),
            starts: (0..threads.len() as u32)
                .map(|t| start_rule(model, t))
                .collect(),
        }
    }
}

/// Replay the model with `rule` giving each segment's rule and `scale` how a point's
/// recorded offset into a segment maps into the replay (CPU bursts shrunk by a factor
/// move the points inside them).
pub(crate) fn replay(
    model: &Model,
    plan: &Plan,
    rule: &dyn Fn(SegmentId) -> Rule,
    scale: &dyn Fn(SegmentId, u64) -> u64,
) -> Replayed {
    let threads = model.threads().as_slice();
    let mut ends: Vec<Vec<u64>> = threads
        .iter()
        .map(|t| vec![UNSET; t.segments.len()])
        .collect();
    let mut starts = vec![UNSET; threads.len()];
    // Per thread: its last segment was a wait whose waker got there before it began
    // (the replayed thread found its condition met and never slept).
    let mut unslept = vec![false; threads.len()];
    let point_time = |ends: &Vec<Vec<u64>>, starts: &Vec<u64>, seg: SegmentId, offset: u64| {
        let start = if seg.index == 0 {
            starts[seg.thread as usize]
        } else {
            ends[seg.thread as usize][seg.index as usize - 1]
        };
        (start != UNSET).then(|| start + scale(seg, offset))
    };
    for &id in &plan.order {
        let (ti, si) = (id.thread as usize, id.index as usize);
        let Some(seg) = threads[ti].segments.get(si) else {
            continue;
        };
        let (rec_start, rec_end) = (seg.start.0, seg.end.0);
        let begin = if si == 0 {
            let b = match plan.starts[ti] {
                Rule::Point { seg, offset } => point_time(&ends, &starts, seg, offset),
                _ => None,
            };
            let b = b.unwrap_or(rec_start);
            starts[ti] = b;
            b
        } else {
            match ends[ti][si - 1] {
                UNSET => rec_start,
                v => v,
            }
        };
        let fixed = rec_end.saturating_sub(rec_start);
        // No sleep, no wake-up: the wake-up's runnable delay after an unslept wait
        // goes too (a group commit's waiters whose flush is already done).
        let woke_unslept = std::mem::take(&mut unslept[ti])
            && matches!(
                seg.state,
                SegmentState::Runnable {
                    preempted: false,
                    ..
                }
            );
        ends[ti][si] = match rule(id) {
            _ if woke_unslept => begin,
            Rule::Fixed(d) => begin + d,
            Rule::Until(t) => begin.max(t),
            Rule::Point { seg, offset } => {
                // A waker not replayed yet (a tie in recorded time) keeps the length.
                match point_time(&ends, &starts, seg, offset) {
                    Some(p) if p < begin => {
                        unslept[ti] = true;
                        begin
                    }
                    Some(p) => p,
                    None => begin + fixed,
                }
            }
        };
    }
    Replayed { ends }
}

/// The thread segment whose point ended a blocked segment, and the offset of that
/// point: the recorded waker's segment at the wake-up (or, for socket data, where the
/// sender was when it sent).
pub(crate) fn waker_point(model: &Model, id: SegmentId) -> Option<(SegmentId, u64)> {
    let seg = model.segment(id)?;
    let SegmentState::Blocked {
        waker: Some(wake), ..
    } = seg.state
    else {
        return None;
    };
    let at = model
        .data_wake(id)
        .map_or(wake.ts, |d| d.link_time(wake.ts));
    if model.data_wake(id).is_none() && !matches!(wake.waker, Waker::Thread { .. }) {
        return None;
    }
    let w = model.waker_segment(id)?;
    let ws = model.segment(w)?;
    // Only a waker that was running can be followed to a point of its own work.
    if !ws.state.is_running() || ws.start > at {
        return None;
    }
    Some((w, at.0 - ws.start.0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use causeway_format::{Header, Tables};
    use causeway_testkit::synth;

    /// With every segment at its recorded length and every dependency kept, the replay
    /// is the recording.
    #[test]
    fn an_unchanged_replay_is_the_recording() {
        let s = synth::blocking_write(1, 50);
        let model = causeway_model::Model::from_events(
            &Tables::default(),
            &Header::synthetic(2),
            &s.events(),
        );
        let plan = Plan::new(&model);
        let rule = |id: SegmentId| {
            let seg = model.segment(id).unwrap();
            match waker_point(&model, id) {
                Some((seg, offset)) => Rule::Point { seg, offset },
                None => Rule::Fixed(seg.end.0 - seg.start.0),
            }
        };
        let r = replay(&model, &plan, &rule, &|_, o| o);
        let mut points = 0;
        for (ti, t) in (0u32..).zip(model.threads()) {
            for (si, seg) in (0u32..).zip(&t.segments) {
                let id = SegmentId {
                    thread: ti,
                    index: si,
                };
                points += usize::from(waker_point(&model, id).is_some());
                assert_eq!(r.end(id), Some(seg.end.0), "{id:?}");
            }
        }
        // The producer's waits follow the consumer.
        assert!(points >= 50, "{points}");
    }

    /// A waiter whose waker gets to the wake-up before the waiter blocks never sleeps
    /// in the replay: no wake-up, so no wake-up latency either.
    #[test]
    fn a_wait_its_waker_ends_before_it_begins_loses_its_wake_up_latency() {
        use causeway_format::TaskState;
        let mut s = synth::Synth::new();
        // A (10) runs 0..50 on CPU 0, is preempted for 10 ns, runs 60..600 and wakes
        // B (20) at 500; B runs 0..100 on CPU 1, blocks, and after its wake-up waits
        // 300 ns for the CPU, then runs 200.
        s.switch(0, 0, 0, TaskState::RUNNABLE, 10)
            .switch(0, 1, 0, TaskState::RUNNABLE, 20)
            .switch(50, 0, 10, TaskState::RUNNABLE, 30)
            .switch(60, 0, 30, TaskState::INTERRUPTIBLE, 10)
            .switch(100, 1, 20, TaskState::INTERRUPTIBLE, 0)
            .wake_by(500, 0, 10, 20)
            .switch(600, 0, 10, TaskState::INTERRUPTIBLE, 0)
            .switch(800, 1, 0, TaskState::RUNNABLE, 20)
            .switch(1000, 1, 20, TaskState::INTERRUPTIBLE, 0);
        let model = causeway_model::Model::from_events(
            &Tables::default(),
            &Header::synthetic(2),
            &s.events(),
        );
        let plan = Plan::new(&model);
        let a = model.thread_index_at(causeway_format::Tid(10), causeway_format::Timestamp(0));
        let b = model.thread_index_at(causeway_format::Tid(20), causeway_format::Timestamp(0));
        let (a, b) = (a.unwrap(), b.unwrap());
        let seg_b = |index| SegmentId { thread: b, index };
        let b_states: Vec<_> = model
            .thread_by_index(b)
            .unwrap()
            .segments
            .iter()
            .map(|s| s.state.is_blocked())
            .collect();
        assert_eq!(
            b_states[..4],
            [false, true, false, false],
            "running, blocked, runnable, running"
        );
        // A's runs made ten times faster: its wake-up comes at 5 + 10 + 44, before B
        // blocks.
        let rule = |id: SegmentId| {
            let seg = model.segment(id).unwrap();
            let d = seg.end.0 - seg.start.0;
            if id.thread == a && seg.state.is_running() {
                return Rule::Fixed(d / 10);
            }
            match waker_point(&model, id) {
                Some((seg, offset)) => Rule::Point { seg, offset },
                None => Rule::Fixed(d),
            }
        };
        let scale = |id: SegmentId, o: u64| if id.thread == a { o / 10 } else { o };
        let r = replay(&model, &plan, &rule, &scale);
        // B's wait ends where it began (100), its runnable delay is gone, it runs 200.
        assert_eq!(r.end(seg_b(1)), Some(100));
        assert_eq!(r.end(seg_b(2)), Some(100));
        assert_eq!(r.end(seg_b(3)), Some(300));
        // Unchanged, the same replay is the recording (the wait slept, 300 ns latency).
        let same = |id: SegmentId| {
            let seg = model.segment(id).unwrap();
            match waker_point(&model, id) {
                Some((seg, offset)) => Rule::Point { seg, offset },
                None => Rule::Fixed(seg.end.0 - seg.start.0),
            }
        };
        let r = replay(&model, &plan, &same, &|_, o| o);
        assert_eq!(r.end(seg_b(2)), Some(800));
    }
}
