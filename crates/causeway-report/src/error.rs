//! Why a report could not be written.

use crate::format::Format;
use std::path::PathBuf;
use std::process::ExitStatus;

/// A report error: the output could not be written in the form asked.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReportError {
    /// Writing the output failed (a closed pipe, a full disk).
    #[error("writing the report")]
    Io(#[from] std::io::Error),
    /// The result could not be serialized.
    #[error("serializing the {view} result as json")]
    Json {
        /// The result's [`crate::View::name`].
        view: &'static str,
        /// What went wrong.
        #[source]
        source: serde_json::Error,
    },
    /// The result has no such form (a DOT graph of something that is not a graph).
    #[error("the {view} result has no {format} form")]
    Unsupported {
        /// The result's [`crate::View::name`].
        view: &'static str,
        /// The form asked for.
        format: Format,
    },
    /// There is nothing to draw (a flame graph without a stack).
    #[error("the {view} result is empty: nothing to draw")]
    Empty {
        /// The result's [`crate::View::name`].
        view: &'static str,
    },
    /// Graphviz's `dot` program is not installed.
    #[error("graphviz's `dot` is not installed (apt install graphviz)")]
    GraphvizMissing,
    /// Starting graphviz's `dot`, feeding it the graph or waiting for it failed.
    #[error("{action} graphviz dot")]
    Graphviz {
        /// What was being done (`running`, `writing the graph to`, `waiting for`).
        action: &'static str,
        /// What went wrong.
        #[source]
        source: std::io::Error,
    },
    /// Graphviz's `dot` ran and failed.
    #[error("graphviz dot failed ({status}) writing {}", path.display())]
    GraphvizFailed {
        /// Its exit status.
        status: ExitStatus,
        /// The file it was writing.
        path: PathBuf,
    },
}
