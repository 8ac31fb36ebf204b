//! The latency views: text and JSON say the same thing, peaks are marked where the
//! analysis put them, and the diff's sentences match its changes.

use causeway_latency::{Histogram, PeakOptions, Resolution, diff, find_peaks};
use causeway_report::{
    DiffInput, Format, LatencyDiffView, LatencyView, ProfileInput, View, render,
};
use serde_json::Value;

fn hist(start: u32, counts: &[u64]) -> Histogram {
    let mut h = Histogram::new(Resolution::LOG2);
    for (i, &n) in counts.iter().enumerate() {
        if n > 0 {
            h.add_bin(start + i as u32, n);
        }
    }
    h
}

fn out(view: &dyn View, f: Format) -> String {
    let mut v = Vec::new();
    render(view, f, &mut v).unwrap();
    String::from_utf8(v).unwrap()
}

#[test]
fn text_and_json_agree_on_bins_and_peaks() {
    let h = hist(13, &[40, 5000, 3000, 20, 0, 0, 150, 500, 90, 6]);
    let peaks = find_peaks(&h, &PeakOptions::default());
    let input = ProfileInput {
        label: "function do_operation",
        kind: "function",
        hist: &h,
        peaks: &peaks,
        slices: &[],
    };
    let view = LatencyView::from_inputs(&[input], None);
    assert!(view.found());
    let text = out(&view, Format::Text);
    let json: Value = serde_json::from_str(&out(&view, Format::Json)).unwrap();
    let p = &json["profiles"][0];
    assert_eq!(p["ops"].as_u64(), Some(h.total()));
    assert_eq!(p["peaks"].as_array().unwrap().len(), 2);
    assert_eq!(p["peaks"][1]["mode_from_ns"].as_u64(), Some(1 << 20));
    // One text line per bin, and each peak's mode line carries its mark.
    let bins = p["bins"].as_array().unwrap();
    assert_eq!(bins.len(), 10);
    for b in bins {
        let count = b["count"].as_u64().unwrap().to_string();
        assert!(
            text.lines().any(|l| l.contains('|') && l.contains(&count)),
            "{count}"
        );
    }
    let marked: Vec<&str> = text.lines().filter(|l| l.contains("<- peak")).collect();
    assert_eq!(marked.len(), 2, "{text}");
    assert!(marked[0].contains("5000") && marked[0].ends_with("peak 1"));
    assert!(marked[1].contains("500 |") && marked[1].ends_with("peak 2"));
    assert!(
        text.contains("peak 2: 524 us to 8.39 ms, 746 calls"),
        "{text}"
    );
    let mut html = Vec::new();
    view.write_html(&mut html).unwrap();
    let html = String::from_utf8(html).unwrap();
    assert!(html.contains("<svg") && html.contains("peak 2"));
}

#[test]
fn diff_says_which_peak_vanished() {
    let a = hist(13, &[40, 5000, 3000, 20, 0, 0, 150, 500, 90, 6]);
    let b = hist(13, &[40, 5600, 3100, 20]);
    let d = diff(&a, &b, &PeakOptions::default()).unwrap();
    let view = LatencyDiffView::new(&[DiffInput {
        label: "blocked waits",
        diff: &d,
    }]);
    assert!(view.found());
    let text = out(&view, Format::Text);
    assert!(
        text.contains("peak 2 vanished: 524 us to 8.39 ms, 746 operations"),
        "{text}"
    );
    assert!(text.contains("peak 1 stayed at"), "{text}");
    let json: Value = serde_json::from_str(&out(&view, Format::Json)).unwrap();
    let changes = json["subjects"][0]["changes"].as_array().unwrap();
    assert_eq!(changes[1]["change"], "vanished");
    assert_eq!(changes[1]["before"]["from_ns"].as_u64(), Some(1 << 19));
    let same = diff(&a, &a, &PeakOptions::default()).unwrap();
    let none = LatencyDiffView::new(&[DiffInput {
        label: "blocked waits",
        diff: &same,
    }]);
    assert!(!none.found());
}
