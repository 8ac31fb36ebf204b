//! How much would fixing a wait help: the recorded timelines replayed with a chosen
//! set of waits (an edge of the wait-for graph, every wait on one vertex such as a
//! device, or the waits under one call site) or a vertex's CPU time shrunk by a
//! factor, and the completion rate of the program's repeated work compared before and
//! after.
//!
//! The replay keeps what the recording says about dependencies (docs: the
//! bottleneck page, "Predicted gains"):
//! - a wait ended by a recorded thread ends when that thread, replayed, reaches the
//!   point of its timeline where it woke the waiter (locks, queues, condition
//!   variables, socket data between recorded threads); threads of processes the
//!   recording did not follow are never followed (their timelines are fragments);
//! - a wait ended by a timer, a disk, a NIC or a kernel I/O thread keeps its length
//!   (a sleep, a timeout, a device's service time), shrunk only when it is the change;
//! - a wait on a brief stopper (the bottleneck analysis's pauses: a runtime's
//!   safepoint thread) keeps its length too: the stopper runs on its own clock, and
//!   following it would hold the replayed program back to its recorded pace;
//! - a poll that timed out after which the thread woke nobody (the bottleneck
//!   analysis's idle polls) takes no time: the wait after it carries the dependency;
//! - a wait ended by a process outside the recording ends no earlier than it did: the
//!   outside world is not sped up; a wait whose waker the trace cannot place, or a
//!   recorded waker whose point cannot be followed, keeps its length (held to its
//!   recorded end, one such wait held a whole replay to the recorded pace);
//! - CPU bursts keep their lengths, shrunk only when a vertex's CPU time is the
//!   change; a runnable delay (waiting for a CPU) keeps its length unless a CPU change
//!   shortens the work that held the CPU the thread then ran on, and then shrinks by
//!   the time taken out of that work.
//!
//! A wait that is the change keeps no dependency: it lasts its recorded length divided
//! by the factor. A removed wait also takes its wake-up's runnable delay and its
//! call's own CPU (`callcpu`) with it: removal predicts the fix that drops the call. A
//! followed wait whose waker, replayed, gets to the wake-up before the waiter blocks
//! never sleeps, and loses its wake-up's runnable delay too. Every timestamp of the replay is `max` and `+` over the recorded
//! ones, so an unchanged replay reproduces the recording exactly (tested), and a change
//! moves only what depends on it. The rate of the repeated work counts the wake-ups
//! of the throughput-bearing threads (the first knot's, else the first sink's waiters)
//! in the middle 80 % of the recording; a prediction above what the CPUs can run is
//! capped at their capacity.

mod callcpu;
mod change;
mod contention;
mod error;
mod measure;
mod predict;
mod reccost;
mod replay;
mod select;
mod sitename;

pub use change::{Change, Factor, Target};
pub use contention::CpuWaits;
pub use error::WhatIfError;
pub use measure::Counted;
pub use predict::{EdgeGain, Prediction, Predictor, WaitRules};
