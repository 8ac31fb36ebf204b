//! Flags of `causeway tables` and `causeway sql`.

use clap::{Args, ValueEnum};
use std::path::PathBuf;

/// `causeway tables`.
#[derive(Debug, Args)]
#[command(after_help = "\
Each trace becomes DIR/host=HOST/trace=ID/<table>.parquet (zstd-compressed Parquet),
every row carrying trace_id and host, so recordings of many hosts can share one
directory (or object-store prefix) and be queried at once with `causeway sql`, DuckDB,
Spark or Trino. The tables and their columns are listed in docs/tables.md; times are
integer nanoseconds on the trace clock, and traces.realtime_offset_ns turns them into
Unix time.

Converting a trace again replaces its partition. The bottleneck and latency analyses
run with their default options (--no-analyses skips them).

EXAMPLES:
    causeway tables run1.cwt run2.cwt -o fleet/
    causeway sql \"SELECT host, count(*) FROM wakeups GROUP BY host\" fleet/")]
pub struct TablesArgs {
    /// Trace files.
    #[arg(required = true, value_name = "TRACE")]
    pub traces: Vec<PathBuf>,
    /// The directory of the tables (created if missing).
    #[arg(short, long, value_name = "DIR")]
    pub output: PathBuf,
    /// Host name to file the traces under, instead of the one each trace recorded.
    #[arg(long, value_name = "NAME")]
    pub host: Option<String>,
    /// Write only the trace's own tables, not the analyses' results.
    #[arg(long)]
    pub no_analyses: bool,
    /// Print what was written as JSON.
    #[arg(long)]
    pub json: bool,
}

/// How `causeway sql` prints rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SqlFormat {
    /// An aligned text table.
    Table,
    /// Comma-separated values with a header line.
    Csv,
    /// One JSON array of objects.
    Json,
}

/// `causeway sql`.
#[derive(Debug, Args)]
#[command(after_help = "\
INPUTS are table directories written by `causeway tables` (all their hosts and traces
are queried together) or trace files (.cwt), converted on the fly into a temporary
directory. Every table of docs/tables.md is a SQL table; the standard views are:

    waits           blocked intervals with thread names, waker and wait stack
    thread_summary  per thread: running, runnable and blocked time
    knot_sites      knots' edges with their call sites (wait stacks)
    samples         on-CPU samples with their folded stacks
    syscall_summary per system call: count, total and max time

and the function dur(ns) formats a duration (`1.25ms`). Queries are run by Apache
DataFusion: its SQL dialect, functions and EXPLAIN apply.

EXAMPLES:
    causeway sql \"SELECT * FROM thread_summary ORDER BY blocked_ns DESC LIMIT 5\" t.cwt
    causeway sql \"SELECT host, count(*) FROM knots GROUP BY host\" fleet/ --format csv
    causeway sql fleet/          (an interactive prompt)
    causeway sql --cluster node1:50050 \"SELECT count(*) FROM wakeups\" /shared/fleet")]
pub struct SqlArgs {
    /// The query. Without one, an interactive prompt reads queries (ending with `;`).
    #[arg(value_name = "QUERY")]
    pub query: Option<String>,
    /// Table directories or trace files.
    #[arg(value_name = "INPUT")]
    pub inputs: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
    pub format: SqlFormat,
    /// Same as --format json.
    #[arg(long, conflicts_with = "format")]
    pub json: bool,
    /// Run the query on the Ballista cluster whose scheduler is at HOST:PORT (see
    /// `causeway cluster`); its executors must read the inputs at the same paths.
    #[arg(long, value_name = "HOST:PORT")]
    pub cluster: Option<String>,
}

/// `causeway fleet`.
#[derive(Debug, Args)]
#[command(after_help = "\
The census reads the tables of `causeway tables` (written with the analyses, the
default): the call sites where threads wait inside knots or for sinks, ranked by how
many hosts show them and then by their summed waiting; and the hosts whose histogram of
blocked waits is farthest from the whole fleet's (Earth Mover's Distance in octaves: 1.0
means every wait moved by a factor of two). Its queries are in docs/fleet.md, to run
them with `causeway sql` or another engine.

EXAMPLE:
    causeway fleet fleet/ --top 10")]
pub struct FleetArgs {
    /// Table directories (all their hosts and traces are counted together).
    #[arg(required = true, value_name = "DIR")]
    pub dirs: Vec<PathBuf>,
    /// Call sites and hosts to show.
    #[arg(long, default_value_t = 20)]
    pub top: usize,
    /// Print the census as JSON.
    #[arg(long)]
    pub json: bool,
    /// Run the census's queries on the Ballista cluster whose scheduler is at
    /// HOST:PORT; its executors must read the directories at the same paths.
    #[arg(long, value_name = "HOST:PORT")]
    pub cluster: Option<String>,
}
