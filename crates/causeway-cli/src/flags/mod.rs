//! Command-line definition: every subcommand and flag, with its help text.
//!
//! Only parsing lives here; the commands themselves are in `cmd/`.

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

const AFTER_HELP: &str = "\
EXIT STATUS:
    0  success
    1  the analysis found nothing, or a usage error (bad flag, missing file, no permission)
    2  bad input: the trace or recording is corrupt, truncated or not understood

Traces are single files (`.cwt`). Start with `causeway demo`, or convert an existing
perf recording with `causeway import perf.data -o trace.cwt` and run `causeway info`.";

/// causeway: find what a slow, stuck or janky program waits for.
#[derive(Debug, Parser)]
#[command(name = "causeway", version, about, long_about = None, after_help = AFTER_HELP)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Summarize a trace: duration, events by kind, lost events, top threads by CPU and
    /// by blocked time.
    Info(InfoArgs),
    /// Verify a trace block by block; if damaged, write a salvaged copy of every intact
    /// chunk.
    Check(CheckArgs),
    /// Print events as text or JSON lines, filtered by thread, process, kind and time.
    Dump(DumpArgs),
    /// Convert a perf recording (perf.data or `perf script` text) into a causeway trace.
    Import(ImportArgs),
    /// Record the built-in `blocking-write` workload for a few seconds with the eBPF
    /// recorder, summarize it and find its bottleneck.
    Demo(DemoArgs),
    /// Record programs with eBPF: switches, wake-ups and their wakers, interrupts, disk,
    /// network and blocking syscalls, with scoped user stacks (needs root or CAP_BPF +
    /// CAP_PERFMON).
    Record(RecordArgs),
    /// Ask running flight recorders (`causeway record --flight`) to dump their window.
    Trigger(TriggerArgs),
    /// Find the waiting events that limit throughput (wPerf): the wait-for graph, its
    /// knots and sinks, with the stacks behind each edge.
    Bottleneck(BottleneckArgs),
}

/// `causeway info`.
#[derive(Debug, Args)]
pub struct InfoArgs {
    /// Trace file.
    pub trace: PathBuf,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
    /// How many threads to list in each ranking.
    #[arg(long, default_value_t = 10)]
    pub top: usize,
    /// Rank only threads of these processes (comma-separated pids).
    #[arg(long, value_delimiter = ',')]
    pub pid: Vec<u32>,
    /// Rank only threads of processes with this name (or executable file name), and
    /// threads with this name.
    #[arg(long)]
    pub comm: Option<String>,
}

/// `causeway check`.
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Trace file.
    pub trace: PathBuf,
    /// Where to write the salvaged copy if the trace is damaged
    /// [default: TRACE with `.salvaged.cwt` appended].
    #[arg(short, long)]
    pub output: Option<PathBuf>,
    /// Only report; never write a salvaged copy.
    #[arg(long)]
    pub no_salvage: bool,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

/// `causeway dump`.
#[derive(Debug, Args)]
pub struct DumpArgs {
    /// Trace file.
    pub trace: PathBuf,
    /// Print JSON lines (one event per line) instead of text.
    #[arg(long)]
    pub json: bool,
    /// Only events about these threads (comma-separated tids).
    #[arg(long, value_delimiter = ',')]
    pub tid: Vec<u32>,
    /// Only events about threads of these processes (comma-separated pids).
    #[arg(long, value_delimiter = ',')]
    pub pid: Vec<u32>,
    /// Only these event kinds (comma-separated), e.g. `sched_switch,wakeup`.
    /// Run with `--kind help` to list them.
    #[arg(long, value_delimiter = ',')]
    pub kind: Vec<String>,
    /// Start of the time window, relative to the first event: `1.5` (seconds), `1.5s`,
    /// `200ms`, `30us` or `100ns`.
    #[arg(long)]
    pub from: Option<String>,
    /// End of the time window, relative to the first event (same units as --from).
    #[arg(long)]
    pub to: Option<String>,
    /// Print absolute trace-clock nanoseconds instead of seconds since the first event.
    #[arg(long)]
    pub abs: bool,
    /// Show the frames of stack events.
    #[arg(long)]
    pub stacks: bool,
    /// Stop after this many events.
    #[arg(long)]
    pub limit: Option<u64>,
}

/// `causeway import`.
#[derive(Debug, Args)]
pub struct ImportArgs {
    /// perf.data file recorded with e.g. `perf record -e 'sched:*' -e 'irq:*'
    /// -e 'block:*' -g -a`, or (with --script) a `perf script` text file, `-` for stdin.
    pub input: PathBuf,
    /// Output trace file.
    #[arg(short, long)]
    pub output: PathBuf,
    /// The input is `perf script` text, not perf.data.
    #[arg(long)]
    pub script: bool,
    /// Print the import summary as JSON.
    #[arg(long)]
    pub json: bool,
}

/// `causeway demo`.
#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Seconds to run the workload.
    #[arg(long, default_value_t = 3.0)]
    pub seconds: f64,
    /// Directory for the recording and the trace.
    #[arg(long, default_value = "demo-out")]
    pub out_dir: PathBuf,
    /// The blocking-write workload binary [default: found next to causeway or in
    /// workloads/bin].
    #[arg(long)]
    pub workload: Option<PathBuf>,
}

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
have all exited, or on Ctrl-C / SIGTERM; the trace is always finished cleanly.")]
pub struct RecordArgs {
    /// Command to launch and record with every process it creates (after `--`, so a
    /// mistyped option is reported as such, not run as a command).
    #[arg(last = true, value_name = "CMD")]
    pub command: Vec<String>,
    /// Record these processes (comma-separated PIDs) and the processes they create.
    #[arg(short, long, value_delimiter = ',')]
    pub pid: Vec<u32>,
    /// Record every process with this name (as in `ps -o comm`), now or later.
    #[arg(long)]
    pub comm: Option<String>,
    /// Record every process on the system (except causeway itself).
    #[arg(short = 'a', long = "all")]
    pub all: bool,
    /// Output trace file (flight mode: dumps are named OUTPUT.1.cwt, OUTPUT.2.cwt, ...).
    #[arg(short, long, default_value = "causeway.cwt")]
    pub output: std::path::PathBuf,
    /// Stop after this long: `10` (seconds), `10s`, `500ms`.
    #[arg(short, long)]
    pub duration: Option<String>,
    /// Event groups: a comma list of sched, proc, irq, softirq, block, net, syscall;
    /// `default` is all but syscall (syscall events double the events of a
    /// syscall-heavy program), `all` adds syscalls, `all,-net` removes a group.
    #[arg(short, long, default_value = "default")]
    pub events: String,
    /// Syscalls to record with `--events all` or `...,syscall`: `default` (those that can block: futex, read/write family,
    /// poll/epoll/select, sleeps, accept/connect/send/recv, fsync, wait4, pipe,
    /// eventfd), `none`, or names/numbers, comma-separated (`default,mmap` adds one).
    #[arg(long, default_value = "default")]
    pub syscalls: String,
    /// Which user frames to keep (Uscope's modes): `app` the program's last call site,
    /// `app-all` every call site in the program, `libs` the last call site in each
    /// library and the program, `all` every frame, `none` no user stacks.
    #[arg(long, default_value = "all")]
    pub stack_mode: String,
    /// Budget of user frames per stack (1-32).
    #[arg(long, default_value_t = 32)]
    pub stack_depth: u32,
    /// How user stacks are unwound: `dwarf` copies a window of the stack and unwinds it
    /// with the binaries' DWARF call frame information (complete through code built
    /// without frame pointers, such as the C library); `fp` walks frame pointers in
    /// the kernel (cheaper, but stops at the first function built without them).
    #[arg(long, default_value = "dwarf")]
    pub unwind: String,
    /// Bytes of user stack copied per stack with `--unwind dwarf` (a power of two from
    /// 512 to 16K; a shallower stack copies only what it has).
    #[arg(long, default_value = "8K")]
    pub stack_window: String,
    /// Directories with separate debug information (Debian `-dbgsym` / `-dbg` files
    /// under `.build-id/`), comma-separated, for names in stripped binaries, inlined
    /// functions and source lines [default: /usr/lib/debug, /lib/debug]. An empty value
    /// reads no debug information at all (names from ELF symbol tables only).
    #[arg(long)]
    pub debug_dirs: Option<String>,
    /// Kernel frames: `auto` where they explain a wait (uninterruptible sleeps such as
    /// disk waits, and wakers in interrupt context or kernel threads such as I/O
    /// completion), `all` on every stack, `none`.
    #[arg(long, default_value = "auto")]
    pub kernel_stacks: String,
    /// Where to take stacks: comma list of switch (blocking switch-out), waker,
    /// syscall (entry of every recorded syscall); or `none`.
    #[arg(long, default_value = "switch,waker")]
    pub stacks_on: String,
    /// Ring buffer per CPU, e.g. `8M` (rounded up to a power of two)
    /// [default: 8M, less on machines with over 64 CPUs].
    #[arg(long)]
    pub buffer_size: Option<String>,
    /// Flight recorder: keep only the most recent SIZE of events in memory (e.g. `64M`)
    /// and write them out on SIGUSR1, `causeway trigger` or --trigger.
    #[arg(long, value_name = "SIZE")]
    pub flight: Option<String>,
    /// Dump the flight recorder when a condition holds: `blocked>200ms` or
    /// `runnable>50ms`, optionally with `comm=NAME` (a thread name).
    #[arg(long, requires = "flight", value_name = "COND")]
    pub trigger: Option<String>,
    /// Print the summary as JSON.
    #[arg(long)]
    pub json: bool,
    /// Use raw tracepoints even where BTF tracepoints work (tests the fallback).
    #[arg(long, hide = true)]
    pub raw_tracepoints: bool,
}

/// `causeway trigger`.
#[derive(Debug, Args)]
pub struct TriggerArgs {
    /// Only this recorder process (default: every running `causeway record --flight`).
    #[arg(short, long)]
    pub pid: Option<u32>,
}

/// `causeway bottleneck`.
#[derive(Debug, Args, Clone)]
pub struct BottleneckArgs {
    /// Trace file. Omit it and give `-- CMD ARGS...` to record CMD first (as `causeway
    /// record -- CMD` would).
    #[arg(required_unless_present = "command")]
    pub trace: Option<PathBuf>,
    /// Print the whole result as JSON.
    #[arg(long, conflicts_with = "dot")]
    pub json: bool,
    /// Print the wait-for graph in graphviz DOT.
    #[arg(long)]
    pub dot: bool,
    /// Also write the graph as SVG to this file (needs graphviz `dot`).
    #[arg(long, value_name = "FILE")]
    pub svg: Option<PathBuf>,
    /// Knot refinement keeps edges heavier than this: a share of the recording
    /// (`20%`, `0.2`) or a time (`1.5s`, `300ms`).
    #[arg(long, default_value = "20%")]
    pub threshold: String,
    /// Show raw threads: do not merge similar or short-term threads.
    #[arg(long)]
    pub no_merge: bool,
    /// Capacity of network devices, per second: `10Gbit`, `100Mbit`, `125MB`, or bytes
    /// [default: link speed stored in the trace, else 10Gbit].
    #[arg(long, value_name = "RATE")]
    pub nic_capacity: Option<String>,
    /// Disk bandwidth per second (`500MB`, `2GB`) [default: estimated from requests].
    #[arg(long, value_name = "RATE")]
    pub disk_bandwidth: Option<String>,
    /// Disk requests per second [default: estimated from request latencies].
    #[arg(long, value_name = "N")]
    pub disk_iops: Option<f64>,
    /// Stacks shown per edge and side.
    #[arg(long, default_value_t = 3)]
    pub stacks: usize,
    /// Directory for the recording made with `-- CMD`.
    #[arg(long, default_value = "bottleneck-out")]
    pub out_dir: PathBuf,
    /// Command to record and analyze (after `--`).
    #[arg(last = true, value_name = "CMD")]
    pub command: Vec<String>,
}

impl BottleneckArgs {
    /// The defaults, on a trace file (what `causeway demo` runs).
    pub fn for_trace(trace: PathBuf) -> BottleneckArgs {
        BottleneckArgs {
            trace: Some(trace),
            json: false,
            dot: false,
            svg: None,
            threshold: "20%".into(),
            no_merge: false,
            nic_capacity: None,
            disk_bandwidth: None,
            disk_iops: None,
            stacks: 3,
            out_dir: PathBuf::from("bottleneck-out"),
            command: Vec::new(),
        }
    }
}
