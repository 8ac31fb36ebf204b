//! What to record: targets, event groups, stack scope and buffer sizes.
//!
//! The types here are the recorder's settings, not their spelling on a command line:
//! the CLI maps its own flags onto them. Only the two option languages that belong to
//! the recorder's own sets are read here ([`EventSet::parse`], [`parse_stack_window`]).

use crate::error::ConfigError;
use crate::syscalls::SyscallInfo;

/// The reader's default real-time priority: the lowest (1), above every normal thread.
/// At nice -20 on a saturated 2-CPU host (two JVMs driving each other over loopback,
/// 600 K events/s, a quarter of the CPU time in softirqs) the reader waited 3.5 s for a
/// CPU and ran 1.5 s of 5 s, and 0.3-1.6 M records were lost in 3 of 5 runs; as a
/// SCHED_FIFO thread it lost none. perf offers the same (`perf record -r`). The reader
/// sleeps whenever it has caught up, and the kernel's real-time throttling leaves other
/// threads 5 % of each CPU even if it never slept.
pub const DEFAULT_READER_RT_PRIORITY: u8 = 1;

pub use causeway_format::WakerStackSampling;
use std::time::Duration;

/// Which processes are recorded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// These processes and every process they create afterwards.
    Pids(Vec<u32>),
    /// Any process with this name (`comm`, at most 15 bytes), now or later; decided at
    /// a process's first event and again after it execs.
    Comm(String),
    /// Every process except the recorder.
    All,
}

/// Groups of events, each switchable with `--events`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EventSet {
    /// Context switches and wake-ups.
    pub sched: bool,
    /// fork, exec, exit.
    pub proc: bool,
    /// Hard IRQ handler entry and exit.
    pub irq: bool,
    /// Softirq entry and exit.
    pub softirq: bool,
    /// Block request issue and completion.
    pub block: bool,
    /// Network transmit and receive per device.
    pub net: bool,
    /// Entry and exit of the chosen syscalls.
    pub syscall: bool,
    /// Signal generate and deliver (rare: part of the default).
    pub signal: bool,
    /// Timers armed by recorded threads and their expiry (rare next to switches: part
    /// of the default; bench/RESULTS.md has the cost).
    pub timer: bool,
    /// Sends on sockets and the socket whose data ended a wait (two rare records per
    /// message next to the switches and wake-ups it causes: part of the default, so
    /// a wake-up delivered by the network stack names the thread that sent the data).
    pub sock: bool,
    /// Goroutines of Go programs: which goroutine each thread runs, which parks and
    /// why, which readies which (uprobes on the Go runtime's scheduler, placed only in
    /// recorded Go programs: part of the default, costs nothing elsewhere).
    pub go: bool,
}

impl EventSet {
    /// Every group.
    pub const ALL: EventSet = EventSet {
        sched: true,
        proc: true,
        irq: true,
        softirq: true,
        block: true,
        net: true,
        syscall: true,
        signal: true,
        timer: true,
        sock: true,
        go: true,
    };

    /// The default: everything but syscalls. Syscall entry and exit double the events of
    /// a syscall-heavy program (62% of them on a pipe ping-pong, bench/RESULTS.md) while
    /// the waits they explain already carry their call site in the switch-out stack;
    /// `--events all` adds them.
    pub const DEFAULT: EventSet = EventSet {
        syscall: false,
        ..EventSet::ALL
    };

    /// Is every group off?
    pub fn is_empty(&self) -> bool {
        self.bits() == 0
    }

    /// Names accepted by [`EventSet::parse`].
    pub const NAMES: &'static [&'static str] = &[
        "sched",
        "proc",
        "irq",
        "softirq",
        "block",
        "net",
        "syscall",
        "signal",
        "timer",
        "socket",
        "goroutine",
    ];

    /// Parse `sched,block,...`, `all`, `default` (all but syscall), or `all,-net` (a
    /// leading `-` removes a group; a list that starts with a removal starts from
    /// `default`). An empty list is an error; a list that removes every group is not
    /// (the caller decides whether samples alone are worth recording).
    pub fn parse(s: &str) -> Result<EventSet, ConfigError> {
        let mut set = EventSet {
            sched: false,
            proc: false,
            irq: false,
            softirq: false,
            block: false,
            net: false,
            syscall: false,
            signal: false,
            timer: false,
            sock: false,
            go: false,
        };
        let items: Vec<&str> = s
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .collect();
        if items.is_empty() {
            return Err(ConfigError::NoEventGroup(s.to_string()));
        }
        // `-net` alone means "the default without net": an empty base would make
        // every removal-only list record nothing.
        if items[0].starts_with('-') {
            set = EventSet::DEFAULT;
        }
        for item in items {
            let (on, name) = match item.strip_prefix('-') {
                Some(n) => (false, n),
                None => (true, item),
            };
            if name == "all" || name == "default" {
                let base = if name == "all" {
                    EventSet::ALL
                } else {
                    EventSet::DEFAULT
                };
                if on {
                    set = base;
                }
                continue;
            }
            let slot = match name {
                "sched" => &mut set.sched,
                "proc" => &mut set.proc,
                "irq" => &mut set.irq,
                "softirq" => &mut set.softirq,
                "block" => &mut set.block,
                "net" => &mut set.net,
                "syscall" | "syscalls" => &mut set.syscall,
                "signal" | "signals" => &mut set.signal,
                "timer" | "timers" => &mut set.timer,
                "socket" | "sockets" | "sock" => &mut set.sock,
                "goroutine" | "goroutines" | "go" => &mut set.go,
                _ => {
                    return Err(ConfigError::EventGroup {
                        name: name.to_string(),
                        known: Self::NAMES.join(", "),
                    });
                }
            };
            *slot = on;
        }
        Ok(set)
    }

    /// The BPF side's bit mask (`enum event_group`).
    pub fn bits(self) -> u32 {
        use crate::skel::types::event_group as g;
        [
            (self.sched, g::EV_SCHED),
            (self.proc, g::EV_PROC),
            (self.irq, g::EV_IRQ),
            (self.softirq, g::EV_SOFTIRQ),
            (self.block, g::EV_BLOCK),
            (self.net, g::EV_NET),
            (self.syscall, g::EV_SYSCALL),
            (self.signal, g::EV_SIGNAL),
            (self.timer, g::EV_TIMER),
            (self.sock, g::EV_SOCK),
            (self.go, g::EV_GO),
        ]
        .iter()
        .filter(|(on, _)| *on)
        .map(|(_, bit)| bit.0)
        .sum()
    }
}

pub use causeway_unwind::StackMode;

/// A stack mode's number on the BPF side (`enum stack_scope`).
pub fn stack_mode_code(mode: StackMode) -> u32 {
    use crate::skel::types::stack_scope as s;
    match mode {
        StackMode::None => s::STACK_NONE.0,
        StackMode::App => s::STACK_APP.0,
        StackMode::AppAll => s::STACK_APP_ALL.0,
        StackMode::Libs => s::STACK_LIBS.0,
        StackMode::All => s::STACK_ALL.0,
    }
}

/// How user stacks are unwound.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Unwind {
    /// Frame pointers, walked in BPF (cheap; incomplete through code built without
    /// them, such as Debian's glibc).
    FramePointers,
    /// DWARF call frame information: BPF copies the registers and a window of the
    /// stack, user space unwinds it against the binaries' `.eh_frame` /
    /// `.debug_frame` (frame pointers where a binary has no unwind entry).
    #[default]
    Dwarf,
}

impl Unwind {
    /// The BPF side's number (`enum unwind_mode`).
    pub fn code(self) -> u32 {
        use crate::skel::types::unwind_mode as u;
        match self {
            Unwind::FramePointers => u::UNWIND_FP.0,
            Unwind::Dwarf => u::UNWIND_DWARF.0,
        }
    }
}

/// Default sampling rate per CPU: off the common timer rates (100, 250, 1000 Hz) so
/// samples do not lock onto periodic work, and high enough that a thread on a CPU a
/// few hundred milliseconds of a short recording gets the dozens of samples its
/// profile and the what-if estimate of a removed call's CPU rest on (at 49 Hz an
/// fsync loop's thread got 5 in 3 s); at ~3-5 µs a sample, 0.1-0.2 % of a CPU.
pub const DEFAULT_SAMPLE_HZ: u32 = 199;

/// Default budget of user frames per stack with DWARF unwinding: perf's default
/// `kernel.perf_event_max_stack` (127), rounded. Deep interpreter stacks (CPython's
/// import machinery nests 40-60 frames) must reach `main`; the frames cost only user-space
/// unwinding, and only for stacks that are that deep.
pub const DEFAULT_STACK_DEPTH: u32 = 128;

/// Most frames the in-kernel frame-pointer walk (`--unwind fp`) keeps per stack: the
/// size of the frame array of a ring record.
pub const MAX_STACK_DEPTH_FP: u32 = crate::skel::types::abi_sizes::MAX_USER_FRAMES.0;

/// Most frames a DWARF-unwound stack keeps (a 16 KiB window holds at most ~1,000
/// frames of 16 bytes; beyond 512 a stack is a runaway recursion, not a call path).
pub const MAX_STACK_DEPTH: u32 = 512;

/// Highest accepted rate per CPU (perf's default upper limit).
pub const MAX_SAMPLE_HZ: u32 = 100_000;

/// Largest stack window BPF can copy per stack (bytes).
pub const MAX_STACK_WINDOW: u32 = crate::skel::types::abi_sizes::MAX_COPY.0;

/// Parse a stack window size (a size as [`causeway_format::units`] reads it: bytes,
/// or with `K`/`KiB`): a power of two from 512 to [`MAX_STACK_WINDOW`].
pub fn parse_stack_window(s: &str) -> Result<u32, ConfigError> {
    let v = causeway_format::units::parse_size_bytes(s)
        .map_err(|_| ConfigError::StackWindowSyntax(s.to_string()))?;
    if !v.is_power_of_two() || !(512..=MAX_STACK_WINDOW as u64).contains(&v) {
        return Err(ConfigError::StackWindowRange {
            input: s.to_string(),
            max_kib: MAX_STACK_WINDOW / 1024,
        });
    }
    Ok(v as u32)
}

/// Which stacks get kernel frames (a kernel stack costs about 1.4 µs to take).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum KernelStacks {
    /// None.
    None,
    /// Where the kernel side explains the wait: switch-outs in uninterruptible sleep
    /// (disk, page faults, kernel locks) and wakers in interrupt context or kernel
    /// threads (I/O completion). A futex or pipe wait's kernel stack is always the
    /// same few frames, so it is left out; so is a waker's in a timer callback or a
    /// network softirq (the context names the cause, the socket mark the sender).
    #[default]
    Auto,
    /// Every stack.
    All,
}

impl KernelStacks {
    /// The BPF side's number (`enum kernel_stacks`).
    pub fn code(self) -> u32 {
        use crate::skel::types::kernel_stacks as k;
        match self {
            KernelStacks::None => k::KSTACK_NONE.0,
            KernelStacks::Auto => k::KSTACK_AUTO.0,
            KernelStacks::All => k::KSTACK_ALL.0,
        }
    }
}

/// Everything `causeway record` needs to start.
#[derive(Clone, Debug)]
pub struct RecordConfig {
    /// Whom to record.
    pub target: Target,
    /// `--cgroup`: the cgroup directory whose processes are recorded; those that enter
    /// it (or a cgroup below it) while recording are added (`target` holds the ones
    /// in it at the start).
    pub cgroup: Option<std::path::PathBuf>,
    /// Which events.
    pub events: EventSet,
    /// Which syscalls, when `events.syscall`.
    pub syscalls: Vec<SyscallInfo>,
    /// User stack scope.
    pub stack_mode: StackMode,
    /// Budget of user frames per stack (Uscope's S): up to [`MAX_STACK_DEPTH`] with DWARF
    /// unwinding, [`MAX_STACK_DEPTH_FP`] with the frame-pointer walk (larger values are
    /// clamped there).
    pub stack_depth: u32,
    /// Which stacks also get kernel frames.
    pub kernel_stacks: KernelStacks,
    /// How user stacks are unwound.
    pub unwind: Unwind,
    /// Bytes of user stack copied per stack for DWARF unwinding.
    pub stack_window: u32,
    /// Where to look for separate debug information when symbolizing; `None`: the
    /// system's directories; empty: read no debug information.
    pub debug_dirs: Option<Vec<std::path::PathBuf>>,
    /// Stacks on blocking switch-out.
    pub stack_on_switch: bool,
    /// Stacks of wakers.
    pub stack_on_waker: bool,
    /// Waker stacks of short waits kept as a random sample (`None`: every one kept).
    /// See [`DEFAULT_WAKER_SAMPLING`].
    pub waker_sampling: Option<WakerStackSampling>,
    /// Stacks on the chosen syscalls.
    pub stack_on_syscall: bool,
    /// Ring buffer size per CPU, bytes (a power of two, at least a page).
    pub buffer_per_cpu: u32,
    /// How often the reader drains the rings when nothing woke it.
    pub poll_interval: Duration,
    /// The reader's real-time (SCHED_FIFO) priority, 1-99; 0 keeps it a normal thread
    /// at nice -20. See [`DEFAULT_READER_RT_PRIORITY`].
    pub reader_rt_priority: u8,
    /// On-CPU samples per second per CPU of the recorded threads (0: none).
    pub sample_hz: u32,
    /// Load raw tracepoints even where BTF tracepoints work (a test switch for the
    /// fallback path).
    pub force_raw_tracepoints: bool,
    /// Pretend the verifier refuses the BTF programs of these tracepoints (their attach
    /// target is made one the kernel does not have): a test switch for the fallback of
    /// single programs to their raw entry point.
    pub refuse_btf: Vec<String>,
    /// Where JIT-compiled code gets its names: perf maps, jitdump files, asking JVMs.
    pub jit_symbols: crate::stacks::JitSymbols,
    /// Reuse earlier unwinds of a stack that starts at the same registers and holds the
    /// same words where the earlier unwind read (off: a benchmark switch).
    pub unwind_memo: bool,
}

/// Waker stacks of waits under 100 µs are kept one time in 16. Why: a user thread's
/// waker stack is the dearest part of a wake-up (about half of the eBPF time of a
/// ping-pong op on an AMD EPYC host, bench/RESULTS.md), and a program that wakes
/// threads after microseconds wakes them hundreds of thousands of times a second, from
/// a few call sites each; a sample of thousands names them as well, weighted by 16.
/// Waits of 100 µs and more, the ones a stall or a latency peak is made of, keep every
/// waker stack: there a stack costs under 1% of the wait.
pub const DEFAULT_WAKER_SAMPLING: WakerStackSampling = WakerStackSampling {
    min_wait_ns: 100_000,
    one_in: 16,
};

impl RecordConfig {
    /// The waker-stack sampling this configuration records with: `None` when waker
    /// stacks are off, or sampling is (a rate of 1 or a threshold of 0).
    pub fn waker_sampling_in_effect(&self) -> Option<WakerStackSampling> {
        self.waker_sampling
            .filter(|s| self.stack_on_waker && s.one_in > 1 && s.min_wait_ns > 0)
    }

    /// Defaults for a target: all event groups but syscalls (the blocking ones when
    /// enabled), whole user stacks (up to 128 frames, unwound with DWARF from an 8 KiB
    /// window) on blocking switch-outs and wakers, kernel stacks where they explain the
    /// wait, on-CPU samples at 199 Hz per CPU, 8 MiB of ring per CPU.
    pub fn new(target: Target) -> RecordConfig {
        RecordConfig {
            target,
            cgroup: None,
            events: EventSet::DEFAULT,
            syscalls: crate::syscalls::default_set(),
            // With DWARF unwinding the cost is the copied window, not the frames kept,
            // so whole stacks (up to the budget) are the default.
            stack_mode: StackMode::All,
            stack_depth: DEFAULT_STACK_DEPTH,
            kernel_stacks: KernelStacks::Auto,
            unwind: Unwind::default(),
            stack_window: 8192,
            debug_dirs: None,
            stack_on_switch: true,
            stack_on_waker: true,
            waker_sampling: Some(DEFAULT_WAKER_SAMPLING),
            // The blocking switch-out already has the call site of a wait; a stack at
            // every syscall entry would be taken for calls that never block.
            stack_on_syscall: false,
            buffer_per_cpu: default_buffer_per_cpu(num_cpus()),
            poll_interval: Duration::from_millis(100),
            reader_rt_priority: DEFAULT_READER_RT_PRIORITY,
            sample_hz: DEFAULT_SAMPLE_HZ,
            force_raw_tracepoints: false,
            refuse_btf: Vec::new(),
            jit_symbols: crate::stacks::JitSymbols::Auto,
            unwind_memo: true,
        }
    }
}

/// 8 MiB per CPU, less on large machines so the total stays near 512 MiB.
pub fn default_buffer_per_cpu(ncpu: u32) -> u32 {
    let per = (512u64 << 20) / ncpu.max(1) as u64;
    let per = per.clamp(1 << 20, 8 << 20);
    1u32 << (63 - per.leading_zeros())
}

/// Number of possible CPUs (ring buffers are indexed by CPU number).
pub fn num_cpus() -> u32 {
    libbpf_rs::num_possible_cpus()
        .map(|n| n as u32)
        .unwrap_or(1)
}
