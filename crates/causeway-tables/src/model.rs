//! The tables made from the model and the trace's own tables: processes, threads and
//! their states, socket flows, stacks and frames, and the one row of `traces`.

use crate::TablesError;
use crate::events::{ns, waker_parts};
use crate::schema::{Flows, Frames, Processes, StackFrames, Stacks, ThreadStates, Threads, Traces};
use crate::writer::PartitionWriter;
use causeway_format::{FrameSpace, StackId, TaskState};
use causeway_model::{SegmentId, SegmentState, Trace, UnknownCause};

/// What `traces` says of the trace beyond its header.
pub struct TraceRow<'a> {
    /// The trace file.
    pub path: &'a str,
    /// Its id.
    pub trace_id: &'a str,
    /// Events read.
    pub events: u64,
    /// The bottleneck verdict, if the analysis ran.
    pub bottleneck: Option<&'a str>,
}

/// Write `traces`.
pub fn traces(
    trace: &Trace,
    row: &TraceRow<'_>,
    out: &mut PartitionWriter,
) -> Result<(), TablesError> {
    let h = trace.header();
    let mut t = Traces::default();
    let span = trace.model().span();
    let (start, end) = span.map_or((0, 0), |s| (ns(s.start), ns(s.end)));
    t.path.append_value(row.path);
    t.file_id.append_value(row.trace_id);
    t.schema_version.append_value(crate::SCHEMA_VERSION);
    t.realtime_offset_ns.append_value(h.clock_to_realtime_ns);
    t.start_ns.append_value(start);
    t.end_ns.append_value(end);
    t.start_unix_ns
        .append_value(start.saturating_add(h.clock_to_realtime_ns));
    t.duration_ns.append_value(end - start);
    t.cpus.append_value(h.cpu_count as i64);
    t.kernel.append_value(&h.host.kernel_release);
    t.arch.append_value(&h.host.arch);
    t.command.append_value(h.command_line.join(" "));
    t.writer.append_value(&h.writer);
    t.events.append_value(row.events as i64);
    t.lost_events
        .append_value(trace.stats().lost_per_cpu.values().sum::<u64>() as i64);
    t.bottleneck.append_option(row.bottleneck);
    out.flush(&mut t)
}

/// Write `processes` and `threads`.
pub fn processes_and_threads(trace: &Trace, out: &mut PartitionWriter) -> Result<(), TablesError> {
    let m = trace.model();
    let tables = trace.tables();
    let cgroup_of = tables.process_cgroups();
    let mut p = Processes::default();
    for n in m.processes() {
        let cg = cgroup_of.get(&n.tgid).copied();
        p.cgroup.append_option(cg);
        p.container.append_option(
            cg.and_then(causeway_format::cgroups::owner)
                .map(|o| o.short()),
        );
        p.pid.append_value(n.tgid.0 as i64);
        p.ppid.append_option(n.parent.map(|x| x.0 as i64));
        p.comm.append_value(&n.comm);
        p.exe.append_value(n.exe());
        p.cmdline
            .append_option(n.images.last().map(|i| i.cmdline.as_str()));
        p.started_ns.append_option(n.started.map(ns));
        p.exited_ns.append_option(n.exited.map(ns));
        p.threads.append_value(n.threads.len() as i64);
        out.flush_full(&mut p)?;
    }
    out.flush(&mut p)?;
    let mut t = Threads::default();
    for (utid, th) in m.threads().enumerate() {
        let tot = &th.totals;
        t.utid.append_value(utid as i64);
        t.tid.append_value(th.tid.0 as i64);
        t.pid.append_option(th.tgid.map(|x| x.0 as i64));
        t.comm.append_value(&th.comm);
        t.parent_tid
            .append_option(th.parent_tid.map(|x| x.0 as i64));
        t.created_ns.append_option(th.created.map(ns));
        t.exited_ns.append_option(th.exited.map(ns));
        t.running_ns.append_value(tot.running.0 as i64);
        t.runnable_ns.append_value(tot.runnable.0 as i64);
        let blocked =
            tot.blocked_interruptible.0 + tot.blocked_uninterruptible.0 + tot.blocked_other.0;
        t.blocked_ns.append_value(blocked as i64);
        t.unknown_ns.append_value(tot.unknown.0 as i64);
        t.segments.append_value(th.segments.len() as i64);
        out.flush_full(&mut t)?;
    }
    out.flush(&mut t)
}

/// Write `thread_states`: every segment of every thread, with its waker.
pub fn thread_states(trace: &Trace, out: &mut PartitionWriter) -> Result<(), TablesError> {
    let m = trace.model();
    let strings = trace.tables();
    let mut t = ThreadStates::default();
    for (utid, th) in m.threads().enumerate() {
        for (seg, s) in th.segments.iter().enumerate() {
            let id = SegmentId {
                thread: utid as u32,
                index: seg as u32,
            };
            t.utid.append_value(utid as i64);
            t.tid.append_value(th.tid.0 as i64);
            t.seg.append_value(seg as i64);
            t.start_ns.append_value(ns(s.start));
            t.dur_ns.append_value(s.duration().0 as i64);
            let mut row = StateRow::default();
            match &s.state {
                SegmentState::Running { cpu } => {
                    row.state = "running";
                    row.cpu = Some(cpu.0 as i64);
                }
                SegmentState::Runnable { cpu, preempted } => {
                    row.state = "runnable";
                    row.cpu = cpu.map(|c| c.0 as i64);
                    row.preempted = Some(*preempted);
                }
                SegmentState::Blocked {
                    state,
                    waker,
                    switch_out_stack,
                    syscall,
                } => {
                    row.state = "blocked";
                    row.task_state = state.map(TaskState::letter);
                    row.syscall = syscall.and_then(causeway_format::syscalls::syscall_name);
                    row.wait_user = switch_out_stack.and_then(|s| s.user);
                    row.wait_kernel = switch_out_stack.and_then(|s| s.kernel);
                    if let Some(w) = waker {
                        let (kind, tid, irq) = waker_parts(w.waker, strings);
                        row.wake_ns = Some(ns(w.ts));
                        row.waker_kind = Some(kind);
                        row.waker_tid = tid;
                        row.waker_irq = irq;
                        row.waker_user = w.waker_stack.and_then(|s| s.user);
                        row.waker_weight = w.waker_stack.map(|_| i64::from(w.waker_stack_weight));
                        if let Some(ws) = m.waker_segment(id) {
                            row.waker_utid = Some(ws.thread as i64);
                            row.waker_seg = Some(ws.index as i64);
                        }
                        row.flow = m.data_wake(id).map(|d| d.flow.0 as i64);
                    }
                }
                SegmentState::Unknown { cause } => {
                    row.state = "unknown";
                    row.unknown = Some(match cause {
                        UnknownCause::BeforeFirstEvent => "before_first_event",
                        UnknownCause::LostEvents => "lost_events",
                        UnknownCause::Inconsistent => "inconsistent",
                    });
                }
            }
            row.append(&mut t);
            out.flush_full(&mut t)?;
        }
    }
    out.flush(&mut t)
}

/// The state-dependent columns of one `thread_states` row.
#[derive(Default)]
struct StateRow {
    state: &'static str,
    task_state: Option<&'static str>,
    cpu: Option<i64>,
    preempted: Option<bool>,
    syscall: Option<&'static str>,
    wait_user: Option<StackId>,
    wait_kernel: Option<StackId>,
    wake_ns: Option<i64>,
    waker_kind: Option<&'static str>,
    waker_tid: Option<i64>,
    waker_utid: Option<i64>,
    waker_seg: Option<i64>,
    waker_user: Option<StackId>,
    waker_weight: Option<i64>,
    waker_irq: Option<String>,
    flow: Option<i64>,
    unknown: Option<&'static str>,
}

impl StateRow {
    fn append(self, t: &mut ThreadStates) {
        let id = |s: Option<StackId>| s.map(|s| s.0 as i64);
        t.state.append_value(self.state);
        t.task_state.append_option(self.task_state);
        t.cpu.append_option(self.cpu);
        t.preempted.append_option(self.preempted);
        t.syscall.append_option(self.syscall);
        t.wait_user_stack_id.append_option(id(self.wait_user));
        t.wait_kernel_stack_id.append_option(id(self.wait_kernel));
        t.wake_ns.append_option(self.wake_ns);
        t.waker_kind.append_option(self.waker_kind);
        t.waker_tid.append_option(self.waker_tid);
        t.waker_utid.append_option(self.waker_utid);
        t.waker_seg.append_option(self.waker_seg);
        t.waker_user_stack_id.append_option(id(self.waker_user));
        t.waker_stack_weight.append_option(self.waker_weight);
        t.waker_irq.append_option(self.waker_irq);
        t.data_flow_id.append_option(self.flow);
        t.unknown_cause.append_option(self.unknown);
    }
}

/// Write `flows`, `stacks`, `stack_frames` and `frames` from the trace's tables.
pub fn interned(trace: &Trace, out: &mut PartitionWriter) -> Result<(), TablesError> {
    let tb = trace.tables();
    let mut fl = Flows::default();
    for (i, f) in tb.flows.iter().enumerate() {
        let label = f.label();
        let (proto, ends) = label.split_once(' ').unwrap_or((label.as_str(), ""));
        let (local, remote) = ends.split_once(" -> ").unwrap_or(("", ""));
        fl.flow_id.append_value(i as i64);
        fl.proto.append_value(if f.family.is_ip() {
            proto
        } else {
            label.as_str()
        });
        fl.local.append_value(local);
        fl.remote.append_value(remote);
        fl.label.append_value(&label);
    }
    out.flush(&mut fl)?;
    let function = |id| tb.frame_functions(id).join(" > ");
    let mut st = Stacks::default();
    let mut sf = StackFrames::default();
    for (i, s) in tb.stacks.iter().enumerate() {
        st.stack_id.append_value(i as i64);
        st.depth.append_value(s.frames.len() as i64);
        st.truncated.append_value(s.truncated);
        st.leaf
            .append_option(s.frames.first().map(|&f| function(f)));
        let folded: Vec<String> = s.frames.iter().rev().map(|&f| function(f)).collect();
        st.folded.append_value(folded.join(";"));
        for (d, f) in s.frames.iter().enumerate() {
            sf.stack_id.append_value(i as i64);
            sf.depth.append_value(d as i64);
            sf.frame_id.append_value(f.0 as i64);
        }
        out.flush_full(&mut st)?;
        out.flush_full(&mut sf)?;
    }
    out.flush(&mut st)?;
    out.flush(&mut sf)?;
    let mut fr = Frames::default();
    for (i, f) in tb.frames.iter().enumerate() {
        fr.frame_id.append_value(i as i64);
        fr.space.append_value(match f.space {
            FrameSpace::Kernel => "kernel",
            FrameSpace::User { .. } => "user",
        });
        fr.addr.append_value(f.addr as i64);
        fr.function
            .append_value(function(causeway_format::FrameId(i as u32)));
        fr.module.append_value(tb.string(f.module));
        let file = tb.string(f.file);
        fr.file.append_option((!file.is_empty()).then_some(file));
        fr.line
            .append_option((f.line != 0).then_some(f.line as i64));
        out.flush_full(&mut fr)?;
    }
    out.flush(&mut fr)
}
