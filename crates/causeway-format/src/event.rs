//! The typed events a trace holds.
//!
//! Every event happens at one time on one CPU. Fields that name threads, CPUs or strings
//! use the typed ids of [`crate::ids`]; strings themselves live once in the string table.
//! This module defines the in-memory form only; the byte layout is in [`crate::codec`].

use crate::dataflag::DataFlagAccess;
use crate::ids::{Cpu, DevId, StackId, StringId, Tgid, Tid, Timestamp};
pub use crate::signals::{Signal, SignalResult};
use crate::sockets::FlowId;
use serde::{Deserialize, Serialize};

/// One trace event: what happened, when, and on which CPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Event {
    /// When it happened, on the trace clock.
    pub ts: Timestamp,
    /// The CPU it happened on.
    pub cpu: Cpu,
    /// What happened.
    #[serde(flatten)]
    pub kind: EventKind,
}

/// What an event records.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum EventKind {
    /// The scheduler switched `prev_tid` out and `next_tid` in (`sched_switch`).
    SchedSwitch {
        /// Thread leaving the CPU.
        prev_tid: Tid,
        /// Its state as it left: runnable (preempted) or one of the sleep states.
        prev_state: TaskState,
        /// Thread taking the CPU.
        next_tid: Tid,
    },
    /// `waker` made `wakee` runnable, to run on `target_cpu` (`sched_waking`).
    Wakeup {
        /// Thread being woken.
        wakee: Tid,
        /// CPU the wakee was queued on.
        target_cpu: Cpu,
        /// The context that did the wake-up.
        waker: Waker,
    },
    /// A newly created thread became runnable for the first time (`sched_wakeup_new`).
    WakeupNew {
        /// The new thread.
        wakee: Tid,
        /// CPU it was queued on.
        target_cpu: Cpu,
        /// The context that woke it (normally the creating thread).
        waker: Waker,
    },
    /// A thread or process was created (`sched_process_fork`). A new thread of the same
    /// process has `child_tgid == parent_tgid`.
    Fork {
        /// Creating thread.
        parent_tid: Tid,
        /// Creating thread's process.
        parent_tgid: Tgid,
        /// New thread.
        child_tid: Tid,
        /// New thread's process.
        child_tgid: Tgid,
    },
    /// A thread replaced its program (`sched_process_exec`).
    Exec {
        /// The thread (after exec, the process leader).
        tid: Tid,
        /// New command name (`comm`).
        comm: StringId,
        /// Path of the executed file.
        filename: StringId,
    },
    /// A thread exited (`sched_process_exit`).
    Exit {
        /// The exiting thread.
        tid: Tid,
    },
    /// A hard interrupt handler started (`irq_handler_entry`).
    IrqEntry {
        /// Interrupt number.
        irq: u32,
        /// Handler name (e.g. `virtio0-requests`).
        name: StringId,
    },
    /// A hard interrupt handler finished (`irq_handler_exit`).
    IrqExit {
        /// Interrupt number.
        irq: u32,
        /// Whether the handler claimed the interrupt.
        handled: bool,
    },
    /// A softirq vector started running (`softirq_entry`).
    SoftirqEntry {
        /// Which softirq.
        vec: SoftirqVec,
    },
    /// A softirq vector finished (`softirq_exit`).
    SoftirqExit {
        /// Which softirq.
        vec: SoftirqVec,
    },
    /// A block request was issued to a device (`block_rq_issue`).
    BlockIssue {
        /// Thread current when it was issued (may be a kworker).
        tid: Tid,
        /// The device.
        dev: DevId,
        /// First sector.
        sector: u64,
        /// Request size in bytes.
        bytes: u32,
        /// Operation and flags.
        op: BlockOp,
    },
    /// A block request completed (`block_rq_complete`).
    BlockComplete {
        /// The device.
        dev: DevId,
        /// First sector.
        sector: u64,
        /// Completed size in bytes.
        bytes: u32,
        /// Operation and flags.
        op: BlockOp,
        /// 0 or a negative errno.
        error: i32,
    },
    /// A packet was handed to a network device for transmission (`net_dev_start_xmit`).
    NetXmit {
        /// Thread current when it was sent.
        tid: Tid,
        /// Interface name.
        dev: StringId,
        /// Packet length in bytes.
        bytes: u32,
    },
    /// A packet was received from a network device (`netif_receive_skb`).
    NetRecv {
        /// Thread current when it was received (often a softirq on an unrelated thread).
        tid: Tid,
        /// Interface name.
        dev: StringId,
        /// Packet length in bytes.
        bytes: u32,
    },
    /// A thread entered a system call.
    SyscallEnter {
        /// The calling thread.
        tid: Tid,
        /// Syscall number (x86-64 numbering).
        nr: u32,
        /// The first three arguments, zero unless the recorder was asked to keep them
        /// (argument values may be private data).
        args: [u64; 3],
    },
    /// A thread returned from a system call.
    SyscallExit {
        /// The calling thread.
        tid: Tid,
        /// Syscall number.
        nr: u32,
        /// Return value (negative errno on failure).
        ret: i64,
    },
    /// Call stacks of `tid` taken at the event just before this one on the same CPU and
    /// with the same timestamp; `kind` says which event that was. A
    /// [`StackKind::Sample`] stack stands alone: an on-CPU sample of `tid` at this time.
    Stack {
        /// Thread the stack belongs to.
        tid: Tid,
        /// What the stack was taken for.
        kind: StackKind,
        /// User-space stack, if taken.
        user: Option<StackId>,
        /// Kernel stack, if taken.
        kernel: Option<StackId>,
    },
    /// An annotation emitted by the traced program or an in-process recorder.
    Marker {
        /// Thread that emitted it.
        tid: Tid,
        /// What it says.
        marker: Marker,
    },
    /// `count` events were lost on this CPU just before `ts` (buffer overflow).
    Lost {
        /// Number of events lost.
        count: u64,
    },
    // ---- signals and timers (format 1.3; see crate::signals) ----
    /// A signal was generated for `target` (`signal_generate`): sent by `sender`, the
    /// thread current at the time (the kernel's own context, e.g. a timer, when
    /// `sender` is 0).
    SignalGenerate {
        /// Thread current when the signal was sent.
        sender: Tid,
        /// Thread the signal was sent to (for a process-wide signal, the thread the
        /// kernel queued it on).
        target: Tid,
        /// Process of `target`.
        target_tgid: Tgid,
        /// Signal number.
        sig: Signal,
        /// True for a process-wide signal (`kill`), false for a thread's (`tgkill`).
        group: bool,
        /// What the kernel did with it.
        result: SignalResult,
    },
    /// A signal was taken by its thread's handler or default action
    /// (`signal_deliver`), in the receiving thread's context.
    SignalDeliver {
        /// Receiving thread.
        tid: Tid,
        /// Signal number.
        sig: Signal,
    },
    /// A thread armed a high-resolution timer (`hrtimer_start`): a sleep, a timeout of
    /// a wait, a timerfd or a POSIX timer.
    TimerArm {
        /// Arming thread.
        tid: Tid,
        /// The timer's identity: a keyed hash of the kernel object, stable while it
        /// lives, never its address.
        timer: u64,
        /// When it expires on the trace clock; `None` for timers on another clock
        /// (`CLOCK_REALTIME`, `CLOCK_TAI`).
        expires: Option<Timestamp>,
    },
    /// A timer armed by a recorded thread expired on this CPU (`hrtimer_expire_entry`);
    /// wake-ups on this CPU by a timer right after it are its callback's.
    TimerExpire {
        /// The timer's identity (as in [`EventKind::TimerArm`]).
        timer: u64,
    },
    // ---- sockets (format 1.4; see crate::sockets) ----
    /// A recorded thread sent data on a socket (`sock_send_length`, at the end of the
    /// send: on loopback the receiver may already have been woken by then).
    SockSend {
        /// The sending thread.
        tid: Tid,
        /// The socket, from the sender's side.
        flow: FlowId,
        /// Bytes sent.
        bytes: u32,
        /// TCP: the sequence number just past the last byte sent (the socket's
        /// `write_seq` after the send); `None` for other transports.
        seq: Option<u32>,
    },
    /// The wake-up just before this event on the same CPU and at the same time was the
    /// network stack telling a socket's waiter that data arrived (`sk_data_ready`).
    SockReady {
        /// The woken thread.
        wakee: Tid,
        /// The thread current on the CPU when the data arrived: the sender itself on
        /// loopback or a Unix socket, a `ksoftirqd`, or any thread a softirq
        /// interrupted (0: the idle task).
        host: Tid,
        /// The socket, from the receiver's side (`remote` is the datagram's source for
        /// an unconnected datagram socket).
        flow: FlowId,
        /// TCP: the next sequence number expected (`rcv_nxt`): the data that woke the
        /// waiter ends just before it. `None` for other transports.
        seq: Option<u32>,
    },
    // ---- goroutines (format 1.5) ----
    /// Thread `tid` starts running goroutine `goid` of its process (the Go runtime's
    /// `execute`). It runs there until the thread's next `GoRun`, its `GoPark`, or the
    /// thread leaves Go code for the scheduler.
    GoRun {
        /// The thread that carries it from now on.
        tid: Tid,
        /// The goroutine's id (unique within its process, never reused).
        goid: u64,
        /// The goroutine that created it (0: none or unknown).
        parent: u64,
        /// Its start function, as a one-frame user stack: set on the goroutine's first
        /// `GoRun` in the trace only.
        start: Option<StackId>,
    },
    /// The goroutine `goid`, running on `tid`, parks: it waits until a `GoReady`
    /// (the Go runtime's `gopark`).
    GoPark {
        /// The thread it ran on.
        tid: Tid,
        /// The goroutine.
        goid: u64,
        /// Why, in the runtime's words ("chan receive", "sync.Mutex.Lock", "IO wait").
        reason: StringId,
    },
    /// The goroutine `goid` that just parked on `tid` (the `GoPark` before, same time)
    /// waits for data on a socket: the network poller will ready it when data arrives.
    GoNetWait {
        /// The thread it parked on.
        tid: Tid,
        /// The goroutine.
        goid: u64,
        /// The socket, from the receiver's side.
        flow: FlowId,
        /// TCP: the next sequence number expected (`rcv_nxt`) at the park: the byte
        /// the goroutine waits for. `None` for other transports.
        seq: Option<u32>,
    },
    /// Goroutine `goid` (of `tid`'s process) is made runnable by code running on
    /// thread `tid` (the Go runtime's `ready` and `injectglist`).
    GoReady {
        /// The thread that readied it.
        tid: Tid,
        /// The goroutine readied.
        goid: u64,
        /// The goroutine `tid` carried when it did (0: the runtime's scheduler itself,
        /// e.g. the network poller's results or a timer run by an idle thread).
        by: u64,
    },
}

/// Why and how a thread left the CPU: the kernel's reported task state
/// (`TASK_REPORT` bits as `sched_switch` prints them).
///
/// Stored as the kernel's bit value so new kernel states survive a round trip.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct TaskState(pub u16);

impl TaskState {
    /// Still runnable: the thread was preempted or yielded (`R`).
    pub const RUNNABLE: TaskState = TaskState(0);
    /// Interruptible sleep (`S`): waiting for an event.
    pub const INTERRUPTIBLE: TaskState = TaskState(0x1);
    /// Uninterruptible sleep (`D`): usually waiting for I/O.
    pub const UNINTERRUPTIBLE: TaskState = TaskState(0x2);
    /// Stopped by a signal (`T`).
    pub const STOPPED: TaskState = TaskState(0x4);
    /// Stopped by a tracer (`t`).
    pub const TRACED: TaskState = TaskState(0x8);
    /// Dead, being reaped (`X`).
    pub const DEAD: TaskState = TaskState(0x10);
    /// Zombie (`Z`).
    pub const ZOMBIE: TaskState = TaskState(0x20);
    /// Parked kthread (`P`).
    pub const PARKED: TaskState = TaskState(0x40);
    /// Idle kthread (`I`): uninterruptible but not counted as load.
    pub const IDLE: TaskState = TaskState(0x80);
    /// Preempted while runnable (`R+`), as some kernels report it.
    pub const PREEMPTED: TaskState = TaskState(0x100);
    /// The recorder saw a state it could not interpret (outside the kernel's bits).
    pub const UNKNOWN: TaskState = TaskState(0x8000);

    /// True if the thread stayed runnable (preempted or yielded).
    pub fn is_runnable(self) -> bool {
        self.0 == 0 || self.0 == Self::PREEMPTED.0
    }

    /// True if the thread is leaving for good.
    pub fn is_exiting(self) -> bool {
        self.0 & (Self::DEAD.0 | Self::ZOMBIE.0) != 0
    }

    /// The letter `ps` and perf print for this state.
    pub fn letter(self) -> &'static str {
        match self.0 {
            0 => "R",
            0x100 => "R+",
            s if s & 0x1 != 0 => "S",
            s if s & 0x2 != 0 => "D",
            s if s & 0x4 != 0 => "T",
            s if s & 0x8 != 0 => "t",
            s if s & 0x10 != 0 => "X",
            s if s & 0x20 != 0 => "Z",
            s if s & 0x40 != 0 => "P",
            s if s & 0x80 != 0 => "I",
            _ => "?",
        }
    }

    /// Parse perf's letter form (`S`, `D`, `R+`, `I`, ...). Combined forms such as `D|K`
    /// use the first letter.
    pub fn from_letter(s: &str) -> Option<TaskState> {
        let first = s.split('|').next().unwrap_or("");
        Some(match first {
            "R" => Self::RUNNABLE,
            "R+" => Self::PREEMPTED,
            "S" => Self::INTERRUPTIBLE,
            "D" => Self::UNINTERRUPTIBLE,
            "T" => Self::STOPPED,
            "t" => Self::TRACED,
            "X" => Self::DEAD,
            "Z" => Self::ZOMBIE,
            "P" => Self::PARKED,
            "I" => Self::IDLE,
            _ => return None,
        })
    }
}

/// The execution context that performed a wake-up.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Waker {
    /// A thread in process context.
    Thread {
        /// The waking thread.
        tid: Tid,
    },
    /// A hard interrupt handler (a device said it is done).
    Irq {
        /// Interrupt number.
        irq: u32,
        /// Handler name.
        name: StringId,
    },
    /// A softirq (timers, network receive, block completion, ...).
    Softirq {
        /// Which softirq.
        vec: SoftirqVec,
    },
    /// The recorder could not tell.
    Unknown,
}

/// A softirq vector number (`HI_SOFTIRQ` = 0 ... `RCU_SOFTIRQ` = 9).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct SoftirqVec(pub u8);

impl SoftirqVec {
    /// High-priority tasklets.
    pub const HI: SoftirqVec = SoftirqVec(0);
    /// Timer wheel.
    pub const TIMER: SoftirqVec = SoftirqVec(1);
    /// Network transmit.
    pub const NET_TX: SoftirqVec = SoftirqVec(2);
    /// Network receive.
    pub const NET_RX: SoftirqVec = SoftirqVec(3);
    /// Block request completion.
    pub const BLOCK: SoftirqVec = SoftirqVec(4);
    /// Block IRQ polling.
    pub const IRQ_POLL: SoftirqVec = SoftirqVec(5);
    /// Tasklets.
    pub const TASKLET: SoftirqVec = SoftirqVec(6);
    /// Scheduler load balancing.
    pub const SCHED: SoftirqVec = SoftirqVec(7);
    /// High-resolution timers.
    pub const HRTIMER: SoftirqVec = SoftirqVec(8);
    /// RCU callbacks.
    pub const RCU: SoftirqVec = SoftirqVec(9);
    /// A softirq whose vector the recorder could not tell (e.g. inferred from a stack).
    pub const UNKNOWN: SoftirqVec = SoftirqVec(u8::MAX);

    const NAMES: [&'static str; 10] = [
        "HI", "TIMER", "NET_TX", "NET_RX", "BLOCK", "IRQ_POLL", "TASKLET", "SCHED", "HRTIMER",
        "RCU",
    ];

    /// The kernel's name for the vector (`NET_RX`), or `"?"`.
    pub fn name(self) -> &'static str {
        Self::NAMES.get(self.0 as usize).copied().unwrap_or("?")
    }

    /// Parse the kernel's name (`NET_RX`, case-insensitive).
    pub fn from_name(s: &str) -> Option<SoftirqVec> {
        Self::NAMES
            .iter()
            .position(|n| n.eq_ignore_ascii_case(s))
            .map(|i| SoftirqVec(i as u8))
    }
}

/// What a block request does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BlockOpKind {
    /// Read.
    Read,
    /// Write.
    Write,
    /// Cache flush.
    Flush,
    /// Discard / trim.
    Discard,
    /// Anything else (secure erase, write zeroes, ...).
    Other,
}

/// A block request's operation and its flags (perf's `rwbs` string).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct BlockOp {
    /// The operation.
    pub kind: BlockOpKind,
    /// Synchronous request (`S`).
    pub sync: bool,
    /// Forced unit access (`F` after the op).
    pub fua: bool,
    /// Preceded by a cache flush (`F` before the op).
    pub preflush: bool,
    /// Metadata (`M`).
    pub meta: bool,
}

impl BlockOp {
    /// Pack into one byte (kind in the low 3 bits, flags above).
    pub fn to_bits(self) -> u8 {
        let k = match self.kind {
            BlockOpKind::Read => 0,
            BlockOpKind::Write => 1,
            BlockOpKind::Flush => 2,
            BlockOpKind::Discard => 3,
            BlockOpKind::Other => 4,
        };
        k | (self.sync as u8) << 3
            | (self.fua as u8) << 4
            | (self.preflush as u8) << 5
            | (self.meta as u8) << 6
    }

    /// Unpack from [`BlockOp::to_bits`]; unknown kinds become [`BlockOpKind::Other`].
    #[inline]
    pub fn from_bits(b: u8) -> BlockOp {
        let kind = match b & 7 {
            0 => BlockOpKind::Read,
            1 => BlockOpKind::Write,
            2 => BlockOpKind::Flush,
            3 => BlockOpKind::Discard,
            _ => BlockOpKind::Other,
        };
        BlockOp {
            kind,
            sync: b & 1 << 3 != 0,
            fua: b & 1 << 4 != 0,
            preflush: b & 1 << 5 != 0,
            meta: b & 1 << 6 != 0,
        }
    }

    /// Parse perf's `rwbs` string (`WS`, `FWFS`, `R`, `D`, `N`, ...).
    pub fn from_rwbs(s: &str) -> BlockOp {
        let b = s.as_bytes();
        let mut i = 0;
        let preflush = b.len() > 1 && b[0] == b'F';
        if preflush {
            i = 1;
        }
        let kind = match b.get(i) {
            Some(b'R') => BlockOpKind::Read,
            Some(b'W') => BlockOpKind::Write,
            Some(b'D') => BlockOpKind::Discard,
            Some(b'F') => BlockOpKind::Flush,
            _ => BlockOpKind::Other,
        };
        let rest = b.get(i + 1..).unwrap_or(&[]);
        BlockOp {
            kind,
            sync: rest.contains(&b'S'),
            fua: rest.contains(&b'F'),
            preflush: preflush && kind != BlockOpKind::Flush,
            meta: rest.contains(&b'M'),
        }
    }
}

/// What a stack attached by [`EventKind::Stack`] was taken for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StackKind {
    /// The thread was switched out to block: where it waits.
    SwitchOut,
    /// The context that woke another thread: who ends the wait.
    Waker,
    /// A waker's stack kept as a sample: the wait it ended was shorter than the
    /// recording's [`crate::WakerStackSampling::min_wait_ns`], and such wake-ups keep their
    /// stack one time in [`crate::WakerStackSampling::one_in`] (chosen at random), so this
    /// stack stands for that many. Added in 1.6; older readers see [`StackKind::Other`].
    WakerSample,
    /// Entry to a traced system call.
    Syscall,
    /// A periodic CPU sample.
    Sample,
    /// Any other event.
    Other,
}

impl StackKind {
    /// A waker's stack, kept for every wake-up or as a sample of short ones.
    pub fn is_waker(self) -> bool {
        matches!(self, StackKind::Waker | StackKind::WakerSample)
    }

    /// One-byte code used on disk.
    pub fn to_u8(self) -> u8 {
        match self {
            StackKind::SwitchOut => 0,
            StackKind::Waker => 1,
            StackKind::Syscall => 2,
            StackKind::Sample => 3,
            StackKind::Other => 4,
            StackKind::WakerSample => 5,
        }
    }
    /// Decode; unknown codes become [`StackKind::Other`].
    #[inline]
    pub fn from_u8(b: u8) -> StackKind {
        match b {
            0 => StackKind::SwitchOut,
            1 => StackKind::Waker,
            2 => StackKind::Syscall,
            3 => StackKind::Sample,
            5 => StackKind::WakerSample,
            _ => StackKind::Other,
        }
    }
}

/// Annotations from the traced program or an in-process recorder.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "marker", rename_all = "snake_case")]
pub enum Marker {
    /// The thread starts busy-waiting (spinning) for condition `id` (wPerf §4.2).
    SpinBegin {
        /// Identifies the condition; matches the [`Marker::SpinEnd`].
        id: u64,
    },
    /// The busy-wait for condition `id` ended.
    SpinEnd {
        /// Condition id.
        id: u64,
    },
    /// The thread's most recent wake-up did not let it make progress (it will wait
    /// again for the same condition), so analyses should not count it as a wake-up.
    FalseWakeup,
    /// The thread read a shared flag at `addr` (Argus data-flag tracking).
    FlagRead {
        /// Address of the flag.
        addr: u64,
    },
    /// The thread wrote a shared flag at `addr`.
    FlagWrite {
        /// Address of the flag.
        addr: u64,
    },
    /// Entry to method `method` (Hubble method tracing; the name is in the string table).
    MethodEnter {
        /// Method name.
        method: StringId,
    },
    /// Exit from method `method`.
    MethodExit {
        /// Method name.
        method: StringId,
    },
    /// A named span begins; `id` pairs it with its end (spans may nest or overlap).
    SpanBegin {
        /// Span name.
        name: StringId,
        /// Pairs begin with end.
        id: u64,
    },
    /// A named span ends.
    SpanEnd {
        /// Span name.
        name: StringId,
        /// Pairs begin with end.
        id: u64,
    },
    /// A hardware watchpoint saw the thread access a watched variable (Argus data
    /// flags, `causeway watch`); see [`crate::dataflag`].
    DataFlag {
        /// Address of the variable.
        addr: u64,
        /// Read or write.
        access: DataFlagAccess,
        /// User instruction pointer just after the access (x86 data breakpoints trap
        /// after the instruction).
        ip: u64,
    },
}

/// Event kinds without their payload, for filters and counters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EventKindTag {
    /// [`EventKind::SchedSwitch`]
    SchedSwitch,
    /// [`EventKind::Wakeup`]
    Wakeup,
    /// [`EventKind::WakeupNew`]
    WakeupNew,
    /// [`EventKind::Fork`]
    Fork,
    /// [`EventKind::Exec`]
    Exec,
    /// [`EventKind::Exit`]
    Exit,
    /// [`EventKind::IrqEntry`]
    IrqEntry,
    /// [`EventKind::IrqExit`]
    IrqExit,
    /// [`EventKind::SoftirqEntry`]
    SoftirqEntry,
    /// [`EventKind::SoftirqExit`]
    SoftirqExit,
    /// [`EventKind::BlockIssue`]
    BlockIssue,
    /// [`EventKind::BlockComplete`]
    BlockComplete,
    /// [`EventKind::NetXmit`]
    NetXmit,
    /// [`EventKind::NetRecv`]
    NetRecv,
    /// [`EventKind::SyscallEnter`]
    SyscallEnter,
    /// [`EventKind::SyscallExit`]
    SyscallExit,
    /// [`EventKind::Stack`]
    Stack,
    /// [`EventKind::Marker`]
    Marker,
    /// [`EventKind::Lost`]
    Lost,
    /// [`EventKind::SignalGenerate`]
    SignalGenerate,
    /// [`EventKind::SignalDeliver`]
    SignalDeliver,
    /// [`EventKind::TimerArm`]
    TimerArm,
    /// [`EventKind::TimerExpire`]
    TimerExpire,
    /// [`EventKind::SockSend`]
    SockSend,
    /// [`EventKind::SockReady`]
    SockReady,
    /// [`EventKind::GoRun`]
    GoRun,
    /// [`EventKind::GoPark`]
    GoPark,
    /// [`EventKind::GoNetWait`]
    GoNetWait,
    /// [`EventKind::GoReady`]
    GoReady,
}

impl EventKindTag {
    /// Every tag, in display order.
    pub const ALL: [EventKindTag; 29] = [
        EventKindTag::SchedSwitch,
        EventKindTag::Wakeup,
        EventKindTag::WakeupNew,
        EventKindTag::Fork,
        EventKindTag::Exec,
        EventKindTag::Exit,
        EventKindTag::IrqEntry,
        EventKindTag::IrqExit,
        EventKindTag::SoftirqEntry,
        EventKindTag::SoftirqExit,
        EventKindTag::BlockIssue,
        EventKindTag::BlockComplete,
        EventKindTag::NetXmit,
        EventKindTag::NetRecv,
        EventKindTag::SyscallEnter,
        EventKindTag::SyscallExit,
        EventKindTag::Stack,
        EventKindTag::Marker,
        EventKindTag::Lost,
        EventKindTag::SignalGenerate,
        EventKindTag::SignalDeliver,
        EventKindTag::TimerArm,
        EventKindTag::TimerExpire,
        EventKindTag::SockSend,
        EventKindTag::SockReady,
        EventKindTag::GoRun,
        EventKindTag::GoPark,
        EventKindTag::GoNetWait,
        EventKindTag::GoReady,
    ];

    /// snake_case name, as used in `--kind` filters and JSON.
    pub fn name(self) -> &'static str {
        match self {
            EventKindTag::SchedSwitch => "sched_switch",
            EventKindTag::Wakeup => "wakeup",
            EventKindTag::WakeupNew => "wakeup_new",
            EventKindTag::Fork => "fork",
            EventKindTag::Exec => "exec",
            EventKindTag::Exit => "exit",
            EventKindTag::IrqEntry => "irq_entry",
            EventKindTag::IrqExit => "irq_exit",
            EventKindTag::SoftirqEntry => "softirq_entry",
            EventKindTag::SoftirqExit => "softirq_exit",
            EventKindTag::BlockIssue => "block_issue",
            EventKindTag::BlockComplete => "block_complete",
            EventKindTag::NetXmit => "net_xmit",
            EventKindTag::NetRecv => "net_recv",
            EventKindTag::SyscallEnter => "syscall_enter",
            EventKindTag::SyscallExit => "syscall_exit",
            EventKindTag::Stack => "stack",
            EventKindTag::Marker => "marker",
            EventKindTag::Lost => "lost",
            EventKindTag::SignalGenerate => "signal_generate",
            EventKindTag::SignalDeliver => "signal_deliver",
            EventKindTag::TimerArm => "timer_arm",
            EventKindTag::TimerExpire => "timer_expire",
            EventKindTag::SockSend => "sock_send",
            EventKindTag::SockReady => "sock_ready",
            EventKindTag::GoRun => "go_run",
            EventKindTag::GoPark => "go_park",
            EventKindTag::GoNetWait => "go_net_wait",
            EventKindTag::GoReady => "go_ready",
        }
    }

    /// Parse a snake_case name.
    pub fn from_name(s: &str) -> Option<EventKindTag> {
        Self::ALL.iter().copied().find(|t| t.name() == s)
    }
}

impl EventKind {
    /// A `wakeup`, or a `wakeup_new` (first wake-up of a new thread) when `new`.
    pub fn wakeup(new: bool, wakee: Tid, target_cpu: Cpu, waker: Waker) -> EventKind {
        if new {
            EventKind::WakeupNew {
                wakee,
                target_cpu,
                waker,
            }
        } else {
            EventKind::Wakeup {
                wakee,
                target_cpu,
                waker,
            }
        }
    }

    /// The payload-free tag of this kind.
    pub fn tag(&self) -> EventKindTag {
        match self {
            EventKind::SchedSwitch { .. } => EventKindTag::SchedSwitch,
            EventKind::Wakeup { .. } => EventKindTag::Wakeup,
            EventKind::WakeupNew { .. } => EventKindTag::WakeupNew,
            EventKind::Fork { .. } => EventKindTag::Fork,
            EventKind::Exec { .. } => EventKindTag::Exec,
            EventKind::Exit { .. } => EventKindTag::Exit,
            EventKind::IrqEntry { .. } => EventKindTag::IrqEntry,
            EventKind::IrqExit { .. } => EventKindTag::IrqExit,
            EventKind::SoftirqEntry { .. } => EventKindTag::SoftirqEntry,
            EventKind::SoftirqExit { .. } => EventKindTag::SoftirqExit,
            EventKind::BlockIssue { .. } => EventKindTag::BlockIssue,
            EventKind::BlockComplete { .. } => EventKindTag::BlockComplete,
            EventKind::NetXmit { .. } => EventKindTag::NetXmit,
            EventKind::NetRecv { .. } => EventKindTag::NetRecv,
            EventKind::SyscallEnter { .. } => EventKindTag::SyscallEnter,
            EventKind::SyscallExit { .. } => EventKindTag::SyscallExit,
            EventKind::Stack { .. } => EventKindTag::Stack,
            EventKind::Marker { .. } => EventKindTag::Marker,
            EventKind::Lost { .. } => EventKindTag::Lost,
            EventKind::SignalGenerate { .. } => EventKindTag::SignalGenerate,
            EventKind::SignalDeliver { .. } => EventKindTag::SignalDeliver,
            EventKind::TimerArm { .. } => EventKindTag::TimerArm,
            EventKind::TimerExpire { .. } => EventKindTag::TimerExpire,
            EventKind::SockSend { .. } => EventKindTag::SockSend,
            EventKind::SockReady { .. } => EventKindTag::SockReady,
            EventKind::GoRun { .. } => EventKindTag::GoRun,
            EventKind::GoPark { .. } => EventKindTag::GoPark,
            EventKind::GoNetWait { .. } => EventKindTag::GoNetWait,
            EventKind::GoReady { .. } => EventKindTag::GoReady,
        }
    }

    /// Threads this event is about (for `--tid` filters): up to three.
    pub fn tids(&self) -> impl Iterator<Item = Tid> {
        let (a, b, c) = match *self {
            EventKind::SchedSwitch {
                prev_tid, next_tid, ..
            } => (Some(prev_tid), Some(next_tid), None),
            EventKind::Wakeup { wakee, waker, .. } | EventKind::WakeupNew { wakee, waker, .. } => {
                let w = match waker {
                    Waker::Thread { tid } => Some(tid),
                    _ => None,
                };
                (Some(wakee), w, None)
            }
            EventKind::Fork {
                parent_tid,
                child_tid,
                ..
            } => (Some(parent_tid), Some(child_tid), None),
            EventKind::Exec { tid, .. }
            | EventKind::Exit { tid }
            | EventKind::BlockIssue { tid, .. }
            | EventKind::NetXmit { tid, .. }
            | EventKind::NetRecv { tid, .. }
            | EventKind::SyscallEnter { tid, .. }
            | EventKind::SyscallExit { tid, .. }
            | EventKind::Stack { tid, .. }
            | EventKind::Marker { tid, .. }
            | EventKind::SignalDeliver { tid, .. }
            | EventKind::TimerArm { tid, .. }
            | EventKind::SockSend { tid, .. }
            | EventKind::GoRun { tid, .. }
            | EventKind::GoPark { tid, .. }
            | EventKind::GoNetWait { tid, .. }
            | EventKind::GoReady { tid, .. } => (Some(tid), None, None),
            EventKind::SockReady { wakee, host, .. } => {
                (Some(wakee), Some(host).filter(|t| t.0 != 0), None)
            }
            EventKind::SignalGenerate { sender, target, .. } => {
                (Some(sender).filter(|t| t.0 != 0), Some(target), None)
            }
            EventKind::IrqEntry { .. }
            | EventKind::IrqExit { .. }
            | EventKind::SoftirqEntry { .. }
            | EventKind::SoftirqExit { .. }
            | EventKind::BlockComplete { .. }
            | EventKind::Lost { .. }
            | EventKind::TimerExpire { .. } => (None, None, None),
        };
        [a, b, c].into_iter().flatten()
    }
}
