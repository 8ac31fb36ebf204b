//! Compare a normal run with a slow one (after Uscope §IV.B and DARC's EMD): for each
//! system call, which user call sites issued it and how often in each run, what
//! appears in only one run, and the distributions of wait times side by side with
//! their earth mover's distance.
//!
//! A call site is the innermost frame of the call's user stack that lies in the
//! process's own executable (below the C library's wrappers), named by its function
//! so the two runs match even if addresses differ; without such a frame, the
//! innermost named frame; without a stack, `[no stack]`.
//!
//! Results are typed (numbers, integer nanoseconds, names from the trace); the words
//! and forms are the report layer's.
//!
//! ```
//! use causeway_compare::{Log2Histogram, emd};
//! let mut a = Log2Histogram::default();
//! let mut b = Log2Histogram::default();
//! a.add(1000); // bucket 9: [512, 1024) ns
//! b.add(4000); // bucket 11: two buckets higher
//! assert_eq!(emd(&a, &b), 2.0);
//! ```

mod callsite;
mod compare;
mod histogram;

pub use callsite::call_site;
pub use compare::{Comparison, Run, RunSummary, SiteDiff, SiteKey, SyscallDiff, compare};
pub use histogram::{Log2Histogram, emd};
