//! Why stacks could not be folded.

/// A folding error.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StacksError {
    /// On-CPU flame graphs need the sample stacks, which come from the events.
    #[error("the on-cpu flame graph needs the trace's sample stacks (none were given)")]
    NoSamples,
}
