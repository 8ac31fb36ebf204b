//! The tables made from the events themselves, in one pass: each event appends a row
//! (or completes one: a system call's entry waits for its exit, a block request's
//! issue for its completion, an interrupt's entry for its exit).

use crate::TablesError;
use crate::schema::{
    BlockIo, Callstacks, Goroutines, Interrupts, Lifecycle, Losses, Markers, Packets, Signals,
    Sockets, Switches, Syscalls, Timers, Wakeups,
};
use crate::writer::PartitionWriter;
use causeway_format::{
    BlockOp, BlockOpKind, Cpu, DevId, Event, EventKind, Marker, StackId, StackKind, StringId,
    Tables, Tid, Timestamp, Waker,
};
use std::collections::HashMap;

/// The event tables of one trace, filled one event at a time.
pub struct EventTables {
    strings: Tables,
    switches: Switches,
    wakeups: Wakeups,
    callstacks: Callstacks,
    syscalls: Syscalls,
    block_io: BlockIo,
    packets: Packets,
    interrupts: Interrupts,
    sockets: Sockets,
    signals: Signals,
    timers: Timers,
    goroutines: Goroutines,
    markers: Markers,
    lifecycle: Lifecycle,
    losses: Losses,
    open_calls: HashMap<Tid, OpenCall>,
    open_requests: HashMap<(DevId, u64), OpenRequest>,
    open_irqs: HashMap<(Cpu, bool), Vec<OpenIrq>>,
}

struct OpenCall {
    enter: Timestamp,
    nr: u32,
    stack: Option<StackId>,
}

struct OpenRequest {
    issue: Timestamp,
    tid: Tid,
    bytes: u32,
    op: BlockOp,
}

struct OpenIrq {
    start: Timestamp,
    number: u32,
    /// A hard interrupt's handler name (a softirq's comes from its vector).
    name: Option<StringId>,
}

/// A trace time as the tables' BIGINT.
pub(crate) fn ns(t: Timestamp) -> i64 {
    t.0 as i64
}

fn stack(id: Option<StackId>) -> Option<i64> {
    id.map(|s| s.0 as i64)
}

impl EventTables {
    /// Empty tables; `strings` are the trace's tables, which name strings.
    pub fn new(strings: Tables) -> EventTables {
        EventTables {
            strings,
            switches: Switches::default(),
            wakeups: Wakeups::default(),
            callstacks: Callstacks::default(),
            syscalls: Syscalls::default(),
            block_io: BlockIo::default(),
            packets: Packets::default(),
            interrupts: Interrupts::default(),
            sockets: Sockets::default(),
            signals: Signals::default(),
            timers: Timers::default(),
            goroutines: Goroutines::default(),
            markers: Markers::default(),
            lifecycle: Lifecycle::default(),
            losses: Losses::default(),
            open_calls: HashMap::new(),
            open_requests: HashMap::new(),
            open_irqs: HashMap::new(),
        }
    }

    /// Add one event; full batches go to `out`.
    pub fn push(&mut self, ev: &Event, out: &mut PartitionWriter) -> Result<(), TablesError> {
        match ev.kind {
            EventKind::SchedSwitch { .. }
            | EventKind::Wakeup { .. }
            | EventKind::WakeupNew { .. }
            | EventKind::Fork { .. }
            | EventKind::Exec { .. }
            | EventKind::Exit { .. } => self.push_sched(ev, out),
            EventKind::IrqEntry { .. }
            | EventKind::IrqExit { .. }
            | EventKind::SoftirqEntry { .. }
            | EventKind::SoftirqExit { .. }
            | EventKind::BlockIssue { .. }
            | EventKind::BlockComplete { .. }
            | EventKind::NetXmit { .. }
            | EventKind::NetRecv { .. } => self.push_device(ev, out),
            EventKind::SyscallEnter { .. }
            | EventKind::SyscallExit { .. }
            | EventKind::Stack { .. }
            | EventKind::Marker { .. }
            | EventKind::Lost { .. } => self.push_calls(ev, out),
            EventKind::SignalGenerate { .. }
            | EventKind::SignalDeliver { .. }
            | EventKind::TimerArm { .. }
            | EventKind::TimerExpire { .. }
            | EventKind::SockSend { .. }
            | EventKind::SockReady { .. }
            | EventKind::GoRun { .. }
            | EventKind::GoPark { .. }
            | EventKind::GoNetWait { .. }
            | EventKind::GoReady { .. } => self.push_other(ev, out),
        }
    }

    /// Scheduler and process lifecycle events.
    fn push_sched(&mut self, ev: &Event, out: &mut PartitionWriter) -> Result<(), TablesError> {
        let ts = ns(ev.ts);
        let cpu = ev.cpu.0 as i64;
        match ev.kind {
            EventKind::SchedSwitch {
                prev_tid,
                prev_state,
                next_tid,
            } => {
                let t = &mut self.switches;
                t.ts.append_value(ts);
                t.cpu.append_value(cpu);
                t.prev_tid.append_value(prev_tid.0 as i64);
                t.prev_state.append_value(prev_state.letter());
                t.next_tid.append_value(next_tid.0 as i64);
                out.flush_full(t)?;
            }
            EventKind::Wakeup {
                wakee,
                target_cpu,
                waker,
            } => self.wakeup(ts, cpu, wakee, target_cpu, waker, false, out)?,
            EventKind::WakeupNew {
                wakee,
                target_cpu,
                waker,
            } => self.wakeup(ts, cpu, wakee, target_cpu, waker, true, out)?,
            EventKind::Fork {
                parent_tid,
                child_tid,
                child_tgid,
                ..
            } => self.lifecycle(
                ts,
                cpu,
                "fork",
                child_tid,
                Some(child_tgid.0),
                Some(parent_tid),
                None,
                out,
            )?,
            EventKind::Exec {
                tid,
                comm,
                filename,
            } => self.lifecycle(
                ts,
                cpu,
                "exec",
                tid,
                None,
                None,
                Some((comm, filename)),
                out,
            )?,
            EventKind::Exit { tid } => {
                self.lifecycle(ts, cpu, "exit", tid, None, None, None, out)?
            }
            _ => {}
        }
        Ok(())
    }

    /// Interrupts, block requests and packets.
    fn push_device(&mut self, ev: &Event, out: &mut PartitionWriter) -> Result<(), TablesError> {
        let ts = ns(ev.ts);
        let cpu = ev.cpu.0 as i64;
        match ev.kind {
            EventKind::IrqEntry { irq, name } => {
                self.irq_enter(ev.cpu, false, irq, Some(name), ev.ts);
            }
            EventKind::IrqExit { irq, .. } => self.irq_exit(ev.cpu, false, irq, ev.ts, out)?,
            EventKind::SoftirqEntry { vec } => {
                self.irq_enter(ev.cpu, true, vec.0 as u32, None, ev.ts)
            }
            EventKind::SoftirqExit { vec } => {
                self.irq_exit(ev.cpu, true, vec.0 as u32, ev.ts, out)?
            }
            EventKind::BlockIssue {
                tid,
                dev,
                sector,
                bytes,
                op,
            } => {
                let open = OpenRequest {
                    issue: ev.ts,
                    tid,
                    bytes,
                    op,
                };
                if let Some(old) = self.open_requests.insert((dev, sector), open) {
                    self.request_row(dev, sector, Some(old), None, out)?;
                }
            }
            EventKind::BlockComplete {
                dev,
                sector,
                bytes,
                op,
                error,
            } => {
                let open = self.open_requests.remove(&(dev, sector));
                let done = (ev.ts, bytes, op, error);
                self.request_row(dev, sector, open, Some(done), out)?;
            }
            EventKind::NetXmit { tid, dev, bytes } => {
                self.packet(ts, cpu, "xmit", tid, dev, bytes, out)?
            }
            EventKind::NetRecv { tid, dev, bytes } => {
                self.packet(ts, cpu, "recv", tid, dev, bytes, out)?
            }
            _ => {}
        }
        Ok(())
    }

    /// System calls, stacks, markers and losses.
    fn push_calls(&mut self, ev: &Event, out: &mut PartitionWriter) -> Result<(), TablesError> {
        let ts = ns(ev.ts);
        let cpu = ev.cpu.0 as i64;
        match ev.kind {
            EventKind::SyscallEnter { tid, nr, .. } => {
                let open = OpenCall {
                    enter: ev.ts,
                    nr,
                    stack: None,
                };
                if let Some(old) = self.open_calls.insert(tid, open) {
                    self.call_row(tid, Some(old), None, out)?;
                }
            }
            EventKind::SyscallExit { tid, nr, ret } => {
                let open = match self.open_calls.remove(&tid) {
                    Some(o) if o.nr == nr => Some(o),
                    Some(o) => {
                        self.call_row(tid, Some(o), None, out)?;
                        None
                    }
                    None => None,
                };
                self.call_row(tid, open, Some((ev.ts, nr, ret)), out)?;
            }
            EventKind::Stack {
                tid,
                kind,
                user,
                kernel,
            } => {
                if kind == StackKind::Syscall
                    && let Some(o) = self.open_calls.get_mut(&tid)
                    && o.enter == ev.ts
                {
                    o.stack = user;
                }
                let t = &mut self.callstacks;
                t.ts.append_value(ts);
                t.cpu.append_value(cpu);
                t.tid.append_value(tid.0 as i64);
                t.kind.append_value(stack_kind(kind));
                t.user_stack_id.append_option(stack(user));
                t.kernel_stack_id.append_option(stack(kernel));
                out.flush_full(t)?;
            }
            EventKind::Marker { tid, marker } => self.marker(ts, cpu, tid, marker, out)?,
            EventKind::Lost { count } => {
                let t = &mut self.losses;
                t.ts.append_value(ts);
                t.cpu.append_value(cpu);
                t.count.append_value(count as i64);
                out.flush_full(t)?;
            }
            _ => {}
        }
        Ok(())
    }

    /// Signals, timers, sockets and goroutines.
    fn push_other(&mut self, ev: &Event, out: &mut PartitionWriter) -> Result<(), TablesError> {
        let ts = ns(ev.ts);
        let cpu = ev.cpu.0 as i64;
        match ev.kind {
            EventKind::SignalGenerate {
                sender,
                target,
                sig,
                group,
                ..
            } => self.signal(
                ts,
                cpu,
                "generate",
                Some(sender),
                target,
                sig.0 as i64,
                Some(group),
                out,
            )?,
            EventKind::SignalDeliver { tid, sig } => {
                self.signal(ts, cpu, "deliver", None, tid, sig.0 as i64, None, out)?
            }
            EventKind::TimerArm {
                tid,
                timer,
                expires,
            } => self.timer(ts, cpu, "arm", Some(tid), timer, expires, out)?,
            EventKind::TimerExpire { timer } => {
                self.timer(ts, cpu, "expire", None, timer, None, out)?
            }
            EventKind::SockSend {
                tid,
                flow,
                bytes,
                seq,
            } => self.socket(ts, cpu, "send", tid, None, flow.0, Some(bytes), seq, out)?,
            EventKind::SockReady {
                wakee,
                host,
                flow,
                seq,
            } => self.socket(ts, cpu, "ready", wakee, Some(host), flow.0, None, seq, out)?,
            EventKind::GoRun {
                tid, goid, parent, ..
            } => self.goroutine(ts, cpu, "run", tid, goid, Some(parent), None, None, out)?,
            EventKind::GoPark { tid, goid, reason } => {
                self.goroutine(ts, cpu, "park", tid, goid, None, Some(reason), None, out)?
            }
            EventKind::GoNetWait {
                tid, goid, flow, ..
            } => self.goroutine(
                ts,
                cpu,
                "net_wait",
                tid,
                goid,
                None,
                None,
                Some(flow.0),
                out,
            )?,
            EventKind::GoReady { tid, goid, by } => {
                self.goroutine(ts, cpu, "ready", tid, goid, Some(by), None, None, out)?
            }
            _ => {}
        }
        Ok(())
    }

    /// Write what is left: calls, requests and interrupts whose other end never came,
    /// then every table's last batch.
    pub fn finish(&mut self, out: &mut PartitionWriter) -> Result<(), TablesError> {
        let mut calls: Vec<(Tid, OpenCall)> = self.open_calls.drain().collect();
        calls.sort_by_key(|(t, c)| (c.enter, *t));
        for (tid, c) in calls {
            self.call_row(tid, Some(c), None, out)?;
        }
        let mut reqs: Vec<((DevId, u64), OpenRequest)> = self.open_requests.drain().collect();
        reqs.sort_by_key(|((d, s), r)| (r.issue, *d, *s));
        for ((dev, sector), r) in reqs {
            self.request_row(dev, sector, Some(r), None, out)?;
        }
        let mut irqs: Vec<((Cpu, bool), Vec<OpenIrq>)> = self.open_irqs.drain().collect();
        irqs.sort_by_key(|(k, _)| *k);
        for ((cpu, soft), stack) in irqs {
            for o in stack {
                self.irq_row(cpu, soft, o.number, o.name, Some(o.start), None);
            }
        }
        out.flush(&mut self.switches)?;
        out.flush(&mut self.wakeups)?;
        out.flush(&mut self.callstacks)?;
        out.flush(&mut self.syscalls)?;
        out.flush(&mut self.block_io)?;
        out.flush(&mut self.packets)?;
        out.flush(&mut self.interrupts)?;
        out.flush(&mut self.sockets)?;
        out.flush(&mut self.signals)?;
        out.flush(&mut self.timers)?;
        out.flush(&mut self.goroutines)?;
        out.flush(&mut self.markers)?;
        out.flush(&mut self.lifecycle)?;
        out.flush(&mut self.losses)
    }

    #[allow(clippy::too_many_arguments)]
    fn wakeup(
        &mut self,
        ts: i64,
        cpu: i64,
        wakee: Tid,
        target: Cpu,
        waker: Waker,
        new: bool,
        out: &mut PartitionWriter,
    ) -> Result<(), TablesError> {
        let t = &mut self.wakeups;
        t.ts.append_value(ts);
        t.cpu.append_value(cpu);
        t.wakee.append_value(wakee.0 as i64);
        t.target_cpu.append_value(target.0 as i64);
        t.new_thread.append_value(new);
        let (kind, tid, irq) = waker_parts(waker, &self.strings);
        t.waker_kind.append_value(kind);
        t.waker_tid.append_option(tid);
        t.waker_irq.append_option(irq);
        out.flush_full(t)
    }

    #[allow(clippy::too_many_arguments)]
    fn lifecycle(
        &mut self,
        ts: i64,
        cpu: i64,
        kind: &str,
        tid: Tid,
        pid: Option<u32>,
        parent: Option<Tid>,
        names: Option<(StringId, StringId)>,
        out: &mut PartitionWriter,
    ) -> Result<(), TablesError> {
        let t = &mut self.lifecycle;
        t.ts.append_value(ts);
        t.cpu.append_value(cpu);
        t.kind.append_value(kind);
        t.tid.append_value(tid.0 as i64);
        t.pid.append_option(pid.map(i64::from));
        t.parent_tid.append_option(parent.map(|p| p.0 as i64));
        t.comm
            .append_option(names.map(|n| self.strings.string(n.0)));
        t.filename
            .append_option(names.map(|n| self.strings.string(n.1)));
        out.flush_full(t)
    }

    fn irq_enter(
        &mut self,
        cpu: Cpu,
        soft: bool,
        number: u32,
        name: Option<StringId>,
        start: Timestamp,
    ) {
        self.open_irqs
            .entry((cpu, soft))
            .or_default()
            .push(OpenIrq {
                start,
                number,
                name,
            });
    }

    fn irq_exit(
        &mut self,
        cpu: Cpu,
        soft: bool,
        number: u32,
        end: Timestamp,
        out: &mut PartitionWriter,
    ) -> Result<(), TablesError> {
        let open = self.open_irqs.get_mut(&(cpu, soft)).and_then(|s| {
            let i = s.iter().rposition(|o| o.number == number)?;
            Some(s.remove(i))
        });
        match open {
            Some(o) => self.irq_row(cpu, soft, number, o.name, Some(o.start), Some(end)),
            None => self.irq_row(cpu, soft, number, None, None, Some(end)),
        }
        out.flush_full(&mut self.interrupts)
    }

    fn irq_row(
        &mut self,
        cpu: Cpu,
        soft: bool,
        number: u32,
        name: Option<StringId>,
        start: Option<Timestamp>,
        end: Option<Timestamp>,
    ) {
        let t = &mut self.interrupts;
        t.cpu.append_value(cpu.0 as i64);
        t.kind.append_value(if soft { "softirq" } else { "irq" });
        t.irq.append_value(number as i64);
        if soft {
            t.name
                .append_value(causeway_format::SoftirqVec(number as u8).name());
        } else {
            t.name.append_option(name.map(|n| self.strings.string(n)));
        }
        t.start_ns.append_option(start.map(ns));
        t.end_ns.append_option(end.map(ns));
    }

    fn request_row(
        &mut self,
        dev: DevId,
        sector: u64,
        issue: Option<OpenRequest>,
        done: Option<(Timestamp, u32, BlockOp, i32)>,
        out: &mut PartitionWriter,
    ) -> Result<(), TablesError> {
        let t = &mut self.block_io;
        t.dev
            .append_value(format!("{}:{}", dev.0 >> 20, dev.0 & 0xfffff));
        t.sector.append_value(sector as i64);
        let (bytes, op) = match (&issue, &done) {
            (Some(i), _) => (i.bytes, i.op),
            (None, Some(d)) => (d.1, d.2),
            (None, None) => (0, BlockOp::from_bits(4)),
        };
        t.bytes.append_value(bytes as i64);
        t.op.append_value(block_kind(op.kind));
        t.sync.append_value(op.sync);
        t.issue_ns
            .append_option(issue.as_ref().map(|i| ns(i.issue)));
        t.complete_ns.append_option(done.map(|d| ns(d.0)));
        t.dur_ns.append_option(match (&issue, &done) {
            (Some(i), Some(d)) => Some(ns(d.0) - ns(i.issue)),
            _ => None,
        });
        t.tid.append_option(issue.as_ref().map(|i| i.tid.0 as i64));
        t.error.append_option(done.map(|d| d.3 as i64));
        out.flush_full(t)
    }

    fn call_row(
        &mut self,
        tid: Tid,
        enter: Option<OpenCall>,
        exit: Option<(Timestamp, u32, i64)>,
        out: &mut PartitionWriter,
    ) -> Result<(), TablesError> {
        let t = &mut self.syscalls;
        let nr = enter
            .as_ref()
            .map(|e| e.nr)
            .or(exit.map(|x| x.1))
            .unwrap_or(0);
        t.tid.append_value(tid.0 as i64);
        t.nr.append_value(nr as i64);
        t.name
            .append_option(causeway_format::syscalls::syscall_name(nr));
        t.enter_ns
            .append_option(enter.as_ref().map(|e| ns(e.enter)));
        t.exit_ns.append_option(exit.map(|x| ns(x.0)));
        t.dur_ns.append_option(match (&enter, exit) {
            (Some(e), Some(x)) => Some(ns(x.0) - ns(e.enter)),
            _ => None,
        });
        t.ret.append_option(exit.map(|x| x.2));
        t.user_stack_id
            .append_option(enter.and_then(|e| stack(e.stack)));
        out.flush_full(t)
    }

    #[allow(clippy::too_many_arguments)]
    fn packet(
        &mut self,
        ts: i64,
        cpu: i64,
        dir: &str,
        tid: Tid,
        dev: causeway_format::StringId,
        bytes: u32,
        out: &mut PartitionWriter,
    ) -> Result<(), TablesError> {
        let t = &mut self.packets;
        t.ts.append_value(ts);
        t.cpu.append_value(cpu);
        t.dir.append_value(dir);
        t.tid.append_value(tid.0 as i64);
        t.dev.append_value(self.strings.string(dev));
        t.bytes.append_value(bytes as i64);
        out.flush_full(t)
    }

    fn marker(
        &mut self,
        ts: i64,
        cpu: i64,
        tid: Tid,
        marker: Marker,
        out: &mut PartitionWriter,
    ) -> Result<(), TablesError> {
        let s = &self.strings;
        let (kind, name, id, addr) = match marker {
            Marker::SpinBegin { id } => ("spin_begin", None, Some(id), None),
            Marker::SpinEnd { id } => ("spin_end", None, Some(id), None),
            Marker::FalseWakeup => ("false_wakeup", None, None, None),
            Marker::FlagRead { addr } => ("flag_read", None, None, Some(addr)),
            Marker::FlagWrite { addr } => ("flag_write", None, None, Some(addr)),
            Marker::MethodEnter { method } => ("method_enter", Some(s.string(method)), None, None),
            Marker::MethodExit { method } => ("method_exit", Some(s.string(method)), None, None),
            Marker::SpanBegin { name, id } => ("span_begin", Some(s.string(name)), Some(id), None),
            Marker::SpanEnd { name, id } => ("span_end", Some(s.string(name)), Some(id), None),
            Marker::DataFlag { addr, .. } => ("data_flag", None, None, Some(addr)),
        };
        let t = &mut self.markers;
        t.ts.append_value(ts);
        t.cpu.append_value(cpu);
        t.tid.append_value(tid.0 as i64);
        t.kind.append_value(kind);
        t.name.append_option(name);
        t.id.append_option(id.map(|v| v as i64));
        t.addr.append_option(addr.map(|v| v as i64));
        out.flush_full(t)
    }

    #[allow(clippy::too_many_arguments)]
    fn signal(
        &mut self,
        ts: i64,
        cpu: i64,
        kind: &str,
        sender: Option<Tid>,
        tid: Tid,
        sig: i64,
        group: Option<bool>,
        out: &mut PartitionWriter,
    ) -> Result<(), TablesError> {
        let t = &mut self.signals;
        t.ts.append_value(ts);
        t.cpu.append_value(cpu);
        t.kind.append_value(kind);
        t.sender.append_option(sender.map(|s| s.0 as i64));
        t.tid.append_value(tid.0 as i64);
        t.sig.append_value(sig);
        t.group.append_option(group);
        out.flush_full(t)
    }

    #[allow(clippy::too_many_arguments)]
    fn timer(
        &mut self,
        ts: i64,
        cpu: i64,
        kind: &str,
        tid: Option<Tid>,
        timer: u64,
        expires: Option<Timestamp>,
        out: &mut PartitionWriter,
    ) -> Result<(), TablesError> {
        let t = &mut self.timers;
        t.ts.append_value(ts);
        t.cpu.append_value(cpu);
        t.kind.append_value(kind);
        t.tid.append_option(tid.map(|x| x.0 as i64));
        t.timer.append_value(timer as i64);
        t.expires_ns.append_option(expires.map(ns));
        out.flush_full(t)
    }

    #[allow(clippy::too_many_arguments)]
    fn socket(
        &mut self,
        ts: i64,
        cpu: i64,
        kind: &str,
        tid: Tid,
        host: Option<Tid>,
        flow: u32,
        bytes: Option<u32>,
        seq: Option<u32>,
        out: &mut PartitionWriter,
    ) -> Result<(), TablesError> {
        let t = &mut self.sockets;
        t.ts.append_value(ts);
        t.cpu.append_value(cpu);
        t.kind.append_value(kind);
        t.tid.append_value(tid.0 as i64);
        t.host_tid.append_option(host.map(|h| h.0 as i64));
        t.flow_id.append_value(flow as i64);
        t.bytes.append_option(bytes.map(i64::from));
        t.seq.append_option(seq.map(i64::from));
        out.flush_full(t)
    }

    #[allow(clippy::too_many_arguments)]
    fn goroutine(
        &mut self,
        ts: i64,
        cpu: i64,
        kind: &str,
        tid: Tid,
        goid: u64,
        other: Option<u64>,
        reason: Option<StringId>,
        flow: Option<u32>,
        out: &mut PartitionWriter,
    ) -> Result<(), TablesError> {
        let t = &mut self.goroutines;
        t.ts.append_value(ts);
        t.cpu.append_value(cpu);
        t.kind.append_value(kind);
        t.tid.append_value(tid.0 as i64);
        t.goid.append_value(goid as i64);
        t.other_goid.append_option(other.map(|g| g as i64));
        t.reason
            .append_option(reason.map(|r| self.strings.string(r)));
        t.flow_id.append_option(flow.map(i64::from));
        out.flush_full(t)
    }
}

/// A waker as (kind, thread, interrupt name).
pub(crate) fn waker_parts(
    w: Waker,
    strings: &Tables,
) -> (&'static str, Option<i64>, Option<String>) {
    match w {
        Waker::Thread { tid } => ("thread", Some(tid.0 as i64), None),
        Waker::Irq { name, .. } => ("irq", None, Some(strings.string(name).to_string())),
        Waker::Softirq { vec } => ("softirq", None, Some(vec.name().to_string())),
        Waker::Unknown => ("unknown", None, None),
    }
}

fn stack_kind(k: StackKind) -> &'static str {
    match k {
        StackKind::SwitchOut => "switch_out",
        StackKind::Waker => "waker",
        StackKind::WakerSample => "waker_sample",
        StackKind::Syscall => "syscall",
        StackKind::Sample => "sample",
        StackKind::Other => "other",
    }
}

fn block_kind(k: BlockOpKind) -> &'static str {
    match k {
        BlockOpKind::Read => "read",
        BlockOpKind::Write => "write",
        BlockOpKind::Flush => "flush",
        BlockOpKind::Discard => "discard",
        BlockOpKind::Other => "other",
    }
}
