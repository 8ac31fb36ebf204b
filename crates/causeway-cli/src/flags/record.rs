//! Flags of `causeway record`, `trigger` and `demo`, and the resolution of `record`'s
//! flags into a recording [`Request`].
//!
//! [`RecordArgs::resolve`] checks what spans several flags (exactly one target) and
//! builds the recorder's configuration; it starts nothing. `cmd::record` runs it.

use super::choices::{JitArg, KernelStacksArg, StackModeArg, StackPlace, UnwindArg};
use super::values::{FlagError, PathList, path_list, pid, positive_duration, wall_time};
use anyhow::{Result, bail};
use causeway_format::DurationNs;
use causeway_format::units::{parse_duration_ns_with_unit, parse_size_bytes};
use causeway_record::config::{MAX_STACK_DEPTH, MAX_STACK_DEPTH_FP};
use causeway_record::syscalls::{self, SyscallInfo};
use causeway_record::trigger::Condition;
use causeway_record::watch::{Via, WatchSpec, WatchTarget};
use causeway_record::{
    ConfigError, EventSet, Output, RecordConfig, Request, Target, Unwind, WakerStackSampling,
    parse_stack_window,
};
use clap::Args;
use std::path::PathBuf;
use std::time::Duration;

/// `causeway record`.
#[derive(Debug, Args)]
#[command(after_help = "\
EXAMPLES:
    causeway record -- ./server --port 8080        launch and follow a command
    causeway record -p 1234 --duration 10s         attach to a running process
    causeway record --comm nginx -o nginx.cwt      any process named nginx, now or later
    causeway record -a --duration 5s               everything (system-wide)
    causeway record --flight 64M --trigger 'blocked>200ms comm=worker' -p 1234
                                                   keep the last 64 MiB of events, dump
                                                   when a worker thread blocks > 200 ms

Stops at the end of the command, after --duration, when the processes given with -p
have all exited, or on Ctrl-C / SIGTERM; the trace is always finished cleanly.

Durations are a number and a unit ns, us, ms, s or min (a bare number is seconds, except
in --trigger); sizes are bytes or a number with K, M or G (1K = 1024 bytes).")]
pub struct RecordArgs {
    /// Command to launch and record with every process it creates (after `--`, so a
    /// mistyped option is reported as such, not run as a command).
    #[arg(last = true, value_name = "CMD")]
    pub command: Vec<String>,
    /// Record these processes (comma-separated PIDs) and the processes they create.
    #[arg(short, long, value_delimiter = ',', value_parser = pid)]
    pub pid: Vec<u32>,
    /// Record every process with this name (as in `ps -o comm`), now or later.
    #[arg(long, value_parser = comm_name)]
    pub comm: Option<String>,
    /// Record every process on the system (except causeway itself).
    #[arg(short = 'a', long = "all")]
    pub all: bool,
    /// Record every process of this cgroup and of the cgroups below it, and those that
    /// enter them while recording (a container's, a unit's): a directory under
    /// /sys/fs/cgroup, or a cgroup path as /proc/PID/cgroup shows it
    /// (`/system.slice/redis-server.service`), looked up in each mounted hierarchy.
    #[arg(long, value_name = "PATH")]
    pub cgroup: Option<String>,
    /// Output trace file (flight mode: dumps are named OUTPUT.1.cwt, OUTPUT.2.cwt, ...).
    /// A regular file already at that name (or at a dump's) is not overwritten: it is
    /// renamed to NAME.old (replacing an older one), as perf does, when the new file is
    /// created. Devices and FIFOs (`-o /dev/null`) are written to as they are.
    #[arg(short, long, default_value = "causeway.cwt")]
    pub output: PathBuf,
    /// Stop after this long: `10` (seconds), `10s`, `500ms`, `2min` (above zero);
    /// with --start-at, counted from that time.
    #[arg(short, long, value_name = "DURATION", value_parser = positive_duration)]
    pub duration: Option<DurationNs>,
    /// Begin at this wall-clock time, for recordings of several hosts that must cover
    /// the same seconds however they were started (ssh, a config-management run, a
    /// Kubernetes job): RFC 3339 (`2026-11-29T06:30:00Z`) or `@SECONDS` since the epoch
    /// (`date -d '+1 min' +@%s`). The probes are attached shortly before it (their
    /// events kept), the command starts at it. A time already past starts at once.
    #[arg(long, value_name = "TIME", value_parser = wall_time)]
    pub start_at: Option<std::time::SystemTime>,
    /// Event groups: a comma list of sched, proc, irq, softirq, block, net, signal,
    /// timer, socket, goroutine, syscall; `default` is all but syscall (syscall events double the events of a
    /// syscall-heavy program), `all` adds syscalls, `all,-net` removes a group (a list
    /// that starts with a removal, `-net`, removes it from `default`).
    #[arg(short, long, default_value = "default", value_name = "GROUPS", allow_hyphen_values = true, value_parser = EventSet::parse)]
    pub events: EventSet,
    /// Syscalls to record with `--events all` or `...,syscall`: `default` (those that can block: futex, read/write family,
    /// poll/epoll/select, sleeps, accept/connect/send/recv, fsync, wait4, pipe,
    /// eventfd), `none`, or names/numbers, comma-separated (`default,mmap` adds one).
    #[arg(long, default_value = "default", value_name = "LIST", value_parser = syscall_list)]
    pub syscalls: SyscallList,
    /// Which user frames to keep (Uscope's modes).
    #[arg(long, value_enum, value_name = "MODE", default_value_t = StackModeArg::All)]
    pub stack_mode: StackModeArg,
    /// Budget of user frames per stack: 1-512 with `--unwind dwarf` (default 128, perf's
    /// default maximum), 1-32 with `--unwind fp` (default 32).
    #[arg(long, value_name = "S", value_parser = clap::value_parser!(u32).range(1..=MAX_STACK_DEPTH as i64))]
    pub stack_depth: Option<u32>,
    /// How user stacks are unwound.
    #[arg(long, value_enum, default_value_t = UnwindArg::Dwarf)]
    pub unwind: UnwindArg,
    /// Bytes of user stack copied per stack with `--unwind dwarf` (a size, a power of
    /// two from 512 to 16K; a shallower stack copies only what it has; a thread whose
    /// known frames go past it gets twice as much on its next copies, up to 16K).
    #[arg(long, default_value = "8K", value_name = "SIZE", value_parser = parse_stack_window)]
    pub stack_window: u32,
    /// Directories with separate debug information (Debian `-dbgsym` / `-dbg` files
    /// under `.build-id/`), comma-separated, for names in stripped binaries, inlined
    /// functions and source lines [default: /usr/lib/debug, /lib/debug]. An empty value
    /// reads no debug information at all (names from ELF symbol tables only).
    #[arg(long, value_name = "DIRS", value_parser = path_list)]
    pub debug_dirs: Option<PathList>,
    /// Kernel frames: on which stacks.
    #[arg(long, value_enum, value_name = "WHICH", default_value_t = KernelStacksArg::Auto)]
    pub kernel_stacks: KernelStacksArg,
    /// Where to take stacks: a comma list of places, or `none`.
    #[arg(
        long,
        value_enum,
        value_delimiter = ',',
        value_name = "PLACES",
        default_value = "switch,waker"
    )]
    pub stacks_on: Vec<StackPlace>,
    /// Waker stacks of short waits: `MIN:N` keeps the waker stack of a wait shorter
    /// than MIN one time in N, at random (the analyses weigh each kept one by N and
    /// every report says so); longer waits keep all of theirs. `off` keeps every waker
    /// stack. Why the default: docs/causeway-record.md, "Waker stacks of short waits".
    #[arg(long, value_name = "MIN:N|off", default_value = "100us:16", value_parser = parse_waker_sampling)]
    pub waker_stack_sampling: WakerSamplingArg,
    /// On-CPU samples of the recorded threads per second per CPU (a software
    /// cpu-clock, so it works without hardware counters), with the same user and
    /// kernel stacks as the waits; `0` takes none.
    #[arg(long, value_name = "HZ", default_value_t = causeway_record::sampling::DEFAULT_SAMPLE_HZ,
          value_parser = clap::value_parser!(u32).range(0..=causeway_record::sampling::MAX_SAMPLE_HZ as i64))]
    pub sample: u32,
    /// Ring buffer per CPU, a size from 4K to 1G, e.g. `8M` (rounded up to a power of
    /// two) [default: 8M, less on machines with over 64 CPUs].
    #[arg(long, value_name = "SIZE", value_parser = buffer_size)]
    pub buffer_size: Option<u64>,
    /// Real-time (SCHED_FIFO) priority of the thread that reads the ring buffers, 1-99,
    /// so that a saturated machine cannot starve it into losing records (as `perf
    /// record -r`); 0 leaves it a normal thread at nice -20. It sleeps whenever it has
    /// caught up.
    #[arg(long, value_name = "PRIO", default_value_t = causeway_record::config::DEFAULT_READER_RT_PRIORITY,
          value_parser = clap::value_parser!(u8).range(0..=99))]
    pub reader_priority: u8,
    /// Flight recorder: keep only the most recent SIZE of events in memory (e.g. `64M`;
    /// at least 1,000 events' worth) and write them out on SIGUSR1, `causeway trigger`
    /// or --trigger.
    #[arg(long, value_name = "SIZE", value_parser = flight_size)]
    pub flight: Option<u64>,
    /// Dump the flight recorder when a condition holds: `blocked>200ms` or
    /// `runnable>50ms` (the unit is required), optionally with `comm=NAME` (a thread
    /// name).
    #[arg(long, requires = "flight", value_name = "COND", value_parser = Condition::parse)]
    pub trigger: Option<Condition>,
    /// Print the summary as JSON on stdout, or into FILE with `--json=FILE`. With the
    /// JSON on stdout, the standard output of `-- CMD` goes to stderr, so that stdout
    /// parses as JSON. Warnings still go to stderr.
    #[arg(long, value_name = "FILE", num_args = 0..=1, require_equals = true, default_missing_value = "-")]
    pub json: Option<PathBuf>,
    /// Leave the command of `-- CMD` running when the recording ends before it
    /// (--duration, Ctrl-C, SIGTERM) or the recorder dies. By default it gets SIGTERM,
    /// with every process it started, and SIGKILL 3 s later if any is left, as `perf
    /// record` ends its workload; if the recorder itself is killed (SIGKILL, a crash),
    /// the command gets SIGTERM from the kernel (the parent-death signal; the processes
    /// it started do not).
    #[arg(long)]
    pub no_kill: bool,
    /// Show libbpf's messages on stderr (among them the kernel verifier's log when it
    /// refuses a program); by default they are kept out of the output, and a refused
    /// program is named in a one-line warning.
    #[arg(short, long)]
    pub verbose: bool,
    /// Watch a variable of the recorded process (one: `-p PID` or `-- CMD`) with
    /// hardware watchpoints: a symbol of its executable, or an address (`0x...`). Its
    /// writes and reads go into the trace as data-flag events, which `causeway
    /// diagnose` turns into write -> read edges (see `causeway watch`).
    #[arg(long, value_name = "SYMBOL|ADDR", value_parser = watch_target)]
    pub watch: Option<WatchTarget>,
    /// Bytes watched with --watch: 1, 2, 4 or 8 [default: the symbol's size; 8 for an
    /// address].
    #[arg(long, value_name = "N", requires = "watch", value_parser = watch_len)]
    pub watch_len: Option<u8>,
    /// How --watch catches the accesses: `auto` (watchpoints inherited by new
    /// threads, else per-thread watchpoints, else uprobes), `breakpoint` (watchpoints
    /// only), `thread-breakpoint` (per-thread watchpoints, new threads looked for
    /// every 10 ms), `uprobe` (uprobes on the instructions that load or store it).
    #[arg(long, value_name = "HOW", value_enum, default_value_t = WatchVia::Auto)]
    pub watch_via: WatchVia,
    /// Use raw tracepoints even where BTF tracepoints work (tests the fallback).
    #[arg(long, hide = true)]
    pub raw_tracepoints: bool,
    /// Make the BTF program of this tracepoint fail to load (tests the per-program
    /// fallback to its raw tracepoint).
    #[arg(long, hide = true, value_name = "TRACEPOINT")]
    pub test_refuse_btf: Vec<String>,
    /// Names of JIT-compiled code (anonymous executable memory): `auto` reads the perf
    /// maps (/tmp/perf-PID.map) and jitdump files the runtimes wrote, and asks a running
    /// HotSpot JVM without one to write it (`jcmd PID Compiler.perfmap`) at the end;
    /// `read` only reads what exists; `off` leaves those frames as addresses.
    #[arg(long, value_name = "HOW", value_enum, default_value_t = JitArg::Auto)]
    pub jit_symbols: JitArg,
    /// Unwind every copied stack afresh, without reusing earlier unwinds (a benchmark
    /// switch for the unwind memo).
    #[arg(long, hide = true)]
    pub no_unwind_memo: bool,
}

/// The syscalls chosen with `--syscalls`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SyscallList(pub Vec<SyscallInfo>);

/// Read `--syscalls` with the recorder's syscall table.
fn syscall_list(s: &str) -> Result<SyscallList, ConfigError> {
    syscalls::parse_list(s).map(SyscallList)
}

/// `--watch-via` / `watch --via`: how a data flag's accesses are caught.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum WatchVia {
    /// Inherited watchpoints, else per-thread ones, else uprobes.
    Auto,
    /// Watchpoints only (inherited, else per-thread).
    Breakpoint,
    /// Per-thread watchpoints; new threads looked for every 10 ms.
    ThreadBreakpoint,
    /// Uprobes on the instructions that load or store the variable.
    Uprobe,
}

impl From<WatchVia> for Via {
    fn from(v: WatchVia) -> Via {
        match v {
            WatchVia::Auto => Via::Auto,
            WatchVia::Breakpoint => Via::Breakpoint,
            WatchVia::ThreadBreakpoint => Via::ThreadBreakpoint,
            WatchVia::Uprobe => Via::Uprobe,
        }
    }
}

/// `--watch`: an address (`0x` hex) or a symbol name.
pub fn watch_target(s: &str) -> Result<WatchTarget, FlagError> {
    match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16)
            .map(WatchTarget::Addr)
            .map_err(|_| FlagError::WatchTarget(s.to_string())),
        None if !s.is_empty() && !s.contains(char::is_whitespace) => {
            Ok(WatchTarget::Symbol(s.to_string()))
        }
        None => Err(FlagError::WatchTarget(s.to_string())),
    }
}

/// `--watch-len`, `--len`: a watchpoint's length.
pub fn watch_len(s: &str) -> Result<u8, FlagError> {
    match s.parse::<u8>() {
        Ok(n @ (1 | 2 | 4 | 8)) => Ok(n),
        _ => Err(FlagError::WatchLen(s.to_string())),
    }
}

/// A name the kernel can give a process: 1 to 15 bytes.
fn comm_name(s: &str) -> Result<String, FlagError> {
    if s.is_empty() || s.len() > 15 {
        return Err(FlagError::Comm(s.to_string()));
    }
    Ok(s.to_string())
}

/// Fewest events a flight window keeps: a smaller window would not span one scheduler
/// round of a busy machine, so a dump would show nothing before its trigger.
const MIN_FLIGHT_EVENTS: u64 = 1000;

/// Bytes one event takes in the flight window (its in-memory size).
fn flight_event_bytes() -> u64 {
    size_of::<causeway_format::Event>() as u64
}

/// A flight window size that holds at least [`MIN_FLIGHT_EVENTS`] events. Smaller
/// sizes were once raised silently; a size the user gave is now kept or refused.
fn flight_size(s: &str) -> Result<u64, FlagError> {
    let n = parse_size_bytes(s)?;
    let min_bytes = MIN_FLIGHT_EVENTS * flight_event_bytes();
    if n < min_bytes {
        return Err(FlagError::FlightTooSmall {
            input: s.to_string(),
            min_events: MIN_FLIGHT_EVENTS,
            min_bytes,
            min_kib: min_bytes.div_ceil(1024),
        });
    }
    Ok(n)
}

/// A ring buffer size per CPU: 4 KiB to 1 GiB.
fn buffer_size(s: &str) -> Result<u64, FlagError> {
    let n = parse_size_bytes(s)?;
    if !(4096..=(1 << 30)).contains(&n) {
        return Err(FlagError::BufferSize(s.to_string()));
    }
    Ok(n)
}

impl RecordArgs {
    /// The recording these flags ask for; `command_line` is stored in the trace header.
    /// Fails on a usage error (no target, or more than one).
    pub fn resolve(&self, command_line: Vec<String>) -> Result<Request> {
        Ok(Request {
            config: self.config()?,
            output: self.output(),
            duration: self.duration.map(|d| Duration::from_nanos(d.0)),
            start_at: self.start_at,
            command: (!self.command.is_empty()).then(|| self.command.clone()),
            command_line,
            keep_command: self.no_kill,
            command_stdout_to_stderr: self.json.as_deref() == Some(std::path::Path::new("-")),
            watch: self.watch.clone().map(|target| WatchSpec {
                target,
                len: self.watch_len,
                via: self.watch_via.into(),
            }),
        })
    }

    fn target(&self) -> Result<Target> {
        let given = [
            !self.command.is_empty(),
            !self.pid.is_empty(),
            self.comm.is_some(),
            self.all,
            self.cgroup.is_some(),
        ];
        if given.iter().filter(|&&t| t).count() != 1 {
            bail!(
                "say what to record, exactly one of: `-- CMD ARGS`, `-p PID`, `--comm NAME`, `--cgroup PATH`, `-a`"
            );
        }
        Ok(if self.all {
            Target::All
        } else if let Some(c) = &self.comm {
            Target::Comm(c.clone())
        } else {
            Target::Pids(self.pid.clone())
        })
    }

    fn config(&self) -> Result<RecordConfig> {
        let mut cfg = RecordConfig::new(self.target()?);
        if let Some(name) = &self.cgroup {
            // The processes in it now; those that enter it later are added while
            // recording.
            let dir = causeway_record::cgroups::resolve(name)?;
            cfg.target = Target::Pids(causeway_record::cgroups::procs(&dir));
            cfg.cgroup = Some(dir);
        }
        // Samples alone are a CPU profile worth keeping; no group and no samples would
        // write a trace with nothing of the targets in it.
        if self.events.is_empty() && self.sample == 0 {
            bail!(
                "nothing to record: --events removes every group and --sample is 0 (keep at least one group, e.g. `--events sched`, or samples)"
            );
        }
        cfg.events = self.events;
        cfg.syscalls = self.syscalls.0.clone();
        cfg.stack_mode = self.stack_mode.into();
        cfg.unwind = self.unwind.into();
        cfg.stack_depth = match (cfg.unwind, self.stack_depth) {
            (Unwind::FramePointers, Some(d)) if d > MAX_STACK_DEPTH_FP => bail!(
                "--stack-depth {d}: the frame-pointer walk runs in the kernel and keeps at most {MAX_STACK_DEPTH_FP} frames (use --unwind dwarf for deeper stacks)"
            ),
            (Unwind::FramePointers, None) => MAX_STACK_DEPTH_FP,
            (_, Some(d)) => d,
            (_, None) => cfg.stack_depth,
        };
        cfg.stack_window = self.stack_window;
        cfg.debug_dirs = self.debug_dirs.clone().map(|d| d.0);
        cfg.kernel_stacks = self.kernel_stacks.into();
        let on = |p| self.stacks_on.contains(&p);
        cfg.stack_on_switch = on(StackPlace::Switch);
        cfg.stack_on_waker = on(StackPlace::Waker);
        cfg.stack_on_syscall = on(StackPlace::Syscall);
        cfg.waker_sampling = self.waker_stack_sampling.0;
        cfg.sample_hz = self.sample;
        if let Some(n) = self.buffer_size {
            // In range (buffer_size), so the power of two fits u32.
            cfg.buffer_per_cpu = (n as u32).next_power_of_two();
        }
        cfg.reader_rt_priority = self.reader_priority;
        cfg.force_raw_tracepoints = self.raw_tracepoints;
        cfg.refuse_btf = self.test_refuse_btf.clone();
        cfg.jit_symbols = self.jit_symbols.into();
        cfg.unwind_memo = !self.no_unwind_memo;
        Ok(cfg)
    }

    fn output(&self) -> Output {
        match self.flight {
            Some(bytes) => {
                // The window is counted in events at their in-memory size (at least
                // MIN_FLIGHT_EVENTS: flight_size refused smaller windows).
                Output::Flight {
                    capacity: (bytes / flight_event_bytes()) as usize,
                    base: self.output.clone(),
                    trigger: self.trigger.clone(),
                }
            }
            None => Output::File(self.output.clone()),
        }
    }
}

/// `causeway trigger`.
#[derive(Debug, Args)]
pub struct TriggerArgs {
    /// Only this recorder process (default: every running `causeway record --flight`).
    #[arg(short, long)]
    pub pid: Option<u32>,
    /// Also ask every process running libcauseway (`causeway run --inproc`, found by
    /// its libcauseway.so mapping) to dump its call buffers (SIGUSR2), so the kernel
    /// window and the in-process calls cover the same moment.
    #[arg(long)]
    pub inproc: bool,
}

/// `causeway demo`.
#[derive(Debug, Args)]
pub struct DemoArgs {
    /// How long to run the workload: a duration, `3` (seconds), `2.5s`, `500ms`.
    #[arg(long, default_value = "3", value_name = "DURATION", value_parser = positive_duration)]
    pub seconds: DurationNs,
    /// Directory for the recording and the trace (`blocking-write.cwt`; an earlier one
    /// is kept as `blocking-write.cwt.old`).
    #[arg(long, default_value = "demo-out")]
    pub out_dir: PathBuf,
    /// The blocking-write workload binary [default: found next to causeway or in
    /// workloads/bin].
    #[arg(long)]
    pub workload: Option<PathBuf>,
}

/// `--waker-stack-sampling`: `None` for `off`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WakerSamplingArg(pub Option<WakerStackSampling>);

fn parse_waker_sampling(s: &str) -> Result<WakerSamplingArg, String> {
    if s == "off" {
        return Ok(WakerSamplingArg(None));
    }
    let (min, n) = s
        .split_once(':')
        .ok_or_else(|| format!("`{s}`: expected MIN:N (e.g. 100us:16) or off"))?;
    let min = parse_duration_ns_with_unit(min).map_err(|e| format!("`{min}`: {e}"))?;
    let one_in: u32 = n
        .parse()
        .ok()
        .filter(|&n| (1..=1_000_000).contains(&n))
        .ok_or_else(|| format!("`{n}`: N must be a whole number from 1 to 1000000"))?;
    if min.0 > 1_000_000_000 {
        return Err(format!(
            "`{s}`: MIN above 1s would sample the waits a stall is made of"
        ));
    }
    Ok(WakerSamplingArg(Some(WakerStackSampling {
        min_wait_ns: min.0,
        one_in,
    })))
}

#[cfg(test)]
mod tests {
    use super::super::Cli;
    use super::*;
    use causeway_record::{KernelStacks, StackMode, Unwind};
    use clap::Parser;

    fn parse(args: &[&str]) -> Result<RecordArgs, clap::Error> {
        let cli = Cli::try_parse_from(["causeway", "record"].iter().chain(args))?;
        match cli.command {
            super::super::Command::Record(a) => Ok(*a),
            other => panic!("parsed as {other:?}"),
        }
    }

    #[test]
    fn defaults_resolve_to_the_recorders_defaults() {
        let a = parse(&["-p", "1,2"]).unwrap();
        let req = a.resolve(vec!["causeway".into()]).unwrap();
        let d = RecordConfig::new(Target::Pids(vec![1, 2]));
        let c = &req.config;
        assert_eq!(c.target, d.target);
        assert_eq!(c.events, d.events);
        // The same set (the flag's list comes sorted by number).
        let nrs = |v: &[SyscallInfo]| {
            let mut n: Vec<u32> = v.iter().map(|s| s.nr).collect();
            n.sort_unstable();
            n
        };
        assert_eq!(nrs(&c.syscalls), nrs(&d.syscalls));
        assert_eq!(c.stack_mode, d.stack_mode);
        assert_eq!(c.stack_depth, d.stack_depth);
        assert_eq!(c.unwind, d.unwind);
        assert_eq!(c.stack_window, d.stack_window);
        assert_eq!(c.debug_dirs, d.debug_dirs);
        assert_eq!(c.kernel_stacks, d.kernel_stacks);
        assert_eq!(
            (c.stack_on_switch, c.stack_on_waker, c.stack_on_syscall),
            (d.stack_on_switch, d.stack_on_waker, d.stack_on_syscall)
        );
        assert_eq!(c.buffer_per_cpu, d.buffer_per_cpu);
        assert!(matches!(req.output, Output::File(ref p) if p.as_os_str() == "causeway.cwt"));
        assert_eq!(req.duration, None);
        assert_eq!(req.command, None);
    }

    #[test]
    fn flags_resolve_to_typed_settings() {
        let a = parse(&[
            "-a",
            "--duration",
            "1.5",
            "--events",
            "all,-net",
            "--stack-mode",
            "app-all",
            "--unwind",
            "fp",
            "--stack-window",
            "16KiB",
            "--kernel-stacks",
            "none",
            "--stacks-on",
            "syscall",
            "--buffer-size",
            "5000",
            "--debug-dirs=",
            "--flight",
            "64M",
            "--trigger",
            "blocked>200ms comm=worker",
        ])
        .unwrap();
        let req = a.resolve(Vec::new()).unwrap();
        let c = &req.config;
        assert_eq!(c.target, Target::All);
        assert!(c.events.syscall && !c.events.net);
        assert_eq!(c.stack_mode, StackMode::AppAll);
        assert_eq!(c.unwind, Unwind::FramePointers);
        assert_eq!(c.stack_window, 16384);
        assert_eq!(c.kernel_stacks, KernelStacks::None);
        assert_eq!(
            (c.stack_on_switch, c.stack_on_waker, c.stack_on_syscall),
            (false, false, true)
        );
        assert_eq!(c.buffer_per_cpu, 8192);
        assert_eq!(c.debug_dirs, Some(Vec::new()));
        assert_eq!(req.duration, Some(Duration::from_millis(1500)));
        match req.output {
            Output::Flight {
                capacity, trigger, ..
            } => {
                let per_event = size_of::<causeway_format::Event>();
                assert_eq!(capacity, (64 << 20) / per_event);
                assert_eq!(trigger.unwrap().threshold_ns, 200_000_000);
            }
            Output::File(_) => panic!("not a flight recorder"),
        }
    }

    #[test]
    fn a_recording_of_nothing_is_refused() {
        let a = parse(&[
            "-a",
            "--events",
            "-sched,-proc,-irq,-softirq,-block,-net,-signal,-timer,-socket,-goroutine",
            "--sample",
            "0",
        ])
        .unwrap();
        let Err(e) = a.resolve(Vec::new()) else {
            panic!("a recording of nothing resolved");
        };
        assert!(e.to_string().contains("nothing to record"), "{e}");
        // Samples alone are a profile.
        let a = parse(&[
            "-a",
            "--events",
            "-sched,-proc,-irq,-softirq,-block,-net,-signal,-timer,-socket,-goroutine",
        ])
        .unwrap();
        assert!(a.resolve(Vec::new()).unwrap().config.events.is_empty());
    }

    #[test]
    fn exactly_one_target() {
        for args in [&[][..], &["-a", "-p", "1"], &["--comm", "x", "--", "true"]] {
            let Err(e) = parse(args).unwrap().resolve(Vec::new()) else {
                panic!("{args:?} resolved");
            };
            assert!(e.to_string().contains("exactly one of"), "{args:?}: {e}");
        }
        let a = parse(&["--comm", "nginx"]).unwrap();
        let req = a.resolve(Vec::new()).unwrap();
        assert_eq!(req.config.target, Target::Comm("nginx".into()));
        let a = parse(&["--", "true", "x"]).unwrap();
        let req = a.resolve(Vec::new()).unwrap();
        assert_eq!(req.command, Some(vec!["true".into(), "x".into()]));
    }

    #[test]
    fn stack_depth_defaults_follow_the_unwinder() {
        let depth = |args: &[&str]| {
            let mut all = args.to_vec();
            all.extend(["--", "true"]);
            parse(&all)
                .unwrap()
                .resolve(Vec::new())
                .map(|r| r.config.stack_depth)
        };
        assert_eq!(depth(&[]).unwrap(), 128);
        assert_eq!(depth(&["--stack-depth", "300"]).unwrap(), 300);
        assert_eq!(depth(&["--unwind", "fp"]).unwrap(), 32);
        assert_eq!(depth(&["--unwind", "fp", "--stack-depth", "8"]).unwrap(), 8);
        let e = depth(&["--unwind", "fp", "--stack-depth", "40"]).unwrap_err();
        assert!(e.to_string().contains("at most 32 frames"), "{e}");
    }

    #[test]
    fn bad_values_are_usage_errors_naming_the_flag() {
        let cases: &[(&[&str], &str)] = &[
            (&["--stack-mode", "deep"], "possible values"),
            (&["--events", "sched,disk"], "unknown event group `disk`"),
            (&["--syscalls", "nosuch"], "unknown syscall `nosuch`"),
            (&["--stack-depth", "600"], "1..=512"),
            (&["--stack-window", "3000"], "power of two"),
            (&["--buffer-size", "1K"], "between 4K and 1G"),
            (&["--buffer-size", "2G"], "between 4K and 1G"),
            (&["--flight", "64MB"], "invalid size"),
            (&["--duration", "soon"], "invalid duration"),
            (&["--duration", "0"], "above zero"),
            (&["--flight", "0"], "too small"),
            (&["--flight", "1"], "at least 1000 events"),
            (&["--events", ","], "no event group"),
            (&["-p", "0"], "idle task"),
            (&["-p", "4294967295"], "pid_max"),
            (&["-p", "12,x"], "not a PID"),
            (&["--comm", "a-very-long-process-name"], "1 to 15 bytes"),
            (&["--stacks-on", "switch,stack"], "possible values"),
            (&["--unwind", "lbr"], "possible values"),
            (&["--kernel-stacks", "some"], "possible values"),
            (
                &["--flight", "1M", "--trigger", "blocked>200"],
                "needs a unit",
            ),
            (
                &["--flight", "1M", "--trigger", "slow>1s"],
                "unknown measure",
            ),
        ];
        for (args, msg) in cases {
            let e = parse(args).unwrap_err();
            assert!(e.use_stderr(), "{args:?}");
            let text = e.to_string();
            assert!(text.contains(msg), "{args:?}: {text}");
            assert!(text.contains(args[args.len() - 2]), "{args:?}: {text}");
        }
    }

    #[test]
    fn waker_stack_sampling_defaults_to_100us_1_in_16_and_parses_or_refuses() {
        let cfg = |args: &[&str]| {
            parse(args)
                .unwrap()
                .resolve(vec!["causeway".into()])
                .unwrap()
                .config
                .waker_sampling_in_effect()
        };
        let d = cfg(&["-p", "1"]).expect("sampled by default");
        assert_eq!((d.min_wait_ns, d.one_in), (100_000, 16));
        assert_eq!(cfg(&["-p", "1", "--waker-stack-sampling", "off"]), None);
        // No waker stacks at all: nothing to sample, and the header says nothing.
        assert_eq!(cfg(&["-p", "1", "--stacks-on", "switch"]), None);
        let s = cfg(&["-p", "1", "--waker-stack-sampling", "1ms:8"]).unwrap();
        assert_eq!((s.min_wait_ns, s.one_in), (1_000_000, 8));
        for bad in ["100us", "100us:0", "100:16", "2s:16", "1ms:x"] {
            assert!(
                parse(&["-p", "1", "--waker-stack-sampling", bad]).is_err(),
                "{bad} accepted"
            );
        }
    }
}
