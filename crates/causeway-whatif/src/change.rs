//! What a prediction changes: the waits of one edge, of one vertex waited for or
//! of one call site, or the CPU time of one vertex, shrunk by a factor.

use crate::error::WhatIfError;
use causeway_bottleneck::VertexId;

/// How much shorter the chosen time becomes: divided by the factor; infinity removes
/// it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Factor(f64);

impl Factor {
    /// Remove the time altogether.
    pub const REMOVE: Factor = Factor(f64::INFINITY);
    /// Halve the time.
    pub const HALVE: Factor = Factor(2.0);

    /// A factor of at least 1 (infinity removes).
    pub fn new(k: f64) -> Result<Factor, WhatIfError> {
        if k.is_nan() || k < 1.0 {
            return Err(WhatIfError::Factor(k.to_string()));
        }
        Ok(Factor(k))
    }

    /// The factor (infinity when the time is removed).
    pub fn get(self) -> f64 {
        self.0
    }

    /// True when the time is removed.
    pub fn removes(self) -> bool {
        self.0.is_infinite()
    }

    /// `ns` shrunk by the factor.
    pub fn shrink(self, ns: u64) -> u64 {
        if self.removes() {
            0
        } else {
            (ns as f64 / self.0).round() as u64
        }
    }
}

impl std::str::FromStr for Factor {
    type Err = WhatIfError;
    fn from_str(s: &str) -> Result<Factor, WhatIfError> {
        let t = s.trim();
        if matches!(t, "inf" | "infinity" | "∞") {
            return Ok(Factor::REMOVE);
        }
        let k: f64 = t.parse().map_err(|_| WhatIfError::Factor(s.to_string()))?;
        Factor::new(k)
    }
}

/// The time a change shrinks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// The waits of `from`'s threads that `to` ended (one edge of the wait-for graph,
    /// before cascading: the waits themselves, not the weight passed on to them).
    Edge {
        /// The waiting vertex.
        from: usize,
        /// The vertex waited for.
        to: usize,
    },
    /// Every wait that `to` ended, whoever waited: a device's service time, or all
    /// the waits on one thread vertex.
    WaitsOn {
        /// The vertex waited for.
        to: usize,
    },
    /// The waits that blocked under a function: its name is a frame (or a function
    /// inlined into one) of the wait's user stack, the call site the bottleneck's
    /// edges list.
    Site {
        /// The function's name as the stacks show it.
        function: String,
    },
    /// The time on CPU of a thread vertex's threads.
    Cpu {
        /// The vertex.
        vertex: usize,
    },
}

impl Target {
    /// The edge `from → to`.
    pub fn edge(from: VertexId, to: VertexId) -> Target {
        Target::Edge {
            from: from.0,
            to: to.0,
        }
    }
}

/// One change: a target and its factor.
#[derive(Clone, Debug, PartialEq)]
pub struct Change {
    /// What is shrunk.
    pub target: Target,
    /// By how much.
    pub factor: Factor,
}
