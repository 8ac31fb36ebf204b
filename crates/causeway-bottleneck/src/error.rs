//! Why an analysis could not run.

/// An analysis error: the input cannot be analyzed as asked.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BottleneckError {
    /// The trace holds no scheduler activity to analyze.
    #[error(
        "no threads of the recorded processes in the trace (no scheduler events of them): nothing to analyze"
    )]
    Empty,
    /// An option is out of range.
    #[error("invalid option {name}: {reason}")]
    InvalidOption {
        /// The option.
        name: &'static str,
        /// What is wrong.
        reason: String,
    },
}
