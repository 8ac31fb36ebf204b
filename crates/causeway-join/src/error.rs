//! What can go wrong joining traces.

use thiserror::Error;

/// An error joining several hosts' traces.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum JoinError {
    /// No trace was given.
    #[error("no traces to join")]
    NoTraces,
    /// More traces than the joined id ranges hold.
    #[error("{0} traces: a join holds at most {max}", max = crate::ids::MAX_HOSTS)]
    TooManyHosts(usize),
    /// A trace could not be read.
    #[error(transparent)]
    Format(#[from] causeway_format::FormatError),
}
