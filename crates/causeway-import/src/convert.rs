//! Parsed `perf script` lines to causeway events: the import state machine.
//!
//! A sample line opens a *pending* sample; its callchain lines add frames; the next
//! non-frame line (or a blank line, or the end) closes it, and only then is its event
//! written, followed by a [`EventKind::Stack`] event with the same time and CPU if it
//! had a callchain. Waker inference needs the callchain, which is why events wait.
//!
//! Decisions made here (documented on [`crate::import_perf_script`] too):
//! - `sched_waking` is preferred. A `sched_wakeup` for a wakee whose `sched_waking` was
//!   seen less than [`crate::ImportOptions::wakeup_dedup_window_ns`] earlier is the
//!   second half of the same wake-up and is dropped (counted); any other
//!   `sched_wakeup` is written (the recording has no `sched_waking`, or it was lost).
//!   A `sched_wakeup` completed on the wakee's CPU for a remote waker
//!   (`sched_ttwu_pending` in its stack) has waker `Unknown`.
//! - `sched_process_fork` does not say whether the child is a thread or a process. Its
//!   process id comes from perf's side band (`PERF_RECORD_FORK/COMM`) or the child's
//!   first sample; until one arrives (at most
//!   [`crate::ImportOptions::fork_resolve_window_ns`]), the fork event is held back,
//!   then written with its original time. Unresolved, the child is assumed to be a new
//!   process (counted as `import.fork_tgid_guessed`).
//! - Unknown task-state letters become [`UNKNOWN_TASK_STATE`] (not runnable).

use crate::callchain::{Callchains, FrameLine, parse_frame_line};
use crate::context::{FrameMark, Inferred, IrqTracker, infer};
use crate::error::ImportError;
use crate::options::ImportOptions;
use crate::script_parse::{Head, Line, Record, parse_line};
use crate::summary::{ImportSummary, MalformedLine};
use crate::threads::Threads;
use crate::tracepoint::{self, Parsed, Tp};
use causeway_format::{
    Cpu, Event, EventKind, Mapping, StackId, StackKind, TaskState, Tgid, Tid, Timestamp,
    TraceWriter, Waker,
};
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::io::Write;

/// Task state written for a `prev_state` letter perf printed but causeway does not
/// know: not runnable, no known bit set (its letter is `?`).
pub const UNKNOWN_TASK_STATE: TaskState = TaskState::UNKNOWN;

/// Highest CPU number accepted (the trace writer's limit).
const MAX_CPU: u32 = causeway_format::writer::MAX_CPU;

/// Malformed lines kept as examples in the summary.
const MAX_EXAMPLES: usize = 5;

/// Longest excerpt of a malformed line kept.
const MAX_EXCERPT: usize = 200;

/// An event waiting for its callchain.
#[derive(Clone, Copy, Debug)]
struct Pending {
    ts: u64,
    cpu: u32,
    tid: u32,
    kind: PendingKind,
}

#[derive(Clone, Copy, Debug)]
enum PendingKind {
    /// A finished event; its stack is of `stack_tid` for `stack_kind`.
    Event(EventKind, StackKind, Tid),
    /// A wake-up whose waker is decided from context and callchain.
    Wake {
        wakee: u32,
        target_cpu: u32,
        new: bool,
        wakeup_event: bool,
    },
    /// A fork whose child process is not known yet.
    Fork {
        parent_tid: u32,
        parent_tgid: u32,
        child_tid: u32,
    },
}

/// A wake-up whose waker is decided when the sample closes.
fn wake(wakee: u32, target_cpu: u32, new: bool, wakeup_event: bool) -> PendingKind {
    PendingKind::Wake {
        wakee,
        target_cpu,
        new,
        wakeup_event,
    }
}

/// A fork event held back until the child's process id is known.
#[derive(Debug)]
struct HeldFork {
    ts: u64,
    cpu: u32,
    parent_tid: u32,
    parent_tgid: u32,
    child_comm: String,
    stack: Option<(Option<StackId>, Option<StackId>)>,
}

/// Named counters of the import, written into the trace as `import.<name>`.
#[derive(Debug, Default)]
struct Counters {
    malformed_lines: u64,
    wakeup_deduplicated: u64,
    waker_from_callchain: u64,
    wakeup_remote_waker_unknown: u64,
    fork_tgid_guessed: u64,
    unknown_task_state: u64,
    unknown_syscall_name: u64,
    tid_from_sched_switch: u64,
}

/// The import state machine.
pub(crate) struct Converter<W: Write> {
    w: TraceWriter<W>,
    opts: ImportOptions,
    chains: Callchains,
    irqs: IrqTracker,
    threads: Threads,
    pending: Option<Pending>,
    /// Tgid of the pending sample (for user frames).
    pending_tgid: u32,
    /// Fork text of the pending sample (child comm), kept until it is closed.
    pending_child_comm: String,
    wakings: HashMap<u32, u64>,
    /// Thread running on each CPU after the last `sched_switch` there.
    current: Vec<u32>,
    held_forks: HashMap<u32, HeldFork>,
    fork_deadlines: VecDeque<(u64, u32)>,
    ignored: HashMap<String, u64>,
    ignored_records: HashMap<String, u64>,
    counters: Counters,
    summary: ImportSummary,
}

impl<W: Write> Converter<W> {
    /// Start converting into `w`.
    pub fn new(w: TraceWriter<W>, opts: &ImportOptions) -> Self {
        Converter {
            w,
            opts: opts.clone(),
            chains: Callchains::default(),
            irqs: IrqTracker::default(),
            threads: Threads::default(),
            pending: None,
            pending_tgid: 0,
            pending_child_comm: String::new(),
            wakings: HashMap::new(),
            current: Vec::new(),
            held_forks: HashMap::new(),
            fork_deadlines: VecDeque::new(),
            ignored: HashMap::new(),
            ignored_records: HashMap::new(),
            counters: Counters::default(),
            summary: ImportSummary::default(),
        }
    }

    /// Count a line that was consumed before conversion started (header comments).
    pub fn count_skipped_line(&mut self) {
        self.summary.lines += 1;
    }

    /// Feed one line (without its terminator).
    pub fn line(&mut self, raw: &str) -> Result<(), ImportError> {
        self.summary.lines += 1;
        match parse_line(raw) {
            Line::Frame(text) => {
                if self.pending.is_some() && self.opts.stacks {
                    match parse_frame_line(text) {
                        Some(f) => self.chains.push(&mut self.w, self.pending_tgid, &f),
                        None => self.malformed(raw),
                    }
                }
                Ok(())
            }
            Line::Blank => self.close_pending(),
            Line::Comment => Ok(()),
            Line::Sample(head, event, trace) => {
                self.close_pending()?;
                self.sample(head, event, trace, raw)
            }
            Line::Record(head, rec) => {
                self.close_pending()?;
                self.record(head, rec, raw)
            }
            Line::Unparsed => {
                self.close_pending()?;
                self.malformed(raw);
                Ok(())
            }
        }
    }

    /// A sample read from perf.data, its tracepoint already decoded (the native
    /// reader's counterpart of a sample line); its frames follow with
    /// [`Converter::typed_frame`].
    pub(crate) fn typed_sample(
        &mut self,
        head: Head<'_>,
        event: &str,
        parsed: Parsed<'_>,
    ) -> Result<(), ImportError> {
        self.summary.lines += 1;
        self.close_pending()?;
        self.sample_decoded(head, event, parsed)
    }

    /// One callchain frame of the sample opened last.
    pub(crate) fn typed_frame(&mut self, f: &FrameLine<'_>) {
        if self.pending.is_some() && self.opts.stacks {
            self.chains.push(&mut self.w, self.pending_tgid, f);
        }
    }

    /// A side-band record read from perf.data.
    pub(crate) fn typed_record(
        &mut self,
        head: Head<'_>,
        rec: Record<'_>,
    ) -> Result<(), ImportError> {
        self.summary.lines += 1;
        self.close_pending()?;
        self.record(head, rec, "")
    }

    fn malformed(&mut self, raw: &str) {
        self.counters.malformed_lines += 1;
        if self.summary.malformed_examples.len() < MAX_EXAMPLES {
            let mut end = raw.len().min(MAX_EXCERPT);
            while !raw.is_char_boundary(end) {
                end -= 1;
            }
            self.summary.malformed_examples.push(MalformedLine {
                line: self.summary.lines,
                text: raw.get(..end).unwrap_or("").to_string(),
            });
        }
    }

    fn push(&mut self, ts: u64, cpu: u32, kind: EventKind) -> Result<(), ImportError> {
        self.w.push(&Event {
            ts: Timestamp(ts),
            cpu: Cpu(cpu),
            kind,
        })?;
        self.summary.events += 1;
        Ok(())
    }

    fn push_stack(
        &mut self,
        ts: u64,
        cpu: u32,
        tid: Tid,
        kind: StackKind,
        (user, kernel): (Option<StackId>, Option<StackId>),
    ) -> Result<(), ImportError> {
        if user.is_none() && kernel.is_none() {
            return Ok(());
        }
        self.summary.stacks += 1;
        self.push(
            ts,
            cpu,
            EventKind::Stack {
                tid,
                kind,
                user,
                kernel,
            },
        )
    }

    // ---- samples -------------------------------------------------------------------

    fn sample(
        &mut self,
        head: Head<'_>,
        event: &str,
        trace: &str,
        raw: &str,
    ) -> Result<(), ImportError> {
        let Some((tid, tgid)) = self.sample_head(head, raw)? else {
            return Ok(());
        };
        let parsed = tracepoint::parse(event, trace, self.opts.keep_syscall_args);
        self.sample_parsed(head, tid, tgid, event, parsed, raw)
    }

    /// [`Converter::sample`] of a sample whose tracepoint is already decoded.
    fn sample_decoded(
        &mut self,
        head: Head<'_>,
        event: &str,
        parsed: Parsed<'_>,
    ) -> Result<(), ImportError> {
        let Some((tid, tgid)) = self.sample_head(head, event)? else {
            return Ok(());
        };
        self.sample_parsed(head, tid, tgid, event, parsed, event)
    }

    /// What every sample does first: count it, find its thread and process, note the
    /// thread's name. `None` for a sample that cannot be placed (an impossible CPU).
    fn sample_head(
        &mut self,
        head: Head<'_>,
        raw: &str,
    ) -> Result<Option<(u32, u32)>, ImportError> {
        if head.cpu >= MAX_CPU {
            self.malformed(raw);
            return Ok(None);
        }
        self.summary.samples += 1;
        self.expire_forks(head.ts_ns)?;
        let tid = match head.tid {
            Some(tid) => tid,
            // perf forgot an exiting thread: it is still the CPU's current thread.
            None => {
                self.counters.tid_from_sched_switch += 1;
                self.current.get(head.cpu as usize).copied().unwrap_or(0)
            }
        };
        let tgid = head
            .tgid
            .or_else(|| self.threads.tgid_of(tid))
            .unwrap_or(tid);
        if head.tid.is_some() {
            if self.held_forks.contains_key(&tid) {
                self.release_fork(tid, tgid)?;
            }
            self.threads
                .observe(&mut self.w, tid, tgid, head.comm, head.ts_ns, 0);
        }
        Ok(Some((tid, tgid)))
    }

    /// A sample whose tracepoint is decoded: open it (mapped), count it (ignored) or
    /// note it (malformed, with `raw` as the example).
    fn sample_parsed(
        &mut self,
        head: Head<'_>,
        tid: u32,
        tgid: u32,
        event: &str,
        parsed: Parsed<'_>,
        raw: &str,
    ) -> Result<(), ImportError> {
        match parsed {
            Parsed::Mapped(tp) => self.mapped(head, tid, tgid, tp),
            Parsed::Ignored => {
                match self.ignored.get_mut(event) {
                    Some(n) => *n += 1,
                    None => {
                        self.ignored.insert(event.to_string(), 1);
                    }
                }
                Ok(())
            }
            Parsed::Malformed => {
                self.malformed(raw);
                Ok(())
            }
        }
    }

    /// Open a pending sample for a mapped tracepoint (a `sched_wakeup` that repeats a
    /// `sched_waking` is dropped instead).
    fn mapped(
        &mut self,
        head: Head<'_>,
        tid: u32,
        tgid: u32,
        tp: Tp<'_>,
    ) -> Result<(), ImportError> {
        let Some(kind) = self.pending_kind(head, tid, tgid, tp) else {
            return Ok(());
        };
        self.pending = Some(Pending {
            ts: head.ts_ns,
            cpu: head.cpu,
            tid,
            kind,
        });
        self.pending_tgid = tgid;
        self.chains.clear();
        Ok(())
    }

    /// What a mapped tracepoint becomes, after updating the state it changes (the CPU's
    /// current thread, interrupt nesting, wake-ups seen, tables); `None` if it is dropped.
    fn pending_kind(
        &mut self,
        head: Head<'_>,
        tid: u32,
        tgid: u32,
        tp: Tp<'_>,
    ) -> Option<PendingKind> {
        let (ts, cpu) = (head.ts_ns, head.cpu);
        let other = |k: EventKind| PendingKind::Event(k, StackKind::Other, Tid(tid));
        let kind = match tp {
            Tp::Switch {
                prev_tid,
                prev_state,
                next_tid,
            } => self.switch(cpu, prev_tid, prev_state, next_tid),
            Tp::Waking { wakee, target_cpu } => {
                self.wakings.insert(wakee, ts);
                wake(wakee, target_cpu, false, false)
            }
            Tp::Wakeup { wakee, target_cpu } => {
                if self.repeats_waking(ts, wakee) {
                    self.counters.wakeup_deduplicated += 1;
                    return None;
                }
                wake(wakee, target_cpu, false, true)
            }
            Tp::WakeupNew { wakee, target_cpu } => wake(wakee, target_cpu, true, false),
            Tp::Fork {
                parent_tid,
                child_tid,
                child_comm,
            } => self.fork(ts, tid, tgid, parent_tid, child_tid, child_comm),
            Tp::Exec {
                tid: exec_tid,
                filename,
            } => other(self.exec(ts, tgid, head.comm, exec_tid, filename)),
            Tp::Exit { tid: exit_tid } => other(EventKind::Exit { tid: Tid(exit_tid) }),
            Tp::IrqEntry { irq, name } => {
                let name = self.w.intern(name);
                self.irqs.irq_entry(cpu, irq, name);
                other(EventKind::IrqEntry { irq, name })
            }
            Tp::IrqExit { irq, handled } => {
                self.irqs.irq_exit(cpu, irq);
                other(EventKind::IrqExit { irq, handled })
            }
            Tp::SoftirqEntry { vec } => {
                self.irqs.softirq_entry(cpu, vec);
                other(EventKind::SoftirqEntry { vec })
            }
            Tp::SoftirqExit { vec } => {
                self.irqs.softirq_exit(cpu, vec);
                other(EventKind::SoftirqExit { vec })
            }
            tp @ (Tp::BlockIssue { .. }
            | Tp::BlockComplete { .. }
            | Tp::NetXmit { .. }
            | Tp::NetRecv { .. }
            | Tp::SysEnter { .. }
            | Tp::SysExit { .. }) => self.io_kind(tid, tp)?,
        };
        Some(kind)
    }

    /// A `sched_switch`: the CPU's current thread changes and interrupt nesting there
    /// ends. The stack is the previous thread's, a switch-out stack if it blocked.
    fn switch(
        &mut self,
        cpu: u32,
        prev_tid: u32,
        prev_state: Option<TaskState>,
        next_tid: u32,
    ) -> PendingKind {
        // Nothing schedules inside an interrupt: leftover nesting is stale.
        self.irqs.reset(cpu);
        let c = cpu as usize;
        if self.current.len() <= c {
            self.current.resize(c + 1, 0);
        }
        if let Some(cur) = self.current.get_mut(c) {
            *cur = next_tid;
        }
        let prev_state = prev_state.unwrap_or_else(|| {
            self.counters.unknown_task_state += 1;
            UNKNOWN_TASK_STATE
        });
        let stack_kind = if prev_state.is_runnable() {
            StackKind::Other
        } else {
            StackKind::SwitchOut
        };
        PendingKind::Event(
            EventKind::SchedSwitch {
                prev_tid: Tid(prev_tid),
                prev_state,
                next_tid: Tid(next_tid),
            },
            stack_kind,
            Tid(prev_tid),
        )
    }

    /// True if a `sched_wakeup` of `wakee` at `ts` is the second half of a
    /// `sched_waking` already written; either way that waking is forgotten.
    fn repeats_waking(&mut self, ts: u64, wakee: u32) -> bool {
        self.wakings
            .remove(&wakee)
            .is_some_and(|t0| ts.saturating_sub(t0) <= self.opts.wakeup_dedup_window_ns)
    }

    /// A `sched_process_fork`: written at once if the child's process is known,
    /// otherwise held back until it is (see [`Self::release_fork`]).
    fn fork(
        &mut self,
        ts: u64,
        tid: u32,
        tgid: u32,
        parent_tid: u32,
        child_tid: u32,
        child_comm: &str,
    ) -> PendingKind {
        match self.threads.tgid_of(child_tid) {
            Some(child_tgid) => {
                self.fork_tables(ts, tgid, child_tid, child_tgid, child_comm);
                PendingKind::Event(
                    EventKind::Fork {
                        parent_tid: Tid(parent_tid),
                        parent_tgid: Tgid(tgid),
                        child_tid: Tid(child_tid),
                        child_tgid: Tgid(child_tgid),
                    },
                    StackKind::Other,
                    Tid(tid),
                )
            }
            None => {
                child_comm.clone_into(&mut self.pending_child_comm);
                PendingKind::Fork {
                    parent_tid,
                    parent_tgid: tgid,
                    child_tid,
                }
            }
        }
    }

    /// A `sched_process_exec`: the process's executable changes.
    fn exec(&mut self, ts: u64, tgid: u32, comm: &str, exec_tid: u32, filename: &str) -> EventKind {
        // Interned in this order (file, then name), as string ids are part of the output.
        let filename = self.w.intern(filename);
        let comm = self.w.intern(comm);
        self.threads.exec(&mut self.w, tgid, filename, ts);
        EventKind::Exec {
            tid: Tid(exec_tid),
            comm,
            filename,
        }
    }

    /// Disk, network and syscall tracepoints: events of the sample's thread `tid` that
    /// change no import state. `None` for the other tracepoints (handled elsewhere).
    fn io_kind(&mut self, tid: u32, tp: Tp<'_>) -> Option<PendingKind> {
        let other = |k: EventKind| PendingKind::Event(k, StackKind::Other, Tid(tid));
        Some(match tp {
            Tp::BlockIssue {
                dev,
                sector,
                bytes,
                op,
            } => other(EventKind::BlockIssue {
                tid: Tid(tid),
                dev,
                sector,
                bytes,
                op,
            }),
            Tp::BlockComplete {
                dev,
                sector,
                bytes,
                op,
                error,
            } => other(EventKind::BlockComplete {
                dev,
                sector,
                bytes,
                op,
                error,
            }),
            Tp::NetXmit { dev, bytes } => other(EventKind::NetXmit {
                tid: Tid(tid),
                dev: self.w.intern(dev),
                bytes,
            }),
            Tp::NetRecv { dev, bytes } => other(EventKind::NetRecv {
                tid: Tid(tid),
                dev: self.w.intern(dev),
                bytes,
            }),
            Tp::SysEnter { nr, args } => PendingKind::Event(
                EventKind::SyscallEnter {
                    tid: Tid(tid),
                    nr: self.syscall_nr(nr),
                    args,
                },
                StackKind::Syscall,
                Tid(tid),
            ),
            Tp::SysExit { nr, ret } => other(EventKind::SyscallExit {
                tid: Tid(tid),
                nr: self.syscall_nr(nr),
                ret,
            }),
            _ => return None,
        })
    }

    fn syscall_nr(&mut self, nr: Option<u32>) -> u32 {
        nr.unwrap_or_else(|| {
            self.counters.unknown_syscall_name += 1;
            u32::MAX
        })
    }

    /// Write the pending sample's event and stack.
    fn close_pending(&mut self) -> Result<(), ImportError> {
        let Some(p) = self.pending.take() else {
            return Ok(());
        };
        let stacks = if self.chains.is_empty() {
            (None, None)
        } else {
            self.chains.intern_stacks(&mut self.w)
        };
        match p.kind {
            PendingKind::Event(kind, stack_kind, stack_tid) => {
                self.push(p.ts, p.cpu, kind)?;
                self.push_stack(p.ts, p.cpu, stack_tid, stack_kind, stacks)?;
            }
            PendingKind::Wake {
                wakee,
                target_cpu,
                new,
                wakeup_event,
            } => {
                let waker = self.waker(p.cpu, p.tid, wakeup_event);
                let kind = EventKind::wakeup(new, Tid(wakee), Cpu(target_cpu), waker);
                self.push(p.ts, p.cpu, kind)?;
                self.push_stack(p.ts, p.cpu, Tid(p.tid), StackKind::Waker, stacks)?;
            }
            PendingKind::Fork {
                parent_tid,
                parent_tgid,
                child_tid,
            } => {
                let held = HeldFork {
                    ts: p.ts,
                    cpu: p.cpu,
                    parent_tid,
                    parent_tgid,
                    child_comm: std::mem::take(&mut self.pending_child_comm),
                    stack: Some(stacks),
                };
                let deadline = p.ts.saturating_add(self.opts.fork_resolve_window_ns);
                // A second fork of the same tid while one is held: release the old one.
                if self.held_forks.contains_key(&child_tid) {
                    self.counters.fork_tgid_guessed += 1;
                    self.release_fork(child_tid, child_tid)?;
                }
                self.held_forks.insert(child_tid, held);
                self.fork_deadlines.push_back((deadline, child_tid));
            }
        }
        self.chains.clear();
        Ok(())
    }

    /// Who performed the wake-up being closed (see [`crate::context`]).
    fn waker(&mut self, cpu: u32, tid: u32, wakeup_event: bool) -> Waker {
        if let Some((irq, name)) = self.irqs.irq(cpu) {
            return Waker::Irq { irq, name };
        }
        let frames = self.chains.kernel_frames();
        if wakeup_event
            && frames
                .iter()
                .any(|&f| self.chains.facts(f).mark == FrameMark::TtwuPending)
        {
            self.counters.wakeup_remote_waker_unknown += 1;
            return Waker::Unknown;
        }
        let chains = &self.chains;
        let inferred = infer(frames, |f| {
            let x = chains.facts(f);
            (x.mark, x.symbol, x.irq_name)
        });
        match (self.irqs.softirq(cpu), inferred) {
            (_, Some(Inferred::Irq(name))) => {
                self.counters.waker_from_callchain += 1;
                Waker::Irq { irq: 0, name }
            }
            (Some(vec), _) => Waker::Softirq { vec },
            (None, Some(Inferred::Softirq(vec))) => {
                self.counters.waker_from_callchain += 1;
                Waker::Softirq { vec }
            }
            (None, None) => Waker::Thread { tid: Tid(tid) },
        }
    }

    // ---- forks -------------------------------------------------------------------

    /// Table rows for a fork whose child process is known.
    fn fork_tables(
        &mut self,
        ts: u64,
        parent_tgid: u32,
        child_tid: u32,
        child_tgid: u32,
        comm: &str,
    ) {
        if child_tgid == child_tid && child_tgid != parent_tgid {
            self.threads
                .forked_process(&mut self.w, child_tgid, parent_tgid, ts);
        }
        if !self.threads.knows(child_tid) {
            self.threads
                .observe(&mut self.w, child_tid, child_tgid, comm, ts, ts);
        }
    }

    /// Write a held fork now that the child's process is known.
    fn release_fork(&mut self, child_tid: u32, child_tgid: u32) -> Result<(), ImportError> {
        let Some(h) = self.held_forks.remove(&child_tid) else {
            return Ok(());
        };
        self.fork_tables(h.ts, h.parent_tgid, child_tid, child_tgid, &h.child_comm);
        self.push(
            h.ts,
            h.cpu,
            EventKind::Fork {
                parent_tid: Tid(h.parent_tid),
                parent_tgid: Tgid(h.parent_tgid),
                child_tid: Tid(child_tid),
                child_tgid: Tgid(child_tgid),
            },
        )?;
        if let Some(stacks) = h.stack {
            self.push_stack(h.ts, h.cpu, Tid(h.parent_tid), StackKind::Other, stacks)?;
        }
        Ok(())
    }

    /// Release held forks whose deadline passed, guessing a new process.
    fn expire_forks(&mut self, now: u64) -> Result<(), ImportError> {
        while let Some(&(deadline, child)) = self.fork_deadlines.front() {
            if deadline > now {
                break;
            }
            self.fork_deadlines.pop_front();
            if self
                .held_forks
                .get(&child)
                .is_some_and(|h| h.ts.saturating_add(self.opts.fork_resolve_window_ns) == deadline)
            {
                self.counters.fork_tgid_guessed += 1;
                self.release_fork(child, child)?;
            }
        }
        Ok(())
    }

    // ---- side band -----------------------------------------------------------------

    fn record(&mut self, head: Head<'_>, rec: Record<'_>, raw: &str) -> Result<(), ImportError> {
        if head.cpu >= MAX_CPU {
            self.malformed(raw);
            return Ok(());
        }
        self.summary.records += 1;
        let ts = head.ts_ns;
        match rec {
            Record::Comm {
                comm, tgid, tid, ..
            } => {
                if self.held_forks.contains_key(&tid) {
                    self.release_fork(tid, tgid)?;
                }
                self.threads.observe(&mut self.w, tid, tgid, comm, ts, 0);
            }
            Record::Fork {
                tgid,
                tid,
                parent_tgid,
                parent_tid,
            } => {
                if tgid == tid && tgid != parent_tgid {
                    self.threads
                        .forked_process(&mut self.w, tgid, parent_tgid, ts);
                }
                // Synthesized records (time 0) are followed by the thread's COMM record;
                // a live fork's child starts with its parent's name.
                if ts != 0
                    && !self.threads.knows(tid)
                    && let Some(comm) = self.threads.comm_of(parent_tid).map(str::to_string)
                {
                    self.threads.observe(&mut self.w, tid, tgid, &comm, ts, ts);
                }
                if self.held_forks.contains_key(&tid) {
                    self.release_fork(tid, tgid)?;
                }
            }
            Record::Exit { tgid, tid } => {
                if self.held_forks.contains_key(&tid) {
                    self.release_fork(tid, tgid)?;
                }
            }
            Record::Mmap {
                tgid,
                start,
                len,
                pgoff,
                exec,
                path,
            } => {
                if let (true, true, Some(tgid)) = (self.opts.mappings, exec, tgid) {
                    let path = self.w.intern(path);
                    self.w.add_mapping(Mapping {
                        tgid: Tgid(tgid),
                        since: Timestamp(ts),
                        start,
                        end: start.saturating_add(len),
                        file_offset: pgoff,
                        path,
                        build_id: Vec::new(),
                    });
                    self.summary.mappings += 1;
                }
            }
            Record::Lost { count } => {
                self.irqs.reset(head.cpu);
                self.summary.lost_events = self.summary.lost_events.saturating_add(count);
                self.push(ts, head.cpu, EventKind::Lost { count })?;
            }
            Record::Other(name) => match self.ignored_records.get_mut(name) {
                Some(n) => *n += 1,
                None => {
                    self.ignored_records.insert(name.to_string(), 1);
                }
            },
            Record::Malformed => {
                self.summary.records -= 1;
                self.malformed(raw);
            }
        }
        Ok(())
    }

    // ---- end -----------------------------------------------------------------------

    /// Close everything, write the counters and the trace's end; fail if nothing in the
    /// input was recognized.
    pub fn finish(mut self) -> Result<(W, ImportSummary), ImportError> {
        self.close_pending()?;
        let held: Vec<u32> = self.held_forks.keys().copied().collect();
        for child in held {
            self.counters.fork_tgid_guessed += 1;
            self.release_fork(child, child)?;
        }
        if self.summary.samples == 0 && self.summary.records == 0 {
            return Err(ImportError::NoEvents {
                lines: self.summary.lines,
                malformed: self.counters.malformed_lines,
                example: self
                    .summary
                    .malformed_examples
                    .first()
                    .map(|m| m.text.clone())
                    .unwrap_or_default(),
            });
        }
        let mut ignored: BTreeMap<String, u64> = self.ignored.drain().collect();
        for (name, n) in self.ignored_records.drain() {
            *ignored.entry(format!("PERF_RECORD_{name}")).or_default() += n;
        }
        let c = &self.counters;
        let mut counters: BTreeMap<String, u64> = [
            ("malformed_lines", c.malformed_lines),
            ("wakeup_deduplicated", c.wakeup_deduplicated),
            ("waker_from_callchain", c.waker_from_callchain),
            ("wakeup_remote_waker_unknown", c.wakeup_remote_waker_unknown),
            ("fork_tgid_guessed", c.fork_tgid_guessed),
            ("unknown_task_state", c.unknown_task_state),
            ("unknown_syscall_name", c.unknown_syscall_name),
            ("tid_from_sched_switch", c.tid_from_sched_switch),
            ("irq_unmatched_exit", self.irqs.unmatched_exits),
            ("irq_context_reset", self.irqs.resets),
        ]
        .into_iter()
        .filter(|&(_, n)| n > 0)
        .map(|(k, n)| (format!("import.{k}"), n))
        .collect();
        for (name, n) in &ignored {
            counters.insert(format!("import.ignored.{name}"), *n);
        }
        for (name, n) in &counters {
            self.w.add_counter(name, *n);
        }
        let mut summary = self.summary;
        summary.malformed_lines = self.counters.malformed_lines;
        summary.wakeups_deduplicated = self.counters.wakeup_deduplicated;
        summary.wakers_from_callchain = self.counters.waker_from_callchain;
        summary.threads = self.threads.thread_rows;
        summary.processes = self.threads.process_rows;
        summary.ignored_events = ignored;
        summary.counters = counters;
        let out = self.w.finish()?;
        Ok((out, summary))
    }
}
