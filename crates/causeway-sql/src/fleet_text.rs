//! The fleet census as text (the JSON is the `Census` itself, serialized).

use crate::fleet::Census;

/// The census as text: the sites table, then the outliers.
pub fn render_text(c: &Census) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let _ = writeln!(s, "fleet: {} hosts, {} traces\n", c.hosts, c.traces);
    if c.sites.is_empty() {
        let _ = writeln!(
            s,
            "no knot or sink call sites (were the tables written with --no-analyses?)"
        );
    } else {
        let _ = writeln!(
            s,
            "call sites of knots and sinks, by the hosts that show them:"
        );
        let _ = writeln!(
            s,
            "  {:>6} {:>6} {:>10}  {:<4}  site (innermost frames first)",
            "hosts", "traces", "waiting", "kind"
        );
        for x in &c.sites {
            let frames: Vec<&str> = x.site.rsplit(';').take(4).collect();
            let _ = writeln!(
                s,
                "  {:>6} {:>6} {:>10}  {:<4}  {}",
                x.hosts,
                x.traces,
                crate::stdlib::duration_text(x.waiting_ns),
                x.kind,
                frames.join(" <- ")
            );
        }
    }
    let _ = writeln!(s);
    if c.outliers.is_empty() {
        let _ = writeln!(s, "no blocked-wait histograms to compare");
    } else {
        let _ = writeln!(
            s,
            "hosts whose blocked waits differ most from the fleet's (EMD, octaves):"
        );
        let _ = writeln!(
            s,
            "  {:<24} {:>6} {:>9} {:>10} {:>10}",
            "host", "emd", "waits", "mean", "fleet mean"
        );
        for o in &c.outliers {
            let _ = writeln!(
                s,
                "  {:<24} {:>6.2} {:>9} {:>10} {:>10}",
                o.host,
                o.emd_octaves,
                o.waits,
                crate::stdlib::duration_text(o.mean_ns as i64),
                crate::stdlib::duration_text(o.fleet_mean_ns as i64)
            );
        }
    }
    s
}
