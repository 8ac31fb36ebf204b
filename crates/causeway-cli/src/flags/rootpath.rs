//! Flags of `causeway rootpath` (DARC).

use super::values::FlagError;
use causeway_format::DurationNs;
use causeway_format::units::parse_duration_ns;
pub use causeway_latency::offline::PeakChoice;
use clap::Args;
use std::path::PathBuf;

/// `causeway rootpath`.
#[derive(Debug, Args)]
#[command(after_help = "\
It profiles F0 until --start-ops calls, picks peak N (numbered from the shortest
latencies, as `causeway latency` numbers them), then descends one level at a time:
the callees of the function under study (found by disassembling it with objdump;
the targets of its indirect calls read at run time by a probe on each `call *`
instruction, in a short pass first) are timed with uprobes during F0's calls that
fall in the peak; after --decision-ops such calls, the callees whose maxcount is
within --maxcount-pct of the best are root causes and the first is studied next.
Time the thread spends preempted or in hard IRQ handlers (the local timer's
included) inside the function competes as two more contributors; if one wins, the
path ends in \"preempted by COMM (tid N)\" or \"interrupt N (NAME)\". It stops in a
function that is its own cause, in one with no callee to probe, or at --max-depth.

Given a TRACE of every call (a libcauseway dump), the same descent is computed from
the recorded calls: exactly (every call of F0 in the peak, every callee, indirect
calls included), for any function and peak, without running the program; preemption
and interrupts come from the trace's scheduler and IRQ events if it has them.
--start-ops, --decision-ops and --phase-timeout do not apply.

While a live run goes on, `kill -USR1 PID` (its PID) makes it print its status on
stderr: the phase, F0's histogram, the peak, the path so far and each level's
maxcounts so far.

Examples:
    causeway rootpath --func do_operation --peak 2 -- ./two-peaks --seconds 30
    causeway rootpath traces/causeway-1234-1.cwt --func do_operation --peak last")]
pub struct RootpathArgs {
    /// A trace where every call is recorded (libcauseway, or any trace with method
    /// markers): the path is computed from it exactly, without running anything.
    #[arg(value_name = "TRACE", conflicts_with_all = ["pid", "resume", "binary"])]
    pub trace: Option<PathBuf>,
    /// The process to study.
    #[arg(short = 'p', long)]
    pub pid: Option<u32>,
    /// F0: the function whose latency peak to explain (a symbol of the executable).
    #[arg(long, value_name = "SYMBOL")]
    pub func: String,
    /// The file holding F0 [default: the process's executable].
    #[arg(long, value_name = "PATH")]
    pub binary: Option<PathBuf>,
    /// The peak to explain: its number (1 = shortest latencies), or `last` for the
    /// slowest one, whatever number the profile gives it.
    #[arg(long, value_name = "N|last", required_unless_present = "resume")]
    pub peak: Option<PeakChoice>,
    /// Continue a previous run from its `--json` output: F0 is profiled again and
    /// compared with the saved profile by the Earth Mover's Distance, then the descent
    /// resumes below the saved path, in the peak holding the saved peak's mode.
    #[arg(long, value_name = "FILE")]
    pub resume: Option<PathBuf>,
    /// With --resume: refuse to continue if F0's profile moved more than this many
    /// octaves (EMD) since the saved run.
    #[arg(long, default_value_t = 1.0, value_name = "OCTAVES")]
    pub max_emd: f64,
    /// Calls of F0 profiled before the peak is chosen.
    #[arg(long, default_value_t = 2000, value_name = "N")]
    pub start_ops: u64,
    /// In-peak calls of F0 per decision.
    #[arg(long, default_value_t = 200, value_name = "N")]
    pub decision_ops: u64,
    /// Root causes are the callees whose maxcount is at least this share (0 to 1) of
    /// the largest.
    #[arg(long, default_value_t = 0.9, value_parser = share)]
    pub maxcount_pct: f64,
    /// Longest path below F0.
    #[arg(long, default_value_t = 8)]
    pub max_depth: usize,
    /// Give up on a phase (profiling, or one level) after this long.
    #[arg(long, default_value = "60s", value_parser = parse_duration_ns)]
    pub phase_timeout: DurationNs,
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
    /// Command to start and study (after `--`).
    #[arg(last = true, value_name = "CMD")]
    pub command: Vec<String>,
}

fn share(s: &str) -> Result<f64, FlagError> {
    match s.trim().parse::<f64>() {
        Ok(v) if (0.0..=1.0).contains(&v) => Ok(v),
        _ => Err(FlagError::Share(s.to_string())),
    }
}
