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

mod context;
mod finish;
mod go;
mod lost;
mod socket;
mod stack;
mod switch;
mod threads;
mod timeline;
mod wakeup;

use crate::cpu::{CpuState, CpuTable};
use crate::irq::{BlockTracker, InterruptSource, IrqTracker};
use crate::process::ProcessEvents;
use crate::segment::{SegmentState, StackRef, UnknownCause};
use crate::stats::{LossWindow, ModelStats};
use crate::thread::Annotation;
use crate::tracker::{IdentityRow, ThreadBuild};
use causeway_format::{
    Cpu, Event, EventKind, Header, Marker, Tables, Tgid, ThreadIndex, Tid, Timestamp,
};
use threads::ThreadTable;

/// CPU lists longer than this come only from CPUs seen in events (a damaged header
/// must not make the model allocate per CPU number).
const MAX_HEADER_CPUS: u32 = 1 << 16;

/// What a thread's first event says about the time before it.
#[derive(Clone, Copy, Debug)]
pub(super) enum FirstSeen {
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
/// use causeway_model::ModelBuilder;
/// use causeway_testkit::synth::Synth;
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
    /// The trace's thread rows by tid, for threads not created in the trace.
    table_threads: ThreadIndex<'t>,
    start: Option<Timestamp>,
    now: Timestamp,
    /// Live threads by tid.
    threads: ThreadTable,
    /// Earlier incarnations of reused tids.
    retired: Vec<ThreadBuild>,
    cpus: CpuTable,
    losses: Vec<LossWindow>,
    irqs: IrqTracker,
    block: BlockTracker,
    proc_events: ProcessEvents,
    stats: ModelStats,
    /// The trace holds only the recorded processes' scheduler events.
    partial: bool,
    /// Sends on sockets, paired with the wake-ups their data caused at the end.
    sends: crate::sockets::SendLog,
    /// Goroutine events, in time order.
    go_events: Vec<crate::goroutines::GoEvent>,
    /// What a sampled waker stack stands for (the header's sampling rate; 1 without).
    waker_sample_weight: u32,
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
            threads: ThreadTable::default(),
            retired: Vec::new(),
            cpus: CpuTable::default(),
            losses: Vec::new(),
            irqs: IrqTracker::default(),
            block: BlockTracker::default(),
            proc_events: ProcessEvents::default(),
            stats: ModelStats::default(),
            partial: header.scope == causeway_format::Scope::Processes,
            sends: Default::default(),
            go_events: Vec::new(),
            waker_sample_weight: header.waker_stack_sampling.map_or(1, |s| s.one_in.max(1)),
        }
    }

    /// Counters so far.
    pub fn stats(&self) -> &ModelStats {
        &self.stats
    }

    /// The recording saw the system until `ts` although its last event may be older
    /// (a flight recorder's dump at a trigger that fired on a stall still going on):
    /// the timelines are closed no earlier than `ts`, so that stall is not cut short.
    pub fn observed_until(&mut self, ts: Timestamp) {
        if self.start.is_some() {
            self.now = self.now.max(ts);
        }
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
        let cpu = self.cpus.get_or_insert(c, trace_start);
        // A stack or a socket mark follows its event: the pending stack target lives on.
        if !matches!(
            ev.kind,
            EventKind::Stack { .. } | EventKind::SockReady { .. } | EventKind::GoNetWait { .. }
        ) {
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
            EventKind::Exec { .. }
            | EventKind::Exit { .. }
            | EventKind::SyscallEnter { .. }
            | EventKind::SyscallExit { .. }
            | EventKind::Marker { .. } => self.on_thread_event(ts, c, &ev.kind),
            EventKind::IrqEntry { .. }
            | EventKind::IrqExit { .. }
            | EventKind::SoftirqEntry { .. }
            | EventKind::SoftirqExit { .. } => self.on_interrupt(ts, c, &ev.kind),
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
            // Signals and timers are facts (`Facts::signals_sent`, `timer_wake`); the
            // threads that took a signal or armed a timer were running here.
            EventKind::SignalDeliver { tid, .. } | EventKind::TimerArm { tid, .. } => {
                self.touch(tid, ts)
            }
            EventKind::SignalGenerate { .. } | EventKind::TimerExpire { .. } => {}
            EventKind::SockSend {
                tid,
                flow,
                bytes,
                seq,
            } => self.on_sock_send(ts, tid, flow, bytes, seq),
            EventKind::SockReady {
                wakee,
                host,
                flow,
                seq,
            } => self.on_sock_ready(ts, wakee, host, flow, seq),
            EventKind::GoRun { .. }
            | EventKind::GoPark { .. }
            | EventKind::GoNetWait { .. }
            | EventKind::GoReady { .. } => self.on_go(ts, c, &ev.kind),
        }
        if let Some(cpu) = self.cpus.get_mut(c) {
            cpu.last_ts = Some(ts);
        }
    }

    /// Events of one thread that change what the model knows about it: exec, exit,
    /// system calls, annotations.
    #[inline]
    fn on_thread_event(&mut self, ts: Timestamp, c: Cpu, kind: &EventKind) {
        match *kind {
            EventKind::Exec { tid, comm, .. } => {
                if let EventKind::Exec { filename, .. } = *kind {
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
            _ => {}
        }
    }

    /// Hard IRQ and softirq entries and exits.
    #[inline]
    fn on_interrupt(&mut self, ts: Timestamp, c: Cpu, kind: &EventKind) {
        match *kind {
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
            _ => {}
        }
    }

    fn trace_start(&self) -> Timestamp {
        self.start.unwrap_or(self.now)
    }

    fn cpu(&mut self, c: Cpu) -> &mut CpuState {
        let trace_start = self.trace_start();
        self.cpus.get_or_insert(c, trace_start)
    }

    /// Update first/last seen of an existing thread.
    fn touch(&mut self, tid: Tid, ts: Timestamp) {
        if let Some(th) = self.threads.get_mut(tid) {
            th.touch(ts);
        }
    }
}

pub(super) fn unknown(cause: UnknownCause) -> SegmentState {
    SegmentState::Unknown { cause }
}

/// Blocked since before the thread's first event: state and reason not seen.
pub(super) fn blocked_unseen() -> SegmentState {
    SegmentState::Blocked {
        state: None,
        waker: None,
        switch_out_stack: None,
        syscall: None,
    }
}
