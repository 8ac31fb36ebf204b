//! Predicted gains (`causeway whatif`, `causeway bottleneck --what-if`): the rate of the
//! counted work before and after a change, with the vertices named as the bottleneck
//! report names them.

mod doc;
mod text;

use crate::error::ReportError;
use crate::view::{View, write_json};
use causeway_whatif::{Counted, EdgeGain, Prediction};
pub(crate) use doc::GainsDoc;
use std::io::Write;

/// One prediction made readable.
#[derive(Clone, Debug, PartialEq)]
pub struct WhatIfView {
    doc: doc::PredictionDoc,
}

impl WhatIfView {
    /// Word a prediction, naming vertices by `labels` (by vertex id: the bottleneck
    /// report's, [`crate::vertex_labels`]).
    pub fn new(labels: &[String], p: &Prediction) -> WhatIfView {
        WhatIfView {
            doc: doc::prediction(labels, p),
        }
    }

    /// The predicted change of the rate (0.25: 25 % more).
    pub fn gain(&self) -> f64 {
        self.doc.gain
    }
}

impl View for WhatIfView {
    fn name(&self) -> &'static str {
        "whatif"
    }

    fn found(&self) -> bool {
        true
    }

    fn write_text(&self, out: &mut dyn Write) -> Result<(), ReportError> {
        out.write_all(text::prediction(&self.doc).as_bytes())?;
        Ok(())
    }

    fn write_json(&self, out: &mut dyn Write) -> Result<(), ReportError> {
        write_json(self.name(), &self.doc, out)
    }
}

/// The gains of the findings' edges, worded (for the bottleneck view).
pub(crate) fn gains(labels: &[String], counted: &Counted, gains: &[EdgeGain]) -> GainsDoc {
    doc::gains(labels, counted, gains)
}

/// The gains section of the bottleneck text report.
pub(crate) fn gains_text(out: &mut String, g: &GainsDoc) {
    text::gains(out, g);
}
