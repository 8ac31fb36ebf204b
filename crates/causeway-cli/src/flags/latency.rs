//! Flags of `causeway latency` and `causeway latency diff`, and their resolution into
//! the latency analysis's options.
//!
//! Syscall names are read with the recorder's syscall table (the syscalls the
//! recorder can record are the ones a trace can hold).

use causeway_format::units::parse_duration_ns;
use causeway_format::{DurationNs, Tgid, Tid};
use causeway_latency::{Kind, Options, Resolution, Selection};
use causeway_record::syscalls::known as recorded_syscalls;
use clap::{Args, Subcommand, ValueEnum};
use std::path::PathBuf;

/// `--kind`: which operations to profile.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum KindArg {
    /// System calls, one profile per call (needs a trace recorded with syscalls).
    Syscall,
    /// Blocked waits: off CPU, waiting for something.
    Blocked,
    /// Runnable waits: ready, waiting for a CPU.
    Runnable,
    /// User functions from method and span markers.
    Function,
}

impl From<KindArg> for Kind {
    fn from(k: KindArg) -> Kind {
        match k {
            KindArg::Syscall => Kind::Syscall,
            KindArg::Blocked => Kind::Blocked,
            KindArg::Runnable => Kind::Runnable,
            KindArg::Function => Kind::Function,
        }
    }
}

/// What to profile and how to bin it: shared by `latency` and `latency diff`.
#[derive(Debug, Args, Clone)]
pub struct ProfileFlags {
    /// Only these kinds of operation (comma-separated) [default: all the trace has].
    #[arg(long, value_delimiter = ',')]
    pub kind: Vec<KindArg>,
    /// Only these system calls, by name (comma-separated), e.g. `futex,read`.
    #[arg(long, value_delimiter = ',', value_name = "NAME")]
    pub syscall: Vec<String>,
    /// Only threads of these processes (comma-separated pids); with `--func`, the
    /// process to probe.
    #[arg(short = 'p', long, value_delimiter = ',')]
    pub pid: Vec<u32>,
    /// Only these threads (comma-separated tids).
    #[arg(long, value_delimiter = ',')]
    pub tid: Vec<u32>,
    /// Only threads with this name, or of processes with this name or executable name.
    #[arg(long)]
    pub comm: Option<String>,
    /// Bins per power of two: 1 (log2, as OSprof and BCC), 2, 4, 8 or 16.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub bins: u8,
}

/// Why a flag cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum LatencyFlagError {
    /// A syscall name the recorder does not know.
    #[error("unknown syscall `{0}` (the recorder knows: {1})")]
    Syscall(String, String),
    /// A bad `--bins`.
    #[error(transparent)]
    Bins(#[from] causeway_latency::LatencyError),
}

/// The name of an x86-64 syscall number, if the recorder knows it.
pub fn syscall_name(nr: u32) -> Option<String> {
    recorded_syscalls()
        .iter()
        .find(|s| s.nr == nr)
        .map(|s| s.name.to_string())
}

impl ProfileFlags {
    /// The analysis options these flags ask for.
    pub fn options(&self) -> Result<Options, LatencyFlagError> {
        let syscalls = self
            .syscall
            .iter()
            .map(|name| {
                recorded_syscalls()
                    .iter()
                    .find(|s| s.name == name)
                    .map(|s| s.nr)
                    .ok_or_else(|| {
                        let known: Vec<&str> = recorded_syscalls().iter().map(|s| s.name).collect();
                        LatencyFlagError::Syscall(name.clone(), known.join(", "))
                    })
            })
            .collect::<Result<Vec<u32>, _>>()?;
        let mut kinds: Vec<Kind> = self.kind.iter().map(|&k| k.into()).collect();
        // Naming a syscall asks for syscalls.
        if kinds.is_empty() && !syscalls.is_empty() {
            kinds.push(Kind::Syscall);
        }
        Ok(Options {
            kinds,
            syscalls,
            selection: Selection {
                tids: self.tid.iter().map(|&t| Tid(t)).collect(),
                tgids: self.pid.iter().map(|&p| Tgid(p)).collect(),
                comm: self.comm.clone(),
            },
            resolution: Resolution::per_octave(self.bins)?,
            ..Options::default()
        })
    }
}

/// `causeway latency`.
#[derive(Debug, Args)]
#[command(
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true,
    after_help = "\
Peaks are numbered from the shortest latencies (peak 1) to the longest. From a trace,
profiles are made of each system call (if the trace recorded syscalls), of blocked and
runnable waits and of methods and spans (from markers). Live, `--func SYMBOL` probes a
function of a process (-p PID) or of a command it starts (-- CMD) with uprobes and
counts its latencies in the kernel; Ctrl-C or --duration ends it.

Examples:
    causeway latency trace.cwt --kind syscall --syscall futex
    causeway latency trace.cwt --kind blocked --comm worker --interval 1s
    causeway latency diff before.cwt after.cwt --syscall read
    causeway latency -p 1234 --func do_operation --duration 10s
    causeway latency --func do_operation -- ./two-peaks --duration 3"
)]
pub struct LatencyArgs {
    /// Compare two traces.
    #[command(subcommand)]
    pub sub: Option<LatencySub>,
    /// Trace file. Omit it for live profiling with `--func`, or give `-- CMD` to record
    /// CMD first.
    pub trace: Option<PathBuf>,
    /// What to profile.
    #[command(flatten)]
    pub profile: ProfileFlags,
    /// Also a profile per interval of this length (time-lapse), e.g. `1s`, `200ms`.
    #[arg(long, value_name = "TIME", value_parser = parse_duration_ns)]
    pub interval: Option<DurationNs>,
    /// Print the whole result as JSON (latencies in integer nanoseconds, `_ns`).
    #[arg(long)]
    pub json: bool,
    /// Also write an HTML page with one plot per profile to this file.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Live: the function to probe (a symbol of the program's executable).
    #[arg(long, value_name = "SYMBOL")]
    pub func: Option<String>,
    /// Live: the binary or library holding `--func` [default: the process's
    /// executable].
    #[arg(long, value_name = "PATH")]
    pub binary: Option<PathBuf>,
    /// Live: stop after this long [default: until Ctrl-C, or until CMD exits].
    #[arg(long, value_name = "TIME", value_parser = parse_duration_ns)]
    pub duration: Option<DurationNs>,
    /// Directory for the recording made with `-- CMD` without `--func`
    /// (`latency.cwt`).
    #[arg(long, default_value = "latency-out")]
    pub out_dir: PathBuf,
    /// Command to record or to probe (after `--`). With `--json` its standard output
    /// goes to stderr, so that stdout holds only the JSON.
    #[arg(last = true, value_name = "CMD")]
    pub command: Vec<String>,
}

/// `causeway latency`'s subcommands.
#[derive(Debug, Subcommand)]
pub enum LatencySub {
    /// Compare the profiles of two traces by the Earth Mover's Distance and say which
    /// peaks appeared, vanished or moved (exit 0 if a peak changed, 1 if none did).
    Diff(LatencyDiffArgs),
}

/// `causeway latency diff`.
#[derive(Debug, Args)]
pub struct LatencyDiffArgs {
    /// The earlier trace.
    pub before: PathBuf,
    /// The later trace.
    pub after: PathBuf,
    /// What to profile.
    #[command(flatten)]
    pub profile: ProfileFlags,
    /// Print the comparison as JSON.
    #[arg(long)]
    pub json: bool,
}

#[cfg(test)]
mod tests {
    use super::super::{Cli, Command};
    use super::*;
    use clap::Parser;

    fn latency(args: &[&str]) -> LatencyArgs {
        let mut v = vec!["causeway", "latency"];
        v.extend_from_slice(args);
        match Cli::try_parse_from(v).unwrap().command {
            Command::Latency(a) => *a,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn flags_resolve_to_options() {
        let a = latency(&[
            "t.cwt",
            "--syscall",
            "futex,read",
            "--pid",
            "7",
            "--bins",
            "4",
        ]);
        let o = a.profile.options().unwrap();
        assert_eq!(o.syscalls, vec![202, 0]);
        assert_eq!(o.kinds, vec![Kind::Syscall]);
        assert_eq!(o.selection.tgids, vec![Tgid(7)]);
        assert_eq!(o.resolution.bins_per_octave(), 4);
        let bad = latency(&["t.cwt", "--syscall", "nosuch"]);
        assert!(bad.profile.options().is_err());
        let bins = latency(&["t.cwt", "--bins", "3"]);
        assert!(bins.profile.options().is_err());
    }

    #[test]
    fn diff_is_a_subcommand() {
        let a = latency(&["diff", "a.cwt", "b.cwt", "--kind", "blocked"]);
        let Some(LatencySub::Diff(d)) = a.sub else {
            panic!("no diff");
        };
        assert_eq!(d.before, PathBuf::from("a.cwt"));
        assert_eq!(d.profile.kind, vec![KindArg::Blocked]);
    }
}
