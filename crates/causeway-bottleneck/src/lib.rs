//! Off-CPU bottleneck analysis after wPerf (OSDI'18, §3 and §4.2): which waiting events
//! limit a program's throughput.
//!
//! From a [`causeway_model::Trace`] (the model and the facts gathered beside it):
//!
//! 1. each thread's waits with the waker of each, after removing declared false
//!    wake-ups and adding declared busy-waits (`waits`);
//! 2. short-term threads merged into virtual threads (`entities`); devices, timers
//!    and unidentified interrupts as pseudo threads (`waker`), with device idle time
//!    as edges to the threads that issued I/O (`devices`);
//! 3. cascaded re-distribution of waiting time onto edges, in parallel (`cascade`);
//! 4. similar threads merged into one vertex (`merge`, `vertices`), edges summed
//!    between the merged vertices (`edges`); the process titles programs set kept for
//!    labels (`titles`);
//! 5. knots and sinks of the wait-for graph (`graph`, `knots`), after waits on brief
//!    stoppers are set aside (`pauses`) and small leaks trimmed (`leaks`); background
//!    knots set apart, and knot refinement (`refine`), a closed loop's saturated
//!    stage standing out of it (`saturated`);
//! 6. for each sink, the heaviest chain of waits into it and the cycles upstream of it
//!    (`upstream`);
//! 7. [`Findings`]: typed data (ids, integer nanoseconds, symbolized stacks), no prose
//!    (`analyze` runs the stages in this order).
//!
//! It does not read trace files (see [`causeway_model::Trace::read`]), print, word
//! advice or know about command lines: labels, sentences and the text, JSON and DOT
//! forms are the report layer's (`causeway-report`).
//!
//! ```
//! use causeway_bottleneck::{Options, analyze};
//! use causeway_format::{Header, Tables, TaskState};
//! use causeway_model::Trace;
//! use causeway_testkit::synth::Synth;
//! // Thread 1 waits 0..10 for thread 2; thread 2 waits 0..4 for thread 3.
//! let mut s = Synth::new();
//! s.switch(0, 2, 0, TaskState::RUNNABLE, 3) // thread 3 runs on CPU 2
//!     .switch(0, 0, 1, TaskState::INTERRUPTIBLE, 0)
//!     .switch(0, 1, 2, TaskState::INTERRUPTIBLE, 0)
//!     .wake_by(4, 2, 3, 2) // 3 wakes 2
//!     .switch(5, 1, 0, TaskState::RUNNABLE, 2)
//!     .wake_by(10, 1, 2, 1) // 2 wakes 1
//!     .switch(11, 0, 0, TaskState::RUNNABLE, 1)
//!     .switch(20, 2, 3, TaskState::RUNNABLE, 0);
//! let trace = Trace::from_events(Tables::default(), Header::synthetic(3), &s.events());
//! let opts = Options { merge: false, ..Options::default() };
//! let found = analyze(&trace, &opts).unwrap();
//! // 1 → 2 weighs 10 ns; 2 → 3 weighs 4 ns plus 4 ns cascaded from 1's wait.
//! let ns: Vec<u64> = found.edges.iter().map(|e| e.weight.0).collect();
//! assert_eq!(ns, vec![10, 8]);
//! ```

mod analyze;
mod cascade;
mod devices;
mod edges;
mod entities;
mod error;
mod findings;
mod graph;
mod idle;
mod input;
mod jvm;
mod knots;
mod leaks;
mod merge;
mod options;
mod pauses;
mod profile;
mod refine;
mod saturated;
mod stacks;
mod titles;
mod upstream;
mod vertices;
mod wait;
mod waitmap;
mod waits;
mod waker;

#[cfg(test)]
mod tests;

pub use analyze::{analyze, analyze_with_waits};
pub use error::BottleneckError;
pub use findings::{
    Capacity, CapacitySource, ClosedLoop, CpuProfile, Device, DeviceKind, Edge, EdgeId, EdgeKind,
    Findings, Knot, ManagedRuntime, OffCpu, Pause, Quality, SampledSite, SampledStack, Sink,
    ThreadRef, Vertex, VertexId, VertexKind, similar_name,
};
pub use options::Options;
pub use refine::Shape;
pub use stacks::EdgeStack;
pub use waitmap::{AttributedWait, ThreadWaits, WaitMap};
