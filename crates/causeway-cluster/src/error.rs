//! The errors of a cluster process or a cluster session.

/// What can go wrong starting a scheduler or an executor, or connecting to one.
#[derive(Debug, thiserror::Error)]
pub enum ClusterError {
    /// An address given on the command line is not `HOST:PORT`.
    #[error("{0}: not HOST:PORT")]
    Address(String),
    /// Ballista refused the configuration or stopped with an error (its message says why).
    #[error("{0}")]
    Ballista(#[from] ballista_core::error::BallistaError),
    /// DataFusion failed while building a session for the cluster.
    #[error("{0}")]
    DataFusion(#[from] datafusion::error::DataFusionError),
    /// The async runtime could not start.
    #[error("starting the runtime: {0}")]
    Runtime(std::io::Error),
}
