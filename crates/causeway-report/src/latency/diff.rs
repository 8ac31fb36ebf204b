//! The view of `causeway latency diff`: per subject, the distance between the two
//! profiles and a sentence per peak that appeared, vanished, moved or stayed.

use super::doc::{BinDoc, PeakDoc, bins_of, peaks_of};
use super::fmt_ns;
use super::text::{bar, range};
use crate::error::ReportError;
use crate::view::{View, write_json};
use causeway_latency::{Histogram, Peak, PeakChange, ProfileDiff};
use serde::Serialize;
use std::fmt::Write as _;
use std::io::Write;

/// One subject's comparison.
#[derive(Clone, Copy, Debug)]
pub struct DiffInput<'a> {
    /// What both profiles measure (`syscall futex`).
    pub label: &'a str,
    /// The comparison.
    pub diff: &'a ProfileDiff,
}

#[derive(Clone, Debug, Serialize)]
struct SideDoc {
    ops: u64,
    mean_ns: u64,
    peaks: Vec<PeakDoc>,
}

#[derive(Clone, Debug, Serialize)]
struct ChangeDoc {
    change: &'static str,
    before: Option<PeakDoc>,
    after: Option<PeakDoc>,
    sentence: String,
}

#[derive(Clone, Debug, Serialize)]
struct SubjectDoc {
    label: String,
    emd_octaves: f64,
    peaks_changed: bool,
    before: SideDoc,
    after: SideDoc,
    changes: Vec<ChangeDoc>,
    /// Both profiles on the same bins: `(from_ns, to_ns, before, after)` as objects.
    bins: Vec<PairBin>,
}

#[derive(Clone, Debug, Serialize)]
struct PairBin {
    from_ns: u64,
    to_ns: u64,
    before: u64,
    after: u64,
}

/// Comparisons of two traces' profiles, ready to render.
#[derive(Clone, Debug)]
pub struct LatencyDiffView {
    subjects: Vec<SubjectDoc>,
}

fn one(h: &Histogram, p: &[Peak], k: &Peak) -> PeakDoc {
    let docs = peaks_of(h, p);
    docs.into_iter()
        .find(|d| d.number == k.number)
        .unwrap_or(PeakDoc {
            number: k.number,
            from_ns: k.from_ns,
            to_ns: k.to_ns,
            mode_from_ns: h.resolution().lower_ns(k.mode_bin),
            mode_to_ns: h.resolution().upper_ns(k.mode_bin),
            ops: k.ops,
            share: 0.0,
        })
}

fn change_doc(d: &ProfileDiff, c: &PeakChange) -> ChangeDoc {
    let b = |k: &Peak| one(&d.before, &d.before_peaks, k);
    let a = |k: &Peak| one(&d.after, &d.after_peaks, k);
    let span = |p: &PeakDoc| format!("{} to {}", fmt_ns(p.from_ns), fmt_ns(p.to_ns));
    let share = |p: &PeakDoc| format!("{:.1} %", p.share * 100.0);
    match c {
        PeakChange::Kept { before, after } => {
            let (x, y) = (b(before), a(after));
            let sentence = format!(
                "peak {} stayed at {} ({} of operations before, {} after)",
                x.number,
                span(&x),
                share(&x),
                share(&y)
            );
            ChangeDoc {
                change: "kept",
                before: Some(x),
                after: Some(y),
                sentence,
            }
        }
        PeakChange::Moved { before, after } => {
            let (x, y) = (b(before), a(after));
            let sentence = format!(
                "peak {} moved: mode [{}, {}) became [{}, {}) (peak {} after; {} -> {} of operations)",
                x.number,
                fmt_ns(x.mode_from_ns),
                fmt_ns(x.mode_to_ns),
                fmt_ns(y.mode_from_ns),
                fmt_ns(y.mode_to_ns),
                y.number,
                share(&x),
                share(&y)
            );
            ChangeDoc {
                change: "moved",
                before: Some(x),
                after: Some(y),
                sentence,
            }
        }
        PeakChange::Vanished { before } => {
            let x = b(before);
            let sentence = format!(
                "peak {} vanished: {}, {} operations ({}) before, none after",
                x.number,
                span(&x),
                x.ops,
                share(&x)
            );
            ChangeDoc {
                change: "vanished",
                before: Some(x),
                after: None,
                sentence,
            }
        }
        PeakChange::Appeared { after } => {
            let y = a(after);
            let sentence = format!(
                "new peak {} appeared: {}, {} operations ({})",
                y.number,
                span(&y),
                y.ops,
                share(&y)
            );
            ChangeDoc {
                change: "appeared",
                before: None,
                after: Some(y),
                sentence,
            }
        }
    }
}

fn side(h: &Histogram, peaks: &[Peak]) -> SideDoc {
    SideDoc {
        ops: h.total(),
        mean_ns: h.mean_ns(),
        peaks: peaks_of(h, peaks),
    }
}

fn pair_bins(d: &ProfileDiff) -> Vec<PairBin> {
    let span = match (d.before.used_bins(), d.after.used_bins()) {
        (Some((a0, a1)), Some((b0, b1))) => Some((a0.min(b0), a1.max(b1))),
        (x, y) => x.or(y),
    };
    let before: Vec<BinDoc> = bins_of(&d.before, &[], span);
    let after: Vec<BinDoc> = bins_of(&d.after, &[], span);
    before
        .iter()
        .zip(&after)
        .map(|(x, y)| PairBin {
            from_ns: x.from_ns,
            to_ns: x.to_ns,
            before: x.count,
            after: y.count,
        })
        .collect()
}

impl LatencyDiffView {
    /// The view of each subject's comparison.
    pub fn new(inputs: &[DiffInput<'_>]) -> LatencyDiffView {
        let subjects = inputs
            .iter()
            .map(|i| SubjectDoc {
                label: i.label.to_string(),
                emd_octaves: i.diff.emd_octaves,
                peaks_changed: i.diff.peaks_changed(),
                before: side(&i.diff.before, &i.diff.before_peaks),
                after: side(&i.diff.after, &i.diff.after_peaks),
                changes: i
                    .diff
                    .changes
                    .iter()
                    .map(|c| change_doc(i.diff, c))
                    .collect(),
                bins: pair_bins(i.diff),
            })
            .collect();
        LatencyDiffView { subjects }
    }
}

fn subject_text(s: &mut String, d: &SubjectDoc) {
    let _ = writeln!(
        s,
        "{}: EMD {:.2} octaves; before {} operations (mean {}), after {} (mean {})",
        d.label,
        d.emd_octaves,
        d.before.ops,
        fmt_ns(d.before.mean_ns),
        d.after.ops,
        fmt_ns(d.after.mean_ns)
    );
    for c in &d.changes {
        let _ = writeln!(s, "  {}", c.sentence);
    }
    let max_b = d.bins.iter().map(|b| b.before).max().unwrap_or(0);
    let max_a = d.bins.iter().map(|b| b.after).max().unwrap_or(0);
    let _ = writeln!(
        s,
        "  {:<20} {:>8} {:<22} {:>8}",
        "latency", "before", "", "after"
    );
    for b in &d.bins {
        let bin = BinDoc {
            from_ns: b.from_ns,
            to_ns: b.to_ns,
            count: 0,
            peak: None,
        };
        let _ = writeln!(
            s,
            "  {} {:>8} |{}| {:>8} |{}|",
            range(&bin),
            b.before,
            bar(b.before, max_b, 20),
            b.after,
            bar(b.after, max_a, 20)
        );
    }
}

impl View for LatencyDiffView {
    fn name(&self) -> &'static str {
        "latency diff"
    }

    /// Found: some peak appeared, vanished or moved.
    fn found(&self) -> bool {
        self.subjects.iter().any(|s| s.peaks_changed)
    }

    fn write_text(&self, out: &mut dyn Write) -> Result<(), ReportError> {
        let mut s = String::new();
        if self.subjects.is_empty() {
            s.push_str(
                "nothing to compare: neither trace holds an operation of the kinds asked for\n",
            );
        }
        for (i, d) in self.subjects.iter().enumerate() {
            if i > 0 {
                s.push('\n');
            }
            subject_text(&mut s, d);
        }
        out.write_all(s.as_bytes())?;
        Ok(())
    }

    fn write_json(&self, out: &mut dyn Write) -> Result<(), ReportError> {
        write_json(
            self.name(),
            &serde_json::json!({ "subjects": self.subjects }),
            out,
        )
    }
}
