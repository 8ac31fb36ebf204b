//! Flags of `causeway whatif`.

use super::bottleneck::GraphArgs;
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
  causeway whatif t.cwt --waits-on 'disk vda' --factor 2      # the disk twice as fast
  causeway whatif t.cwt --site flush_log --factor 4            # waits under flush_log / 4

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
    /// Shrink every wait that VERTEX ended, whoever waited (a device's service time:
    /// `--waits-on 'disk vda'`). Repeatable.
    #[arg(long, value_name = "VERTEX")]
    pub waits_on: Vec<String>,
    /// Shrink the waits that blocked under FUNCTION: a function named in the wait's
    /// user stack (as the bottleneck's edges list their call sites). Repeatable.
    #[arg(long, value_name = "FUNCTION")]
    pub site: Vec<String>,
    /// Shrink the time on CPU of a vertex's threads (an id or a label). Repeatable.
    #[arg(long, value_name = "VERTEX")]
    pub cpu: Vec<String>,
    /// Divide the chosen time by K (`2` halves it); `inf` removes it.
    #[arg(long, default_value = "inf", value_name = "K")]
    pub factor: Factor,
    /// Print the prediction as JSON.
    #[arg(long)]
    pub json: bool,
    /// The wait-for graph, built as `bottleneck` builds it: its knots decide the
    /// threads whose work is counted.
    #[command(flatten)]
    pub graph: GraphArgs,
}
