//! Thread states from the model's segments, who ran on each CPU, and wake-up flows.

use super::tracks::{ThreadIds, cpu_uuid, lane_uuid};
use super::types::{Arg, ArgValue, Category, Instant, Lane, Slice, Timeline};
use causeway_format::{Tables, TaskState, Waker, syscalls::syscall_label};
use causeway_model::{Segment, SegmentId, SegmentState, StackRef, Trace, UnknownCause};

/// Name of a state slice: `running`, `runnable`, `runnable (preempted)`,
/// `blocked (S)`, `blocked (D)`, `stopped (T)`, `unknown (lost events)`.
pub(crate) fn state_name(state: &SegmentState) -> String {
    match state {
        SegmentState::Running { .. } => "running".into(),
        SegmentState::Runnable {
            preempted: true, ..
        } => "runnable (preempted)".into(),
        SegmentState::Runnable { .. } => "runnable".into(),
        SegmentState::Blocked { state, .. } => match state {
            Some(s) if s.0 & (TaskState::STOPPED.0 | TaskState::TRACED.0) != 0 => {
                format!("stopped ({})", s.letter())
            }
            Some(s) => format!("blocked ({})", s.letter()),
            None => "blocked".into(),
        },
        SegmentState::Unknown { cause } => match cause {
            UnknownCause::BeforeFirstEvent => "unknown (before first event)".into(),
            UnknownCause::LostEvents => "unknown (lost events)".into(),
            UnknownCause::Inconsistent => "unknown (inconsistent events)".into(),
        },
    }
}

/// A stack as text: frames innermost first, user then kernel, one per line.
pub(crate) fn stack_text(tables: &Tables, s: &StackRef) -> String {
    let mut lines = Vec::new();
    for id in [s.user, s.kernel].into_iter().flatten() {
        if let Some(st) = tables.stack(id) {
            for &f in &st.frames {
                lines.extend(tables.frame_texts(f));
            }
        }
    }
    lines.join("\n")
}

/// State slices, CPU slices and wake-up flows for every thread.
pub(super) fn add(trace: &Trace, ids: &ThreadIds, tl: &mut Timeline) {
    let model = trace.model();
    for (ti, t) in model.threads().enumerate() {
        let index = u32::try_from(ti).unwrap_or(u32::MAX);
        let lane = lane_uuid(index, Lane::State);
        let mut flow_in: Option<u64> = None;
        for (si, seg) in t.segments.iter().enumerate() {
            let slice = Slice {
                track: lane,
                start_ns: seg.start.0,
                end_ns: seg.end.0.max(seg.start.0),
                name: state_name(&seg.state),
                category: Category::State,
                args: state_args(trace.tables(), seg),
                flows_in: flow_in.take().into_iter().collect(),
            };
            if let SegmentState::Running { cpu } = seg.state {
                tl.slices.push(Slice {
                    track: cpu_uuid(cpu.0),
                    name: format!("{} {}", t.comm, t.tid.0),
                    category: Category::Cpu,
                    args: vec![
                        arg_u("tid", u64::from(t.tid.0)),
                        arg_u("pid", u64::from(ids.pid_tid.get(ti).map_or(0, |p| p.0))),
                    ],
                    flows_in: Vec::new(),
                    ..slice.clone()
                });
            }
            let id = SegmentId {
                thread: index,
                index: u32::try_from(si).unwrap_or(u32::MAX),
            };
            flow_in = wake_flow(trace, id, seg, &t.comm, tl);
            tl.slices.push(slice);
        }
    }
}

/// The waker's instant and a flow to the wakee's next slice, for a wait a thread of
/// the model ended; returns the flow id.
fn wake_flow(
    trace: &Trace,
    id: SegmentId,
    seg: &Segment,
    wakee: &str,
    tl: &mut Timeline,
) -> Option<u64> {
    let wake = seg.wake()?;
    let Waker::Thread { .. } = wake.waker else {
        return None;
    };
    let waker_seg = trace.model().waker_segment(id)?;
    tl.flows += 1;
    let flow = tl.flows;
    let mut args = Vec::new();
    if let Some(s) = &wake.waker_stack {
        args.push(arg_s("waker_stack", stack_text(trace.tables(), s)));
    }
    tl.instants.push(Instant {
        track: lane_uuid(waker_seg.thread, Lane::State),
        ts_ns: wake.ts.0,
        name: format!("wake {wakee}"),
        category: Category::Wakeup,
        args,
        flows_out: vec![flow],
    });
    Some(flow)
}

fn state_args(tables: &Tables, seg: &Segment) -> Vec<Arg> {
    let mut args = Vec::new();
    if let SegmentState::Blocked {
        switch_out_stack,
        syscall,
        waker,
        ..
    } = &seg.state
    {
        if let Some(nr) = syscall {
            args.push(arg_s("syscall", syscall_label(*nr).into_owned()));
        }
        if let Some(s) = switch_out_stack {
            args.push(arg_s("stack", stack_text(tables, s)));
        }
        if let Some(w) = waker {
            let who = match w.waker {
                Waker::Thread { tid } => format!("thread {}", tid.0),
                Waker::Irq { irq, name } => format!("irq {irq} {}", tables.string(name)),
                Waker::Softirq { vec } => format!("softirq {}", vec.name()),
                Waker::Unknown => "unknown".into(),
            };
            args.push(arg_s("woken_by", who));
        }
    }
    args
}

pub(super) fn arg_s(name: &'static str, v: String) -> Arg {
    Arg {
        name,
        value: ArgValue::Str(v),
    }
}

pub(super) fn arg_u(name: &'static str, v: u64) -> Arg {
    Arg {
        name,
        value: ArgValue::Uint(v),
    }
}
