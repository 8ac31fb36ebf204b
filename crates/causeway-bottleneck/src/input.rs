//! What one analysis run reads, taken apart once from the [`Trace`].

use causeway_format::Tables;
use causeway_model::{Facts, Model, Trace};

/// The parts of a [`Trace`] the analysis reads.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Input<'a> {
    /// The model of the trace.
    pub(crate) model: &'a Model,
    /// The trace's tables (names, stacks, frames).
    pub(crate) tables: &'a Tables,
    /// What the model's timelines do not hold.
    pub(crate) facts: &'a Facts,
}

impl<'a> Input<'a> {
    /// The parts of `trace`.
    pub(crate) fn new(trace: &'a Trace) -> Input<'a> {
        Input {
            model: trace.model(),
            tables: trace.tables(),
            facts: trace.facts(),
        }
    }
}
