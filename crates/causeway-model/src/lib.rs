//! The causeway model: what threads were doing, over time, built from a trace.
//!
//! Every analysis (wPerf's wait-for graph, Argus's event graph, latency histograms)
//! consumes a [`Model`] rather than raw events:
//!
//! - per-thread timelines of contiguous [`Segment`]s (running, runnable, blocked with
//!   the wake-up that ended the wait and the stacks on both sides, or unknown), with
//!   flags saying which segment ends were observed;
//! - thread identity over time and the process tree ([`Thread`], [`ProcessNode`]);
//! - per-thread totals and per-CPU busy / idle time ([`ThreadTotals`], [`CpuData`]);
//! - hard IRQ and softirq intervals and block requests with their latency, for
//!   wPerf's device pseudo threads ([`InterruptInterval`], [`BlockRequest`]);
//! - counters of everything that did not fit ([`ModelStats`]) and the windows of lost
//!   events ([`LossWindow`]);
//! - segments with stable ids ([`SegmentId`]), each wake-up linked to the waker's
//!   segment;
//! - beside the model, the [`Facts`] trackers (recorded processes, exec times, network
//!   traffic, device hints, flag accesses, markers, titles, event counts).
//!
//! [`Trace::read`] is the one ingestion path every command uses: it decodes a trace
//! and builds the model and the facts in one pass on two threads ([`ingest`]).
//!
//! The model marks what it does not know ([`UnknownCause`], `start_known` /
//! `end_known`) instead of guessing. It does no analysis itself, never reads raw bytes
//! (that is `causeway-format`'s job) and never panics on trace data.
//!
//! ```
//! use causeway_format::{TaskState, Tid, Waker};
//! use causeway_model::SegmentState;
//! use causeway_testkit::synth::Synth;
//! let mut s = Synth::new();
//! s.switch(0, 0, 0, TaskState::RUNNABLE, 7) // 7 runs
//!     .switch(100, 0, 7, TaskState::INTERRUPTIBLE, 0) // 7 blocks
//!     .wake_by(300, 1, 9, 7) // thread 9 wakes it
//!     .switch(350, 0, 0, TaskState::RUNNABLE, 7); // 7 runs again
//! let model = s.model(2);
//! let t = model.thread(Tid(7)).unwrap();
//! assert!(matches!(t.segments[1].state, SegmentState::Blocked { .. }));
//! assert_eq!(t.totals.running.0, 100);
//! assert_eq!(t.totals.blocked().0, 200);
//! assert_eq!(t.totals.runnable.0, 50);
//! ```

mod builder;
mod cpu;
mod error;
pub mod facts;
mod goroutines;
mod goview;
pub mod ingest;
mod irq;
mod links;
mod loader;
mod memlimit;
mod model;
pub mod owncode;
pub mod pressure;
mod process;
pub mod quota;
pub mod sitename;
pub use memlimit::{
    MemoryGroup, MemoryPressure, MemoryStall, PAGE_FAULT_FRAMES, RECLAIM_FRAMES, SWAP_IN_FRAMES,
    memory_limits, with_pressure,
};
mod segment;
pub mod sockets;
mod stats;
mod thread;
mod totals;
mod tracker;

pub use builder::ModelBuilder;
pub use error::ModelError;
pub use facts::{Facts, SignalSent, SignalTaken, TimerWake};
pub use goroutines::{GoEvent, GoEventKind, GoroutineInfo};
pub use goview::{GOROUTINE_TID_BASE, SCHEDULER_FRAMES};
pub use ingest::Trace;
pub use irq::{BlockRequest, InterruptInterval, InterruptSource};
pub use model::Model;
pub use owncode::{OwnCode, OwnFrames, own_frames};
pub use process::{ProcessImage, ProcessNode};
pub use segment::{Segment, SegmentId, SegmentState, StackRef, TimeSpan, UnknownCause, WakeInfo};
pub use sockets::DataWake;
pub use stats::{LossCoverage, LossWindow, ModelStats};
pub use thread::{Annotation, Thread, ThreadIdentity, strip_digits};
pub use totals::{CpuData, ThreadTotals};
