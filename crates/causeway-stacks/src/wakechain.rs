//! Wake-up chain flame graph (after BCC's offwaketime, but several hops): the wakee's
//! blocked stack, a `--` separator, the stack of the thread that woke it (leaf first,
//! so the call that did the wake-up sits on the separator) topped by that thread's
//! name, and again for whoever woke that thread out of its own last wait before it.

use crate::folded::Folded;
use crate::frames::{FrameNamer, thread_label};
use crate::options::{NO_STACK, Options, selected};
use causeway_format::{Tables, Waker};
use causeway_model::{Model, SegmentId, SegmentState, Trace, WakeInfo};

/// Separates one hop from the next in a folded stack.
pub const HOP: &str = "--";

pub(crate) fn fold(trace: &Trace, opts: &Options, namer: &mut FrameNamer<'_>) -> Folded {
    let model = trace.model();
    let mut out = Folded::new();
    for (ti, t) in model.threads().enumerate() {
        if !selected(opts, t.tgid) {
            continue;
        }
        let label = thread_label(t);
        for (si, seg) in t.segments.iter().enumerate() {
            let SegmentState::Blocked {
                switch_out_stack, ..
            } = &seg.state
            else {
                continue;
            };
            let mut frames = vec![label.clone()];
            match switch_out_stack {
                Some(s) => frames.extend(namer.both(s)),
                None if opts.keep_unstacked => frames.push(NO_STACK.to_string()),
                None => continue,
            }
            let id = SegmentId {
                thread: u32::try_from(ti).unwrap_or(u32::MAX),
                index: u32::try_from(si).unwrap_or(u32::MAX),
            };
            // Under waker-stack sampling, a short wait's chain is drawn from the sampled
            // ones, each weighing the sampling rate; those left without one are skipped
            // (their time is in the samples' weight).
            let weight = match seg.wake() {
                Some(w) if w.waker_stack.is_some() => u64::from(w.waker_stack_weight.max(1)),
                Some(w) if sampled_out(trace, w, seg.duration().0) => continue,
                _ => 1,
            };
            add_hops(model, trace.tables(), id, opts.hops, namer, &mut frames);
            out.add(&frames, seg.duration().0.saturating_mul(weight));
        }
    }
    out
}

/// Did the recorder leave this wake-up's stack out by sampling: a thread's wake-up of a
/// wait shorter than the sampling threshold, without a stack?
fn sampled_out(trace: &Trace, w: &WakeInfo, waited_ns: u64) -> bool {
    trace
        .header()
        .waker_stack_sampling
        .is_some_and(|s| waited_ns < s.min_wait_ns)
        && matches!(w.waker, Waker::Thread { .. })
        && w.waker_stack.is_none()
}

/// Append up to `hops` wakers of the blocked segment `id`, each waker's stack leaf
/// first and then its name.
fn add_hops(
    model: &Model,
    tables: &Tables,
    mut id: SegmentId,
    hops: usize,
    namer: &mut FrameNamer<'_>,
    frames: &mut Vec<String>,
) {
    for _ in 0..hops {
        let Some(wake) = model.segment(id).and_then(|s| s.wake()) else {
            return;
        };
        frames.push(HOP.to_string());
        if let Some(s) = &wake.waker_stack {
            let mut ws = namer.both(s);
            ws.reverse();
            frames.extend(ws);
        }
        let Some(waker_seg) = model.waker_segment(id) else {
            frames.push(context_name(wake, tables));
            return;
        };
        let Some(waker) = model.thread_by_index(waker_seg.thread) else {
            return;
        };
        frames.push(thread_label(waker));
        // The waker's own last wait before the segment in which it did the wake-up.
        let before = waker
            .segments
            .get(..waker_seg.index as usize)
            .unwrap_or(&[]);
        let Some(j) = before.iter().rposition(|s| s.state.is_blocked()) else {
            return;
        };
        id = SegmentId {
            thread: waker_seg.thread,
            index: u32::try_from(j).unwrap_or(u32::MAX),
        };
    }
}

/// Name of a waking context that is not a thread of the model.
fn context_name(wake: &WakeInfo, tables: &Tables) -> String {
    match wake.waker {
        Waker::Thread { tid } => format!("[tid {}]", tid.0),
        Waker::Irq { irq, name } => format!("[irq {irq} {}]", tables.string(name)),
        Waker::Softirq { vec } => format!("[softirq {}]", vec.name()),
        Waker::Unknown => "[unknown waker]".to_string(),
    }
}
