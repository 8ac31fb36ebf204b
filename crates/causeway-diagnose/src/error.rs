//! Why a diagnosis could not start.

/// Errors of [`crate::run`].
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum DiagnoseError {
    /// No thread matches the selector.
    #[error("no thread {0} in the trace")]
    NoSuchThread(String),
    /// The selected thread has no vertex at that time.
    #[error("thread {thread} has no recorded activity at {at_ns} ns")]
    NothingAt {
        /// The selector, as text.
        thread: String,
        /// The time asked for, on the trace clock.
        at_ns: u64,
    },
    /// Nothing to diagnose: no complete segment in the recorded processes.
    #[error("the trace holds no complete wait or run of a recorded thread to diagnose")]
    NoStall,
}
