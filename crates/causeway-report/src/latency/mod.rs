//! The views of latency profiles (`causeway latency`) and of their comparison
//! (`causeway latency diff`): subject names, BCC-style bar histograms with the peaks
//! marked, a time-lapse strip, JSON with integer nanoseconds, and a self-contained
//! HTML page of SVG plots on the log-log axes OSprof uses.
//!
//! The analysis (`causeway-latency`) gives histograms, peaks and changes; everything
//! worded or scaled for people is decided here.

mod build;
mod diff;
mod doc;
mod html;
mod rootpath;
mod text;

pub use build::{LatencyView, subject_label};
pub use diff::{DiffInput, LatencyDiffView};
pub use doc::ProfileInput;
pub use rootpath::{RootPathStatus, RootPathView, status_text as rootpath_status_text};

/// A duration for people: three significant digits and a unit (`8.19 us`, `1.05 ms`).
pub(crate) fn fmt_ns(ns: u64) -> String {
    let v = ns as f64;
    let (x, unit) = if v < 1e3 {
        (v, "ns")
    } else if v < 1e6 {
        (v / 1e3, "us")
    } else if v < 1e9 {
        (v / 1e6, "ms")
    } else {
        (v / 1e9, "s")
    };
    let s = if x >= 100.0 || unit == "ns" {
        format!("{x:.0}")
    } else if x >= 10.0 {
        format!("{x:.1}")
    } else {
        format!("{x:.2}")
    };
    format!("{s} {unit}")
}

#[cfg(test)]
mod tests {
    use super::fmt_ns;

    #[test]
    fn durations_have_three_digits() {
        assert_eq!(fmt_ns(0), "0 ns");
        assert_eq!(fmt_ns(512), "512 ns");
        assert_eq!(fmt_ns(8192), "8.19 us");
        assert_eq!(fmt_ns(16_384), "16.4 us");
        assert_eq!(fmt_ns(262_144), "262 us");
        assert_eq!(fmt_ns(1_048_576), "1.05 ms");
        assert_eq!(fmt_ns(3_000_000_000), "3.00 s");
    }
}
