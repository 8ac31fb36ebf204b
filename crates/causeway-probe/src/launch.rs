//! Start a command stopped before its `exec`, so probes can be attached before it runs
//! a single instruction of its own; then let it go.
//!
//! The child stops itself with SIGSTOP between `fork` and `exec`; the caller waits
//! for the stop, attaches, and sends SIGCONT. `std::process::Command` cannot be used:
//! its `spawn` waits for the `exec`, which would never come.

use crate::error::ProbeError;
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// A command started and stopped before `exec`.
#[derive(Debug)]
pub struct Stopped {
    /// The child's pid (the tgid the program will have).
    pub pid: u32,
    /// The executable `exec` will run.
    pub binary: PathBuf,
}

/// Find the executable `exec` would run for `program` (searched in `PATH` when it has
/// no slash).
pub fn resolve_program(program: &str) -> Option<PathBuf> {
    if program.contains('/') {
        return Path::new(program).canonicalize().ok();
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(program))
        .find(|p| p.is_file())
        .and_then(|p| p.canonicalize().ok())
}

/// Start `cmd` stopped before its `exec`. With `stdout_to_stderr` the command writes
/// its standard output to the caller's standard error (so it does not mix with a
/// machine-readable report on standard output).
pub fn start_stopped(cmd: &[String], stdout_to_stderr: bool) -> Result<Stopped, ProbeError> {
    let launch_err = |source| ProbeError::Launch {
        command: cmd.join(" "),
        source,
    };
    let program = cmd
        .first()
        .ok_or_else(|| launch_err(std::io::Error::other("empty command")))?;
    let binary = resolve_program(program).ok_or_else(|| {
        launch_err(std::io::Error::new(
            std::io::ErrorKind::NotFound,
            "not found (in PATH)",
        ))
    })?;
    // Everything the child needs is built before fork: after it, only
    // async-signal-safe calls.
    let nul = |_| launch_err(std::io::Error::other("an argument holds a NUL byte"));
    let path = CString::new(binary.as_os_str().as_bytes()).map_err(nul)?;
    let argv: Vec<CString> = cmd
        .iter()
        .map(|a| CString::new(a.as_bytes()))
        .collect::<Result<_, _>>()
        .map_err(nul)?;
    let mut argv_ptrs: Vec<*const libc::c_char> = argv.iter().map(|a| a.as_ptr()).collect();
    argv_ptrs.push(std::ptr::null());
    // SAFETY: the child only calls dup2, raise, execv and _exit, which are
    // async-signal-safe, on memory prepared before the fork.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(launch_err(std::io::Error::last_os_error()));
    }
    if pid == 0 {
        // SAFETY: see above; the pointers stay valid in the child's copy.
        unsafe {
            if stdout_to_stderr {
                libc::dup2(2, 1);
            }
            libc::raise(libc::SIGSTOP);
            libc::execv(path.as_ptr(), argv_ptrs.as_ptr());
            libc::_exit(127);
        }
    }
    let mut status = 0;
    // SAFETY: waiting for our own child's stop; status is a valid out pointer.
    let r = unsafe { libc::waitpid(pid, &mut status, libc::WUNTRACED) };
    if r != pid || !libc::WIFSTOPPED(status) {
        return Err(launch_err(std::io::Error::other(
            "the command did not stop before exec",
        )));
    }
    Ok(Stopped {
        pid: pid as u32,
        binary,
    })
}

impl Stopped {
    /// Let the command run.
    pub fn resume(&self) -> Result<(), ProbeError> {
        // SAFETY: signalling our own child.
        let r = unsafe { libc::kill(self.pid as libc::pid_t, libc::SIGCONT) };
        if r != 0 {
            return Err(ProbeError::Launch {
                command: self.binary.display().to_string(),
                source: std::io::Error::last_os_error(),
            });
        }
        Ok(())
    }

    /// True while the command runs; reaps it once it has exited.
    pub fn running(&self) -> bool {
        let mut status = 0;
        // SAFETY: polling our own child without blocking.
        let r = unsafe { libc::waitpid(self.pid as libc::pid_t, &mut status, libc::WNOHANG) };
        r == 0
    }

    /// Ask the command to end (SIGTERM) and wait for it.
    pub fn terminate(&self) {
        // SAFETY: signalling and reaping our own child.
        unsafe {
            libc::kill(self.pid as libc::pid_t, libc::SIGTERM);
            let mut status = 0;
            libc::waitpid(self.pid as libc::pid_t, &mut status, 0);
        }
    }
}

/// The executable of a running process.
pub fn executable_of(tgid: u32) -> Result<PathBuf, ProbeError> {
    std::fs::read_link(format!("/proc/{tgid}/exe"))
        .map_err(|source| ProbeError::Executable { tgid, source })
}
