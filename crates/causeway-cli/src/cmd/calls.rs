//! `causeway calls`: call trees of an in-process trace (Hubble §7).
//!
//! Reads the trace once, runs `causeway_calls::analyze`, and has `causeway-report`
//! render the chains, top functions, signature matches and trees.

use crate::flags::CallsArgs;
use crate::output;
use crate::trace::{ingest_trace, open_trace};
use anyhow::{Result, bail};
use causeway_calls::analyze;
use causeway_report::{CallsSections, CallsView, Caveats};

/// Run the command; returns the exit code (1 if the trace has no calls, or the
/// signature was not found).
pub fn run(args: &CallsArgs) -> Result<u8> {
    let opts = match args.options() {
        Ok(o) => o,
        Err(e) => bail!("--match: {e}"),
    };
    let mut rd = open_trace(&args.trace)?;
    let trace = ingest_trace(&mut rd, &args.trace)?;
    let result = analyze(&trace, &opts)?;
    if result.threads.is_empty() && opts.threads.is_empty() {
        // Not damage: the trace simply has no calls (exit 1, as other empty results).
        return Err(anyhow::anyhow!(
            "{}: no calls (method markers) in this trace; record one with `causeway run --inproc -- CMD`",
            args.trace.display()
        ));
    }
    let all = !args.any_section();
    let sections = CallsSections {
        chains: all || args.chains.is_some(),
        top: all || args.top.is_some(),
        tree: args.tree.then_some(args.min),
        signature: args.signature.clone(),
    };
    let view = CallsView::new(&result, trace.tables(), &sections);
    output::emit_with(
        &view,
        output::format(args.json, false),
        &[("", &Caveats::of(&trace))],
    )
}
