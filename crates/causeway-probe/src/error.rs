//! Errors of the function probes.

use std::path::PathBuf;

/// What went wrong loading or attaching a probe.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProbeError {
    /// Not root and without CAP_BPF + CAP_PERFMON.
    #[error("function probes need root (or CAP_BPF and CAP_PERFMON)")]
    Privileges,
    /// The BPF object could not be opened or loaded.
    #[error("loading the BPF program: {0}")]
    Load(String),
    /// The uprobe or uretprobe could not be attached.
    #[error(
        "attaching to `{symbol}` in {}: {reason} (is the symbol in that file's symbol table? `nm {}` lists them)",
        binary.display(),
        binary.display()
    )]
    Attach {
        /// The binary.
        binary: PathBuf,
        /// The function.
        symbol: String,
        /// libbpf's message.
        reason: String,
    },
    /// A map could not be read.
    #[error("reading the {map} map: {reason}")]
    Read {
        /// Which map.
        map: &'static str,
        /// Why.
        reason: String,
    },
    /// The command could not be started.
    #[error("starting `{command}`")]
    Launch {
        /// The command.
        command: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The binary of a process could not be found.
    #[error("finding the executable of process {tgid} (is it running?)")]
    Executable {
        /// The process.
        tgid: u32,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}
