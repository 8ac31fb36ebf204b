//! What an import is asked to do: [`ImportOptions`], and the `perf record` events and
//! `perf script` fields it expects.
//!
//! This module holds no logic beyond the defaults.

use std::path::PathBuf;

/// `perf script --fields` used for perf.data input, and required for text input: the
/// sample head (`comm,tid,pid,cpu,time`), the event name and tracepoint text, and the
/// callchain (`ip,sym,symoff,dso`, printed one frame per line when recorded with
/// `-g`). Run `perf script` with `--ns` too (microsecond times are accepted but lose
/// precision), and preferably `--show-task-events --show-mmap-events
/// --show-lost-events` for thread names, process parents, mappings and lost-event
/// counts. `pid` may be left out (threads then count as their own processes unless
/// task events say otherwise); `ip,sym,symoff,dso` may be left out (no stacks).
pub const SCRIPT_FIELDS: &str = "comm,tid,pid,cpu,time,event,trace,ip,sym,symoff,dso";

/// [`SCRIPT_FIELDS`] without the callchain fields, used when nothing was recorded
/// with `-g`.
pub const SCRIPT_FIELDS_NO_CALLCHAIN: &str = "comm,tid,pid,cpu,time,event,trace";

/// The perf tracepoints to record (`perf record -e ...`) for everything the thread model
/// uses: switches and wake-ups with their wakers, process lifetimes, interrupts (to tell
/// which device ended a wait) and block requests.
pub const RECORD_EVENTS: &[&str] = &[
    "sched:sched_switch",
    "sched:sched_waking",
    "sched:sched_wakeup_new",
    "sched:sched_process_fork",
    "sched:sched_process_exec",
    "sched:sched_process_exit",
    "irq:irq_handler_entry",
    "irq:irq_handler_exit",
    "irq:softirq_entry",
    "irq:softirq_exit",
    "block:block_rq_issue",
    "block:block_rq_complete",
];

/// How to import.
#[derive(Clone, Debug)]
pub struct ImportOptions {
    /// The perf binary (default `perf`, looked up in `PATH`).
    pub perf: PathBuf,
    /// Keep the first three syscall arguments (default false: they may be private data).
    pub keep_syscall_args: bool,
    /// Import callchains as stacks (default true).
    pub stacks: bool,
    /// Import executable mappings from mmap records (default true).
    pub mappings: bool,
    /// A `sched_wakeup` at most this long after a `sched_waking` of the same wakee is the
    /// same wake-up and is dropped (default 100 ms).
    pub wakeup_dedup_window_ns: u64,
    /// How long a fork is held back waiting to learn whether the child is a thread or a
    /// process (default 1 s of trace time).
    pub fork_resolve_window_ns: u64,
}

impl Default for ImportOptions {
    fn default() -> Self {
        ImportOptions {
            perf: PathBuf::from("perf"),
            keep_syscall_args: false,
            stacks: true,
            mappings: true,
            wakeup_dedup_window_ns: 100_000_000,
            fork_resolve_window_ns: 1_000_000_000,
        }
    }
}
