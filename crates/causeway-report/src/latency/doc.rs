//! What the latency views show, laid out once: bins with their peak, peaks with their
//! bounds and shares, time-lapse slices. The text, HTML and JSON forms read these.

use causeway_latency::{Histogram, Peak, Slice, Unmeasured};
use serde::Serialize;

/// One profile to show, from a trace or from a live measurement.
#[derive(Clone, Copy, Debug)]
pub struct ProfileInput<'a> {
    /// What it measures, as people name it (`syscall futex`, `function do_op`).
    pub label: &'a str,
    /// The kind of operation (`syscall`, `blocked`, `runnable`, `function`).
    pub kind: &'static str,
    /// Every operation.
    pub hist: &'a Histogram,
    /// Its peaks.
    pub peaks: &'a [Peak],
    /// Time-lapse profiles, if any.
    pub slices: &'a [Slice],
}

/// One bin as shown.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct BinDoc {
    pub(crate) from_ns: u64,
    pub(crate) to_ns: u64,
    pub(crate) count: u64,
    /// The peak the bin belongs to.
    pub(crate) peak: Option<u32>,
}

/// One peak as shown.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct PeakDoc {
    pub(crate) number: u32,
    pub(crate) from_ns: u64,
    pub(crate) to_ns: u64,
    pub(crate) mode_from_ns: u64,
    pub(crate) mode_to_ns: u64,
    pub(crate) ops: u64,
    /// Share of the profile's operations, 0 to 1.
    pub(crate) share: f64,
}

/// One interval of a time-lapse.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct SliceDoc {
    pub(crate) offset_ns: u64,
    pub(crate) ops: u64,
    pub(crate) bins: Vec<BinDoc>,
    pub(crate) peaks: Vec<PeakDoc>,
}

/// One profile as shown.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct ProfileDoc {
    pub(crate) label: String,
    pub(crate) kind: &'static str,
    pub(crate) ops: u64,
    pub(crate) mean_ns: u64,
    pub(crate) min_ns: Option<u64>,
    pub(crate) max_ns: Option<u64>,
    pub(crate) bins: Vec<BinDoc>,
    pub(crate) peaks: Vec<PeakDoc>,
    pub(crate) slices: Vec<SliceDoc>,
}

/// The whole view, which is also the JSON document.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct LatencyDoc {
    pub(crate) bins_per_octave: u32,
    pub(crate) interval_ns: Option<u64>,
    pub(crate) profiles: Vec<ProfileDoc>,
    pub(crate) unmeasured: Option<Unmeasured>,
}

pub(crate) fn bins_of(h: &Histogram, peaks: &[Peak], span: Option<(u32, u32)>) -> Vec<BinDoc> {
    let Some((first, last)) = span.or_else(|| h.used_bins()) else {
        return Vec::new();
    };
    let r = h.resolution();
    (first..=last)
        .map(|b| BinDoc {
            from_ns: r.lower_ns(b),
            to_ns: r.upper_ns(b),
            count: h.count(b),
            peak: peaks
                .iter()
                .find(|p| p.first_bin <= b && b <= p.last_bin)
                .map(|p| p.number),
        })
        .collect()
}

pub(crate) fn peaks_of(h: &Histogram, peaks: &[Peak]) -> Vec<PeakDoc> {
    let r = h.resolution();
    peaks
        .iter()
        .map(|p| PeakDoc {
            number: p.number,
            from_ns: p.from_ns,
            to_ns: p.to_ns,
            mode_from_ns: r.lower_ns(p.mode_bin),
            mode_to_ns: r.upper_ns(p.mode_bin),
            ops: p.ops,
            share: p.ops as f64 / h.total().max(1) as f64,
        })
        .collect()
}

pub(crate) fn profile_doc(p: &ProfileInput<'_>) -> ProfileDoc {
    let slices = p
        .slices
        .iter()
        .map(|s| SliceDoc {
            offset_ns: s.offset_ns,
            ops: s.hist.total(),
            // Every slice on the whole profile's bins, so rows line up.
            bins: bins_of(&s.hist, &s.peaks, p.hist.used_bins()),
            peaks: peaks_of(&s.hist, &s.peaks),
        })
        .collect();
    ProfileDoc {
        label: p.label.to_string(),
        kind: p.kind,
        ops: p.hist.total(),
        mean_ns: p.hist.mean_ns(),
        min_ns: p.hist.min_ns(),
        max_ns: p.hist.max_ns(),
        bins: bins_of(p.hist, p.peaks, None),
        peaks: peaks_of(p.hist, p.peaks),
        slices,
    }
}
