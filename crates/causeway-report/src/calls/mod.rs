//! The report of the calls analysis ([`causeway_calls::CallsResult`]): the longest call
//! chains before the dump, the functions with the most self time, signature matches
//! and per-thread call trees, in text and JSON.
//!
//! Every time is integer nanoseconds named `_ns`; a point in time counts from the start
//! of the trace (its first call). The text shows seconds and milliseconds.

mod build;
mod doc;
mod sections;
mod text;

pub use sections::CallsSections;

use crate::error::ReportError;
use crate::view::{View, write_json};
use causeway_calls::CallsResult;
use causeway_format::Tables;
use std::io::Write;

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
