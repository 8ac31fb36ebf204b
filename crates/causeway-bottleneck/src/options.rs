//! Tuning knobs of the analysis, with the defaults the CLI uses.

/// How the analysis runs. `Options::default()` is what `causeway bottleneck` does
/// without flags.
#[derive(Clone, Debug, PartialEq)]
pub struct Options {
    /// Knot refinement stops removing edges heavier than this, as a fraction of the
    /// recording (wPerf's termination threshold). Default 0.2.
    pub threshold_fraction: f64,
    /// Edges lighter than this fraction of the recording are reported but not used to
    /// find knots and sinks: a knot is a cycle with no way out, and a few milliseconds
    /// of waiting on something outside it (a launcher, a rare wake-up the other way)
    /// would otherwise hide it. Default 0.01.
    pub min_edge_fraction: f64,
    /// Edges leaving a strongly connected component are trimmed before knots are
    /// identified when each is no heavier than the refinement threshold and together
    /// they weigh at most this fraction of the weight inside the component (small
    /// leaks: a worker's rare timer sleep must not turn a loop into a non-knot).
    /// Default 0.05.
    pub leak_fraction: f64,
    /// Merge similar threads and short-term threads into virtual threads. Default on.
    pub merge: bool,
    /// Two same-named threads merge when their wait-stack distributions overlap at
    /// least this much (histogram intersection, 0..=1). Default 0.5.
    pub similarity: f64,
    /// A thread created and exited during the recording that lived less than this
    /// fraction of it is short-term. Default 0.5.
    pub short_term_fraction: f64,
    /// Capacity of every network device, bytes per second; overrides link speeds in
    /// the trace. Default: the trace's link speed, else 10 Gbit/s.
    pub nic_capacity: Option<f64>,
    /// Sequential bandwidth of every disk, bytes per second. Default: estimated from
    /// the recorded requests.
    pub disk_bandwidth: Option<f64>,
    /// Random-I/O rate of every disk, requests per second. Default: estimated from the
    /// recorded requests.
    pub disk_iops: Option<f64>,
    /// Stacks shown per edge and side. Default 3.
    pub top_stacks: usize,
    /// Frames shown per stack. Default 16.
    pub stack_depth: usize,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            threshold_fraction: 0.2,
            min_edge_fraction: 0.01,
            leak_fraction: 0.05,
            merge: true,
            similarity: 0.5,
            short_term_fraction: 0.5,
            nic_capacity: None,
            disk_bandwidth: None,
            disk_iops: None,
            top_stacks: 3,
            stack_depth: 16,
        }
    }
}

/// 10 Gbit/s in bytes per second: the NIC capacity when nothing better is known.
pub(crate) const DEFAULT_NIC_CAPACITY: f64 = 1.25e9;
