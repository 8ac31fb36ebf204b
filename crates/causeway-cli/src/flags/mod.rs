//! The command line: every subcommand and flag, with its help text, typed.
//!
//! Two steps, as ripgrep's lowargs/hiargs: clap turns the words into typed `*Args`
//! (every value already parsed by a shared value parser or a `ValueEnum`, so a bad
//! value is a usage error naming the flag), then a command's `resolve`/`options`
//! combines flags into the library's configuration and checks what spans several
//! flags. Neither step reads a trace, starts a recording or prints; the commands in
//! `cmd/` do that.
//!
//! - [`values`]: value types and parsers shared by the commands (durations, sizes and
//!   rates come from `causeway_format::units`).
//! - [`choices`]: the `ValueEnum`s.
//! - [`trace`], [`record`], [`bottleneck`], [`latency`], [`calls`]: each command's flags and
//!   their resolution.

pub mod bottleneck;
pub mod calls;
pub mod choices;
pub mod cluster;
pub mod compare;
pub mod diagnose;
pub mod export;
pub mod flamegraph;
pub mod latency;
pub mod meta;
pub mod record;
pub mod report;
pub mod rootpath;
pub mod tables;
pub mod trace;
pub mod values;
pub mod watch;
pub mod whatif;

pub use bottleneck::BottleneckArgs;
pub use calls::{CallsArgs, RunArgs};
pub use cluster::ClusterArgs;
pub use compare::CompareArgs;
pub use diagnose::DiagnoseArgs;
pub use export::ExportArgs;
pub use flamegraph::FlamegraphArgs;
pub use latency::LatencyArgs;
pub use meta::{CompletionsArgs, ManArgs};
pub use record::{DemoArgs, RecordArgs, TriggerArgs};
pub use report::ReportArgs;
pub use tables::{FleetArgs, SqlArgs, TablesArgs};
pub use trace::{CheckArgs, DumpArgs, ImportArgs, InfoArgs};
pub use watch::WatchArgs;
pub use whatif::WhatIfArgs;

use clap::{Parser, Subcommand};

const AFTER_HELP: &str = "\
EXIT STATUS:
    0  success
    1  the analysis found nothing, or a usage error (bad flag, missing file, no permission)
    2  bad input: the trace or recording is corrupt, truncated or not understood

UNITS (the same for every flag and for `record --trigger`):
    duration  a number and a unit ns, us, ms, s or min: `200ms`, `1.5s`, `2min`;
              a bare number is seconds (except in --trigger)
    size      a whole number of bytes, or with K, M or G (1K = 1024): `64M`, `8K`
    rate      per second, bytes (`125MB`, powers of ten) or bits (`10Gbit`)

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
    Record(Box<RecordArgs>),
    /// Record a program like `record` does, plus the reads and writes of one of its
    /// variables (a data flag) with hardware watchpoints, for `diagnose`.
    Watch(Box<WatchArgs>),
    /// Ask running flight recorders (`causeway record --flight`) to dump their window.
    Trigger(TriggerArgs),
    /// Find the waiting events that limit throughput (wPerf): the wait-for graph, its
    /// knots and sinks, with the stacks behind each edge.
    Bottleneck(BottleneckArgs),
    /// Predict how much faster the program's repeated work would go if some waits (an
    /// edge of the wait-for graph, a device, a call site) or a vertex's CPU time were
    /// shorter: the recording replayed with that time shrunk.
    Whatif(WhatIfArgs),
    /// Write the trace for other viewers: Perfetto's protobuf format (thread states,
    /// CPUs, wake-up arrows, syscalls, spans, bottleneck knots) or Chrome JSON.
    Export(ExportArgs),
    /// Flame graphs of on-CPU samples, off-CPU (blocked) time, or wake-up chains
    /// (blocked stacks with their wakers' stacks on top), folded or as SVG.
    Flamegraph(FlamegraphArgs),
    /// Compare a normal run with a slow one: syscalls by user call site, what only one
    /// run does, wait-time histograms (EMD), bottleneck verdicts, differential flame graph.
    Compare(CompareArgs),
    /// Write one self-contained HTML page: summary, interactive bottleneck graph, flame
    /// graphs, thread timeline and the Perfetto export to download.
    Report(ReportArgs),
    /// Write traces as Parquet tables (threads, states, events, stacks, analyses'
    /// results), partitioned by host and trace, for SQL over many recordings.
    Tables(TablesArgs),
    /// Query trace tables or traces with SQL (Apache DataFusion): one query, or an
    /// interactive prompt.
    Sql(SqlArgs),
    /// A census of many hosts' tables: the knot and sink call sites on the most hosts,
    /// and the hosts whose waits differ most from the fleet's.
    Fleet(FleetArgs),
    /// Run a scheduler or an executor of an Apache Ballista cluster, for `sql` and
    /// `fleet` over more tables than one machine reads quickly.
    Cluster(ClusterArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions(CompletionsArgs),
    /// Write man pages (causeway.1 and one per subcommand) into a directory.
    Man(ManArgs),
    /// Latency histograms with their peaks (OSprof): of syscalls, blocked and runnable
    /// waits and functions, from a trace or live (`--func`); `latency diff A B`
    /// compares two traces.
    Latency(Box<LatencyArgs>),
    /// Find the call path that makes a latency peak of a function (DARC), live: profile
    /// F0, pick --peak N, time its callees with uprobes, descend.
    Rootpath(rootpath::RootpathArgs),
    /// Call trees of an in-process trace (Hubble): the longest call chains before the
    /// dump, functions by self time, call-chain signatures, per-thread trees.
    Calls(CallsArgs),
    /// Why is it stuck (Argus): build the event graph of execution segments and waits
    /// with strong and weak edges, start from a stalled thread (the longest stall by
    /// default), and walk back to the culprit, the culprit's culprit and circular
    /// waits, asking where the graph is ambiguous.
    Diagnose(DiagnoseArgs),
    /// Run a program with in-process call tracing (`--inproc`: libcauseway preloaded),
    /// dumping a trace on a signal, a stalled event loop or exit.
    Run(RunArgs),
}
