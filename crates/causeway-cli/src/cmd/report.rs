//! `causeway report`: one self-contained HTML page with the summary, the bottleneck
//! graph, the diagnosis of the longest stall, the flame graphs, the latency
//! histograms, the thread timeline and the Perfetto export.

use crate::cmd::export::write_file;
use crate::cmd::flamegraph::{recorded, title};
use crate::cmd::loaded::{auto_diagnosis, bottleneck, load_with};
use crate::exit;
use crate::flags::ReportArgs;
use crate::flags::latency::syscall_name;
use crate::trace::open_trace;
use anyhow::Result;
use causeway_latency::SyscallCollector;
use causeway_model::Trace;
use causeway_report::timeline::Timeline;
use causeway_report::wallclock::recorded_at;
use causeway_report::{FlameView, HtmlReport, InfoReport, LatencyView, Selection, perfetto};
use causeway_stacks::{FlameKind, Options, fold};
use std::path::Path;

/// Run the command.
pub fn run(args: &ReportArgs) -> Result<u8> {
    let mut calls = SyscallCollector::new();
    let loaded = load_with(&args.trace, |ev| calls.push(ev))?;
    let trace = &loaded.trace;
    let verdict = bottleneck(trace);
    let (diagnosis, diagnosis_note) = if args.no_diagnose {
        (None, "Not computed (--no-diagnose).".to_string())
    } else {
        auto_diagnosis(&loaded, args.thread.as_deref())
    };
    let latency = latency_view(trace, calls);
    let mut tl = Timeline::build(trace, Some(&loaded.extras), verdict.as_ref());
    if let Some(d) = &diagnosis {
        tl.add_diagnosis(trace, d);
    }
    let processes = recorded(trace);
    let opts = Options {
        hops: args.hops,
        processes: processes.clone(),
        ..Options::default()
    };
    let mut kinds = vec![FlameKind::OffCpu, FlameKind::WakeChain];
    if !loaded.extras.samples.is_empty() {
        kinds.insert(0, FlameKind::OnCpu);
    }
    let mut flames = Vec::new();
    for k in kinds {
        let f = fold(trace, Some(&loaded.extras), k, &opts)?;
        flames.push(FlameView::new(k, f, title(trace, k)));
    }
    let pf = if args.no_perfetto {
        None
    } else {
        let mut buf = Vec::new();
        perfetto::write(&tl, &mut buf)?;
        Some(buf)
    };
    let name = args
        .trace
        .file_stem()
        .map_or("trace".into(), |s| s.to_string_lossy().to_string());
    let info = summary(&args.trace, trace)?;
    let report = HtmlReport {
        title: page_title(trace),
        recorded_at: recorded_at(trace.header(), trace.model().span().map(|s| s.start)),
        host: trace.header().host.hostname.clone(),
        info: &info,
        caveats: causeway_report::Caveats::of(trace),
        bottleneck: verdict.as_ref(),
        diagnosis: diagnosis.as_ref(),
        diagnosis_note,
        flames: flames.iter().map(|f| (heading(f), f)).collect(),
        latency: latency.as_ref(),
        timeline: &tl,
        processes: processes.map(|p| p.iter().map(|t| t.0).collect()),
        perfetto: pf.as_deref().map(|b| (b, format!("{name}.pftrace"))),
    };
    write_file(&args.output, |out| report.write(out))?;
    eprintln!("wrote {}", args.output.display());
    Ok(exit::OK)
}

/// The latency profiles of the trace's system calls, waits and markers, as `causeway
/// latency` makes them by default; `None` if they cannot be made.
fn latency_view(trace: &Trace, calls: SyscallCollector) -> Option<LatencyView> {
    let opts = causeway_latency::Options::default();
    let profiles = causeway_latency::analyze(trace, &calls.finish(), &opts).ok()?;
    Some(LatencyView::new(&profiles, trace.tables(), &syscall_name))
}

fn heading(f: &FlameView) -> String {
    match f.kind() {
        FlameKind::OnCpu => "On-CPU flame graph (samples)",
        FlameKind::OffCpu => "Off-CPU flame graph (blocked time, by where threads blocked)",
        FlameKind::WakeChain => {
            "Wake-up chains (blocked time; above each `--`, the stack of the thread that woke it)"
        }
    }
    .to_string()
}

/// `causeway report: blocking-write --seconds 1` from the recorded command line.
fn page_title(trace: &Trace) -> String {
    let cmd = &trace.header().command_line;
    if cmd.is_empty() {
        "causeway report".to_string()
    } else {
        format!("causeway report: {}", cmd.join(" "))
    }
}

/// `causeway info`'s report of the trace (the reader is opened again for the file
/// facts only; the events are not read a third time).
fn summary(path: &Path, trace: &Trace) -> Result<InfoReport> {
    let rd = open_trace(path)?;
    let facts = super::info::trace_facts(path, &rd, trace);
    let sel = Selection {
        pids: Vec::new(),
        comm: None,
        top: 10,
    };
    Ok(InfoReport::new(facts, trace.model(), &sel))
}
