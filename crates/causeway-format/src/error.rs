//! Errors of the trace format.

use std::io;

/// Everything that can go wrong reading or writing a trace.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FormatError {
    /// The operating system failed a read or write.
    #[error("i/o error: {0}")]
    Io(#[from] io::Error),
    /// The file does not start with the trace magic.
    #[error("not a causeway trace: the file does not start with the CAUSEWAY magic")]
    NotATrace,
    /// The file's major version is not one this reader understands.
    #[error("unsupported trace version {major}.{minor} (this reader supports {supported}.x)")]
    UnsupportedVersion {
        /// Major version in the file.
        major: u16,
        /// Minor version in the file.
        minor: u16,
        /// Major version supported.
        supported: u16,
    },
    /// The file ends in the middle of something.
    #[error(
        "truncated trace at byte offset {offset} while reading {what}: need {need} bytes, {have} left"
    )]
    Truncated {
        /// Where the missing part starts.
        offset: u64,
        /// What was being read.
        what: &'static str,
        /// Bytes needed.
        need: u64,
        /// Bytes available.
        have: u64,
    },
    /// The bytes are there but wrong.
    #[error("corrupt {what} at byte offset {offset}{}: {detail}", chunk.map(|c| format!(" (block {c})")).unwrap_or_default())]
    Corrupt {
        /// Byte offset of the damaged structure in the file.
        offset: u64,
        /// Index of the damaged block, when inside one.
        chunk: Option<usize>,
        /// What was being read.
        what: &'static str,
        /// What is wrong.
        detail: String,
    },
    /// The file has no valid footer (the writer did not finish).
    #[error(
        "no valid footer: the trace ends at byte {file_len} without its index ({detail}); the recording was probably interrupted; a salvage (`causeway check`) recovers the intact chunks"
    )]
    MissingFooter {
        /// File length.
        file_len: u64,
        /// Why the footer was rejected.
        detail: String,
    },
    /// A caller passed something the format cannot store.
    #[error("invalid input: {0}")]
    Invalid(String),
}

/// Result with [`FormatError`].
pub type Result<T, E = FormatError> = std::result::Result<T, E>;
