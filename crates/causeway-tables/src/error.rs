//! The errors of writing tables.

use std::path::{Path, PathBuf};

/// What can go wrong writing a trace's tables.
#[derive(Debug, thiserror::Error)]
pub enum TablesError {
    /// A file or directory could not be written.
    #[error("{path}: {source}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// Arrow refused a batch (a bug: the schema and the builders disagree).
    #[error("building a record batch: {0}")]
    Arrow(arrow_schema::ArrowError),
    /// Parquet could not encode or write a file.
    #[error("writing Parquet: {0}")]
    Parquet(parquet::errors::ParquetError),
    /// The encoder thread stopped without saying why.
    #[error("the Parquet encoder thread stopped")]
    Encoder,
}

impl TablesError {
    pub(crate) fn io(path: &Path, source: std::io::Error) -> TablesError {
        TablesError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}
