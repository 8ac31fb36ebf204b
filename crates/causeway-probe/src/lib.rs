//! Live function probes: a uprobe on a function's entry and a uretprobe on its returns,
//! whose BPF programs time each call and add it to log2 slots in the kernel (OSprof's
//! profile, DARC §2), so user space reads 64 counters instead of one record per call.
//!
//! This crate touches the kernel (libbpf) and is kept apart from the pure analyses:
//! it hands over counts ([`Slots`]); binning, peaks and rendering are
//! `causeway-latency`'s and `causeway-report`'s. It does not touch the recorder's BPF
//! object either: a function probe is a small object of its own, loaded next to a
//! recording or without one.
//!
//! - [`FuncProbe`]: attach to `SYMBOL` in a binary, for one process or all, and read
//!   the slots and counters at any time; dropping it detaches.
//! - [`rootpath`], [`callees`]: DARC's live descent, one step at a time: F0 and the
//!   callees of the function under study (found by disassembling it) timed in BPF with
//!   per-thread call-path state, one sample per in-peak call of F0.
//! - [`indirect`], [`resolve`]: indirect call sites of the function under study and
//!   their operands; the targets read at run time, resolved to the functions they start.
//! - [`launch`]: start a command stopped before its `exec`, so probes are in place
//!   before its first instruction.

pub mod calibrate;
pub mod callees;
mod error;
mod funclat;
pub mod indirect;
pub mod launch;
pub mod resolve;
pub mod rootpath;

pub use error::ProbeError;
pub use funclat::{Attachment, FuncProbe, ProbeTarget, SLOTS, Slots};

mod skel {
    pub(crate) mod funclat {
        #![allow(missing_docs, clippy::all, unused_imports)]
        include!(concat!(env!("OUT_DIR"), "/funclat.skel.rs"));
    }
    pub(crate) mod rootpath {
        #![allow(missing_docs, clippy::all, unused_imports)]
        include!(concat!(env!("OUT_DIR"), "/rootpath.skel.rs"));
    }
}
