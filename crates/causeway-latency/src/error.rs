//! Errors of the latency analysis.

/// What went wrong building or comparing latency profiles.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum LatencyError {
    /// A bins-per-octave value that is not 1, 2, 4, 8 or 16.
    #[error("{0} bins per octave: use 1, 2, 4, 8 or 16")]
    Resolution(u8),
    /// Two histograms with different bin layouts were combined.
    #[error("the histograms have different bin layouts")]
    Mismatch,
    /// An interval of zero length for time-lapse profiles.
    #[error("the time-lapse interval must be longer than zero")]
    ZeroInterval,
    /// No completed call of the function is recorded in the trace.
    #[error("the trace records no completed call of {0}")]
    NoCalls(String),
    /// The chosen peak does not exist.
    #[error("{function} has {peaks} peak(s); peak {peak} does not exist")]
    NoSuchPeak {
        /// The function.
        function: String,
        /// The peak asked for.
        peak: u32,
        /// How many there are.
        peaks: usize,
    },
}
