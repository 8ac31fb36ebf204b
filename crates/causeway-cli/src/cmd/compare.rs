//! `causeway compare`: a normal run against a slow one.

use crate::cmd::export::write_file;
use crate::cmd::loaded::{Loaded, bottleneck, load};
use crate::flags::CompareArgs;
use crate::output;
use anyhow::Result;
use causeway_compare::{Run, compare};
use causeway_report::wallclock::recorded_at;
use causeway_report::{Caveats, CompareView, RunLabel};
use causeway_stacks::{FlameKind, Options, fold};
use std::path::Path;

/// Run the command; exit 1 if neither run has a call the other lacks.
pub fn run(args: &CompareArgs) -> Result<u8> {
    let normal = load(&args.normal)?;
    let slow = load(&args.slow)?;
    let c = compare(run_of(&normal), run_of(&slow));
    let off = |l: &Loaded| fold(&l.trace, None, FlameKind::OffCpu, &Options::default());
    let view = CompareView::new(
        &c,
        (label(&args.normal, &normal), label(&args.slow, &slow)),
        (off(&normal)?, off(&slow)?),
    );
    if let Some(p) = &args.diff_svg {
        write_file(p, |out| view.write_diff_svg(out))?;
        eprintln!("wrote {}", p.display());
    }
    output::emit_with(
        &view,
        output::format(args.json, false),
        &[
            ("normal", &Caveats::of(&normal.trace)),
            ("slow", &Caveats::of(&slow.trace)),
        ],
    )
}

fn run_of(l: &Loaded) -> Run<'_> {
    Run {
        trace: &l.trace,
        extras: &l.extras,
    }
}

fn label(path: &Path, l: &Loaded) -> RunLabel {
    RunLabel {
        path: path.display().to_string(),
        recorded_at: recorded_at(l.trace.header(), l.trace.model().span().map(|s| s.start)),
        bottleneck: bottleneck(&l.trace).map(|b| b.summary().to_string()),
    }
}
