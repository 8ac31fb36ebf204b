//! The errors of a SQL session.

use std::path::PathBuf;

/// What can go wrong opening tables or running a query.
#[derive(Debug, thiserror::Error)]
pub enum SqlError {
    /// An input directory cannot be read.
    #[error("{path}: {source}")]
    Input {
        /// The directory.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// DataFusion refused or failed the query (its message says why: a syntax error,
    /// an unknown column, a bad file).
    #[error("{0}")]
    Query(datafusion::error::DataFusionError),
    /// Results could not be printed.
    #[error("printing results: {0}")]
    Render(arrow::error::ArrowError),
    /// The query runtime could not start.
    #[error("starting the query runtime: {0}")]
    Runtime(std::io::Error),
}
