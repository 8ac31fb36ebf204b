//! Errors of the recorder.

/// Why recording could not start or finish.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    /// Neither root nor CAP_BPF + CAP_PERFMON (or CAP_SYS_ADMIN).
    #[error(
        "recording needs root, or the capabilities CAP_BPF and CAP_PERFMON (CAP_SYS_ADMIN on kernels before 5.8)"
    )]
    Privileges,
    /// Kernel tracing is not reachable.
    #[error("{0}")]
    Tracing(String),
    /// The BPF object did not load (verifier, missing BTF, map creation).
    #[error("loading the eBPF recorder failed: {0}")]
    Load(String),
    /// A tracepoint could not be attached.
    #[error(
        "attaching to tracepoint {0} failed: {1} (does this kernel have it? see /sys/kernel/tracing/available_events)"
    )]
    Attach(String, String),
    /// A process to record does not exist.
    #[error("no process with PID {0}")]
    NoSuchProcess(u32),
    /// The command to launch could not be started.
    #[error("cannot run `{0}`: {1}")]
    Spawn(String, String),
    /// Writing the trace failed.
    #[error("writing the trace: {0}")]
    Write(#[from] causeway_format::FormatError),
    /// A variable could not be watched (`--watch`).
    #[error("{0}")]
    Watch(#[from] crate::watch::WatchError),
    /// Other I/O.
    #[error("{0}: {1}")]
    Io(String, std::io::Error),
}

impl From<causeway_procfs::launch::LaunchError> for RecordError {
    fn from(e: causeway_procfs::launch::LaunchError) -> RecordError {
        use causeway_procfs::launch::LaunchError;
        match e {
            LaunchError::Spawn { program, why } => RecordError::Spawn(program, why),
            LaunchError::Io { what, source } => RecordError::Io(what.into(), source),
            other => RecordError::Io("launch".into(), std::io::Error::other(other)),
        }
    }
}

impl From<causeway_outfile::OutputError> for RecordError {
    fn from(e: causeway_outfile::OutputError) -> RecordError {
        RecordError::Io(e.what, e.source)
    }
}

/// Why a recording option (event groups, syscalls, stack window, trigger condition)
/// could not be read. The names of what is accepted are in each message.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// `--events` names a group that does not exist.
    #[error("unknown event group `{name}` (known: all, default, {known})")]
    EventGroup {
        /// The name given.
        name: String,
        /// The group names, comma-separated.
        known: String,
    },
    /// `--events` names no group at all (`--events ,`).
    #[error("no event group in `{0}` (e.g. `default`, `sched,block`, `all,-net`)")]
    NoEventGroup(String),
    /// `--syscalls` names a syscall the recorder does not know.
    #[error("unknown syscall `{0}` (use a name from `man 2 syscalls` or a number)")]
    Syscall(String),
    /// A syscall number past the recorder's table.
    #[error("syscall number {0} is out of range (0-511)")]
    SyscallNumber(u32),
    /// The stack window is not a size.
    #[error("bad stack window `{0}` (bytes, or e.g. 8K)")]
    StackWindowSyntax(String),
    /// The stack window is a size BPF cannot copy.
    #[error("stack window `{input}` must be a power of two from 512 bytes to {max_kib}K")]
    StackWindowRange {
        /// The text given.
        input: String,
        /// The largest window, KiB.
        max_kib: u32,
    },
    /// A trigger condition cannot be read.
    #[error(transparent)]
    Trigger(#[from] causeway_flight::TriggerError),
}
