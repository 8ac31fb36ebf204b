//! Why an import failed: [`ImportError`].

use crate::options::SCRIPT_FIELDS;
use causeway_format::FormatError;
use std::io;
use std::path::PathBuf;

/// Why an import failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ImportError {
    /// The perf binary could not be started.
    #[error(
        "perf not found (tried `{}`): install it (Debian: `apt install linux-perf`, Ubuntu: `apt install linux-tools-generic`, Fedora: `dnf install perf`) or pass its path",
        perf.display()
    )]
    PerfNotFound {
        /// The binary tried.
        perf: PathBuf,
    },
    /// perf ran but failed.
    #[error("`{command}` failed ({status}): {stderr}")]
    PerfFailed {
        /// The command line run.
        command: String,
        /// Its exit status.
        status: String,
        /// What it printed on stderr.
        stderr: String,
    },
    /// Reading the input or starting perf failed.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// The error.
        source: io::Error,
    },
    /// Writing the trace failed.
    #[error("writing the trace: {0}")]
    Format(#[from] FormatError),
    /// Nothing in the input looked like `perf script` output.
    #[error(
        "no perf events found in {lines} lines ({malformed} malformed{}); expected `perf script --ns -F {SCRIPT_FIELDS}` output",
        if example.is_empty() { String::new() } else { format!(", first: {example:?}") }
    )]
    NoEvents {
        /// Lines read.
        lines: u64,
        /// Lines that did not parse.
        malformed: u64,
        /// The first malformed line.
        example: String,
    },
}
