//! Errors of the calls analysis.

/// Why the analysis could not run.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// A call-chain signature that cannot be parsed.
    #[error(
        "bad call-chain signature `{0}`: write function names separated by `>`, e.g. `main>loop>read`"
    )]
    BadPattern(String),
}
