//! Starting `-- CMD` so that its very first instruction is already recorded.
//!
//! The child is forked and waits on a pipe before it execs; the recorder adds its PID
//! to the Trace Map, attaches, then releases it. `std::process::Command` cannot do
//! this: its spawn returns only after the exec.

use crate::RecordError;
use std::ffi::CString;
use std::path::Path;

/// A forked command waiting to be released.
pub struct Launched {
    /// Its PID (also its process id after exec).
    pub pid: u32,
    release: libc::c_int,
    done: Option<i32>,
}

fn find_in_path(cmd: &str) -> Option<String> {
    if cmd.contains('/') {
        return Path::new(cmd).is_file().then(|| cmd.to_string());
    }
    let path = std::env::var("PATH").unwrap_or_else(|_| "/usr/bin:/bin".into());
    path.split(':')
        .map(|d| Path::new(d).join(cmd))
        .find(|p| p.is_file())
        .map(|p| p.to_string_lossy().into_owned())
}

impl Launched {
    /// Fork `argv`; the child execs only after [`Launched::release`].
    pub fn fork(argv: &[String]) -> Result<Launched, RecordError> {
        let Some(first) = argv.first() else {
            return Err(RecordError::Spawn(String::new(), "no command given".into()));
        };
        let prog = find_in_path(first)
            .ok_or_else(|| RecordError::Spawn(first.clone(), "command not found".into()))?;
        let cprog = CString::new(prog)
            .map_err(|_| RecordError::Spawn(first.clone(), "NUL in path".into()))?;
        let cargs: Vec<CString> = argv
            .iter()
            .map(|a| CString::new(a.as_bytes()))
            .collect::<Result<_, _>>()
            .map_err(|_| RecordError::Spawn(first.clone(), "NUL in an argument".into()))?;
        let mut ptrs: Vec<*const libc::c_char> = cargs.iter().map(|c| c.as_ptr()).collect();
        ptrs.push(std::ptr::null());
        let mut fds = [0 as libc::c_int; 2];
        // SAFETY: pipe2 writes two descriptors into fds.
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
            return Err(RecordError::Io(
                "pipe".into(),
                std::io::Error::last_os_error(),
            ));
        }
        // SAFETY: the child only calls async-signal-safe functions (read, close,
        // execv, _exit) on memory prepared before the fork.
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            return Err(RecordError::Io(
                "fork".into(),
                std::io::Error::last_os_error(),
            ));
        }
        if pid == 0 {
            unsafe {
                libc::close(fds[1]);
                let mut b = 0u8;
                let n = libc::read(fds[0], (&mut b as *mut u8).cast(), 1);
                if n != 1 {
                    libc::_exit(126);
                }
                libc::execv(cprog.as_ptr(), ptrs.as_ptr());
                libc::_exit(127);
            }
        }
        // SAFETY: closing our copy of the read end.
        unsafe { libc::close(fds[0]) };
        Ok(Launched {
            pid: pid as u32,
            release: fds[1],
            done: None,
        })
    }

    /// Let the child exec.
    pub fn release(&mut self) {
        if self.release >= 0 {
            let b = 1u8;
            // SAFETY: writing one byte to our pipe end, then closing it.
            unsafe {
                libc::write(self.release, (&b as *const u8).cast(), 1);
                libc::close(self.release);
            }
            self.release = -1;
        }
    }

    /// The exit status once the child has ended (raw wait status), without blocking.
    pub fn poll_exit(&mut self) -> Option<i32> {
        if self.done.is_none() {
            let mut st = 0;
            // SAFETY: waitpid on our own child.
            let r = unsafe { libc::waitpid(self.pid as i32, &mut st, libc::WNOHANG) };
            if r == self.pid as i32 {
                self.done = Some(st);
            }
        }
        self.done
    }

    /// Kill the child (recording could not start).
    pub fn kill(&mut self) {
        // SAFETY: signalling and reaping our own child.
        unsafe {
            libc::kill(self.pid as i32, libc::SIGKILL);
        }
        self.release();
        let mut st = 0;
        unsafe { libc::waitpid(self.pid as i32, &mut st, 0) };
        self.done = Some(st);
    }
}

/// Exit code of a raw wait status, the shell's way (128 + signal).
pub fn exit_code(status: i32) -> i32 {
    if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else if libc::WIFSIGNALED(status) {
        128 + libc::WTERMSIG(status)
    } else {
        1
    }
}
