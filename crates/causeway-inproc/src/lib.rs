//! libcauseway: always-on in-process call tracing (Hubble, OSDI'22, §4.3-§6) for
//! native programs, dumped just in time as a causeway trace.
//!
//! The trace path is C (`c/causeway.h`, inline, initial-exec TLS): a trace point is one
//! TLS load when off, and a clock read plus one or two 8-byte stores when on. This
//! crate holds the rest: the decoder of the slot encoding ([`decode`]), the conversion of
//! decoded records into balanced call events ([`calls`]), the naming of ids
//! ([`names`]), the process facts a trace needs ([`procinfo`]) and the trace writer the
//! C side calls at a dump ([`dump`]). [`api`] is the thin safe Rust interface.
//!
//! Why the hot path is C and not Rust: stable Rust's `thread_local!` in a library that
//! may be built as a shared object (the `LD_PRELOAD` form) is accessed through
//! `__tls_get_addr` (the general-dynamic model) plus a lazy-initialization check, while
//! the C variable is declared `tls_model("initial-exec")`, one `%fs`-relative load;
//! `#[thread_local]` and `-Z tls-model` are nightly only. See docs/libcauseway.md.
//!
//! It does not analyse: `causeway calls` (crate `causeway-calls`) reads the traces.

pub mod api;
pub mod calls;
pub mod decode;
pub mod dump;
pub mod ffi;
pub mod names;
pub mod procinfo;

pub use decode::{Record, decode};
