//! Notes on how complete a trace is, printed at the top of every report next to its
//! lost-event counts: one place, so every report says the same thing.
//!
//! Today: whether the trace was salvaged from a damaged or interrupted file and what
//! it covers. Other notes on missing data (losses in the analysed window) belong here
//! too: [`crate::Caveats`] gathers these with the losses for the top of every report.

use causeway_format::Header;

/// Lines qualifying a report on a trace with this header; empty for a complete trace.
/// `salvaged: covers 2.90 of 3.00 s, statistics lost (...)`.
pub fn trace_notes(header: &Header) -> Vec<String> {
    let mut notes = Vec::new();
    if let Some(mark) = &header.salvaged {
        notes.push(mark.summary());
    }
    notes
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
}
