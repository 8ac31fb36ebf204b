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
    /// Other I/O.
    #[error("{0}: {1}")]
    Io(String, std::io::Error),
}
