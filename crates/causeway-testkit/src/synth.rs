//! Concise construction of synthetic event streams for tests.
//!
//! Times are plain nanosecond numbers and tids and CPUs plain integers, so a scenario
//! reads like a table. [`Synth::events`] returns the events sorted by time and CPU
//! (stably, so a stack stays right after its event), as a trace reader yields them.
//!
//! ```
//! use causeway_format::{TaskState, Waker};
//! use causeway_testkit::synth::Synth;
//! let mut s = Synth::new();
//! s.switch(100, 0, 7, TaskState::INTERRUPTIBLE, 0)
//!     .wakeup(300, 1, 7, 0, Waker::Unknown)
//!     .switch(400, 0, 0, TaskState::RUNNABLE, 7);
//! let model = s.model(1);
//! // Blocked, runnable, running (the zero-length running backfill at the trace
//! // start is dropped).
//! assert_eq!(model.thread(causeway_format::Tid(7)).unwrap().segments.len(), 3);
//! ```

use causeway_format::{
    BlockOp, BlockOpKind, Cpu, DevId, Event, EventKind, Header, Marker, SoftirqVec, StackId,
    StackKind, StringId, Tables, TaskState, Tgid, Tid, Timestamp, Waker, WriterOptions,
    write_to_vec,
};
use causeway_model::Model;

/// A growing list of synthetic events.
#[derive(Clone, Debug, Default)]
pub struct Synth {
    events: Vec<Event>,
}

impl Synth {
    /// An empty stream.
    pub fn new() -> Synth {
        Synth::default()
    }

    /// Append any event.
    pub fn push(&mut self, ts: u64, cpu: u32, kind: EventKind) -> &mut Synth {
        self.events.push(Event {
            ts: Timestamp(ts),
            cpu: Cpu(cpu),
            kind,
        });
        self
    }

    /// `sched_switch` on `cpu` from `prev` (leaving in `state`) to `next`.
    pub fn switch(
        &mut self,
        ts: u64,
        cpu: u32,
        prev: u32,
        state: TaskState,
        next: u32,
    ) -> &mut Synth {
        self.push(
            ts,
            cpu,
            EventKind::SchedSwitch {
                prev_tid: Tid(prev),
                prev_state: state,
                next_tid: Tid(next),
            },
        )
    }

    /// Wake-up of `wakee`, performed on `cpu`, queued on `target`.
    pub fn wakeup(
        &mut self,
        ts: u64,
        cpu: u32,
        wakee: u32,
        target: u32,
        waker: Waker,
    ) -> &mut Synth {
        self.push(
            ts,
            cpu,
            EventKind::Wakeup {
                wakee: Tid(wakee),
                target_cpu: Cpu(target),
                waker,
            },
        )
    }

    /// Wake-up of `wakee` by thread `waker` on `cpu`, queued on the same CPU.
    pub fn wake_by(&mut self, ts: u64, cpu: u32, waker: u32, wakee: u32) -> &mut Synth {
        self.wakeup(ts, cpu, wakee, cpu, Waker::Thread { tid: Tid(waker) })
    }

    /// First wake-up of a new thread `wakee` by `waker`, queued on `cpu`.
    pub fn wakeup_new(&mut self, ts: u64, cpu: u32, waker: u32, wakee: u32) -> &mut Synth {
        self.push(
            ts,
            cpu,
            EventKind::WakeupNew {
                wakee: Tid(wakee),
                target_cpu: Cpu(cpu),
                waker: Waker::Thread { tid: Tid(waker) },
            },
        )
    }

    /// `parent` (of process `parent_tgid`) creates `child` in process `child_tgid`.
    pub fn fork(
        &mut self,
        ts: u64,
        cpu: u32,
        (parent, parent_tgid): (u32, u32),
        (child, child_tgid): (u32, u32),
    ) -> &mut Synth {
        self.push(
            ts,
            cpu,
            EventKind::Fork {
                parent_tid: Tid(parent),
                parent_tgid: Tgid(parent_tgid),
                child_tid: Tid(child),
                child_tgid: Tgid(child_tgid),
            },
        )
    }

    /// `tid` execs; `comm` and `filename` are string table ids.
    pub fn exec(&mut self, ts: u64, cpu: u32, tid: u32, comm: u32, filename: u32) -> &mut Synth {
        self.push(
            ts,
            cpu,
            EventKind::Exec {
                tid: Tid(tid),
                comm: StringId(comm),
                filename: StringId(filename),
            },
        )
    }

    /// `tid` exits (`sched_process_exit`; its final switch-out follows separately).
    pub fn exit(&mut self, ts: u64, cpu: u32, tid: u32) -> &mut Synth {
        self.push(ts, cpu, EventKind::Exit { tid: Tid(tid) })
    }

    /// Stack of `tid` for the event just pushed on `cpu` at `ts`.
    pub fn stack(
        &mut self,
        ts: u64,
        cpu: u32,
        tid: u32,
        kind: StackKind,
        user: Option<u32>,
        kernel: Option<u32>,
    ) -> &mut Synth {
        self.push(
            ts,
            cpu,
            EventKind::Stack {
                tid: Tid(tid),
                kind,
                user: user.map(StackId),
                kernel: kernel.map(StackId),
            },
        )
    }

    /// Hard IRQ `irq` (handler name id `name`) entry.
    pub fn irq_entry(&mut self, ts: u64, cpu: u32, irq: u32, name: u32) -> &mut Synth {
        self.push(
            ts,
            cpu,
            EventKind::IrqEntry {
                irq,
                name: StringId(name),
            },
        )
    }

    /// Hard IRQ `irq` exit.
    pub fn irq_exit(&mut self, ts: u64, cpu: u32, irq: u32) -> &mut Synth {
        self.push(ts, cpu, EventKind::IrqExit { irq, handled: true })
    }

    /// Softirq entry.
    pub fn softirq_entry(&mut self, ts: u64, cpu: u32, vec: SoftirqVec) -> &mut Synth {
        self.push(ts, cpu, EventKind::SoftirqEntry { vec })
    }

    /// Softirq exit.
    pub fn softirq_exit(&mut self, ts: u64, cpu: u32, vec: SoftirqVec) -> &mut Synth {
        self.push(ts, cpu, EventKind::SoftirqExit { vec })
    }

    /// System call entry.
    pub fn syscall_enter(&mut self, ts: u64, cpu: u32, tid: u32, nr: u32) -> &mut Synth {
        self.push(
            ts,
            cpu,
            EventKind::SyscallEnter {
                tid: Tid(tid),
                nr,
                args: [0; 3],
            },
        )
    }

    /// System call exit.
    pub fn syscall_exit(&mut self, ts: u64, cpu: u32, tid: u32, nr: u32) -> &mut Synth {
        self.push(
            ts,
            cpu,
            EventKind::SyscallExit {
                tid: Tid(tid),
                nr,
                ret: 0,
            },
        )
    }

    /// A synchronous write of `bytes` at `sector` issued by `tid`.
    pub fn block_issue(
        &mut self,
        ts: u64,
        cpu: u32,
        tid: u32,
        (dev, sector): (u32, u64),
        bytes: u32,
    ) -> &mut Synth {
        self.push(
            ts,
            cpu,
            EventKind::BlockIssue {
                tid: Tid(tid),
                dev: DevId(dev),
                sector,
                bytes,
                op: write_op(),
            },
        )
    }

    /// Completion of the request at `sector`.
    pub fn block_complete(&mut self, ts: u64, cpu: u32, (dev, sector): (u32, u64)) -> &mut Synth {
        self.push(
            ts,
            cpu,
            EventKind::BlockComplete {
                dev: DevId(dev),
                sector,
                bytes: 512,
                op: write_op(),
                error: 0,
            },
        )
    }

    /// A marker from `tid`.
    pub fn marker(&mut self, ts: u64, cpu: u32, tid: u32, marker: Marker) -> &mut Synth {
        self.push(
            ts,
            cpu,
            EventKind::Marker {
                tid: Tid(tid),
                marker,
            },
        )
    }

    /// `count` events lost on `cpu` just before `ts`.
    pub fn lost(&mut self, ts: u64, cpu: u32, count: u64) -> &mut Synth {
        self.push(ts, cpu, EventKind::Lost { count })
    }

    /// The events sorted by time, then CPU (stable).
    pub fn events(&self) -> Vec<Event> {
        let mut v = self.events.clone();
        v.sort_by_key(|e| (e.ts, e.cpu));
        v
    }

    /// Thread `tid` on `cpu` blocks at `from` until thread `waker` (on `waker_cpu`)
    /// wakes it at `to`, and runs again at `to + 1`.
    pub fn wait_for(
        &mut self,
        (tid, cpu): (u32, u32),
        from: u64,
        (waker, waker_cpu): (u32, u32),
        to: u64,
    ) -> &mut Synth {
        self.switch(from, cpu, tid, TaskState::INTERRUPTIBLE, 0)
            .wake_by(to, waker_cpu, waker, tid)
            .switch(to + 1, cpu, 0, TaskState::RUNNABLE, tid)
    }

    /// Threads 1 (CPU 0) and 2 (CPU 1) handing work back and forth for `rounds` rounds
    /// of 22 ns from time 0: each runs 10 of every 22, is runnable 1 and blocked 11 —
    /// under one CPU together and touching no device, wPerf's background pattern.
    pub fn background_pair(&mut self, rounds: u64) -> &mut Synth {
        self.switch(0, 0, 0, TaskState::RUNNABLE, 1);
        for k in 0..rounds {
            let t = k * 22;
            self.wake_by(t + 10, 0, 1, 2)
                .switch(t + 10, 0, 1, TaskState::INTERRUPTIBLE, 0)
                .switch(t + 11, 1, 0, TaskState::RUNNABLE, 2)
                .wake_by(t + 21, 1, 2, 1)
                .switch(t + 21, 1, 2, TaskState::INTERRUPTIBLE, 0)
                .switch(t + 22, 0, 0, TaskState::RUNNABLE, 1);
        }
        self
    }

    /// The events exactly in the order they were pushed.
    pub fn events_unsorted(&self) -> &[Event] {
        &self.events
    }

    /// Build the model with empty tables and a synthetic header for `ncpu` CPUs.
    pub fn model(&self, ncpu: u32) -> Model {
        self.model_with(&Tables::default(), ncpu)
    }

    /// Build the model with these tables.
    pub fn model_with(&self, tables: &Tables, ncpu: u32) -> Model {
        Model::from_events(tables, &Header::synthetic(ncpu), &self.events())
    }

    /// Encode as a trace file (no tables).
    pub fn to_trace_bytes(&self, ncpu: u32) -> causeway_format::Result<Vec<u8>> {
        write_to_vec(
            &Header::synthetic(ncpu),
            &self.events(),
            WriterOptions::default(),
        )
    }
}

/// wPerf's Figure 1 in miniature, for `rounds` rounds of 1000 ns: a consumer (tid 1,
/// CPU 0) writes 4 KiB to disk 8:0 and waits 600 ns for it (woken by interrupt 11,
/// named by string `irq_name`), then works 400 ns; a producer (tid 2, CPU 1) waits for
/// the consumer 900 ns of every 1000.
pub fn blocking_write(irq_name: u32, rounds: u64) -> Synth {
    let mut s = Synth::new();
    s.switch(0, 0, 0, TaskState::RUNNABLE, 1)
        .switch(0, 1, 0, TaskState::RUNNABLE, 2);
    for k in 0..rounds {
        let t = k * 1000;
        let irq = Waker::Irq {
            irq: 11,
            name: StringId(irq_name),
        };
        s.block_issue(t + 100, 0, 1, (8 << 20, k * 8), 4096)
            .switch(t + 100, 0, 1, TaskState::UNINTERRUPTIBLE, 0)
            .irq_entry(t + 699, 0, 11, irq_name)
            .block_complete(t + 699, 0, (8 << 20, k * 8))
            .wakeup(t + 700, 0, 1, 0, irq)
            .irq_exit(t + 701, 0, 11)
            .switch(t + 701, 0, 0, TaskState::RUNNABLE, 1);
        // The producer hands work over and waits for the consumer to take more.
        s.switch(t + 50, 1, 2, TaskState::INTERRUPTIBLE, 0)
            .wake_by(t + 950, 0, 1, 2)
            .switch(t + 951, 1, 0, TaskState::RUNNABLE, 2);
    }
    s
}

/// Tables naming threads, each `(tid, tgid, comm)`, seen since the trace start; string
/// 0 is the empty string.
pub fn named_tables(names: &[(u32, u32, &str)]) -> Tables {
    let mut t = Tables {
        strings: vec![String::new()],
        ..Tables::default()
    };
    for &(tid, tgid, comm) in names {
        t.strings.push(comm.to_string());
        t.threads.push(causeway_format::ThreadInfo {
            tid: Tid(tid),
            tgid: Tgid(tgid),
            since: Timestamp(0),
            comm: StringId(u32::try_from(t.strings.len() - 1).unwrap_or(u32::MAX)),
        });
    }
    t
}

fn write_op() -> BlockOp {
    BlockOp {
        kind: BlockOpKind::Write,
        sync: true,
        fua: false,
        preflush: false,
        meta: false,
    }
}
