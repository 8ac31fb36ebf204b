//! Live measurement of a running process through function probes: a function's
//! latency profile, counted in the kernel (OSprof; DARC §2), and DARC's root-cause
//! path of one of its peaks, descended level by level (§3).
//!
//! The probes are `causeway-probe`'s and the decisions `causeway-latency`'s; this
//! crate runs the phases between them. A caller resolves its options once into a
//! request ([`funclat::FuncRequest`], [`rootpath::PathRequest`]), hands over a
//! [`Control`] (when to stop, when a status is wanted) and a notice callback, and gets
//! the result back to render: nothing here prints.

pub mod control;
pub mod error;
pub mod funclat;
pub mod rootpath;

pub use control::{Control, Probed};
pub use error::LiveError;
