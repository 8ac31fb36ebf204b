//! Formatting of durations for tables. (Reading them is `causeway_format::units`.)

/// Seconds with millisecond precision, for tables.
pub fn secs(ns: u64) -> String {
    format!("{:.3}s", ns as f64 / 1e9)
}
