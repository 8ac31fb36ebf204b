//! Why a model could not be built.

use causeway_format::FormatError;

/// Why a model could not be built.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ModelError {
    /// The trace could not be read.
    #[error("reading trace events: {0}")]
    Format(#[from] FormatError),
}
