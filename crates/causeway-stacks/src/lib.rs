//! Stack aggregation over a trace: what flame graphs and the normal-versus-slow
//! comparison are made of.
//!
//! - [`EventExtras`]: the per-event facts the model does not keep (system call spans
//!   with the user call site that issued them, on-CPU sample stacks), gathered in one
//!   pass over the events a caller feeds it;
//! - [`Folded`]: stacks folded into `frame;frame;frame weight` lines, the format
//!   FlameGraph, inferno and speedscope read, with a parser so it round-trips;
//! - [`fold`]: the three flame graphs — on-CPU (sample stacks, weight = samples),
//!   off-CPU (blocked segments' switch-out stacks, weight = blocked nanoseconds) and
//!   wake-up chains (the wakee's blocked stack with its waker's stack stacked on top,
//!   and that waker's own waker above it, for several hops; weight = blocked
//!   nanoseconds).
//!
//! It reads no trace file and renders nothing: SVG and text are the report layer's.
//! Frames are named by function (no offsets), so calls from different lines of one
//! function merge as flame graph tools expect.
//!
//! ```
//! use causeway_format::{Header, Tables, TaskState};
//! use causeway_model::Trace;
//! use causeway_testkit::synth::Synth;
//! use causeway_stacks::{FlameKind, Options, fold};
//! let mut s = Synth::new();
//! s.switch(0, 0, 0, TaskState::RUNNABLE, 7)
//!     .switch(100, 0, 7, TaskState::INTERRUPTIBLE, 0)
//!     .wake_by(300, 1, 9, 7)
//!     .switch(350, 0, 0, TaskState::RUNNABLE, 7);
//! let trace = Trace::from_events(Tables::default(), Header::synthetic(2), &s.events());
//! let folded = fold(&trace, None, FlameKind::OffCpu, &Options::default()).unwrap();
//! assert_eq!(folded.total(), 200); // thread 7 was blocked for 200 ns
//! ```

mod error;
mod extras;
mod flame;
mod folded;
mod frames;
mod oncpu;
mod options;
mod wakechain;

#[cfg(test)]
mod tests;

pub use error::StacksError;
pub use extras::{EventExtras, Extras, SampleStack, SyscallSpan};
pub use flame::fold;
pub use folded::{Folded, FoldedParseError};
pub use frames::{FrameNamer, thread_label};
pub use options::{FlameKind, NO_STACK, Options};
