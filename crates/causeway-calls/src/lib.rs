//! Call trees from in-process traces (Hubble, OSDI'22, §7).
//!
//! libcauseway (and any producer of method markers) stores calls as
//! `MethodEnter`/`MethodExit` markers per thread. From a [`causeway_model::Trace`] this
//! crate rebuilds:
//!
//! - per-thread call trees with inclusive and self durations ([`tree`]);
//! - the functions with the most self time ([`CallsResult::top`]);
//! - the longest call chains before the trigger ([`CallsResult::chains`]): call instances
//!   ranked by the self time they spent inside the window before the dump, each with
//!   the chain of callers above it, so a thread stuck in `loop > handle > parse > read`
//!   shows that chain first;
//! - the instances of a call-chain signature `a>b>c` with their durations
//!   ([`CallsResult::matches`]).
//!
//! Results hold ids and integer nanoseconds; names, sentences and forms are the report
//! layer's (`causeway-report`). It reads no files and prints nothing.

mod analyze;
mod chains;
mod error;
mod options;
mod result;
pub mod tree;

pub use analyze::analyze;
pub use error::Error;
pub use options::{Options, Pattern, PatternStep};
pub use result::{CallsResult, Chain, FunctionStat, Match, ThreadCalls, Trigger, TriggerKind};
pub use tree::{Call, CallId};
