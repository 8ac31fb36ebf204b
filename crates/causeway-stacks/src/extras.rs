//! System call spans and sample stacks: per-event facts the model does not keep.
//!
//! The model records which system call a thread was in when it blocked, not every
//! call; the Perfetto export shows each call as a slice and `compare` counts calls by
//! call site, so both need the spans. Stacks arrive as a [`EventKind::Stack`] event
//! right after the event they belong to (same CPU, same time), which is how a
//! `syscall` stack is tied to its call and a `sample` stack becomes a sample. A call
//! with no entry stack takes the user stack of its first switch-out, if it blocked.

use causeway_format::{Cpu, Event, EventKind, StackKind, Tid, Timestamp};
use causeway_model::StackRef;
use rustc_hash::FxHashMap;

/// One system call of one thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SyscallSpan {
    /// The calling thread.
    pub tid: Tid,
    /// Syscall number (x86-64 numbering).
    pub nr: u32,
    /// The entry's recorded arguments: for a call on a file descriptor, the
    /// descriptor, the identity of the kernel object behind it and the object's kind
    /// (docs/format.md); zeros where the recorder kept none.
    pub args: [u64; 3],
    /// Entry time.
    pub start: Timestamp,
    /// Exit time; `None` if the exit was not in the trace.
    pub end: Option<Timestamp>,
    /// Return value, when the exit was seen.
    pub ret: Option<i64>,
    /// Stacks of the call site: taken at entry, or failing that at the call's first
    /// switch-out (a call that blocked).
    pub stack: Option<StackRef>,
    /// True if `stack` is the switch-out stack rather than one taken at entry.
    pub stack_from_switch: bool,
}

/// One on-CPU sample: the stacks of a running thread at a sampling tick.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SampleStack {
    /// When.
    pub ts: Timestamp,
    /// The CPU it ran on.
    pub cpu: Cpu,
    /// The sampled thread.
    pub tid: Tid,
    /// Its stacks.
    pub stack: StackRef,
}

/// What [`EventExtras`] gathered, spans in entry order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Extras {
    /// Every system call seen entering, in time order of entry.
    pub syscalls: Vec<SyscallSpan>,
    /// Exits whose entry was not seen (the call began before the recording).
    pub unmatched_exits: u64,
    /// On-CPU samples, in time order.
    pub samples: Vec<SampleStack>,
}

/// Gathers [`Extras`] from events pushed in trace order.
#[derive(Debug, Default)]
pub struct EventExtras {
    out: Extras,
    /// Index in `out.syscalls` of each thread's call in progress.
    open: FxHashMap<Tid, usize>,
}

impl EventExtras {
    /// Nothing gathered yet.
    pub fn new() -> EventExtras {
        EventExtras::default()
    }

    /// Take one event (in trace order).
    pub fn push(&mut self, ev: &Event) {
        match ev.kind {
            EventKind::SyscallEnter { tid, nr, args } => {
                self.open.insert(tid, self.out.syscalls.len());
                self.out.syscalls.push(SyscallSpan {
                    tid,
                    nr,
                    args,
                    start: ev.ts,
                    end: None,
                    ret: None,
                    stack: None,
                    stack_from_switch: false,
                });
            }
            EventKind::SyscallExit { tid, nr, ret } => {
                let span = self
                    .open
                    .remove(&tid)
                    .and_then(|i| self.out.syscalls.get_mut(i))
                    .filter(|s| s.nr == nr);
                match span {
                    Some(s) => {
                        s.end = Some(ev.ts);
                        s.ret = Some(ret);
                    }
                    None => self.out.unmatched_exits += 1,
                }
            }
            EventKind::Stack {
                tid,
                kind,
                user,
                kernel,
            } => self.stack(ev, tid, kind, StackRef { user, kernel }),
            _ => {}
        }
    }

    fn stack(&mut self, ev: &Event, tid: Tid, kind: StackKind, stack: StackRef) {
        match kind {
            StackKind::Syscall => {
                // The stack belongs to the entry just before it: same thread, same time.
                let call = self
                    .open
                    .get(&tid)
                    .and_then(|&i| self.out.syscalls.get_mut(i))
                    .filter(|s| s.start == ev.ts && (s.stack.is_none() || s.stack_from_switch));
                if let Some(s) = call {
                    s.stack = Some(stack);
                    s.stack_from_switch = false;
                }
            }
            StackKind::SwitchOut => {
                // No stack at entry (the recorder takes none there today): a call that
                // blocks gets the stack of its first switch-out, whose user part is the
                // same call chain.
                let call = self
                    .open
                    .get(&tid)
                    .and_then(|&i| self.out.syscalls.get_mut(i))
                    .filter(|s| s.stack.is_none() && stack.user.is_some());
                if let Some(s) = call {
                    s.stack = Some(stack);
                    s.stack_from_switch = true;
                }
            }
            StackKind::Sample => self.out.samples.push(SampleStack {
                ts: ev.ts,
                cpu: ev.cpu,
                tid,
                stack,
            }),
            _ => {}
        }
    }

    /// Everything gathered.
    pub fn finish(self) -> Extras {
        self.out
    }

    /// Gather from a slice of events (tests, small traces).
    pub fn from_events<'e>(events: impl IntoIterator<Item = &'e Event>) -> Extras {
        let mut x = EventExtras::new();
        for ev in events {
            x.push(ev);
        }
        x.finish()
    }
}
