//! Import perf recordings into causeway traces.
//!
//! People often already have a `perf record` of the problem (`perf record -e 'sched:*'
//! -e 'irq:*' -e 'block:*' -g -a ...`). This crate turns it into a causeway trace so
//! every causeway analysis runs on it:
//!
//! - [`import_perf_data`] runs `perf script` on a perf.data file (perf does the binary
//!   parsing and symbolization) and streams its output through the converter;
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
//! This crate does not read perf.data bytes, symbolize addresses or analyze anything.

mod callchain;
pub mod context;
mod convert;
mod perf_header;
mod perf_run;
mod script_parse;
mod syscalls;
mod threads;
mod tracepoint;

pub use context::UNKNOWN_SOFTIRQ;
pub use convert::UNKNOWN_TASK_STATE;
pub use perf_header::{PerfEventDesc, PerfHeader, WRITER};
pub use perf_run::{import_perf_data, read_perf_header};

use causeway_format::{FormatError, Header, TraceWriter};
use serde::Serialize;
use std::collections::BTreeMap;
use std::io::{self, BufRead, Write};
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

/// A line that did not parse, kept as an example.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct MalformedLine {
    /// 1-based line number in the `perf script` output.
    pub line: u64,
    /// The line (first 200 bytes).
    pub text: String,
}

/// What an import did. Every count here (except totals) is also stored in the trace's
/// statistics as an `import.*` counter.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ImportSummary {
    /// Lines read.
    pub lines: u64,
    /// Sample lines recognized (mapped or ignored events).
    pub samples: u64,
    /// Side-band records recognized (`PERF_RECORD_*`).
    pub records: u64,
    /// Events written, including `Stack` and `Lost` events.
    pub events: u64,
    /// `Stack` events written.
    pub stacks: u64,
    /// Lines that could not be parsed (skipped).
    pub malformed_lines: u64,
    /// The first few malformed lines.
    pub malformed_examples: Vec<MalformedLine>,
    /// Samples of events causeway does not map, by event name (side-band records as
    /// `PERF_RECORD_<TYPE>`).
    pub ignored_events: BTreeMap<String, u64>,
    /// Events perf reported lost (sum of `PERF_RECORD_LOST`).
    pub lost_events: u64,
    /// `sched_wakeup` events dropped because their `sched_waking` was written.
    pub wakeups_deduplicated: u64,
    /// Wakers found from the callchain rather than from `irq:*` events.
    pub wakers_from_callchain: u64,
    /// Thread rows written.
    pub threads: u64,
    /// Process rows written.
    pub processes: u64,
    /// Mapping rows written.
    pub mappings: u64,
    /// All `import.*` counters written into the trace.
    pub counters: BTreeMap<String, u64>,
    /// Warnings perf printed on stderr (perf.data input only).
    pub perf_warnings: Vec<String>,
}

/// Why an import failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ImportError {
    /// The perf binary could not be started.
    #[error(
        "perf not found (tried `{}`): install it (Debian: `apt install linux-perf`, Ubuntu: `apt install linux-tools-generic`, Fedora: `dnf install perf`) or pass its path",
        perf.display()
    )]
    PerfNotFound {
        /// The binary tried.
        perf: PathBuf,
    },
    /// perf ran but failed.
    #[error("`{command}` failed ({status}): {stderr}")]
    PerfFailed {
        /// The command line run.
        command: String,
        /// Its exit status.
        status: String,
        /// What it printed on stderr.
        stderr: String,
    },
    /// Reading the input or starting perf failed.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// The error.
        source: io::Error,
    },
    /// Writing the trace failed.
    #[error("writing the trace: {0}")]
    Format(#[from] FormatError),
    /// Nothing in the input looked like `perf script` output.
    #[error(
        "no perf events found in {lines} lines ({malformed} malformed{}); expected `perf script --ns -F {SCRIPT_FIELDS}` output",
        if example.is_empty() { String::new() } else { format!(", first: {example:?}") }
    )]
    NoEvents {
        /// Lines read.
        lines: u64,
        /// Lines that did not parse.
        malformed: u64,
        /// The first malformed line.
        example: String,
    },
}

/// Convert `perf script` text into a trace written to `out`.
///
/// The text must have been produced with the fields of [`SCRIPT_FIELDS`] (see there for
/// what may be left out). If it starts with perf's `# ...` header (`perf script
/// --header`), its host name, kernel release, architecture, CPU count and command line
/// fill the fields of `header` that are empty or zero. `header.writer` is set to
/// [`WRITER`] if empty.
///
/// Returns the finished output and a summary; fails only on I/O errors or if nothing in
/// the input was recognized.
pub fn import_perf_script<R: BufRead, W: Write>(
    mut input: R,
    mut header: Header,
    out: W,
    opts: &ImportOptions,
) -> Result<(W, ImportSummary), ImportError> {
    let mut buf = Vec::with_capacity(256);
    let mut perf_header = PerfHeader::default();
    let mut header_lines = 0u64;
    // Leading comment lines: perf's header, if any.
    let first_line = loop {
        if !read_line(&mut input, &mut buf)? {
            break None;
        }
        let line = line_text(&buf);
        if line.starts_with('#') {
            perf_header.parse_line(&line);
            header_lines += 1;
            continue;
        }
        break Some(line.into_owned());
    };
    perf_header.fill_missing(&mut header);
    if header.writer.is_empty() {
        header.writer = WRITER.to_string();
    }
    let mut conv = convert::Converter::new(TraceWriter::new(out, &header)?, opts);
    for _ in 0..header_lines {
        conv.count_skipped_line();
    }
    if let Some(line) = first_line {
        conv.line(&line)?;
        while read_line(&mut input, &mut buf)? {
            conv.line(&line_text(&buf))?;
        }
    }
    conv.finish()
}

/// Read one line into `buf` (terminator removed); false at the end of input.
fn read_line<R: BufRead>(input: &mut R, buf: &mut Vec<u8>) -> Result<bool, ImportError> {
    buf.clear();
    let n = input
        .read_until(b'\n', buf)
        .map_err(|source| ImportError::Io {
            what: "reading perf script output".to_string(),
            source,
        })?;
    if n == 0 {
        return Ok(false);
    }
    if buf.last() == Some(&b'\n') {
        buf.pop();
    }
    if buf.last() == Some(&b'\r') {
        buf.pop();
    }
    Ok(true)
}

/// The line as text; invalid UTF-8 (e.g. in a thread name) is replaced, not fatal.
fn line_text(buf: &[u8]) -> std::borrow::Cow<'_, str> {
    String::from_utf8_lossy(buf)
}
