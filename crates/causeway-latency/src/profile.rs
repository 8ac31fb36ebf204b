//! Latency profiles of a trace: one histogram per kind of operation (each system call
//! by number, blocked waits, runnable waits, each method or span name), with its peaks
//! and, on request, one histogram per time interval (OSprof's time-lapse profiles).
//!
//! An operation is counted when it ends, in the interval it ends in. Waits are the
//! model's blocked and runnable segments whose two ends were observed: a wait cut by
//! the edge of the recording or a loss of events has no known length and is counted
//! apart (`partial_waits`), not put in a bin.

use crate::calls::SyscallSpans;
use crate::error::LatencyError;
use crate::hist::{Histogram, Resolution};
use crate::peaks::{Peak, PeakOptions, find_peaks};
use crate::select::Selection;
use causeway_format::{DurationNs, Marker, StringId, Tid, Timestamp};
use causeway_model::{SegmentState, Trace};
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The kinds of operation a profile can be about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// System calls, one profile per call number.
    Syscall,
    /// Blocked waits (off CPU, not runnable).
    Blocked,
    /// Runnable waits (ready, waiting for a CPU).
    Runnable,
    /// User functions from method and span markers, one profile per name.
    Function,
}

/// What one profile measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Subject {
    /// A system call, by x86-64 number.
    Syscall {
        /// The number.
        nr: u32,
    },
    /// Blocked waits of the selected threads.
    Blocked,
    /// Runnable waits of the selected threads.
    Runnable,
    /// A method (enter/exit markers), by name in the string table.
    Method {
        /// The name.
        name: StringId,
    },
    /// A named span (begin/end markers).
    Span {
        /// The name.
        name: StringId,
    },
}

impl Subject {
    /// The kind of operation.
    pub fn kind(&self) -> Kind {
        match self {
            Subject::Syscall { .. } => Kind::Syscall,
            Subject::Blocked => Kind::Blocked,
            Subject::Runnable => Kind::Runnable,
            Subject::Method { .. } | Subject::Span { .. } => Kind::Function,
        }
    }
}

/// What to profile and how.
#[derive(Clone, Debug, PartialEq)]
pub struct Options {
    /// Kinds to profile; empty for all.
    pub kinds: Vec<Kind>,
    /// Only these syscall numbers; empty for all.
    pub syscalls: Vec<u32>,
    /// Which threads.
    pub selection: Selection,
    /// Bins per octave.
    pub resolution: Resolution,
    /// Length of each time-lapse interval; `None` for one profile over the whole trace.
    pub interval: Option<DurationNs>,
    /// Peak detection.
    pub peaks: PeakOptions,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            kinds: Vec::new(),
            syscalls: Vec::new(),
            selection: Selection::default(),
            resolution: Resolution::LOG2,
            interval: None,
            peaks: PeakOptions::default(),
        }
    }
}

/// The profile of one interval of a time-lapse.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Slice {
    /// Start of the interval, nanoseconds after the trace's first event.
    pub offset_ns: u64,
    /// Operations that ended in it.
    pub hist: Histogram,
    /// Its peaks.
    pub peaks: Vec<Peak>,
}

/// The latency profile of one subject.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Profile {
    /// What it measures.
    pub subject: Subject,
    /// Every operation of the trace.
    pub hist: Histogram,
    /// Its peaks, numbered from the shortest latencies.
    pub peaks: Vec<Peak>,
    /// Time-lapse profiles, in time order, empty without an interval; intervals with no
    /// operation are left out.
    pub slices: Vec<Slice>,
}

/// What could not be measured, counted rather than dropped silently.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Unmeasured {
    /// Syscall exits whose entry was not recorded.
    pub syscall_exits_without_entry: u64,
    /// Syscall entries whose exit was not recorded.
    pub syscall_entries_without_exit: u64,
    /// Waits with an end not observed (trace edge, lost events).
    pub partial_waits: u64,
    /// Method exits or span ends without their start.
    pub unmatched_markers: u64,
}

/// Every profile of a trace.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Profiles {
    /// Bin layout of every histogram.
    pub resolution: Resolution,
    /// Time-lapse interval, if asked.
    pub interval_ns: Option<u64>,
    /// The profiles, by subject.
    pub profiles: Vec<Profile>,
    /// What could not be measured.
    pub unmeasured: Unmeasured,
}

/// Operations gathered per subject, before their histograms are cut into slices.
struct Gathered<'o> {
    opts: &'o Options,
    origin: Timestamp,
    per: BTreeMap<Subject, (Histogram, BTreeMap<u64, Histogram>)>,
}

impl Gathered<'_> {
    fn add(&mut self, subject: Subject, end: Timestamp, ns: u64) {
        let res = self.opts.resolution;
        let (all, slices) = self
            .per
            .entry(subject)
            .or_insert_with(|| (Histogram::new(res), BTreeMap::new()));
        all.record(ns);
        if let Some(iv) = self.opts.interval {
            let k = end.saturating_since(self.origin).0 / iv.0.max(1);
            slices
                .entry(k)
                .or_insert_with(|| Histogram::new(res))
                .record(ns);
        }
    }

    fn wants(&self, kind: Kind) -> bool {
        self.opts.kinds.is_empty() || self.opts.kinds.contains(&kind)
    }
}

/// Build the latency profiles of a trace. `syscalls` are the trace's paired system
/// calls ([`crate::SyscallCollector`] fed from the same read), or empty.
pub fn analyze(
    trace: &Trace,
    syscalls: &SyscallSpans,
    opts: &Options,
) -> Result<Profiles, LatencyError> {
    if opts.interval.is_some_and(|d| d.0 == 0) {
        return Err(LatencyError::ZeroInterval);
    }
    let origin = trace.model().span().map_or(Timestamp(0), |s| s.start);
    let mut g = Gathered {
        opts,
        origin,
        per: BTreeMap::new(),
    };
    let mut unmeasured = Unmeasured {
        syscall_exits_without_entry: syscalls.exits_without_entry,
        syscall_entries_without_exit: syscalls.entries_without_exit,
        ..Unmeasured::default()
    };
    if g.wants(Kind::Syscall) {
        gather_syscalls(trace, syscalls, &mut g);
    }
    if g.wants(Kind::Blocked) || g.wants(Kind::Runnable) {
        unmeasured.partial_waits = gather_waits(trace, &mut g);
    }
    if g.wants(Kind::Function) {
        unmeasured.unmatched_markers = gather_markers(trace, &mut g);
    }
    let profiles = g
        .per
        .into_iter()
        .map(|(subject, (hist, slices))| profile(subject, hist, slices, opts))
        .collect();
    Ok(Profiles {
        resolution: opts.resolution,
        interval_ns: opts.interval.map(|d| d.0),
        profiles,
        unmeasured,
    })
}

fn profile(
    subject: Subject,
    hist: Histogram,
    slices: BTreeMap<u64, Histogram>,
    opts: &Options,
) -> Profile {
    let iv = opts.interval.map_or(0, |d| d.0);
    let slices = slices
        .into_iter()
        .map(|(k, h)| Slice {
            offset_ns: k * iv,
            peaks: find_peaks(&h, &opts.peaks),
            hist: h,
        })
        .collect();
    Profile {
        subject,
        peaks: find_peaks(&hist, &opts.peaks),
        hist,
        slices,
    }
}

fn gather_syscalls(trace: &Trace, syscalls: &SyscallSpans, g: &mut Gathered<'_>) {
    let sel = &g.opts.selection;
    for s in &syscalls.spans {
        if !g.opts.syscalls.is_empty() && !g.opts.syscalls.contains(&s.nr) {
            continue;
        }
        if !sel.matches_at(trace, s.tid, s.start) {
            continue;
        }
        let ns = s.end.saturating_since(s.start).0;
        g.add(Subject::Syscall { nr: s.nr }, s.end, ns);
    }
}

/// Count blocked and runnable segments; returns how many had an unobserved end.
fn gather_waits(trace: &Trace, g: &mut Gathered<'_>) -> u64 {
    let mut partial = 0;
    let (blocked, runnable) = (g.wants(Kind::Blocked), g.wants(Kind::Runnable));
    for t in trace.model().threads() {
        if !g.opts.selection.matches_thread(trace, t) {
            continue;
        }
        for seg in &t.segments {
            let subject = match seg.state {
                SegmentState::Blocked { .. } if blocked => Subject::Blocked,
                SegmentState::Runnable { .. } if runnable => Subject::Runnable,
                _ => continue,
            };
            if !(seg.start_known && seg.end_known) {
                partial += 1;
                continue;
            }
            g.add(subject, seg.end, seg.duration().0);
        }
    }
    partial
}

/// Pair method enter/exit per thread (a stack, as calls nest) and span begin/end by
/// id; returns the ends without a start.
fn gather_markers(trace: &Trace, g: &mut Gathered<'_>) -> u64 {
    let mut stacks: FxHashMap<Tid, Vec<(StringId, Timestamp)>> = FxHashMap::default();
    let mut spans: FxHashMap<u64, (StringId, Tid, Timestamp)> = FxHashMap::default();
    let mut unmatched = 0;
    for r in trace.facts().markers() {
        match r.marker {
            Marker::MethodEnter { method } => stacks.entry(r.tid).or_default().push((method, r.ts)),
            Marker::MethodExit { method } => {
                let stack = stacks.entry(r.tid).or_default();
                // Frames above the matching one lost their exits (an exception, a
                // longjmp): they are dropped with it.
                match stack.iter().rposition(|(m, _)| *m == method) {
                    Some(i) => {
                        let start = stack[i].1;
                        stack.truncate(i);
                        if g.opts.selection.matches_at(trace, r.tid, start) {
                            let ns = r.ts.saturating_since(start).0;
                            g.add(Subject::Method { name: method }, r.ts, ns);
                        }
                    }
                    None => unmatched += 1,
                }
            }
            Marker::SpanBegin { name, id } => {
                spans.insert(id, (name, r.tid, r.ts));
            }
            Marker::SpanEnd { id, .. } => match spans.remove(&id) {
                Some((name, tid, start)) => {
                    if g.opts.selection.matches_at(trace, tid, start) {
                        g.add(Subject::Span { name }, r.ts, r.ts.saturating_since(start).0);
                    }
                }
                None => unmatched += 1,
            },
            _ => {}
        }
    }
    unmatched
}
