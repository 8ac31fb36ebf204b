//! Java frames of a running HotSpot JVM, walked without frame pointers and without
//! unwind tables: the recorder's walker for the JVM's own code ([`HotSpot`], a
//! `causeway_unwind::RuntimeFrames`).
//!
//! Compiled Java code keeps no frame pointer (unless run with
//! `-XX:+PreserveFramePointer`) and has no CFI, so a stack that enters Java ends at the
//! first compiled frame. HotSpot itself walks those frames from what its code cache
//! says about each blob of code, and it describes its structures for debuggers in
//! tables libjvm exports (`gHotSpotVMStructs`; the OpenTelemetry eBPF profiler reads
//! the same tables). This crate reads them from the live process through
//! `/proc/PID/mem`, while the recorder unwinds a copied stack:
//!
//! - a **compiled method** (or a stub with a fixed frame): the blob's frame size in
//!   words says where the frame ends; the return address is the last word of the
//!   frame and the caller's rbp the one before it (x86-64 HotSpot's layout);
//! - an **interpreted method** (the pc is in the interpreter): the frame is laid out
//!   around rbp: the caller's rbp at `[rbp]`, the return address at `[rbp+8]`, the
//!   caller's stack pointer at `[rbp-8]`, the `Method*` at `[rbp-24]`. The frame is
//!   reported by its `Method*` (every interpreted frame runs the same interpreter
//!   code) and named from it;
//! - any **other stub** without a fixed frame (the call stub that enters Java from
//!   the VM): frame-pointer based.
//!
//! Names come from the JVM's structures too (a method's class, name and signature
//! through its constant pool), spelled as the JVM's own perf map spells them, so
//! Java frames are named without `jcmd` and without a perf map.
//!
//! What is not handled: frames of methods inlined into a compiled method (the
//! compiled method is the frame), a sample that stops a compiled method before its
//! frame is set up (the walk stops there), JDKs whose `CodeBlob` has no
//! `_code_begin` field (JDK 23 and later store offsets; the reader refuses them with
//! the missing field named), and non-x86-64 layouts.

mod codecache;
mod error;
mod hotspot;
mod jvm;
mod layout;
mod libjvm;
mod mem;
mod names;
mod vmstructs;

pub use error::JvmError;
pub use hotspot::HotSpot;
pub use libjvm::libjvm_symbols;
pub use mem::{Memory, ProcMem};

#[cfg(test)]
mod tests;
