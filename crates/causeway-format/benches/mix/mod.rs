//! The synthetic event mix of the format benchmark.

use causeway_format::{
    Cpu, Event, EventKind, SoftirqVec, StackId, StackKind, StringId, TaskState, Tid, Timestamp,
    Waker,
};

/// Events in the benchmark trace.
pub const N: usize = 1_000_000;
pub const CPUS: u32 = 4;

/// xorshift64*: deterministic and dependency-free.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// The realistic mix; `sched_only` keeps just switches and wake-ups.
pub fn mix(n: usize, sched_only: bool) -> Vec<Event> {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    // Thread ids as a busy desktop or server has them: a few low, most in the thousands.
    let pool: Vec<u32> = (0..50)
        .map(|i| if i < 5 { 100 + i * 7 } else { 3000 + i * 131 })
        .collect();
    let mut ts = vec![1_000_000_000u64; CPUS as usize];
    let mut current = vec![0u32; CPUS as usize];
    let mut out = Vec::with_capacity(n + 4);
    while out.len() < n {
        let c = rng.below(CPUS as u64) as usize;
        ts[c] += 500 + rng.below(5_000);
        let t = Timestamp(ts[c]);
        let cpu = Cpu(c as u32);
        let cur = Tid(current[c]);
        let roll = if sched_only {
            rng.below(88)
        } else {
            rng.below(100)
        };
        let ev = |kind| Event { ts: t, cpu, kind };
        match roll {
            0..=43 => {
                let next = pool[rng.below(pool.len() as u64) as usize];
                let state = match rng.below(10) {
                    0..=5 => TaskState::INTERRUPTIBLE,
                    6..=7 => TaskState::RUNNABLE,
                    8 => TaskState::UNINTERRUPTIBLE,
                    _ => TaskState::IDLE,
                };
                out.push(ev(EventKind::SchedSwitch {
                    prev_tid: cur,
                    prev_state: state,
                    next_tid: Tid(next),
                }));
                current[c] = next;
                if !sched_only && rng.below(4) == 0 {
                    out.push(ev(EventKind::Stack {
                        tid: cur,
                        kind: StackKind::SwitchOut,
                        user: Some(StackId(rng.below(200) as u32)),
                        kernel: Some(StackId(rng.below(40) as u32)),
                    }));
                }
            }
            44..=87 => {
                let waker = match rng.below(20) {
                    0..=16 => Waker::Thread { tid: cur },
                    17 => Waker::Irq {
                        irq: 24,
                        name: StringId(3),
                    },
                    _ => Waker::Softirq {
                        vec: SoftirqVec::TIMER,
                    },
                };
                out.push(ev(EventKind::Wakeup {
                    wakee: Tid(pool[rng.below(pool.len() as u64) as usize]),
                    target_cpu: Cpu(rng.below(CPUS as u64) as u32),
                    waker,
                }));
            }
            88..=94 => {
                let nr = [0u32, 1, 7, 202, 232, 281][rng.below(6) as usize];
                out.push(ev(EventKind::SyscallEnter {
                    tid: cur,
                    nr,
                    args: [0; 3],
                }));
                ts[c] += 200 + rng.below(3_000);
                out.push(Event {
                    ts: Timestamp(ts[c]),
                    cpu,
                    kind: EventKind::SyscallExit {
                        tid: cur,
                        nr,
                        ret: rng.below(4096) as i64,
                    },
                });
            }
            95..=97 => {
                out.push(ev(EventKind::IrqEntry {
                    irq: 24,
                    name: StringId(3),
                }));
                ts[c] += 1_000 + rng.below(2_000);
                out.push(Event {
                    ts: Timestamp(ts[c]),
                    cpu,
                    kind: EventKind::IrqExit {
                        irq: 24,
                        handled: true,
                    },
                });
            }
            _ => {
                let vec = SoftirqVec((rng.below(10)) as u8);
                out.push(ev(EventKind::SoftirqEntry { vec }));
                ts[c] += 1_000 + rng.below(4_000);
                out.push(Event {
                    ts: Timestamp(ts[c]),
                    cpu,
                    kind: EventKind::SoftirqExit { vec },
                });
            }
        }
    }
    out.truncate(n);
    out
}
