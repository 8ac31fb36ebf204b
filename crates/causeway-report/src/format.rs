//! The output forms a [`crate::View`] can be written in. It depends on nothing else in
//! the crate, so the error type can name a form without a cycle through the views.

use std::fmt;

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
