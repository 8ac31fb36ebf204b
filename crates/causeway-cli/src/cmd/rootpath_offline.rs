//! `causeway rootpath TRACE`: the root-cause path from a trace where every call is
//! recorded (`causeway_latency::offline`), rendered as the live one is.

use crate::flags::rootpath::RootpathArgs;
use crate::output;
use crate::trace::{ingest_trace, open_trace};
use anyhow::{Result, bail};
use causeway_latency::offline::{self, OfflineOptions};
use causeway_report::RootPathView;
use std::path::Path;

/// Run the offline form on `trace`.
pub fn run(args: &RootpathArgs, trace: &Path) -> Result<u8> {
    if !args.command.is_empty() {
        bail!("give either a trace file or `-- CMD`, not both");
    }
    let Some(peak) = args.peak else {
        bail!("--peak is needed with a trace (--resume is for live runs)");
    };
    let mut rd = open_trace(trace)?;
    let t = ingest_trace(&mut rd, trace)?;
    let opts = OfflineOptions {
        f0: args.func.clone(),
        peak,
        maxcount_pct: args.maxcount_pct,
        max_depth: args.max_depth,
        threads: Vec::new(),
    };
    let result = offline::rootpath(&t, &opts)?;
    let view = RootPathView::new(&result);
    output::emit(&view, output::format(args.json, false))
}
