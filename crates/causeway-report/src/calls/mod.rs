//! The report of the calls analysis ([`causeway_calls::CallsResult`]): the longest call
//! chains before the dump, the functions with the most self time, signature matches
//! and per-thread call trees, in text and JSON.
//!
//! Every `_ms` field is nanoseconds / 1e6; every `_s` time is seconds from the start of
//! the trace (its first call).

mod build;
mod doc;
mod text;

use crate::error::ReportError;
use crate::view::{View, write_json};
use causeway_calls::CallsResult;
use causeway_format::{DurationNs, Tables};
use std::io::Write;

/// Which parts of the result to show.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CallsSections {
    /// The chains list.
    pub chains: bool,
    /// The top functions list.
    pub top: bool,
    /// Per-thread call trees, without calls shorter than this.
    pub tree: Option<DurationNs>,
    /// The signature, as the user wrote it, if one was searched.
    pub signature: Option<String>,
}

impl Default for CallsSections {
    fn default() -> CallsSections {
        CallsSections {
            chains: true,
            top: true,
            tree: None,
            signature: None,
        }
    }
}

/// The calls result made readable.
#[derive(Clone, Debug, PartialEq)]
pub struct CallsView {
    doc: doc::CallsDoc,
}

impl CallsView {
    /// Name and word the result; `tables` gives function and thread names.
    pub fn new(result: &CallsResult, tables: &Tables, sections: &CallsSections) -> CallsView {
        CallsView {
            doc: build::doc(result, tables, sections),
        }
    }
}

impl View for CallsView {
    fn name(&self) -> &'static str {
        "calls"
    }

    fn found(&self) -> bool {
        match &self.doc.matches {
            Some(m) => !m.instances.is_empty(),
            None => self.doc.calls > 0,
        }
    }

    fn write_text(&self, out: &mut dyn Write) -> Result<(), ReportError> {
        text::write(&self.doc, out)?;
        Ok(())
    }

    fn write_json(&self, out: &mut dyn Write) -> Result<(), ReportError> {
        write_json(self.name(), &self.doc, out)
    }
}
