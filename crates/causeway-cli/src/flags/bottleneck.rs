//! Flags of `causeway bottleneck` and their resolution into the analysis's options.
//!
//! The threshold may be a time, which only becomes the analysis's share of the
//! recording once the trace's length is known: [`Threshold::fraction_of`].

use super::values::{FlagError, positive_f64};
use causeway_bottleneck::Options;
use causeway_format::units::{parse_duration_ns, parse_rate_bytes_per_sec};
use clap::Args;
use std::path::PathBuf;

/// `causeway bottleneck`.
#[derive(Debug, Args, Clone)]
#[command(after_help = "\
Durations are a number and a unit ns, us, ms, s or min; rates are per second, bytes
in powers of ten (`125MB`) or bits (`10Gbit`).")]
pub struct BottleneckArgs {
    /// Trace file. Omit it and give `-- CMD ARGS...` to record CMD first (as `causeway
    /// record -- CMD` would). Several hosts' traces of the same time are joined into one
    /// wait-for graph (wake-ups by data from another host tied to its sender, clocks
    /// aligned from that traffic).
    #[arg(required_unless_present = "command", value_name = "TRACE")]
    pub traces: Vec<PathBuf>,
    /// Print the whole result as JSON.
    #[arg(long, conflicts_with = "dot")]
    pub json: bool,
    /// Print the wait-for graph in graphviz DOT.
    #[arg(long)]
    pub dot: bool,
    /// Also write the graph as SVG to this file (needs graphviz `dot`).
    #[arg(long, value_name = "FILE")]
    pub svg: Option<PathBuf>,
    /// How the wait-for graph is built.
    #[command(flatten)]
    pub graph: GraphArgs,
    /// Capacity of network devices, per second: `10Gbit`, `100Mbit`, `125MB`, or bytes
    /// [default: link speed stored in the trace, else 10Gbit].
    #[arg(long, value_name = "RATE", value_parser = parse_rate_bytes_per_sec)]
    pub nic_capacity: Option<f64>,
    /// Disk bandwidth per second (`500MB`, `2GB`) [default: estimated from requests].
    #[arg(long, value_name = "RATE", value_parser = parse_rate_bytes_per_sec)]
    pub disk_bandwidth: Option<f64>,
    /// Disk requests per second [default: estimated from request latencies].
    #[arg(long, value_name = "N", value_parser = positive_f64)]
    pub disk_iops: Option<f64>,
    /// Also predict, for the heaviest wait edges of each knot and sink, how much faster
    /// the program's repeated work would go with their waits removed or halved: the
    /// recording replayed with those waits shortened (`causeway whatif` asks one such
    /// question at a time; docs: the bottleneck page, "Predicted gains").
    #[arg(long)]
    pub what_if: bool,
    /// Stacks shown per edge and side.
    #[arg(long, default_value_t = 3)]
    pub stacks: usize,
    /// Directory for the recording made with `-- CMD` (`bottleneck.cwt`; an earlier one
    /// is kept as `bottleneck.cwt.old`).
    #[arg(long, default_value = "bottleneck-out")]
    pub out_dir: PathBuf,
    /// Command to record and analyze (after `--`). With `--json` its standard output
    /// goes to stderr, so that stdout holds only the JSON.
    #[arg(last = true, value_name = "CMD")]
    pub command: Vec<String>,
}

impl BottleneckArgs {
    /// The defaults, on a trace file (what `causeway demo` runs).
    pub fn for_trace(trace: PathBuf) -> BottleneckArgs {
        BottleneckArgs {
            traces: vec![trace],
            json: false,
            dot: false,
            svg: None,
            graph: GraphArgs::default(),
            nic_capacity: None,
            disk_bandwidth: None,
            disk_iops: None,
            what_if: false,
            stacks: 3,
            out_dir: PathBuf::from("bottleneck-out"),
            command: Vec::new(),
        }
    }

    /// The analysis options these flags ask for. The threshold is left at its default:
    /// it is set from [`Threshold::fraction_of`] once the recording's length is known.
    pub fn options(&self) -> Options {
        Options {
            merge: !self.graph.no_merge,
            top_stacks: self.stacks,
            nic_capacity: self.nic_capacity,
            disk_bandwidth: self.disk_bandwidth,
            disk_iops: self.disk_iops,
            ..Options::default()
        }
    }
}

/// The flags that shape the wait-for graph, shared by the commands that build one
/// (`bottleneck`, `whatif`).
#[derive(Debug, Args, Clone, Copy, PartialEq)]
pub struct GraphArgs {
    /// Knot refinement keeps edges heavier than this: a share of the recording
    /// (`20%`, `0.2`) or a time (`1.5s`, `300ms`).
    #[arg(long, default_value = "20%", value_parser = parse_threshold)]
    pub threshold: Threshold,
    /// Show raw threads: do not merge similar or short-term threads.
    #[arg(long)]
    pub no_merge: bool,
    /// Analyse the OS threads of Go programs instead of their goroutines. By default,
    /// when the trace has goroutine events, each goroutine is a thread of the wait-for
    /// graph (grouped by start function) and the runtime's threads that carry them
    /// are left out: their own waits are the scheduler's, not the program's.
    #[arg(long)]
    pub os_threads: bool,
}

impl Default for GraphArgs {
    fn default() -> GraphArgs {
        GraphArgs {
            threshold: Threshold::DEFAULT,
            no_merge: false,
            os_threads: false,
        }
    }
}

/// How the user gave the threshold.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Threshold {
    /// A share of the recording (0.2 for `20%`).
    Fraction(f64),
    /// A time, nanoseconds.
    Nanos(u64),
}

impl Threshold {
    /// `20%`, the flag's default.
    pub const DEFAULT: Threshold = Threshold::Fraction(0.2);

    /// The threshold as a share of a recording `span_ns` long.
    pub fn fraction_of(self, span_ns: u64) -> f64 {
        match self {
            Threshold::Fraction(f) => f,
            Threshold::Nanos(ns) => ns as f64 / span_ns.max(1) as f64,
        }
    }
}

/// Read a threshold: `N%` (a non-negative percentage), a bare number (a share from 0
/// to 1), or a duration with its unit.
pub fn parse_threshold(s: &str) -> Result<Threshold, FlagError> {
    let t = s.trim();
    if let Some(p) = t.strip_suffix('%') {
        let v: f64 = p
            .trim()
            .parse()
            .map_err(|_| FlagError::Percent(s.to_string()))?;
        if !v.is_finite() || v < 0.0 {
            return Err(FlagError::NegativePercent(s.to_string()));
        }
        return Ok(Threshold::Fraction(v / 100.0));
    }
    if let Ok(v) = t.parse::<f64>() {
        if !v.is_finite() || !(0.0..=1.0).contains(&v) {
            return Err(FlagError::Share(s.to_string()));
        }
        return Ok(Threshold::Fraction(v));
    }
    parse_duration_ns(t)
        .map(|d| Threshold::Nanos(d.0))
        .map_err(|_| FlagError::Threshold(s.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thresholds() {
        assert_eq!(parse_threshold("20%").unwrap(), Threshold::Fraction(0.2));
        assert_eq!(parse_threshold("0.5").unwrap(), Threshold::Fraction(0.5));
        assert_eq!(
            parse_threshold("1.5s").unwrap(),
            Threshold::Nanos(1_500_000_000)
        );
        assert!(parse_threshold("2").is_err());
        assert!(parse_threshold("-5%").is_err());
        assert!(parse_threshold("abc").is_err());
    }

    #[test]
    fn thresholds_accept_and_reject() {
        let ok: &[(&str, Threshold)] = &[
            ("20%", Threshold::DEFAULT),
            (" 5 % ", Threshold::Fraction(0.05)),
            ("150%", Threshold::Fraction(1.5)),
            ("0", Threshold::Fraction(0.0)),
            ("1", Threshold::Fraction(1.0)),
            ("300ms", Threshold::Nanos(300_000_000)),
            ("2min", Threshold::Nanos(120_000_000_000)),
        ];
        for (s, t) in ok {
            assert_eq!(parse_threshold(s).as_ref(), Ok(t), "{s}");
        }
        let bad: &[(&str, FlagError)] = &[
            ("x%", FlagError::Percent("x%".into())),
            ("-5%", FlagError::NegativePercent("-5%".into())),
            ("2", FlagError::Share("2".into())),
            ("-0.5", FlagError::Share("-0.5".into())),
            ("abc", FlagError::Threshold("abc".into())),
            ("-1s", FlagError::Threshold("-1s".into())),
        ];
        for (s, e) in bad {
            assert_eq!(parse_threshold(s).as_ref(), Err(e), "{s}");
        }
    }

    #[test]
    fn a_time_threshold_is_a_share_of_the_recording() {
        assert_eq!(Threshold::Nanos(500).fraction_of(1000), 0.5);
        assert_eq!(Threshold::Nanos(500).fraction_of(0), 500.0);
        assert_eq!(Threshold::Fraction(0.3).fraction_of(1000), 0.3);
    }

    #[test]
    fn default_matches_the_flag() {
        use super::super::{Cli, Command};
        use clap::Parser;
        let cli = Cli::try_parse_from(["causeway", "bottleneck", "t.cwt"]).unwrap();
        let Command::Bottleneck(a) = cli.command else {
            panic!("not bottleneck");
        };
        let d = BottleneckArgs::for_trace("t.cwt".into());
        assert_eq!(a.graph, d.graph);
        assert_eq!(a.stacks, d.stacks);
        assert_eq!(a.out_dir, d.out_dir);
        let o = a.options();
        assert_eq!(o.threshold_fraction, Options::default().threshold_fraction);
        assert!(o.merge);
    }
}
