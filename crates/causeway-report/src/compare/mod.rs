//! The report of `causeway compare` ([`causeway_compare::Comparison`]): the runs side
//! by side, what appears in only one, syscalls by call site, wait-time histograms with
//! their distance, the bottleneck verdicts, and a differential flame graph.

mod doc;
mod text;

pub use doc::RunLabel;

use crate::error::ReportError;
use crate::flame::svg_options;
use crate::view::{View, write_json};
use causeway_compare::{Comparison, Log2Histogram};
use causeway_format::syscalls::syscall_label;
use causeway_stacks::{FlameKind, Folded};
use doc::{BucketDoc, Doc, RunDoc, SiteDoc, SiteRow, SyscallDoc};
use std::io::Write;

/// The comparison made readable.
#[derive(Clone, Debug, PartialEq)]
pub struct CompareView {
    doc: Doc,
    off_cpu: (Folded, Folded),
}

impl CompareView {
    /// Word the comparison; `off_cpu` are both runs' off-CPU stacks, for the
    /// differential flame graph.
    pub fn new(
        c: &Comparison,
        labels: (RunLabel, RunLabel),
        off_cpu: (Folded, Folded),
    ) -> CompareView {
        let site = |only: &[causeway_compare::SiteKey], slow: bool| {
            only.iter()
                .map(|k| {
                    let d = c.syscalls.iter().find(|s| s.nr == k.nr);
                    let row = d.and_then(|d| d.sites.iter().find(|s| s.site == k.site));
                    SiteDoc {
                        syscall: syscall_label(k.nr).into_owned(),
                        call_site: k.site.clone(),
                        calls: row.map_or(0, |r| if slow { r.slow_calls } else { r.normal_calls }),
                        time_ns: row.map_or(0, |r| if slow { r.slow_ns } else { r.normal_ns }),
                    }
                })
                .collect()
        };
        let run = |label: RunLabel, s: &causeway_compare::RunSummary| RunDoc {
            label,
            duration_ns: s.duration_ns,
            syscalls: s.syscalls,
            waits: s.waits.count(),
            waited_ns: s.waited_ns,
        };
        let doc = Doc {
            normal: run(labels.0, &c.normal),
            slow: run(labels.1, &c.slow),
            only_in_slow: site(&c.only_in_slow, true),
            only_in_normal: site(&c.only_in_normal, false),
            syscalls: c.syscalls.iter().map(syscall_doc).collect(),
            wait_histogram: buckets(&c.normal.waits, &c.slow.waits),
            wait_emd_buckets: c.wait_emd,
        };
        CompareView { doc, off_cpu }
    }

    /// Draw the differential off-CPU flame graph (inferno's two-count form): frames are
    /// sized by the slow run and coloured red where the slow run blocked longer, blue
    /// where shorter.
    pub fn write_diff_svg(&self, out: &mut dyn Write) -> Result<(), ReportError> {
        let diff = self.off_cpu.1.diff(&self.off_cpu.0);
        if diff.is_empty() {
            return Err(ReportError::Empty { view: self.name() });
        }
        let lines: Vec<String> = diff
            .iter()
            .map(|(k, (normal, slow))| format!("{k} {normal} {slow}"))
            .collect();
        let title = "Off-CPU time, slow run against normal run (red: more blocked in the slow run)";
        let mut opts = svg_options(FlameKind::OffCpu, title, true);
        inferno::flamegraph::from_lines(&mut opts, lines.iter().map(String::as_str), out)?;
        Ok(())
    }
}

fn syscall_doc(d: &causeway_compare::SyscallDiff) -> SyscallDoc {
    let (normal_calls, slow_calls) = d.calls();
    let (normal_ns, slow_ns) = d.time_ns();
    SyscallDoc {
        syscall: syscall_label(d.nr).into_owned(),
        normal_calls,
        slow_calls,
        normal_ns,
        slow_ns,
        call_sites: d
            .sites
            .iter()
            .map(|s| SiteRow {
                call_site: s.site.clone(),
                normal_calls: s.normal_calls,
                slow_calls: s.slow_calls,
                normal_ns: s.normal_ns,
                slow_ns: s.slow_ns,
            })
            .collect(),
        durations: buckets(&d.durations.0, &d.durations.1),
        durations_emd_buckets: (d.durations.0.count() > 0 && d.durations.1.count() > 0)
            .then(|| causeway_compare::emd(&d.durations.0, &d.durations.1)),
    }
}

/// Both histograms over the buckets either uses.
fn buckets(a: &Log2Histogram, b: &Log2Histogram) -> Vec<BucketDoc> {
    let n = a.buckets.len().max(b.buckets.len());
    (0..n)
        .map(|i| BucketDoc {
            from_ns: if i == 0 { 0 } else { 1u64 << i },
            to_ns: 1u64.checked_shl(i as u32 + 1).unwrap_or(u64::MAX),
            normal: a.buckets.get(i).copied().unwrap_or(0),
            slow: b.buckets.get(i).copied().unwrap_or(0),
        })
        .filter(|b| b.normal + b.slow > 0)
        .collect()
}

impl View for CompareView {
    fn name(&self) -> &'static str {
        "compare"
    }

    /// Something appears in only one run.
    fn found(&self) -> bool {
        !self.doc.only_in_slow.is_empty() || !self.doc.only_in_normal.is_empty()
    }

    fn write_text(&self, out: &mut dyn Write) -> Result<(), ReportError> {
        out.write_all(text::render(&self.doc).as_bytes())?;
        Ok(())
    }

    fn write_json(&self, out: &mut dyn Write) -> Result<(), ReportError> {
        write_json(self.name(), &self.doc, out)
    }
}
