//! Import perf recordings into causeway traces.
//!
//! People often already have a `perf record` of the problem (`perf record -e 'sched:*'
//! -e 'irq:*' -e 'block:*' -g -a ...`). This crate turns it into a causeway trace so
//! every causeway analysis runs on it:
//!
//! - [`import_perf_data_native`] reads a perf.data file itself (the `linux-perf-data`
//!   crate; tracepoint records decoded through the formats perf stored in the file,
//!   callchains named with blazesym): no perf binary needed, and several times faster;
//! - [`import_perf_data`] runs `perf script` on a perf.data file (perf does the binary
//!   parsing and symbolization) and streams its output through the converter: for
//!   files whose programs are gone from this machine but in perf's build-id cache;
//! - [`import_perf_script`] converts `perf script` text someone already produced.
//!
//! Both stream: memory grows with threads, distinct frames and stacks, not with lines.
//!
//! # Mapping
//!
//! | perf event | causeway event |
//! |---|---|
//! | `sched:sched_switch` | `SchedSwitch` (`prev_state` letter, `R+` = preempted, `D\|K` = D) |
//! | `sched:sched_waking` (preferred), `sched:sched_wakeup` | `Wakeup` (a `sched_wakeup` right after a `sched_waking` of the same wakee is dropped) |
//! | `sched:sched_wakeup_new` | `WakeupNew` |
//! | `sched:sched_process_fork/exec/exit` | `Fork`, `Exec`, `Exit` |
//! | `irq:irq_handler_entry/exit`, `irq:softirq_entry/exit` | `IrqEntry/Exit`, `SoftirqEntry/Exit` |
//! | `block:block_rq_issue/complete` | `BlockIssue/Complete` |
//! | `net:net_dev_xmit`, `net:netif_receive_skb` | `NetXmit`, `NetRecv` |
//! | `raw_syscalls:sys_enter/exit`, `syscalls:sys_enter_*/sys_exit_*` | `SyscallEnter/Exit` (x86-64 numbers; arguments zero unless [`ImportOptions::keep_syscall_args`]) |
//! | callchains (`-g`) | `Stack` right after its event: `SwitchOut` for a blocking switch, `Waker` for wake-ups, `Syscall` for syscall entry, `Other` otherwise |
//! | `PERF_RECORD_COMM/FORK/MMAP2/LOST` | thread, process and mapping rows; `Lost` events |
//!
//! Other events are counted per name (`import.ignored.<event>` in the trace and
//! [`ImportSummary::ignored_events`]). Lines that do not parse are counted
//! (`import.malformed_lines`), not fatal; only input with nothing recognizable fails
//! ([`ImportError::NoEvents`]). The waker of each wake-up is found as described in
//! [`context`]: tracked `irq:*` nesting first, the kernel callchain
//! second, the current thread otherwise.
//!
//! This crate analyzes nothing.

mod callchain;
pub mod context;
mod convert;
mod error;
mod native;
mod native_syms;
mod native_tp;
mod options;
mod perf_header;
mod perf_run;
mod script;
mod script_parse;
mod summary;
mod threads;
mod tracefmt;
mod tracepoint;

pub use context::UNKNOWN_SOFTIRQ;
pub use convert::UNKNOWN_TASK_STATE;
pub use error::ImportError;
pub use native::import_perf_data_native;
pub use options::{ImportOptions, RECORD_EVENTS, SCRIPT_FIELDS, SCRIPT_FIELDS_NO_CALLCHAIN};
pub use perf_header::{PerfEventDesc, PerfHeader, WRITER};
pub use perf_run::{import_perf_data, read_perf_header};
pub use script::import_perf_script;
pub use summary::{ImportSummary, MalformedLine};
