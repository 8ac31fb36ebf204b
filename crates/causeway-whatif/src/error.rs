//! Errors of a prediction.

use thiserror::Error;

/// Why no prediction could be made.
#[derive(Debug, Error)]
pub enum WhatIfError {
    /// The factor is not a number above 1 (or infinity).
    #[error("the factor must be a number of at least 1 (or inf to remove the waits), not {0}")]
    Factor(String),
    /// The change names a vertex or an edge the findings do not have.
    #[error("no such {what} in the wait-for graph: {id}")]
    NoSuch {
        /// `vertex` or `edge`.
        what: &'static str,
        /// The id given.
        id: usize,
    },
    /// No wait of the trace blocked under the function a change names.
    #[error(
        "no wait in this recording blocked under a function named `{function}`{}",
        if nearest.is_empty() { " (its user stacks name none)".to_string() } else { format!("; the nearest names waits blocked under: {}", nearest.join(", ")) }
    )]
    NoSite {
        /// The name given.
        function: String,
        /// Functions that waits did block under, the most like the name first.
        nearest: Vec<String>,
    },
    /// The trace has no repeated work to count in its middle 80 %.
    #[error(
        "nothing to count: the throughput-bearing threads woke fewer than {min} times in the middle of the recording"
    )]
    NothingToCount {
        /// Fewest wake-ups a rate is computed from.
        min: u64,
    },
}
