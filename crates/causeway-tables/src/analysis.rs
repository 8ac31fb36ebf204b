//! The analyses' results as tables: the wait-for graph, knots and sinks (from the
//! bottleneck report's rows, so they match `bottleneck --json`), and the latency
//! profiles' bins and peaks, the diagnosis's culprit chain.

use crate::TablesError;
use crate::schema::{
    BottleneckEdges, BottleneckVertices, Diagnosis, Knots, LatencyBins, LatencyPeaks, Sinks,
};
use crate::writer::PartitionWriter;
use arrow_array::builder::{Int64Builder, ListBuilder};
use causeway_format::Tables;
use causeway_latency::{Profiles, Subject};
use causeway_report::{BottleneckRows, ChainRow};

fn list(b: &mut ListBuilder<Int64Builder>, v: &[u64]) {
    b.append_value(v.iter().map(|&x| Some(x as i64)));
}

/// Write the bottleneck tables; empty when the analysis did not run or found nothing
/// to analyse.
pub fn bottleneck(
    rows: Option<&BottleneckRows>,
    sites: Option<&[Option<String>]>,
    out: &mut PartitionWriter,
) -> Result<(), TablesError> {
    let empty = BottleneckRows::default();
    let r = rows.unwrap_or(&empty);
    let mut v = BottleneckVertices::default();
    for x in &r.vertices {
        v.vertex.append_value(x.id as i64);
        v.label.append_value(&x.label);
        v.kind.append_value(&x.kind);
        list(&mut v.tids, &x.tids);
        v.running_ns.append_value(x.running_ns as i64);
        v.runnable_ns.append_value(x.runnable_ns as i64);
        v.waiting_ns.append_value(x.waiting_ns as i64);
    }
    out.flush(&mut v)?;
    let mut e = BottleneckEdges::default();
    for x in &r.edges {
        e.edge.append_value(x.id as i64);
        e.from_vertex.append_value(x.from as i64);
        e.to_vertex.append_value(x.to as i64);
        e.kind.append_value(&x.kind);
        e.weight_ns.append_value(x.weight_ns as i64);
        e.direct_waits.append_value(x.direct_waits as i64);
        e.direct_ns.append_value(x.direct_ns as i64);
        e.knot.append_option(x.knot.map(|k| k as i64));
        e.wait_stack
            .append_option(x.wait_stack.as_ref().map(|s| s.join(";")));
        e.waker_stack
            .append_option(x.waker_stack.as_ref().map(|s| s.join(";")));
        let site = sites
            .and_then(|s| s.get(x.id as usize))
            .and_then(|s| s.as_deref());
        e.wait_site.append_option(site);
        out.flush_full(&mut e)?;
    }
    out.flush(&mut e)?;
    let mut k = Knots::default();
    for x in &r.knots {
        k.rank.append_option(x.rank.map(|r| r as i64));
        k.background.append_value(x.rank.is_none());
        k.shape.append_value(&x.shape);
        list(&mut k.vertices, &x.vertices);
        list(&mut k.edges, &x.edges);
        k.weight_ns.append_value(x.weight_ns as i64);
        k.needs_cpu_ns.append_value(x.needs_cpu_ns as i64);
        k.has_io.append_value(x.has_io);
        k.advice.append_value(&x.advice);
    }
    out.flush(&mut k)?;
    let mut s = Sinks::default();
    for x in &r.sinks {
        s.vertex.append_value(x.vertex as i64);
        s.background.append_value(x.background);
        s.incoming_ns.append_value(x.incoming_ns as i64);
        list(&mut s.chain, &x.chain);
        s.advice.append_value(&x.advice);
    }
    out.flush(&mut s)
}

/// A profile's subject as (name, kind).
fn subject(s: &Subject, strings: &Tables) -> (String, &'static str) {
    match s {
        Subject::Syscall { nr } => (
            causeway_format::syscalls::syscall_label(*nr).into_owned(),
            "syscall",
        ),
        Subject::Blocked => ("blocked waits".to_string(), "blocked"),
        Subject::Runnable => ("runnable waits".to_string(), "runnable"),
        Subject::Method { name } => (strings.string(*name).to_string(), "method"),
        Subject::Span { name } => (strings.string(*name).to_string(), "span"),
    }
}

/// Write `latency_bins` and `latency_peaks`; empty when no profile was made.
pub fn latency(
    profiles: Option<&Profiles>,
    strings: &Tables,
    out: &mut PartitionWriter,
) -> Result<(), TablesError> {
    let mut b = LatencyBins::default();
    let mut p = LatencyPeaks::default();
    for prof in profiles.map(|p| p.profiles.as_slice()).unwrap_or_default() {
        let (name, kind) = subject(&prof.subject, strings);
        let res = prof.hist.resolution();
        for (bin, &count) in prof.hist.counts().iter().enumerate() {
            if count == 0 {
                continue;
            }
            let bin = bin as u32;
            b.profile.append_value(&name);
            b.kind.append_value(kind);
            b.from_ns.append_value(res.lower_ns(bin) as i64);
            b.to_ns.append_value(res.upper_ns(bin) as i64);
            b.count.append_value(count as i64);
            let peak = prof
                .peaks
                .iter()
                .find(|k| (k.first_bin..=k.last_bin).contains(&bin));
            b.peak.append_option(peak.map(|k| k.number as i64));
            out.flush_full(&mut b)?;
        }
        for k in &prof.peaks {
            p.profile.append_value(&name);
            p.kind.append_value(kind);
            p.peak.append_value(k.number as i64);
            p.from_ns.append_value(k.from_ns as i64);
            p.to_ns.append_value(k.to_ns as i64);
            p.mode_from_ns.append_value(res.lower_ns(k.mode_bin) as i64);
            p.ops.append_value(k.ops as i64);
        }
    }
    out.flush(&mut b)?;
    out.flush(&mut p)
}

/// Write `diagnosis`: the culprit chain, one row per hop (empty without one).
pub fn diagnosis(chain: &[ChainRow], out: &mut PartitionWriter) -> Result<(), TablesError> {
    let mut d = Diagnosis::default();
    for r in chain {
        d.step.append_value(r.step as i64);
        d.vertex.append_value(r.vertex as i64);
        d.tid.append_value(r.tid as i64);
        d.thread.append_value(&r.thread);
        d.pid.append_option(r.pid.map(i64::from));
        d.goroutine.append_option(r.goroutine.map(|g| g as i64));
        d.start_ns.append_value(r.start_ns as i64);
        d.dur_ns.append_value(r.dur_ns as i64);
        d.kind.append_value(r.kind);
        d.block.append_value(r.block);
        d.link.append_value(r.link);
        d.finding.append_option(r.case);
        d.wait_call.append_option(r.wait_call.as_deref());
        d.woken_by.append_option(r.woken_by.as_deref());
        d.stack.append_option(r.stack.as_deref());
    }
    out.flush(&mut d)
}
