//! Notes on how complete a trace is, printed at the top of every report next to its
//! lost-event counts: one place, so every report says the same thing.
//!
//! Today: whether the trace was salvaged from a damaged or interrupted file and what
//! it covers, and whether waker stacks of short waits were sampled. Other notes on missing data (losses in the analysed window) belong here
//! too: [`crate::Caveats`] gathers these with the losses for the top of every report.

use causeway_format::{Header, WakerStackSampling};

/// Lines qualifying a report on a trace with this header; empty for a complete trace.
/// `salvaged: covers 2.90 of 3.00 s, statistics lost (...)`.
pub fn trace_notes(header: &Header) -> Vec<String> {
    let mut notes = Vec::new();
    if let Some(mark) = &header.salvaged {
        notes.push(mark.summary());
    }
    notes
}

/// How the trace was recorded where that shapes what reports show: today, whether
/// waker stacks of short waits were sampled (`causeway info` states it; reports of
/// waker stacks state it beside them). Not a caveat: nothing is missing, the weights
/// stand in for the stacks left out.
pub fn recording_notes(header: &Header) -> Vec<String> {
    header
        .waker_stack_sampling
        .iter()
        .map(sampling_note)
        .collect()
}

/// `100 µs`, `1.5 ms`: a threshold as a user typed it.
pub(crate) fn short_duration(ns: u64) -> String {
    let (v, unit) = match ns {
        n if n >= 1_000_000_000 => (n as f64 / 1e9, "s"),
        n if n >= 1_000_000 => (n as f64 / 1e6, "ms"),
        n if n >= 1_000 => (n as f64 / 1e3, "µs"),
        n => (n as f64, "ns"),
    };
    format!("{} {unit}", (v * 1000.0).round() / 1000.0)
}

/// `waker stacks of waits under 100 µs were sampled 1 in 16 ...`.
fn sampling_note(s: &WakerStackSampling) -> String {
    format!(
        "waker stacks of waits under {} were sampled 1 in {} (at random); waker-stack weights count each sample {} times, and a single short wait may show no waker stack",
        short_duration(s.min_wait_ns),
        s.one_in,
        s.one_in
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use causeway_format::SalvageMark;

    #[test]
    fn a_salvaged_trace_says_what_it_covers() {
        let mut h = Header::synthetic(1);
        assert!(trace_notes(&h).is_empty());
        h.salvaged = Some(SalvageMark {
            covered_ns: 700_000_000,
            original_ns: Some(3_000_000_000),
            span_ns: 700_000_000,
            stats_lost: true,
            damaged_bytes: 10,
        });
        let n = trace_notes(&h);
        assert_eq!(n.len(), 1);
        assert!(
            n[0].starts_with("salvaged: covers 0.70 of 3.00 s, statistics lost"),
            "{}",
            n[0]
        );
        h.salvaged = Some(SalvageMark {
            original_ns: None,
            stats_lost: false,
            ..h.salvaged.unwrap()
        });
        let n = trace_notes(&h);
        assert!(
            n[0].contains("full length is unknown") && n[0].contains("statistics kept"),
            "{}",
            n[0]
        );
    }

    #[test]
    fn sampled_waker_stacks_are_stated() {
        let mut h = Header::synthetic(1);
        h.waker_stack_sampling = Some(WakerStackSampling {
            min_wait_ns: 100_000,
            one_in: 16,
        });
        assert!(trace_notes(&h).is_empty());
        let n = recording_notes(&h);
        assert_eq!(n.len(), 1);
        assert!(
            n[0].starts_with("waker stacks of waits under 100 µs") && n[0].contains("1 in 16"),
            "{}",
            n[0]
        );
    }
}
