//! The output forms a [`crate::View`] can be written in. It depends on nothing else in
//! the crate, so the error type can name a form without a cycle through the views.

use std::fmt;

/// Nanoseconds as seconds, for text. Documents keep integer nanoseconds (every JSON
/// form names its times `_ns`); only sentences and tables show seconds.
pub(crate) fn secs(ns: u64) -> f64 {
    ns as f64 / 1e9
}

/// Nanoseconds as milliseconds, for text.
pub(crate) fn millis(ns: u64) -> f64 {
    ns as f64 / 1e6
}

/// An output form.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    /// Human-readable text.
    Text,
    /// One pretty-printed JSON document.
    Json,
    /// A graphviz DOT graph (results that are graphs).
    Dot,
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Format::Text => "text",
            Format::Json => "json",
            Format::Dot => "dot",
        })
    }
}
