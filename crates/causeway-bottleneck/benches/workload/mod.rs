//! A synthetic producer / consumer / disk workload for the benchmarks, streamed event by
//! event so the events themselves are never held in memory.
//!
//! Each group has a producer and a consumer on CPUs of their own and a disk of its
//! own. Every 10 µs round the consumer issues a 4 KiB synchronous write and
//! blocks until the disk's interrupt wakes it; the producer blocks on the consumer and
//! is woken by it. 18 events per group and round (switches, wake-ups, stacks, system
//! calls, interrupts, block issue and completion), 6 segments.

use causeway_format::{
    BlockOp, BlockOpKind, Cpu, DevId, Event, EventKind, StackId, StackKind, StringId, Tables,
    TaskState, Tgid, ThreadInfo, Tid, Timestamp, Waker,
};

/// Events per group and round.
pub const EVENTS_PER_ROUND: u64 = 18;

/// The workload's size.
pub struct Workload {
    /// Producer/consumer pairs.
    pub groups: u32,
    /// Rounds of 10 µs.
    pub rounds: u64,
}

const IRQ_NAME: StringId = StringId(1);
const PROCESS: u32 = 1000;

impl Workload {
    /// A workload of at least `events` events over `groups` pairs.
    pub fn for_events(events: u64, groups: u32) -> Workload {
        let per_round = EVENTS_PER_ROUND * u64::from(groups);
        Workload {
            groups,
            rounds: events.div_ceil(per_round),
        }
    }

    /// Events it produces.
    pub fn events(&self) -> u64 {
        self.rounds * u64::from(self.groups) * EVENTS_PER_ROUND
    }

    /// CPUs it uses.
    pub fn cpus(&self) -> u32 {
        2 * self.groups
    }

    /// Thread names: `producer-N` and `consumer-N` of one process.
    pub fn tables(&self) -> Tables {
        let mut t = Tables {
            strings: vec![String::new(), "virtio0-requests".into()],
            ..Tables::default()
        };
        for g in 0..self.groups {
            for (tid, name) in [(producer(g), "producer"), (consumer(g), "consumer")] {
                t.strings.push(format!("{name}-{g}"));
                t.threads.push(ThreadInfo {
                    tid: Tid(tid),
                    tgid: Tgid(PROCESS),
                    since: Timestamp(0),
                    comm: StringId(t.strings.len() as u32 - 1),
                });
            }
        }
        t
    }

    /// Call `f` with every event in time order.
    pub fn for_each(&self, mut f: impl FnMut(&Event)) {
        let write = BlockOp {
            kind: BlockOpKind::Write,
            sync: true,
            fua: false,
            preflush: false,
            meta: false,
        };
        let mut emit = |ts: u64, cpu: u32, kind: EventKind| {
            f(&Event {
                ts: Timestamp(ts),
                cpu: Cpu(cpu),
                kind,
            })
        };
        for r in 0..self.rounds {
            let t = 1_000 + r * 10_000;
            for step in 0..9 {
                for g in 0..self.groups {
                    let (p, c) = (producer(g), consumer(g));
                    let (pc, cc) = (2 * g, 2 * g + 1);
                    let dev = DevId((8 << 20) | g);
                    let sector = r * 8;
                    match step {
                        0 => emit(t, cc, syscall_enter(c, 74)),
                        1 => {
                            emit(
                                t + 100,
                                cc,
                                EventKind::BlockIssue {
                                    tid: Tid(c),
                                    dev,
                                    sector,
                                    bytes: 4096,
                                    op: write,
                                },
                            );
                            emit(t + 100, cc, switch(c, TaskState::UNINTERRUPTIBLE, 0));
                            emit(t + 100, cc, stack(c, StackKind::SwitchOut, g % 3, 10));
                        }
                        2 => {
                            emit(t + 200, pc, syscall_enter(p, 1));
                            emit(
                                t + 200,
                                pc,
                                EventKind::SyscallExit {
                                    tid: Tid(p),
                                    nr: 1,
                                    ret: 4096,
                                },
                            );
                        }
                        3 => {
                            emit(
                                t + 4_000,
                                cc,
                                EventKind::IrqEntry {
                                    irq: 11,
                                    name: IRQ_NAME,
                                },
                            );
                            emit(
                                t + 4_000,
                                cc,
                                EventKind::BlockComplete {
                                    dev,
                                    sector,
                                    bytes: 4096,
                                    op: write,
                                    error: 0,
                                },
                            );
                            emit(
                                t + 4_000,
                                cc,
                                EventKind::Wakeup {
                                    wakee: Tid(c),
                                    target_cpu: Cpu(cc),
                                    waker: Waker::Irq {
                                        irq: 11,
                                        name: IRQ_NAME,
                                    },
                                },
                            );
                            emit(t + 4_000, cc, stack(0, StackKind::Waker, 11, 12));
                            emit(
                                t + 4_000,
                                cc,
                                EventKind::IrqExit {
                                    irq: 11,
                                    handled: true,
                                },
                            );
                        }
                        4 => emit(t + 4_001, cc, switch(0, TaskState::RUNNABLE, c)),
                        5 => emit(
                            t + 4_002,
                            cc,
                            EventKind::SyscallExit {
                                tid: Tid(c),
                                nr: 74,
                                ret: 0,
                            },
                        ),
                        6 => {
                            emit(t + 5_000, pc, switch(p, TaskState::INTERRUPTIBLE, 0));
                            emit(t + 5_000, pc, stack(p, StackKind::SwitchOut, 20, 21));
                        }
                        7 => {
                            emit(
                                t + 9_000,
                                cc,
                                EventKind::Wakeup {
                                    wakee: Tid(p),
                                    target_cpu: Cpu(pc),
                                    waker: Waker::Thread { tid: Tid(c) },
                                },
                            );
                            emit(t + 9_000, cc, stack(c, StackKind::Waker, 30, 31));
                        }
                        _ => emit(t + 9_001, pc, switch(0, TaskState::RUNNABLE, p)),
                    }
                }
            }
        }
    }
}

fn producer(g: u32) -> u32 {
    10_000 + 2 * g
}

fn consumer(g: u32) -> u32 {
    10_001 + 2 * g
}

fn syscall_enter(tid: u32, nr: u32) -> EventKind {
    EventKind::SyscallEnter {
        tid: Tid(tid),
        nr,
        args: [0; 3],
    }
}

fn switch(prev: u32, state: TaskState, next: u32) -> EventKind {
    EventKind::SchedSwitch {
        prev_tid: Tid(prev),
        prev_state: state,
        next_tid: Tid(next),
    }
}

fn stack(tid: u32, kind: StackKind, user: u32, kernel: u32) -> EventKind {
    EventKind::Stack {
        tid: Tid(tid),
        kind,
        user: Some(StackId(user)),
        kernel: Some(StackId(kernel)),
    }
}
