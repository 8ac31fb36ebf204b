//! Flags of `causeway watch`: the variable, then every `causeway record` flag.

use super::record::{RecordArgs, WatchVia, watch_len};
use super::values::FlagError;
use clap::Args;

/// `causeway watch`.
#[derive(Debug, Args)]
#[command(after_help = "\
EXAMPLES:
    causeway watch -p 1234 --symbol done -d 5s     watch `done` of a running program
    causeway watch --symbol done -- ./spin-flag    launch a program and watch `done`
    causeway watch -p 1234 --addr 0x55d0c0de4010 --len 4
    causeway watch -p 1234 --symbol libfoo:ready   a variable of libfoo.so.1
    causeway watch --via uprobe --symbol done -- ./spin-flag   no debug registers
    causeway diagnose --auto causeway.cwt          then: who wrote the flag late

The trace is a full recording (as `causeway record` writes) with the syscall group on,
`sched_yield` added to the syscalls (a yield loop is what a data flag explains), and the
variable's accesses as data-flag events: every write, and each thread's first read
after each write (the rest are counted, not kept). Each access traps: a thread that
polls the variable runs slower while watched (tens of microseconds per access with
watchpoints in a VM, a few with uprobes).")]
pub struct WatchArgs {
    /// The variable: a symbol of the program's executable or of a shared object it
    /// maps (static or dynamic symbol table); `LIB:NAME` for the one in `LIB` (a
    /// path, a file name, or a name such as `libfoo` for `libfoo.so.1`).
    #[arg(long, value_name = "NAME", conflicts_with_all = ["addr", "watch"])]
    pub symbol: Option<String>,
    /// The variable's address in the process (hex, `0x...`), e.g. from a debugger.
    #[arg(long, value_name = "ADDR", value_parser = hex_addr)]
    pub addr: Option<u64>,
    /// Bytes watched: 1, 2, 4 or 8 [default: the symbol's size; 8 for --addr].
    #[arg(long, value_name = "N", value_parser = watch_len)]
    pub len: Option<u8>,
    /// How the accesses are caught: `auto` (hardware watchpoints inherited by every
    /// new thread; per-thread watchpoints where the kernel refuses that; uprobes where
    /// it refuses breakpoints), `breakpoint`, `thread-breakpoint` (per-thread, new
    /// threads looked for every 10 ms), `uprobe` (a uprobe on each instruction that
    /// loads or stores the variable; no debug registers needed) [default: auto].
    #[arg(long, value_name = "HOW", value_enum)]
    pub via: Option<WatchVia>,
    /// Everything `causeway record` takes (target, output, duration, events...).
    #[command(flatten)]
    pub record: RecordArgs,
}

/// A hex address.
fn hex_addr(s: &str) -> Result<u64, FlagError> {
    let hex = s
        .strip_prefix("0x")
        .or_else(|| s.strip_prefix("0X"))
        .unwrap_or(s);
    u64::from_str_radix(hex, 16).map_err(|_| FlagError::WatchTarget(s.to_string()))
}
