//! causeway's kernel recorder: `causeway record`.
//!
//! eBPF programs (src/bpf/recorder.bpf.c) record scheduler switches and wake-ups with
//! the waker's context, process life cycle, interrupts, block and network requests and
//! chosen syscalls of the target processes into one ring buffer per CPU, with scoped
//! user stacks (Uscope's flexible walking) and kernel stacks. User space converts the
//! records into the causeway trace format, streaming to a file or keeping a window of
//! recent events for flight-recorder dumps, and symbolizes stacks at the end.
//!
//! Layers, each in its own module: [`config`] (what to record), `probes` (loading and
//! maps), [`records`] (ring-buffer record layout), [`convert`] (records to events and
//! tables), [`stacks`] (dedup; symbolization is `causeway-symbolize`'s), [`sink`] (file
//! or flight window, written crash-safely through a temporary file by
//! `causeway-outfile`'s [`outfile`], which keeps a file it replaces as `NAME.old`),
//! the flight recorder's window and trigger conditions are `causeway-flight`'s
//! ([`trigger`]), [`run`] (the recording loop); [`liblog`] keeps
//! libbpf's messages off the terminal unless asked for.

pub mod cgroups;
pub mod config;
pub mod convert;
mod error;
pub mod go_events;
pub mod gotrack;
pub mod inproc;
pub mod kmemo;
pub mod launch;
pub mod liblog;
mod probes;
pub mod procfs;
pub mod records;
pub mod run;
pub mod sampling;
mod signal_events;
pub mod signals;
pub mod sink;
pub mod socket_events;
pub mod spool;
pub mod stacks;
pub mod strings;
pub mod syscalls;
pub mod titles;
/// Trigger conditions of the flight recorder (`causeway-flight`).
pub use causeway_flight::trigger;
/// Crash-safe output files (`causeway-outfile`).
pub use causeway_outfile as outfile;
/// A replaced trace kept as `PATH.old` (`causeway-outfile`).
pub use causeway_outfile::previous;
/// Names of JIT-compiled code from perf maps and jitdump files (`causeway_procfs::jit`).
pub use causeway_procfs::jit as jitmap;
/// DWARF unwinding of the copied user stacks (`causeway-unwind`).
pub use causeway_unwind as unwind;
/// The data-flag watch (`causeway-watch`), started by a recording's `--watch`.
pub use causeway_watch as watch;

mod skel {
    #![allow(missing_docs, clippy::all, unused_imports)]
    include!(concat!(env!("OUT_DIR"), "/recorder.skel.rs"));
}

pub use config::{
    DEFAULT_WAKER_SAMPLING, EventSet, KernelStacks, RecordConfig, StackMode, Target, Unwind,
    WakerStackSampling, parse_stack_window,
};
pub use error::{ConfigError, RecordError};
pub use probes::Family;
pub use run::{Notice, Output, Request, Summary, record};
