//! Errors of trigger conditions.

/// A trigger condition that cannot be read.
#[derive(Clone, Debug, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum TriggerError {
    /// A part names neither a wait nor `comm=`.
    #[error("cannot read `{part}` in trigger `{input}` (expected like `blocked>200ms comm=NAME`)")]
    Part {
        /// The part not understood.
        part: String,
        /// The whole condition.
        input: String,
    },
    /// It measures something other than `blocked` or `runnable`.
    #[error("unknown measure `{0}` (blocked, runnable)")]
    Measure(String),
    /// No wait to measure.
    #[error("trigger `{0}` has no `blocked>T` or `runnable>T`")]
    Wait(String),
    /// The threshold is not a duration.
    #[error(transparent)]
    Duration(#[from] causeway_format::UnitError),
}
