//! Start a command before its `exec` (the launcher shared with the recorder,
//! `causeway_procfs::launch`), so probes can be attached before it runs a single
//! instruction of its own; then let it go with [`Launched::release`].

use crate::error::ProbeError;
use std::path::PathBuf;

pub use causeway_procfs::launch::{KILL_GRACE, Launched};

/// Start `cmd` waiting before its `exec`, with the executable it will run (its real
/// path). With `stdout_to_stderr` the command writes its standard output to the
/// caller's standard error (so it does not mix with a machine-readable report on
/// standard output). Dropping the handle before [`Launched::release`] kills it.
pub fn start_stopped(
    cmd: &[String],
    stdout_to_stderr: bool,
) -> Result<(Launched, PathBuf), ProbeError> {
    let l = Launched::fork_with(cmd, false, stdout_to_stderr, true).map_err(|e| {
        ProbeError::Launch {
            command: cmd.join(" "),
            source: std::io::Error::other(e),
        }
    })?;
    let binary = l
        .program
        .canonicalize()
        .unwrap_or_else(|_| l.program.clone());
    Ok((l, binary))
}

/// The executable of a running process.
pub fn executable_of(tgid: u32) -> Result<PathBuf, ProbeError> {
    std::fs::read_link(format!("/proc/{tgid}/exe"))
        .map_err(|source| ProbeError::Executable { tgid, source })
}
