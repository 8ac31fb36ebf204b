//! The report of `causeway info`: what a trace holds and where its threads spent their
//! time. [`InfoReport::new`] computes it from what the trace reader counted
//! ([`TraceFacts`]) and the model; the JSON form is the report serialized as is.

mod build;
mod cgroups;
mod frames;
mod report;
mod text;

pub use build::{Selection, TraceFacts};
pub use cgroups::{CgroupSummary, MemorySummary, QuotaSummary};
pub use frames::FrameNames;
pub use report::{InfoReport, ThreadRow};

use crate::error::ReportError;
use crate::view::{View, write_json};
use std::io::Write;

impl View for InfoReport {
    fn name(&self) -> &'static str {
        "info"
    }

    /// The trace holds events.
    fn found(&self) -> bool {
        self.events > 0
    }

    fn write_text(&self, out: &mut dyn Write) -> Result<(), ReportError> {
        out.write_all(text::render(self).as_bytes())?;
        Ok(())
    }

    fn write_json(&self, out: &mut dyn Write) -> Result<(), ReportError> {
        write_json(self.name(), self, out)
    }
}
