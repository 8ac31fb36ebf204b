//! Flags of `causeway whatif`.

use super::bottleneck::{Threshold, parse_threshold};
use causeway_whatif::Factor;
use clap::Args;
use std::path::PathBuf;

/// `causeway whatif`.
#[derive(Debug, Args, Clone)]
#[command(after_help = "\
Vertices and edges are named as `causeway bottleneck` names them: by id (the `id` of
`vertices[]` and `edges[]` in `bottleneck --json`), or by label, `FROM->TO` for an edge
(`consumer (4711)->disk vda`; a label's unique prefix is enough).

Examples:
  causeway whatif t.cwt --edge 'consumer->disk'              # the waits removed
  causeway whatif t.cwt --edge 3 --factor 2                   # edge 3's waits halved
  causeway whatif t.cwt --cpu 'worker-*' --factor 1.5 --json  # workers' CPU / 1.5

The prediction replays the recording with the chosen time shrunk: waits on other
recorded threads follow those threads, waits on timers and devices keep their lengths,
waits on the outside world end no earlier than they did (docs: the bottleneck page,
\"Predicted gains\").")]
pub struct WhatIfArgs {
    /// Trace file; several hosts' traces of the same time are joined as `bottleneck`
    /// joins them.
    #[arg(required = true, value_name = "TRACE")]
    pub traces: Vec<PathBuf>,
    /// Shrink the waits of an edge: the waits of FROM's threads that TO ended (an id,
    /// or `FROM->TO`). Repeat to change several edges at once.
    #[arg(long, value_name = "EDGE")]
    pub edge: Vec<String>,
    /// Shrink the time on CPU of a vertex's threads (an id or a label). Repeatable.
    #[arg(long, value_name = "VERTEX")]
    pub cpu: Vec<String>,
    /// Divide the chosen time by K (`2` halves it); `inf` removes it.
    #[arg(long, default_value = "inf", value_name = "K")]
    pub factor: Factor,
    /// Print the prediction as JSON.
    #[arg(long)]
    pub json: bool,
    /// The bottleneck analysis's refinement threshold, which decides the knots and so
    /// the threads whose work is counted (as `bottleneck --threshold`).
    #[arg(long, default_value = "20%", value_parser = parse_threshold)]
    pub threshold: Threshold,
    /// Do not merge similar or short-term threads (as `bottleneck --no-merge`).
    #[arg(long)]
    pub no_merge: bool,
    /// Go programs' OS threads instead of their goroutines (as `bottleneck
    /// --os-threads`).
    #[arg(long)]
    pub os_threads: bool,
}
