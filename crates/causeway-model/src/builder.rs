//! The streaming model builder: feed events in time order, get a [`Model`].
//!
//! Memory grows with threads, segments, interrupts and block requests, never with the
//! raw event count. The builder trusts nothing: events that contradict the model are
//! counted in [`ModelStats`] and the affected interval is marked unknown, never guessed;
//! events older than the newest seen are treated as happening at the newest time.
//!
//! Partial traces: a thread first seen being woken was blocked since the trace start, a
//! thread first seen switching in was runnable, a thread first seen switching out (or
//! making a system call) was running on that CPU if nothing else was known to run
//! there. These backfilled segments have `start_known: false`. If events were lost
//! before a thread's first event, the backfill starts at the last loss and the time
//! before is [`UnknownCause::LostEvents`].
//!
//! Lost events: a `lost` record on a CPU turns the thread running there, and threads
//! queued there, to [`UnknownCause::LostEvents`] from the last event seen on that CPU
//! until their next scheduler event. Any other thread whose next event contradicts the
//! model gets an unknown segment from the first loss after its segment began.

use crate::cpu::{CpuState, Pending, StackTarget};
use crate::irq::{BlockTracker, InterruptSource, IrqTracker};
use crate::model::Model;
use crate::process::{ProcessEvents, build_processes};
use crate::segment::{SegmentState, StackRef, TimeSpan, UnknownCause, WakeInfo};
use crate::stats::{LossWindow, ModelStats};
use crate::thread::{Annotation, Thread, ThreadIdentity};
use crate::totals::ThreadTotals;
use crate::tracker::{IdentityRow, Life, ThreadBuild};
use causeway_format::{
    Cpu, Event, EventKind, Header, Marker, StackKind, Tables, TaskState, Tgid, ThreadIndex,
    ThreadInfo, Tid, Timestamp, Waker,
};
use std::collections::{BTreeMap, HashMap};

/// CPU lists longer than this come only from CPUs seen in events (a damaged header
/// must not make the model allocate per CPU number).
const MAX_HEADER_CPUS: u32 = 1 << 16;

/// What a thread's first event says about the time before it.
#[derive(Clone, Copy, Debug)]
enum FirstSeen {
    /// It was running on `cpu`; `consistent` is false if another thread was known to be
    /// current there, in which case the time before is unknown.
    Running { cpu: Cpu, consistent: bool },
    /// It was waiting for a CPU.
    Runnable { cpu: Cpu },
    /// It was blocked.
    Blocked,
}

/// Builds a [`Model`] from a time-ordered stream of events.
///
/// ```
/// use causeway_format::{Header, Tables};
/// use causeway_model::{ModelBuilder, synth::Synth};
/// let mut s = Synth::new();
/// s.switch(1_000, 0, 0, causeway_format::TaskState::RUNNABLE, 7);
/// let tables = Tables::default();
/// let mut b = ModelBuilder::new(&tables, &Header::synthetic(1));
/// for ev in &s.events() {
///     b.push(ev);
/// }
/// let model = b.finish();
/// assert_eq!(model.threads().count(), 1);
/// ```
#[derive(Debug)]
pub struct ModelBuilder<'t> {
    tables: &'t Tables,
    cpu_count: u32,
    /// Table thread rows by tid, oldest first.
    /// The trace's thread rows by tid, for threads not created in the trace.
    table_threads: ThreadIndex<'t>,
    start: Option<Timestamp>,
    now: Timestamp,
    threads: HashMap<Tid, ThreadBuild>,
    /// Earlier incarnations of reused tids.
    retired: Vec<ThreadBuild>,
    cpus: BTreeMap<Cpu, CpuState>,
    losses: Vec<LossWindow>,
    irqs: IrqTracker,
    block: BlockTracker,
    proc_events: ProcessEvents,
    stats: ModelStats,
    /// The trace holds only the recorded processes' scheduler events.
    partial: bool,
}

impl<'t> ModelBuilder<'t> {
    /// A builder for a trace with these tables and header. The tables give threads'
    /// names and processes; the header gives the CPU count.
    pub fn new(tables: &'t Tables, header: &Header) -> ModelBuilder<'t> {
        let table_threads = ThreadIndex::new(tables);
        ModelBuilder {
            tables,
            cpu_count: header.cpu_count,
            table_threads,
            start: None,
            now: Timestamp(0),
            threads: HashMap::new(),
            retired: Vec::new(),
            cpus: BTreeMap::new(),
            losses: Vec::new(),
            irqs: IrqTracker::default(),
            block: BlockTracker::default(),
            proc_events: ProcessEvents::default(),
            stats: ModelStats::default(),
            partial: header.scope == causeway_format::Scope::Processes,
        }
    }

    /// Counters so far.
    pub fn stats(&self) -> &ModelStats {
        &self.stats
    }

    /// Feed the next event. Events must come in time order (as
    /// [`causeway_format::TraceReader::events`] yields them); older ones are counted
    /// and treated as happening at the newest time seen.
    pub fn push(&mut self, ev: &Event) {
        self.stats.events += 1;
        let ts = match self.start {
            None => {
                self.start = Some(ev.ts);
                self.now = ev.ts;
                ev.ts
            }
            Some(_) if ev.ts < self.now => {
                self.stats.out_of_order_events += 1;
                self.now
            }
            Some(_) => {
                self.now = ev.ts;
                ev.ts
            }
        };
        let c = ev.cpu;
        let trace_start = self.trace_start();
        let cpu = self
            .cpus
            .entry(c)
            .or_insert_with(|| CpuState::new(c, trace_start));
        if !matches!(ev.kind, EventKind::Stack { .. }) {
            cpu.pending = None;
        }
        match ev.kind {
            EventKind::SchedSwitch {
                prev_tid,
                prev_state,
                next_tid,
            } => self.on_switch(ts, c, prev_tid, prev_state, next_tid),
            EventKind::Wakeup {
                wakee,
                target_cpu,
                waker,
            } => self.on_wakeup(ts, c, wakee, target_cpu, waker, false),
            EventKind::WakeupNew {
                wakee,
                target_cpu,
                waker,
            } => self.on_wakeup(ts, c, wakee, target_cpu, waker, true),
            EventKind::Fork {
                parent_tid,
                parent_tgid,
                child_tid,
                child_tgid,
            } => self.on_fork(ts, c, parent_tid, parent_tgid, child_tid, child_tgid),
            EventKind::Exec { tid, comm, .. } => {
                if let EventKind::Exec { filename, .. } = ev.kind {
                    self.proc_events.execs.push((ts, Tgid(tid.0), filename));
                }
                if let Some(th) = self.on_context(ts, c, tid) {
                    th.identity.push(IdentityRow {
                        since: ts,
                        tgid: Some(Tgid(tid.0)),
                        comm: Some(comm),
                    });
                }
            }
            EventKind::Exit { tid } => {
                if let Some(th) = self.on_context(ts, c, tid) {
                    th.exited = Some(ts);
                }
            }
            EventKind::SyscallEnter { tid, nr, .. } => {
                if let Some(th) = self.on_context(ts, c, tid) {
                    th.syscall = Some(nr);
                }
            }
            EventKind::SyscallExit { tid, .. } => {
                if let Some(th) = self.on_context(ts, c, tid) {
                    th.syscall = None;
                }
            }
            EventKind::Marker { tid, marker } => {
                if let Some(th) = self.on_context(ts, c, tid)
                    && matches!(
                        marker,
                        Marker::SpinBegin { .. } | Marker::SpinEnd { .. } | Marker::FalseWakeup
                    )
                {
                    th.annotations.push(Annotation { ts, marker });
                }
            }
            EventKind::IrqEntry { irq, name } => {
                self.irqs.entry(c, ts, InterruptSource::Irq { irq, name });
            }
            EventKind::IrqExit { irq, .. } => {
                let m = |s: &InterruptSource| matches!(s, InterruptSource::Irq { irq: i, .. } if *i == irq);
                if !self.irqs.exit(c, ts, m) {
                    self.stats.unmatched_irq_exits += 1;
                }
            }
            EventKind::SoftirqEntry { vec } => {
                self.irqs.entry(c, ts, InterruptSource::Softirq { vec });
            }
            EventKind::SoftirqExit { vec } => {
                let m = |s: &InterruptSource| matches!(s, InterruptSource::Softirq { vec: v } if *v == vec);
                if !self.irqs.exit(c, ts, m) {
                    self.stats.unmatched_softirq_exits += 1;
                }
            }
            EventKind::BlockIssue {
                tid,
                dev,
                sector,
                bytes,
                op,
            } => {
                self.touch(tid, ts);
                self.block
                    .issue(&mut self.stats, ts, c, tid, dev, sector, bytes, op);
            }
            EventKind::BlockComplete {
                dev,
                sector,
                bytes,
                op,
                error,
            } => self
                .block
                .complete(&mut self.stats, ts, c, dev, sector, bytes, op, error),
            EventKind::NetXmit { tid, .. } | EventKind::NetRecv { tid, .. } => self.touch(tid, ts),
            EventKind::Stack {
                tid,
                kind,
                user,
                kernel,
            } => self.on_stack(ts, c, tid, kind, StackRef { user, kernel }),
            EventKind::Lost { count } => self.on_lost(ts, c, count),
        }
        if let Some(cpu) = self.cpus.get_mut(&c) {
            cpu.last_ts = Some(ts);
        }
    }

    fn trace_start(&self) -> Timestamp {
        self.start.unwrap_or(self.now)
    }

    fn cpu(&mut self, c: Cpu) -> &mut CpuState {
        let trace_start = self.trace_start();
        self.cpus
            .entry(c)
            .or_insert_with(|| CpuState::new(c, trace_start))
    }

    /// Update first/last seen of an existing thread.
    fn touch(&mut self, tid: Tid, ts: Timestamp) {
        if let Some(th) = self.threads.get_mut(&tid) {
            th.touch(ts);
        }
    }

    /// Identity rows for a thread not created in the trace.
    fn table_identity(&self, tid: Tid) -> Vec<IdentityRow> {
        self.table_threads
            .rows(tid)
            .iter()
            .map(|t| identity_row(t))
            .collect()
    }

    /// The first loss window that may hide a state change of a segment that began at
    /// `seg_start`; returns where certainty ends.
    fn loss_split(&self, seg_start: Timestamp, ts: Timestamp) -> Option<Timestamp> {
        let i = self.losses.partition_point(|l| l.to <= seg_start);
        self.losses.get(i).map(|l| l.from.max(seg_start).min(ts))
    }

    /// Move the current incarnation of `tid` (if any) to the retired list, closing its
    /// timeline at `ts` with an unknown end.
    fn retire(&mut self, tid: Tid, ts: Timestamp) -> Option<Timestamp> {
        let mut old = self.threads.remove(&tid)?;
        old.close(ts, false);
        let end = old.timeline_end();
        self.retired.push(old);
        end
    }

    /// Make sure `tid` has a live timeline, creating or backfilling it per `hint`.
    /// Returns `None` for the idle task.
    fn ensure(&mut self, tid: Tid, ts: Timestamp, hint: FirstSeen) -> Option<&mut ThreadBuild> {
        if tid.is_idle() {
            return None;
        }
        let mut floor = self.trace_start();
        match self.threads.get(&tid).map(|t| t.life) {
            Some(Life::Live(_)) => {}
            Some(Life::Created { at }) => {
                let th = self.threads.get_mut(&tid)?;
                let state = match hint {
                    FirstSeen::Running { .. } => SegmentState::Unknown {
                        cause: UnknownCause::BeforeFirstEvent,
                    },
                    FirstSeen::Runnable { cpu } => SegmentState::Runnable {
                        cpu: Some(cpu),
                        preempted: false,
                    },
                    FirstSeen::Blocked => blocked_unseen(),
                };
                th.open(at, false, state);
            }
            Some(Life::Ended) => {
                self.stats.events_after_exit += 1;
                if let Some(end) = self.retire(tid, ts) {
                    floor = floor.max(end);
                }
                self.create(tid, ts, hint, floor);
            }
            None => self.create(tid, ts, hint, floor),
        }
        let th = self.threads.get_mut(&tid)?;
        th.touch(ts);
        Some(th)
    }

    /// Create a thread that existed before its first event at `ts`, backfilling its
    /// timeline from `floor` (or the last loss) per `hint`.
    fn create(&mut self, tid: Tid, ts: Timestamp, hint: FirstSeen, floor: Timestamp) {
        let mut th = ThreadBuild::new(tid, ts, self.table_identity(tid));
        let mut start = floor.min(ts);
        if let Some(l) = self.losses.iter().rev().find(|l| l.to <= ts)
            && l.to > start
        {
            th.open(start, false, unknown(UnknownCause::LostEvents));
            th.close(l.to, false);
            start = l.to;
        }
        let state = match hint {
            FirstSeen::Running {
                cpu,
                consistent: true,
            } => SegmentState::Running { cpu },
            FirstSeen::Running {
                consistent: false, ..
            } => unknown(UnknownCause::BeforeFirstEvent),
            FirstSeen::Runnable { cpu } => SegmentState::Runnable {
                cpu: Some(cpu),
                preempted: false,
            },
            FirstSeen::Blocked => blocked_unseen(),
        };
        th.open(start, false, state);
        self.threads.insert(tid, th);
    }

    /// The events contradict `tid`'s open segment at `ts`. If lost events can explain
    /// it, the segment ends at the loss and an unknown segment follows; otherwise it
    /// ends at `ts` with an unknown end. Returns true if a loss explains it.
    fn invalidate(&mut self, tid: Tid, ts: Timestamp) -> bool {
        let Some(open) = self.threads.get(&tid).and_then(|t| t.open_seg()).copied() else {
            return true;
        };
        if open.state.is_unknown() {
            return true;
        }
        if let SegmentState::Running { cpu } = open.state
            && let Some(cs) = self.cpus.get_mut(&cpu)
            && cs.current == Some(tid)
        {
            cs.current = None;
        }
        let split = self.loss_split(open.start, ts);
        let Some(th) = self.threads.get_mut(&tid) else {
            return true;
        };
        match split {
            Some(p) => {
                th.mark_unknown(p, UnknownCause::LostEvents);
                true
            }
            None => {
                th.mark_unknown(ts, UnknownCause::Inconsistent);
                false
            }
        }
    }

    fn on_switch(&mut self, ts: Timestamp, c: Cpu, prev: Tid, prev_state: TaskState, next: Tid) {
        let believed = self.cpu(c).current;
        if let Some(y) = believed
            && y != prev
        {
            if self.partial {
                self.stats.outside_scope += 1;
            } else {
                self.stats.cpu_current_mismatch += 1;
            }
            if !y.is_idle()
                && matches!(self.threads.get(&y).and_then(ThreadBuild::state),
                    Some(SegmentState::Running { cpu }) if cpu == c)
            {
                self.invalidate(y, ts);
            }
        }
        if !prev.is_idle() {
            let consistent = believed.is_none() || believed == Some(prev);
            let hint = FirstSeen::Running { cpu: c, consistent };
            let state = self.ensure(prev, ts, hint).and_then(|t| t.state());
            let fits = match state {
                Some(SegmentState::Running { cpu }) => cpu == c,
                Some(SegmentState::Unknown { .. }) | None => true,
                _ => false,
            };
            if !fits && !self.invalidate(prev, ts) {
                if self.partial {
                    self.stats.outside_scope += 1;
                } else {
                    self.stats.switch_out_not_running += 1;
                }
            }
            if let Some(th) = self.threads.get_mut(&prev) {
                if prev_state.is_exiting() {
                    th.close(ts, true);
                    th.life = Life::Ended;
                    th.exited.get_or_insert(ts);
                } else if prev_state.is_runnable() {
                    th.transition(
                        ts,
                        SegmentState::Runnable {
                            cpu: Some(c),
                            preempted: true,
                        },
                    );
                } else {
                    let syscall = th.syscall;
                    th.transition(
                        ts,
                        SegmentState::Blocked {
                            state: Some(prev_state),
                            waker: None,
                            switch_out_stack: None,
                            syscall,
                        },
                    );
                }
            }
        }
        self.cpu(c).pending = Some(Pending {
            ts,
            target: StackTarget::SwitchOut { tid: prev },
        });
        if !next.is_idle() {
            let state = self
                .ensure(next, ts, FirstSeen::Runnable { cpu: c })
                .and_then(|t| t.state());
            match state {
                Some(SegmentState::Runnable { .. } | SegmentState::Unknown { .. }) | None => {}
                Some(SegmentState::Blocked { .. }) => self.switch_in_unwoken(next, ts),
                Some(SegmentState::Running { .. }) => {
                    if !self.invalidate(next, ts) {
                        self.stats.switch_in_while_running += 1;
                    }
                }
            }
            if let Some(th) = self.threads.get_mut(&next) {
                th.transition(ts, SegmentState::Running { cpu: c });
                th.wake_while_running = None;
            }
        }
        let cpu = self.cpu(c);
        cpu.current = Some(next);
        cpu.switch(ts, prev, next);
    }

    /// `tid` is switched in at `ts` while the model believes it blocked, with no
    /// wake-up seen since it blocked.
    fn switch_in_unwoken(&mut self, tid: Tid, ts: Timestamp) {
        let Some(th) = self.threads.get_mut(&tid) else {
            return;
        };
        let early = th.wake_while_running.take();
        let since = th.open_seg().map_or(ts, |o| o.start);
        match early {
            // The wake-up raced with the switch-out: the thread never really slept.
            Some(w) if self.loss_split(since, ts).is_none() => {
                self.stats.wakeups_before_switch_out += 1;
                let Some(th) = self.threads.get_mut(&tid) else {
                    return;
                };
                th.wakeups += 1;
                let runnable = SegmentState::Runnable {
                    cpu: Some(w.target_cpu),
                    preempted: false,
                };
                th.wake(WakeInfo { ts: since, ..w }, runnable);
            }
            _ => {
                if !self.invalidate(tid, ts) {
                    if self.partial {
                        self.stats.outside_scope += 1;
                    } else {
                        self.stats.switch_in_without_wakeup += 1;
                    }
                }
            }
        }
    }

    fn on_wakeup(
        &mut self,
        ts: Timestamp,
        c: Cpu,
        wakee: Tid,
        target_cpu: Cpu,
        waker: Waker,
        new: bool,
    ) {
        if wakee.is_idle() {
            return;
        }
        let runnable = SegmentState::Runnable {
            cpu: Some(target_cpu),
            preempted: false,
        };
        let life = self.threads.get(&wakee).map(|t| t.life);
        let starts_life = match life {
            None | Some(Life::Ended) => new,
            Some(Life::Created { .. }) => true,
            Some(Life::Live(_)) => {
                if new {
                    self.stats.wakeup_new_for_live_thread += 1;
                }
                false
            }
        };
        if starts_life {
            if matches!(life, Some(Life::Ended)) {
                self.retire(wakee, ts);
            }
            let identity = self.table_identity(wakee);
            let th = self.threads.entry(wakee).or_insert_with(|| {
                let mut th = ThreadBuild::new(wakee, ts, identity);
                th.created = Some(ts);
                th
            });
            th.touch(ts);
            th.open(ts, true, runnable);
            self.cpu(c).pending = Some(Pending {
                ts,
                target: StackTarget::WakerUnused,
            });
            return;
        }
        let Some(th) = self.ensure(wakee, ts, FirstSeen::Blocked) else {
            return;
        };
        match th.state() {
            Some(SegmentState::Blocked { .. }) => {
                let wake = WakeInfo {
                    ts,
                    cpu: c,
                    target_cpu,
                    waker,
                    waker_stack: None,
                };
                th.wakeups += 1;
                if let Some(seg) = th.wake(wake, runnable) {
                    self.cpu(c).pending = Some(Pending {
                        ts,
                        target: StackTarget::Waker { wakee, seg },
                    });
                }
            }
            Some(SegmentState::Unknown { .. }) => {
                th.wakeups += 1;
                th.transition(ts, runnable);
                self.cpu(c).pending = Some(Pending {
                    ts,
                    target: StackTarget::WakerUnused,
                });
            }
            state => {
                if matches!(state, Some(SegmentState::Running { .. })) {
                    th.wake_while_running = Some(WakeInfo {
                        ts,
                        cpu: c,
                        target_cpu,
                        waker,
                        waker_stack: None,
                    });
                }
                th.wakeups_not_blocked += 1;
                self.stats.wakeups_not_blocked += 1;
                self.cpu(c).pending = Some(Pending {
                    ts,
                    target: StackTarget::WakerUnused,
                });
            }
        }
    }

    /// An event `tid` emitted while running on `c` (system call, exec, exit, fork,
    /// marker). Returns the thread, if it is not the idle task.
    fn on_context(&mut self, ts: Timestamp, c: Cpu, tid: Tid) -> Option<&mut ThreadBuild> {
        if tid.is_idle() {
            return None;
        }
        let believed = self.cpu(c).current;
        let consistent = believed.is_none() || believed == Some(tid);
        let is_new = !self.threads.contains_key(&tid);
        let hint = FirstSeen::Running { cpu: c, consistent };
        let state = self.ensure(tid, ts, hint).and_then(|t| t.state());
        let mut running_here = false;
        match state {
            Some(SegmentState::Running { cpu }) if cpu == c => running_here = true,
            Some(SegmentState::Unknown { .. }) if consistent => {
                // The thread is running here now; when it started is still unknown.
                if let Some(th) = self.threads.get_mut(&tid) {
                    th.close(ts, false);
                    th.open(ts, false, SegmentState::Running { cpu: c });
                }
                running_here = true;
            }
            _ => {}
        }
        if !consistent || (!running_here && !is_new) {
            self.stats.context_mismatch += 1;
        }
        if running_here && believed.is_none() {
            self.cpu(c).current = Some(tid);
        }
        self.threads.get_mut(&tid)
    }

    fn on_fork(
        &mut self,
        ts: Timestamp,
        c: Cpu,
        parent: Tid,
        parent_tgid: Tgid,
        child: Tid,
        child_tgid: Tgid,
    ) {
        let mut parent_comm = None;
        if let Some(p) = self.on_context(ts, c, parent) {
            match p.identity.last_mut() {
                Some(row) if row.tgid.is_none() => row.tgid = Some(parent_tgid),
                Some(_) => {}
                None => p.identity.push(IdentityRow {
                    since: ts,
                    tgid: Some(parent_tgid),
                    comm: None,
                }),
            }
            parent_comm = p.identity.last().and_then(|r| r.comm);
        }
        if child_tgid != parent_tgid && child_tgid.0 != 0 {
            self.proc_events.forks.push((ts, parent_tgid, child_tgid));
        }
        if child.is_idle() {
            return;
        }
        if let Some(old) = self.threads.get(&child)
            && !matches!(old.life, Life::Ended)
        {
            self.stats.tid_reused_without_exit += 1;
        }
        self.retire(child, ts);
        let mut identity = vec![IdentityRow {
            since: ts,
            tgid: Some(child_tgid),
            comm: parent_comm,
        }];
        // Rows written for the new thread; older ones belong to an earlier thread with
        // the same tid.
        for r in self
            .table_threads
            .rows(child)
            .iter()
            .filter(|r| r.since >= ts)
        {
            if r.since == ts {
                identity.clear();
            }
            identity.push(identity_row(r));
        }
        let mut th = ThreadBuild::new(child, ts, identity);
        th.created = Some(ts);
        th.parent_tid = (!parent.is_idle()).then_some(parent);
        th.life = Life::Created { at: ts };
        self.threads.insert(child, th);
    }

    fn on_stack(&mut self, ts: Timestamp, c: Cpu, tid: Tid, kind: StackKind, stack: StackRef) {
        if !matches!(kind, StackKind::SwitchOut | StackKind::Waker) {
            return;
        }
        let pending = self.cpu(c).pending.filter(|p| p.ts == ts);
        match (kind, pending.map(|p| p.target)) {
            (StackKind::SwitchOut, Some(StackTarget::SwitchOut { tid: t })) if t == tid => {
                self.cpu(c).pending = None;
                // Only a blocking switch-out has a segment to hold the stack; a
                // preempted thread's stack is not needed.
                if let Some(th) = self.threads.get_mut(&tid)
                    && let Life::Live(open) = &mut th.life
                    && open.start == ts
                    && let SegmentState::Blocked {
                        switch_out_stack, ..
                    } = &mut open.state
                {
                    *switch_out_stack = Some(stack);
                }
            }
            (StackKind::Waker, Some(StackTarget::WakerUnused)) => self.cpu(c).pending = None,
            (StackKind::Waker, Some(StackTarget::Waker { wakee, seg })) => {
                self.cpu(c).pending = None;
                if let Some(SegmentState::Blocked { waker: Some(w), .. }) = self
                    .threads
                    .get_mut(&wakee)
                    .and_then(|th| th.segments.get_mut(seg))
                    .map(|s| &mut s.state)
                {
                    w.waker_stack = Some(stack);
                }
            }
            _ => self.stats.unattached_stacks += 1,
        }
    }

    fn on_lost(&mut self, ts: Timestamp, c: Cpu, count: u64) {
        self.stats.lost_records += 1;
        self.stats.lost_events = self.stats.lost_events.saturating_add(count);
        let trace_start = self.trace_start();
        let cpu = self.cpu(c);
        let from = cpu.last_ts.unwrap_or(trace_start).min(ts);
        cpu.lost(from);
        self.losses.push(LossWindow {
            cpu: c,
            from,
            to: ts,
            count,
        });
        self.irqs.abandon_cpu(c, from);
        for th in self.threads.values_mut() {
            let Some(open) = th.open_seg().copied() else {
                continue;
            };
            let here = match open.state {
                SegmentState::Running { cpu } => cpu == c,
                SegmentState::Runnable { cpu, .. } => cpu == Some(c),
                _ => false,
            };
            if here {
                th.mark_unknown(from.max(open.start), UnknownCause::LostEvents);
                th.syscall = None;
            }
        }
    }

    /// Close all timelines at the last event time and assemble the model.
    pub fn finish(mut self) -> Model {
        let start = self.trace_start();
        let end = self.now.max(start);
        let mut builds: Vec<ThreadBuild> = self.threads.into_values().collect();
        builds.append(&mut self.retired);
        let tables = self.tables;
        let mut threads: Vec<Thread> = builds
            .into_iter()
            .map(|mut b| {
                b.close(end, false);
                finish_thread(tables, b)
            })
            .collect();
        threads.sort_by_key(|t| (t.tid, t.span().map(|s| s.start), t.created));
        let mut interrupts = self.irqs.finish(end);
        interrupts.sort_by_key(|i| (i.start, i.cpu, i.end));
        let block_requests = self.block.finish(&mut self.stats);
        if self.cpu_count <= MAX_HEADER_CPUS {
            for n in 0..self.cpu_count {
                self.cpus
                    .entry(Cpu(n))
                    .or_insert_with(|| CpuState::new(Cpu(n), start));
            }
        }
        let mut cpus: Vec<_> = self.cpus.into_values().map(|c| c.finish(end)).collect();
        let mut by_cpu: HashMap<Cpu, usize> = HashMap::new();
        for (i, c) in cpus.iter().enumerate() {
            by_cpu.insert(c.cpu, i);
        }
        for i in &interrupts {
            if let Some(c) = by_cpu.get(&i.cpu).and_then(|&n| cpus.get_mut(n)) {
                match i.source {
                    InterruptSource::Irq { .. } => c.irq += i.duration(),
                    InterruptSource::Softirq { .. } => c.softirq += i.duration(),
                }
            }
        }
        let processes = build_processes(tables, &self.table_threads, &self.proc_events, &threads);
        Model {
            span: self.start.map(|s| TimeSpan { start: s, end }),
            threads,
            processes,
            cpus,
            interrupts,
            block_requests,
            losses: self.losses,
            stats: self.stats,
        }
    }
}

fn unknown(cause: UnknownCause) -> SegmentState {
    SegmentState::Unknown { cause }
}

/// Blocked since before the thread's first event: state and reason not seen.
fn identity_row(t: &ThreadInfo) -> IdentityRow {
    IdentityRow {
        since: t.since,
        tgid: Some(t.tgid),
        comm: Some(t.comm),
    }
}

fn blocked_unseen() -> SegmentState {
    SegmentState::Blocked {
        state: None,
        waker: None,
        switch_out_stack: None,
        syscall: None,
    }
}

/// Resolve names and compute totals.
fn finish_thread(tables: &Tables, b: ThreadBuild) -> Thread {
    let mut rows = b.identity;
    rows.sort_by_key(|r| r.since);
    let mut identity: Vec<ThreadIdentity> = Vec::with_capacity(rows.len());
    let mut comm_id = None;
    let mut tgid = None;
    for r in rows {
        // A row without a name or process keeps the previous one.
        comm_id = r.comm.or(comm_id);
        tgid = r.tgid.or(tgid);
        let comm = comm_id
            .map(|id| tables.string(id).to_string())
            .unwrap_or_default();
        let same = identity
            .last()
            .is_some_and(|l| l.tgid == tgid && l.comm == comm);
        if !same {
            identity.push(ThreadIdentity {
                since: r.since,
                tgid,
                comm,
            });
        }
    }
    let mut totals = ThreadTotals {
        wakeups: b.wakeups,
        wakeups_not_blocked: b.wakeups_not_blocked,
        first_seen: b.first_seen,
        last_seen: b.last_seen,
        ..ThreadTotals::default()
    };
    totals.add_segments(&b.segments);
    Thread {
        tid: b.tid,
        tgid: identity.last().and_then(|i| i.tgid),
        comm: identity.last().map(|i| i.comm.clone()).unwrap_or_default(),
        identity,
        created: b.created,
        parent_tid: b.parent_tid,
        exited: b.exited,
        segments: b.segments,
        annotations: b.annotations,
        totals,
    }
}
